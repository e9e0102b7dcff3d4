// The communication of a step under a layout: TP all-reduces, EP dispatch and combine, CP ring
// passes and combines, PP hand-offs; each group placed on the cluster once, each collective
// priced by the collective cost model, except the TP all-reduces that the engine runs with its
// own kernel (custom one-shot / two-shot over NVLink, up to a size). Value type; methods are
// const (thread-safe).
#pragma once

#include <string>

#include "shardwise/collective/ep_dispatch.h"
#include "shardwise/collective/group.h"
#include "shardwise/common/status.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/layout/layout.h"
#include "shardwise/perf/engine.h"

namespace shardwise {

// How a step's MoE layers exchange tokens: the kernels' calibration, the model's routing, the
// algorithm asked for (kAuto: the fastest the phase allows) and the two payload formats.
struct EpExchangeSetup {
  EpKernelProfile kernels;
  EpRouting routing;
  int64_t hidden = 0;
  EpAlgorithm algorithm = EpAlgorithm::kFlat;
  Dtype dispatch_dtype = Dtype::kBf16;
  Dtype combine_dtype = Dtype::kBf16;
};

// One expert-parallel exchange (dispatch plus combine) of a step's MoE layer.
struct EpExchange {
  double time_s = 0;
  EpAlgorithm algorithm = EpAlgorithm::kFlat;
  int64_t sms = 0;  // SMs the exchange kernels occupy while they run (0 for NCCL's)
};

class StepComm {
 public:
  // `ep` matters only for layouts with ep > 1.
  static StatusOr<StepComm> Create(const ClusterSpec& cluster, const Layout& layout,
                                   const EngineProfile& engine, EpExchangeSetup ep = {});

  // One TP all-reduce of `bytes` (0 without TP), with the kernel the engine picks.
  double TpAllReduce(double bytes) const;
  // The engine's custom all-reduce inside one NVLink domain: one-shot (every rank reads every
  // peer's whole buffer: one synchronisation, (n - 1) x bytes in) up to one_shot_max_bytes,
  // else two-shot (reduce-scatter then all-gather: two synchronisations, 2 (n - 1) / n x bytes).
  double CustomAllReduce(double bytes) const;
  // One CP all-reduce combining partial attention outputs of `bytes` (0 without CP).
  double CpCombine(double bytes) const;
  // The cp - 1 ring passes of `bytes` each that one layer's ring attention makes.
  double CpRing(double bytes) const;
  // One MoE layer's EP dispatch of `tokens_per_gpu` tokens from each rank, then their combine
  // with the same algorithm (time 0 without EP). Prefill may use DeepEP's normal (node-dedup)
  // kernels; decode runs in CUDA graphs, which they cannot join (collective/ep_dispatch.h).
  // An EP group inside the TP group (ep <= tp) exchanges nothing: attention TP leaves every
  // token on every rank, each rank runs its experts on the tokens routed there, and the TP
  // all-reduce after the MoE layer sums their outputs (TensorRT-LLM, vLLM and SGLang without
  // attention DP).
  // `sent_per_gpu`: the tokens a rank dispatches of its own (tokens_per_gpu is the busiest
  // rank's receive), which bound the low-latency kernels.
  EpExchange Exchange(double tokens_per_gpu, double sent_per_gpu, bool prefill) const;
  bool ExchangesTokens() const {
    return layout_.ep > layout_.tp && !layout_.GathersTokensForExperts();
  }
  // Expert-TP over attention DP (Layout::GathersTokensForExperts): every rank's
  // `tokens_per_gpu` tokens are all-gathered over the expert group (ep x etp ranks), each rank
  // runs its expert slices on all of them, and their partial outputs are reduce-scattered back:
  // the MoE path TensorRT-LLM (attention DP without wide EP) and SGLang (--enable-dp-attention)
  // take when experts are tensor-parallel. Dispatch format for the gather, combine format for
  // the reduce-scatter.
  EpExchange GatherForExperts(double tokens_per_gpu) const;
  // One PP send/recv of `bytes` between adjacent stages (0 without PP).
  double HandOff(double bytes) const;

  // Display name of the link a group's traffic binds on ("nvlink", "scale-out (...)", "-").
  const std::string& tp_link() const { return tp_link_; }
  const std::string& ep_link() const { return ep_link_; }

 private:
  const ClusterSpec* cluster_ = nullptr;
  Layout layout_;
  EngineProfile engine_;
  EpExchangeSetup ep_;
  bool tp_in_one_domain_ = false;
  GroupShape tp_group_, cp_group_, ep_group_, pp_pair_;
  GroupShape expert_group_;  // ep x etp ranks, when the experts gather tokens
  std::string tp_link_ = "-", ep_link_ = "-";
};

}  // namespace shardwise
