// PipelineSplit: which decoder layers each model chunk (virtual pipeline stage) of a Megatron-Core
// pipeline holds, and which chunk holds the embedding, the loss (LM head and cross-entropy) and
// the multi-token-prediction modules. Chunks are listed in virtual-stage order: chunk i runs on
// pipeline rank i % pp as that rank's model chunk i / pp, as Megatron-Core numbers them.
//
// The split follows Megatron-Core's options: an even split; its first and last stage with their
// own layer counts (--decoder-first-pipeline-num-layers, --decoder-last-pipeline-num-layers);
// the embedding and the loss counted as one layer each (--account-for-embedding-in-pipeline-split,
// --account-for-loss-in-pipeline-split); or an explicit layout (--pipeline-model-parallel-layout,
// e.g. "Et*3|(tt|)*29m|L"). Without a request it picks, as NVIDIA's recipes do, the even split
// when the layers divide, else embedding and loss counted as layers when that divides, else the
// same spread as evenly as it goes (the chunks one layer short last). Value types; pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shardwise/common/status.h"

namespace shardwise::train {

struct PipelineChunk {
  int64_t first_layer = 0;  // index of its first decoder layer
  int64_t layers = 0;       // decoder layers it holds
  bool embedding = false;
  bool loss = false;
  int64_t mtp = 0;  // multi-token-prediction modules
  bool operator==(const PipelineChunk&) const = default;
};

struct PipelineSplit {
  int64_t pp = 1;
  int64_t vp = 1;  // model chunks per pipeline rank
  std::vector<PipelineChunk> chunks;

  // The chunks of pipeline rank `rank`, in model-chunk order.
  std::vector<PipelineChunk> ChunksOf(int64_t rank) const;
  // Megatron's layout string: "Ett|tt|ttL" ('E' embedding, 't' a layer, 'm' an MTP module, 'L'
  // the loss, '|' between chunks).
  std::string ToString() const;
};

struct PipelineSplitRequest {
  enum class Kind { kAuto, kFirstLast, kLayout };
  Kind kind = Kind::kAuto;
  int64_t first_stage_layers = 0;  // kFirstLast; 0: split evenly with the middle stages
  int64_t last_stage_layers = 0;
  std::string layout;  // kLayout: Megatron's --pipeline-model-parallel-layout
};

// Splits `layers` decoder layers and `mtp` MTP modules over pp x vp model chunks as asked. The
// error names what does not fit and how to fix it.
StatusOr<PipelineSplit> SplitPipeline(int64_t layers, int64_t mtp, int64_t pp, int64_t vp,
                                      const PipelineSplitRequest& request);

}  // namespace shardwise::train
