#include "shardwise/perf/step.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "shardwise/collective/cost_model.h"

namespace shardwise {
namespace {

// Element-wise traffic per token and layer besides the GEMMs, in tensors read or written:
// two fused residual-add + RMSNorm passes (read x and residual, write both: 4 hidden-sized
// tensors each) and the SwiGLU activation (read gate and up, write their product: 3 FFN-width).
constexpr double kElementwiseHiddenTensors = 8.0;
constexpr double kElementwiseFfnTensors = 3.0;

// Sum over t = 1..n of min(t, window): query-key pairs of one causal prompt.
double CausalPairs(double n, int64_t window) {
  if (window <= 0 || n <= static_cast<double>(window)) return n * (n + 1) / 2;
  const double w = static_cast<double>(window);
  return w * (w + 1) / 2 + (n - w) * w;
}

// Load on the busiest of `ranks` expert ranks over the mean when `assignments` token-expert
// pairs land uniformly at random: mean + sqrt(2 mean ln ranks) (Gaussian tail of the maximum
// of `ranks` binomials), capped where every token lands on the busiest rank.
double StatisticalImbalance(double assignments, double ranks, double topk) {
  if (ranks <= 1 || assignments <= 0) return 1.0;
  const double mean = assignments / ranks;
  const double factor = 1.0 + std::sqrt(2.0 * std::log(ranks) / mean);
  return std::min(factor, std::max(1.0, ranks / topk));
}

std::string LinkName(const ClusterSpec& c, const GroupShape& g) {
  const int level = g.HighestLevel();
  if (level < 0) return "-";
  return level == 0 ? c.levels[0].name : "scale-out (" + c.levels[level].name + ")";
}

}  // namespace

StatusOr<StepModel> StepModel::Create(const ModelSpec& model, const ClusterSpec& cluster,
                                      const Layout& layout, const PerfOptions& options) {
  SW_RETURN_IF_ERROR(ValidateLayout(layout, model));
  if (layout.gpus() > cluster.num_gpus) {
    return Error(fmt::format("{} needs {} GPUs; cluster '{}' has {} (use --nodes or a smaller "
                             "layout)",
                             layout.ToString(), layout.gpus(), cluster.name, cluster.num_gpus));
  }
  if (!(options.gpu_memory_utilization > 0 && options.gpu_memory_utilization <= 1)) {
    return Error("--gpu-memory-utilization must be in (0, 1]");
  }
  StepModel s;
  s.model_ = &model;
  s.cluster_ = &cluster;
  s.options_ = options;
  s.layout_ = layout;
  s.shard_ = ShardModel(model, layout, options);
  SW_ASSIGN_OR_RETURN(s.tp_group_, PlaceGroup(cluster, layout.tp, 1));
  SW_ASSIGN_OR_RETURN(s.cp_group_, PlaceGroup(cluster, layout.cp, layout.CpStride()));
  SW_ASSIGN_OR_RETURN(s.ep_group_, PlaceGroup(cluster, layout.ep, layout.EpStride()));
  // All the stages: a send/recv is priced at the outermost level any stage boundary crosses.
  SW_ASSIGN_OR_RETURN(s.pp_pair_, PlaceGroup(cluster, layout.pp, layout.PpStride()));
  const GpuSpec& gpu = cluster.gpu;
  s.weight_compute_dtype_ = gpu.ComputeDtypeFor(options.weight_dtype);
  s.weight_peak_flops_per_s_ = gpu.PeakFlopsPerS(s.weight_compute_dtype_);
  s.attention_flops_per_s_ = gpu.AchievableFlopsPerS(gpu.ComputeDtypeFor(options.kv_dtype));
  s.hbm_bytes_per_s_ = gpu.AchievableHbmBytesPerS();
  s.tp_link_ = LinkName(cluster, s.tp_group_);
  s.ep_link_ = LinkName(cluster, s.ep_group_);
  return s;
}

double StepModel::Op(double flops, double bytes, double flops_per_s, PhaseBreakdown& out) const {
  const double compute = flops / flops_per_s;
  const double memory = bytes / hbm_bytes_per_s_;
  out.flops += flops;
  out.hbm_bytes += bytes;
  (compute >= memory ? out.compute_s : out.memory_s) += std::max(compute, memory);
  return std::max(compute, memory);
}

void StepModel::Gemms(const std::vector<GemmShape>& gemms, double m, double copies,
                      double weight_copies, PhaseBreakdown& out) const {
  if (m <= 0) return;
  const double wbytes = BytesPerElement(options_.weight_dtype);
  const double abytes = BytesPerElement(options_.activation_dtype);
  for (const GemmShape& g : gemms) {
    const double rate =
        weight_peak_flops_per_s_ * cluster_->gpu.GemmEfficiency(weight_compute_dtype_, m, g.n, g.k);
    Op(2 * m * g.n * g.k * copies,
       g.n * g.k * wbytes * weight_copies + m * (g.n + g.k) * abytes * copies, rate, out);
  }
}

double StepModel::AllReduce(const GroupShape& g, double bytes) const {
  CollectiveRequest r;
  r.bytes = bytes;
  return PredictCollective(*cluster_, g, r).time_s;
}

template <typename Keys>
PhaseBreakdown StepModel::Stage(const StageLayers& stage, double tokens, Keys keys,
                                double ep_tokens, bool prefill, double prefill_tokens) const {
  const ModelShard& s = shard_;
  const Layout& l = layout_;
  const double abytes = BytesPerElement(options_.activation_dtype);
  const double hidden = static_cast<double>(s.hidden);
  const double hidden_bytes = tokens * hidden * abytes;
  PhaseBreakdown out;

  const double elementwise_bytes = tokens * (kElementwiseHiddenTensors * hidden +
                                             kElementwiseFfnTensors * s.ffn_width) * abytes;
  // Collectives are the same for every layer of the stage: price them once.
  const double tp_all_reduce = l.tp > 1 ? AllReduce(tp_group_, hidden_bytes) : 0.0;
  double cp_ring_s = 0;     // prefill: one layer's ring passes
  double cp_combine_s = 0;  // decode: combining partial attention outputs
  if (l.cp > 1) {
    if (prefill) {
      CollectiveRequest r;
      r.op = CollectiveOp::kSendRecv;
      r.bytes = prefill_tokens / static_cast<double>(l.cp) * s.kv_bytes_per_token;
      cp_ring_s = static_cast<double>(l.cp - 1) * PredictCollective(*cluster_, cp_group_, r).time_s;
    } else {
      cp_combine_s = AllReduce(cp_group_, hidden_bytes);
    }
  }

  // Attention block of one layer with `window`: projections, core, communication.
  auto attention = [&](int64_t window) {
    Gemms(s.attention_gemms, tokens, 1, 1, out);
    Op(0, elementwise_bytes, 1, out);
    const double pairs = keys(window);
    // Decode reads every cached key of each sequence; prefill reads the keys it writes.
    const double kv_read = prefill ? tokens * s.kv_bytes_per_token
                                   : pairs * s.kv_bytes_per_token / static_cast<double>(l.cp);
    const double core = Op(pairs * s.attention_flops_per_key / static_cast<double>(l.cp), kv_read,
                           attention_flops_per_s_, out);
    out.tp_comm_s += tp_all_reduce;
    // Ring attention hides its KV passes behind the attention compute; decode's combine cannot.
    out.cp_comm_s += prefill ? std::max(0.0, cp_ring_s - core) : cp_combine_s;
  };
  size_t layer = 0;
  for (int64_t i = 0; i < stage.dense; ++i, ++layer) {
    attention(stage.windows[layer]);
    Gemms(s.dense_ffn_gemms, tokens, 1, 1, out);
    out.tp_comm_s += tp_all_reduce;
  }
  if (stage.moe > 0) {
    const ModelSpec& m = *model_;
    const double topk = static_cast<double>(m.moe.experts_per_token);
    const double experts = static_cast<double>(m.moe.num_experts);
    const double ranks = static_cast<double>(l.StageRanks() / l.Replicas());  // ep x expert-TP
    const double imbalance = options_.expert_imbalance > 0
                                 ? options_.expert_imbalance
                                 : StatisticalImbalance(ep_tokens * topk, static_cast<double>(l.ep), topk);
    // Experts a GPU must read: those that receive at least one of the group's tokens. Each
    // holds the group's token-expert pairs / experts rows on average; the busiest rank more.
    const double touched = s.experts_per_gpu * (1.0 - std::pow(1.0 - topk / experts, ep_tokens));
    const double rows_per_expert = ep_tokens * topk / experts * imbalance;
    CollectiveRequest dispatch;
    dispatch.op = CollectiveOp::kAllToAllTopK;
    dispatch.topk = m.moe.experts_per_token;
    dispatch.bytes = ep_tokens / ranks * hidden * abytes;
    const double a2a = l.ep > 1 ? 2.0 * PredictCollective(*cluster_, ep_group_, dispatch).time_s : 0.0;
    for (int64_t i = 0; i < stage.moe; ++i, ++layer) {
      attention(stage.windows[layer]);
      Gemms({s.router_gemm}, tokens, 1, 1, out);
      Gemms(s.shared_gemms, tokens, 1, 1, out);
      Gemms(s.expert_gemms, rows_per_expert, s.experts_per_gpu, touched, out);
      out.ep_comm_s += a2a;
      out.tp_comm_s += tp_all_reduce;
    }
  }
  if (stage.last) {
    // LM head: logits for one token per sequence (decode) or the prompt's last token.
    const double rows = prefill ? std::max(1.0, tokens / prefill_tokens * static_cast<double>(l.cp)) : tokens;
    Gemms({s.lm_head_gemm}, rows, 1, 1, out);
  }
  out.total_s = out.compute_s + out.memory_s + out.tp_comm_s + out.ep_comm_s + out.cp_comm_s;
  return out;
}

namespace {

void Accumulate(PhaseBreakdown& into, const PhaseBreakdown& add, double times) {
  into.compute_s += add.compute_s * times;
  into.memory_s += add.memory_s * times;
  into.tp_comm_s += add.tp_comm_s * times;
  into.ep_comm_s += add.ep_comm_s * times;
  into.cp_comm_s += add.cp_comm_s * times;
  into.pp_comm_s += add.pp_comm_s * times;
  into.flops += add.flops * times;
  into.hbm_bytes += add.hbm_bytes * times;
  into.total_s += add.total_s * times;
}

}  // namespace

double StepModel::HandOff(double tokens) const {
  if (layout_.pp <= 1) return 0.0;
  CollectiveRequest r;
  r.op = CollectiveOp::kSendRecv;
  r.bytes = tokens * static_cast<double>(shard_.hidden) * BytesPerElement(options_.activation_dtype);
  return PredictCollective(*cluster_, pp_pair_, r).time_s;
}

PrefillEstimate StepModel::EstimatePrefill(int64_t prompt_tokens) const {
  const Layout& l = layout_;
  const double adp = static_cast<double>(l.AttentionDp());
  const double cp = static_cast<double>(l.cp);
  PrefillEstimate p;
  p.prompt_tokens = prompt_tokens;
  // One prompt (TTFT): every stage in turn, the prompt split over CP ranks.
  const double prompt = static_cast<double>(prompt_tokens);
  for (const StageLayers& st : shard_.stages) {
    const PhaseBreakdown stage = Stage(
        st, prompt / cp, [&](int64_t win) { return CausalPairs(prompt, win); }, prompt * adp,
        true, prompt);
    Accumulate(p.prefill, stage, 1.0);
  }
  p.prefill.pp_comm_s = static_cast<double>(l.pp - 1) * HandOff(prompt / cp);
  p.prefill.total_s += p.prefill.pp_comm_s;
  p.ttft_s = p.prefill.total_s;

  // At full load: chunks of max_batched_tokens, pipelined across stages, one chunk per
  // attention-DP rank at a time.
  const double chunk_prompts =
      std::max(1.0, std::floor(static_cast<double>(options_.max_batched_tokens) / prompt));
  const double chunk_tokens = chunk_prompts * prompt;
  double chunk_stage_s = 0;
  for (const StageLayers& st : shard_.stages) {
    chunk_stage_s = std::max(
        chunk_stage_s,
        Stage(st, chunk_tokens / cp,
              [&](int64_t win) { return chunk_prompts * CausalPairs(prompt, win); },
              chunk_tokens * adp, true, prompt)
                .total_s);
  }
  p.s_per_request = (chunk_stage_s + HandOff(chunk_tokens / cp)) / (chunk_prompts * adp);
  return p;
}

StepEstimate StepModel::Estimate(const Workload& w) const {
  return Estimate(w, EstimatePrefill(w.prompt_tokens));
}

StepEstimate StepModel::Estimate(const Workload& w, const PrefillEstimate& prefill) const {
  SW_CHECK(prefill.prompt_tokens == w.prompt_tokens, "Estimate: prefill of another prompt length");
  const Layout& l = layout_;
  const double adp = static_cast<double>(l.AttentionDp());
  StepEstimate e;
  e.layout = l;
  e.workload = w;
  e.memory = EstimateMemory(shard_, *cluster_, w, options_);
  e.prefill = prefill.prefill;
  e.ttft_s = prefill.ttft_s;
  e.prefill_s_per_request = prefill.s_per_request;

  // Decode: the batch split over attention-DP ranks, then into micro-batches that fill the
  // pipeline (at most pp of them); a cycle gives every sequence one token.
  const double per_rank = std::ceil(static_cast<double>(w.batch) / adp);
  const double micro_batches = std::min(static_cast<double>(l.pp), per_rank);
  const double micro = std::ceil(per_rank / micro_batches);
  const double context = static_cast<double>(w.DecodeContext());
  PhaseBreakdown slowest;
  const StageLayers* slowest_stage = &shard_.stages[0];
  double all_stages_s = 0;
  for (const StageLayers& st : shard_.stages) {
    const PhaseBreakdown stage = Stage(
        st, micro,
        [&](int64_t win) { return micro * (win > 0 ? std::min(context, static_cast<double>(win)) : context); },
        micro * adp, false, 0.0);
    all_stages_s += stage.total_s;
    if (stage.total_s > slowest.total_s) {
      slowest = stage;
      slowest_stage = &st;
    }
  }
  // A cycle gives every micro-batch one token: each must pass every stage in turn, and the
  // slowest stage must serve all micro-batches. Its idle time in the cycle is the bubble.
  const double hand_offs = static_cast<double>(l.pp) * HandOff(micro);
  const double decode_cycle = std::max(all_stages_s, micro_batches * slowest.total_s);
  Accumulate(e.decode, slowest, micro_batches);
  e.decode.bubble_s = decode_cycle - micro_batches * slowest.total_s;
  e.decode.pp_comm_s = hand_offs;
  e.decode.total_s = decode_cycle + hand_offs;
  e.tpot_s = e.decode.total_s;

  // Offline steady state: each of the batch's requests costs its prefill, and every decode
  // cycle yields one token per sequence.
  const double batch = static_cast<double>(w.batch);
  const double osl = static_cast<double>(w.output_tokens);
  const double cycle = batch * e.prefill_s_per_request + osl * e.tpot_s;
  e.output_tokens_per_s = batch * osl / cycle * static_cast<double>(l.Replicas());
  e.output_tokens_per_s_per_gpu = e.output_tokens_per_s / static_cast<double>(l.gpus());
  e.output_tokens_per_s_per_user = 1.0 / e.tpot_s;

  // Seed 002, 7.7: over-parallelised when a layer's TP communication exceeds its compute.
  const double layers = static_cast<double>(slowest_stage->dense + slowest_stage->moe);
  e.tp_comm_per_layer_s = slowest.tp_comm_s / std::max(layers, 1.0);
  e.compute_per_layer_s = (slowest.compute_s + slowest.memory_s) / std::max(layers, 1.0);
  e.over_parallelised = l.tp > 1 && e.tp_comm_per_layer_s > e.compute_per_layer_s;

  struct Part {
    double s;
    std::string name;
  };
  const Part parts[] = {{e.decode.memory_s, "HBM bandwidth"},
                        {e.decode.compute_s, "FLOP/s"},
                        {e.decode.tp_comm_s, "TP all-reduce over " + tp_link_},
                        {e.decode.ep_comm_s, "EP all-to-all over " + ep_link_},
                        {e.decode.cp_comm_s, "CP exchange"},
                        {e.decode.pp_comm_s, "PP send/recv"},
                        {e.decode.bubble_s, "pipeline bubble"}};
  const Part* top = &parts[0];
  for (const Part& p : parts) {
    if (p.s > top->s) top = &p;
  }
  e.bound = top->name;
  return e;
}

}  // namespace shardwise
