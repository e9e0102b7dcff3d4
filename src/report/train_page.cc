// A training run's page: the answer (layout, throughput, wall clock, cost, goodput, memory),
// where one optimizer step's time goes, the memory per GPU, wall clock against cost across the
// cluster sizes tried, how far to trust it, and the layouts ranked (docs/json.md, train).
#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "plots.h"
#include "shardwise/common/format.h"
#include "shardwise/report/svg.h"

namespace shardwise::report {
namespace {

std::string Row(const char* field, const std::string& name, const std::string& value) {
  return fmt::format("<tr data-field=\"{}\"><td>{}</td><td>{}</td></tr>\n", field, Escape(name),
                     Escape(value));
}

// The answer: what to run, how fast, how long and at what cost.
std::string TrainAnswer(const nlohmann::json& r) {
  const std::string layout = fmt::format(
      "{} on {} x {} (micro-batch {}, {} micro-batches, {}, ZeRO-{}, recompute {})",
      r.value("layout", std::string("?")), Num(r, "gpus"), r.value("gpu", std::string("?")),
      Num(r, "micro_batch"), Num(r, "micro_batches"), r.value("schedule", std::string("?")),
      Num(r, "zero"), r.value("recompute", std::string("?")));
  std::string rows =
      Row("layout", "layout", layout) + Row("why", "why", r.value("why", std::string()));
  rows += Row("throughput", "throughput",
              fmt::format("{:.0f} tokens/s per GPU; MFU {:.1f}%, HFU {:.1f}% (bound by {})",
                          Num(r, "tokens_per_s_per_gpu"), 100 * Num(r, "mfu"), 100 * Num(r, "hfu"),
                          r.value("bound", std::string("?"))));
  rows += Row("wall_clock", "wall clock",
              fmt::format("{} for {} tokens ({} of compute; goodput {:.1f}% after "
                          "interruptions and checkpoints)",
                          FormatWallClock(Num(r, "time_s")), FormatCount(Num(r, "tokens")),
                          FormatWallClock(Num(r, "compute_s")), 100 * Num(r, "goodput")));
  rows += Row("cost", "cost",
              fmt::format("${}: {} GPU-hours at ${:.2f} per GPU-hour", FormatAmount(Num(r, "usd")),
                          FormatAmount(Num(r, "gpu_hours")), Num(r, "usd_per_gpu_hour")));
  const nlohmann::json& memory = Field(r, "memory");
  rows += Row("memory", "memory per GPU",
              fmt::format("{} of {} usable", FormatBytes(Num(r, "memory_per_gpu_bytes")),
                          FormatBytes(Num(memory, "usable_bytes"))));
  return "<table class=\"answer\">" + rows + "</table>\n";
}

// One optimizer step of the chosen layout as a bar split into its parts.
std::string StepBar(const nlohmann::json& r) {
  const nlohmann::json& parts = Field(r, "step_parts");
  if (!parts.is_array() || parts.empty()) return "";
  std::vector<std::string> names;
  std::vector<double> seconds;
  for (const nlohmann::json& part : parts) {
    names.push_back(part.value("part", std::string("?")));
    seconds.push_back(Num(part, "time_s"));
  }
  StackedBars bars("step", "One optimizer step of the chosen layout", "seconds", "layout", names,
                   kPalette);
  bars.AddBar(r.value("layout", std::string("step")), seconds);
  return bars.Render();
}

// The memory per GPU by what holds it.
std::string MemoryBar(const nlohmann::json& r) {
  const nlohmann::json& m = Field(r, "memory");
  if (!m.is_object()) return "";
  const std::vector<std::pair<const char*, const char*>> kinds = {
      {"weights_bytes", "weights"},
      {"grads_bytes", "gradients"},
      {"optimizer_bytes", "optimizer state"},
      {"activations_bytes", "activations"},
      {"buffers_bytes", "buffers"}};
  std::vector<std::string> names;
  std::vector<double> gigabytes;
  for (const auto& [key, name] : kinds) {
    names.emplace_back(name);
    gigabytes.push_back(Num(m, key) / 1e9);
  }
  StackedBars bars("memory",
                   fmt::format("Memory per GPU ({} usable)", FormatBytes(Num(m, "usable_bytes"))),
                   "GB", "layout", names, kPalette);
  bars.AddBar(r.value("layout", std::string("per GPU")), gigabytes);
  return bars.Render();
}

// Wall clock against dollars for the tokens at each cluster size tried, the chosen one marked.
std::string SizesPlot(const nlohmann::json& r) {
  const nlohmann::json& sizes = Field(r, "sizes");
  if (!sizes.is_array() || sizes.size() < 2) return "";
  std::vector<std::pair<double, double>> points;
  std::vector<std::string> labels;
  std::vector<double> xs, ys;
  for (const nlohmann::json& s : sizes) {
    points.emplace_back(Num(s, "time_s") / kSecondsPerDay, Num(s, "usd"));
    labels.push_back(fmt::format("{:.0f} GPUs as {}: {}, ${}", Num(s, "gpus"),
                                 s.value("layout", std::string("?")),
                                 FormatWallClock(Num(s, "time_s")), FormatAmount(Num(s, "usd"))));
    xs.push_back(points.back().first);
    ys.push_back(points.back().second);
  }
  XyPlot plot("sizes", "Wall clock against cost for the tokens, by cluster size",
              FitAxis("wall clock (days)", xs, true, false),
              FitAxis("$ for the tokens", ys, false, true));
  plot.AddPoints("cluster sizes tried", points, kPalette[0], labels);
  plot.AddHighlight(Num(r, "time_s") / kSecondsPerDay, Num(r, "usd"),
                    fmt::format("{:.0f} GPUs (this run)", Num(r, "gpus")));
  return plot.Render();
}

// How far to trust it, where one optimizer step's time goes (a table), and the layouts ranked.
std::string TrustStepAndRanked(const nlohmann::json& result) {
  const double step_s = Num(result, "step_s");
  std::string parts;
  for (const nlohmann::json& part : Field(result, "step_parts")) {
    const double s = Num(part, "time_s");
    parts += fmt::format("<tr><td>{}</td><td>{:.4g} s</td><td>{:.1f}%</td></tr>",
                         Escape(part.value("part", std::string("?"))), s,
                         step_s > 0 ? 100 * s / step_s : 0.0);
  }
  std::string ranked;
  for (const nlohmann::json& l : Field(result, "ranked")) {
    ranked += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{:.4g} "
        "s</td><td>{:.0f}</td><td>{:.1f}%</td><td>{}</td></tr>",
        Escape(l.value("layout", std::string("?"))), Escape(l.value("schedule", std::string())),
        Num(l, "step_s"), Num(l, "tokens_per_s_per_gpu"), 100 * Num(l, "mfu"),
        Escape(l.value("bound", std::string())));
  }
  std::string trust;
  for (const nlohmann::json& note : Field(result, "notes")) {
    if (note.is_string()) trust += "<li>" + Escape(note.get<std::string>()) + "</li>";
  }
  const nlohmann::json& measured = Field(result, "measured");
  if (measured.is_object()) {
    trust += fmt::format(
        "<li>{} ran at {:.2f}-{:.2f}x the predicted throughput (10th-90th percentile){}: "
        "{:.0f}-{:.0f} tokens/s per GPU here</li>",
        Escape(measured.value("on", std::string())), Num(Field(measured, "ratio"), "p10"),
        Num(Field(measured, "ratio"), "p90"),
        measured.value("on_this_gpu", false) ? "" : "; none of them on this GPU",
        Num(Field(measured, "tokens_per_s_per_gpu"), "low"),
        Num(Field(measured, "tokens_per_s_per_gpu"), "high"));
    // The model's own runs among them, where one band per engine would hide a model it misses.
    for (const nlohmann::json& own : Field(measured, "this_model")) {
      const double low = Num(Field(own, "ratio"), "low"), high = Num(Field(own, "ratio"), "high");
      const int64_t runs = own.value("rows", int64_t{0});
      trust += fmt::format(
          "<li>this model's runs on {}: {}x ({} run{}, {})</li>",
          Escape(own.value("gpu", std::string())),
          low == high ? fmt::format("{:.2f}", low) : fmt::format("{:.2f}-{:.2f}", low, high), runs,
          runs == 1 ? "" : "s", Escape(own.value("runs", std::string())));
    }
  }
  return Section("How far to trust it", trust.empty() ? "" : "<ul>" + trust + "</ul>\n",
                 "The spread of the engine's published runs around its predictions, and what "
                 "the prediction leaves out.") +
         Section("Where the step goes",
                 "<table class=\"summary\"><tr><th>part</th><th>time</th><th>share</th></tr>" +
                     parts + "</table>\n",
                 "One optimizer step of the chosen layout, split as the text output splits it.") +
         Section("Layouts ranked",
                 "<table class=\"summary\"><tr><th>layout</th><th>schedule</th><th>step</th>"
                 "<th>tokens/s per GPU</th><th>MFU</th><th>bound</th></tr>" +
                     ranked + "</table>\n",
                 "The fastest configuration of each layout, fastest first.");
}

}  // namespace

std::string TrainSections(const nlohmann::json& result) {
  return Section("Answer", TrainAnswer(result),
                 "The chosen layout and what it costs to train the tokens asked for.") +
         Section("One step", StepBar(result),
                 "Where one optimizer step of the chosen layout goes, part by part.") +
         Section("Memory per GPU", MemoryBar(result),
                 "What each GPU holds of the chosen layout, against what it may use.") +
         Section("Cluster sizes", SizesPlot(result),
                 "Each cluster size tried, with its fastest layout: a larger cluster trains "
                 "sooner and, where it scales less than linearly, costs more.") +
         TrustStepAndRanked(result);
}

}  // namespace shardwise::report
