#include "shardwise/api/bench_results.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>

#include "shardwise/common/input_policy.h"
#include "shardwise/common/json_fields.h"
#include "shardwise/common/python_json.h"

namespace shardwise::api {
namespace bench_results {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A rate as the benchmarks record it: a number, "inf", or absent/null (unset).
StatusOr<std::optional<double>> Rate(const JsonObject& o, const char* key) {
  if (!o.Has(key)) return std::optional<double>();
  const nlohmann::json& v = o.json.at(key);
  // "inf" from vLLM, Infinity from Python's json module (QuoteNonFiniteLiterals).
  if (v.is_string() && (v.get<std::string>() == "inf" || v.get<std::string>() == "Infinity")) {
    return std::optional<double>(kInf);
  }
  if (v.is_number() && v.get<double>() > 0) return std::optional<double>(v.get<double>());
  return Error(fmt::format("{}: '{}' must be a positive number or \"inf\", got {}", o.source, key,
                           Excerpt(v)));
}

// The load of a run from its concurrency cap and request rate: a closed loop when only the cap
// is set (the rate "inf"), an open loop when only the rate is.
Status SetLoad(BenchmarkRun& run, std::optional<int64_t> concurrency, std::optional<double> rate) {
  const bool capped = concurrency.has_value();
  const bool paced = rate && std::isfinite(*rate);
  if (capped && paced) {
    return Error(fmt::format(
        "{}: the run paces requests at {:g}/s and also caps them at {} in flight; calibrate "
        "reads closed loops (a concurrency with request rate inf) or open loops (a rate, no cap)",
        run.file, *rate, *concurrency));
  }
  if (capped) {
    run.concurrency = concurrency;
  } else {
    run.rate_per_s = rate.value_or(kInf);
  }
  return Status();
}

// vLLM's --save-result object, or one line of SGLang's JSONL.
StatusOr<BenchmarkRun> FromVllmStyle(nlohmann::json json, const std::string& source,
                                     const char* format) {
  // A NaN (Python's, quoted) is a figure the benchmark could not compute: not recorded; the
  // figures fitted on must be there.
  for (const char* key : {"mean_ttft_ms", "mean_tpot_ms"}) {
    if (json.contains(key) && json[key].is_string() && json[key].get<std::string>() == "NaN") {
      return Error(
          fmt::format("{}: {} is NaN (the benchmark computed none: a run of one output "
                      "token or no completed request); drop the file or re-run it",
                      source, key));
    }
  }
  for (auto it = json.begin(); it != json.end();) {
    it = it->is_string() && it->get<std::string>() == "NaN" ? json.erase(it) : std::next(it);
  }
  const JsonObject o{json, source};
  BenchmarkRun run;
  run.file = source;
  run.format = format;
  SW_ASSIGN_OR_RETURN(run.completed, o.Int("completed"));
  SW_ASSIGN_OR_RETURN(const double input, o.Number("total_input_tokens"));
  SW_ASSIGN_OR_RETURN(const double output, o.Number("total_output_tokens"));
  run.input_tokens = input / static_cast<double>(run.completed);
  run.output_tokens = output / static_cast<double>(run.completed);
  SW_ASSIGN_OR_RETURN(run.mean_ttft_ms, o.Number("mean_ttft_ms"));
  SW_ASSIGN_OR_RETURN(run.mean_tpot_ms, o.Number("mean_tpot_ms"));
  SW_ASSIGN_OR_RETURN(run.output_tokens_per_s, o.NumberOr("output_throughput", 0));
  SW_ASSIGN_OR_RETURN(run.burstiness, o.NumberOr("burstiness", 1));
  if (o.Has("model_id")) {
    SW_ASSIGN_OR_RETURN(run.model_id, o.String("model_id"));
  }
  std::optional<int64_t> concurrency;
  if (o.Has("max_concurrency")) {
    SW_ASSIGN_OR_RETURN(concurrency, o.Int("max_concurrency"));
  }
  SW_ASSIGN_OR_RETURN(const std::optional<double> rate, Rate(o, "request_rate"));
  SW_RETURN_IF_ERROR(SetLoad(run, concurrency, rate));
  return run;
}

// An AIPerf metric's average in `want` (ms or tokens), converted from the unit it records.
StatusOr<double> Metric(const JsonObject& metrics, const char* tag, bool time, bool required) {
  if (!metrics.Has(tag)) {
    if (!required) return 0.0;
    return Error(fmt::format("{}: AIPerf metric '{}' is missing", metrics.source, tag));
  }
  const JsonObject m{metrics.json.at(tag), fmt::format("{} metric '{}'", metrics.source, tag)};
  if (!m.json.is_object()) return Error(m.source + " must be an object with \"avg\"");
  SW_ASSIGN_OR_RETURN(const double avg, m.Number("avg"));
  if (!time) return avg;
  const std::string unit =
      m.Has("unit") && m.json.at("unit").is_string() ? m.json.at("unit").get<std::string>() : "ms";
  if (unit == "ms") return avg;
  if (unit == "us") return avg / 1e3;
  if (unit == "ns") return avg / 1e6;
  if (unit == "s" || unit == "sec") return avg * 1e3;
  return Error(fmt::format("{}: unit '{}' is not ms, us, ns or s", m.source, unit));
}

StatusOr<BenchmarkRun> FromAiperf(const nlohmann::json& json, const std::string& source) {
  const bool records = json.contains("records") && json.at("records").is_object();
  const JsonObject metrics{records ? json.at("records") : json, source};
  BenchmarkRun run;
  run.file = source;
  run.format = "aiperf";
  SW_ASSIGN_OR_RETURN(run.mean_ttft_ms, Metric(metrics, "time_to_first_token", true, true));
  SW_ASSIGN_OR_RETURN(run.mean_tpot_ms, Metric(metrics, "inter_token_latency", true, true));
  SW_ASSIGN_OR_RETURN(run.input_tokens, Metric(metrics, "input_sequence_length", false, true));
  SW_ASSIGN_OR_RETURN(run.output_tokens, Metric(metrics, "output_sequence_length", false, true));
  SW_ASSIGN_OR_RETURN(run.output_tokens_per_s,
                      Metric(metrics, "output_token_throughput", false, false));
  SW_ASSIGN_OR_RETURN(const double count, Metric(metrics, "request_count", false, false));
  run.completed = static_cast<int64_t>(count);
  const nlohmann::json none = nlohmann::json::object();
  const nlohmann::json& config = json.value(nlohmann::json::json_pointer("/input_config"), none);
  const nlohmann::json& loadgen =
      config.is_object() && config.contains("loadgen") ? config.at("loadgen") : none;
  const JsonObject load{loadgen, source + " input_config.loadgen"};
  std::optional<int64_t> concurrency;
  if (load.Has("concurrency")) {
    SW_ASSIGN_OR_RETURN(concurrency, load.Int("concurrency"));
  }
  SW_ASSIGN_OR_RETURN(const std::optional<double> rate, Rate(load, "request_rate"));
  if (!concurrency && !rate) {
    return Error(source +
                 ": input_config.loadgen names neither a concurrency nor a request_rate; "
                 "calibrate needs the load the run was measured under");
  }
  SW_RETURN_IF_ERROR(SetLoad(run, concurrency, rate));
  const nlohmann::json& names = json.value(
      nlohmann::json::json_pointer("/input_config/endpoint/model_names"), nlohmann::json());
  if (names.is_array() && !names.empty() && names.at(0).is_string()) {
    run.model_id = names.at(0).get<std::string>();
  }
  return run;
}

bool IsAiperf(const nlohmann::json& json) {
  return json.contains("time_to_first_token") ||
         (json.contains("records") && json.at("records").is_object());
}

// The refusal of a file (or a line of one) that is no benchmark result calibrate reads.
std::string NotAResult(const std::string& where) {
  return fmt::format(
      "{}: not a benchmark result: calibrate reads 'vllm bench serve --save-result' JSON, SGLang "
      "bench_serving --output-file JSONL (mean_ttft_ms, mean_tpot_ms) and AIPerf's profile "
      "export (time_to_first_token)",
      where);
}

// A run's mean latencies as a benchmark measures them: positive, and below an hour to the first
// token and a minute between tokens, which no served run reaches (a larger figure is a unit
// or an edit gone wrong).
constexpr double kMaxTtftMs = 3.6e6;
constexpr double kMaxTpotMs = 6e4;
Status CheckLatencies(const BenchmarkRun& run) {
  for (const auto& [key, value, most] : {std::tuple{"mean TTFT", run.mean_ttft_ms, kMaxTtftMs},
                                         std::tuple{"mean TPOT", run.mean_tpot_ms, kMaxTpotMs}}) {
    if (!(value > 0 && value <= most)) {
      return Error(
          fmt::format("{}: a {} of {:g} ms is not a measured one (it must be above 0 "
                      "and at most {:g} ms); check the file's units and values",
                      run.file, key, value, most));
    }
  }
  return Status();
}

}  // namespace bench_results

std::string BenchmarkRun::LoadName() const {
  if (concurrency) return fmt::format("concurrency {}", *concurrency);
  if (rate_per_s && std::isfinite(*rate_per_s)) return fmt::format("rate {:g}/s", *rate_per_s);
  return "all at once";
}

StatusOr<std::vector<BenchmarkRun>> ReadBenchmarkResults(const std::string& path) {
  using namespace bench_results;
  SW_ASSIGN_OR_RETURN(const std::string raw, ReadBoundedFile(path, kBenchmarkInput));
  const std::string text = QuoteNonFiniteLiterals(raw);
  const auto whole = nlohmann::json::parse(text, nullptr, false);
  if (!whole.is_discarded() && whole.is_object()) {
    if (IsAiperf(whole)) {
      SW_ASSIGN_OR_RETURN(BenchmarkRun run, FromAiperf(whole, path));
      SW_RETURN_IF_ERROR(CheckLatencies(run));
      return std::vector<BenchmarkRun>{std::move(run)};
    }
    if (whole.contains("mean_ttft_ms")) {
      SW_ASSIGN_OR_RETURN(BenchmarkRun run, FromVllmStyle(whole, path, "vllm"));
      SW_RETURN_IF_ERROR(CheckLatencies(run));
      return std::vector<BenchmarkRun>{std::move(run)};
    }
  }
  // One JSON document of another kind (a shardwise result, a config) is not JSONL either: it is
  // not an object, or it spans lines (text after its first line's end).
  const size_t first_end = text.find('\n');
  const bool spans_lines = first_end != std::string::npos &&
                           text.find_first_not_of(" \t\r\n", first_end) != std::string::npos;
  if (!whole.is_discarded() && (!whole.is_object() || spans_lines)) {
    return Error(NotAResult(path));
  }
  // SGLang: one run per line.
  std::vector<BenchmarkRun> runs;
  size_t line_no = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("{}:{}", path, line_no);
    SW_ASSIGN_OR_RETURN(const nlohmann::json json, ParseJsonText(line, where));
    if (!json.is_object() || !json.contains("mean_ttft_ms")) {
      return Error(NotAResult(where));
    }
    SW_ASSIGN_OR_RETURN(BenchmarkRun run, FromVllmStyle(json, where, "sglang"));
    SW_RETURN_IF_ERROR(CheckLatencies(run));
    runs.push_back(std::move(run));
  }
  if (runs.empty()) return Error(path + ": holds no benchmark results");
  return runs;
}

}  // namespace shardwise::api
