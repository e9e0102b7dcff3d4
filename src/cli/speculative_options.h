// Command-line options for speculative decoding (--speculative, --spec-tokens, --acceptance),
// shared by the commands that run the step-time model, parsed once into SpeculativeOptions.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "shardwise/common/status.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/options.h"

namespace shardwise::cli {

struct SpeculativeCliOptions {
  std::string method = "none";  // none, mtp, eagle, draft:MODEL
  int64_t tokens = 0;           // draft tokens per step (k); 0: the count of --acceptance
  std::string acceptance;       // "a" (every position) or "a1,a2,..." (one per position)

  void AddTo(CLI::App* sub);
  // The options for `target`; errors name the flag (acceptance outside (0, 1], a list whose
  // length is not k, a draft model of another vocabulary, flags without --speculative).
  StatusOr<SpeculativeOptions> Build(const ModelSpec& target) const;
};

// For --json: method, draft model, draft tokens, acceptance and the expected tokens per step;
// null without speculative decoding.
nlohmann::json SpeculativeJson(const SpeculativeOptions& options);

}  // namespace shardwise::cli
