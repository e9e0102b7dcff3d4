// Aggregated deployments: one command (and, for TensorRT-LLM, one options file) that starts the
// layout's instances, each prefilling and decoding its own requests. A server larger than a host
// starts on each of its hosts with the engine's multi-node flags (placement.h).
#include <fmt/format.h>

#include "engine_args.h"
#include "placement.h"

namespace shardwise::emit::internal {
namespace {

// The script that starts one server running `program` with `args` after `env`, and `frontend`
// (if any) in front of it: single commands when the server fits in a host, else one per host.
StatusOr<std::string> Server(Engine engine, const LaunchInputs& in, int64_t gpus,
                             const std::string& env, const std::string& program,
                             const std::vector<std::string>& args, std::string& notes,
                             const std::string& frontend = "") {
  if (gpus <= in.gpus_per_host) {
    return (frontend.empty() ? "" : Background(frontend)) + Command(env + program, args);
  }
  SW_ASSIGN_OR_RETURN(const Placement p, PlaceServer(in, gpus));
  std::string own;
  const std::string body = Body(
      p,
      [&](const Worker& w, int64_t rank) {
        return OnHost(engine, p, w, rank, env, program, args, own);
      },
      "", frontend);
  AddNotes(notes, own);
  return body;
}

StatusOr<LaunchConfig> Vllm(const LaunchInputs& in, const std::vector<std::string>& names) {
  std::string notes = CheckpointNote(in);
  const std::vector<std::string> args = VllmArgs(in, in.pool, notes);
  const std::string env = VllmEnv(in.pool, notes);
  SW_ASSIGN_OR_RETURN(const std::string body, Server(Engine::kVllm, in, in.pool.layout.gpus(), env,
                                                     "vllm serve " + in.model, args, notes));
  return LaunchConfig{Engine::kVllm, {{names[0], Header(Engine::kVllm, in) + notes + body}}};
}

StatusOr<LaunchConfig> Sglang(const LaunchInputs& in, const std::vector<std::string>& names) {
  std::string notes = CheckpointNote(in);
  std::vector<std::string> args = {fmt::format("--model-path {}", in.model)};
  for (std::string& a : SglangArgs(in, in.pool, notes)) args.push_back(std::move(a));
  // With attention DP across replicas SGLang starts one server per replica (SglangArgs' note).
  const Layout& l = in.pool.layout;
  const int64_t gpus = l.AttentionDp() > 1 && l.Replicas() > 1 ? l.InstanceGpus() : l.gpus();
  SW_ASSIGN_OR_RETURN(
      const std::string body,
      Server(Engine::kSglang, in, gpus, "", "python -m sglang.launch_server", args, notes));
  return LaunchConfig{Engine::kSglang, {{names[0], Header(Engine::kSglang, in) + notes + body}}};
}

StatusOr<LaunchConfig> Trtllm(const LaunchInputs& in, const std::vector<std::string>& names) {
  std::string notes = TrtllmWeightNote(in);
  std::vector<std::string> args = TrtllmArgs(in, in.pool, notes);
  args.push_back("--extra_llm_api_options " + names[1]);
  SW_ASSIGN_OR_RETURN(const std::string body,
                      Server(Engine::kTrtllm, in, in.pool.layout.InstanceGpus(), "",
                             "trtllm-serve " + in.model, args, notes));
  return LaunchConfig{Engine::kTrtllm,
                      {{names[0], Header(Engine::kTrtllm, in) + notes + body},
                       {names[1], TrtllmYaml(in, in.pool)}}};
}

StatusOr<LaunchConfig> Dynamo(const LaunchInputs& in, const std::vector<std::string>& names) {
  std::string notes = CheckpointNote(in);
  std::vector<std::string> worker = {fmt::format("--model {}", in.model)};
  for (std::string& a : VllmArgs(in, in.pool, notes)) worker.push_back(std::move(a));
  const std::string env = VllmEnv(in.pool, notes);
  notes += "# Needs etcd and NATS running (Dynamo's discovery and messaging).\n";
  SW_ASSIGN_OR_RETURN(
      const std::string body,
      Server(Engine::kDynamo, in, in.pool.layout.gpus(), env, "python -m dynamo.vllm", worker,
             notes, "python -m dynamo.frontend --http-port 8000\n"));
  return LaunchConfig{Engine::kDynamo, {{names[0], Header(Engine::kDynamo, in) + notes + body}}};
}

}  // namespace

StatusOr<LaunchConfig> AggregatedConfig(Engine engine, const LaunchInputs& in) {
  SW_RETURN_IF_ERROR(NoContextParallel(engine, in.pool.layout));
  return WriteConfig(engine, in, {Vllm, Sglang, Trtllm, Dynamo});
}

}  // namespace shardwise::emit::internal
