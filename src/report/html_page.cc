#include "shardwise/report/html_page.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "answer.h"
#include "plots.h"
#include "shardwise/common/format.h"
#include "shardwise/report/svg.h"

namespace shardwise::report {
std::string Section(const std::string& title, const std::string& figure, const std::string& note) {
  if (figure.empty()) return "";
  return fmt::format("<h2>{}</h2>\n{}<p class=\"note\">{}</p>\n", Escape(title), figure,
                     Escape(note));
}

namespace {

constexpr const char* kStyle = R"(
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1000px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; }
table.summary { border-collapse: collapse; } table.summary td { padding: 2px 12px 2px 0; }
table.summary td:first-child { color: #555; }
figure { margin: 12px 0; } svg.plot { background: #fff; border: 1px solid #ddd; }
svg .axis line { stroke: #333; } svg line.grid { stroke: #eee; }
svg text { font: 11px system-ui, sans-serif; fill: #222; } svg .plot-title { font-weight: 600; font-size: 13px; }
svg .axis-label { font-size: 12px; } svg .box-text { fill: #fff; font-size: 10px; }
p.note { color: #555; max-width: 760px; } pre { background: #f6f6f6; padding: 8px; overflow: auto; }
)";

// Scalar fields of `result` as a two-column table (what the text output's header says).
std::string Summary(const nlohmann::json& result) {
  std::string rows;
  for (const auto& [key, value] : result.items()) {
    if (value.is_structured() || key == "schema_version") continue;
    std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    if (value.is_number_float()) text = FormatPlain(value.get<double>(), 6);
    rows += fmt::format("<tr><td>{}</td><td>{}</td></tr>", Escape(key), Escape(text));
  }
  return "<table class=\"summary\">" + rows + "</table>\n";
}

std::string LayoutSections(const nlohmann::json& result, const nlohmann::json& layouts) {
  const nlohmann::json& top = Field(layouts, 0);
  std::string out;
  out +=
      Section("Where the time goes", PhaseBars(layouts, "prefill") + PhaseBars(layouts, "decode"),
              "Each bar splits one prefill (TTFT) or one decode step (TPOT) into compute-bound "
              "and memory-bound operations, each communication, and the pipeline bubble.");
  out += Section("Decode roofline", RooflinePlot(Field(result, "roofline"), layouts),
                 "Left of the ridge a decode step is limited by HBM bandwidth; larger batches move "
                 "the operating point right, until the step turns compute-bound.");
  // The pipeline figure shows the first layout that pipelines, else the top one.
  const nlohmann::json* piped = &top;
  for (const auto& l : layouts) {
    if (l.value("pp", 1) > 1) {
      piped = &l;
      break;
    }
  }
  out += Section("Pipeline train", PipelineTrain(*piped),
                 "Micro-batches pass the stages in turn; empty slots are the pipeline bubble.");
  out += Section("Layout on the cluster", ClusterMap(Field(result, "cluster_tree"), top),
                 "Each column is a GPU; each row colours it by the group it belongs to. A TP "
                 "group inside one node talks over NVLink; groups spanning nodes use the "
                 "scale-out network.");
  if (result.value("command", "") == "plan") {
    out +=
        Section("Cost per million tokens", CostPlot(Num(top, "usd_per_mtok_output"), 1.0, nullptr),
                "The chosen layout's price at full load grows as 1 / (utilisation x duty "
                "cycle): the GPUs are paid for every hour.");
  }
  return out;
}

// A result whose deployment (docs/json.md) splits prefill and decode into pools.
bool IsDisaggregated(const nlohmann::json& result) {
  const auto d = result.find("deployment");
  return d != result.end() && d->is_object() && Flag(*d, "disaggregated");
}

// The layout of the deployment's pool with `role`.
std::string PoolLayout(const nlohmann::json& result, const std::string& role) {
  for (const nlohmann::json& pool :
       Field(result, "deployment").value("pools", nlohmann::json::array())) {
    if (pool.value("role", std::string()) == role) return pool.value("layout", std::string("?"));
  }
  return "?";
}

// A latency object's value at the SLOs' percentile, in milliseconds ("-" when absent).
std::string AtSloMs(const nlohmann::json& latency) {
  if (!latency.is_object() || !latency.contains("at_slo")) return "-";
  return fmt::format("{:.1f} ms", 1e3 * Num(latency, "at_slo"));
}

// A per-token energy cell ("-" when unknown).
std::string JoulesCell(const nlohmann::json& point) {
  const double j = Num(point, "joules_per_output_token");
  return j > 0 ? fmt::format("{:.3g}", j) : "-";
}

// plan: the ranked layouts at the load (the answer table is above them).
std::string PlanRanking(const nlohmann::json& result) {
  const std::string pct = Field(result, "slo").value("percentile", std::string("p99"));
  std::string rows;
  for (const nlohmann::json& l : Field(result, "layouts")) {
    rows += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0f}</td>"
        "<td>{:.1f}</td><td>{:.3f}</td><td>{}</td><td>{}</td></tr>\n",
        Escape(l.value("layout", std::string())), l.value("gpus", 0), l.value("batch", 0),
        AtSloMs(Field(l, "ttft_s")), AtSloMs(Field(l, "tpot_s")),
        // What the ranking used: the billed tokens at a load, else the layout's own.
        Num(l, "billed_output_tokens_per_s_per_gpu", Num(l, "output_tokens_per_s_per_gpu")),
        Num(l, "output_tokens_per_s_per_user"), Num(l, "usd_per_mtok_output"), JoulesCell(l),
        Flag(l, "meets_slo") ? "yes" : "no");
  }
  return fmt::format(
      "<h2>Ranked layouts</h2>\n<table class=\"summary\"><tr><td>layout</td><td>GPUs</td>"
      "<td>batch</td><td>TTFT {}</td><td>TPOT {}</td><td>tok/s/GPU</td><td>tok/s/user</td>"
      "<td>$/Mtok</td><td>J/tok</td><td>meets SLOs</td></tr>\n{}</table>\n",
      pct, pct, rows);
}

// recommend: the answer, then every candidate it simulated, the answer marked.
std::string RecommendSections(const nlohmann::json& result) {
  const nlohmann::json& best = Field(result, "recommendation");
  const std::string pct = Field(result, "slo").value("percentile", std::string("p99"));
  std::string rows;
  for (const nlohmann::json& c : Field(result, "candidates")) {
    const bool answer = c.value("layout", "") == best.value("layout", "") &&
                        c.value("gpus", 0) == best.value("gpus", 0) &&
                        c.value("cluster", "") == best.value("cluster", "");
    rows += fmt::format(
        "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{:.2f}</td><td>{:.2f}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        answer ? " style=\"font-weight:600\"" : "", Escape(c.value("cluster", std::string())),
        c.value("gpus", 0), Escape(c.value("layout", std::string())),
        Num(c, "capacity_requests_per_s"), Num(c, "rate_requests_per_s"),
        AtSloMs(Field(c, "ttft_s")), AtSloMs(Field(c, "tpot_s")),
        Field(c, "usd_per_mtok_output").is_number()
            ? fmt::format("{:.3f}", Num(c, "usd_per_mtok_output"))
            : "-",
        JoulesCell(Field(c, "at_load")), Escape(c.value("note", std::string())));
  }
  return fmt::format(
      "<h2>Candidates simulated</h2>\n<table class=\"summary\"><tr><td>cluster</td><td>GPUs</td>"
      "<td>deployment</td><td>max req/s</td><td>req/s</td><td>TTFT {}</td><td>TPOT {}</td>"
      "<td>$/Mtok</td><td>J/tok</td><td>verdict</td></tr>\n{}</table>\n<p class=\"note\">Each "
      "candidate was "
      "simulated at the rate to its steady state; the answer (bold) is the first, by GPUs or "
      "cost, that meets both SLOs at the percentile without falling behind.</p>\n",
      pct, pct, rows);
}

// The page's body for a `command` result: its answer table, then the command's figures.
// A simulated latency's CDF ("ttft" or "tpot"), its SLO dashed.
std::string LatencySection(const nlohmann::json& result, const std::string& metric,
                           const std::string& title, const std::string& note) {
  std::string label = metric;
  for (char& c : label) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return Section(title,
                 LatencyDistribution(metric, label + " distribution", Field(result, metric + "_s"),
                                     Field(Field(result, "slo"), "max_" + metric + "_s")),
                 note);
}

StatusOr<std::string> Body(const nlohmann::json& result, const std::string& command) {
  std::string body;
  if (const std::optional<AnswerFacts> answer = AnswerOf(result)) {
    body += AnswerTable(*answer, Field(result, "slo"));
  }
  if (command == "plan") {
    const nlohmann::json& layouts = Field(result, "layouts");
    if (!layouts.is_array()) return Error("plan result has no layouts to draw");
    if (layouts.empty()) {
      // No aggregated layout fits or meets the SLOs: the answer is the split alone.
      if (!AnswerOf(result)) return Error("plan result has no layouts to draw");
      return body;
    }
    body += PlanRanking(result);
    body += Section(
        "Pareto front", ParetoPlot(result),
        "Blue: every (layout, batch) that no other beats on both axes, timed by the step model "
        "from decode steps alone. Orange: the ranked layouts simulated at the load, "
        "prompts interleaved with the decode steps (slower per user); the dashed grey "
        "line joins the chosen one to its point on the front. The ring marks the "
        "chosen deployment, the dashed vertical line the TPOT SLO, if one was set.");
    body += LayoutSections(result, Field(result, "layouts"));
  } else if (command == "explain" && IsDisaggregated(result)) {
    // A disaggregated deployment: the prefill worker's prompt and the decode worker's step.
    const nlohmann::json pools =
        nlohmann::json::array({{{"layout", "prefill " + PoolLayout(result, "prefill")},
                                {"batch", 1},
                                {"prefill", Field(result, "prefill")},
                                {"decode", Field(result, "prefill")}},
                               {{"layout", "decode " + PoolLayout(result, "decode")},
                                {"batch", result.value("batch_per_decode_worker", 0)},
                                {"prefill", Field(result, "decode")},
                                {"decode", Field(result, "decode")}}});
    body += Section("Where the time goes",
                    PhaseBars(nlohmann::json::array({Field(pools, 0)}), "prefill") +
                        PhaseBars(nlohmann::json::array({Field(pools, 1)}), "decode"),
                    "The prefill worker's time for one prompt (TTFT before the KV transfer) and "
                    "the decode worker's time for one step (TPOT), each split by what bounds it.");
  } else if (command == "explain") {
    const nlohmann::json layouts = nlohmann::json::array({result});
    body += LayoutSections(result, layouts);
  } else if (command == "simulate") {
    if (!Field(result, "ttft_s").is_object()) return Error("simulate result has no ttft_s to draw");
    body += LatencySection(result, "ttft", "Time to first token",
                           "Share of requests whose first token came within a time; dots mark "
                           "p50, p90, p99, the dashed line the TTFT SLO, if one was set.");
    body += LatencySection(result, "tpot", "Time per output token",
                           "Mean time between a request's output tokens after the first; the "
                           "dashed line is the TPOT SLO, if one was set.");
    body += Section("KV cache over time",
                    KvOccupancyPlot(Field(Field(result, "kv_occupancy"), "series")),
                    "Fraction of the KV-cache capacity in use across replicas.");
  } else if (command == "price") {
    if (!Field(result, "full_load").is_object())
      return Error("price result has no full_load to draw");
    body += Section(
        "Cost per million tokens",
        CostPlot(Num(Field(result, "full_load"), "usd_per_mtok_output"),
                 Num(Field(result, "duty_cycle"), "fraction", 1.0),
                 Field(result, "break_even").value("api_usd_per_mtok_output", nlohmann::json())),
        "Cost falls as 1 / (utilisation x duty cycle); where the curve crosses the "
        "API's price is the break-even utilisation.");
  } else if (command == "recommend" && Field(result, "recommendation").is_object()) {
    body += RecommendSections(result);
  } else if (command == "train") {
    if (!Field(result, "step_parts").is_array()) return Error("train result has no step_parts");
    // What the answer states must be figures a run can have.
    for (const char* key : {"step_s", "tokens_per_s_per_gpu", "time_s", "gpus"}) {
      const nlohmann::json& v = Field(result, key);
      if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>())) {
        return Error(
            fmt::format("train result's \"{}\" is {}, not a positive number; write it "
                        "again with 'shardwise train ... --json > RESULT.json'",
                        key, v.dump()));
      }
    }
    body += TrainSections(result);
  } else {
    return Error(
        fmt::format("cannot draw a '{}' result; the page draws plan, explain, simulate, price, "
                    "recommend and train results",
                    command));
  }
  return body;
}

}  // namespace

StatusOr<std::string> RenderHtmlPage(const nlohmann::json& result) {
  if (!result.is_object() || !result.contains("command") || !Field(result, "command").is_string()) {
    return Error(
        "not a shardwise result: the JSON has no \"command\" field; write one with "
        "'shardwise plan|explain|simulate|price|recommend|train ... --json > RESULT.json'");
  }
  const std::string command = Field(result, "command");
  std::string body;
  try {
    SW_ASSIGN_OR_RETURN(body, Body(result, command));
  } catch (const nlohmann::json::exception& e) {
    // A saved result edited by hand, or cut short: the field that broke is in e.what().
    return Error(fmt::format(
        "the '{}' result is incomplete or malformed ({}); write it again with 'shardwise {} ... "
        "--json > RESULT.json'",
        command, e.what(), command));
  }
  const std::string title =
      fmt::format("shardwise {}: {} on {}", command, result.value("model", std::string("?")),
                  result.value("cluster", std::string("?")));
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">{}\n<title>{}</title>"
      "<style>{}</style></head>\n<body>\n<h1>{}</h1>\n{}"
      "<h2>Inputs</h2><details><summary>The question's settings and scalar results</summary>{}"
      "</details>\n"
      "<h2>Data</h2><details><summary>The JSON this page was drawn from (as --json prints "
      "it)</summary><pre>{}</pre></details>\n</body></html>\n",
      kGeneratorMeta, Escape(title), kStyle, Escape(title), body, Summary(result),
      Escape(result.dump(2)));
}

}  // namespace shardwise::report
