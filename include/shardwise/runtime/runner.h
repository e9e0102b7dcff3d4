// Runs a sharded generation: every rank loads its shard, the batch's prompts are prefilled
// and G tokens generated greedily, with DP replicas serving different sequences and pipeline
// stages working through micro-batches (one per stage, so all stages stay busy). Returns the
// generated tokens and the final step's logits of every sequence, gathered on all ranks, plus
// where rank 0's time went.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/layout/layout.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/runtime/comm/communicator.h"
#include "shardwise/runtime/forward/stage_forward.h"

namespace shardwise {

struct RunConfig {
  ModelSpec model;
  Layout layout;
  int64_t batch = 2;
  int64_t prompt_tokens = 16;
  int64_t generate_tokens = 8;
  uint64_t seed = 1;
  std::string weights_dir;        // empty: weights generated from the seed
  int64_t redundant_experts = 0;  // MoE: extra expert replicas per EP group
  double capacity_factor = 0;     // MoE: > 0 drops (token, expert) pairs over capacity
  int64_t micro_batches = 0;      // pipeline micro-batches per DP rank; 0: min(pp, sequences)
  // Progress: called on world rank 0 after each generated token (step 1 of N is the prefill).
  std::function<void(int64_t step, int64_t steps)> on_step;
  std::string device_compute = "cpu";  // compute_registry.h: cpu or cuda
  // Weight storage (fp32, bf16, int8) and threads per CPU rank (forward/stage_forward.h).
  KernelOptions kernels;
};

// The most sequences one run takes (the memory estimate bounds it further).
inline constexpr int64_t kMaxRunBatch = 4096;
// The most threads one rank computes with.
inline constexpr int kMaxRankThreads = 1024;

struct PhaseTime {
  double wall_s = 0;
  CommStats comm;  // rank 0, all its communicators
  // 1 - busy / (ranks x span) over all ranks, busy = time not spent waiting on PP neighbours.
  double bubble = 0;
};

struct RunResult {
  std::vector<std::vector<int64_t>> tokens;  // [batch][generate_tokens]
  // [batch][generate_tokens]: the best minus the second-best logit of the step that chose each
  // token, over that row's largest |logit| (reference_check.h: how close a greedy choice was).
  std::vector<std::vector<float>> margins;
  std::vector<float> logits;  // [batch x vocab], the last step
  int64_t vocab = 0;
  int ranks = 0;
  int64_t micro_batches = 0;
  PhaseTime prefill, decode;
  int64_t routed_pairs = 0, dropped_pairs = 0;  // MoE (token, expert) pairs, all layers and steps
  // [batch]: each sequence's smallest MoE routing margin over all layers and steps (1 without
  // MoE; reference_check.h: how close an expert choice was).
  std::vector<float> router_margins;
};

// The prompt token ids the run uses: deterministic from the seed.
std::vector<int64_t> PromptTokens(const RunConfig& config, int64_t sequence);

// Checks the config before any rank starts (layout against model and batch, lengths).
Status CheckRunConfig(const RunConfig& config);

// The body each rank runs, on a communicator spanning all ranks (layout.gpus() of them).
StatusOr<RunResult> RunRank(const RunConfig& config, Communicator& world);

}  // namespace shardwise
