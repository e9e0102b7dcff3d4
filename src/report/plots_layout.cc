// Figures about layouts: the Pareto front, per-phase time bars, the decode roofline, the
// pipeline train of micro-batches and where a layout's groups sit on the cluster.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "plots.h"
#include "shardwise/report/svg.h"

namespace shardwise::report {
namespace {

constexpr size_t kTopLayouts = 5;       // layouts drawn in the comparison figures
constexpr int64_t kMaxMappedGpus = 64;  // GPUs drawn on the cluster map

}  // namespace

const nlohmann::json& Field(const nlohmann::json& j, const std::string& key) {
  static const nlohmann::json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

const nlohmann::json& Field(const nlohmann::json& j, size_t index) {
  static const nlohmann::json kNull;
  return j.is_array() && index < j.size() ? j[index] : kNull;
}

double Num(const nlohmann::json& j, const char* key, double fallback) {
  const nlohmann::json& v = Field(j, key);
  return v.is_number() ? v.get<double>() : fallback;
}

bool Flag(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = Field(j, key);
  return v.is_boolean() && v.get<bool>();
}

namespace {

using Points = std::vector<std::pair<double, double>>;

// (tokens/s per user, tokens/s per GPU) of a point, and its tooltip.
std::pair<double, double> Speeds(const nlohmann::json& p) {
  return {Num(p, "output_tokens_per_s_per_user"), Num(p, "output_tokens_per_s_per_gpu")};
}

std::string SpeedLabel(const std::string& what, const std::pair<double, double>& at) {
  return fmt::format("{}: {:.1f} tok/s/user, {:.1f} tok/s/GPU", what, at.first, at.second);
}

}  // namespace

std::string ParetoPlot(const nlohmann::json& plan) {
  // Two measures on one plane: the front is the step model's decode steps alone at each batch;
  // the ranked layouts are simulated at the load, prompts interleaved with the decode steps,
  // which is slower per user. The chosen deployment is drawn where it was simulated, and a
  // dashed line joins it to its own (layout, batch) on the front.
  const nlohmann::json& pareto = Field(plan, "pareto");
  const nlohmann::json& layouts = Field(plan, "layouts");
  if (!pareto.is_array() || pareto.empty() || !layouts.is_array() || layouts.empty()) return "";
  Points front, ranked;
  std::vector<std::string> front_labels, ranked_labels;
  std::vector<double> xs, ys;
  const auto add = [&](const nlohmann::json& p, Points& to, std::vector<std::string>& labels,
                       const std::string& what) {
    to.push_back(Speeds(p));
    labels.push_back(SpeedLabel(what, to.back()));
    xs.push_back(to.back().first);
    ys.push_back(to.back().second);
  };
  for (const auto& p : pareto) {
    add(p, front, front_labels,
        fmt::format("{} batch {}, decode only", p.value("layout", ""), p.value("batch", 0)));
  }
  for (const auto& l : layouts) {
    add(l, ranked, ranked_labels,
        fmt::format("{} batch {}, simulated at the load", l.value("layout", ""),
                    l.value("batch", 0)));
  }
  const nlohmann::json& verdict = Field(plan, "verdict");
  const nlohmann::json& split = Field(Field(plan, "disaggregated"), "at_load");
  const bool disaggregated =
      verdict.is_object() && verdict.value("winner", "") == "disaggregated" && split.is_object();
  const std::pair<double, double> chosen = disaggregated ? Speeds(split) : ranked.front();
  xs.push_back(chosen.first);
  ys.push_back(chosen.second);
  const double max_tpot = Num(Field(plan, "slo"), "max_tpot_s", 0);
  if (max_tpot > 0) xs.push_back(1.0 / max_tpot);
  XyPlot plot("pareto", "Pareto front: speed per user against throughput per GPU",
              FitAxis("output tokens/s per user", xs, false, true),
              FitAxis("output tokens/s per GPU", ys, false, true));
  Points sorted = front;
  std::sort(sorted.begin(), sorted.end());
  plot.AddLine("front (decode steps alone)", sorted, "#9ecae1");
  plot.AddPoints("Pareto-optimal (layout, batch)", front, kPalette[0], front_labels);
  plot.AddPoints("simulated at the load", ranked, kPalette[1], ranked_labels);
  if (disaggregated) {
    plot.AddPoints("disaggregated, simulated", {chosen}, kPalette[2],
                   {SpeedLabel("the disaggregated deployment, simulated at the load", chosen)});
  }
  const nlohmann::json& top = Field(layouts, 0);
  for (size_t i = 0; i < pareto.size() && !disaggregated; ++i) {
    if (Field(pareto, i).value("layout", "") == top.value("layout", "") &&
        Field(pareto, i).value("batch", 0) == top.value("batch", 0)) {
      plot.AddLine("the same (layout, batch)", {front[i], chosen}, "#999", true);
      break;
    }
  }
  const nlohmann::json& deployment = Field(plan, "deployment");
  plot.AddHighlight(
      chosen.first, chosen.second,
      fmt::format("chosen: {}", deployment.is_object() ? deployment.value("name", std::string("?"))
                                                       : top.value("layout", std::string("?"))));
  if (max_tpot > 0) {
    plot.AddVerticalRule(1.0 / max_tpot, fmt::format("TPOT SLO {:g} ms", max_tpot * 1e3));
  }
  return plot.Render();
}

std::string PhaseBars(const nlohmann::json& layouts, const std::string& phase) {
  if (!layouts.is_array() || layouts.empty()) return "";
  static const std::vector<std::pair<const char*, const char*>> kParts = {
      {"compute_s", "compute (FLOP/s)"}, {"memory_s", "memory (HBM)"}, {"tp_comm_s", "TP comm"},
      {"ep_comm_s", "EP comm"},          {"cp_comm_s", "CP comm"},     {"pp_comm_s", "PP comm"},
      {"bubble_s", "pipeline bubble"}};
  std::vector<std::string> names;
  for (const auto& [key, name] : kParts) names.emplace_back(name);
  const bool prefill = phase == "prefill";
  StackedBars bars(
      "phases-" + phase,
      prefill ? "Prefill of one prompt (TTFT), per layout" : "One decode step (TPOT), per layout",
      prefill ? "milliseconds per prompt" : "milliseconds per step", "layout, batch", names,
      kPalette);
  for (size_t i = 0; i < layouts.size() && i < kTopLayouts; ++i) {
    const nlohmann::json& p = Field(Field(layouts, i), phase);
    std::vector<double> values;
    for (const auto& [key, name] : kParts) values.push_back(Num(p, key) * 1e3);
    bars.AddBar(fmt::format("{} b{}", Field(layouts, i).value("layout", ""),
                            Field(layouts, i).value("batch", 0)),
                values);
  }
  return bars.Render();
}

std::string RooflinePlot(const nlohmann::json& roofline, const nlohmann::json& layouts) {
  if (!roofline.is_object() || !Field(roofline, "points").is_array() ||
      Field(roofline, "points").empty()) {
    return "";
  }
  std::vector<std::pair<double, double>> curve;
  std::vector<double> xs, ys;
  for (const auto& p : Field(roofline, "points")) {
    const double x = Num(p, "arithmetic_intensity"), y = Num(p, "attainable_flops_per_s") / 1e12;
    curve.emplace_back(x, y);
    xs.push_back(x);
    ys.push_back(y);
  }
  std::vector<std::pair<double, double>> ops;
  std::vector<std::string> labels;
  for (size_t i = 0; i < layouts.size() && i < kTopLayouts; ++i) {
    const nlohmann::json& d = Field(Field(layouts, i), "decode");
    const double flops = Num(d, "flops"), bytes = Num(d, "hbm_bytes"), t = Num(d, "total_s");
    if (!(flops > 0 && bytes > 0 && t > 0)) continue;
    ops.emplace_back(flops / bytes, flops / t / 1e12);
    labels.push_back(fmt::format("{} batch {}: {:.1f} FLOPs/byte, {:.1f} TFLOP/s per GPU",
                                 Field(layouts, i).value("layout", ""),
                                 Field(layouts, i).value("batch", 0), flops / bytes,
                                 flops / t / 1e12));
    xs.push_back(ops.back().first);
    ys.push_back(ops.back().second);
  }
  XyPlot plot("roofline", "Decode roofline of one GPU, with each layout's operating point",
              FitAxis("arithmetic intensity (FLOPs per byte of HBM traffic)", xs, true, false),
              FitAxis("TFLOP/s per GPU", ys, true, false));
  plot.AddLine("attainable (roofline)", curve, "#444");
  plot.AddPoints("decode operating points", ops, kPalette[1], labels);
  const double ridge = Num(roofline, "ridge_flops_per_byte");
  if (ridge > 0) plot.AddVerticalRule(ridge, fmt::format("ridge {:.0f}", ridge));
  return plot.Render();
}

std::string PipelineTrain(const nlohmann::json& layout) {
  const nlohmann::json& p = Field(layout, "pipeline");
  const int64_t stages = p.value("stages", 0), micro = p.value("micro_batches", 0);
  const double t = Num(p, "stage_time_s");
  if (stages < 1 || micro < 1 || !(t > 0) || stages > 64 || micro > 64) return "";
  // Two decode cycles: micro-batch j enters stage s at slot s + j; a cycle lasts
  // max(stages, micro-batches) slots, and what a stage does not fill is the bubble.
  const int64_t cycle = std::max(stages, micro);
  std::vector<std::string> rows;
  for (int64_t s = 0; s < stages; ++s) rows.push_back(fmt::format("stage {}", s));
  BoxChart chart("pipeline",
                 fmt::format("Pipeline train of {}: {} micro-batch{} through {} stage{}, two "
                             "decode steps",
                             layout.value("layout", ""), micro, micro == 1 ? "" : "es", stages,
                             stages == 1 ? "" : "s"),
                 Axis{"time (ms)", 0, static_cast<double>(2 * cycle + stages - 1) * t * 1e3},
                 "pipeline stage", rows);
  for (int64_t k = 0; k < 2; ++k) {
    for (int64_t s = 0; s < stages; ++s) {
      for (int64_t j = 0; j < micro; ++j) {
        const double start = static_cast<double>(k * cycle + s + j) * t * 1e3;
        chart.AddBox(static_cast<size_t>(s), start, start + t * 1e3,
                     kPalette[static_cast<size_t>(j) % kPalette.size()], fmt::format("m{}", j),
                     fmt::format("step {}, micro-batch {}, stage {}", k + 1, j, s));
      }
    }
  }
  return chart.Render();
}

std::string ClusterMap(const nlohmann::json& tree, const nlohmann::json& layout) {
  if (!tree.is_object() || !Field(tree, "levels").is_array() || Field(tree, "levels").empty())
    return "";
  const int64_t tp = layout.value("tp", 1), cp = layout.value("cp", 1), dp = layout.value("dp", 1),
                pp = layout.value("pp", 1);
  const int64_t gpus = std::min<int64_t>(tp * cp * dp * pp, kMaxMappedGpus);
  const int64_t per_node =
      std::max<int64_t>(1, Field(Field(tree, "levels"), 0).value("fan_out", 8));
  if (gpus < 1) return "";
  const std::vector<std::string> rows = {"TP group", "CP group", "DP replica", "PP stage"};
  BoxChart chart("cluster",
                 fmt::format("Where {} puts its ranks: the first {} GPUs, grouped by {}",
                             layout.value("layout", ""), gpus,
                             Field(Field(tree, "levels"), 0).value("name", std::string("node"))),
                 Axis{"GPU (rank: TP innermost, then CP, DP, PP)", 0, static_cast<double>(gpus)},
                 "group", rows);
  for (int64_t n = 0; n * per_node < gpus; ++n) {
    chart.AddGroup(
        static_cast<double>(n * per_node), static_cast<double>(std::min(gpus, (n + 1) * per_node)),
        fmt::format("{} {}", Field(Field(tree, "levels"), 0).value("name", std::string("node")),
                    n));
  }
  for (int64_t r = 0; r < gpus; ++r) {
    const int64_t tp_i = r % tp, cp_i = (r / tp) % cp, dp_i = (r / (tp * cp)) % dp,
                  pp_i = r / (tp * cp * dp);
    const int64_t group[4] = {r / tp, r / (tp * cp) * tp + tp_i, dp_i, pp_i};
    const int64_t index[4] = {tp_i, cp_i, dp_i, pp_i};
    for (size_t row = 0; row < 4; ++row) {
      chart.AddBox(
          row, static_cast<double>(r), static_cast<double>(r + 1),
          kPalette[static_cast<size_t>(group[row]) % kPalette.size()], std::to_string(index[row]),
          fmt::format("GPU {}: {} {} (rank {} in it)", r, rows[row], group[row], index[row]));
    }
  }
  return chart.Render();
}

}  // namespace shardwise::report
