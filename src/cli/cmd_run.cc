// `shardwise run`: execute a sharded forward pass for real, check it against the unsharded
// reference, and print where the time went next to the perf model's prediction.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "command.h"
#include "gpu_target.h"
#include "output_guard.h"
#include "run_guards.h"
#include "shardwise/common/format.h"
#include "shardwise/common/json_fields.h"
#include "shardwise/hw/host_cluster.h"
#include "shardwise/model/catalog.h"
#include "shardwise/perf/schedule.h"
#include "shardwise/perf/step.h"
#include "shardwise/plan/saved_plan.h"
#include "shardwise/report/table.h"
#include "shardwise/runtime/comm/registry.h"
#include "shardwise/runtime/comm/thread_comm.h"
#include "shardwise/runtime/compute_registry.h"
#include "shardwise/runtime/host_profile.h"
#include "shardwise/runtime/kernels.h"
#include "shardwise/runtime/npy.h"
#include "shardwise/runtime/reference_check.h"
#include "shardwise/runtime/runner.h"
#include "validators.h"

namespace shardwise::cli {
namespace {

struct RunOptions {
  std::string model = "tiny-dense";
  std::string layout = "tp2";
  std::string backend = "threads";
  std::string device_compute;  // empty: cuda for --backend cuda/nccl, else cpu
  int64_t prompt_len = 16;
  int64_t gen = 8;
  int64_t batch = 2;
  uint64_t seed = 1;
  std::string weights;
  std::string dump_logits;
  std::string host_profile;
  std::string plan;  // a `shardwise plan --json` file: run its model with its best layout
  double timeout_s = 60;
  int64_t redundant_experts = 0;
  int64_t micro_batches = 0;
  std::optional<double> capacity_factor;
  int64_t layers = 0;  // 0: all of the model's layers
  std::string dtype = "fp32";
  int threads = 1;
  bool force = false;
  bool no_check = false;
  bool json = false;
};

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

// What a CPU run keeps in its weight storage (rank_model.h): the projections, experts,
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

struct Prediction {
  double prefill_s = 0;
  double decode_s = 0;
};

StatusOr<Prediction> Predict(const RunConfig& c, const ClusterSpec& cluster, Dtype dtype,
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
  return Prediction{e.ttft_s * static_cast<double>(w.batch),
                    e.tpot_s * static_cast<double>(c.generate_tokens - 1)};
}

nlohmann::json PhaseJson(const PhaseTime& p) {
  nlohmann::json comm = nlohmann::json::object();
  for (int i = 0; i < kCommOpCount; ++i) {
    const CommOpStats& s = p.comm.ops[i];
    if (s.calls == 0) continue;
    comm[std::string(CommOpName(static_cast<CommOp>(i)))] = {{"calls", s.calls},
                                                             {"bytes", s.bytes},
                                                             {"seconds", s.seconds},
                                                             {"wait_s", s.wait_seconds},
                                                             {"wire_s", s.wire_seconds()}};
  }
  return {{"wall_s", p.wall_s},
          {"compute_s", std::max(0.0, p.wall_s - p.comm.TotalSeconds())},
          {"waiting_s", p.comm.TotalWaitSeconds()},
          {"comm", comm}};
}

// Rank 0's progress on stderr once the run has taken more than two seconds (terminals only,
// so logs and captured output stay clean).
std::function<void(int64_t, int64_t)> ProgressPrinter() {
  if (!isatty(STDERR_FILENO)) return nullptr;
  const auto start = std::chrono::steady_clock::now();
  return [start](int64_t step, int64_t steps) {
    const double elapsed_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed_s < 2.0) return;
    std::fprintf(stderr, "\rrun: token %lld of %lld (%.0f s)%s", static_cast<long long>(step),
                 static_cast<long long>(steps), elapsed_s, step == steps ? "\n" : "");
  };
}

Status RunRun(const RunOptions& o) {
  SW_RETURN_IF_ERROR(CheckLauncher(o.backend));
  std::string model_name = o.model, layout_name = o.layout;
  if (!o.plan.empty()) {
    SW_ASSIGN_OR_RETURN(SavedPlanChoice saved, LoadSavedPlan(o.plan));
    model_name = saved.model;
    layout_name = saved.layout;
  }
  RunConfig c;
  SW_ASSIGN_OR_RETURN(c.model, LoadModel(model_name));
  if (o.layers < 0 || o.layers > c.model.num_layers()) {
    return Error(fmt::format("--layers must be between 1 and {}'s {} layers", c.model.name,
                             c.model.num_layers()));
  }
  if (o.layers > 0) c.model.layers.resize(static_cast<size_t>(o.layers));
  SW_ASSIGN_OR_RETURN(c.layout, ParseLayout(layout_name));
  c.batch = o.batch;
  c.prompt_tokens = o.prompt_len;
  c.generate_tokens = o.gen;
  c.seed = o.seed;
  c.weights_dir = o.weights;
  c.redundant_experts = o.redundant_experts;
  c.micro_batches = o.micro_batches;
  SW_ASSIGN_OR_RETURN(c.kernels.weights, ParseWeightStorage(o.dtype));
  c.kernels.threads = o.threads;
  if (o.capacity_factor) {
    if (!(*o.capacity_factor > 0)) {
      return Error(
          fmt::format("--capacity-factor ({}) must be above 0 (1.0 gives each expert "
                      "its even share of the tokens); leave it out for no limit",
                      *o.capacity_factor));
    }
    c.capacity_factor = *o.capacity_factor;
  }
  c.device_compute = !o.device_compute.empty()                    ? o.device_compute
                     : o.backend == "cuda" || o.backend == "nccl" ? "cuda"
                                                                  : "cpu";
  SW_RETURN_IF_ERROR(CheckRunConfig(c));
  if (!(o.timeout_s > 0 && o.timeout_s <= 86400)) return Error("--timeout-s must be in (0, 86400]");
  SW_RETURN_IF_ERROR(CheckRankCount(o.backend, c.layout.gpus()));
  SW_RETURN_IF_ERROR(CheckRunFitsHost(c, o.backend, !o.no_check));
  if (!o.dump_logits.empty()) {
    SW_RETURN_IF_ERROR(CheckOutputPath(
        o.dump_logits, o.force, "logits .npy file",
        [](const std::string& content) { return content.starts_with("\x93NUMPY"); }));
  }
  // The perf model's prediction for this machine: its CPU (the host profile is measured once)
  // or the GPU the ranks compute on.
  const bool on_gpu = c.device_compute == "cuda";
  std::string profile_path;
  HostProfile host;
  if (!on_gpu) {
    SW_ASSIGN_OR_RETURN(host, ResolveHostProfile(o.host_profile, profile_path));
  }
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  const int64_t threads = c.layout.gpus() * c.kernels.threads;
  if (o.backend == "threads" && threads > cores) {
    std::fprintf(stderr,
                 "shardwise: note: %lld threads (%lld ranks x %d) on %lld cores: the machine is "
                 "oversubscribed, so threads take turns on the cores and each runs at about "
                 "%lld/%lld of a core (the prediction assumes the same)\n",
                 static_cast<long long>(threads), static_cast<long long>(c.layout.gpus()),
                 c.kernels.threads, static_cast<long long>(cores), static_cast<long long>(cores),
                 static_cast<long long>(threads));
  }
  c.on_step = ProgressPrinter();

  std::mutex mu;
  RunResult result;
  bool have = false;
  const Status run = LaunchRanks(o.backend, static_cast<int>(c.layout.gpus()), o.timeout_s,
                                 [&](Communicator& world) -> Status {
                                   SW_ASSIGN_OR_RETURN(RunResult r, RunRank(c, world));
                                   std::lock_guard<std::mutex> lock(mu);
                                   if (world.rank() == 0) {
                                     result = std::move(r);
                                     have = true;
                                   }
                                   return Status();
                                 });
  SW_RETURN_IF_ERROR(run);
  if (!have) return Status();  // an MPI rank other than 0: rank 0 reports

  // The unsharded reference: the same model, seed and prompts on one rank.
  ReferenceComparison check;
  if (!o.no_check) {
    RunConfig ref = c;
    ref.layout = Layout{};
    ref.redundant_experts = 0;  // replicas hold the same weights; capacity drops the same pairs
    ref.device_compute = "cpu";
    RunResult reference;
    SW_RETURN_IF_ERROR(RunOnThreads(1, o.timeout_s, [&](Communicator& w) -> Status {
      SW_ASSIGN_OR_RETURN(reference, RunRank(ref, w));
      return Status();
    }));
    check = CompareWithReference(reference, result, ReferenceTolerance(c.device_compute));
    const auto not_finite = [](float v) { return !std::isfinite(v); };
    if (std::any_of(result.logits.begin(), result.logits.end(), not_finite) ||
        std::any_of(reference.logits.begin(), reference.logits.end(), not_finite)) {
      return RuntimeFailure("the logits are not finite (NaN or infinity); the check cannot pass");
    }
  }
  if (!o.dump_logits.empty()) {
    SW_RETURN_IF_ERROR(WriteNpy(o.dump_logits, result.logits, {c.batch, result.vocab}));
  }
  const int ranks = static_cast<int>(c.layout.gpus());
  Prediction predicted;
  std::string predicted_for = "from the host profile in " + profile_path;
  if (on_gpu) {
    const GpuTarget gpu = FindGpuTarget(ranks);
    predicted_for = fmt::format("GPU: {}; {}", gpu.driver_name, gpu.note);
    if (gpu.cluster) {
      SW_ASSIGN_OR_RETURN(predicted, Predict(c, *gpu.cluster, Dtype::kBf16));
    }
  } else {
    // Ranks computing at once: a stage's ranks times the micro-batches in flight (at most pp).
    const int concurrent = static_cast<int>(c.layout.gpus() / c.layout.pp *
                                            std::min<int64_t>(c.layout.pp, result.micro_batches));
    const ClusterSpec cluster =
        HostCluster(HostRatesFor(host, c.kernels.weights), ranks, concurrent, c.kernels.threads);
    SW_ASSIGN_OR_RETURN(
        predicted, Predict(c, cluster, Dtype::kFp32, CpuWeightFormats(c.model, c.kernels.weights)));
  }
  const double tolerance = ReferenceTolerance(c.device_compute);

  // The pipeline's bubble as the schedule model gives it for equal stages: fill and drain in
  // prefill, the decode cycle's idle share when fewer micro-batches than stages are in flight.
  const double micro = static_cast<double>(result.micro_batches);
  const double model_prefill_bubble = FillDrainBubbleFraction(c.layout.pp, micro);
  const PipelineCycle cycle = DecodeCycle(static_cast<double>(c.layout.pp), 1.0, micro);
  const double model_decode_bubble = cycle.bubble_s / cycle.cycle_s;
  const double decode_tokens = static_cast<double>(c.batch * (c.generate_tokens - 1));
  const double decode_tok_s = result.decode.wall_s > 0 ? decode_tokens / result.decode.wall_s : 0;
  if (o.json) {
    PrintJson(
        {{"model", c.model.name},
         {"layout", c.layout.ToString()},
         {"backend", o.backend},
         {"ranks", result.ranks},
         {"batch", c.batch},
         {"prompt_len", c.prompt_tokens},
         {"gen", c.generate_tokens},
         {"seed", c.seed},
         {"dtype", WeightStorageName(c.kernels.weights)},
         {"threads", c.kernels.threads},
         {"kernels", kernels::KernelIsa()},
         {"tokens", result.tokens},
         {"decode_tokens_per_s", decode_tok_s},
         {"prefill", PhaseJson(result.prefill)},
         {"decode", PhaseJson(result.decode)},
         {"device_compute", c.device_compute},
         {"predicted",
          {{"prefill_s", predicted.prefill_s},
           {"decode_s", predicted.decode_s},
           {"for", predicted_for}}},
         {"pipeline",
          {{"stages", c.layout.pp},
           {"micro_batches", result.micro_batches},
           {"prefill_bubble",
            {{"measured", result.prefill.bubble}, {"model", model_prefill_bubble}}},
           {"decode_bubble",
            {{"measured", result.decode.bubble}, {"model", model_decode_bubble}}}}},
         {"moe", c.model.is_moe() ? nlohmann::json({{"redundant_experts", c.redundant_experts},
                                                    {"capacity_factor", c.capacity_factor},
                                                    {"routed_pairs", result.routed_pairs},
                                                    {"dropped_pairs", result.dropped_pairs}})
                                  : nlohmann::json(nullptr)},
         {"reference", o.no_check
                           ? nlohmann::json(nullptr)
                           : nlohmann::json({{"max_relative_error", check.max_relative_error},
                                             {"tokens_match", check.diverged == 0},
                                             {"sequences_compared", check.compared},
                                             {"near_tie_sequences", check.near_ties},
                                             {"diverged_sequences", check.diverged},
                                             {"tolerance", tolerance},
                                             {"matches", check.Matches(tolerance)}})}});
    return Status();
  }
  std::cout << fmt::format(
      "run: {} with {} on {} rank{} ({} backend), batch {}, prompt {} tokens, {} generated, "
      "seed {}, {} weights in {}, {} thread{} per rank ({} kernels)\n\n",
      c.model.name, c.layout.ToString(), result.ranks, result.ranks == 1 ? "" : "s", o.backend,
      c.batch, c.prompt_tokens, c.generate_tokens, c.seed,
      o.weights.empty() ? "generated" : "safetensors", WeightStorageName(c.kernels.weights),
      c.kernels.threads, c.kernels.threads == 1 ? "" : "s", kernels::KernelIsa());
  for (size_t s = 0; s < result.tokens.size(); ++s) {
    std::string ids;
    for (int64_t t : result.tokens[s]) ids += std::to_string(t) + " ";
    std::cout << fmt::format("  sequence {}: {}\n", s, ids);
  }
  // Collectives show their time on the wire; the time ranks spent waiting for the group's
  // slowest rank to arrive (and at barriers) is its own column.
  Table table({"phase", "wall", "compute", "waiting", "all-reduce", "all-to-all", "send-recv",
               "predicted"});
  auto cell = [](const CommOpStats& s) {
    return s.calls == 0 ? std::string("-")
                        : fmt::format("{} ({}x, {})", FormatSeconds(s.wire_seconds()), s.calls,
                                      FormatBytes(s.bytes));
  };
  for (const auto& [name, phase, pred] :
       {std::tuple{"prefill", &result.prefill, predicted.prefill_s},
        std::tuple{"decode", &result.decode, predicted.decode_s}}) {
    table.AddRow({name, FormatSeconds(phase->wall_s),
                  FormatSeconds(std::max(0.0, phase->wall_s - phase->comm.TotalSeconds())),
                  FormatSeconds(phase->comm.TotalWaitSeconds()),
                  cell(phase->comm[CommOp::kAllReduce]), cell(phase->comm[CommOp::kAllToAll]),
                  cell(phase->comm[CommOp::kSendRecv]), pred > 0 ? FormatSeconds(pred) : "-"});
  }
  std::cout << "\n" << table.Render();
  std::cout << fmt::format(
      "\ndecode: {:.1f} tokens/s on this machine (rank 0's timings; predicted "
      "{})\n",
      decode_tok_s, predicted_for);
  if (c.layout.pp > 1) {
    std::cout << fmt::format(
        "pipeline: {} stages, {} micro-batch{}; bubble measured {:.0f}% prefill, {:.0f}% decode "
        "(schedule model, equal stages: {:.0f}%, {:.0f}%)\n",
        c.layout.pp, result.micro_batches, result.micro_batches == 1 ? "" : "es",
        100 * result.prefill.bubble, 100 * result.decode.bubble, 100 * model_prefill_bubble,
        100 * model_decode_bubble);
  }
  if (c.model.is_moe()) {
    std::cout << fmt::format(
        "moe: {} redundant expert{}, {}; {} of {} (token, expert) pairs dropped ({:.1f}%)\n",
        c.redundant_experts, c.redundant_experts == 1 ? "" : "s",
        c.capacity_factor > 0 ? fmt::format("capacity factor {:g}", c.capacity_factor)
                              : std::string("no capacity limit"),
        result.dropped_pairs, result.routed_pairs,
        result.routed_pairs > 0 ? 100.0 * static_cast<double>(result.dropped_pairs) /
                                      static_cast<double>(result.routed_pairs)
                                : 0.0);
  }
  if (!o.no_check) {
    std::string tokens = check.diverged > 0 ? fmt::format("{} sequences differ", check.diverged)
                                            : std::string("identical");
    if (check.near_ties > 0) {
      tokens += fmt::format(
          "{} {} of {} sequence{} took the other of two near-tied tokens (the reference's top two "
          "within 2x the tolerance) and {} not compared after it",
          check.diverged > 0 ? ";" : " except where", check.near_ties, c.batch,
          c.batch == 1 ? "" : "s", check.near_ties == 1 ? "was" : "were");
    }
    std::cout << fmt::format(
        "check: {} the unsharded reference (max relative logit error {:.2e}, "
        "tolerance {:.0e}{}; tokens {})\n",
        check.Matches(tolerance) ? "matches" : "DIFFERS FROM", check.max_relative_error, tolerance,
        on_gpu ? " for bf16 on the GPU against the fp32 CPU reference" : "", tokens);
  }
  if (!o.no_check && !check.Matches(tolerance)) {
    return RuntimeFailure("the sharded run differs from the unsharded reference");
  }
  return Status();
}

}  // namespace

void AddRunCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand(
      "run",
      "Run a sharded transformer for real (prefill, then greedy decode with a KV cache) across\n"
      "ranks, check it against the unsharded reference, and time every phase and collective\n"
      "beside the perf model's prediction for this machine. Examples:\n"
      "  shardwise run --model tiny-moe --layout tp2ep2\n"
      "  mpirun -np 4 shardwise run --model tiny-dense --layout tp2pp2 --backend mpi");
  sub->add_option("--model", opts->model, "Catalog model or config.json")->capture_default_str();
  sub->add_option("--layout", opts->layout, "tp, pp, cp, ep and dp degrees, e.g. tp2pp2")
      ->capture_default_str();
  sub->add_option(
         "--backend", opts->backend,
         "threads (in-process), mpi (under mpirun), cuda (in-process ranks on the GPUs, threads "
         "communicator) or nccl (one rank per GPU, NCCL; under mpirun or one thread per GPU)")
      ->capture_default_str();
  sub->add_option(
      "--device-compute", opts->device_compute,
      "Where each rank computes: cpu (fp32) or cuda (bf16 on GPU rank % GPUs); default cuda "
      "for --backend cuda/nccl, else cpu");
  sub->add_option("--prompt-len", opts->prompt_len, "Prompt tokens per sequence")
      ->capture_default_str();
  sub->add_option("--gen", opts->gen, "Tokens to generate per sequence")->capture_default_str();
  sub->add_option("--batch", opts->batch, "Sequences (split over DP ranks)")->capture_default_str();
  sub->add_option("--seed", opts->seed, "Seed of the generated weights and prompts")
      ->check(kUnsignedInteger)
      ->capture_default_str();
  sub->add_option("--weights", opts->weights, "Directory with config-matching safetensors");
  sub->add_option("--plan", opts->plan,
                  "Run the model and top layout of a 'shardwise plan --json' output");
  sub->add_option("--dump-logits", opts->dump_logits, "Write the last step's logits (.npy)");
  sub->add_option("--host-profile", opts->host_profile,
                  "Host profile JSON to read (default: measured once and cached in "
                  "~/.cache/shardwise)");
  sub->add_option("--layers", opts->layers, "Run only the model's first N layers");
  sub->add_flag("--force", opts->force, "Let --dump-logits replace a file that is not a .npy");
  sub->add_option("--timeout-s", opts->timeout_s, "Fail a collective that takes longer")
      ->capture_default_str();
  sub->add_option("--redundant-experts", opts->redundant_experts,
                  "MoE with ep > 1: extra expert replicas (experts + N must divide by ep); each "
                  "token goes to its expert's least-loaded replica")
      ->capture_default_str();
  sub->add_option("--capacity-factor", opts->capacity_factor,
                  "MoE: drop the (token, expert) pairs beyond ceil(F x tokens x k / experts) per "
                  "expert and sequence (default: no limit)");
  sub->add_option("--micro-batches", opts->micro_batches,
                  "Pipeline micro-batches per DP rank (default 0: min(pp, sequences))")
      ->capture_default_str();
  sub->add_option("--dtype", opts->dtype,
                  "Weight storage on CPU ranks: fp32, bf16 (widened as read) or int8 (one scale "
                  "per weight row)")
      ->capture_default_str();
  sub->add_option("--threads", opts->threads,
                  "Threads per rank (CPU): they split each matrix product's weight rows and each "
                  "attention's heads")
      ->capture_default_str();
  sub->add_flag("--no-check", opts->no_check, "Skip the unsharded reference run");
  sub->add_flag("--json", opts->json, "Print JSON");
  BindCommand(sub, opts, result, RunRun);
}

}  // namespace shardwise::cli
