// Benchmark: `shardwise run` measured against the perf model's prediction for this machine, on
// the catalog model small-dense (batch 1, a 128-token prompt, 32 decode steps) with tp1, tp2
// and pp2. The host profile (host_profile.h) is measured again just before every run and handed
// to it, so prediction and measurement see the machine in nearly the same state even while
// other work comes and goes; each layout runs three times and the medians are compared, the
// load average printed beside them. Asserts (exit status 1) that every measured/predicted ratio is
// within 20% of 1. Usage: run_prediction_bench [path/to/shardwise] (default: beside this
// binary's folder, as the build lays them out).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "shardwise/runtime/host_profile.h"

namespace {

constexpr double kAllowedError = 0.20;  // issue 12: within 20% of the prediction
constexpr int kRepeats = 3;

// Runs `command` and parses what it prints as JSON (an empty object on failure).
nlohmann::json RunJson(const std::string& command) {
  std::string out;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buf[4096];
    size_t n = 0;
    while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
    if (pclose(pipe) != 0) return nlohmann::json::object();
  }
  return nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  const std::string binary =
      argc > 1 ? argv[1] : (fs::path(argv[0]).parent_path().parent_path() / "shardwise").string();
  const std::string profile =
      (fs::temp_directory_path() / "run_prediction_bench_host.json").string();
  bool all_within = true;
  std::printf("%-7s %-8s %12s %12s %8s %6s\n", "layout", "phase", "measured", "predicted", "ratio",
              "load");
  for (const char* layout : {"tp1", "tp2", "pp2"}) {
    std::vector<double> prefill, decode, prefill_model, decode_model;
    for (int i = 0; i < kRepeats; ++i) {
      const shardwise::Status saved =
          shardwise::SaveHostProfile(shardwise::MeasureHostProfile(), profile);
      if (!saved.ok()) {
        std::fprintf(stderr, "run_prediction_bench: %s\n", saved.message().c_str());
        return 2;
      }
      const nlohmann::json r = RunJson(
          fmt::format("{} run --model small-dense --layout {} --batch 1 --prompt-len 128 --gen 33 "
                      "--no-check --json --host-profile {}",
                      binary, layout, profile));
      if (!r.contains("predicted")) {
        std::fprintf(stderr, "run_prediction_bench: %s run failed\n", layout);
        return 2;
      }
      prefill.push_back(r["prefill"]["wall_s"].get<double>());
      decode.push_back(r["decode"]["wall_s"].get<double>());
      prefill_model.push_back(r["predicted"]["prefill_s"].get<double>());
      decode_model.push_back(r["predicted"]["decode_s"].get<double>());
    }
    for (const auto& [phase, measured, predicted] :
         {std::tuple{"prefill", Median(prefill), Median(prefill_model)},
          std::tuple{"decode", Median(decode), Median(decode_model)}}) {
      const double ratio = measured / predicted;
      const bool within = std::fabs(ratio - 1) <= kAllowedError;
      all_within = all_within && within;
      double load[1] = {0};
      (void)getloadavg(load, 1);
      std::printf("%-7s %-8s %10.1f ms %10.1f ms %8.2f %6.2f%s\n", layout, phase, 1e3 * measured,
                  1e3 * predicted, ratio, load[0], within ? "" : "  (outside 20%)");
    }
  }
  std::error_code ec;
  fs::remove(profile, ec);
  return all_within ? 0 : 1;
}
