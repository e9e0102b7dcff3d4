// Engine launch configurations: the command lines (and, where the engine takes them, the config
// files) that start a serving engine with a planned deployment, for vLLM, SGLang, TensorRT-LLM
// and NVIDIA Dynamo (with vLLM workers), and the Kubernetes manifests that deploy it with vLLM
// workers: Dynamo's DynamoGraphDeployment and llm-d's Helm values. A deployment is aggregated (one
// layout whose instances prefill and decode) or disaggregated (a pool of prefill workers and a pool
// of decode workers, each its own layout, the KV cache moving between them through the engine's
// connector, and a router in front). Flags are the engines' own, as documented for the versions
// named in EngineVersion; what an engine cannot express (context parallelism in any of their
// serving paths) is an error, and what it leaves to the operator a comment, never a made-up flag.
// Pure functions; thread-safe.
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

// kDynamoK8s and kLlmD are Kubernetes manifests (kubernetes.cc) whose workers run vLLM.
enum class Engine { kVllm, kSglang, kTrtllm, kDynamo, kDynamoK8s, kLlmD };
StatusOr<Engine> ParseEngine(std::string_view name);
std::string_view EngineName(Engine engine);
// The engine version whose documentation the flags follow, e.g. "vLLM 0.10.1".
std::string_view EngineVersion(Engine engine);

// The kernels that exchange a MoE layer's tokens across its expert-parallel group, as the
// prediction timed them: the engine's own all-to-all, or DeepEP's normal (high-throughput,
// node-deduplicated) or low-latency kernels (DeepEP README).
enum class EpKernels { kEngineDefault, kDeepEpNormal, kDeepEpLowLatency };

// "engine-default", "deepep-normal" or "deepep-low-latency".
std::string_view EpKernelsName(EpKernels kernels);

// Speculative decoding as the prediction assumed it: the model's own multi-token-prediction
// module, an EAGLE head, or a separate draft model, proposing `draft_tokens` per step.
struct SpeculativeLaunch {
  enum class Method { kNone, kMtp, kEagle, kDraftModel };
  Method method = Method::kNone;
  int64_t draft_tokens = 0;
  std::string draft_model;  // kDraftModel: what the engine loads for it
};

// A pool of identical engine instances (workers) of one layout, and the batch each one runs.
struct PoolLaunch {
  Layout layout;
  int64_t workers = 1;  // instances of the layout; an aggregated layout's replicas are in its dp
  int64_t max_num_seqs = 256;  // concurrent sequences per instance, all its attention-DP ranks
  int64_t max_batched_tokens = 8192;  // tokens per iteration (prefill chunk) per attention rank
  // TensorRT-LLM sizes its KV cache as a fraction of the memory left free after the weights.
  double kv_free_fraction = 0.9;
  // Prompts split into chunks of max_batched_tokens (TensorRT-LLM's enable_chunked_prefill; vLLM
  // V1 and SGLang always chunk).
  bool chunked_prefill = true;
  // The expert-parallel exchange of prompts and of decode steps, both kEngineDefault without
  // an EP group; tokens dispatched in fp8; two micro-batches overlapping it with compute.
  EpKernels prefill_ep = EpKernels::kEngineDefault;
  EpKernels decode_ep = EpKernels::kEngineDefault;
  bool fp8_dispatch = false;
  bool two_batch_overlap = false;
  // Decode batches of up to this many sequences per attention rank run as captured CUDA
  // graphs; 0: the engine's own default.
  int64_t cuda_graph_max_batch = 0;
  // A vLLM profile predicted the pool with asynchronous scheduling (iteration k + 1 composed
  // while k runs, BatchPolicy::plans_ahead): vLLM's --async-scheduling, off by default at the
  // version emitted. SGLang's and TensorRT-LLM's overlap schedulers are on by default.
  bool async_scheduling = false;
  SpeculativeLaunch speculative;  // decode steps only: none in a prefill pool
};

struct LaunchInputs {
  std::string model;         // what the engine loads: a Hugging Face repository id or a local path
  std::string architecture;  // config.json's, e.g. "DeepseekV3ForCausalLM"
  bool moe = false;          // the model has routed experts
  // Aggregated: the instances that prefill and decode. Disaggregated: the decode workers.
  PoolLaunch pool;
  // Set: a disaggregated deployment whose prefill workers send their KV caches to `pool`'s.
  std::optional<PoolLaunch> prefill_pool;
  int64_t max_model_len = 4096;  // prompt + output tokens
  Dtype weight_dtype = Dtype::kBf16;
  Dtype kv_dtype = Dtype::kBf16;
  double gpu_memory_utilization = 0.9;
  int64_t gpus_per_host = 8;  // a worker larger than this spans hosts
  std::string profile;        // the engine profile the prediction used ("vllm-0.18")

  bool Disaggregated() const { return prefill_pool.has_value(); }
};

struct LaunchFile {
  std::string name;  // e.g. "launch_vllm.sh", "trtllm_extra.yaml"
  std::string text;
};

struct LaunchConfig {
  Engine engine = Engine::kVllm;
  std::vector<LaunchFile> files;  // the first is the shell script to run
};

// The names of the files MakeLaunchConfig writes for `engine`, the shell script (or manifest)
// first.
std::vector<std::string> LaunchFileNames(Engine engine, bool disaggregated);

// The launch files for `engine`; an error naming the layout feature the engine lacks.
StatusOr<LaunchConfig> MakeLaunchConfig(Engine engine, const LaunchInputs& in);

// The Hugging Face repository of a catalog model ("llama-3.1-70b" -> "meta-llama/Llama-3.1-70B"),
// as data/models/SOURCES.md lists them; empty when the catalog has none.
std::string HuggingFaceRepo(std::string_view catalog_name);

}  // namespace shardwise::emit
