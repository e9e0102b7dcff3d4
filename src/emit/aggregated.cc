// Aggregated deployments: one command (and, for TensorRT-LLM, one options file) that starts the
// layout's instances, each prefilling and decoding its own requests.
#include <fmt/format.h>

#include "engine_args.h"

namespace shardwise::emit::internal {
namespace {

StatusOr<LaunchConfig> Vllm(const LaunchInputs& in, const std::vector<std::string>& names) {
  std::string notes = CheckpointNote(in);
  const std::vector<std::string> args = VllmArgs(in, in.pool, notes);
  return LaunchConfig{
      Engine::kVllm,
      {{names[0], Header(Engine::kVllm, in) + notes + Command("vllm serve " + in.model, args)}}};
}

StatusOr<LaunchConfig> Sglang(const LaunchInputs& in, const std::vector<std::string>& names) {
  std::string notes = CheckpointNote(in);
  std::vector<std::string> args = {fmt::format("--model-path {}", in.model)};
  for (std::string& a : SglangArgs(in, in.pool, notes)) args.push_back(std::move(a));
  return LaunchConfig{Engine::kSglang,
                      {{names[0], Header(Engine::kSglang, in) + notes +
                                      Command("python -m sglang.launch_server", args)}}};
}

StatusOr<LaunchConfig> Trtllm(const LaunchInputs& in, const std::vector<std::string>& names) {
  std::string notes = TrtllmWeightNote(in);
  std::vector<std::string> args = TrtllmArgs(in, in.pool, notes);
  args.push_back("--extra_llm_api_options " + names[1]);
  return LaunchConfig{
      Engine::kTrtllm,
      {{names[0], Header(Engine::kTrtllm, in) + notes + Command("trtllm-serve " + in.model, args)},
       {names[1], TrtllmYaml(in, in.pool)}}};
}

StatusOr<LaunchConfig> Dynamo(const LaunchInputs& in, const std::vector<std::string>& names) {
  std::string notes = CheckpointNote(in);
  std::vector<std::string> worker = {fmt::format("--model {}", in.model)};
  for (std::string& a : VllmArgs(in, in.pool, notes)) worker.push_back(std::move(a));
  return LaunchConfig{
      Engine::kDynamo,
      {{names[0], Header(Engine::kDynamo, in) + notes +
                      "# Needs etcd and NATS running (Dynamo's discovery and "
                      "messaging).\npython -m dynamo.frontend --http-port 8000 &\n" +
                      Command("python -m dynamo.vllm", worker)}}};
}

}  // namespace

StatusOr<LaunchConfig> AggregatedConfig(Engine engine, const LaunchInputs& in) {
  SW_RETURN_IF_ERROR(NoContextParallel(engine, in.pool.layout));
  return WriteConfig(engine, in, {Vllm, Sglang, Trtllm, Dynamo});
}

}  // namespace shardwise::emit::internal
