#include "shardwise/deploy/estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "shardwise/common/format.h"

namespace shardwise {
namespace {

// The worker's decode batch: `asked`, else the most sequences its KV cache holds within
// max_batch per attention rank.
int64_t DecodeBatch(const Pool& pool, const StepEstimate& one, std::optional<int64_t> asked) {
  if (asked) return *asked;
  return std::max<int64_t>(
      1, std::min(one.memory.max_sequences, pool.max_batch * pool.layout.AttentionDp()));
}

StatusOr<PoolEstimate> EstimatePool(const ModelSpec& model, const Pool& pool,
                                    const Workload& lengths, std::optional<int64_t> batch) {
  SW_ASSIGN_OR_RETURN(StepModel step,
                      StepModel::Create(model, pool.cluster, pool.layout, pool.perf));
  PoolEstimate e;
  e.step = std::make_shared<const StepModel>(std::move(step));
  Workload w = lengths;
  w.batch = 1;
  const PrefillEstimate prefill = e.step->EstimatePrefill(w.prompt_tokens);
  e.one = e.step->Estimate(w, prefill);
  if (!e.one.memory.Fits()) {
    return FailedPrecondition(DoesNotFitMessage(model, pool.cluster, e.one, pool.perf), "layout");
  }
  e.decode_batch = DecodeBatch(pool, e.one, batch);
  w.batch = e.decode_batch;
  e.at_batch = e.step->Estimate(w, prefill);
  if (!e.at_batch.memory.Fits()) {
    return FailedPrecondition(DoesNotFitMessage(model, pool.cluster, e.at_batch, pool.perf),
                              "batch");
  }
  const double workers = static_cast<double>(pool.workers);
  const double osl = static_cast<double>(std::max<int64_t>(1, lengths.output_tokens));
  switch (pool.role) {
    case PoolRole::kAggregated:
      e.requests_per_s = e.at_batch.output_tokens_per_s * workers / osl;
      break;
    case PoolRole::kPrefill:
      e.requests_per_s =
          PrefillWorkerRequestsPerS(*e.step, lengths.prompt_tokens, pool.perf.max_batched_tokens) *
          workers;
      break;
    case PoolRole::kDecode:
      e.requests_per_s = DecodeWorkerRequestsPerS(e.at_batch, lengths.output_tokens) * workers;
      break;
  }
  return e;
}

Status InPool(const Status& s, const Deployment& d, const Pool& pool) {
  if (s.ok() || !d.disaggregated()) return s;
  return Status(
      s.code(), fmt::format("the {} layout: {}", PoolRoleName(pool.role), s.message()),
      s.field().empty() ? std::string() : fmt::format("{}.{}", PoolRoleName(pool.role), s.field()));
}

// A cp layout on an engine that serves without context parallelism; empty otherwise.
std::string ContextParallelNote(const Layout& layout, const EngineProfile& engine) {
  if (layout.cp == 1 || engine.context_parallel) return "";
  return fmt::format(
      "{} serves without context parallelism, so {}'s cp {} is modelled as an engine with ring "
      "attention over the prompt would run it; --emit refuses it, and plan's own search leaves cp "
      "layouts out",
      engine.name, layout.ToString(), layout.cp);
}

}  // namespace

double PrefillWorkerRequestsPerS(const StepModel& step, int64_t prompt_tokens,
                                 int64_t max_batched_tokens) {
  const double prompt = static_cast<double>(prompt_tokens);
  const double budget = static_cast<double>(max_batched_tokens);
  const double prompts = prompt <= budget ? std::floor(budget / prompt) : budget / prompt;
  const double tokens = std::min(budget, prompts * prompt);
  const double iteration_s = step.PrefillIterationS(tokens, (prompt + 1) / 2);
  const Layout& l = step.layout();
  return static_cast<double>(l.AttentionDp() * l.Replicas()) * prompts / iteration_s;
}

double DecodeWorkerRequestsPerS(const StepEstimate& e, int64_t output_tokens) {
  return static_cast<double>(e.workload.batch * e.layout.Replicas()) /
         (static_cast<double>(std::max<int64_t>(1, output_tokens)) * e.tpot_s);
}

StatusOr<DeploymentEstimate> EstimateDeployment(const ModelSpec& model, const Deployment& d,
                                                const Workload& lengths,
                                                std::optional<int64_t> decode_batch) {
  DeploymentEstimate out;
  for (const Pool& pool : d.pools()) {
    // A prefill worker's batch is one prompt; only the decode pool takes the batch asked for.
    const std::optional<int64_t> batch =
        pool.role == PoolRole::kPrefill ? std::optional<int64_t>(1) : decode_batch;
    StatusOr<PoolEstimate> e = EstimatePool(model, pool, lengths, batch);
    if (!e.ok()) return InPool(e.status(), d, pool);
    out.pools.push_back(std::move(e).value());
  }
  const PoolEstimate& p = out.prefill();
  const PoolEstimate& dec = out.decode();
  out.unloaded_ttft_s = p.one.ttft_s;
  out.decode_tpot_s = dec.at_batch.tpot_s;
  // Each replica of the first pool takes its requests through one API server, which may pass
  // fewer than that pool computes.
  const Pool& first = d.pools().front();
  out.api_servers = first.Replicas();
  out.front_end_requests_per_s =
      FrontEndRequestsPerS(first.perf.engine, first.Replicas(), lengths.prompt_tokens);
  out.passed_requests_per_s = std::min(p.requests_per_s, out.front_end_requests_per_s);
  out.capacity_requests_per_s = out.passed_requests_per_s;
  if (d.disaggregated()) {
    const Pool& pp = d.prefill();
    const Pool& dp = d.decode();
    out.link = PoolLink(pp.cluster, dp.cluster, d.same_cluster(), d.gpus());
    const double prompt = static_cast<double>(lengths.prompt_tokens);
    out.transfer = EstimateKvTransfer(
        out.link, p.one.memory.kv_bytes_per_token, dec.one.memory.kv_bytes_per_token, d.transfer(),
        p.one.ttft_s / prompt, static_cast<double>(std::max<int64_t>(1, model.num_layers())));
    out.transfer_s = out.transfer.latency_s + out.transfer.exposed_s_per_token * prompt;
    out.unloaded_ttft_s += out.transfer_s;
    out.capacity_requests_per_s = std::min(out.passed_requests_per_s, dec.requests_per_s);
    const double per_decode_worker = dec.requests_per_s / static_cast<double>(dp.workers);
    out.balanced_decode_workers = out.passed_requests_per_s / per_decode_worker;
  }
  return out;
}

double FrontEndRequestsPerS(const EngineProfile& engine, int64_t replicas, int64_t prompt_tokens) {
  // It passes at most one prompt per tokenizing time.
  const double tokenize_s = engine.tokenize_s_per_token * static_cast<double>(prompt_tokens);
  return tokenize_s > 0 ? static_cast<double>(replicas) / tokenize_s
                        : std::numeric_limits<double>::infinity();
}

std::vector<std::string> FormatNotes(const GpuSpec& gpu, const PerfOptions& o) {
  std::vector<std::string> notes;
  const Dtype compute = gpu.ComputeDtypeFor(o.weight_dtype);
  // Multiplied in wider values than stored (MXFP4 on FP4 tensor cores is not: only the scales
  // differ).
  if (ValueBits(compute) > ValueBits(o.weight_dtype)) {
    notes.push_back(fmt::format(
        "{} has no {} tensor cores: {} weights are weight-only quantisation there (stored in {}, "
        "multiplied in {}), so they save memory and HBM traffic but not FLOPs",
        gpu.name, DtypeName(o.weight_dtype), DtypeName(o.weight_dtype), DtypeName(o.weight_dtype),
        DtypeName(compute)));
  }
  return notes;
}

void AddDeploymentNotes(const Deployment& d, std::vector<std::string>& notes) {
  auto add = [&](std::string note) {
    if (!note.empty() && std::find(notes.begin(), notes.end(), note) == notes.end()) {
      notes.push_back(std::move(note));
    }
  };
  for (const Pool& pool : d.pools()) {
    for (std::string& note : FormatNotes(pool.cluster.gpu, pool.perf)) add(std::move(note));
    add(ContextParallelNote(pool.layout, pool.perf.engine));
  }
}

std::string WeightFormatName(const PerfOptions& o) {
  return o.weight_formats ? o.weight_formats->Describe() : std::string(DtypeName(o.weight_dtype));
}

std::string DoesNotFitMessage(const ModelSpec& model, const ClusterSpec& cluster,
                              const StepEstimate& e, const PerfOptions& o) {
  const MemoryPerGpu& m = e.memory;
  const std::string what = fmt::format(
      "{} of weights, {} of KV ({} x {} tokens) and {} of activations and buffers per GPU",
      FormatBytes(m.weight_bytes), FormatBytes(m.kv_bytes),
      Counted(static_cast<double>(e.workload.batch), "sequence", "sequences"),
      e.workload.PeakContext(), FormatBytes(m.activation_bytes + m.comm_buffer_bytes));
  const std::string rule =
      o.engine.kv_rule == KvMemoryRule::kFractionOfTotal
          ? fmt::format("{} x {:g}", FormatBytes(m.hbm_bytes), o.gpu_memory_utilization)
          : fmt::format(
                "{} less the runtime reserve; {} gives KV {:g} of what is free after "
                "weights",
                FormatBytes(m.hbm_bytes), o.engine.name, o.gpu_memory_utilization);
  return fmt::format(
      "{} ({} weights) does not fit with {}: it needs {}, but one {} offers {} ({}); short "
      "by {}. Use more TP or PP, fewer sequences at once or shorter requests, {}or a larger "
      "GPU",
      model.name, WeightFormatName(o), e.layout.ToString(), what, cluster.gpu.name,
      FormatBytes(m.usable_bytes), rule, FormatBytes(m.ShortfallBytes()),
      BytesPerElement(o.weight_dtype) > 1 ? "`dtype` fp8, " : "");
}

}  // namespace shardwise
