#include "shardwise/train/step.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "shardwise/collective/cost_model.h"
#include "shardwise/perf/options.h"
#include "shardwise/train/schedule.h"

namespace shardwise::train {
namespace {

std::string LevelName(const ClusterSpec& c, const GroupShape& g) {
  const int level = g.HighestLevel();
  if (level < 0) return "-";
  return level == 0 ? c.levels[0].name : "scale-out (" + c.levels[level].name + ")";
}

int64_t VirtualStages(const TrainConfig& c) {
  return c.schedule.kind == ScheduleKind::kInterleaved ? c.schedule.virtual_stages : 1;
}

// Keys one query of a layer with this sliding window attends to.
double Keys(int64_t window, int64_t seq_len) {
  return static_cast<double>(window > 0 ? std::min(window, seq_len) : seq_len);
}

// Share of the layers a full-recompute config recomputes (block recompute: the first N of each
// model chunk).
double RecomputedFraction(const TrainConfig& c, const PipelineSplit& split) {
  double recomputed = 0, all = 0;
  for (const PipelineChunk& chunk : split.chunks) {
    for (int64_t i = 0; i < chunk.layers + chunk.mtp; ++i) {
      all += 1;
      if (c.LayerRecompute(i) == Recompute::kFull) recomputed += 1;
    }
  }
  return all > 0 ? recomputed / all : 0.0;
}

// FLOPs per GPU per second and MFU / HFU over the GEMM format's dense peak.
void CountUtilisation(const ModelSpec& m, const GpuSpec& gpu, bool flash, TrainEstimate& est) {
  const TrainConfig& c = est.config;
  const double gpus = static_cast<double>(est.layout.gpus());
  est.flops = CountIterationFlops(m, c, RecomputedFraction(c, est.split), !flash);
  const double peak = gpu.PeakFlopsPerS(gpu.ComputeDtypeFor(c.dtype)) * gpus * est.step_s;
  est.model_tflops_per_gpu = est.flops.model / (gpus * est.step_s) / 1e12;
  est.hardware_tflops_per_gpu = est.flops.hardware / (gpus * est.step_s) / 1e12;
  est.mfu = est.flops.model / peak;
  est.hfu = est.flops.hardware / peak;
}

// The largest part of the step, and the largest besides GEMMs: what bounds the speed.
void NameBounds(TrainEstimate& est) {
  const auto parts = StepParts(est);
  size_t top = 0, top_overhead = 1;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].second > parts[top].second) top = i;
    if (parts[i].second > parts[top_overhead].second) top_overhead = i;
  }
  est.bound = parts[top].first;
  est.overhead = fmt::format("{} {:.0f}%", parts[top_overhead].first,
                             100 * parts[top_overhead].second / est.step_s);
}

}  // namespace

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
  if ((layout.cp > 1 && !engine.context_parallel) || (layout.ep > 1 && !engine.expert_parallel)) {
    return Error(
        fmt::format("engine '{}' has no {} parallelism (its profile's 'parallelisms'); "
                    "use a layout without {}, or another --engine",
                    engine.name, layout.cp > 1 && !engine.context_parallel ? "context" : "expert",
                    layout.cp > 1 && !engine.context_parallel ? "cp" : "ep"));
  }
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
  t.rates_ = engine.RatesOn(cluster.gpu);
  t.layout_ = layout;
  t.shard_ = ShardModel(model, layout, PerfOptions{});
  SW_ASSIGN_OR_RETURN(t.tp_group_, PlaceGroup(cluster, layout.tp, 1));
  SW_ASSIGN_OR_RETURN(t.cp_group_, PlaceGroup(cluster, layout.cp, layout.CpStride()));
  SW_ASSIGN_OR_RETURN(t.ep_group_, PlaceGroup(cluster, layout.ep, layout.EpStride()));
  SW_ASSIGN_OR_RETURN(t.pp_pair_, PlaceGroup(cluster, layout.pp, layout.PpStride()));
  const int64_t ep_local =
      t.ep_group_.members_per_unit.empty() ? 1 : t.ep_group_.members_per_unit[0];
  SW_ASSIGN_OR_RETURN(t.ep_local_group_, PlaceGroup(cluster, ep_local, layout.EpStride()));
  SW_ASSIGN_OR_RETURN(t.ep_node_group_,
                      PlaceGroup(cluster, layout.ep / ep_local, cluster.GpusPerNode()));
  // Gradients of dense weights reduce over the DP and CP ranks (contiguous above TP); expert
  // weights over the replicas of each expert group.
  SW_ASSIGN_OR_RETURN(t.dp_group_, PlaceGroup(cluster, layout.dp * layout.cp, layout.tp));
  const int64_t expert_group = layout.tp * layout.cp * layout.AttentionDp();
  SW_ASSIGN_OR_RETURN(t.edp_group_, PlaceGroup(cluster, layout.Replicas(), expert_group));
  t.dp_replicas_ = static_cast<double>(layout.dp * layout.cp);
  t.edp_replicas_ = static_cast<double>(layout.Replicas());
  t.hbm_bytes_per_s_ = cluster.gpu.AchievableHbmBytesPerS();
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

double TrainModel::Dispatch(double tokens, bool padded) const {
  const ModelSpec& m = *model_;
  const double bytes = tokens * static_cast<double>(m.hidden_size) * kBf16Bytes;
  const int64_t k = m.moe.experts_per_token;
  if (!(padded ? engine_->ep_dispatch_dedup_token_drop : engine_->ep_dispatch_dedup)) {
    // The all-to-all dispatcher: k copies of each token, one per expert.
    return Collective(ep_group_, CollectiveOp::kAllToAll, bytes * static_cast<double>(k));
  }
  // Once per destination node over the network, then forwarded to each destination GPU in the
  // node over NVLink, the two pipelined. With node-limited routing (DeepSeek-V3: experts in
  // groups, a token picks topk_group groups) the groups map onto the nodes. The network part
  // streams at the engine's share of the NIC's line rate (DeepEP's RDMA kernels keep every
  // token's puts in flight), not at NCCL's size-dependent rate.
  const int64_t nodes = ep_node_group_.size;
  const bool grouped = m.moe.num_groups > 1 && m.moe.num_groups >= nodes;
  const int64_t node_picks = grouped ? std::min(k, m.moe.groups_per_token) : k;
  const double nodes_d = static_cast<double>(nodes);
  const double off_node =
      nodes > 1 ? ExpectedDistinctDestinations(nodes, node_picks) * (nodes_d - 1) / nodes_d : 0.0;
  const double network_s =
      bytes * off_node / (cluster_->gpu.nic_bytes_per_s * engine_->ep_network_fraction);
  return std::max(network_s, Collective(ep_local_group_, CollectiveOp::kAllToAllTopK, bytes, k));
}

TrainModel::RankParams TrainModel::ParamsOf(const std::vector<PipelineChunk>& chunks) const {
  const ModelShard& s = shard_;
  const ModelSpec& m = *model_;
  RankParams out;
  auto layer = [&](const LayerSpec& spec) {
    out.dense += s.attention_params + s.norm_params;
    if (spec.moe()) {
      out.dense += s.shared_params + s.router_params;
      out.expert += s.experts_per_gpu * s.expert_params;
    } else if (spec.ffn == FfnKind::kDense) {
      out.dense += s.dense_ffn_params;
    }
  };
  const bool single_tied = layout_.pp == 1 && m.tie_word_embeddings;
  for (const PipelineChunk& c : chunks) {
    for (int64_t i = c.first_layer; i < c.first_layer + c.layers; ++i) layer(m.layers[i]);
    if (c.embedding) out.dense += s.vocab_params;
    if (c.loss) out.dense += (single_tied ? 0.0 : s.vocab_params) + s.norm_params / 2;
    for (int64_t i = 0; i < c.mtp; ++i) {
      layer(m.layers.back());
      out.dense += 2.0 * static_cast<double>(m.hidden_size * m.hidden_size) /
                       static_cast<double>(layout_.tp) +
                   2 * s.norm_params;
    }
  }
  return out;
}

double TrainModel::RankTime(const std::vector<PipelineChunk>& chunks, const LayerCosts& p,
                            const TrainConfig& c, PassTimes& fwd, PassTimes& bwd) const {
  const ModelSpec& m = *model_;
  // The forward is cut into segments where dropless MoE makes the host wait for the GPU; each
  // segment, and the backward after the last (it has no wait: the tokens-per-expert counts are
  // known), runs at the pace of the slower of GPU and host.
  double synced_s = 0, segment_gpu_s = 0, segment_host_s = 0;
  auto forward = [&](const PassTimes& f) {
    fwd.Add(f);
    segment_gpu_s += f.GpuTotal();
    segment_host_s += f.host_s;
  };
  auto layer = [&](const LayerSpec& spec, int64_t index) {
    PassTimes f = spec.moe() ? p.moe_fwd : p.dense_fwd;
    PassTimes b = spec.moe() ? p.moe_bwd : p.dense_bwd;
    const bool full = c.LayerRecompute(index) == Recompute::kFull;
    if (full) b.Add(f);  // the layer's forward again, collectives included
    if (spec.attention()) p.Attention(Keys(spec.sliding_window, c.seq_len), full, f, b);
    forward(f);
    bwd.Add(b);
    if (spec.moe() && p.moe_syncs) {
      synced_s += std::max(segment_gpu_s, segment_host_s) + engine_->host_sync_s;
      segment_gpu_s = segment_host_s = 0;
    }
  };
  for (const PipelineChunk& chunk : chunks) {
    const double chunk_fwd_s = fwd.GpuTotal(), chunk_bwd_s = bwd.GpuTotal();
    if (chunk.embedding) {
      forward(p.embedding_fwd);
      bwd.Add(p.embedding_bwd);
    }
    for (int64_t i = 0; i < chunk.layers; ++i) layer(m.layers[chunk.first_layer + i], i);
    for (int64_t i = 0; i < chunk.mtp; ++i) {
      layer(m.layers.back(), chunk.layers + i);
      forward(p.mtp_fwd);
      bwd.Add(p.mtp_bwd);
    }
    if (chunk.loss) {
      forward(p.loss_fwd);
      bwd.Add(p.loss_bwd);
    }
    // The hand-off to the next stage hides behind the next chunk's compute when overlapped.
    const double compute_s =
        (fwd.GpuTotal() - chunk_fwd_s) / 2 + (bwd.GpuTotal() - chunk_bwd_s) / 2;
    PassTimes send;
    send.pp_comm_s = engine_->overlap_pp_comm
                         ? Exposed(p.send.pp_comm_s, compute_s, engine_->overlap_compute_cost)
                         : p.send.pp_comm_s;
    forward(send);
    bwd.Add(send);
  }
  return synced_s + std::max(segment_gpu_s + bwd.GpuTotal(), segment_host_s + bwd.host_s);
}

Status TrainModel::Check(const TrainConfig& c) const {
  const Layout& l = layout_;
  if (c.seq_len < 1 || c.global_batch < 1 || c.micro_batch < 1) {
    return Error("`seq_len`, `global_batch` and `micro_batch` must be positive");
  }
  if (model_->position_embeddings > 0 && c.seq_len > model_->position_embeddings) {
    return Error(fmt::format("`seq_len` {} exceeds {}'s learned position table ({} positions)",
                             c.seq_len, model_->name, model_->position_embeddings));
  }
  if (c.seq_len % l.cp != 0) {
    return Error(fmt::format("cp {} must divide --seq-len {}", l.cp, c.seq_len));
  }
  if (engine_->sequence_parallel && (c.seq_len / l.cp) % l.tp != 0) {
    return Error(fmt::format(
        "sequence parallelism splits each CP rank's {} tokens of a sequence over tp {}, which "
        "must divide them; use a --seq-len that is a multiple of tp x cp = {}",
        c.seq_len / l.cp, l.tp, l.tp * l.cp));
  }
  // The nearest global batch above 0 that `n` divides, for a hint.
  const auto nearest = [&](int64_t n) {
    return std::max<int64_t>(n, (c.global_batch + n / 2) / n * n);
  };
  if (c.global_batch % c.micro_batch != 0) {
    return Error(fmt::format(
        "global batch {} is not a multiple of the micro-batch {}; use a --global-batch that is a "
        "multiple of {} (such as {}), or a --micro-batch that divides {}",
        c.global_batch, c.micro_batch, c.micro_batch, nearest(c.micro_batch), c.global_batch));
  }
  const int64_t per_step = l.dp * c.micro_batch;
  if (c.global_batch % per_step != 0) {
    return Error(fmt::format(
        "global batch {} is not divisible into micro-batches x DP = {} x {} = {}; use a "
        "--global-batch that is a multiple of {} (such as {}), or a layout whose DP divides {}",
        c.global_batch, c.micro_batch, l.dp, per_step, per_step, nearest(per_step),
        c.global_batch / c.micro_batch));
  }
  if (c.zero == 3 && l.pp > 1) {
    std::vector<std::string> lower;  // the engine's stages that combine with pp
    for (int z : engine_->zero_stages) {
      if (z < 3) lower.push_back(std::to_string(z));
    }
    return Error(fmt::format(
        "ZeRO-3 re-gathers every layer's weights for each micro-batch and does not combine "
        "with pipeline parallelism; use {}or a layout without pp{}",
        lower.empty() ? "" : fmt::format("--zero {} with pp, ", fmt::join(lower, " or ")),
        c.schedule.kind == ScheduleKind::kInterleaved
            ? " (the interleaved schedule needs pp: without it, --schedule 1f1b)"
            : ""));
  }
  if (c.zero < 0 || c.zero > 3) return Error("`zero` must be 0, 1, 2 or 3");
  if (!engine_->OffersZero(c.zero)) {
    return Error(
        fmt::format("engine '{}' does not offer ZeRO-{}; choose another `zero` or "
                    "`engine`",
                    engine_->name, c.zero));
  }
  if (!engine_->Offers(c.schedule.kind)) {
    std::vector<std::string> offered;
    for (const ScheduleKind kind : engine_->schedules) {
      offered.push_back(kind == ScheduleKind::kInterleaved ? std::string("interleaved:V")
                                                           : Schedule{kind, 1}.ToString());
    }
    return Error(
        fmt::format("engine '{}' does not offer the {} schedule; use {} (or an "
                    "engine profile that lists it under 'schedules')",
                    engine_->name, c.schedule.ToString(), fmt::join(offered, ", ")));
  }
  if (!engine_->OffersDtype(c.dtype)) {
    std::vector<std::string> offered;
    for (Dtype d : engine_->dtypes) offered.emplace_back(DtypeName(d));
    return Error(
        fmt::format("engine '{}' does not train in {} (its profile's 'dtypes'); use "
                    "--dtype {}, or another --engine",
                    engine_->name, DtypeName(c.dtype), fmt::join(offered, " or ")));
  }
  const GpuSpec& gpu = cluster_->gpu;
  if (!gpu.Supports(c.dtype)) {
    return Error(
        fmt::format("{} has no {} tensor cores; use --dtype bf16", gpu.name, DtypeName(c.dtype)));
  }
  if (c.dtype == Dtype::kFp8 && !rates_.gemm_fraction.contains(GemmRateKey(c))) {
    const std::vector<std::string> stated = engine_->GpusWithRate(GemmRateKey(c));
    return Error(fmt::format(
        "engine '{}' states no FP8 {} GEMM rate for {} ({}); choose another --fp8-recipe or "
        "--dtype bf16, or give the rate in an engine profile (--engine FILE)",
        engine_->name, Fp8RecipeName(c.fp8_recipe), gpu.name,
        stated.empty() ? std::string("on no GPU")
                       : fmt::format("only for {}", fmt::join(stated, ", "))));
  }
  SW_RETURN_IF_ERROR(CheckSchedule(c.schedule, l.pp, c.global_batch / per_step));
  SW_ASSIGN_OR_RETURN(const PipelineSplit split, SplitPipeline(model_->num_layers(), c.mtp_layers,
                                                               l.pp, VirtualStages(c), c.split));
  // Block recompute of N layers per model chunk (MTP modules count as layers there).
  int64_t most = 0;
  for (const PipelineChunk& chunk : split.chunks) most = std::max(most, chunk.layers + chunk.mtp);
  if (c.recompute == Recompute::kFull && c.recompute_layers > most) {
    return Error(fmt::format(
        "--recompute full:{} recomputes more layers than a model chunk of {} holds (at most "
        "{}); use full:1 to full:{}, or full",
        c.recompute_layers, l.ToString(), most, most));
  }
  return Status();
}

void TrainModel::DataParallel(const TrainConfig& c, const RankParams& params,
                              TrainEstimate& est) const {
  const TrainEngine& e = *engine_;
  auto both = [&](CollectiveOp op, double bytes_per_param) {
    return Collective(dp_group_, op, params.dense * bytes_per_param) +
           Collective(edp_group_, op, params.expert * bytes_per_param);
  };
  const double gather_bytes = e.fp8_param_gather && c.dtype == Dtype::kFp8 ? 1.0 : kBf16Bytes;
  const double m = static_cast<double>(est.micro_batches);
  const double v = static_cast<double>(VirtualStages(c));
  const double cost = e.overlap_compute_cost;
  // Overlapped, a rank's reduction (or gather) runs bucket by bucket under its last backward
  // (first forward); with V model chunks every chunk's but the last one's hides behind the other
  // chunks' work, and the last chunk's behind its own pass.
  auto hidden = [&](double comm_s, double window_s, bool overlap) {
    if (!overlap) return comm_s;
    return Exposed(comm_s / v, window_s / v, cost) + cost * comm_s * (v - 1) / v;
  };
  const double window_b = est.backward.GpuTotal();
  const double window_f = est.forward.GpuTotal();
  if (c.zero == 0) {
    est.dp_comm_s = both(CollectiveOp::kAllReduce, e.grad_reduce_bytes_per_param);
    est.dp_exposed_s = hidden(est.dp_comm_s, window_b, e.overlap_grad_reduce);
    return;
  }
  const double reduce = both(CollectiveOp::kReduceScatter, e.grad_reduce_bytes_per_param);
  const double gather = both(CollectiveOp::kAllGather, gather_bytes);
  const double gathered = hidden(gather, window_f, e.overlap_param_gather);
  if (c.zero == 1) {
    est.dp_comm_s = reduce + gather;
    est.dp_exposed_s = hidden(reduce, window_b, e.overlap_grad_reduce) + gathered;
  } else if (c.zero == 2) {
    est.dp_comm_s = m * reduce + gather;
    est.dp_exposed_s = m * hidden(reduce, window_b, e.overlap_grad_reduce) + gathered;
  } else {
    // ZeRO-3 gathers the weights for every micro-batch's forward and backward.
    est.dp_comm_s = m * (2 * gather + reduce);
    est.dp_exposed_s = m * (hidden(gather, window_f, e.overlap_param_gather) +
                            hidden(gather + reduce, window_b, e.overlap_grad_reduce));
  }
}

StatusOr<TrainEstimate> TrainModel::Estimate(const TrainConfig& c) const {
  SW_RETURN_IF_ERROR(Check(c));
  return Estimate(c, *Passes(c));
}

std::vector<std::pair<std::string, double>> StepParts(const TrainEstimate& e) {
  const double m = static_cast<double>(e.micro_batches);
  const PassTimes& f = e.forward;
  const PassTimes& b = e.backward;
  // A collective over no group has no link to name.
  const auto over = [](const std::string& what, const std::string& link) {
    return link.empty() || link == "-" ? what : what + " (" + link + ")";
  };
  return {
      {"GEMM FLOP/s", m * (f.gemm_s + b.gemm_s)},
      {"attention", m * (f.attention_s + b.attention_s)},
      {e.config.dtype == Dtype::kFp8 ? "HBM bandwidth (element-wise, FP8 casts)"
                                     : "HBM bandwidth (element-wise)",
       m * (f.memory_s + b.memory_s)},
      {"kernel gaps", m * (f.launch_s + b.launch_s)},
      {"host launches (CPU-bound)", m * e.host_exposed_s},
      {over("TP comm", e.tp_link), m * (f.tp_comm_s + b.tp_comm_s)},
      {"EP all-to-all", m * (f.ep_comm_s + b.ep_comm_s)},
      {"CP ring", m * (f.cp_comm_s + b.cp_comm_s)},
      {"PP sends", m * (f.pp_comm_s + b.pp_comm_s)},
      {"pipeline bubble", e.bubble_s},
      {over("DP/ZeRO comm", e.dp_link), e.dp_exposed_s},
      {"optimizer step", e.optimizer_s},
  };
}

StatusOr<TrainEstimate> TrainModel::Estimate(const TrainConfig& c, const LayerCosts& p) const {
  SW_RETURN_IF_ERROR(Check(c));
  const Layout& l = layout_;
  const TrainEngine& e = *engine_;
  TrainEstimate est;
  est.layout = l;
  est.config = c;
  SW_ASSIGN_OR_RETURN(est.split, SplitPipeline(model_->num_layers(), c.mtp_layers, l.pp,
                                               VirtualStages(c), c.split));
  est.micro_batches = c.global_batch / (l.dp * c.micro_batch);

  // Every pipeline rank; the slowest sets the pace.
  double sum_rank_s = 0, max_rank_s = -1;
  RankParams params;
  for (int64_t rank = 0; rank < l.pp; ++rank) {
    const std::vector<PipelineChunk> chunks = est.split.ChunksOf(rank);
    PassTimes f, b;
    const double total = RankTime(chunks, p, c, f, b);
    sum_rank_s += total;
    if (total > max_rank_s) {
      max_rank_s = total;
      est.slowest_stage = static_cast<int>(rank);
      est.forward = f;
      est.backward = b;
      // What the host added past the GPU (zero up to rounding when the GPU sets the pace).
      const double host_s = total - f.GpuTotal() - b.GpuTotal();
      est.host_exposed_s = host_s > 1e-9 * total ? host_s : 0.0;
    }
    const RankParams here = ParamsOf(chunks);
    if (here.dense + here.expert > params.dense + params.expert) params = here;
  }
  const double m = static_cast<double>(est.micro_batches);
  est.pipeline_s = m * max_rank_s;
  est.bubble_s = c.schedule.kind == ScheduleKind::kZeroBubble
                     ? 0.0
                     : (sum_rank_s - max_rank_s) / static_cast<double>(VirtualStages(c));
  est.bubble_fraction = est.bubble_s / est.pipeline_s;

  DataParallel(c, params, est);
  const double local_params = params.dense / (c.zero >= 1 ? dp_replicas_ : 1.0) +
                              params.expert / (c.zero >= 1 ? edp_replicas_ : 1.0);
  // Adam over this rank's shard; FP8 recipes also cast the weights once per step.
  const double cast_bytes = c.dtype == Dtype::kFp8 ? e.fp8_cast_bytes.at(c.fp8_recipe) : 0.0;
  est.optimizer_s =
      (local_params * e.optimizer_bytes_per_param + (params.dense + params.expert) * cast_bytes) /
      hbm_bytes_per_s_;
  est.step_s = est.pipeline_s + est.bubble_s + est.dp_exposed_s + est.optimizer_s;
  est.tokens_per_s = static_cast<double>(c.TokensPerIteration()) / est.step_s;
  est.tokens_per_s_per_gpu = est.tokens_per_s / static_cast<double>(l.gpus());

  CountUtilisation(*model_, cluster_->gpu, engine_->flash_attention, est);
  est.memory = Memory(c, est.split, est.micro_batches);
  est.tp_link = LevelName(*cluster_, tp_group_);
  est.dp_link = LevelName(*cluster_, dp_group_);
  NameBounds(est);
  return est;
}

TrainMemory TrainModel::Memory(const TrainConfig& c, const PipelineSplit& split,
                               int64_t micro_batches) const {
  const ModelShard& s = shard_;
  const ModelSpec& m = *model_;
  const TrainEngine& e = *engine_;
  const bool fp8 = c.dtype == Dtype::kFp8;
  const double tokens = static_cast<double>(c.micro_batch * c.seq_len / layout_.cp);
  const double vocab = static_cast<double>(m.vocab_size) / static_cast<double>(layout_.tp);
  const double in_flight = InFlightMicroBatches(c.schedule, layout_.pp, micro_batches);
  TrainMemory worst;
  for (int64_t rank = 0; rank < split.pp; ++rank) {
    const std::vector<PipelineChunk> chunks = split.ChunksOf(rank);
    const RankParams params = ParamsOf(chunks);
    TrainMemory mem;
    mem.hbm_bytes = cluster_->gpu.hbm_bytes;
    mem.usable_bytes = mem.hbm_bytes * e.usable_hbm_fraction;
    const double weight_bytes = WeightBytesPerParam(e, c);
    const ModelStates dense =
        ModelStateBytes(params.dense, dp_replicas_, c.zero, weight_bytes, e.grad_bytes_per_param);
    const ModelStates expert =
        ModelStateBytes(params.expert, edp_replicas_, c.zero, weight_bytes, e.grad_bytes_per_param);
    mem.states = {dense.weight_bytes + expert.weight_bytes, dense.grad_bytes + expert.grad_bytes,
                  dense.optimizer_bytes + expert.optimizer_bytes};
    double per_micro_batch = 0, largest_layer = 0;
    auto layer = [&](const LayerSpec& spec, int64_t index) {
      const double keys = Keys(spec.sliding_window, c.seq_len);
      per_micro_batch +=
          tokens * ActivationBytesPerToken(m, s, e, c.LayerRecompute(index), spec.moe(), keys, fp8);
      largest_layer = std::max(
          largest_layer,
          tokens * ActivationBytesPerToken(m, s, e, Recompute::kNone, spec.moe(), keys, fp8));
    };
    bool loss = false;
    for (const PipelineChunk& chunk : chunks) {
      for (int64_t i = 0; i < chunk.layers; ++i) layer(m.layers[chunk.first_layer + i], i);
      for (int64_t i = 0; i < chunk.mtp; ++i) layer(m.layers.back(), chunk.layers + i);
      loss = loss || chunk.loss;
    }
    // Rank r of a 1F1B pipeline holds pp - r micro-batches at its peak (rank 0 the most).
    mem.in_flight_micro_batches =
        in_flight * static_cast<double>(layout_.pp - rank) / static_cast<double>(layout_.pp);
    mem.activation_bytes = per_micro_batch * mem.in_flight_micro_batches +
                           (c.recompute == Recompute::kFull ? largest_layer : 0.0);
    // Buffers: workspaces, the last rank's fp32 logits and their gradient, and under ZeRO-3 the
    // gathered weights of the layer at work and the one prefetched.
    mem.buffer_bytes = e.workspace_bytes + (loss ? 2 * tokens * vocab * kLogitBytes : 0.0);
    if (c.zero == 3) {
      const double layers = static_cast<double>(m.num_layers());
      mem.buffer_bytes += 2 * (params.dense + params.expert) / layers * kBf16Bytes;
    }
    if (mem.UsedBytes() > worst.UsedBytes()) worst = mem;
  }
  return worst;
}

}  // namespace shardwise::train
