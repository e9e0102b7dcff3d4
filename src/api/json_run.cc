// `run --json`: the run's configuration, tokens, each phase's time split into compute, waiting
// and each collective, the prediction, the pipeline bubbles and the reference check.
#include <algorithm>

#include "shardwise/api/run.h"
#include "shardwise/runtime/kernels.h"

namespace shardwise::api {
namespace {

nlohmann::json PhaseJson(const PhaseTime& p) {
  nlohmann::json comm = nlohmann::json::object();
  for (int i = 0; i < kCommOpCount; ++i) {
    const CommOpStats& s = p.comm.ops[i];
    if (s.calls == 0) continue;
    comm[std::string(CommOpName(static_cast<CommOp>(i)))] = {{"calls", s.calls},
                                                             {"bytes", s.bytes},
                                                             {"time_s", s.seconds},
                                                             {"wait_s", s.wait_seconds},
                                                             {"wire_s", s.wire_seconds()}};
  }
  return {{"wall_s", p.wall_s},
          {"compute_s", std::max(0.0, p.wall_s - p.comm.TotalSeconds())},
          {"waiting_s", p.comm.TotalWaitSeconds()},
          {"comm", comm}};
}

nlohmann::json CheckJson(const RunReport& rep) {
  if (!rep.check) return nullptr;
  const ReferenceComparison& check = *rep.check;
  return {{"max_relative_error", check.max_relative_error},
          {"tokens_match", check.diverged == 0},
          {"sequences_compared", check.compared},
          {"near_tie_sequences", check.near_ties},
          {"router_tie_sequences", check.router_ties},
          {"diverged_sequences", check.diverged},
          {"tolerance", rep.tolerance},
          {"matches", check.Matches(rep.tolerance)}};
}

}  // namespace

nlohmann::json ToJson(const RunReport& rep) {
  const RunConfig& c = rep.config;
  const RunResult& result = rep.result;
  return {{"model", c.model.name},
          {"layout", c.layout.ToString()},
          {"backend", rep.backend},
          {"ranks", result.ranks},
          {"batch", c.batch},
          {"prompt_len", c.prompt_tokens},
          {"gen", c.generate_tokens},
          {"seed", c.seed},
          {"dtype", WeightStorageName(c.kernels.weights)},
          {"threads", c.kernels.threads},
          {"kernels", kernels::KernelIsa()},
          {"tokens", result.tokens},
          {"decode_tokens_per_s", rep.decode_tokens_per_s},
          {"prefill", PhaseJson(result.prefill)},
          {"decode", PhaseJson(result.decode)},
          {"device_compute", c.device_compute},
          {"predicted",
           {{"prefill_s", rep.predicted.prefill_s},
            {"decode_s", rep.predicted.decode_s},
            {"for", rep.predicted_for}}},
          {"pipeline",
           {{"stages", c.layout.pp},
            {"micro_batches", result.micro_batches},
            {"prefill_bubble_fraction",
             {{"measured", result.prefill.bubble}, {"model", rep.model_prefill_bubble}}},
            {"decode_bubble_fraction",
             {{"measured", result.decode.bubble}, {"model", rep.model_decode_bubble}}}}},
          {"moe", c.model.is_moe() ? nlohmann::json({{"redundant_experts", c.redundant_experts},
                                                     {"capacity_factor", c.capacity_factor},
                                                     {"routed_pairs", result.routed_pairs},
                                                     {"dropped_pairs", result.dropped_pairs}})
                                   : nlohmann::json(nullptr)},
          {"reference", CheckJson(rep)}};
}

}  // namespace shardwise::api
