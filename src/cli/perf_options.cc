#include "perf_options.h"

#include <fmt/format.h>

#include "shardwise/common/format.h"

namespace shardwise::cli {

void PerfCliOptions::AddTo(CLI::App* sub) {
  sub->add_option("--dtype", dtype,
                  "Weight format of every module: bf16, fp8, int4, mxfp4, fp4 (default: the "
                  "checkpoint's own, per module, from its quantization config)");
  sub->add_option("--kv-dtype", kv_dtype,
                  "KV-cache format (default: fp8 with fp8 weights, else bf16)");
  sub->add_option("--gpu-memory-utilization", gpu_memory_utilization,
                  "Fraction of HBM the engine may use; the rest is a runtime reserve")
      ->capture_default_str();
  sub->add_option("--expert-imbalance", expert_imbalance,
                  "Busiest expert rank's load over the mean (default: statistical estimate)");
  sub->add_option("--max-batched-tokens", max_batched_tokens, "Tokens per prefill chunk")
      ->capture_default_str();
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
  if (max_batched_tokens < 1 || max_batched_tokens > 10'000'000) {
    return Error("--max-batched-tokens must be between 1 and 10,000,000");
  }
  o.gpu_memory_utilization = gpu_memory_utilization;
  o.expert_imbalance = expert_imbalance;
  o.max_batched_tokens = max_batched_tokens;
  return o;
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
  return fmt::format(
      "{} ({} weights) does not fit with {}: it needs {}, but a {} offers {} ({} x {:g}); short "
      "by {}. Use more TP or PP, a smaller --batch or --context, {}or a larger GPU",
      model.name, WeightFormatName(o), e.layout.ToString(), what, cluster.gpu.name,
      FormatBytes(m.usable_bytes), FormatBytes(m.hbm_bytes), o.gpu_memory_utilization,
      FormatBytes(m.ShortfallBytes()), BytesPerElement(o.weight_dtype) > 1 ? "--dtype fp8, " : "");
}

}  // namespace shardwise::cli
