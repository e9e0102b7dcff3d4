#include "speculative_options.h"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "shardwise/model/catalog.h"
#include "shardwise/perf/speculative.h"

namespace shardwise::cli {
namespace {

constexpr int64_t kMaxDraftTokens = 16;

StatusOr<std::vector<double>> ParseAcceptance(const std::string& text) {
  std::vector<double> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    double a = 0;
    size_t used = 0;
    try {
      a = std::stod(item, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != item.size() || !(a > 0 && a <= 1)) {
      return Error(
          fmt::format("--acceptance '{}': each value is the chance a draft token is "
                      "accepted, in (0, 1]",
                      text));
    }
    out.push_back(a);
  }
  if (out.empty()) return Error("--acceptance needs a value in (0, 1] or a comma list of them");
  return out;
}

}  // namespace

void SpeculativeCliOptions::AddTo(CLI::App* sub) {
  sub->add_option("--speculative", method,
                  "Speculative decoding: mtp (the model's multi-token-prediction module), eagle "
                  "(an EAGLE head), draft:MODEL (a smaller model, same vocabulary), or none "
                  "(default)");
  sub->add_option("--spec-tokens", tokens,
                  "Draft tokens proposed per decode step, k (default: the count of --acceptance)");
  sub->add_option("--acceptance", acceptance,
                  "Chance each draft token is accepted given the earlier ones were, in (0, 1]: "
                  "one value for every position or a comma list per position (e.g. 0.8,0.6)");
}

StatusOr<SpeculativeOptions> SpeculativeCliOptions::Build(const ModelSpec& target) const {
  SpeculativeOptions o;
  const std::string name = method.substr(0, method.find(':'));
  SW_ASSIGN_OR_RETURN(o.method, ParseSpeculativeMethod(name));
  if (o.method == SpeculativeMethod::kNone) {
    if (tokens != 0 || !acceptance.empty()) {
      return Error("--spec-tokens and --acceptance need --speculative mtp|eagle|draft:MODEL");
    }
    return o;
  }
  if (acceptance.empty()) {
    return Error(
        fmt::format("--speculative {} needs --acceptance (the chance a draft token is "
                    "accepted, in (0, 1])",
                    method));
  }
  SW_ASSIGN_OR_RETURN(std::vector<double> a, ParseAcceptance(acceptance));
  if (tokens < 0 || tokens > kMaxDraftTokens) {
    return Error(
        fmt::format("--spec-tokens must be between 1 and {}, got {}", kMaxDraftTokens, tokens));
  }
  const int64_t k = tokens > 0 ? tokens : static_cast<int64_t>(a.size());
  if (a.size() == 1) {
    a.assign(static_cast<size_t>(k), a[0]);
  } else if (static_cast<int64_t>(a.size()) != k) {
    return Error(
        fmt::format("--acceptance lists {} positions but --spec-tokens is {}; give one "
                    "value per draft token or a single value",
                    a.size(), k));
  }
  if (k > kMaxDraftTokens) {
    return Error(fmt::format("--acceptance lists {} positions; at most {} draft tokens", k,
                             kMaxDraftTokens));
  }
  o.acceptance = std::move(a);
  if (o.method == SpeculativeMethod::kDraftModel) {
    const size_t colon = method.find(':');
    if (colon == std::string::npos || colon + 1 == method.size()) {
      return Error(
          "--speculative draft needs the draft model: draft:MODEL (e.g. draft:llama-3.1-8b)");
    }
    SW_ASSIGN_OR_RETURN(ModelSpec draft, LoadModel(method.substr(colon + 1)));
    if (draft.vocab_size != target.vocab_size) {
      return Error(
          fmt::format("draft model {} has a vocabulary of {} tokens, {} has {}; a draft "
                      "must share the target's tokenizer",
                      draft.name, draft.vocab_size, target.name, target.vocab_size));
    }
    o.draft_model = std::make_shared<const ModelSpec>(std::move(draft));
  } else if (method.find(':') != std::string::npos) {
    return Error(fmt::format("--speculative '{}': only draft takes a model (draft:MODEL)", method));
  }
  return o;
}

nlohmann::json SpeculativeJson(const SpeculativeOptions& s) {
  if (s.DraftTokens() == 0) return nullptr;
  return {{"method", SpeculativeMethodName(s.method)},
          {"draft_model",
           s.draft_model ? nlohmann::json(s.draft_model->name) : nlohmann::json(nullptr)},
          {"draft_tokens", s.DraftTokens()},
          {"acceptance", s.acceptance},
          {"tokens_per_step", ExpectedTokensPerStep(s.acceptance)}};
}

}  // namespace shardwise::cli
