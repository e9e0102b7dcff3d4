#include "shardwise/emit/launch_config.h"

#include <fmt/format.h>

#include <array>

#include "engine_args.h"
#include "shardwise/common/suggest.h"

namespace shardwise::emit {
namespace {

struct EngineInfo {
  Engine engine;
  std::string_view name;
  std::string_view version;  // the documentation the flags follow
};

constexpr std::array<EngineInfo, 6> kEngines = {{
    {Engine::kVllm, "vllm", "vLLM 0.10.1 ('vllm serve' engine arguments)"},
    {Engine::kSglang, "sglang", "SGLang 0.5.0 ('python -m sglang.launch_server' server arguments)"},
    {Engine::kTrtllm, "trtllm", "TensorRT-LLM 1.0 ('trtllm-serve', PyTorch backend, LLM API YAML)"},
    {Engine::kDynamo, "dynamo", "NVIDIA Dynamo 0.4.0 (dynamo.frontend and dynamo.vllm workers)"},
    {Engine::kDynamoK8s, "dynamo-k8s",
     "NVIDIA Dynamo 0.5 (DynamoGraphDeployment, nvidia.com/v1alpha1; vLLM workers)"},
    {Engine::kLlmD, "llm-d", "llm-d 0.2 (llm-d-modelservice Helm chart values; vLLM)"},
}};

const EngineInfo& Info(Engine e) {
  for (const EngineInfo& info : kEngines) {
    if (info.engine == e) return info;
  }
  return kEngines[0];
}

}  // namespace

StatusOr<Engine> ParseEngine(std::string_view name) {
  std::vector<std::string> names;
  for (const EngineInfo& info : kEngines) {
    if (info.name == name) return info.engine;
    names.emplace_back(info.name);
  }
  return Error(UnknownNameMessage("engine", name, names,
                                  "use vllm, sglang, trtllm, dynamo, dynamo-k8s or llm-d"));
}

std::string_view EngineName(Engine engine) { return Info(engine).name; }

std::vector<std::string> LaunchFileNames(Engine engine, bool disaggregated) {
  if (engine == Engine::kDynamoK8s) return {"dynamo_deployment.yaml"};
  if (engine == Engine::kLlmD) return {"llm-d_values.yaml"};
  std::vector<std::string> names = {fmt::format("launch_{}.sh", EngineName(engine))};
  if (engine != Engine::kTrtllm) return names;
  if (!disaggregated) {
    names.push_back("trtllm_extra.yaml");
  } else {
    // The disaggregated server's config, then the context and the generation servers' options.
    for (const char* name :
         {"trtllm_disagg.yaml", "trtllm_ctx_extra.yaml", "trtllm_gen_extra.yaml"}) {
      names.emplace_back(name);
    }
  }
  return names;
}
std::string_view EngineVersion(Engine engine) { return Info(engine).version; }

std::string_view EpKernelsName(EpKernels kernels) {
  switch (kernels) {
    case EpKernels::kDeepEpNormal:
      return "deepep-normal";
    case EpKernels::kDeepEpLowLatency:
      return "deepep-low-latency";
    case EpKernels::kEngineDefault:
      break;
  }
  return "engine-default";
}

StatusOr<LaunchConfig> MakeLaunchConfig(Engine engine, const LaunchInputs& in) {
  if (engine == Engine::kDynamoK8s || engine == Engine::kLlmD) {
    return internal::ManifestConfig(engine, in);
  }
  return in.Disaggregated() ? internal::DisaggregatedConfig(engine, in)
                            : internal::AggregatedConfig(engine, in);
}

std::string HuggingFaceRepo(std::string_view name) {
  // data/models/SOURCES.md: the repository each catalog config.json was copied from.
  static const std::array<std::pair<std::string_view, std::string_view>, 24> kRepos = {{
      {"llama-2-7b", "meta-llama/Llama-2-7b-hf"},
      {"llama-2-70b", "meta-llama/Llama-2-70b-hf"},
      {"llama-3.1-8b", "meta-llama/Llama-3.1-8B"},
      {"llama-3.1-70b", "meta-llama/Llama-3.1-70B"},
      {"llama-3.1-405b", "meta-llama/Llama-3.1-405B"},
      {"llama-3.3-70b", "meta-llama/Llama-3.3-70B-Instruct"},
      {"mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1"},
      {"mixtral-8x22b", "mistralai/Mixtral-8x22B-v0.1"},
      {"qwen2.5-72b", "Qwen/Qwen2.5-72B"},
      {"qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B"},
      {"qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B"},
      {"deepseek-v3", "deepseek-ai/DeepSeek-V3"},
      {"gpt-oss-20b", "openai/gpt-oss-20b"},
      {"gpt-oss-120b", "openai/gpt-oss-120b"},
      {"qwen3-32b", "Qwen/Qwen3-32B"},
      {"deepseek-r1", "deepseek-ai/DeepSeek-R1"},
      {"deepseek-v3.2", "deepseek-ai/DeepSeek-V3.2"},
      {"minimax-m2.5", "MiniMaxAI/MiniMax-M2.5"},
      {"qwen3.5-397b-a17b", "Qwen/Qwen3.5-397B-A17B"},
      {"qwen3.5-35b-a3b", "Qwen/Qwen3.5-35B-A3B"},
      {"glm-5", "zai-org/GLM-5"},
      {"kimi-k2.5", "moonshotai/Kimi-K2.5"},
      {"nemotron-h-56b", "nvidia/Nemotron-H-56B-Base-8K"},
      {"llama-4-maverick", "meta-llama/Llama-4-Maverick-17B-128E-Instruct"},
  }};
  for (const auto& [catalog, repo] : kRepos) {
    if (catalog == name) return std::string(repo);
  }
  return "";
}

}  // namespace shardwise::emit
