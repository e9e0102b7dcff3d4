#include "perf_options.h"

#include <fmt/format.h>

#include <cstdio>

#include "shardwise/common/format.h"
#include "shardwise/perf/expert_loads.h"
#include "shardwise/perf/moe.h"

namespace shardwise::cli {

void PerfCliOptions::AddTo(CLI::App* sub) {
  sub->add_option("--dtype", dtype,
                  "Weight format of every module: bf16, fp8, int4, mxfp4, fp4 (default: the "
                  "checkpoint's own, per module, from its quantization config)");
  sub->add_option("--kv-dtype", kv_dtype,
                  "KV-cache format (default: fp8 with fp8 weights, else bf16)");
  sub->add_option("--engine", engine,
                  "Serving engine profile: trtllm, vllm, sglang, a versioned name (trtllm-1.0) "
                  "or a profile .json (see data/engines/)");
  gpu_memory_utilization_option = sub->add_option(
      "--gpu-memory-utilization", gpu_memory_utilization,
      "Memory fraction for weights + KV (default: the engine's; TensorRT-LLM applies it to the "
      "memory free after weights)");
  sub->add_option("--expert-imbalance", expert_imbalance,
                  "Busiest expert rank's load over the mean (default: statistical estimate)");
  sub->add_option("--redundant-experts", redundant_experts,
                  "Extra expert copies per EP group (DeepSeek-V3 decode: 32 over ep144); each EP "
                  "rank holds (routed + redundant) / ep experts, hot experts copied first "
                  "(default 0; layouts with ep > 1)");
  expert_skew_option = sub->add_option(
      "--expert-skew", expert_skew,
      "Routing skew as a Zipf exponent s >= 0: expert i (hottest first) draws (i+1)^-s of the "
      "tokens; the busiest EP rank's load after EPLB-style placement sets expert compute and "
      "all-to-all bytes (default: uniform routing)");
  sub->add_option("--expert-load", expert_load_file,
                  "Measured per-expert loads instead of --expert-skew: a JSON array of the routed "
                  "experts' token counts, or an array of such arrays, one per MoE layer (as "
                  "DeepSeek's EPLB takes them)");
  sub->add_option("--shared-experts", shared_experts,
                  "replicated: each GPU computes the shared expert for its own tokens (default); "
                  "routed: the shared expert sits in routed experts' slots of the EP group and "
                  "every token is sent to it, as DeepSeek-V3 decodes (EP layouts)")
      ->capture_default_str();
  sub->add_option("--capacity-factor", capacity_factor,
                  "MoE: each expert computes at most F x its mean share of the step's (token, "
                  "expert) pairs and drops the rest (GShard capacity; default: no limit)");
  ep_exchange_options.push_back(
      sub->add_option("--ep-algorithm", ep_algorithm,
                      "EP dispatch/combine kernels: flat (NCCL all-to-all, the engines' default), "
                      "node-dedup (DeepEP normal: RDMA once per node, NVLink fan-out; prefill), "
                      "low-latency (DeepEP low-latency: one send per expert, CUDA-graph safe), or "
                      "auto (the fastest each phase allows); plan searches these unless one of "
                      "--ep-algorithm, --ep-dispatch-dtype, --overlap is given")
          ->capture_default_str());
  ep_exchange_options.push_back(
      sub->add_option("--ep-dispatch-dtype", ep_dispatch_dtype,
                      "Format tokens are dispatched in: fp8 (DeepEP, with per-128 scales) or bf16; "
                      "combine stays in bf16 (default: bf16)"));
  ep_exchange_options.push_back(
      sub->add_option("--overlap", overlap,
                      "tbo: two micro-batches per step, one's EP exchange hidden behind the "
                      "other's compute (DeepSeek, SGLang --enable-two-batch-overlap); none "
                      "(default)")
          ->capture_default_str());
  speculative.AddTo(sub);
  sub->add_option("--prefix-hit-rate", prefix_hit_rate,
                  "Fraction of each prompt's tokens already in the prefix cache, in [0, 1]: "
                  "prefill computes only the rest, attending to the cached KV (default 0)");
  max_batched_tokens_option =
      sub->add_option("--max-batched-tokens", max_batched_tokens,
                      "Tokens per iteration, chunked prefill (default: the engine's)");
}

StatusOr<PerfOptions> PerfCliOptions::Build(const ModelSpec& model) const {
  PerfOptions o;
  if (dtype.empty()) {
    // GEMMs run in the format most weights are in; each module's bytes are its own.
    o.weight_dtype = model.native_dtype;
    o.weight_formats = model.native_formats;
  } else {
    SW_ASSIGN_OR_RETURN(o.weight_dtype, ParseDtype(dtype));
  }
  if (kv_dtype.empty()) {
    o.kv_dtype = o.weight_dtype == Dtype::kFp8 ? Dtype::kFp8 : Dtype::kBf16;
  } else {
    SW_ASSIGN_OR_RETURN(o.kv_dtype, ParseDtype(kv_dtype));
  }
  if (!(gpu_memory_utilization > 0 && gpu_memory_utilization <= 1)) {
    return Error(fmt::format("--gpu-memory-utilization must be in (0, 1], got {:g}",
                             gpu_memory_utilization));
  }
  if (expert_imbalance != 0 && !(expert_imbalance >= 1 && expert_imbalance <= 100)) {
    return Error(
        fmt::format("--expert-imbalance must be between 1 and 100, got {:g}", expert_imbalance));
  }
  if (redundant_experts < 0 || redundant_experts > 1'000'000) {
    return Error(fmt::format("--redundant-experts must be between 0 and 1,000,000, got {}",
                             redundant_experts));
  }
  if (redundant_experts > 0 && !model.is_moe()) {
    return Error(
        fmt::format("--redundant-experts ({}) needs a mixture-of-experts model; {} is "
                    "dense",
                    redundant_experts, model.name));
  }
  const bool user_skew = expert_skew_option && *expert_skew_option;
  if (user_skew && !(expert_skew >= 0 && expert_skew <= 10)) {
    return Error(fmt::format(
        "--expert-skew is a Zipf exponent between 0 (uniform) and 10, got {:g}", expert_skew));
  }
  if (max_batched_tokens < 1 || max_batched_tokens > 10'000'000) {
    return Error("--max-batched-tokens must be between 1 and 10,000,000");
  }
  SW_ASSIGN_OR_RETURN(o.engine, LoadEngine(engine));
  const bool user_fraction = gpu_memory_utilization_option && *gpu_memory_utilization_option;
  const bool user_tokens = max_batched_tokens_option && *max_batched_tokens_option;
  o.gpu_memory_utilization = user_fraction ? gpu_memory_utilization : o.engine.memory_fraction;
  o.expert_imbalance = expert_imbalance;
  o.redundant_experts = redundant_experts;
  if (user_skew) o.expert_skew = expert_skew;
  SW_ASSIGN_OR_RETURN(o.speculative, speculative.Build(model));
  if (!(prefix_hit_rate >= 0 && prefix_hit_rate <= 1)) {
    return Error(
        fmt::format("--prefix-hit-rate is the fraction of prompt tokens found in the "
                    "prefix cache, in [0, 1]; got {:g}",
                    prefix_hit_rate));
  }
  o.prefix_hit_rate = prefix_hit_rate;
  SW_RETURN_IF_ERROR(BuildMoeOptions(model, o));
  o.max_batched_tokens =
      user_tokens ? max_batched_tokens : static_cast<int64_t>(o.engine.max_batched_tokens);
  return o;
}

Status PerfCliOptions::BuildMoeOptions(const ModelSpec& model, PerfOptions& o) const {
  const bool user_skew = expert_skew_option && *expert_skew_option;
  if (!expert_load_file.empty()) {
    if (user_skew) return Error("give --expert-skew or --expert-load, not both");
    if (!model.is_moe()) {
      return Error(
          fmt::format("--expert-load needs a mixture-of-experts model; {} is dense", model.name));
    }
    SW_ASSIGN_OR_RETURN(o.expert_loads, LoadExpertLoads(expert_load_file, model.moe.num_experts));
  }
  if (capacity_factor) {
    if (!(*capacity_factor >= 1 && *capacity_factor <= 1000)) {
      return Error(fmt::format(
          "--capacity-factor must be between 1 (every expert at most its mean share) and "
          "1000, got {:g}",
          *capacity_factor));
    }
    if (!model.is_moe()) {
      return Error(fmt::format("--capacity-factor needs a mixture-of-experts model; {} is dense",
                               model.name));
    }
    o.capacity_factor = *capacity_factor;
  }
  if (shared_experts != "replicated" && shared_experts != "routed") {
    return Error(
        fmt::format("--shared-experts must be replicated or routed, got '{}'", shared_experts));
  }
  o.shared_experts_routed = shared_experts == "routed";
  if (o.shared_experts_routed) SW_RETURN_IF_ERROR(SharedExpertsAsRouted(model).status());
  SW_ASSIGN_OR_RETURN(o.ep.algorithm, ParseEpAlgorithm(ep_algorithm));
  o.ep.dispatch_dtype = o.activation_dtype;
  if (!ep_dispatch_dtype.empty()) {
    SW_ASSIGN_OR_RETURN(o.ep.dispatch_dtype, ParseDtype(ep_dispatch_dtype));
    if (o.ep.dispatch_dtype != Dtype::kFp8 && o.ep.dispatch_dtype != Dtype::kBf16) {
      return Error(
          fmt::format("--ep-dispatch-dtype must be fp8 or bf16, got '{}'", ep_dispatch_dtype));
    }
  }
  if (overlap != "tbo" && overlap != "none") {
    return Error(fmt::format("--overlap must be tbo or none, got '{}'", overlap));
  }
  o.ep.two_batch_overlap = overlap == "tbo";
  return Status();
}

bool PerfCliOptions::UserChoseEpExchange() const {
  for (const CLI::Option* option : ep_exchange_options) {
    if (option && *option) return true;
  }
  return false;
}

nlohmann::json EpSettingJson(const EpSetting& ep) {
  return {{"algorithm", std::string(EpAlgorithmName(ep.algorithm))},
          {"dispatch_dtype", std::string(DtypeName(ep.dispatch_dtype))},
          {"two_batch_overlap", ep.two_batch_overlap}};
}

Status CheckRedundantExperts(const Layout& layout, const PerfOptions& o) {
  if (o.redundant_experts > 0 && layout.ep == 1) {
    return Error(
        fmt::format("--redundant-experts ({}) places expert copies over an EP group, "
                    "but {} has none; use a layout with ep > 1 (e.g. dp8ep8)",
                    o.redundant_experts, layout.ToString()));
  }
  return Status();
}

nlohmann::json MoeJson(const ModelSpec& given, const Layout& layout, const PerfOptions& o) {
  if (!given.is_moe()) return nullptr;
  const StatusOr<ModelSpec> routed = SharedExpertsAsRouted(given);
  const ModelSpec& model =
      o.shared_experts_routed && layout.ep > 1 && routed.ok() ? *routed : given;
  const ModelShard s = ShardModel(model, layout, o);
  return {{"routed_experts", model.moe.num_experts},
          {"redundant_experts", layout.ep > 1 ? o.redundant_experts : 0},
          {"expert_skew", o.expert_skew ? nlohmann::json(*o.expert_skew) : nlohmann::json(nullptr)},
          {"experts_per_gpu", s.experts_per_gpu},
          {"expert_placement_imbalance", s.expert_placement_imbalance},
          {"shared_experts", o.shared_experts_routed ? "routed" : "replicated"}};
}

std::vector<std::string> FormatNotes(const GpuSpec& gpu, const PerfOptions& o) {
  std::vector<std::string> notes;
  const Dtype compute = gpu.ComputeDtypeFor(o.weight_dtype);
  if (compute != o.weight_dtype && BytesPerElement(compute) > BytesPerElement(o.weight_dtype)) {
    notes.push_back(fmt::format(
        "{} has no {} tensor cores: {} weights are weight-only quantisation there (stored in {}, "
        "multiplied in {}), so they save memory and HBM traffic but not FLOPs",
        gpu.name, DtypeName(o.weight_dtype), DtypeName(o.weight_dtype), DtypeName(o.weight_dtype),
        DtypeName(compute)));
  }
  return notes;
}

void PrintFormatNotes(const GpuSpec& gpu, const PerfOptions& o) {
  for (const std::string& note : FormatNotes(gpu, o)) {
    std::fprintf(stderr, "shardwise: note: %s\n", note.c_str());
  }
}

std::string WeightFormatName(const PerfOptions& o) {
  return o.weight_formats ? o.weight_formats->Describe() : std::string(DtypeName(o.weight_dtype));
}

std::string DoesNotFitMessage(const ModelSpec& model, const ClusterSpec& cluster,
                              const StepEstimate& e, const PerfOptions& o) {
  const MemoryPerGpu& m = e.memory;
  const std::string what = fmt::format(
      "{} of weights, {} of KV ({} sequences x {} tokens) and {} of activations and buffers per "
      "GPU",
      FormatBytes(m.weight_bytes), FormatBytes(m.kv_bytes), e.workload.batch,
      e.workload.PeakContext(), FormatBytes(m.activation_bytes + m.comm_buffer_bytes));
  const std::string rule =
      o.engine.kv_rule == KvMemoryRule::kFractionOfTotal
          ? fmt::format("{} x {:g}", FormatBytes(m.hbm_bytes), o.gpu_memory_utilization)
          : fmt::format(
                "{} less the runtime reserve; {} gives KV {:g} of what is free after "
                "weights",
                FormatBytes(m.hbm_bytes), o.engine.name, o.gpu_memory_utilization);
  return fmt::format(
      "{} ({} weights) does not fit with {}: it needs {}, but a {} offers {} ({}); short "
      "by {}. Use more TP or PP, a smaller --batch or --context, {}or a larger GPU",
      model.name, WeightFormatName(o), e.layout.ToString(), what, cluster.gpu.name,
      FormatBytes(m.usable_bytes), rule, FormatBytes(m.ShortfallBytes()),
      BytesPerElement(o.weight_dtype) > 1 ? "--dtype fp8, " : "");
}

}  // namespace shardwise::cli
