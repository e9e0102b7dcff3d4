// `shardwise calibrate`: an engine profile fitted to the user's benchmark runs (api/calibrate.h).
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "command.h"
#include "output_guard.h"
#include "request_flags.h"
#include "shardwise/api/calibrate.h"
#include "shardwise/report/table.h"

namespace shardwise::cli {
namespace {

struct CalibrateOptions {
  api::CalibrateRequest request;
  ClusterFlags cluster;
  ServingFlags serving;
  std::string output;
  bool force = false;
  bool json = false;
};

std::string Cell(double predicted_ms, double measured_ms) {
  return fmt::format("{:.2f} ({:+.1f}%)", predicted_ms, 100 * (predicted_ms / measured_ms - 1));
}

void PrintText(const api::CalibrateReport& rep, const std::string& output) {
  std::cout << fmt::format("{} of {} on {}: {} calibrated on {} run{}\n\n", rep.layout, rep.model,
                           rep.gpu, rep.base, rep.runs.size(), rep.runs.size() == 1 ? "" : "s");
  Table fields({"field", "solved on", rep.base, "fitted", "moves per doubling"});
  for (const api::CalibratedField& f : rep.fields) {
    fields.AddRow({f.name, "mean " + f.metric, fmt::format("{:.4g}", f.shipped),
                   fmt::format("{:.4g}{}", f.fitted, f.at_bound ? " (at its bound)" : ""),
                   fmt::format("{:.1f}%", 100 * f.sensitivity)});
  }
  std::cout << fields.Render() << "\nmean TTFT and TPOT in ms, predicted (error):\n";
  Table runs({"run", "ISL/OSL", "measured", rep.base, "fitted", "held out"});
  for (const api::CalibratedRun& r : rep.runs) {
    const api::BenchmarkRun& m = r.run;
    auto pair = [&](const api::RunLatency& l) {
      return Cell(l.ttft_ms, m.mean_ttft_ms) + " / " + Cell(l.tpot_ms, m.mean_tpot_ms);
    };
    runs.AddRow({fmt::format("{} ({})", m.LoadName(), m.file),
                 fmt::format("{:.0f}/{:.0f}", m.input_tokens, m.output_tokens),
                 fmt::format("{:.2f} / {:.2f}", m.mean_ttft_ms, m.mean_tpot_ms), pair(r.shipped),
                 pair(r.fitted), r.held_out ? pair(*r.held_out) : "(one run)"});
  }
  std::cout << runs.Render() << fmt::format("\nwrote {} (use it as --engine {})\n", output, output);
}

Status RunCalibrate(CalibrateOptions& o) {
  api::CalibrateRequest& r = o.request;
  r.cluster = o.cluster.values;
  r.serving = o.serving.values;
  if (o.output.empty()) return Error("--output PROFILE.json is required: where the fit goes");
  auto ours = [](const std::string& content) {
    return content.find("calibrated by shardwise calibrate") != std::string::npos;
  };
  // Never over one of its own inputs, --force or not.
  std::error_code ec;
  const std::filesystem::path output = std::filesystem::weakly_canonical(o.output, ec);
  for (const std::string& input : r.results) {
    std::error_code ec_in;
    if (!ec && std::filesystem::weakly_canonical(input, ec_in) == output && !ec_in) {
      return Error(fmt::format("--output {} is one of the --results; write the profile elsewhere",
                               o.output));
    }
  }
  SW_RETURN_IF_ERROR(CheckOutputPath(o.output, o.force, "calibrated engine profile", ours));
  // Before the fit, not after it: the directory (or the file) must take the profile.
  const std::filesystem::path out_path(o.output);
  const std::filesystem::path dir =
      out_path.has_parent_path() ? out_path.parent_path() : std::filesystem::path(".");
  const bool exists = std::filesystem::exists(out_path);
  if (access((exists ? out_path : dir).c_str(), W_OK) != 0) {
    return Error(
        fmt::format("--output: cannot write {} ({} is not writable); choose another "
                    "path",
                    o.output, exists ? o.output : dir.string()));
  }
  if (!o.json)
    r.progress = [](const std::string& line) { std::cerr << "calibrate: " << line << "\n"; };
  SW_ASSIGN_OR_RETURN(const api::CalibrateReport rep, api::Calibrate(api::Catalog::BuiltIn(), r));
  PrintNotes(rep.notes);
  std::ofstream out(o.output, std::ios::trunc);
  out << rep.profile.dump(2) << "\n";
  out.close();
  if (!out) return Error(fmt::format("--output: cannot write {}", o.output));
  if (o.json) {
    nlohmann::json j = api::ToJson(rep);
    j["output"] = o.output;
    PrintJson(j);
  } else {
    PrintText(rep, o.output);
  }
  return Status();
}

}  // namespace

void AddCalibrateCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<CalibrateOptions>();
  api::CalibrateRequest& r = opts->request;
  CLI::App* sub = app.add_subcommand(
      "calibrate",
      "Fit an engine profile to your own benchmark runs of one deployment: each run is\n"
      "predicted as 'simulate' would, and step_overhead_s (on mean TPOT) and request_path_s\n"
      "(on mean TTFT) are solved until the runs are predicted without bias; the fit is checked\n"
      "out of sample (each run predicted from the others). Reads 'vllm bench serve\n"
      "--save-result' JSON, SGLang bench_serving JSONL and AIPerf profile exports. Example:\n"
      "  shardwise calibrate --model llama-3.1-70b --cluster dgx-h100 --layout tp4 \\\n"
      "      --engine vllm --results c16.json c64.json c128.json --output my-vllm.json\n"
      "then: shardwise plan --engine my-vllm.json ...");
  sub->add_option("--model", r.model, "Catalog model name or path to a config.json")
      ->capture_default_str();
  opts->cluster.AddTo(sub, /*priced=*/false);
  opts->serving.AddTo(sub, true);
  sub->add_option("--layout", r.layout, "The layout the benchmark ran, e.g. tp4 or dp2tp4")
      ->required();
  sub->add_option("--results", r.results,
                  "Benchmark result files (space- or comma-separated): vllm --save-result JSON, "
                  "SGLang JSONL (one run per line), AIPerf profile_export_aiperf.json")
      ->required()
      ->expected(1, -1)
      ->delimiter(',');
  sub->add_option("--output", opts->output,
                  "Where to write the fitted profile (a file shardwise calibrate wrote, or new; "
                  "--force to replace another)")
      ->required();
  sub->add_option("--fit", r.fit,
                  "Fields to fit, comma-separated: step_overhead_s, host_launch_s_per_kernel "
                  "(TPOT), request_path_s, tokenize_s_per_token (TTFT); at most one per metric "
                  "(default step_overhead_s,request_path_s)")
      ->delimiter(',');
  sub->add_option("--isl", r.isl, "The prompt length the runs asked for (refuses other lengths)");
  sub->add_option("--osl", r.osl, "The output length the runs asked for");
  sub->add_flag("--force", opts->force, "Replace --output even if shardwise did not write it");
  sub->add_flag("--json", opts->json, "Print JSON");
  BindCommand(sub, opts, result, RunCalibrate);
}

}  // namespace shardwise::cli
