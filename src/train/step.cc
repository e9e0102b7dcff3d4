#include "shardwise/train/step.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shardwise/collective/cost_model.h"
#include "shardwise/perf/options.h"
#include "shardwise/train/schedule.h"

namespace shardwise::train {
namespace {

constexpr double kLogitBytes = 4;  // fp32 logits and their gradient in the cross-entropy
// FlashAttention-2's backward runs five matmuls against the forward's two.
constexpr double kFlashBackwardFactor = 2.5;
// Plain attention's backward: dS, dQ, dK (two) and dP, dV (two) products: twice the forward.
constexpr double kBackwardFactor = 2.0;

std::string LevelName(const ClusterSpec& c, const GroupShape& g) {
  const int level = g.HighestLevel();
  if (level < 0) return "-";
  return level == 0 ? c.levels[0].name : "scale-out (" + c.levels[level].name + ")";
}

void Add(PassTimes& to, const PassTimes& from, double times) {
  to.gemm_s += from.gemm_s * times;
  to.attention_s += from.attention_s * times;
  to.memory_s += from.memory_s * times;
  to.tp_comm_s += from.tp_comm_s * times;
  to.ep_comm_s += from.ep_comm_s * times;
  to.cp_comm_s += from.cp_comm_s * times;
  to.pp_comm_s += from.pp_comm_s * times;
}

}  // namespace

// One micro-batch through one layer of each kind (forward; backward with recompute), the
// attention core per key span, and the extras of the first and last stage.
struct TrainModel::LayerPasses {
  PassTimes dense_fwd, dense_bwd, moe_fwd, moe_bwd;
  PassTimes head_fwd, head_bwd;  // LM head and cross-entropy (last stage)
  PassTimes send;                // PP hand-off of one micro-batch, one direction, one chunk
  double attention_flops_per_key_token = 0;  // attention FLOPs per (query, key) on this GPU
  double attention_rate = 0;
  double score_bytes_per_key_token = 0;  // materialised scores through HBM, forward
  double tokens = 0;
  bool flash = true;
  Recompute recompute = Recompute::kFull;
  double cp_ring_fwd_s = 0;  // one layer's ring passes, forward

  // Attention core of one layer whose queries see `keys` keys: forward and backward times
  // (backward includes a recomputed forward when the mode requires it).
  void Attention(double keys, PassTimes& fwd, PassTimes& bwd, double hbm_bytes_per_s) const {
    const double pairs = tokens * (flash ? keys / 2 : keys);  // flash skips masked blocks
    const double compute = pairs * attention_flops_per_key_token / attention_rate;
    const double traffic = tokens * keys * score_bytes_per_key_token / hbm_bytes_per_s;
    const double forward = compute + traffic;
    const double backward =
        compute * (flash ? kFlashBackwardFactor : kBackwardFactor) + 2 * traffic;
    const bool again =
        recompute == Recompute::kFull || (recompute == Recompute::kSelective && !flash);
    fwd.attention_s += forward;
    bwd.attention_s += backward + (again ? forward : 0.0);
    // CP ring passes hide behind the attention they feed.
    fwd.cp_comm_s += std::max(0.0, cp_ring_fwd_s - forward);
    bwd.cp_comm_s += std::max(0.0, 2 * cp_ring_fwd_s - backward) +
                     (recompute == Recompute::kFull ? std::max(0.0, cp_ring_fwd_s - forward) : 0);
  }
};

Status TrainModel::Supports(const ModelSpec& model) {
  if (model.num_recurrent_layers() == 0) return Status();
  return Error(fmt::format(
      "train does not model {}'s {} linear-attention/SSM layers (Gated DeltaNet, Mamba-2) yet; "
      "'shardwise plan' and 'explain' size its serving",
      model.name, model.num_recurrent_layers()));
}

StatusOr<TrainModel> TrainModel::Create(const ModelSpec& model, const ClusterSpec& cluster,
                                        const Layout& layout, const TrainEngine& engine) {
  SW_RETURN_IF_ERROR(Supports(model));
  SW_RETURN_IF_ERROR(ValidateLayout(layout, model));
  if (layout.gpus() > cluster.num_gpus) {
    return Error(
        fmt::format("{} needs {} GPUs; cluster '{}' has {} (use --nodes or a smaller "
                    "layout)",
                    layout.ToString(), layout.gpus(), cluster.name, cluster.num_gpus));
  }
  TrainModel t;
  t.model_ = &model;
  t.cluster_ = &cluster;
  t.engine_ = &engine;
  t.layout_ = layout;
  t.shard_ = ShardModel(model, layout, PerfOptions{});
  SW_ASSIGN_OR_RETURN(t.tp_group_, PlaceGroup(cluster, layout.tp, 1));
  SW_ASSIGN_OR_RETURN(t.cp_group_, PlaceGroup(cluster, layout.cp, layout.CpStride()));
  SW_ASSIGN_OR_RETURN(t.ep_group_, PlaceGroup(cluster, layout.ep, layout.EpStride()));
  SW_ASSIGN_OR_RETURN(t.pp_pair_, PlaceGroup(cluster, layout.pp, layout.PpStride()));
  // Gradients of dense weights reduce over the DP and CP ranks (contiguous above TP); expert
  // weights over the replicas of each expert group.
  SW_ASSIGN_OR_RETURN(t.dp_group_, PlaceGroup(cluster, layout.dp * layout.cp, layout.tp));
  const int64_t expert_group = layout.tp * layout.cp * layout.AttentionDp();
  SW_ASSIGN_OR_RETURN(t.edp_group_, PlaceGroup(cluster, layout.Replicas(), expert_group));
  t.dp_replicas_ = static_cast<double>(layout.dp * layout.cp);
  t.edp_replicas_ = static_cast<double>(layout.Replicas());
  t.hbm_bytes_per_s_ = cluster.gpu.AchievableHbmBytesPerS();

  // Parameters per GPU of the fullest stage.
  const ModelShard& s = t.shard_;
  const bool single_tied = layout.pp == 1 && model.tie_word_embeddings;
  for (const StageLayers& st : s.stages) {
    const double layers = static_cast<double>(st.dense + st.moe);
    const double tables = single_tied ? 1.0 : (st.first ? 1.0 : 0.0) + (st.last ? 1.0 : 0.0);
    const double dense = layers * (s.attention_params + s.norm_params) +
                         static_cast<double>(st.dense) * s.dense_ffn_params +
                         static_cast<double>(st.moe) * (s.shared_params + s.router_params) +
                         tables * s.vocab_params + (st.last ? s.norm_params / 2 : 0.0);
    const double expert = static_cast<double>(st.moe) * s.experts_per_gpu * s.expert_params;
    if (dense + expert > t.dense_params_ + t.expert_params_) {
      t.dense_params_ = dense;
      t.expert_params_ = expert;
    }
  }
  auto both = [&t](CollectiveOp op, double bytes_per_param) {
    return t.Collective(t.dp_group_, op, t.dense_params_ * bytes_per_param) +
           t.Collective(t.edp_group_, op, t.expert_params_ * bytes_per_param);
  };
  t.grad_all_reduce_s_ = both(CollectiveOp::kAllReduce, engine.grad_bytes_per_param);
  t.grad_reduce_scatter_s_ = both(CollectiveOp::kReduceScatter, engine.grad_bytes_per_param);
  t.param_all_gather_s_ = both(CollectiveOp::kAllGather, kBf16Bytes);
  return t;
}

double TrainModel::Collective(const GroupShape& g, CollectiveOp op, double bytes,
                              int64_t topk) const {
  if (g.size <= 1 || bytes <= 0) return 0;
  CollectiveRequest r;
  r.op = op;
  r.bytes = bytes;
  r.topk = topk;
  return PredictCollective(*cluster_, g, r).time_s;
}

double TrainModel::Gemm(double m, double n, double k, Dtype dtype) const {
  if (m <= 0) return 0;
  const GpuSpec& gpu = cluster_->gpu;
  const double rate = gpu.PeakFlopsPerS(dtype) * gpu.GemmEfficiency(dtype, m, n, k);
  const double bytes = (n * k + m * (n + k)) * kBf16Bytes;
  return std::max(2 * m * n * k / rate, bytes / hbm_bytes_per_s_);
}

std::shared_ptr<const TrainModel::LayerPasses> TrainModel::Passes(const TrainConfig& c) const {
  const ModelSpec& m = *model_;
  const ModelShard& s = shard_;
  const Layout& l = layout_;
  const TrainEngine& e = *engine_;
  const Dtype dtype = cluster_->gpu.ComputeDtypeFor(c.dtype);
  const double tp = static_cast<double>(l.tp);
  const double h = static_cast<double>(m.hidden_size);
  const double tokens = static_cast<double>(c.micro_batch * c.seq_len / l.cp);
  const double sp_split = e.sequence_parallel ? tp : 1.0;
  auto out = std::make_shared<LayerPasses>();
  LayerPasses& p = *out;
  p.tokens = tokens;
  p.flash = e.flash_attention;
  p.recompute = c.recompute;

  // Shared by both layer kinds: attention GEMMs, norms and residuals, TP collectives.
  // Backward GEMMs with their own shapes: the input gradient [tokens x n] x [n x k] and the
  // weight gradient [k x tokens] x [tokens x n], whose reduction runs over the micro-batch.
  double dense_bwd_gemm_s = 0, moe_bwd_gemm_s = 0;
  auto gemm = [&](double rows, const GemmShape& g, double copies, double& fwd, double& bwd) {
    fwd += copies * Gemm(rows, g.n, g.k, dtype);
    bwd += copies * (Gemm(rows, g.k, g.n, dtype) + Gemm(g.k, g.n, rows, dtype));
  };
  PassTimes common;
  double common_bwd_gemm_s = 0;
  for (const GemmShape& g : s.attention_gemms) gemm(tokens, g, 1, common.gemm_s, common_bwd_gemm_s);
  common.memory_s = e.hidden_tensors * tokens * h * kBf16Bytes / sp_split / hbm_bytes_per_s_;
  if (l.tp > 1) {
    const double bytes = tokens * h * kBf16Bytes;
    common.tp_comm_s = e.sequence_parallel
                           ? 2 * (Collective(tp_group_, CollectiveOp::kAllGather, bytes) +
                                  Collective(tp_group_, CollectiveOp::kReduceScatter, bytes))
                           : 2 * Collective(tp_group_, CollectiveOp::kAllReduce, bytes);
  }
  // The activation function's traffic: gate and up in, product out (SwiGLU) or in and out.
  const double act_tensors = m.gated_ffn ? 3.0 : 2.0;

  p.dense_fwd = common;
  dense_bwd_gemm_s = common_bwd_gemm_s;
  for (const GemmShape& g : s.dense_ffn_gemms)
    gemm(tokens, g, 1, p.dense_fwd.gemm_s, dense_bwd_gemm_s);
  p.dense_fwd.memory_s += act_tensors * tokens * static_cast<double>(m.intermediate_size) / tp *
                          kBf16Bytes / hbm_bytes_per_s_;
  if (m.is_moe()) {
    p.moe_fwd = common;
    moe_bwd_gemm_s = common_bwd_gemm_s;
    // Tokens entering one expert group, spread over its experts.
    const double group_tokens = static_cast<double>(l.AttentionDp() * c.micro_batch * c.seq_len);
    const double k = static_cast<double>(m.moe.experts_per_token);
    const double per_expert = group_tokens * k / static_cast<double>(m.moe.num_experts);
    for (const GemmShape& g : s.expert_gemms) {
      gemm(per_expert, g, s.experts_per_gpu, p.moe_fwd.gemm_s, moe_bwd_gemm_s);
    }
    for (const GemmShape& g : s.shared_gemms) gemm(tokens, g, 1, p.moe_fwd.gemm_s, moe_bwd_gemm_s);
    gemm(tokens, s.router_gemm, 1, p.moe_fwd.gemm_s, moe_bwd_gemm_s);
    p.moe_fwd.memory_s +=
        3.0 * tokens * s.ffn_width * kBf16Bytes / hbm_bytes_per_s_;  // SwiGLU on k copies
    if (l.ep > 1) {
      const double bytes = tokens * h * kBf16Bytes / sp_split;
      p.moe_fwd.ep_comm_s =
          2 * Collective(ep_group_, CollectiveOp::kAllToAllTopK, bytes, m.moe.experts_per_token);
    }
  }
  // Backward: the GEMMs' gradients, element-wise work again, the same collectives; full recompute
  // repeats the forward (PP sends excluded).
  auto backward = [&](const PassTimes& f, double gemm_s) {
    PassTimes b;
    b.gemm_s = gemm_s;
    b.memory_s = e.backward_traffic_factor * f.memory_s;
    b.tp_comm_s = f.tp_comm_s;
    b.ep_comm_s = f.ep_comm_s;
    if (c.recompute == Recompute::kFull) Add(b, f, 1.0);
    return b;
  };
  p.dense_bwd = backward(p.dense_fwd, dense_bwd_gemm_s);
  if (m.is_moe()) p.moe_bwd = backward(p.moe_fwd, moe_bwd_gemm_s);

  // Attention core rates and traffic.
  p.attention_flops_per_key_token = s.attention_flops_per_key;
  p.attention_rate = cluster_->gpu.AchievableFlopsPerS(Dtype::kBf16) * e.attention_fraction;
  p.score_bytes_per_key_token =
      e.flash_attention ? 0.0 : s.heads * (2 + e.score_tensors) * kBf16Bytes;  // S out, P in
  if (l.cp > 1) {
    p.cp_ring_fwd_s = static_cast<double>(l.cp - 1) *
                      Collective(cp_group_, CollectiveOp::kSendRecv, tokens * s.kv_bytes_per_token);
  }

  // Last stage: LM head GEMM and the fp32 cross-entropy (read and write logits each way).
  const double vocab = static_cast<double>(m.vocab_size) / tp;
  gemm(tokens, GemmShape{vocab, h}, 1, p.head_fwd.gemm_s, p.head_bwd.gemm_s);
  p.head_fwd.memory_s = 2 * tokens * vocab * kLogitBytes / hbm_bytes_per_s_;
  p.head_bwd.memory_s = p.head_fwd.memory_s;
  if (l.pp > 1) {
    // Scatter/gather (or sequence parallelism) sends 1/tp of the activations per TP rank.
    p.send.pp_comm_s = Collective(pp_pair_, CollectiveOp::kSendRecv, tokens * h * kBf16Bytes / tp);
  }
  return out;
}

Status TrainModel::Check(const TrainConfig& c) const {
  const Layout& l = layout_;
  if (c.seq_len < 1 || c.global_batch < 1 || c.micro_batch < 1) {
    return Error("--seq-len, --global-batch and --micro-batch must be positive");
  }
  if (model_->position_embeddings > 0 && c.seq_len > model_->position_embeddings) {
    return Error(fmt::format("--seq-len {} exceeds {}'s learned position table ({} positions)",
                             c.seq_len, model_->name, model_->position_embeddings));
  }
  if (c.seq_len % l.cp != 0) {
    return Error(fmt::format("cp {} must divide --seq-len {}", l.cp, c.seq_len));
  }
  const int64_t per_step = l.dp * c.micro_batch;
  if (c.global_batch % per_step != 0) {
    return Error(
        fmt::format("global batch {} is not divisible into micro-batches x DP = {} x {} = "
                    "{}; use a multiple of {} or another --micro-batch",
                    c.global_batch, c.micro_batch, l.dp, per_step, per_step));
  }
  if (c.zero == 3 && l.pp > 1) {
    return Error(
        "ZeRO-3 re-gathers every layer's weights for each micro-batch and does not combine "
        "with pipeline parallelism; use --zero 1 with pp, or a layout without pp");
  }
  if (c.zero < 0 || c.zero > 3) return Error("--zero must be 0, 1, 2 or 3");
  if (!engine_->OffersZero(c.zero)) {
    return Error(
        fmt::format("engine '{}' does not offer ZeRO-{}; choose another --zero or "
                    "--engine",
                    engine_->name, c.zero));
  }
  if (!engine_->Offers(c.schedule.kind)) {
    return Error(fmt::format("engine '{}' does not offer the {} schedule", engine_->name,
                             c.schedule.ToString()));
  }
  if (!cluster_->gpu.Supports(c.dtype)) {
    return Error(fmt::format("{} has no {} tensor cores; use --dtype bf16", cluster_->gpu.name,
                             DtypeName(c.dtype)));
  }
  return CheckSchedule(c.schedule, l.pp, c.global_batch / per_step, model_->num_layers());
}

TrainMemory TrainModel::Memory(const TrainConfig& c, int64_t micro_batches) const {
  const ModelShard& s = shard_;
  const TrainEngine& e = *engine_;
  TrainMemory mem;
  mem.hbm_bytes = cluster_->gpu.hbm_bytes;
  mem.usable_bytes = mem.hbm_bytes * e.usable_hbm_fraction;
  const bool fp8 = c.dtype == Dtype::kFp8;
  const ModelStates dense =
      ModelStateBytes(dense_params_, dp_replicas_, c.zero, e.grad_bytes_per_param, fp8);
  const ModelStates expert =
      ModelStateBytes(expert_params_, edp_replicas_, c.zero, e.grad_bytes_per_param, fp8);
  mem.states = {dense.weight_bytes + expert.weight_bytes, dense.grad_bytes + expert.grad_bytes,
                dense.optimizer_bytes + expert.optimizer_bytes};

  // Activations of the first stage (it holds the most micro-batches).
  const double tokens = static_cast<double>(c.micro_batch * c.seq_len / layout_.cp);
  const StageLayers& first = s.stages.front();
  double per_micro_batch = 0, largest_layer = 0;
  for (size_t i = 0; i < first.windows.size(); ++i) {
    const bool moe = static_cast<int64_t>(i) >= first.dense && first.moe > 0;
    const double keys = first.windows[i] > 0
                            ? std::min<double>(static_cast<double>(c.seq_len), first.windows[i])
                            : static_cast<double>(c.seq_len);
    per_micro_batch += tokens * ActivationBytesPerToken(*model_, s, e, c.recompute, moe, keys);
    largest_layer =
        std::max(largest_layer,
                 tokens * ActivationBytesPerToken(*model_, s, e, Recompute::kNone, moe, keys));
  }
  mem.in_flight_micro_batches = InFlightMicroBatches(c.schedule, layout_.pp, micro_batches);
  mem.activation_bytes = per_micro_batch * mem.in_flight_micro_batches +
                         (c.recompute == Recompute::kFull ? largest_layer : 0.0);
  // Buffers: workspaces, the last stage's fp32 logits and their gradient, and under ZeRO-3 the
  // gathered weights of the layer at work and the one prefetched.
  const double vocab = static_cast<double>(model_->vocab_size) / static_cast<double>(layout_.tp);
  mem.buffer_bytes = e.workspace_bytes + 2 * tokens * vocab * kLogitBytes;
  if (c.zero == 3) {
    const double layers = static_cast<double>(model_->num_layers());
    mem.buffer_bytes += 2 * (dense_params_ + expert_params_) / layers * kBf16Bytes;
  }
  return mem;
}

StatusOr<TrainEstimate> TrainModel::Estimate(const TrainConfig& c) const {
  SW_RETURN_IF_ERROR(Check(c));
  return Estimate(c, *Passes(c));
}

std::vector<std::pair<std::string, double>> StepParts(const TrainEstimate& e) {
  const double m = static_cast<double>(e.micro_batches);
  const PassTimes& f = e.forward;
  const PassTimes& b = e.backward;
  return {
      {"GEMM FLOP/s", m * (f.gemm_s + b.gemm_s)},
      {"attention", m * (f.attention_s + b.attention_s)},
      {"HBM bandwidth (element-wise)", m * (f.memory_s + b.memory_s)},
      {"TP comm (" + e.tp_link + ")", m * (f.tp_comm_s + b.tp_comm_s)},
      {"EP all-to-all", m * (f.ep_comm_s + b.ep_comm_s)},
      {"CP ring", m * (f.cp_comm_s + b.cp_comm_s)},
      {"PP sends", m * (f.pp_comm_s + b.pp_comm_s)},
      {"pipeline bubble", e.bubble_s},
      {"DP/ZeRO comm (" + e.dp_link + ")", e.dp_exposed_s},
      {"optimizer step", e.optimizer_s},
  };
}

TrainingCost CostToTrain(const TrainEstimate& e, double usd_per_gpu_hour, double tokens) {
  TrainingCost t;
  t.tokens = tokens;
  t.steps = tokens / static_cast<double>(e.config.TokensPerIteration());
  t.time_s = t.steps * e.step_s;
  t.gpu_hours = t.time_s * static_cast<double>(e.layout.gpus()) / 3600;
  t.usd = t.gpu_hours * usd_per_gpu_hour;
  return t;
}

StatusOr<TrainEstimate> TrainModel::Estimate(const TrainConfig& c, const LayerPasses& p) const {
  SW_RETURN_IF_ERROR(Check(c));
  const Layout& l = layout_;
  const TrainEngine& e = *engine_;
  TrainEstimate est;
  est.layout = l;
  est.config = c;
  est.micro_batches = c.global_batch / (l.dp * c.micro_batch);
  const double chunks = c.schedule.kind == ScheduleKind::kInterleaved
                            ? static_cast<double>(c.schedule.virtual_stages)
                            : 1.0;

  // Every stage; the slowest sets the pace.
  double sum_stage_s = 0, max_stage_s = -1;
  for (size_t i = 0; i < shard_.stages.size(); ++i) {
    const StageLayers& st = shard_.stages[i];
    PassTimes f, b;
    Add(f, p.dense_fwd, static_cast<double>(st.dense));
    Add(b, p.dense_bwd, static_cast<double>(st.dense));
    Add(f, p.moe_fwd, static_cast<double>(st.moe));
    Add(b, p.moe_bwd, static_cast<double>(st.moe));
    for (int64_t w : st.windows) {
      const double keys = w > 0 ? std::min<double>(static_cast<double>(c.seq_len), w)
                                : static_cast<double>(c.seq_len);
      p.Attention(keys, f, b, hbm_bytes_per_s_);
    }
    if (st.last) {
      Add(f, p.head_fwd, 1);
      Add(b, p.head_bwd, 1);
    }
    Add(f, p.send, chunks);
    Add(b, p.send, chunks);
    const double total = f.Total() + b.Total();
    sum_stage_s += total;
    if (total > max_stage_s) {
      max_stage_s = total;
      est.slowest_stage = static_cast<int>(i);
      est.forward = f;
      est.backward = b;
    }
  }
  const double m = static_cast<double>(est.micro_batches);
  est.pipeline_s = m * max_stage_s;
  est.bubble_s =
      c.schedule.kind == ScheduleKind::kZeroBubble ? 0.0 : (sum_stage_s - max_stage_s) / chunks;
  est.bubble_fraction = est.bubble_s / est.pipeline_s;

  // Data parallelism and ZeRO.
  const double window_b = e.overlap_grad_reduce ? est.backward.Total() : 0.0;
  const double window_f = e.overlap_param_gather ? est.forward.Total() : 0.0;
  if (c.zero == 0) {
    est.dp_comm_s = grad_all_reduce_s_;
    est.dp_exposed_s = std::max(0.0, est.dp_comm_s - window_b);
  } else {
    const double reduce = grad_reduce_scatter_s_;
    const double gather = param_all_gather_s_;
    if (c.zero == 1) {
      est.dp_comm_s = reduce + gather;
      est.dp_exposed_s = std::max(0.0, reduce - window_b) + std::max(0.0, gather - window_f);
    } else if (c.zero == 2) {
      est.dp_comm_s = m * reduce + gather;
      est.dp_exposed_s = m * std::max(0.0, reduce - window_b) + std::max(0.0, gather - window_f);
    } else {
      est.dp_comm_s = m * (2 * gather + reduce);
      est.dp_exposed_s =
          m * (std::max(0.0, gather - window_f) + std::max(0.0, gather + reduce - window_b));
    }
  }
  const double optimizer_params = dense_params_ / (c.zero >= 1 ? dp_replicas_ : 1.0) +
                                  expert_params_ / (c.zero >= 1 ? edp_replicas_ : 1.0);
  est.optimizer_s = optimizer_params * e.optimizer_bytes_per_param / hbm_bytes_per_s_;
  est.step_s = est.pipeline_s + est.bubble_s + est.dp_exposed_s + est.optimizer_s;
  est.tokens_per_s = static_cast<double>(c.TokensPerIteration()) / est.step_s;

  est.flops = CountIterationFlops(*model_, c);
  const double gpus = static_cast<double>(l.gpus());
  const double peak =
      cluster_->gpu.PeakFlopsPerS(cluster_->gpu.ComputeDtypeFor(c.dtype)) * gpus * est.step_s;
  est.model_tflops_per_gpu = est.flops.hardware / (gpus * est.step_s) / 1e12;
  est.mfu = est.flops.hardware / peak;
  est.model_flops_utilization = est.flops.model / peak;
  est.memory = Memory(c, est.micro_batches);
  est.tp_link = LevelName(*cluster_, tp_group_);
  est.dp_link = LevelName(*cluster_, dp_group_);

  const auto parts = StepParts(est);
  size_t top = 0, top_overhead = 1;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].second > parts[top].second) top = i;
    if (parts[i].second > parts[top_overhead].second) top_overhead = i;
  }
  est.bound = parts[top].first;
  est.overhead = fmt::format("{} {:.0f}%", parts[top_overhead].first,
                             100 * parts[top_overhead].second / est.step_s);
  return est;
}

}  // namespace shardwise::train
