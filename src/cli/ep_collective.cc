#include "ep_collective.h"

#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include "command.h"
#include "shardwise/collective/ep_dispatch.h"
#include "shardwise/common/format.h"
#include "shardwise/report/table.h"

namespace shardwise::cli {

void EpCollectiveOptions::AddTo(CLI::App* sub) {
  sub->add_option("--tokens", tokens, "ep-dispatch/ep-combine: tokens per GPU")
      ->capture_default_str();
  sub->add_option("--hidden", hidden, "ep-dispatch/ep-combine: hidden size")->capture_default_str();
  sub->add_option("--experts", experts, "ep-dispatch/ep-combine: routed experts")
      ->capture_default_str();
  sub->add_option("--groups", groups,
                  "ep-dispatch/ep-combine: expert groups (DeepSeek n_group; 1 = no group limit)")
      ->capture_default_str();
  sub->add_option("--topk-groups", topk_groups,
                  "ep-dispatch/ep-combine: groups a token may use (DeepSeek topk_group)")
      ->capture_default_str();
  sub->add_option("--dtype", dtype,
                  "ep-dispatch/ep-combine payload: fp8 (with per-128 scales) or bf16 "
                  "(default: fp8 dispatch, bf16 combine)");
}

bool IsEpCollective(const std::string& op) { return op == "ep-dispatch" || op == "ep-combine"; }

Status RunEpCollective(const ClusterSpec& c, const EpCollectiveOptions& o, const std::string& op,
                       const std::string& algo, int64_t topk, bool json) {
  EpDispatchRequest r;
  SW_ASSIGN_OR_RETURN(r.algorithm, ParseEpAlgorithm(algo));
  if (!(std::isfinite(o.tokens) && o.tokens >= 1 && o.tokens <= 1e7)) {
    return Error(fmt::format("--tokens must be between 1 and 10,000,000, got {:g}", o.tokens));
  }
  if (o.hidden < 1 || o.hidden > 1'000'000)
    return Error("--hidden must be between 1 and 1,000,000");
  if (o.experts < 1 || o.experts > 1'000'000)
    return Error("--experts must be between 1 and 1,000,000");
  const std::string dtype = !o.dtype.empty() ? o.dtype : op == "ep-dispatch" ? "fp8" : "bf16";
  if (dtype != "fp8" && dtype != "bf16") {
    return Error(fmt::format("--dtype '{}' for {}: use fp8 or bf16", dtype, op));
  }
  r.dtype = dtype == "fp8" ? Dtype::kFp8 : Dtype::kBf16;
  r.tokens_per_gpu = o.tokens;
  r.hidden = o.hidden;
  r.routing = {o.experts, topk, o.groups, o.topk_groups};
  SW_RETURN_IF_ERROR(ValidateEpRouting(r.routing));
  SW_ASSIGN_OR_RETURN(GroupShape g, PlaceGroup(c, c.num_gpus));
  if (g.size < 2) return Error("an EP group needs at least 2 GPUs; raise --gpus or --nodes");
  SW_ASSIGN_OR_RETURN(EpKernelProfile profile, LoadEpKernelProfile());
  const EpDispatchCost chosen = PredictEpDispatch(c, g, profile, r);
  const EpDestinations dest = ExpectedEpDestinations(r.routing, g.size, g.members_per_unit[0]);

  auto row = [](const EpDispatchCost& cost) {
    return nlohmann::json{{"algorithm", EpAlgorithmName(cost.algorithm)},
                          {"time_s", cost.time_s},
                          {"latency_s", cost.latency_s},
                          {"bottleneck_link", cost.bottleneck_link},
                          {"bottleneck_bytes_per_s", cost.bottleneck_bytes_per_s},
                          {"nvlink_bytes_per_s", cost.nvlink_bytes_per_s},
                          {"rdma_bytes_per_s", cost.rdma_bytes_per_s},
                          {"nvlink_wire_bytes", cost.scale_up_wire_bytes},
                          {"rdma_wire_bytes", cost.scale_out_wire_bytes},
                          {"sms", cost.sms}};
  };
  std::vector<EpDispatchCost> all;
  for (EpAlgorithm a : {EpAlgorithm::kFlat, EpAlgorithm::kNodeDedup, EpAlgorithm::kLowLatency}) {
    EpDispatchRequest one = r;
    one.algorithm = a;
    all.push_back(PredictEpDispatch(c, g, profile, one));
  }
  if (json) {
    nlohmann::json out = row(chosen);
    out["op"] = op;
    out["cluster"] = c.name;
    out["gpus"] = g.size;
    out["token_bytes"] = chosen.token_bytes;
    out["dtype"] = dtype;
    out["destinations"] = {
        {"nodes", dest.nodes}, {"remote_nodes", dest.remote_nodes}, {"ranks", dest.ranks}};
    out["candidates"] = nlohmann::json::array();
    for (const EpDispatchCost& cost : all) out["candidates"].push_back(row(cost));
    PrintJson(out);
    return Status();
  }
  std::cout << fmt::format(
      "# shardwise collectives: {} on {} ({} GPUs, {} per node), predicted\n"
      "# {:g} tokens/GPU x hidden {} in {} ({} B/token), top-{} of {} experts{}\n"
      "# a token reaches {:.2f} ranks on {:.2f} nodes ({:.2f} remote)\n",
      op, c.name, g.size, g.members_per_unit[0], o.tokens, o.hidden, dtype, chosen.token_bytes,
      topk, o.experts,
      o.groups > 1 ? fmt::format(" within {} of {} groups", o.topk_groups, o.groups) : "",
      dest.ranks, dest.nodes, dest.remote_nodes);
  Table table(
      {"algorithm", "time (us)", "bottleneck", "GB/s", "NVLink GB/s", "RDMA GB/s", "SMs", ""});
  table.SetLeftAligned({0, 2, 7});
  for (const EpDispatchCost& cost : all) {
    const bool picked = cost.algorithm == chosen.algorithm;
    table.AddRow(
        {std::string(EpAlgorithmName(cost.algorithm)), fmt::format("{:.1f}", cost.time_s * 1e6),
         cost.bottleneck_link, fmt::format("{:.1f}", cost.bottleneck_bytes_per_s / 1e9),
         fmt::format("{:.1f}", cost.nvlink_bytes_per_s / 1e9),
         fmt::format("{:.1f}", cost.rdma_bytes_per_s / 1e9), fmt::format("{}", cost.sms),
         picked ? (r.algorithm == EpAlgorithm::kAuto ? "<- chosen (fastest)" : "<- asked") : ""});
  }
  std::cout << table.Render();
  std::cout << "# GB/s as DeepEP's benchmark counts them: NVLink = bytes received per GPU; RDMA = "
               "token bytes x destination nodes (own node included)\n";
  return Status();
}

}  // namespace shardwise::cli
