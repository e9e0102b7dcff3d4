// Calibrate: an engine profile fitted to the user's own benchmark runs of one deployment (the
// serving counterpart of `collectives --import`). Each run (api/bench_results.h) is predicted
// by the simulator exactly as `simulate` would (its load, its mean lengths, the layout, the
// candidate profile); each fitted field is solved so that the runs' mean log error of the
// metric it drives is zero (step_overhead_s and host_launch_s_per_kernel: TPOT; request_path_s
// and tokenize_s_per_token: TTFT), the fields in turn until they settle. A field the runs
// cannot determine (doubling it moves its metric by under 1%) is an error, never a guess (a
// default field keeps its value, with a note). The
// fit is reported out of sample: each run predicted by the fit of the others (leave-one-out).
// The result is a profile file any command takes with --engine FILE; the fitted fields carry
// provenance "measured" and the result files as their source. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/api/bench_results.h"
#include "shardwise/api/catalog.h"
#include "shardwise/api/options.h"
#include "shardwise/common/status.h"

namespace shardwise::api {

struct CalibrateRequest {
  std::string model = "llama-3.1-8b";
  ClusterRef cluster;
  ServingOverrides serving;          // serving.engine: the profile to start from
  std::string layout;                // the deployment the runs measured (aggregated)
  std::vector<std::string> results;  // result files
  // Fields to fit, each one the runs must determine; empty: those of step_overhead_s and
  // request_path_s the runs determine (the others keep their values, with a note).
  std::vector<std::string> fit;
  // The lengths the runs asked for: a file whose mean lengths differ by over 10% is refused.
  std::optional<int64_t> isl, osl;
  std::function<void(const std::string&)> progress;  // one line per step of the fit
};

// Mean TTFT and TPOT of one run, in milliseconds.
struct RunLatency {
  double ttft_ms = 0;
  double tpot_ms = 0;
};

struct CalibratedField {
  std::string name;    // e.g. "step_overhead_s"
  std::string metric;  // "TPOT" or "TTFT": what the field was solved on
  double shipped = 0;  // the starting profile's
  double fitted = 0;
  double sensitivity = 0;  // median |log change| of the metric when the field doubles
  bool at_bound = false;   // the runs wanted it beyond its range; it stops at the edge
  double bias = 0;  // at its bound: the fitted mean predicted / measured - 1 left (geometric)
};

struct CalibratedRun {
  BenchmarkRun run;
  RunLatency shipped;                  // predicted with the starting profile
  RunLatency fitted;                   // with the fitted one (in sample)
  std::optional<RunLatency> held_out;  // with the fit of the other runs
};

struct CalibrateReport {
  std::string base;  // the starting profile's name
  std::string model, layout, gpu;
  std::vector<CalibratedField> fields;
  std::vector<CalibratedRun> runs;
  nlohmann::json profile;          // the fitted profile, as its file
  EngineProfile fitted;            // the same, parsed
  std::vector<std::string> notes;  // default fields the runs could not determine
};

StatusOr<CalibrateReport> Calibrate(const Catalog& catalog, const CalibrateRequest& request);

// The fields a request may fit, in the order they are solved.
std::vector<std::string> CalibratableFields();

// {base_profile, profile_name, model, layout, gpu, fields: [{name, metric, shipped, fitted,
// sensitivity, at_bound}], runs: [{file, format, load, input_tokens, output_tokens, measured,
// shipped, fitted, held_out: {ttft_ms, tpot_ms} | null}], median_abs_error: {shipped, fitted,
// held_out: {ttft, tpot} (fractions)}, notes, profile}.
nlohmann::json ToJson(const CalibrateReport& report);

}  // namespace shardwise::api
