#include "ep_collective.h"

#include <fmt/format.h>

#include <iostream>

#include "command.h"
#include "shardwise/common/format.h"
#include "shardwise/report/table.h"

namespace shardwise::cli {

void AddEpCollectiveOptions(CLI::App* sub, api::EpRequest& r) {
  sub->add_option("--tokens", r.tokens, "ep-dispatch/ep-combine: tokens per GPU")
      ->capture_default_str();
  sub->add_option("--hidden", r.hidden, "ep-dispatch/ep-combine: hidden size")
      ->capture_default_str();
  sub->add_option("--experts", r.experts, "ep-dispatch/ep-combine: routed experts")
      ->capture_default_str();
  sub->add_option("--groups", r.groups,
                  "ep-dispatch/ep-combine: expert groups (DeepSeek n_group; 1 = no group limit)")
      ->capture_default_str();
  sub->add_option("--topk-groups", r.topk_groups,
                  "ep-dispatch/ep-combine: groups a token may use (DeepSeek topk_group)")
      ->capture_default_str();
  sub->add_option("--dtype", r.dtype,
                  "ep-dispatch/ep-combine payload: fp8 (with per-128 scales) or bf16 "
                  "(default: fp8 dispatch, bf16 combine)");
}

Status RunEpCollective(const ClusterSpec& c, const api::EpRequest& request, bool json) {
  SW_ASSIGN_OR_RETURN(const api::EpReport rep, api::EpExchange(c, request));
  if (json) {
    PrintJson(api::ToJson(rep));
    return Status();
  }
  const api::EpRequest& o = rep.request;
  const EpDestinations& dest = rep.destinations;
  std::cout << fmt::format(
      "# shardwise collectives: {} on {} ({} GPUs, {} per node), predicted\n"
      "# {:g} tokens/GPU x hidden {} in {} ({} B/token), top-{} of {} experts{}\n"
      "# a token reaches {:.2f} ranks on {:.2f} nodes ({:.2f} remote)\n",
      o.op, c.name, rep.group.size, rep.group.members_per_unit[0], o.tokens, o.hidden, o.dtype,
      rep.chosen.token_bytes, o.topk, o.experts,
      o.groups > 1 ? fmt::format(" within {} of {} groups", o.topk_groups, o.groups) : "",
      dest.ranks, dest.nodes, dest.remote_nodes);
  Table table(
      {"algorithm", "time (us)", "bottleneck", "GB/s", "NVLink GB/s", "RDMA GB/s", "SMs", ""});
  table.SetLeftAligned({0, 2, 7});
  for (const EpDispatchCost& cost : rep.candidates) {
    const bool picked = cost.algorithm == rep.chosen.algorithm;
    table.AddRow({std::string(EpAlgorithmName(cost.algorithm)),
                  fmt::format("{:.1f}", cost.time_s * 1e6), cost.bottleneck_link,
                  fmt::format("{:.1f}", cost.bottleneck_bytes_per_s / 1e9),
                  fmt::format("{:.1f}", cost.nvlink_bytes_per_s / 1e9),
                  fmt::format("{:.1f}", cost.rdma_bytes_per_s / 1e9), fmt::format("{}", cost.sms),
                  picked ? (rep.asked ? "<- asked" : "<- chosen (fastest)") : ""});
  }
  std::cout << table.Render();
  std::cout << "# GB/s as DeepEP's benchmark counts them: NVLink = bytes received per GPU; RDMA = "
               "token bytes x destination nodes (own node included)\n";
  return Status();
}

}  // namespace shardwise::cli
