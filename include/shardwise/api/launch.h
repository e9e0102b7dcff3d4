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

// The launch files of `deployment` for `engine` (vllm, sglang, trtllm, dynamo); `model_arg` is
// what the user named the model by (a catalog name becomes its Hugging Face repository, a
// config.json path its directory); `lengths` bound the engine's context (prompt + output).
StatusOr<LaunchReport> Launch(std::string_view engine, const std::string& model_arg,
                              const ModelSpec& model, const Deployment& deployment,
                              const Workload& lengths);

// {engine, version, deployment, name, pools: [{role, layout, workers, max_num_seqs,
// max_batched_tokens, chunked_prefill}], files: [{name, text}]}.
nlohmann::json ToJson(const LaunchReport& report);

}  // namespace shardwise::api
