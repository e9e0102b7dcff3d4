// Where a rank's weights come from. A rank asks for exactly its shard (a block of rows and
// columns of a 2-D tensor, or a range of a 1-D one) by Hugging Face tensor name and the shape
// the model expects; the source checks the shape and returns fp32. Two sources: weights
// generated deterministically from a seed (any slice computed on its own, so each rank builds
// only its shard), and safetensors checkpoints (single file or sharded with an index), read
// slice by slice. Thread-compatible; use one source per rank.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/layout/shard_geometry.h"

namespace shardwise {

// Rows or columns [begin, end) of a tensor.
using Slice = Range;

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // Rows `rows` and columns `cols` of `name`, expected to be [shape_rows, shape_cols]
  // (1-D tensors: shape_rows = 1, rows = {0, 1}). Row-major fp32.
  virtual StatusOr<std::vector<float>> Read(const std::string& name, int64_t shape_rows,
                                            int64_t shape_cols, Slice rows, Slice cols) = 0;
};

// Deterministic pseudo-random weights: value(name, i, j) from a counter-based hash, scaled so
// activations stay of order one (norm weights near 1, matrices ~ U(-1, 1) / sqrt(cols)).
std::unique_ptr<WeightSource> GeneratedWeights(uint64_t seed);

// A checkpoint directory holding model.safetensors, or model.safetensors.index.json and its
// shards. F32, BF16 and F16 tensors are read. Errors name the file and what is wrong.
StatusOr<std::unique_ptr<WeightSource>> OpenSafetensors(const std::string& dir);

// Writes tensors (name -> shape, fp32 data) as one F32 safetensors file.
struct NamedTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};
Status WriteSafetensors(const std::string& path, const std::map<std::string, NamedTensor>& tensors);

}  // namespace shardwise
