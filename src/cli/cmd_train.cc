// `shardwise train`: plan, explain and price a pre-training or fine-tuning run. Without --layout
// it searches and ranks layouts (micro-batch, schedule, ZeRO stage and recompute searched unless
// given); with one it explains that layout per phase. An adapter: it parses the options, calls
// train/ and prints.
#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include "command.h"
#include "numbers.h"
#include "request_flags.h"
#include "shardwise/api/train.h"
#include "shardwise/common/format.h"
#include "shardwise/report/table.h"
#include "validators.h"

namespace shardwise::cli {
namespace {

using train::TrainEstimate;

struct TrainOptions {
  api::TrainRunRequest request;
  ClusterFlags cluster;
  std::string tokens = "300B";
  bool json = false;
};

// "300B", "15T", "2.5e12", "1M": decimal suffixes K, M, B (or G), T.
StatusOr<double> ParseTokens(const std::string& text) {
  const std::optional<double> parsed = ParseScaledNumber(text, 1e3, true);
  const double tokens = parsed.value_or(0);
  if (!parsed || tokens < 1 || tokens > 1e18) {
    return Error(
        fmt::format("--tokens '{}' is not a token count between 1 and 1e18; write e.g. "
                    "300B, 15T or 2.5e12",
                    text));
  }
  return tokens;
}

std::string Days(double seconds) { return fmt::format("{:.1f} d", seconds / 86400); }

std::string Percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

// Seconds, minutes or hours, whichever reads best for a checkpoint interval or a restart.
std::string Duration(double seconds) {
  if (seconds < 120) return fmt::format("{:.1f} s", seconds);
  if (seconds < 7200) return fmt::format("{:.1f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

void PrintCritical(const train::CriticalBatch& c) {
  std::cout << fmt::format(
      "\ncritical batch (How to Think About GPUs): DP/FSDP stays compute-bound above {:.0f} "
      "tokens per data-parallel rank across nodes ({:.0f} inside one);\n"
      "  pure DP on this cluster would need a {} token batch; this layout needs {} and gets {} "
      "({});\n  TP stays compute-bound up to ~{:.1f}-way across nodes, ~{:.1f}-way inside one\n",
      c.tokens_per_gpu_inter, c.tokens_per_gpu_intra, FormatCount(c.pure_dp_tokens),
      FormatCount(c.layout_tokens), FormatCount(c.batch_tokens),
      c.batch_tokens >= c.layout_tokens ? "compute-bound" : "communication-bound", c.max_tp_inter,
      c.max_tp_intra);
}

void PrintExplain(const train::TrainPlanEntry& entry) {
  const TrainEstimate& e = entry.estimate;
  std::cout << fmt::format("{}, {}, micro-batch {} x {} per pipeline, {}, ZeRO-{}, recompute {}\n",
                           e.layout.ToString(), e.config.PrecisionName(), e.config.micro_batch,
                           e.micro_batches, e.config.schedule.ToString(), e.config.zero,
                           e.config.RecomputeText());
  if (e.layout.pp > 1) {
    std::cout << fmt::format("pipeline split (Megatron layout): {}\n", e.split.ToString());
  }
  Table t({"per micro-batch (rank " + std::to_string(e.slowest_stage) + ")", "GEMM", "attention",
           "element-wise", "kernel gaps", "TP comm", "EP comm", "CP comm", "PP send", "GPU total",
           "host"});
  auto row = [&](const std::string& name, const train::PassTimes& p) {
    t.AddRow({name, FormatSeconds(p.gemm_s), FormatSeconds(p.attention_s),
              FormatSeconds(p.memory_s), FormatSeconds(p.launch_s), FormatSeconds(p.tp_comm_s),
              FormatSeconds(p.ep_comm_s), FormatSeconds(p.cp_comm_s), FormatSeconds(p.pp_comm_s),
              FormatSeconds(p.GpuTotal()), FormatSeconds(p.host_s)});
  };
  row("forward", e.forward);
  row("backward (+ recompute)", e.backward);
  std::cout << "\n" << t.Render() << "\n";
  Table it({"per iteration", "time", "share"});
  for (const auto& [name, seconds] : train::StepParts(e)) {
    it.AddRow({name, FormatSeconds(seconds), Percent(seconds / e.step_s)});
  }
  it.AddRow({"step", FormatSeconds(e.step_s), "100%"});
  std::cout << it.Render();
  std::cout << fmt::format(
      "bubble {:.1f}% of the pipeline time; DP/ZeRO traffic {} of which {} exposed\n\n",
      100 * e.bubble_fraction, FormatSeconds(e.dp_comm_s), FormatSeconds(e.dp_exposed_s));
  const train::TrainMemory& m = e.memory;
  std::cout << fmt::format(
      "memory per GPU: weights {}, grads {}, optimizer {}, activations {} ({:.2f} micro-batches "
      "in flight), buffers {}: {} of {} usable\n",
      FormatBytes(m.states.weight_bytes), FormatBytes(m.states.grad_bytes),
      FormatBytes(m.states.optimizer_bytes), FormatBytes(m.activation_bytes),
      m.in_flight_micro_batches, FormatBytes(m.buffer_bytes), FormatBytes(m.UsedBytes()),
      FormatBytes(m.usable_bytes));
  std::cout << fmt::format(
      "throughput: {:.0f} tokens/s per GPU ({:.0f} in all); model FLOPs {:.1f} TFLOP/s per GPU, "
      "MFU {} (PaLM: no recompute); hardware FLOPs {:.1f} TFLOP/s, HFU {} (recompute included, "
      "as Megatron-LM counts); bound by {}\n",
      e.tokens_per_s_per_gpu, e.tokens_per_s, e.model_tflops_per_gpu, Percent(e.mfu),
      e.hardware_tflops_per_gpu, Percent(e.hfu), e.bound);
}

void PrintRanked(const train::TrainPlan& plan) {
  Table t({"#", "layout", "b", "m", "schedule", "ZeRO", "recompute", "step", "tokens/s/GPU", "MFU",
           "HFU", "mem/GPU", "bound"});
  t.SetLeftAligned({1, 4, 6, 12});
  for (size_t i = 0; i < plan.ranked.size(); ++i) {
    const TrainEstimate& e = plan.ranked[i].estimate;
    t.AddRow({std::to_string(i + 1), e.layout.ToString(), std::to_string(e.config.micro_batch),
              std::to_string(e.micro_batches), e.config.schedule.ToString(),
              std::to_string(e.config.zero), e.config.RecomputeText(), FormatSeconds(e.step_s),
              fmt::format("{:.0f}", e.tokens_per_s_per_gpu), Percent(e.mfu), Percent(e.hfu),
              FormatBytes(e.memory.UsedBytes()), e.bound});
  }
  std::cout << t.Render() << "\nwhy: " << plan.ranked.front().why << "\n";
}

void PrintCost(const train::TrainingCost& c, const train::TrainRequest& req, double usd) {
  std::cout << fmt::format("\n{} tokens: {} steps, {} of compute", FormatCount(c.tokens),
                           FormatCount(c.steps), Days(c.compute_s));
  if (c.interruptions > 0) {
    std::cout << fmt::format(
        "; with {:.1f} interruptions expected ({:.3g} per GPU-hour, {} restart each) and a "
        "checkpoint every {} ({} stall each), {} wall clock, goodput {}",
        c.interruptions, req.reliability.interruptions_per_gpu_hour,
        Duration(req.reliability.restart_s), Duration(c.checkpoint_interval_s),
        Duration(c.checkpoint_write_s), Days(c.time_s), Percent(c.goodput));
  }
  std::cout << fmt::format("; {} GPU-hours, ${} at ${:.2f}/GPU-hour\n", FormatCount(c.gpu_hours),
                           FormatCount(c.usd), usd);
}

void PrintSizes(const train::TrainPlan& plan) {
  std::cout << "\ntime versus cost across cluster sizes (* = Pareto: no size is both faster and "
               "cheaper):\n";
  Table s({"GPUs", "layout", "step", "tokens/s/GPU", "MFU", "wall time", "goodput", "GPU-hours",
           "$", ""});
  s.SetLeftAligned({1, 9});
  for (const auto& p : plan.sizes) {
    const TrainEstimate& e = p.best.estimate;
    s.AddRow({std::to_string(p.gpus), e.layout.ToString(), FormatSeconds(e.step_s),
              fmt::format("{:.0f}", e.tokens_per_s_per_gpu), Percent(e.mfu),
              Days(p.best.cost.time_s), Percent(p.best.cost.goodput),
              FormatCount(p.best.cost.gpu_hours), FormatCount(p.best.cost.usd),
              p.pareto ? "*" : ""});
  }
  std::cout << s.Render();
}

Status RunTrain(TrainOptions& o) {
  SW_ASSIGN_OR_RETURN(o.request.tokens, ParseTokens(o.tokens));
  o.request.cluster = o.cluster.values;
  SW_ASSIGN_OR_RETURN(const api::TrainReport rep, api::Train(api::Catalog::BuiltIn(), o.request));
  if (!rep.cluster_note.empty()) {
    std::fprintf(stderr, "shardwise: warning: %s\n", rep.cluster_note.c_str());
  }
  if (o.json) {
    PrintJson(api::ToJson(rep));
    return Status();
  }
  const train::TrainRequest& req = rep.request;
  const ClusterSpec& cluster = rep.cluster;
  std::cout << fmt::format(
      "train: {} on {} ({} x {}), engine {}, sequence {}, global batch {} ({} tokens), {}\n",
      rep.model.name, cluster.name, cluster.num_gpus, cluster.gpu.name, rep.engine.name,
      req.config.seq_len, req.config.global_batch,
      FormatCount(static_cast<double>(req.config.TokensPerIteration())),
      req.config.PrecisionName());
  const train::TrainPlan& plan = rep.plan;
  std::cout << fmt::format("{} layouts, {} configurations evaluated, {} fit in memory, in {}\n\n",
                           plan.layouts_considered, plan.configs_evaluated, plan.configs_fitting,
                           FormatSeconds(rep.elapsed_s));
  if (req.only_layout) {
    PrintExplain(plan.ranked.front());
  } else {
    PrintRanked(plan);
  }
  PrintCritical(plan.critical);
  PrintCost(plan.ranked.front().cost, req, cluster.gpu.usd_per_gpu_hour);
  if (!plan.sizes.empty()) PrintSizes(plan);
  return Status();
}

}  // namespace

void AddTrainCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<TrainOptions>();
  CLI::App* sub = app.add_subcommand(
      "train",
      "Plan, explain and price a pre-training or fine-tuning run. Without --layout: search every\n"
      "TP/CP/PP/DP/EP layout with its micro-batch, schedule, ZeRO stage and recompute mode, drop\n"
      "what does not fit, rank by step time and say why the winner wins. With --layout: explain\n"
      "that layout per phase. Examples:\n"
      "  shardwise train --model llama-3.1-70b --cluster dgx-h100 --nodes 64 --global-batch 1024\n"
      "  shardwise train --model llama-3.1-405b --cluster dgx-h100 --nodes 128 --layout "
      "dp8tp8cp2pp8\n"
      "      --seq-len 8192 --global-batch 512 --schedule interleaved:8 --dtype fp8\n"
      "  shardwise train --model megatron-gpt-39b --cluster dgx-a100 --nodes 64 --layout "
      "tp8pp2dp32\n"
      "      --seq-len 2048 --global-batch 1536 --engine megatron-lm-sc21");
  sub->add_option("--model", opts->request.model,
                  "Catalog model or config.json (GPT2LMHeadModel too)")
      ->capture_default_str();
  opts->cluster.AddTo(sub);
  sub->add_option("--engine", opts->request.engine,
                  "Training engine profile (data/training): megatron-core or megatron-lm-sc21")
      ->capture_default_str();
  sub->add_option("--layout", opts->request.layout,
                  "Explain this layout, e.g. tp8pp2dp4 or tp4ep8dp2pp4")
      ->check(kLayoutText);
  sub->add_option("--seq-len", opts->request.seq_len, "Tokens per sequence")->capture_default_str();
  sub->add_option("--global-batch", opts->request.global_batch, "Sequences per iteration")
      ->capture_default_str();
  sub->add_option("--micro-batch", opts->request.micro_batch,
                  "Sequences per micro-batch per data-parallel rank (default: searched)");
  sub->add_option("--schedule", opts->request.schedule,
                  "1f1b, interleaved:V or zero-bubble (default: searched among the engine's)");
  sub->add_option("--pipeline-layout", opts->request.pipeline_layout,
                  "Megatron's --pipeline-model-parallel-layout, e.g. \"Et*3|(tt|)*29m|L\" "
                  "(default: even, else embedding and loss counted as layers)");
  sub->add_option("--first-stage-layers", opts->request.first_stage_layers,
                  "Layers of the first pipeline stage (Megatron's "
                  "--decoder-first-pipeline-num-layers)");
  sub->add_option("--last-stage-layers", opts->request.last_stage_layers,
                  "Layers of the last pipeline stage (--decoder-last-pipeline-num-layers)");
  sub->add_option("--zero", opts->request.zero,
                  "ZeRO stage 0, 1, 2 or 3 (3 = FSDP; default: searched)");
  sub->add_option("--recompute", opts->request.recompute,
                  "Activation recomputation: none, selective, full, or full:N for N layers of "
                  "each model chunk (default: searched)");
  sub->add_option("--tokens", opts->tokens, "Tokens to train on, for time and cost (300B, 15T)")
      ->capture_default_str();
  sub->add_option("--dtype", opts->request.dtype, "GEMM format: bf16 or fp8")
      ->capture_default_str();
  sub->add_option("--fp8-recipe", opts->request.fp8_recipe,
                  "FP8 scaling with --dtype fp8: delayed, current (FP8-CS), blockwise (Hopper) or "
                  "mxfp8 (FP8-MX, Blackwell)")
      ->capture_default_str();
  sub->add_flag("--moe-token-drop", opts->request.moe_token_drop,
                "MoE drops tokens beyond each expert's capacity and pads to it (static shapes, no "
                "host sync); default dropless");
  sub->add_option("--mtp-layers", opts->request.mtp_layers,
                  "Multi-token-prediction modules after the last layer (DeepSeek-V3: 1)")
      ->capture_default_str();
  sub->add_option("--interruption-rate", opts->request.interruption_rate,
                  "Job interruptions per GPU-hour (default: the engine's, from Llama 3's run)");
  sub->add_option("--restart-s", opts->request.restart_s,
                  "Seconds from an interruption to training again (default: the engine's)");
  sub->add_option("--top", opts->request.top, "Layouts to show")->capture_default_str();
  sub->add_flag("--no-sizes", opts->request.no_sizes,
                "Skip the search at smaller cluster sizes (the time-versus-cost Pareto)");
  sub->add_flag("--json", opts->json, "Print JSON");
  BindCommand(sub, opts, result, RunTrain);
}

}  // namespace shardwise::cli
