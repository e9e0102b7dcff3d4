// Speculative decoding in each engine's terms, as the prediction assumed it (--speculative):
// - vLLM 0.10.1 "Speculative Decoding": --speculative-config JSON with "method" (deepseek_mtp
//   for DeepSeek's MTP module, eagle with the head's "model") or a draft "model", and
//   "num_speculative_tokens".
// - SGLang 0.5.0 "Speculative Decoding" and its DeepSeek guide: --speculative-algorithm EAGLE
//   (DeepSeek's MTP module runs as NextN under it) with --speculative-num-steps k,
//   --speculative-eagle-topk 1 and --speculative-num-draft-tokens k + 1; an EAGLE head's path in
//   --speculative-draft-model-path.
// - TensorRT-LLM 1.0 LLM API: speculative_config with decoding_type MTP and
//   num_nextn_predict_layers for DeepSeek-V3/R1.
// What an engine has no documented switch for at that version is a comment.
#include <fmt/format.h>

#include "engine_args.h"

namespace shardwise::emit::internal {
namespace {

using Method = SpeculativeLaunch::Method;

// The shell variable an EAGLE head's location is read from (no catalog names one).
constexpr const char* kEagleVariable =
    "EAGLE_MODEL=${EAGLE_MODEL:?set EAGLE_MODEL to the EAGLE draft head (Hugging Face id or "
    "path)}\n";

bool DeepSeekMtp(const LaunchInputs& in) { return in.architecture.starts_with("DeepseekV3"); }

std::string Unsupported(Engine engine, const SpeculativeLaunch& s) {
  const char* what = s.method == Method::kMtp     ? "the model's MTP module"
                     : s.method == Method::kEagle ? "an EAGLE head"
                                                  : "a draft model";
  return fmt::format(
      "# The prediction drafted {} tokens per step with {}; {} documents no switch for it with "
      "this model: add it by hand or expect slower decode steps.\n",
      s.draft_tokens, what, EngineRelease(engine));
}

}  // namespace

void AddVllmSpeculative(const LaunchInputs& in, const PoolLaunch& pool,
                        std::vector<std::string>& args, std::string& notes) {
  const SpeculativeLaunch& s = pool.speculative;
  const int64_t k = s.draft_tokens;
  switch (s.method) {
    case Method::kNone:
      return;
    case Method::kMtp:
      if (!DeepSeekMtp(in)) {
        notes += Unsupported(Engine::kVllm, s);
        return;
      }
      args.push_back(fmt::format(
          R"(--speculative-config '{{"method":"deepseek_mtp","num_speculative_tokens":{}}}')", k));
      return;
    case Method::kEagle:
      notes += kEagleVariable;
      args.push_back(
          fmt::format(R"(--speculative-config "{{\"method\":\"eagle\",\"model\":\"$EAGLE_MODEL\",)"
                      R"(\"num_speculative_tokens\":{}}}")",
                      k));
      return;
    case Method::kDraftModel:
      args.push_back(
          fmt::format(R"(--speculative-config '{{"model":"{}","num_speculative_tokens":{}}}')",
                      s.draft_model, k));
      return;
  }
}

void AddSglangSpeculative(const PoolLaunch& pool, std::vector<std::string>& args,
                          std::string& notes) {
  const SpeculativeLaunch& s = pool.speculative;
  if (s.method == Method::kNone) return;
  if (s.method == Method::kDraftModel) {
    notes += Unsupported(Engine::kSglang, s);
    return;
  }
  args.push_back("--speculative-algorithm EAGLE");
  if (s.method == Method::kEagle) {
    notes += kEagleVariable;
    args.push_back("--speculative-draft-model-path $EAGLE_MODEL");
  }
  args.push_back(fmt::format("--speculative-num-steps {}", s.draft_tokens));
  args.push_back("--speculative-eagle-topk 1");
  args.push_back(fmt::format("--speculative-num-draft-tokens {}", s.draft_tokens + 1));
}

std::string TrtllmSpeculativeYaml(const LaunchInputs& in, const PoolLaunch& pool) {
  const SpeculativeLaunch& s = pool.speculative;
  if (s.method != Method::kMtp || !DeepSeekMtp(in)) return "";
  return fmt::format("speculative_config:\n  decoding_type: MTP\n  num_nextn_predict_layers: {}\n",
                     s.draft_tokens);
}

std::string TrtllmSpeculativeNote(const LaunchInputs& in, const PoolLaunch& pool) {
  const SpeculativeLaunch& s = pool.speculative;
  if (s.method == Method::kNone || !TrtllmSpeculativeYaml(in, pool).empty()) return "";
  return Unsupported(Engine::kTrtllm, s);
}

}  // namespace shardwise::emit::internal
