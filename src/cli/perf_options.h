// Options shared by the commands that run the step-time model: formats and memory policy.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/perf/options.h"
#include "shardwise/perf/step.h"
#include "speculative_options.h"

namespace shardwise::cli {

struct PerfCliOptions {
  std::string dtype;     // empty: the checkpoint's own per-module formats
  std::string kv_dtype;  // empty: the weight format where it can hold KV (fp8), else bf16
  double gpu_memory_utilization = 0.9;
  double expert_imbalance = 0;
  int64_t redundant_experts = 0;
  double expert_skew = 0;
  CLI::Option* expert_skew_option = nullptr;  // set when the user gave --expert-skew
  SpeculativeCliOptions speculative;
  std::string expert_load_file;  // measured per-expert loads (JSON), instead of --expert-skew
  std::optional<double> capacity_factor;
  std::string shared_experts = "replicated";
  std::string ep_algorithm = "flat";
  std::string ep_dispatch_dtype;  // empty: the activation format
  std::string overlap = "none";
  double prefix_hit_rate = 0;
  int64_t max_batched_tokens = 8192;
  std::string engine = "trtllm";
  // Set when the user gave the option, which then overrides the engine's default.
  CLI::Option* gpu_memory_utilization_option = nullptr;
  CLI::Option* max_batched_tokens_option = nullptr;
  std::vector<CLI::Option*> ep_exchange_options;  // --ep-algorithm, --ep-dispatch-dtype, --overlap

  void AddTo(CLI::App* sub);
  // The options for `model`: its checkpoint's weight formats unless --dtype names one.
  StatusOr<PerfOptions> Build(const ModelSpec& model) const;
  // Whether the user set how EP layouts exchange tokens (else plan searches it).
  bool UserChoseEpExchange() const;

 private:
  // Expert loads, capacity, the EP exchange and overlap, into `o`.
  Status BuildMoeOptions(const ModelSpec& model, PerfOptions& o) const;
};

// How an EP layout exchanges tokens, for --json: algorithm asked for, dispatch format, overlap.
nlohmann::json EpSettingJson(const EpSetting& ep);

// --redundant-experts needs an expert group to place the copies in: an error for an explicit
// layout without EP (ep 1). OK for dense models' layouts only when no copies are asked for.
Status CheckRedundantExperts(const Layout& layout, const PerfOptions& options);

// The MoE placement of `layout` for --json: redundant experts, skew, expert slots per GPU and
// the busiest EP rank's placement imbalance; null for a dense model.
nlohmann::json MoeJson(const ModelSpec& model, const Layout& layout, const PerfOptions& options);

// Notes the user should see about how the formats run on `gpu`, e.g. fp8 weights on a GPU
// without fp8 tensor cores run weight-only (stored in fp8, multiplied in bf16). Empty when none.
std::vector<std::string> FormatNotes(const GpuSpec& gpu, const PerfOptions& options);
// Writes each of FormatNotes() to stderr as "shardwise: note: ...".
void PrintFormatNotes(const GpuSpec& gpu, const PerfOptions& options);
// The weight formats in words: "bf16", or per module ("experts mxfp4, rest bf16").
std::string WeightFormatName(const PerfOptions& options);

// One line saying why a layout does not fit, with the numbers.
std::string DoesNotFitMessage(const ModelSpec& model, const ClusterSpec& cluster,
                              const StepEstimate& e, const PerfOptions& options);

}  // namespace shardwise::cli
