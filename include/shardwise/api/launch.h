// Launch: the engine launch files of a deployment (emit/launch_config.h), written from the very
// settings its pools carry (deploy/deployment.h): each pool's layout and workers, its scheduler's
// sequences and token budget per attention rank, whether it chunks prompts, and the KV share of
// memory its step model leaves. What --emit writes is thus what simulate, plan and price served
// (`engine_settings` in their JSON). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/deploy/deployment.h"
#include "shardwise/emit/launch_config.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/options.h"

namespace shardwise::api {

struct LaunchReport {
  emit::Engine engine = emit::Engine::kVllm;
  std::string name;  // the deployment, "dp2tp4" or "2P x tp4 + 1D x dp8ep8"
  emit::LaunchInputs inputs;
  emit::LaunchConfig config;
  std::vector<std::string> notes;  // for the user: a launch for another engine than modelled
};

// What the user sets instead of what Launch derives.
struct LaunchOverrides {
  // What the engine loads (a Hugging Face repository id or a local path); empty: the catalog
  // model's repository, or the config.json's directory.
  std::string hf_id;
  // The longest request (prompt + output) the engine accepts; 0: the model's context, capped
  // where one worker's KV cache holds less.
  int64_t max_model_len = 0;
};

// The engine profile family that models what `--emit engine` launches: vllm for Dynamo's and
// llm-d's workers (vLLM's), else the engine itself; an error for an unknown engine.
StatusOr<std::string> ModelledEngine(std::string_view emit_engine);

// What the engine loads: `hf_id`, else a catalog model's Hugging Face repository, else the
// directory holding a config.json, else the name as given. It is written unquoted into shell
// scripts: letters, digits and . _ - / only (an error naming `hf_id` otherwise).
StatusOr<std::string> ServedModel(const std::string& model_arg, const std::string& hf_id);

// The launch files of `deployment` for `engine` (vllm, sglang, trtllm, dynamo, or the manifests
// dynamo-k8s and llm-d); `model_arg` is
// what the user named the model by (a catalog name becomes its Hugging Face repository, a
// config.json path its directory); `lengths` are the planned request, which the engine's
// context must hold. Errors name the field: `hf_id` with characters a shell or an engine would
// misread, `max_model_len` below the planned request or beyond the model's context.
StatusOr<LaunchReport> Launch(std::string_view engine, const std::string& model_arg,
                              const ModelSpec& model, const Deployment& deployment,
                              const Workload& lengths, const LaunchOverrides& overrides = {});

// {engine, version, deployment, name, model, max_model_len, pools: [{role, layout, workers,
// max_num_seqs, max_batched_tokens, chunked_prefill, prefill_ep, decode_ep, two_batch_overlap,
// cuda_graph_max_batch}], files: [{name, text}]}.
nlohmann::json ToJson(const LaunchReport& report);

}  // namespace shardwise::api
