// `shardwise train`: plan, explain and price a pre-training or fine-tuning run. Without --layout
// it searches and ranks layouts (micro-batch, schedule, ZeRO stage and recompute searched unless
// given); with one it explains that layout per phase.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <optional>

#include "cluster_options.h"
#include "command.h"
#include "shardwise/common/format.h"
#include "shardwise/model/catalog.h"
#include "shardwise/report/table.h"
#include "shardwise/train/planner.h"

namespace shardwise::cli {
namespace {

using train::TrainEstimate;

struct TrainOptions {
  std::string model = "llama-3.1-8b";
  ClusterOptions cluster;
  std::string engine = "megatron-core";
  std::string layout;
  int64_t seq_len = 4096;
  int64_t global_batch = 512;
  std::optional<int64_t> micro_batch;
  std::string schedule;
  std::optional<int> zero;
  std::string recompute;
  std::string tokens = "300B";
  std::string dtype = "bf16";
  int top = 5;
  bool no_sizes = false;
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

nlohmann::json PassJson(const train::PassTimes& p) {
  return {{"gemm_s", p.gemm_s},       {"attention_s", p.attention_s}, {"memory_s", p.memory_s},
          {"tp_comm_s", p.tp_comm_s}, {"ep_comm_s", p.ep_comm_s},     {"cp_comm_s", p.cp_comm_s},
          {"pp_comm_s", p.pp_comm_s}, {"total_s", p.Total()}};
}

nlohmann::json EntryJson(const train::TrainPlanEntry& entry) {
  const TrainEstimate& e = entry.estimate;
  const train::TrainMemory& mem = e.memory;
  // A labelled series: the part's name as the text output prints it, and its time per step.
  nlohmann::json parts = nlohmann::json::array();
  for (const auto& [name, seconds] : train::StepParts(e)) {
    parts.push_back({{"part", name}, {"time_s", seconds}});
  }
  return {{"layout", e.layout.ToString()},
          {"gpus", e.layout.gpus()},
          {"dp", e.layout.dp},
          {"tp", e.layout.tp},
          {"pp", e.layout.pp},
          {"cp", e.layout.cp},
          {"ep", e.layout.ep},
          {"micro_batch", e.config.micro_batch},
          {"micro_batches", e.micro_batches},
          {"schedule", e.config.schedule.ToString()},
          {"zero", e.config.zero},
          {"recompute", std::string(train::RecomputeName(e.config.recompute))},
          {"step_s", e.step_s},
          {"tokens_per_s", e.tokens_per_s},
          {"model_flops_per_s_per_gpu", e.model_tflops_per_gpu * 1e12},
          {"mfu", e.mfu},
          {"model_flops_utilization", e.model_flops_utilization},
          {"bubble_fraction", e.bubble_fraction},
          {"memory_per_gpu_bytes", mem.UsedBytes()},
          {"memory",
           {{"weights_bytes", mem.states.weight_bytes},
            {"grads_bytes", mem.states.grad_bytes},
            {"optimizer_bytes", mem.states.optimizer_bytes},
            {"activations_bytes", mem.activation_bytes},
            {"in_flight_micro_batches", mem.in_flight_micro_batches},
            {"buffers_bytes", mem.buffer_bytes},
            {"usable_bytes", mem.usable_bytes}}},
          {"forward_per_micro_batch", PassJson(e.forward)},
          {"backward_per_micro_batch", PassJson(e.backward)},
          {"step_parts", parts},
          {"dp_comm_s", e.dp_comm_s},
          {"dp_exposed_s", e.dp_exposed_s},
          {"bound", e.bound},
          {"largest_overhead", e.overhead},
          {"tokens", entry.cost.tokens},
          {"steps", entry.cost.steps},
          {"time_s", entry.cost.time_s},
          {"gpu_hours", entry.cost.gpu_hours},
          {"usd", entry.cost.usd},
          {"why", entry.why}};
}

nlohmann::json CriticalJson(const train::CriticalBatch& c) {
  return {{"tokens_per_gpu_intra_node", c.tokens_per_gpu_intra},
          {"tokens_per_gpu_inter_node", c.tokens_per_gpu_inter},
          {"pure_dp_global_batch_tokens", c.pure_dp_tokens},
          {"layout_global_batch_tokens", c.layout_tokens},
          {"global_batch_tokens", c.batch_tokens},
          {"max_tp_intra_node", c.max_tp_intra},
          {"max_tp_inter_node", c.max_tp_inter}};
}

std::string Days(double seconds) { return fmt::format("{:.1f} d", seconds / 86400); }

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
  std::cout << fmt::format("{}, micro-batch {} x {} per pipeline, {}, ZeRO-{}, recompute {}\n\n",
                           e.layout.ToString(), e.config.micro_batch, e.micro_batches,
                           e.config.schedule.ToString(), e.config.zero,
                           train::RecomputeName(e.config.recompute));
  Table t({"per micro-batch (stage " + std::to_string(e.slowest_stage) + ")", "GEMM", "attention",
           "element-wise", "TP comm", "EP comm", "CP comm", "PP send", "total"});
  auto row = [&](const std::string& name, const train::PassTimes& p) {
    t.AddRow({name, FormatSeconds(p.gemm_s), FormatSeconds(p.attention_s),
              FormatSeconds(p.memory_s), FormatSeconds(p.tp_comm_s), FormatSeconds(p.ep_comm_s),
              FormatSeconds(p.cp_comm_s), FormatSeconds(p.pp_comm_s), FormatSeconds(p.Total())});
  };
  row("forward", e.forward);
  row("backward (+ recompute)", e.backward);
  std::cout << t.Render() << "\n";
  Table it({"per iteration", "time", "share"});
  for (const auto& [name, seconds] : train::StepParts(e)) {
    it.AddRow({name, FormatSeconds(seconds), fmt::format("{:.1f}%", 100 * seconds / e.step_s)});
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
      "throughput: {:.0f} tokens/s, {:.1f} TFLOP/s per GPU as Megatron-LM counts (recompute "
      "included), {:.1f}% of peak; MFU without recompute (PaLM) {:.1f}%; bound by {}\n",
      e.tokens_per_s, e.model_tflops_per_gpu, 100 * e.mfu, 100 * e.model_flops_utilization,
      e.bound);
}

Status RunTrain(const TrainOptions& o) {
  SW_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(o.model));
  SW_ASSIGN_OR_RETURN(ClusterSpec cluster, o.cluster.Load());
  SW_ASSIGN_OR_RETURN(train::TrainEngine engine, train::LoadTrainEngine(o.engine));
  train::TrainRequest req;
  if (o.seq_len < 1 || o.seq_len > 10'000'000) {
    return Error("--seq-len must be between 1 and 10,000,000 tokens");
  }
  if (o.global_batch < 1 || o.global_batch > 100'000'000) {
    return Error("--global-batch must be between 1 and 100,000,000 sequences");
  }
  if (o.top < 1 || o.top > 1000) return Error("--top must be between 1 and 1000");
  req.config.seq_len = o.seq_len;
  req.config.global_batch = o.global_batch;
  if (o.micro_batch) {
    if (*o.micro_batch < 1 || *o.micro_batch > o.global_batch) {
      return Error("--micro-batch must be between 1 and the global batch");
    }
    req.config.micro_batch = *o.micro_batch;
    req.search_micro_batch = false;
  }
  if (!o.schedule.empty()) {
    SW_ASSIGN_OR_RETURN(req.config.schedule, train::ParseSchedule(o.schedule));
    req.search_schedule = false;
  }
  if (o.zero) {
    if (*o.zero < 0 || *o.zero > 3) return Error("--zero must be 0, 1, 2 or 3");
    req.config.zero = *o.zero;
    req.search_zero = false;
  }
  if (!o.recompute.empty()) {
    SW_ASSIGN_OR_RETURN(req.config.recompute, train::ParseRecompute(o.recompute));
    req.search_recompute = false;
  }
  SW_ASSIGN_OR_RETURN(req.config.dtype, ParseDtype(o.dtype));
  if (req.config.dtype != Dtype::kBf16 && req.config.dtype != Dtype::kFp8) {
    return Error("--dtype must be bf16 or fp8 for training");
  }
  if (!cluster.gpu.Supports(req.config.dtype)) {
    return Error(
        fmt::format("{} has no {} tensor cores; use --dtype bf16", cluster.gpu.name, o.dtype));
  }
  SW_ASSIGN_OR_RETURN(req.tokens, ParseTokens(o.tokens));
  req.top = o.top;
  req.sizes = !o.no_sizes;
  if (!o.layout.empty()) {
    SW_ASSIGN_OR_RETURN(Layout only, ParseLayout(o.layout));
    req.only_layout = only;
    if (!req.search_zero && req.config.zero == 3 && only.pp > 1) {
      return Error(
          "ZeRO-3 re-gathers every layer's weights for each micro-batch and does not "
          "combine with pipeline parallelism; use --zero 1 with pp, or a layout without "
          "pp");
    }
  }
  const auto start = std::chrono::steady_clock::now();
  SW_ASSIGN_OR_RETURN(train::TrainPlan plan, train::PlanTraining(model, cluster, engine, req));
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const train::TrainPlanEntry& best = plan.ranked.front();

  if (o.json) {
    nlohmann::json ranked = nlohmann::json::array();
    for (const auto& p : plan.ranked) ranked.push_back(EntryJson(p));
    nlohmann::json sizes = nlohmann::json::array();
    for (const auto& s : plan.sizes) {
      nlohmann::json j = EntryJson(s.best);
      j["pareto"] = s.pareto;
      sizes.push_back(j);
    }
    nlohmann::json out = EntryJson(best);
    out["model"] = model.name;
    out["cluster"] = cluster.name;
    out["cluster_gpus"] = cluster.num_gpus;
    out["gpu"] = cluster.gpu.name;
    out["engine"] = engine.name;
    out["seq_len"] = o.seq_len;
    out["global_batch"] = o.global_batch;
    out["dtype"] = o.dtype;
    out["layouts_considered"] = plan.layouts_considered;
    out["configs_evaluated"] = plan.configs_evaluated;
    out["configs_fitting"] = plan.configs_fitting;
    out["elapsed_s"] = elapsed_s;
    out["critical_batch"] = CriticalJson(plan.critical);
    out["ranked"] = ranked;
    out["sizes"] = sizes;
    PrintJson(out);
    return Status();
  }
  std::cout << fmt::format(
      "train: {} on {} ({} x {}), engine {}, sequence {}, global batch {} ({} tokens), {}\n",
      model.name, cluster.name, cluster.num_gpus, cluster.gpu.name, engine.name, o.seq_len,
      o.global_batch, FormatCount(static_cast<double>(req.config.TokensPerIteration())), o.dtype);
  std::cout << fmt::format("{} layouts, {} configurations evaluated, {} fit in memory, in {}\n\n",
                           plan.layouts_considered, plan.configs_evaluated, plan.configs_fitting,
                           FormatSeconds(elapsed_s));
  if (req.only_layout) {
    PrintExplain(best);
  } else {
    Table t({"#", "layout", "b", "m", "schedule", "ZeRO", "recompute", "step", "tokens/s",
             "TFLOP/s/GPU", "MFU", "mem/GPU", "bound"});
    t.SetLeftAligned({1, 4, 6, 12});
    for (size_t i = 0; i < plan.ranked.size(); ++i) {
      const TrainEstimate& e = plan.ranked[i].estimate;
      t.AddRow({std::to_string(i + 1), e.layout.ToString(), std::to_string(e.config.micro_batch),
                std::to_string(e.micro_batches), e.config.schedule.ToString(),
                std::to_string(e.config.zero),
                std::string(train::RecomputeName(e.config.recompute)), FormatSeconds(e.step_s),
                fmt::format("{:.0f}", e.tokens_per_s),
                fmt::format("{:.1f}", e.model_tflops_per_gpu), fmt::format("{:.1f}%", 100 * e.mfu),
                FormatBytes(e.memory.UsedBytes()), e.bound});
    }
    std::cout << t.Render() << "\nwhy: " << best.why << "\n";
  }
  PrintCritical(plan.critical);
  std::cout << fmt::format("\n{} tokens: {} steps, {}, {} GPU-hours, ${} at ${:.2f}/GPU-hour\n",
                           FormatCount(best.cost.tokens), FormatCount(best.cost.steps),
                           Days(best.cost.time_s), FormatCount(best.cost.gpu_hours),
                           FormatCount(best.cost.usd), cluster.gpu.usd_per_gpu_hour);
  if (!plan.sizes.empty()) {
    std::cout << "\ntime versus cost across cluster sizes (* = Pareto: no size is both faster and "
                 "cheaper):\n";
    Table s({"GPUs", "layout", "step", "tokens/s", "MFU", "time", "GPU-hours", "$", ""});
    s.SetLeftAligned({1, 8});
    for (const auto& p : plan.sizes) {
      const TrainEstimate& e = p.best.estimate;
      s.AddRow({std::to_string(p.gpus), e.layout.ToString(), FormatSeconds(e.step_s),
                fmt::format("{:.0f}", e.tokens_per_s), fmt::format("{:.1f}%", 100 * e.mfu),
                Days(p.best.cost.time_s), FormatCount(p.best.cost.gpu_hours),
                FormatCount(p.best.cost.usd), p.pareto ? "*" : ""});
    }
    std::cout << s.Render();
  }
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
      "  shardwise train --model megatron-gpt-39b --cluster dgx-a100 --nodes 64 --layout "
      "tp8pp2dp32\n"
      "      --seq-len 2048 --global-batch 1536 --engine megatron-lm-sc21");
  sub->add_option("--model", opts->model, "Catalog model or config.json (GPT2LMHeadModel too)")
      ->capture_default_str();
  opts->cluster.AddTo(sub);
  sub->add_option("--engine", opts->engine,
                  "Training engine profile (data/training): megatron-core or megatron-lm-sc21")
      ->capture_default_str();
  sub->add_option("--layout", opts->layout, "Explain this layout, e.g. tp8pp2dp4 or tp4ep8dp2pp4");
  sub->add_option("--seq-len", opts->seq_len, "Tokens per sequence")->capture_default_str();
  sub->add_option("--global-batch", opts->global_batch, "Sequences per iteration")
      ->capture_default_str();
  sub->add_option("--micro-batch", opts->micro_batch,
                  "Sequences per micro-batch per data-parallel rank (default: searched)");
  sub->add_option("--schedule", opts->schedule,
                  "1f1b, interleaved:V or zero-bubble (default: searched among the engine's)");
  sub->add_option("--zero", opts->zero, "ZeRO stage 0, 1, 2 or 3 (3 = FSDP; default: searched)");
  sub->add_option("--recompute", opts->recompute,
                  "Activation recomputation: none, selective or full (default: searched)");
  sub->add_option("--tokens", opts->tokens, "Tokens to train on, for time and cost (300B, 15T)")
      ->capture_default_str();
  sub->add_option("--dtype", opts->dtype, "GEMM format: bf16 or fp8")->capture_default_str();
  sub->add_option("--top", opts->top, "Layouts to show")->capture_default_str();
  sub->add_flag("--no-sizes", opts->no_sizes,
                "Skip the search at smaller cluster sizes (the time-versus-cost Pareto)");
  sub->add_flag("--json", opts->json, "Print JSON");
  BindCommand(sub, opts, result, RunTrain);
}

}  // namespace shardwise::cli
