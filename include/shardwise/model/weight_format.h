// Weight formats per module. A checkpoint may store its modules differently (DeepSeek's fp8
// projections beside bf16 embeddings; gpt-oss and Kimi-K2.5 quantise only the routed experts;
// NVFP4 exports keep the routers and LM head in bf16), so the weight bytes of a model are a sum
// over modules. Plain value types.
#pragma once

#include <cstdint>
#include <string>

#include "shardwise/model/dtype.h"

namespace shardwise {

// How one module's weights are stored: the tensor-core format its GEMMs run in, and the
// storage bytes per parameter with block scales included.
struct WeightFormat {
  Dtype dtype = Dtype::kBf16;
  double bytes_per_param = 2.0;

  // `dtype` at its standard storage cost (BytesPerElement).
  static WeightFormat Of(Dtype dtype);
  // AWQ/GPTQ/compressed-tensors int4: 4 bits plus one 16-bit scale per `group` weights.
  static WeightFormat Int4Group(int64_t group);
  std::string Name() const;  // "fp8", "int4/g32", ...
  bool operator==(const WeightFormat&) const = default;
};

// The modules a checkpoint may store in different formats.
enum class WeightModule {
  kEmbedding,
  kMixer,  // attention, its indexer, linear-attention and SSM blocks
  kDenseFfn,
  kRoutedExperts,
  kSharedExperts,
  kRouter,
  kLmHead,
  kNorm,
};

struct WeightFormats {
  WeightFormat embedding, mixer, dense_ffn, routed_experts, shared_experts, router, lm_head, norm;

  // Every module in `dtype` (what --dtype asks for).
  static WeightFormats Uniform(Dtype dtype);
  WeightFormat& For(WeightModule module);
  const WeightFormat& For(WeightModule module) const;
  // One line for users: "bf16" when uniform, else e.g. "experts mxfp4, rest bf16".
  std::string Describe() const;
  bool operator==(const WeightFormats&) const = default;
};

}  // namespace shardwise
