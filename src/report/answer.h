// The answer a decision page opens with (plan, recommend, simulate, price): what to deploy,
// why, and its operating point's figures against the SLOs, one table for every command.
// Internal to report/.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace shardwise::report {

// What a decision result answered, read from its JSON (docs/json.md).
struct AnswerFacts {
  std::string deployment;  // the deployment's name ("dp2tp8", "1P x tp8 + 2D x tp8")
  bool disaggregated = false;
  double gpus = 0;
  std::string why;   // why this deployment, in the command's words
  std::string load;  // the load the figures were taken at
  // The operating point: ttft_s and tpot_s (latency objects with "at_slo"),
  // output_tokens_per_s_per_gpu, output_tokens_per_s_per_user, usd_per_mtok_output,
  // joules_per_output_token (each may be absent or null).
  nlohmann::json point;
};

// The answer of a plan, recommend, simulate or price result; nullopt for other results.
std::optional<AnswerFacts> AnswerOf(const nlohmann::json& result);

// "<h2>Answer</h2>" and a <table class="answer"> with one <tr data-field="..."> per figure:
// deployment, why, load, ttft, tpot (each at the SLOs' percentile against its limit),
// tokens_per_gpu, tokens_per_user, usd_per_mtok, joules_per_token.
std::string AnswerTable(const AnswerFacts& answer, const nlohmann::json& slo);

}  // namespace shardwise::report
