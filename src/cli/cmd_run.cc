// `shardwise run`: execute a sharded forward pass for real, check it against the unsharded
// reference, and print where the time went next to the perf model's prediction.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <tuple>

#include "command.h"
#include "output_guard.h"
#include "shardwise/api/run.h"
#include "shardwise/common/format.h"
#include "shardwise/report/table.h"
#include "shardwise/runtime/kernels.h"
#include "shardwise/runtime/npy.h"
#include "validators.h"

namespace shardwise::cli {
namespace {

struct RunOptions {
  api::RunRequest request;
  std::string dump_logits;
  bool force = false;
  bool json = false;
};

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

// Each phase's wall time split into compute, waiting and the collectives' time on the wire (the
// time ranks spent waiting for the group's slowest rank, and at barriers, is its own column).
std::string PhaseTable(const api::RunReport& rep) {
  Table table({"phase", "wall", "compute", "waiting", "all-reduce", "all-to-all", "send-recv",
               "predicted"});
  auto cell = [](const CommOpStats& s) {
    return s.calls == 0 ? std::string("-")
                        : fmt::format("{} ({}x, {})", FormatSeconds(s.wire_seconds()), s.calls,
                                      FormatBytes(s.bytes));
  };
  for (const auto& [name, phase, pred] :
       {std::tuple{"prefill", &rep.result.prefill, rep.predicted.prefill_s},
        std::tuple{"decode", &rep.result.decode, rep.predicted.decode_s}}) {
    table.AddRow({name, FormatSeconds(phase->wall_s),
                  FormatSeconds(std::max(0.0, phase->wall_s - phase->comm.TotalSeconds())),
                  FormatSeconds(phase->comm.TotalWaitSeconds()),
                  cell(phase->comm[CommOp::kAllReduce]), cell(phase->comm[CommOp::kAllToAll]),
                  cell(phase->comm[CommOp::kSendRecv]), pred > 0 ? FormatSeconds(pred) : "-"});
  }
  return table.Render();
}

std::string CheckLine(const api::RunReport& rep) {
  const ReferenceComparison& check = *rep.check;
  const int64_t batch = rep.config.batch;
  std::string tokens = check.diverged > 0 ? fmt::format("{} sequences differ", check.diverged)
                                          : std::string("identical");
  if (check.near_ties > 0) {
    tokens += fmt::format(
        "{} {} of {} sequence{} took the other of two near-tied tokens (the reference's top two "
        "within 2x the tolerance) and {} not compared after it",
        check.diverged > 0 ? ";" : " except where", check.near_ties, batch, batch == 1 ? "" : "s",
        check.near_ties == 1 ? "was" : "were");
  }
  if (check.router_ties > 0) {
    tokens += fmt::format(
        "; {} sequence{} routed a token between near-tied experts (the reference's routing "
        "margin within 2x the tolerance) and {} not compared",
        check.router_ties, check.router_ties == 1 ? "" : "s",
        check.router_ties == 1 ? "was" : "were");
  }
  return fmt::format(
      "check: {} the unsharded reference (max relative logit error {:.2e}, tolerance {:.0e}{}; "
      "tokens {})\n",
      rep.Matches() ? "matches" : "DIFFERS FROM", check.max_relative_error, rep.tolerance,
      rep.config.device_compute == "cuda" ? " for bf16 on the GPU against the fp32 CPU reference"
                                          : "",
      tokens);
}

void PrintRun(const api::RunReport& rep, const std::string& weights_dir) {
  const RunConfig& c = rep.config;
  const RunResult& result = rep.result;
  std::cout << fmt::format(
      "run: {} with {} on {} rank{} ({} backend), batch {}, prompt {} tokens, {} generated, "
      "seed {}, {} weights in {}, {} thread{} per rank ({} kernels)\n\n",
      c.model.name, c.layout.ToString(), result.ranks, result.ranks == 1 ? "" : "s", rep.backend,
      c.batch, c.prompt_tokens, c.generate_tokens, c.seed,
      weights_dir.empty() ? "generated" : "safetensors", WeightStorageName(c.kernels.weights),
      c.kernels.threads, c.kernels.threads == 1 ? "" : "s", kernels::KernelIsa());
  for (size_t s = 0; s < result.tokens.size(); ++s) {
    std::string ids;
    for (int64_t t : result.tokens[s]) ids += std::to_string(t) + " ";
    std::cout << fmt::format("  sequence {}: {}\n", s, ids);
  }
  std::cout << "\n" << PhaseTable(rep);
  std::cout << fmt::format(
      "\ndecode: {:.1f} tokens/s on this machine (rank 0's timings; "
      "predicted {})\n",
      rep.decode_tokens_per_s, rep.predicted_for);
  if (c.layout.pp > 1) {
    std::cout << fmt::format(
        "pipeline: {} stages, {} micro-batch{}; bubble measured {:.0f}% prefill, {:.0f}% decode "
        "(schedule model, equal stages: {:.0f}%, {:.0f}%)\n",
        c.layout.pp, result.micro_batches, result.micro_batches == 1 ? "" : "es",
        100 * result.prefill.bubble, 100 * result.decode.bubble, 100 * rep.model_prefill_bubble,
        100 * rep.model_decode_bubble);
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
  if (rep.check) std::cout << CheckLine(rep);
}

Status RunRun(RunOptions& o) {
  if (!o.dump_logits.empty()) {
    SW_RETURN_IF_ERROR(CheckOutputPath(
        o.dump_logits, o.force, "logits .npy file",
        [](const std::string& content) { return content.starts_with("\x93NUMPY"); }));
  }
  o.request.on_step = ProgressPrinter();
  SW_ASSIGN_OR_RETURN(const api::RunReport rep, api::Run(o.request));
  if (!rep.reporting) return Status();  // an MPI rank other than 0: rank 0 reports
  PrintNotes(rep.notes);
  if (!o.dump_logits.empty()) {
    SW_RETURN_IF_ERROR(
        WriteNpy(o.dump_logits, rep.result.logits, {rep.config.batch, rep.result.vocab}));
  }
  if (o.json) {
    PrintJson(api::ToJson(rep));
  } else {
    PrintRun(rep, o.request.weights);
  }
  if (!rep.Matches()) {
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
  sub->add_option("--model", opts->request.model, "Catalog model or config.json")
      ->capture_default_str();
  sub->add_option("--layout", opts->request.layout, "tp, pp, cp, ep and dp degrees, e.g. tp2pp2")
      ->check(kLayoutText)
      ->capture_default_str();
  sub->add_option(
         "--backend", opts->request.backend,
         "threads (in-process), mpi (under mpirun), cuda (in-process ranks on the GPUs, threads "
         "communicator) or nccl (one rank per GPU, NCCL; under mpirun or one thread per GPU)")
      ->capture_default_str();
  sub->add_option(
      "--device-compute", opts->request.device_compute,
      "Where each rank computes: cpu (fp32) or cuda (bf16 on GPU rank % GPUs); default cuda "
      "for --backend cuda/nccl, else cpu");
  sub->add_option("--prompt-len", opts->request.prompt_len, "Prompt tokens per sequence")
      ->capture_default_str();
  sub->add_option("--gen", opts->request.gen, "Tokens to generate per sequence")
      ->capture_default_str();
  sub->add_option("--batch", opts->request.batch, "Sequences (split over DP ranks)")
      ->capture_default_str();
  sub->add_option("--seed", opts->request.seed, "Seed of the generated weights and prompts")
      ->check(kUnsignedInteger)
      ->capture_default_str();
  sub->add_option("--weights", opts->request.weights, "Directory with config-matching safetensors");
  sub->add_option("--plan", opts->request.plan,
                  "Run the model and top layout of a 'shardwise plan --json' output");
  sub->add_option("--dump-logits", opts->dump_logits, "Write the last step's logits (.npy)");
  sub->add_option("--host-profile", opts->request.host_profile,
                  "Host profile JSON to read (default: measured once and cached in "
                  "~/.cache/shardwise)");
  sub->add_option("--layers", opts->request.layers, "Run only the model's first N layers");
  sub->add_flag("--force", opts->force, "Let --dump-logits replace a file that is not a .npy");
  sub->add_option("--timeout-s", opts->request.timeout_s, "Fail a collective that takes longer")
      ->capture_default_str();
  sub->add_option("--redundant-experts", opts->request.redundant_experts,
                  "MoE with ep > 1: extra expert replicas (experts + N must divide by ep); each "
                  "token goes to its expert's least-loaded replica")
      ->capture_default_str();
  sub->add_option("--capacity-factor", opts->request.capacity_factor,
                  "MoE: drop the (token, expert) pairs beyond ceil(F x tokens x k / experts) per "
                  "expert and sequence (default: no limit)");
  sub->add_option("--micro-batches", opts->request.micro_batches,
                  "Pipeline micro-batches per DP rank (default 0: min(pp, sequences))")
      ->capture_default_str();
  sub->add_option("--dtype", opts->request.dtype,
                  "Weight storage on CPU ranks: fp32, bf16 (widened as read) or int8 (one scale "
                  "per weight row)")
      ->capture_default_str();
  sub->add_option("--threads", opts->request.threads,
                  "Threads per rank (CPU): they split each matrix product's weight rows and each "
                  "attention's heads")
      ->capture_default_str();
  sub->add_flag("--no-check", opts->request.no_check, "Skip the unsharded reference run");
  sub->add_flag("--json", opts->json, "Print JSON");
  BindCommand(sub, opts, result, RunRun);
}

}  // namespace shardwise::cli
