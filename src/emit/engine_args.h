// What aggregated and disaggregated launch scripts share: one engine instance's parallelism,
// batch and formats as each engine's flags, and the script's header and notes. Internal to
// emit/. Pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "shardwise/emit/launch_config.h"

namespace shardwise::emit::internal {

// The engine and version alone: "vLLM 0.10.1".
std::string_view EngineRelease(Engine engine);

// A shell command continued over several lines, one argument per line.
std::string Command(const std::string& head, const std::vector<std::string>& args);

// The script's opening lines: who wrote it, for what, and the documentation the flags follow.
std::string Header(Engine engine, const LaunchInputs& in);

// A note for weights that only a checkpoint already quantised can give (4-bit); empty otherwise.
std::string CheckpointNote(const LaunchInputs& in);

// An error when `l` needs context parallelism, which no emitted serving path runs.
Status NoContextParallel(Engine engine, const Layout& l);

// The arguments of one instance of `pool` for 'vllm serve' (and Dynamo's vLLM workers); what
// the operator must add (multi-node setup, EP size) goes into `notes`.
std::vector<std::string> VllmArgs(const LaunchInputs& in, const PoolLaunch& pool,
                                  std::string& notes);

// The environment (ending in a space, or empty) that selects `pool`'s EP kernels in vLLM.
std::string VllmEnv(const PoolLaunch& pool, std::string& notes);

// "DeepEP normal", "DeepEP low-latency" or "the engine's own all-to-all".
std::string_view KernelName(EpKernels kernels);

// The arguments of one instance of `pool` for 'python -m sglang.launch_server', after
// --model-path; `instances` of them serve the pool.
std::vector<std::string> SglangArgs(const LaunchInputs& in, const PoolLaunch& pool,
                                    std::string& notes);

// The arguments of one instance of `pool` for 'trtllm-serve MODEL', before
// --extra_llm_api_options.
std::vector<std::string> TrtllmArgs(const LaunchInputs& in, const PoolLaunch& pool,
                                    std::string& notes);

// The LLM API options (YAML) every TensorRT-LLM instance of `pool` takes: attention DP,
// chunked prefill, the KV cache's dtype.
std::string TrtllmYaml(const LaunchInputs& in, const PoolLaunch& pool);

// Notes for TensorRT-LLM's weights (fp8 comes from the checkpoint).
std::string TrtllmWeightNote(const LaunchInputs& in);

// Speculative decoding as `pool` assumed it (speculative_args.cc): vLLM's --speculative-config,
// SGLang's --speculative-* flags, TensorRT-LLM's speculative_config YAML (empty when none) and
// the comment where it has none.
void AddVllmSpeculative(const LaunchInputs& in, const PoolLaunch& pool,
                        std::vector<std::string>& args, std::string& notes);
void AddSglangSpeculative(const PoolLaunch& pool, std::vector<std::string>& args,
                          std::string& notes);
std::string TrtllmSpeculativeYaml(const LaunchInputs& in, const PoolLaunch& pool);
std::string TrtllmSpeculativeNote(const LaunchInputs& in, const PoolLaunch& pool);

// One engine's launch files for a deployment, named `names` (as LaunchFileNames lists them).
using ConfigWriter = StatusOr<LaunchConfig> (*)(const LaunchInputs& in,
                                                const std::vector<std::string>& names);
// The writers of one kind of deployment, one per engine.
struct ConfigWriters {
  ConfigWriter vllm, sglang, trtllm, dynamo;
};
// Calls `engine`'s writer with the names of the files of `in`'s kind of deployment.
StatusOr<LaunchConfig> WriteConfig(Engine engine, const LaunchInputs& in,
                                   const ConfigWriters& writers);

// The launch files of an aggregated deployment (aggregated.cc) and of a disaggregated one
// (disaggregated.cc), named as LaunchFileNames lists them.
StatusOr<LaunchConfig> AggregatedConfig(Engine engine, const LaunchInputs& in);
StatusOr<LaunchConfig> DisaggregatedConfig(Engine engine, const LaunchInputs& in);
// The Kubernetes manifest of either kind of deployment for kDynamoK8s or kLlmD (kubernetes.cc).
StatusOr<LaunchConfig> ManifestConfig(Engine engine, const LaunchInputs& in);

}  // namespace shardwise::emit::internal
