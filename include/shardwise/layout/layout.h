// Layout: how a model is split over GPUs, written the way engineers say it ("tp8pp2", "ep16",
// "tp4ep8dp2", "dp2tp4cp2"). GPUs = dp x pp x tp x cp. EP uses the ranks of a pipeline stage
// (ep divides dp x tp x cp): ep < tp splits each expert's FFN over the remaining ranks
// (expert-TP); ep > tp x cp makes the expert group span data-parallel ranks (attention DP with
// wide EP). "etp" gives expert-TP explicitly: "dp8ep4etp2" is attention DP 8 whose 8-rank expert
// group holds each expert split over 2 ranks (ep4 x etp2), as TensorRT-LLM
// (enable_attention_dp with moe_tensor_parallel_size) and SGLang (--enable-dp-attention with an
// --ep-size below --tp) deploy DeepSeek and Qwen3 MoE. Ranks are numbered TP innermost, then CP,
// DP, PP, so a TP group sits inside one NVLink domain whenever it fits. Value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "shardwise/common/status.h"
#include "shardwise/model/model_spec.h"

namespace shardwise {

struct Layout {
  int64_t dp = 1;
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t ep = 1;
  int64_t cp = 1;
  // Ranks splitting each expert's FFN, given explicitly over attention DP (expert group
  // ep x etp > tp x cp); 0: derived from tp, cp and ep as below.
  int64_t etp = 0;

  int64_t gpus() const { return dp * tp * pp * cp; }
  int64_t StageRanks() const { return dp * tp * cp; }
  // Data-parallel ranks that share one expert group (attention DP): ep / (tp x cp), at least 1
  // (ep x etp / (tp x cp) with an explicit etp).
  int64_t AttentionDp() const;
  // GPUs that cooperate on one request stream: tp x cp x attention DP x pp.
  int64_t InstanceGpus() const { return tp * cp * AttentionDp() * pp; }
  // Independent replicas: dp / attention DP.
  int64_t Replicas() const { return dp / AttentionDp(); }
  // Ranks splitting each expert's FFN inside its expert group: tp x cp x attention DP / ep, or
  // the explicit etp.
  int64_t ExpertTp() const { return etp > 0 ? etp : tp * cp * AttentionDp() / ep; }
  // Whether the attention-DP ranks' tokens are gathered over the expert group for the experts
  // and their partial outputs reduce-scattered back: expert-TP over attention DP (etp given).
  bool GathersTokensForExperts() const { return etp > 1; }

  // Group strides in rank order (TP innermost, then CP, DP, PP).
  int64_t CpStride() const { return tp; }
  int64_t DpStride() const { return tp * cp; }
  int64_t PpStride() const { return tp * cp * dp; }
  int64_t EpStride() const { return ExpertTp(); }

  // Canonical text: degrees above 1 in the order dp, tp, cp, pp, ep, etp ("tp8pp2", "dp16ep16",
  // "dp8ep4etp2").
  std::string ToString() const;
  bool operator==(const Layout&) const = default;
};

// Parses "tp8pp2", "ep16", "tp4ep8dp2", "dp2tp4cp2", "dp8ep4etp2" (case-insensitive, any order).
// An etp that tp, cp and ep imply already is dropped (tp8ep4etp2 is tp8ep4, dp8ep8etp1 dp8ep8).
StatusOr<Layout> ParseLayout(std::string_view text);

// Checks a layout against a model: TP divides query heads and FFN widths (each rank keeps the
// KV heads its query heads use), EP divides the experts, PP does not exceed the layers, EP divides
// the stage's ranks. With `redundant_experts` copies per EP group (used only when ep > 1), EP
// divides experts + copies instead (expert_placement.h). The error names the degree and the fix.
Status ValidateLayout(const Layout& layout, const ModelSpec& model, int64_t redundant_experts = 0);

}  // namespace shardwise
