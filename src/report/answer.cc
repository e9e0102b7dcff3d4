// The answer table every decision page opens with, and how each command's JSON states it.
#include "answer.h"

#include <fmt/format.h>

#include "plots.h"
#include "shardwise/common/format.h"
#include "shardwise/report/svg.h"

namespace shardwise::report {
namespace {

std::string Str(const nlohmann::json& j, const char* key, const std::string& fallback = "") {
  if (!j.is_object() || !j.contains(key) || !Field(j, key).is_string()) return fallback;
  return Field(j, key).get<std::string>();
}

// The deployment's name and kind, as the result's "deployment" object states them.
void ReadDeployment(const nlohmann::json& result, AnswerFacts& a) {
  const nlohmann::json& d =
      result.contains("deployment") ? Field(result, "deployment") : nlohmann::json();
  a.deployment = Str(d, "name", Str(result, "layout", "?"));
  a.disaggregated = d.is_object() && Flag(d, "disaggregated");
  a.gpus = Num(d, "gpus", Num(result, "gpus"));
}

std::string PointLoad(const nlohmann::json& point) {
  return fmt::format("{:.4g} requests in flight, {:.2f} requests/s served",
                     Num(point, "concurrency"), Num(point, "requests_per_s"));
}

// A plan whose verdict is its simulated disaggregated split.
bool SplitWins(const nlohmann::json& result) {
  return Str(Field(result, "verdict"), "winner") == "disaggregated" &&
         Field(Field(result, "disaggregated"), "at_load").is_object();
}

AnswerFacts PlanAnswer(const nlohmann::json& result) {
  AnswerFacts a;
  ReadDeployment(result, a);
  const nlohmann::json& verdict = Field(result, "verdict");
  a.why = Str(verdict, "why");
  a.point = SplitWins(result) ? Field(Field(result, "disaggregated"), "at_load")
                              : Field(Field(result, "layouts"), 0);
  const std::string load = Str(result, "load", "offline");
  const double value = Num(result, "load_value");
  a.load =
      (load == "rate"          ? fmt::format("{:g} requests/s offered (Poisson): ", value)
       : load == "concurrency" ? "a closed loop of " + Counted(value, "client", "clients") + ": "
                               : std::string("offline (each layout at its best batch): ")) +
      PointLoad(a.point);
  return a;
}

AnswerFacts RecommendAnswer(const nlohmann::json& result) {
  AnswerFacts a;
  ReadDeployment(result, a);
  const nlohmann::json& best = Field(result, "recommendation");
  a.point = Field(best, "at_load");
  const bool fewest = Str(result, "mode") == "fewest_gpus";
  a.why = fmt::format(
      "the first of {} candidates, by {}, that {} within the SLOs in a steady-state "
      "simulation ({}); on {}",
      Field(result, "candidates").size(), Str(result, "objective") == "cost" ? "cost" : "GPUs",
      fewest ? fmt::format("serves {:.2f} requests/s", Num(result, "rate_requests_per_s"))
             : "serves the most load",
      Str(best, "note", "meets the SLOs"), Str(best, "cluster", Str(result, "cluster")));
  a.load = PointLoad(a.point);
  return a;
}

AnswerFacts SimulateAnswer(const nlohmann::json& result) {
  AnswerFacts a;
  ReadDeployment(result, a);
  const nlohmann::json& load = Field(result, "load");
  const nlohmann::json& tp = Field(result, "throughput");
  a.point = {
      {"ttft_s", Field(result, "ttft_s")},
      {"tpot_s", Field(result, "tpot_s")},
      {"output_tokens_per_s_per_gpu", Field(tp, "output_tokens_per_s_per_gpu")},
      {"output_tokens_per_s_per_user", Field(tp, "output_tokens_per_s_per_user")},
      {"usd_per_mtok_output", Field(Field(result, "cost"), "usd_per_mtok_output")},
      {"joules_per_output_token", Field(Field(result, "energy"), "joules_per_output_token")}};
  const bool closed = Field(result, "concurrency").is_number();
  a.load = closed ? fmt::format("a closed loop of {}: {:.2f} requests/s served",
                                Counted(Num(result, "concurrency"), "client", "clients"),
                                Num(tp, "requests_per_s"))
                  : fmt::format("{:.2f} requests/s offered, {:.2f} served",
                                Num(load, "offered_requests_per_s"), Num(tp, "requests_per_s"));
  const bool overloaded = Flag(load, "overloaded");
  const std::string how = Flag(Field(result, "steady_state"), "sized")
                              ? "simulated to its steady state"
                              : "simulated over the requests given, all measured";
  a.why = overloaded ? "overloaded: it serves less than the offered rate, so its queue grows"
          : Flag(result, "meets_slo") ? how + ", it meets the SLOs"
                                      : how;
  return a;
}

AnswerFacts PriceAnswer(const nlohmann::json& result) {
  AnswerFacts a;
  ReadDeployment(result, a);
  const nlohmann::json& op = Field(result, "operating_point");
  a.point = Field(op, "point");
  a.point["usd_per_mtok_output"] = Field(result, "usd_per_mtok_output");
  const std::string at = Str(op, "priced_at");
  a.why = at == "most_within_slo" ? "priced at the most clients whose latencies meet the SLOs"
          : at == "load"          ? "priced at the load given"
                                  : "priced at the batch with the most tokens per GPU";
  a.load = PointLoad(a.point);
  return a;
}

// "556.6 ms (SLO 2000 ms: meets)", or "misses by 12%".
std::string AgainstSlo(const nlohmann::json& latency, const nlohmann::json& slo, const char* key) {
  if (!latency.is_object() || !Field(latency, "at_slo").is_number()) return "-";
  const double value_s = Num(latency, "at_slo");
  std::string out = fmt::format("{:.1f} ms", 1e3 * value_s);
  if (!slo.is_object() || !Field(slo, key).is_number()) return out + " (no SLO)";
  const double limit_s = Num(slo, key);
  const std::string verdict = value_s <= limit_s
                                  ? "meets"
                                  : fmt::format("misses by {:.0f}%", 100 * (value_s / limit_s - 1));
  return out + fmt::format(" (SLO {:g} ms: {})", 1e3 * limit_s, verdict);
}

std::string Figure(const nlohmann::json& point, const char* key, const char* format) {
  if (!point.is_object() || !point.contains(key) || !Field(point, key).is_number()) return "-";
  const double v = Field(point, key).get<double>();
  return v > 0 ? fmt::format(fmt::runtime(format), v) : "-";
}

}  // namespace

std::optional<AnswerFacts> AnswerOf(const nlohmann::json& result) {
  const std::string command = Str(result, "command");
  if (command == "plan" && (!Field(result, "layouts").empty() || SplitWins(result))) {
    return PlanAnswer(result);
  }
  if (command == "recommend" && Field(result, "recommendation").is_object()) {
    return RecommendAnswer(result);
  }
  if (command == "simulate" && Field(result, "ttft_s").is_object()) return SimulateAnswer(result);
  if (command == "price" && Field(result, "operating_point").is_object())
    return PriceAnswer(result);
  return std::nullopt;
}

std::string AnswerTable(const AnswerFacts& a, const nlohmann::json& slo) {
  const std::string pct = Str(slo, "percentile", "p99");
  const auto row = [](const char* field, const std::string& name, const std::string& value) {
    return fmt::format("<tr data-field=\"{}\"><td>{}</td><td>{}</td></tr>\n", field, Escape(name),
                       value);
  };
  std::string rows;
  rows += row("deployment", "deploy",
              fmt::format("<b>{}</b> ({}, {:.0f} GPUs)", Escape(a.deployment),
                          a.disaggregated ? "disaggregated" : "aggregated", a.gpus));
  rows += row("why", "why", Escape(a.why));
  rows += row("load", "load", Escape(a.load));
  rows +=
      row("ttft", "TTFT " + pct, Escape(AgainstSlo(Field(a.point, "ttft_s"), slo, "max_ttft_s")));
  rows +=
      row("tpot", "TPOT " + pct, Escape(AgainstSlo(Field(a.point, "tpot_s"), slo, "max_tpot_s")));
  rows += row("tokens_per_gpu", "output tokens/s per GPU",
              Figure(a.point, "output_tokens_per_s_per_gpu", "{:.1f}"));
  rows += row("tokens_per_user", "output tokens/s per user",
              Figure(a.point, "output_tokens_per_s_per_user", "{:.1f}"));
  rows += row("usd_per_mtok", "$ per million output tokens",
              Figure(a.point, "usd_per_mtok_output", "{:.3f}"));
  rows += row("joules_per_token", "joules per output token (boards at rated power)",
              Figure(a.point, "joules_per_output_token", "{:.3g}"));
  return "<h2>Answer</h2>\n<table class=\"answer\">\n" + rows + "</table>\n";
}

}  // namespace shardwise::report
