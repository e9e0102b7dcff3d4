// `train`'s text: the ranked layouts or one layout per phase, the critical batch, the time and
// cost of the tokens with the job's goodput, and the sizes' time-versus-cost front (text/text.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shardwise/common/format.h"
#include "shardwise/report/table.h"
#include "shardwise/text/text.h"

namespace shardwise::text {
namespace {

using train::TrainEstimate;

std::string Percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

// The largest TP degree whose collectives stay under its compute, where one exists: below two
// ways, every TP degree is communication-bound by this rule.
std::string TpDegree(double max_tp, const char* where) {
  return max_tp >= 2 ? fmt::format("up to ~{:.1f}-way {}", max_tp, where)
                     : fmt::format("at no degree {} (the rule gives ~{:.1f}-way)", where, max_tp);
}

std::string Critical(const train::CriticalBatch& c) {
  // The rules of thumb assume no overlap; the step's bound above overlaps what the engine does.
  return fmt::format(
      "\ncritical batch (How to Think About GPUs, no overlap assumed): DP/FSDP stays "
      "compute-bound above {:.0f} tokens per data-parallel rank across nodes ({:.0f} inside "
      "one);\n  pure DP on this cluster would need a {} token batch; this layout needs {} and "
      "gets {} ({});\n  TP stays compute-bound {}, {}\n",
      c.tokens_per_gpu_inter, c.tokens_per_gpu_intra, FormatCount(c.pure_dp_tokens),
      FormatCount(c.layout_tokens), FormatCount(c.batch_tokens),
      c.batch_tokens >= c.layout_tokens ? "compute-bound" : "communication-bound unless overlapped",
      TpDegree(c.max_tp_inter, "across nodes"), TpDegree(c.max_tp_intra, "inside one"));
}

std::string Explain(const train::TrainPlanEntry& entry) {
  const TrainEstimate& e = entry.estimate;
  std::string out = fmt::format(
      "{}, {}, micro-batch {} x {} per pipeline, {}, ZeRO-{}, recompute {}\n", e.layout.ToString(),
      e.config.PrecisionName(), e.config.micro_batch, e.micro_batches, e.config.schedule.ToString(),
      e.config.zero, e.config.RecomputeText());
  if (e.layout.pp > 1) {
    out += fmt::format("pipeline split (Megatron layout): {}\n", e.split.ToString());
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
  out += "\n" + t.Render() + "\n";
  Table it({"per iteration", "time", "share"});
  for (const auto& [name, seconds] : train::StepParts(e)) {
    it.AddRow({name, FormatSeconds(seconds), Percent(seconds / e.step_s)});
  }
  it.AddRow({"step", FormatSeconds(e.step_s), "100%"});
  out += it.Render();
  out += fmt::format(
      "bubble {:.1f}% of the slowest rank's busy time (Megatron-LM's bubble fraction: 1F1B "
      "(p - 1) / m, interleaved (p - 1) / (V m)); DP/ZeRO traffic {} of which {} exposed\n\n",
      100 * e.bubble_fraction, FormatSeconds(e.dp_comm_s), FormatSeconds(e.dp_exposed_s));
  const train::TrainMemory& m = e.memory;
  out += fmt::format(
      "memory per GPU: weights {}, grads {}, optimizer {}, activations {} ({:.2f} micro-batches "
      "in flight), buffers {}: {} of {} usable\n",
      FormatBytes(m.states.weight_bytes), FormatBytes(m.states.grad_bytes),
      FormatBytes(m.states.optimizer_bytes), FormatBytes(m.activation_bytes),
      m.in_flight_micro_batches, FormatBytes(m.buffer_bytes), FormatBytes(m.UsedBytes()),
      FormatBytes(m.usable_bytes));
  out += fmt::format(
      "throughput: {:.0f} tokens/s per GPU ({:.0f} in all); model FLOPs {:.1f} TFLOP/s per GPU, "
      "MFU {} (PaLM: no recompute); hardware FLOPs {:.1f} TFLOP/s, HFU {} (recompute included, "
      "as Megatron-LM counts); bound by {}\n",
      e.tokens_per_s_per_gpu, e.tokens_per_s, e.model_tflops_per_gpu, Percent(e.mfu),
      e.hardware_tflops_per_gpu, Percent(e.hfu), e.bound);
  return out;
}

std::string Ranked(const train::TrainPlan& plan) {
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
  return t.Render() + "\nwhy: " + plan.ranked.front().why + "\n";
}

std::string Cost(const train::TrainingCost& c, const train::TrainRequest& req, double usd) {
  std::string out = fmt::format("\n{} {}: {} {}, {} of compute", FormatCount(c.tokens),
                                c.tokens == 1 ? "token" : "tokens", FormatCount(c.steps),
                                c.steps == 1 ? "step" : "steps", FormatWallClock(c.compute_s));
  if (c.interruptions > 0) {
    // Young's interval beyond the run: it writes no checkpoint before its end.
    const std::string checkpoints =
        c.checkpoint_interval_s < c.compute_s
            ? fmt::format("a checkpoint every {} ({} stall each)",
                          FormatDuration(c.checkpoint_interval_s),
                          FormatDuration(c.checkpoint_write_s))
            : std::string(
                  "no checkpoint before the end (the run is shorter than the interval "
                  "between them)");
    out += fmt::format(
        "; with {:.2g} interruptions expected ({:.3g} per million GPU-hours, {} restart each) "
        "and {}, {} wall clock, goodput {}",
        c.interruptions, 1e6 * req.reliability.interruptions_per_gpu_hour,
        FormatDuration(req.reliability.restart_s), checkpoints, FormatWallClock(c.time_s),
        Percent(c.goodput));
  }
  out += fmt::format("; {} GPU-hours, ${} at ${}/GPU-hour\n", FormatAmount(c.gpu_hours),
                     FormatAmount(c.usd), FormatAmount(usd));
  return out;
}

// The model's own published runs, where the profile states them: a model the engine misses more
// than the rest reads below (or above) the spread here.
std::string ThisModel(const api::MeasuredBand& b, const std::string& gpu,
                      const std::string& model) {
  if (b.this_model.empty()) return "";
  const auto ratio = [](double low, double high) {
    return low == high ? fmt::format("{:.2f}x", low) : fmt::format("{:.2f}-{:.2f}x", low, high);
  };
  std::vector<std::string> parts;
  double low = b.this_model.front().ratio_low, high = b.this_model.front().ratio_high;
  for (const train::ModelGpuSpread& s : b.this_model) {
    parts.push_back(fmt::format("{} {} ({} run{}, {})", s.gpu, ratio(s.ratio_low, s.ratio_high),
                                s.rows, s.rows == 1 ? "" : "s", s.runs));
    low = std::min(low, s.ratio_low);
    high = std::max(high, s.ratio_high);
  }
  const bool here = b.this_model.front().gpu == gpu;
  std::string verdict;
  if (high < b.spread.ratio_p10 || low > b.spread.ratio_p90) {
    verdict = fmt::format(": {} the spread", high < b.spread.ratio_p10 ? "below" : "above");
    if (here) {
      verdict += fmt::format(
          ", so expect {} tokens/s per GPU here at their ratio",
          low == high ? fmt::format("about {:.0f}", b.predicted_tokens_per_s_per_gpu * low)
                      : fmt::format("{:.0f}-{:.0f}", b.predicted_tokens_per_s_per_gpu * low,
                                    b.predicted_tokens_per_s_per_gpu * high));
    }
  }
  // The routing the runs were keyed by, where every one of them was.
  std::string routing = b.this_model.front().moe_routing;
  for (const train::ModelGpuSpread& s : b.this_model) {
    if (s.moe_routing != routing) routing.clear();
  }
  return fmt::format(
      "  {}'s {}runs among them{}: {}{}\n", model, routing.empty() ? "" : routing + " ",
      here ? "" : fmt::format(" (none on {})", gpu), fmt::join(parts, ", "), verdict);
}

// The spread of the engine's published runs around its predictions, applied to the winner.
std::string Measured(const api::MeasuredBand& b, const std::string& gpu, const std::string& model) {
  return fmt::format(
             "measured: {} ran at {:.2f}-{:.2f}x the predicted throughput (10th-90th percentile, "
             "docs/validation/training.md){}: {:.0f}-{:.0f} tokens/s per GPU here, the tokens in "
             "{} to {} wall clock\n",
             b.spread.on, b.spread.ratio_p10, b.spread.ratio_p90,
             b.on_this_gpu ? "" : fmt::format("; none of them on {}, so out of sample", gpu),
             b.tokens_per_s_per_gpu_low, b.tokens_per_s_per_gpu_high, FormatWallClock(b.time_s_low),
             FormatWallClock(b.time_s_high)) +
         ThisModel(b, gpu, model);
}

std::string Sizes(const train::TrainPlan& plan) {
  std::string out =
      "\ntime versus cost across cluster sizes (* = Pareto: no size is both faster and "
      "cheaper):\n";
  Table s({"GPUs", "layout", "step", "tokens/s/GPU", "MFU", "wall time", "goodput", "GPU-hours",
           "$", ""});
  s.SetLeftAligned({1, 9});
  for (const auto& p : plan.sizes) {
    const TrainEstimate& e = p.best.estimate;
    s.AddRow({std::to_string(p.gpus), e.layout.ToString(), FormatSeconds(e.step_s),
              fmt::format("{:.0f}", e.tokens_per_s_per_gpu), Percent(e.mfu),
              FormatWallClock(p.best.cost.time_s), Percent(p.best.cost.goodput),
              FormatAmount(p.best.cost.gpu_hours), FormatAmount(p.best.cost.usd),
              p.pareto ? "*" : ""});
  }
  return out + s.Render();
}

}  // namespace

std::string TrainText(const api::TrainReport& rep) {
  const train::TrainRequest& req = rep.request;
  const ClusterSpec& cluster = rep.cluster;
  const Dtype peak_dtype = cluster.gpu.ComputeDtypeFor(req.config.dtype);
  std::string routing;
  if (rep.model.is_moe()) routing = fmt::format(", {} MoE", req.config.MoeRoutingName());
  if (req.config.mtp_layers > 0) {
    routing += fmt::format(", {} MTP layer{}", req.config.mtp_layers,
                           req.config.mtp_layers == 1 ? "" : "s");
  }
  std::string out = fmt::format(
      "train: {} on {} ({} x {}), engine {}, sequence {}, global batch {} ({} tokens), {}{}; MFU "
      "and HFU over the {} dense peak, {:.0f} TFLOP/s per GPU\n",
      rep.model.name, cluster.name, cluster.num_gpus, cluster.gpu.name, rep.engine.name,
      req.config.seq_len, req.config.global_batch,
      FormatCount(static_cast<double>(req.config.TokensPerIteration())), req.config.PrecisionName(),
      routing, DtypeName(peak_dtype), cluster.gpu.PeakFlopsPerS(peak_dtype) / 1e12);
  const train::TrainPlan& plan = rep.plan;
  out += fmt::format("{} layout{}, {} configurations evaluated, {} fit in memory, in {}\n\n",
                     plan.layouts_considered, plan.layouts_considered == 1 ? "" : "s",
                     plan.configs_evaluated, plan.configs_fitting, FormatSeconds(rep.elapsed_s));
  out += req.only_layout ? Explain(plan.ranked.front()) : Ranked(plan);
  out += Critical(plan.critical);
  out += Cost(plan.ranked.front().cost, req, cluster.gpu.usd_per_gpu_hour);
  if (rep.band) out += Measured(*rep.band, cluster.gpu.name, rep.model.name);
  if (!plan.sizes.empty()) out += Sizes(plan);
  return out;
}

}  // namespace shardwise::text
