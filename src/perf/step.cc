#include "shardwise/perf/step.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shardwise/perf/attention.h"
#include "shardwise/perf/moe.h"
#include "shardwise/perf/overlap.h"
#include "shardwise/perf/recurrent.h"
#include "shardwise/perf/schedule.h"
#include "shardwise/perf/sparse_attention.h"
#include "shardwise/perf/speculative.h"

namespace shardwise {
namespace {

// The DeepEP-class kernels' calibration, parsed once.
StatusOr<EpKernelProfile> BuiltinEpKernels() {
  static const StatusOr<EpKernelProfile> profile = LoadEpKernelProfile();
  return profile;
}

}  // namespace

StatusOr<StepModel> StepModel::Create(const ModelSpec& given, const ClusterSpec& cluster,
                                      const Layout& layout, const PerfOptions& options) {
  std::shared_ptr<const ModelSpec> derived;
  if (options.shared_experts_routed && layout.ep > 1) {
    SW_ASSIGN_OR_RETURN(ModelSpec routed, SharedExpertsAsRouted(given));
    derived = std::make_shared<const ModelSpec>(std::move(routed));
  }
  const ModelSpec& model = derived ? *derived : given;
  SW_RETURN_IF_ERROR(ValidateLayout(layout, model, options.redundant_experts));
  if (layout.gpus() > cluster.num_gpus) {
    return Error(
        fmt::format("{} needs {} GPUs; cluster '{}' has {} (use --nodes or a smaller "
                    "layout)",
                    layout.ToString(), layout.gpus(), cluster.name, cluster.num_gpus));
  }
  if (!(options.gpu_memory_utilization > 0 && options.gpu_memory_utilization <= 1)) {
    return Error("`gpu_memory_utilization` must be in (0, 1]");
  }
  StepModel s;
  s.derived_model_ = derived;
  s.model_ = &model;
  s.cluster_ = &cluster;
  s.options_ = options;
  s.layout_ = layout;
  s.shard_ = ShardModel(model, layout, options);
  s.ops_ = OpCoster(cluster.gpu, options);
  s.launch_.fused_allreduce_norm = layout.tp > 1 && options.engine.fused_allreduce_norm;
  s.launch_.fp8_gemms = cluster.gpu.ComputeDtypeFor(options.weight_dtype) == Dtype::kFp8;
  s.launch_.qk_norm = model.qk_norm != QkNorm::kNone;
  s.launch_.shared_experts = model.moe.num_shared_experts > 0;
  for (const StageLayers& st : s.shard_.stages) {
    s.max_stage_decode_host_s_ =
        std::max(s.max_stage_decode_host_s_, StageEagerHostS(options.engine, st, s.launch_, false));
    s.max_stage_prompt_host_s_ =
        std::max(s.max_stage_prompt_host_s_, StageEagerHostS(options.engine, st, s.launch_, true));
  }
  EpExchangeSetup ep;
  if (layout.ep > 1) {
    SW_ASSIGN_OR_RETURN(ep.kernels, BuiltinEpKernels());
    ep.routing = {model.moe.num_experts, model.moe.experts_per_token, model.moe.num_groups,
                  model.moe.groups_per_token};
    ep.hidden = model.hidden_size;
    ep.algorithm = options.ep.algorithm;
    ep.dispatch_dtype = options.ep.dispatch_dtype;
    ep.combine_dtype = options.activation_dtype;
  }
  SW_ASSIGN_OR_RETURN(s.comm_, StepComm::Create(cluster, layout, options.engine, std::move(ep)));
  const SpeculativeOptions& spec = options.speculative;
  if (spec.method == SpeculativeMethod::kMtp || spec.method == SpeculativeMethod::kEagle) {
    s.draft_layers_ = DraftHeadLayers(spec.method, model);
  }
  if (spec.method == SpeculativeMethod::kDraftModel) {
    SW_CHECK(spec.draft_model != nullptr, "draft:MODEL without its model");
    // The draft runs whole on each attention rank's TP group, as engines run it beside the target.
    Layout draft_layout;
    draft_layout.tp = layout.tp;
    PerfOptions draft_options = options;
    draft_options.speculative = SpeculativeOptions{};
    draft_options.redundant_experts = 0;
    // The checkpoint's own formats when the target keeps its own; else the --dtype given.
    if (options.weight_formats) draft_options.weight_formats = spec.draft_model->native_formats;
    auto draft = Create(*spec.draft_model, cluster, draft_layout, draft_options);
    if (!draft.ok()) {
      return Error(fmt::format("draft model {} on the {} TP ranks of {}: {}",
                               spec.draft_model->name, layout.tp, layout.ToString(),
                               draft.status().message()));
    }
    s.draft_ = std::make_shared<const StepModel>(std::move(*draft));
    s.draft_prefill_ = s.draft_->EstimatePrefill(16);
  }
  return s;
}

template <typename Keys>
PhaseBreakdown StepModel::Stage(const StageLayers& stage, double tokens, Keys keys,
                                double ep_tokens, bool prefill, double prefill_tokens,
                                double queries_per_sequence, double cached_tokens) const {
  MicroBatchPass pass;
  if (!options_.ep.two_batch_overlap || stage.moe == 0 || !comm_.ExchangesTokens() || tokens < 2) {
    return StageWork(stage, tokens, keys, ep_tokens, prefill, prefill_tokens, queries_per_sequence,
                     cached_tokens, pass);
  }
  // Two micro-batches of half the tokens (and half the sequences' query-key pairs) each.
  auto half_keys = [&](int64_t window) { return keys(window) / 2; };
  pass.breakdown = StageWork(stage, tokens / 2, half_keys, ep_tokens / 2, prefill, prefill_tokens,
                             queries_per_sequence, cached_tokens, pass);
  const int64_t sms = cluster_->gpu.sm_count;
  SW_CHECK(sms == 0 || pass.exchange_sms < sms, "EP kernels occupy every SM of the GPU");
  // A GPU without an SM count in its catalog entry loses nothing to the kernels.
  const double sm_share =
      sms > 0 ? static_cast<double>(pass.exchange_sms) / static_cast<double>(sms) : 0.0;
  return TwoBatchOverlap(pass, sm_share);
}

template <typename Keys>
PhaseBreakdown StepModel::StageWork(const StageLayers& stage, double tokens, Keys keys,
                                    double ep_tokens, bool prefill, double prefill_tokens,
                                    double queries_per_sequence, double cached_tokens,
                                    MicroBatchPass& pass) const {
  const ModelShard& s = shard_;
  const Layout& l = layout_;
  const double abytes = BytesPerElement(options_.activation_dtype);
  const double hidden = static_cast<double>(s.hidden);
  const double hidden_bytes = tokens * hidden * abytes;
  const double cp = static_cast<double>(l.cp);
  PhaseBreakdown out;

  // Collectives are the same for every layer of the stage: price them once.
  const double tp_all_reduce = comm_.TpAllReduce(hidden_bytes);
  // Prefill: one layer's ring passes; decode: combining partial attention outputs.
  const double cp_ring_s = prefill ? comm_.CpRing(prefill_tokens / cp * s.kv_bytes_per_token) : 0.0;
  const double cp_combine_s = prefill ? 0.0 : comm_.CpCombine(hidden_bytes);

  // Sequences this pass touches: one token each in decode; whole prompts in prefill.
  const double sequences =
      prefill ? std::max(1.0, tokens / prefill_tokens * cp) : tokens / queries_per_sequence;
  // Decode reads each sequence's cached keys once, whatever the queries it verifies.
  const double kv_reads_per_pair = prefill ? 0.0 : 1.0 / (cp * queries_per_sequence);
  // Prefill reads the KV it writes and each sequence's cached prefix.
  const double prefill_kv_reads = tokens + sequences * cached_tokens / cp;
  // Token mixer of one layer: projections, core, communication. Attention layers read their
  // KV cache (DSA: the indexer over every key, the core over the top-k); recurrent layers their
  // fixed-size state.
  auto mixer = [&](MixerKind kind, int64_t window, PhaseBreakdown& into) {
    if (kind == MixerKind::kNone) return;
    if (kind != MixerKind::kAttention) {
      ops_.Gemms(s.recurrent_gemms, tokens, 1, 1, into);
      RecurrentCore(ops_, s, tokens, sequences, prefill, into);
      into.tp_comm_s += tp_all_reduce;
      return;
    }
    ops_.Gemms(s.attention_gemms, tokens, 1, 1, into);
    const double pairs = keys(window);
    // Decode reads every cached key of each sequence; prefill reads the keys it writes.
    double core = 0;
    if (s.sparse_topk > 0) {
      const int64_t limit = window > 0 ? std::min(window, s.sparse_topk) : s.sparse_topk;
      const double core_pairs = keys(limit);
      core = SparseAttentionCore(
          ops_, s, core_pairs, pairs, prefill ? prefill_kv_reads : core_pairs * kv_reads_per_pair,
          prefill ? prefill_kv_reads : pairs * kv_reads_per_pair, cp, prefill, into);
    } else {
      core = AttentionCore(ops_, s, pairs, prefill ? prefill_kv_reads : pairs * kv_reads_per_pair,
                           cp, prefill, into);
    }
    into.tp_comm_s += tp_all_reduce;
    // Ring attention hides its KV passes behind the attention compute; decode's combine cannot.
    into.cp_comm_s += prefill ? std::max(0.0, cp_ring_s - core) : cp_combine_s;
  };
  // Layers alike (the same mixer and window) cost alike: each kind is priced once, times its
  // layers.
  std::vector<std::pair<std::pair<MixerKind, int64_t>, double>> kinds;
  for (size_t layer = 0; layer < stage.mixers.size(); ++layer) {
    const std::pair<MixerKind, int64_t> kind{stage.mixers[layer], stage.windows[layer]};
    auto it =
        std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == kind; });
    if (it == kinds.end()) {
      kinds.emplace_back(kind, 1.0);
    } else {
      it->second += 1;
    }
  }
  for (const auto& [kind, layers] : kinds) {
    PhaseBreakdown one;
    ops_.Elementwise(tokens, hidden, s.ffn_width, l.tp > 1 && options_.engine.fused_allreduce_norm,
                     one);
    mixer(kind.first, kind.second, one);
    Accumulate(out, one, layers);
  }
  const double mixers_s = out.compute_s + out.memory_s + out.tp_comm_s + out.cp_comm_s;
  if (stage.dense > 0) {
    PhaseBreakdown one;
    ops_.Gemms(s.dense_ffn_gemms, tokens, 1, 1, one);
    one.tp_comm_s += tp_all_reduce;
    Accumulate(out, one, static_cast<double>(stage.dense));
  }
  if (stage.moe > 0)
    MoeLayers(stage, tokens, ep_tokens, prefill, tp_all_reduce, mixers_s, out, pass);
  if (stage.last) {
    // LM head: logits for one token per sequence (decode) or the prompt's last token.
    const double rows = prefill ? std::max(1.0, tokens / prefill_tokens * cp) : tokens;
    ops_.Gemms({s.lm_head_gemm}, rows, 1, 1, out);
  }
  out.launch_s =
      StageKernels(options_.engine.kernels, stage, launch_) * cluster_->gpu.kernel_latency_s;
  out.total_s =
      out.compute_s + out.memory_s + out.launch_s + out.tp_comm_s + out.ep_comm_s + out.cp_comm_s;
  return out;
}

void StepModel::MoeLayers(const StageLayers& stage, double tokens, double ep_tokens, bool prefill,
                          double tp_all_reduce_s, double mixers_s, PhaseBreakdown& out,
                          MicroBatchPass& pass) const {
  const ModelShard& s = shard_;
  const Layout& l = layout_;
  const MoeSpec& moe = model_->moe;
  const double ranks = static_cast<double>(l.StageRanks() / l.Replicas());  // ep x expert-TP
  const ExpertLoad load =
      EstimateExpertLoad(moe, s, ep_tokens, static_cast<double>(l.ep), options_.expert_imbalance,
                         options_.capacity_factor.value_or(0.0));
  // The busiest rank receives `imbalance` times the mean rank's tokens, and its receive binds.
  const EpExchange exchange =
      l.GathersTokensForExperts()
          ? comm_.GatherForExperts(ep_tokens / ranks)
          : comm_.Exchange(ep_tokens / ranks * load.imbalance, ep_tokens / ranks, prefill);
  const double before_s = out.compute_s + out.memory_s + out.tp_comm_s;
  PhaseBreakdown one;  // one MoE layer's FFN; the stage's MoE layers are alike
  ops_.Gemms({s.router_gemm}, tokens, 1, 1, one);
  ops_.Gemms(s.shared_gemms, tokens, 1, 1, one);
  ops_.Gemms(s.expert_gemms, load.rows_per_expert, s.experts_per_gpu, load.touched, one);
  one.ep_comm_s += exchange.time_s;
  one.tp_comm_s += tp_all_reduce_s;
  Accumulate(out, one, static_cast<double>(stage.moe));
  if (comm_.ExchangesTokens()) out.ep_algorithm = exchange.algorithm;
  // The MoE layers' share of the token mixers, and their FFNs.
  const double layers = static_cast<double>(std::max<size_t>(1, stage.mixers.size()));
  pass.moe_work_s = mixers_s * std::min(1.0, static_cast<double>(stage.moe) / layers) +
                    (out.compute_s + out.memory_s + out.tp_comm_s - before_s);
  pass.moe_layers = static_cast<double>(stage.moe);
  pass.exchange_sms = exchange.sms;
}

PhaseBreakdown StepModel::DraftPasses(double sequences, double context) const {
  const SpeculativeOptions& spec = options_.speculative;
  const double k = static_cast<double>(spec.DraftTokens());
  PhaseBreakdown out;
  if (k == 0) return out;
  if (draft_) {
    Workload w;
    w.batch = static_cast<int64_t>(std::ceil(sequences));
    w.prompt_tokens = draft_prefill_.prompt_tokens;
    w.output_tokens = 1;
    w.decode_context_tokens = std::max<int64_t>(1, static_cast<int64_t>(context));
    Accumulate(out, draft_->Estimate(w, draft_prefill_).decode, k);
    return out;
  }
  // MTP module or EAGLE head: one layer and the LM head per draft token.
  const double adp = static_cast<double>(layout_.AttentionDp());
  const PhaseBreakdown pass = Stage(
      draft_layers_, sequences, [&](int64_t win) { return sequences * DecodeKeys(context, win); },
      sequences * adp, false, 0.0);
  Accumulate(out, pass, k);
  return out;
}

PhaseBreakdown StepModel::DraftPrefill(double tokens, double keys_per_token,
                                       double prompt_tokens) const {
  PhaseBreakdown out;
  if (options_.speculative.DraftTokens() == 0) return out;
  if (draft_) {
    // The draft model prefills the prompt too, to hold its own KV for drafting.
    out.compute_s = out.total_s = draft_->PrefillIterationS(tokens, keys_per_token);
    return out;
  }
  // The MTP module or EAGLE head runs once over the prompt's tokens for its KV (DeepSeek-V3
  // Technical Report 2.2: the MTP module takes every position's hidden state).
  const double cp = static_cast<double>(layout_.cp);
  const double adp = static_cast<double>(layout_.AttentionDp());
  return Stage(
      draft_layers_, tokens / cp,
      [&](int64_t win) {
        return tokens *
               (win > 0 ? std::min(keys_per_token, static_cast<double>(win)) : keys_per_token);
      },
      tokens * adp, true, prompt_tokens);
}

DraftMemory StepModel::DraftMemoryPerGpu(const Workload& w) const {
  const SpeculativeOptions& spec = options_.speculative;
  DraftMemory d;
  if (spec.DraftTokens() == 0) return d;
  if (draft_) {
    Workload one = w;
    one.batch = 1;
    const MemoryPerGpu m = EstimateMemory(draft_->shard_, *cluster_, one, draft_->options_);
    d.weight_bytes = m.weight_bytes;
    d.kv_bytes_per_token = m.kv_bytes_per_sequence / static_cast<double>(w.PeakContext());
    return d;
  }
  const WeightFormats f =
      options_.weight_formats.value_or(WeightFormats::Uniform(options_.weight_dtype));
  d.weight_bytes = DraftHeadParams(spec.method, *model_, shard_) * f.mixer.bytes_per_param;
  d.kv_bytes_per_token = shard_.kv_bytes_per_token / static_cast<double>(layout_.cp);
  return d;
}

double StepModel::StepOverheadS(bool graphed, double passes, double gpu_s,
                                bool carries_prompt) const {
  const EngineProfile& e = options_.engine;
  if (graphed) return e.step_overhead_s;
  const double host_s = carries_prompt ? max_stage_prompt_host_s_ : max_stage_decode_host_s_;
  return e.step_overhead_s + ExposedHostS(host_s * passes, gpu_s);
}

double StepModel::HandOff(double tokens) const {
  return comm_.HandOff(tokens * static_cast<double>(shard_.hidden) *
                       BytesPerElement(options_.activation_dtype));
}

PrefillEstimate StepModel::EstimatePrefill(int64_t prompt_tokens) const {
  const Layout& l = layout_;
  const double adp = static_cast<double>(l.AttentionDp());
  const double cp = static_cast<double>(l.cp);
  PrefillEstimate p;
  p.prompt_tokens = prompt_tokens;
  // One prompt (TTFT): every stage in turn, the prompt split over CP ranks. Only the attention-DP
  // rank that holds it sends tokens to the experts. With prefix caching the cached tokens' KV is
  // already there: prefill computes the rest (at least the last token), attending to all.
  const double prompt = static_cast<double>(prompt_tokens);
  const double cached = std::min(prompt - 1.0, std::round(prompt * options_.prefix_hit_rate));
  const double computed = prompt - cached;
  for (const StageLayers& st : shard_.stages) {
    const PhaseBreakdown stage = Stage(
        st, computed / cp, [&](int64_t win) { return ChunkPairs(cached, computed, win); }, computed,
        true, computed, 1.0, cached);
    Accumulate(p.prefill, stage, 1.0);
  }
  // Speculative decoding: the draft's own pass over the prompt, on the last stage.
  Accumulate(p.prefill, DraftPrefill(computed, cached + (computed + 1) / 2, computed), 1.0);
  p.prefill.pp_comm_s = static_cast<double>(l.pp - 1) * HandOff(computed / cp);
  // Prefill runs outside CUDA graphs; each stage's host issues its kernels while it computes.
  const double stage_gpu_s = p.prefill.total_s / static_cast<double>(l.pp);
  const double overhead_s = StepOverheadS(PromptGraphed(computed / cp), 1.0, stage_gpu_s, true);
  p.prefill.overhead_s = overhead_s;
  p.prefill.total_s += p.prefill.pp_comm_s + overhead_s;
  p.ttft_s = p.prefill.total_s;

  // At full load: chunks of max_batched_tokens, pipelined across stages, one chunk per
  // attention-DP rank at a time.
  const double chunk_prompts =
      std::max(1.0, std::floor(static_cast<double>(options_.max_batched_tokens) / computed));
  const double chunk_tokens = chunk_prompts * computed;
  double chunk_stage_s = 0;
  for (const StageLayers& st : shard_.stages) {
    chunk_stage_s =
        std::max(chunk_stage_s,
                 Stage(
                     st, chunk_tokens / cp,
                     [&](int64_t win) { return chunk_prompts * ChunkPairs(cached, computed, win); },
                     chunk_tokens * adp, true, computed, 1.0, cached)
                     .total_s);
  }
  chunk_stage_s += DraftPrefill(chunk_tokens, cached + (computed + 1) / 2, computed).total_s;
  p.s_per_request = (chunk_stage_s + HandOff(chunk_tokens / cp) +
                     StepOverheadS(PromptGraphed(chunk_tokens / cp), 1.0, chunk_stage_s, true)) /
                    (chunk_prompts * adp);
  return p;
}

double StepModel::PrefillIterationS(double tokens, double keys_per_token) const {
  return PrefillPassS(tokens, keys_per_token,
                      DecodeMicroBatches(std::max(1.0, tokens), layout_.pp));
}

double StepModel::VirtualPrefillS(double tokens, double keys_per_token) const {
  return PrefillPassS(tokens, keys_per_token, MicroBatches{1.0, std::max(1.0, tokens)}, false);
}

double StepModel::PromptIterationFloorS() const {
  return options_.engine.step_overhead_s + max_stage_prompt_host_s_;
}

double StepModel::PromptGraphTokens() const {
  const EngineProfile& e = options_.engine;
  return e.cuda_graph_prompts ? e.cuda_graph_max_batch : 0.0;
}

bool StepModel::PromptGraphed(double tokens_per_rank) const {
  return tokens_per_rank <= PromptGraphTokens();
}

double StepModel::VirtualDecodeS(double batch, double context) const {
  Workload w;
  w.batch = std::max<int64_t>(1, static_cast<int64_t>(std::llround(batch)));
  w.prompt_tokens = 16;  // decode does not use the prefill
  w.output_tokens = 1;
  w.decode_context_tokens = std::max<int64_t>(1, static_cast<int64_t>(std::llround(context)));
  const double per_rank =
      std::ceil(static_cast<double>(w.batch) / static_cast<double>(layout_.AttentionDp()));
  StepEstimate e;
  DecodeStep(w, MicroBatches{1.0, per_rank}, e);
  return e.tpot_s;
}

double StepModel::PrefillPassS(double tokens, double keys_per_token, const MicroBatches& mb,
                               bool host_floor) const {
  const Layout& l = layout_;
  const double adp = static_cast<double>(l.AttentionDp());
  const double cp = static_cast<double>(l.cp);
  double all_stages_s = 0;
  double slowest_s = 0;
  for (const StageLayers& st : shard_.stages) {
    const double stage_s =
        Stage(
            st, mb.size / cp,
            [&](int64_t win) {
              const double keys =
                  win > 0 ? std::min(keys_per_token, static_cast<double>(win)) : keys_per_token;
              return mb.size * keys;
            },
            mb.size * adp, true, mb.size)
            .total_s;
    all_stages_s += stage_s;
    slowest_s = std::max(slowest_s, stage_s);
  }
  const double hand_offs = static_cast<double>(l.pp) * HandOff(mb.size / cp);
  const double cycle_s = DecodeCycle(all_stages_s, slowest_s, mb.count).cycle_s;
  // Prefill runs outside CUDA graphs (a caller may apply the host's floor to a larger step).
  const bool graphed = !host_floor || PromptGraphed(mb.size / cp);
  return cycle_s + hand_offs + StepOverheadS(graphed, mb.count, cycle_s, true) +
         DraftPrefill(std::max(1.0, tokens), keys_per_token, std::max(1.0, tokens)).total_s;
}

void StepModel::DecodeStep(const Workload& w, const MicroBatches& mb, StepEstimate& e) const {
  const Layout& l = layout_;
  const double adp = static_cast<double>(l.AttentionDp());
  // With speculative decoding each sequence passes its token and the k draft tokens through the
  // target at once.
  const double context = static_cast<double>(w.DecodeContext());
  const double verify = 1.0 + static_cast<double>(options_.speculative.DraftTokens());
  PhaseBreakdown slowest;
  const StageLayers* slowest_stage = &shard_.stages[0];
  double all_stages_s = 0;
  for (const StageLayers& st : shard_.stages) {
    const PhaseBreakdown stage = Stage(
        st, mb.size * verify,
        [&](int64_t win) { return mb.size * verify * DecodeKeys(context, win); },
        mb.size * verify * adp, false, 0.0, verify);
    all_stages_s += stage.total_s;
    if (stage.total_s > slowest.total_s) {
      slowest = stage;
      slowest_stage = &st;
    }
  }
  if (model_->is_moe() && options_.capacity_factor) {
    e.expert_dropped_share =
        EstimateExpertLoad(model_->moe, shard_, mb.size * verify * adp, static_cast<double>(l.ep),
                           options_.expert_imbalance, *options_.capacity_factor)
            .busiest_dropped_share;
  }
  const double hand_offs = static_cast<double>(l.pp) * HandOff(mb.size * verify);
  const PipelineCycle cycle = DecodeCycle(all_stages_s, slowest.total_s, mb.count);
  Accumulate(e.decode, slowest, mb.count);
  e.decode.bubble_s = cycle.bubble_s;
  e.decode.pp_comm_s = hand_offs;
  const double per_rank = std::ceil(static_cast<double>(w.batch) / adp);
  const bool graphed = per_rank <= options_.engine.cuda_graph_max_batch;
  e.decode.overhead_s = StepOverheadS(graphed, mb.count, cycle.cycle_s, false);
  e.decode.total_s = cycle.cycle_s + hand_offs + e.decode.overhead_s;
  // The draft proposes before the target verifies: its k passes add to the step.
  const PhaseBreakdown draft = DraftPasses(per_rank, context);
  e.draft_s = draft.total_s;
  Accumulate(e.decode, draft, 1.0);
  e.tokens_per_step = options_.speculative.DraftTokens() > 0
                          ? ExpectedTokensPerStep(options_.speculative.acceptance)
                          : 1.0;
  e.tpot_s = e.decode.total_s / e.tokens_per_step;
  // 7 Scaling Across Hardware, 7.7: over-parallelised when a layer's TP communication exceeds its
  // compute.
  const double layers = static_cast<double>(slowest_stage->mixers.size());
  e.tp_comm_per_layer_s = slowest.tp_comm_s / std::max(layers, 1.0);
  e.compute_per_layer_s = (slowest.compute_s + slowest.memory_s) / std::max(layers, 1.0);
  e.over_parallelised = l.tp > 1 && e.tp_comm_per_layer_s > e.compute_per_layer_s;
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
  e.memory = EstimateMemory(shard_, *cluster_, w, options_, DraftMemoryPerGpu(w));
  e.prefill = prefill.prefill;
  e.ttft_s = prefill.ttft_s;
  e.prefill_s_per_request = prefill.s_per_request;

  // Decode: the batch split over attention-DP ranks, then into micro-batches.
  DecodeStep(w, DecodeMicroBatches(std::ceil(static_cast<double>(w.batch) / adp), l.pp), e);

  // Offline steady state: each of the batch's requests costs its prefill, and every decode
  // cycle yields one token per sequence.
  const double batch = static_cast<double>(w.batch);
  const double osl = static_cast<double>(w.output_tokens);
  const double offline_cycle = batch * e.prefill_s_per_request + osl * e.tpot_s;
  e.output_tokens_per_s = batch * osl / offline_cycle * static_cast<double>(l.Replicas());
  e.output_tokens_per_s_per_gpu = e.output_tokens_per_s / static_cast<double>(l.gpus());
  e.output_tokens_per_s_per_user = 1.0 / e.tpot_s;
  e.bound = BoundName(e.decode, comm_.tp_link(), comm_.ep_link());
  return e;
}

}  // namespace shardwise
