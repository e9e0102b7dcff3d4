// Engine launch configurations: the command line (and, where the engine takes one, the config
// file) that starts a serving engine with a planned layout, for vLLM, SGLang, TensorRT-LLM and
// NVIDIA Dynamo (with vLLM workers). Flags are the engines' own, as documented for the versions
// named in kEngineVersions; what an engine cannot express (context parallelism in vLLM's
// serving path, data parallelism in trtllm-serve) is an error or a comment, never a made-up
// flag. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/layout/layout.h"
#include "shardwise/model/dtype.h"

namespace shardwise::emit {

enum class Engine { kVllm, kSglang, kTrtllm, kDynamo };
StatusOr<Engine> ParseEngine(std::string_view name);
std::string_view EngineName(Engine engine);
// The engine version whose documentation the flags follow, e.g. "vLLM 0.10.1".
std::string_view EngineVersion(Engine engine);

struct LaunchInputs {
  std::string model;  // what the engine loads: a Hugging Face repository id or a local path
  Layout layout;
  bool moe = false;                   // the model has routed experts
  int64_t max_num_seqs = 256;         // concurrent sequences per replica
  int64_t max_batched_tokens = 8192;  // tokens per prefill chunk / iteration
  int64_t max_model_len = 4096;       // prompt + output tokens
  Dtype weight_dtype = Dtype::kBf16;
  Dtype kv_dtype = Dtype::kBf16;
  double gpu_memory_utilization = 0.9;
  // TensorRT-LLM sizes its KV cache as a fraction of the memory left free after the weights.
  double kv_free_fraction = 0.9;
  int64_t gpus_per_node = 8;
  // Dynamo only: a disaggregated deployment whose prefill workers run this layout (and batch),
  // the decode workers `layout`. Unset: one aggregated worker.
  std::optional<Layout> prefill_layout;
  int64_t prefill_max_num_seqs = 1;
};

struct LaunchFile {
  std::string name;  // e.g. "launch_vllm.sh", "trtllm_extra.yaml"
  std::string text;
};

struct LaunchConfig {
  Engine engine = Engine::kVllm;
  std::vector<LaunchFile> files;  // the first is the shell script to run
};

// The names of the files MakeLaunchConfig writes for `engine`, the shell script first.
std::vector<std::string> LaunchFileNames(Engine engine);

// The launch files for `engine`; an error naming the layout feature the engine lacks.
StatusOr<LaunchConfig> MakeLaunchConfig(Engine engine, const LaunchInputs& in);

// The Hugging Face repository of a catalog model ("llama-3.1-70b" -> "meta-llama/Llama-3.1-70B"),
// as data/models/SOURCES.md lists them; empty when the catalog has none.
std::string HuggingFaceRepo(std::string_view catalog_name);

}  // namespace shardwise::emit
