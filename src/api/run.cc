#include "shardwise/api/run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <thread>

#include "shardwise/api/gpu_target.h"
#include "shardwise/api/run_guards.h"
#include "shardwise/hw/host_cluster.h"
#include "shardwise/model/catalog.h"
#include "shardwise/perf/schedule.h"
#include "shardwise/perf/step.h"
#include "shardwise/plan/saved_plan.h"
#include "shardwise/runtime/comm/registry.h"
#include "shardwise/runtime/comm/thread_comm.h"
#include "shardwise/runtime/compute_registry.h"
#include "shardwise/runtime/host_profile.h"

namespace shardwise::api {
namespace {

// The perf model's inputs for this host, from its measured profile and the run's weight storage.
HostRates HostRatesFor(const HostProfile& p, WeightStorage storage) {
  return {p.cores,
          p.memory_bytes,
          p.GemmFlopsPerS(storage),
          p.read_bytes_per_s,
          p.read_bytes_per_s_all_cores,
          p.allreduce_latency_s,
          p.allreduce_bytes_per_s};
}

// What a CPU run keeps in its weight storage (forward/stage_weights.h): the projections, experts,
// embedding and LM head (MLA's projections stay fp32); the CPU computes in fp32 throughout.
WeightFormats CpuWeightFormats(const ModelSpec& m, WeightStorage storage) {
  WeightFormats f = WeightFormats::Uniform(Dtype::kFp32);
  const WeightFormat stored{Dtype::kFp32, WeightStorageBytes(storage)};
  for (WeightModule module :
       {WeightModule::kEmbedding, WeightModule::kDenseFfn, WeightModule::kRoutedExperts,
        WeightModule::kSharedExperts, WeightModule::kLmHead}) {
    f.For(module) = stored;
  }
  if (!m.mla) f.For(WeightModule::kMixer) = stored;
  return f;
}

StatusOr<RunPrediction> Predict(const RunConfig& c, const ClusterSpec& cluster, Dtype dtype,
                                std::optional<WeightFormats> formats = std::nullopt) {
  PerfOptions perf;
  perf.weight_dtype = perf.kv_dtype = perf.activation_dtype = dtype;
  perf.weight_formats = formats;
  perf.redundant_experts = c.redundant_experts;  // the same expert slots as the run
  SW_ASSIGN_OR_RETURN(StepModel step, StepModel::Create(c.model, cluster, c.layout, perf));
  Workload w;
  w.batch = c.batch / c.layout.Replicas();
  w.prompt_tokens = c.prompt_tokens;
  w.output_tokens = c.generate_tokens;
  w.decode_context_tokens = c.prompt_tokens + c.generate_tokens / 2;
  const StepEstimate e = step.Estimate(w);
  // The run prefills each replica's sequences back to back; decode takes G - 1 steps.
  return RunPrediction{e.ttft_s * static_cast<double>(w.batch),
                       e.tpot_s * static_cast<double>(c.generate_tokens - 1)};
}

// The run's configuration from the request, checked before any rank starts.
StatusOr<RunConfig> ConfigFor(const RunRequest& r) {
  std::string model_name = r.model, layout_name = r.layout;
  if (!r.plan.empty()) {
    SW_ASSIGN_OR_RETURN(SavedPlanChoice saved, LoadSavedPlan(r.plan));
    model_name = saved.model;
    layout_name = saved.layout;
  }
  RunConfig c;
  SW_ASSIGN_OR_RETURN(c.model, LoadModel(model_name));
  if (r.layers < 0 || r.layers > c.model.num_layers()) {
    return FieldError("layers", fmt::format("`layers` must be between 1 and {}'s {} layers",
                                            c.model.name, c.model.num_layers()));
  }
  if (r.layers > 0) c.model.layers.resize(static_cast<size_t>(r.layers));
  StatusOr<Layout> layout = ParseLayout(layout_name);
  if (!layout.ok()) return layout.status().WithField("layout");
  c.layout = *layout;
  c.batch = r.batch;
  c.prompt_tokens = r.prompt_len;
  c.generate_tokens = r.gen;
  c.seed = r.seed;
  c.weights_dir = r.weights;
  c.redundant_experts = r.redundant_experts;
  c.micro_batches = r.micro_batches;
  StatusOr<WeightStorage> storage = ParseWeightStorage(r.dtype);
  if (!storage.ok()) return storage.status().WithField("dtype");
  c.kernels.weights = *storage;
  c.kernels.threads = r.threads;
  if (r.capacity_factor) {
    if (!(*r.capacity_factor > 0)) {
      return FieldError("capacity_factor",
                        fmt::format("`capacity_factor` ({}) must be above 0 (1.0 gives each "
                                    "expert its even share of the tokens); leave it out for no "
                                    "limit",
                                    *r.capacity_factor));
    }
    c.capacity_factor = *r.capacity_factor;
  }
  c.device_compute = !r.device_compute.empty()                    ? r.device_compute
                     : r.backend == "cuda" || r.backend == "nccl" ? "cuda"
                                                                  : "cpu";
  c.on_step = r.on_step;
  SW_RETURN_IF_ERROR(CheckRunConfig(c));
  if (!(r.timeout_s > 0 && r.timeout_s <= 86400)) {
    return FieldError("timeout_s", "`timeout_s` must be in (0, 86400]");
  }
  SW_RETURN_IF_ERROR(CheckRankCount(r.backend, c.layout.gpus()));
  SW_RETURN_IF_ERROR(CheckRunFitsHost(c, r.backend, !r.no_check));
  return c;
}

// The unsharded reference: the same model, seed and prompts on one CPU rank.
StatusOr<ReferenceComparison> CheckAgainstReference(const RunConfig& c, const RunResult& run,
                                                    double timeout_s, double tolerance) {
  RunConfig ref = c;
  ref.layout = Layout{};
  ref.redundant_experts = 0;  // replicas hold the same weights; capacity drops the same pairs
  ref.device_compute = "cpu";
  ref.on_step = nullptr;
  RunResult reference;
  SW_RETURN_IF_ERROR(RunOnThreads(1, timeout_s, [&](Communicator& w) -> Status {
    SW_ASSIGN_OR_RETURN(reference, RunRank(ref, w));
    return Status();
  }));
  const auto not_finite = [](float v) { return !std::isfinite(v); };
  if (std::any_of(run.logits.begin(), run.logits.end(), not_finite) ||
      std::any_of(reference.logits.begin(), reference.logits.end(), not_finite)) {
    return RuntimeFailure("the logits are not finite (NaN or infinity); the check cannot pass");
  }
  return CompareWithReference(reference, run, tolerance);
}

// The step model's prediction for this machine: the GPU the ranks compute on, or this CPU from
// its host profile (`host`, read from `profile_path`).
Status AddPrediction(const HostProfile& host, const std::string& profile_path, RunReport& rep) {
  const RunConfig& c = rep.config;
  const int ranks = static_cast<int>(c.layout.gpus());
  if (c.device_compute == "cuda") {
    const GpuTarget gpu = FindGpuTarget(ranks);
    rep.predicted_for = fmt::format("GPU: {}; {}", gpu.driver_name, gpu.note);
    if (gpu.cluster) {
      SW_ASSIGN_OR_RETURN(rep.predicted, Predict(c, *gpu.cluster, Dtype::kBf16));
    }
    return Status();
  }
  rep.predicted_for = "from the host profile in " + profile_path;
  // Ranks computing at once: a stage's ranks times the micro-batches in flight (at most pp).
  const int concurrent = static_cast<int>(c.layout.gpus() / c.layout.pp *
                                          std::min<int64_t>(c.layout.pp, rep.result.micro_batches));
  const ClusterSpec cluster =
      HostCluster(HostRatesFor(host, c.kernels.weights), ranks, concurrent, c.kernels.threads);
  SW_ASSIGN_OR_RETURN(rep.predicted, Predict(c, cluster, Dtype::kFp32,
                                             CpuWeightFormats(c.model, c.kernels.weights)));
  return Status();
}

std::optional<std::string> OversubscriptionNote(const RunRequest& r, const RunConfig& c) {
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  const int64_t threads = c.layout.gpus() * c.kernels.threads;
  if (r.backend != "threads" || threads <= cores) return std::nullopt;
  return fmt::format(
      "{} threads ({} ranks x {}) on {} cores: the machine is oversubscribed, so threads take "
      "turns on the cores and each runs at about {}/{} of a core (the prediction assumes the "
      "same)",
      threads, c.layout.gpus(), c.kernels.threads, cores, cores, threads);
}

}  // namespace

StatusOr<RunReport> Run(const RunRequest& r) {
  SW_RETURN_IF_ERROR(CheckLauncher(r.backend));
  RunReport rep;
  rep.backend = r.backend;
  SW_ASSIGN_OR_RETURN(rep.config, ConfigFor(r));
  const RunConfig& c = rep.config;
  // A CPU run's host profile is measured (or read) before the ranks start, so a bad profile
  // fails fast and the measurement does not compete with the run for the cores.
  HostProfile host;
  std::string profile_path;
  if (c.device_compute != "cuda") {
    SW_ASSIGN_OR_RETURN(host, ResolveHostProfile(r.host_profile, profile_path));
  }
  if (auto note = OversubscriptionNote(r, c)) rep.notes.push_back(*note);

  std::mutex mu;
  SW_RETURN_IF_ERROR(LaunchRanks(r.backend, static_cast<int>(c.layout.gpus()), r.timeout_s,
                                 [&](Communicator& world) -> Status {
                                   SW_ASSIGN_OR_RETURN(RunResult res, RunRank(c, world));
                                   std::lock_guard<std::mutex> lock(mu);
                                   if (world.rank() == 0) {
                                     rep.result = std::move(res);
                                     rep.reporting = true;
                                   }
                                   return Status();
                                 }));
  if (!rep.reporting) return rep;  // an MPI rank other than 0: rank 0 reports

  rep.tolerance = ReferenceTolerance(c.device_compute, c.kernels.weights);
  if (!r.no_check) {
    SW_ASSIGN_OR_RETURN(rep.check,
                        CheckAgainstReference(c, rep.result, r.timeout_s, rep.tolerance));
  }
  SW_RETURN_IF_ERROR(AddPrediction(host, profile_path, rep));
  // The pipeline's bubble as the schedule model gives it for equal stages: fill and drain in
  // prefill, the decode cycle's idle share when fewer micro-batches than stages are in flight.
  const double micro = static_cast<double>(rep.result.micro_batches);
  rep.model_prefill_bubble = FillDrainBubbleFraction(c.layout.pp, micro);
  const PipelineCycle cycle = DecodeCycle(static_cast<double>(c.layout.pp), 1.0, micro);
  rep.model_decode_bubble = cycle.bubble_s / cycle.cycle_s;
  const double decode_tokens = static_cast<double>(c.batch * (c.generate_tokens - 1));
  rep.decode_tokens_per_s =
      rep.result.decode.wall_s > 0 ? decode_tokens / rep.result.decode.wall_s : 0;
  return rep;
}

}  // namespace shardwise::api
