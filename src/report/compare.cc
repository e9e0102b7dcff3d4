#include "shardwise/report/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "shardwise/common/format.h"
#include "shardwise/report/schema.h"

namespace shardwise::report {
namespace {

// Two figures within this fraction of each other are level: as plan's ranking ties them, and
// above the seed-to-seed noise of a simulated percentile (two seeds of one deployment differed
// by 1% in p50 TTFT).
constexpr double kLevelFraction = 0.02;

// How a metric's values print.
enum class Unit { kPlain, kSeconds, kWallClock, kBytes };

struct Metric {
  const char* path;  // JSON pointer into the result
  const char* name;
  bool higher_is_better;
  // Whether it may break a tie on the first metric: not a measured window's throughput, whose
  // difference at one offered rate is the arrivals' sampling noise.
  bool breaks_ties = true;
  Unit unit = Unit::kPlain;
  // A train result's figure for all its tokens: where the two train different token counts, it
  // is compared per billion tokens, under this name.
  const char* per_billion_tokens = nullptr;
};

// Headline metrics per command; the first decides the verdict.
const std::vector<Metric>& MetricsFor(const std::string& command) {
  static const std::vector<Metric> kPlan = {
      {"/layouts/0/billed_output_tokens_per_s_per_gpu",
       "output tokens/s per GPU billed at the load", true},
      {"/layouts/0/output_tokens_per_s_per_gpu", "output tokens/s per GPU", true, false},
      {"/layouts/0/output_tokens_per_s_per_user", "output tokens/s per user", true},
      {"/layouts/0/output_tokens_per_s", "output tokens/s, all GPUs", true, false},
      {"/layouts/0/ttft_s/mean", "TTFT at the load, mean (s)", false, true, Unit::kSeconds},
      {"/layouts/0/tpot_s/mean", "TPOT at the load, mean (s)", false, true, Unit::kSeconds},
      {"/layouts/0/ttft_s/p99", "TTFT at the load, p99 (s)", false, true, Unit::kSeconds},
      {"/layouts/0/usd_per_mtok_output", "$ per million output tokens", false},
      {"/layouts/0/batch", "batch per replica", true},
      {"/layouts/0/memory_per_gpu_bytes", "memory per GPU (bytes)", false, true, Unit::kBytes},
      {"/deployment/gpus", "GPUs deployed", false}};
  static const std::vector<Metric> kExplain = {
      {"/output_tokens_per_s_per_gpu", "output tokens/s per GPU", true},
      {"/output_tokens_per_s_per_user", "output tokens/s per user", true},
      {"/unloaded_ttft_s", "TTFT, unloaded (s)", false, true, Unit::kSeconds},
      {"/decode_tpot_s", "TPOT of the decode step (s)", false, true, Unit::kSeconds},
      {"/decode/compute_s", "decode compute (s)", false, true, Unit::kSeconds},
      {"/decode/memory_s", "decode memory (s)", false, true, Unit::kSeconds},
      {"/decode/tp_comm_s", "decode TP comm (s)", false, true, Unit::kSeconds},
      {"/decode/ep_comm_s", "decode EP comm (s)", false, true, Unit::kSeconds},
      {"/decode/bubble_s", "decode bubble (s)", false, true, Unit::kSeconds},
      {"/usd_per_mtok_output", "$ per million output tokens at that throughput", false},
      {"/gpus", "GPUs", false}};
  static const std::vector<Metric> kSimulate = {
      {"/throughput/billed_output_tokens_per_s", "output tokens/s billed (offered when kept up)",
       true},
      {"/throughput/output_tokens_per_s", "output tokens/s", true, false},
      {"/ttft_s/p50", "TTFT p50 (s)", false, true, Unit::kSeconds},
      {"/ttft_s/p99", "TTFT p99 (s)", false, true, Unit::kSeconds},
      {"/tpot_s/p50", "TPOT p50 (s)", false, true, Unit::kSeconds},
      {"/tpot_s/p99", "TPOT p99 (s)", false, true, Unit::kSeconds},
      {"/goodput/request_fraction", "requests within SLO", true},
      {"/utilization/busy_fraction", "busy fraction", true},
      {"/cost/usd_per_mtok_output", "$ per million output tokens", false},
      {"/gpus", "GPUs", false}};
  static const std::vector<Metric> kPrice = {
      {"/usd_per_mtok_output", "$ per million output tokens at the operating point", false},
      {"/at_duty_cycle/usd_per_mtok_output", "$ per Mtok output at the duty cycle", false},
      {"/at_duty_cycle/usd_per_mtok_input_share", "$ per Mtok input (its share of the bill)",
       false},
      {"/operating_point/point/output_tokens_per_s", "output tokens/s", true},
      {"/operating_point/point/ttft_s/at_slo", "TTFT at the SLO's percentile (s)", false, true,
       Unit::kSeconds},
      {"/operating_point/point/tpot_s/at_slo", "TPOT at the SLO's percentile (s)", false, true,
       Unit::kSeconds},
      {"/gpus", "GPUs", false},
      {"/break_even/output_utilization", "break-even utilisation (output)", false},
      {"/demand/gpus", "GPUs for the demand", false}};
  static const std::vector<Metric> kRecommend = {
      {"/recommendation/usd_per_mtok_output", "$ per million output tokens at the load", false},
      {"/recommendation/gpus", "GPUs", false},
      {"/recommendation/rate_requests_per_s", "requests/s served", true},
      {"/recommendation/ttft_s/at_slo", "TTFT at the SLO's percentile (s)", false, true,
       Unit::kSeconds},
      {"/recommendation/tpot_s/at_slo", "TPOT at the SLO's percentile (s)", false, true,
       Unit::kSeconds}};
  static const std::vector<Metric> kTrain = {
      {"/tokens_per_s_per_gpu", "tokens/s per GPU", true},
      {"/time_s", "wall clock for the tokens (s)", false, true, Unit::kWallClock,
       "wall clock per billion tokens (s)"},
      {"/usd", "$ for the tokens", false, true, Unit::kPlain, "$ per billion tokens"},
      {"/step_s", "step (s)", false, true, Unit::kSeconds},
      {"/mfu", "MFU (each over its own format's peak)", true},
      {"/goodput", "goodput", true},
      {"/memory_per_gpu_bytes", "memory per GPU (bytes)", false, true, Unit::kBytes},
      {"/gpus", "GPUs", false}};
  static const std::vector<Metric> kNone;
  if (command == "plan") return kPlan;
  if (command == "explain") return kExplain;
  if (command == "simulate") return kSimulate;
  if (command == "price") return kPrice;
  if (command == "recommend") return kRecommend;
  if (command == "train") return kTrain;
  return kNone;
}

// Settings shown when they differ.
const std::vector<std::pair<const char*, const char*>> kInputs = {
    {"/model", "model"},
    {"/cluster", "cluster"},
    {"/gpu", "GPU"},
    {"/gpus", "GPUs"},
    {"/dtype", "weights"},
    {"/kv_dtype", "KV cache"},
    {"/layout", "layout"},
    {"/precision", "precision"},
    {"/moe_routing", "MoE routing"},
    {"/mtp_layers", "MTP layers"},
    {"/engine", "engine"},
    {"/usd_per_gpu_hour", "$ per GPU-hour"},
    {"/seq_len", "sequence"},
    {"/global_batch", "global batch"},
    {"/tokens", "tokens"},
    {"/pipeline_layout", "pipeline layout"},
    {"/deployment/name", "deployment"},
    {"/recommendation/layout", "recommended layout"},
    {"/rate_requests_per_s", "rate (requests/s)"},
    {"/percentile", "percentile"},
    {"/isl", "ISL"},
    {"/osl", "OSL"},
    {"/lengths/input_distribution", "ISL distribution"},
    {"/lengths/output_distribution", "OSL distribution"},
    {"/lengths/length_cv", "length CV"},
    {"/objective", "objective"},
    {"/duty_cycle/fraction", "duty cycle"}};

std::string Show(const nlohmann::json& v, Unit unit = Unit::kPlain) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() && unit != Unit::kPlain) {
    const double x = v.get<double>();
    return unit == Unit::kSeconds     ? FormatSeconds(x)
           : unit == Unit::kWallClock ? FormatWallClock(x)
                                      : FormatBytes(x);
  }
  if (v.is_number_float()) return FormatPlain(v.get<double>(), 4);
  return v.dump();
}

// A plan result as the deployment plan chose: where the disaggregated split wins (its verdict),
// the ranked aggregated layouts' first is not the choice, so the split's figures at the load
// stand in its place (a split has no one batch or memory per GPU).
nlohmann::json PlanChoice(const nlohmann::json& j) {
  const nlohmann::json::json_pointer winner("/verdict/winner"), split("/disaggregated/at_load");
  if (!j.contains(winner) || j.at(winner) != "disaggregated" || !j.contains(split)) return j;
  nlohmann::json out = j;
  nlohmann::json chosen = j.at(split);
  chosen["layout"] = j.at("/disaggregated/name"_json_pointer);
  chosen["why"] = j.value("/verdict/why"_json_pointer, nlohmann::json());
  out["layouts"] = nlohmann::json::array({chosen});
  return out;
}

const nlohmann::json& At(const nlohmann::json& j, const char* path) {
  static const nlohmann::json kNull;
  const nlohmann::json::json_pointer p(path);
  return j.contains(p) ? j.at(p) : kNull;
}

}  // namespace

StatusOr<Comparison> CompareResults(const nlohmann::json& result_a,
                                    const nlohmann::json& result_b) {
  const nlohmann::json a = PlanChoice(result_a), b = PlanChoice(result_b);
  auto command = [](const nlohmann::json& j) {
    return j.is_object() && j.contains("command") && j["command"].is_string()
               ? j["command"].get<std::string>()
               : std::string();
  };
  const std::string ca = command(a), cb = command(b);
  if (ca.empty() || cb.empty()) {
    return Error("compare needs two shardwise results (each from a command's --json)");
  }
  if (ca != cb) {
    return Error(
        fmt::format("cannot compare a {} result with a {} result; compare two results "
                    "of the same command",
                    ca, cb));
  }
  if (MetricsFor(ca).empty()) return Error(fmt::format("compare does not know '{}' results", ca));
  // Results of another schema name their metrics otherwise (docs/json.md).
  for (const auto& [side, j] : {std::pair{"A", &a}, std::pair{"B", &b}}) {
    const int version = j->value("schema_version", 0);
    if (version != kSchemaVersion) {
      return Error(fmt::format(
          "result {} has schema_version {}, this shardwise reads {}; re-run the command that "
          "wrote it",
          side, version, kSchemaVersion));
    }
  }
  Comparison c;
  c.command = ca;
  for (const auto& [path, name] : kInputs) {
    const nlohmann::json &va = At(a, path), &vb = At(b, path);
    if (va != vb) c.inputs.push_back({name, Show(va), Show(vb), std::nullopt, true, true, va, vb});
  }
  // Two train results of different token counts weigh their totals per billion tokens.
  const nlohmann::json &tokens_a = At(a, "/tokens"), &tokens_b = At(b, "/tokens");
  const bool per_billion = tokens_a != tokens_b && tokens_a.is_number() && tokens_b.is_number() &&
                           tokens_a.get<double>() > 0 && tokens_b.get<double>() > 0;
  for (const Metric& m : MetricsFor(ca)) {
    nlohmann::json va = At(a, m.path), vb = At(b, m.path);
    if (va.is_null() && vb.is_null()) continue;
    const bool scaled = per_billion && m.per_billion_tokens;
    if (scaled && va.is_number()) va = va.get<double>() / tokens_a.get<double>() * 1e9;
    if (scaled && vb.is_number()) vb = vb.get<double>() / tokens_b.get<double>() * 1e9;
    CompareRow row{scaled ? m.per_billion_tokens : m.name,
                   Show(va, m.unit),
                   Show(vb, m.unit),
                   std::nullopt,
                   m.higher_is_better,
                   m.breaks_ties,
                   va,
                   vb};
    // The text prints seconds and bytes with their units: its label drops the JSON name's.
    row.label = row.metric;
    for (const std::string_view unit : {" (s)", " (bytes)"}) {
      if (m.unit != Unit::kPlain && row.label.ends_with(unit)) {
        row.label.resize(row.label.size() - unit.size());
      }
    }
    if (va.is_number() && vb.is_number() && va.get<double>() != 0) {
      row.ratio = vb.get<double>() / va.get<double>();
    }
    c.metrics.push_back(row);
  }
  // Each side's own account of what bounds it.
  for (const auto& [side, j] : {std::pair{"A", &a}, std::pair{"B", &b}}) {
    for (const char* path : {"/layouts/0/why", "/why", "/bound"}) {
      const nlohmann::json& why = At(*j, path);
      if (why.is_string() && !why.get<std::string>().empty()) {
        c.reasons.push_back(fmt::format("{}: {}", side, why.get<std::string>()));
        break;
      }
    }
    const nlohmann::json& bound = At(*j, "/layouts/0/bound");
    if (bound.is_string())
      c.reasons.push_back(fmt::format("{}: decode bound by {}", side, Show(bound)));
    // A train result's notes (no measurement behind the GPU, what the model leaves out) and the
    // spread of the engine's published runs bear on how far its figures can be trusted.
    if (c.command == "train") {
      for (const nlohmann::json& note : At(*j, "/notes")) {
        if (note.is_string()) c.reasons.push_back(fmt::format("{}: note: {}", side, Show(note)));
      }
      const nlohmann::json& ratio = At(*j, "/measured/ratio");
      if (ratio.is_object()) {
        const bool here = At(*j, "/measured/on_this_gpu") == true;
        c.reasons.push_back(fmt::format("{}: published runs at {}-{}x its predictions{}", side,
                                        Show(ratio.value("p10", nlohmann::json())),
                                        Show(ratio.value("p90", nlohmann::json())),
                                        here ? "" : ", none on its GPU (out of sample)"));
      }
      for (const nlohmann::json& own : At(*j, "/measured/this_model")) {
        const std::string low = Show(At(own, "/ratio/low")), high = Show(At(own, "/ratio/high"));
        c.reasons.push_back(fmt::format("{}: its model's runs on {}: {}x ({})", side,
                                        Show(At(own, "/gpu")), low == high ? low : low + "-" + high,
                                        Show(At(own, "/runs"))));
      }
    }
    const nlohmann::json& load = At(*j, "/load/overloaded");
    if (load.is_boolean() && load.get<bool>()) {
      c.reasons.push_back(fmt::format("{}: overloaded; its latencies grow with the run", side));
    }
  }
  // Per-GPU figures weigh like against like only on one GPU type at one price; across GPU types
  // or prices, what the tokens cost decides (moved first).
  const auto gpu = [](const nlohmann::json& j) {
    const nlohmann::json& top = At(j, "/gpu");
    return top.is_null() ? At(j, "/deployment/pools/0/gpu") : top;
  };
  bool priced_apart = gpu(a) != gpu(b);
  priced_apart = priced_apart || At(a, "/usd_per_gpu_hour") != At(b, "/usd_per_gpu_hour");
  const auto cost = std::find_if(c.metrics.begin(), c.metrics.end(), [](const CompareRow& row) {
    return row.metric.starts_with("$ ") && row.ratio.has_value();
  });
  const bool cost_decides = priced_apart && cost != c.metrics.end() && cost != c.metrics.begin();
  if (cost_decides) std::rotate(c.metrics.begin(), cost, cost + 1);
  // The first metric decides; where the two are level on it (two deployments keeping up with
  // one rate bill the same tokens), the next metric that differs does.
  const CompareRow* head = c.metrics.empty() ? nullptr : &c.metrics.front();
  if (head && head->ratio) {
    const auto level = [](const CompareRow& row) {
      return std::abs(*row.ratio - 1) < kLevelFraction;
    };
    const auto better = [](const CompareRow& row) {
      const double r = *row.ratio;
      const bool b_better = row.higher_is_better ? r > 1 : r < 1;
      return fmt::format("{} is better on {}: {:.2f}x", b_better ? "B" : "A", row.metric,
                         std::max(r, 1 / r));
    };
    if (!level(*head)) {
      c.verdict = better(*head);
      if (cost_decides) c.verdict += " (the GPUs or their prices differ, so cost decides)";
    } else {
      // Level: the widest difference each way among the tie-breaking metrics, B's first.
      c.verdict = fmt::format("A and B are level on {}", head->metric);
      const CompareRow* widest[2] = {nullptr, nullptr};  // B better, A better
      const auto spread = [](const CompareRow& row) { return std::abs(std::log(*row.ratio)); };
      for (const CompareRow& row : c.metrics) {
        if (!row.ratio || !row.breaks_ties || level(row) || row.metric == head->metric) continue;
        const bool b_better = row.higher_is_better ? *row.ratio > 1 : *row.ratio < 1;
        const CompareRow*& w = widest[b_better ? 0 : 1];
        if (!w || spread(row) > spread(*w)) w = &row;
      }
      for (const CompareRow* w : widest) {
        if (w) c.verdict += "; " + better(*w);
      }
    }
    if (priced_apart && cost == c.metrics.end()) {
      c.verdict +=
          " (the GPUs or their prices differ and these results state no cost: weigh it "
          "apart)";
    }
  }
  return c;
}

nlohmann::json ComparisonJson(const Comparison& c, const std::string& a, const std::string& b) {
  const auto rows = [](const std::vector<CompareRow>& rs) {
    nlohmann::json out = nlohmann::json::array();
    for (const CompareRow& r : rs) {
      out.push_back({{"name", r.metric},
                     {"a", r.a_value},
                     {"b", r.b_value},
                     {"b_over_a", r.ratio ? nlohmann::json(*r.ratio) : nlohmann::json(nullptr)},
                     {"higher_is_better", r.higher_is_better}});
    }
    return out;
  };
  return {{"command", "compare"},
          {"compared", c.command},
          {"a", a},
          {"b", b},
          {"inputs", rows(c.inputs)},
          {"metrics", rows(c.metrics)},
          {"reasons", c.reasons},
          {"verdict", c.verdict}};
}

}  // namespace shardwise::report
