// Disaggregated deployments (xPyD): one command per prefill and per decode worker, each on its
// own GPUs with its own layout and batch, the KV-transfer connector that joins them, and the
// router in front, as each engine documents prefill/decode disaggregation:
// - vLLM 0.10.1: "Disaggregated Prefilling" and the NixlConnector usage guide
//   (--kv-transfer-config with NixlConnector, VLLM_NIXL_SIDE_CHANNEL_PORT, the P/D proxy
//   toy_proxy_server.py).
// - SGLang 0.5.0: "PD Disaggregation" (--disaggregation-mode, --disaggregation-transfer-backend,
//   --disaggregation-bootstrap-port) and sglang-router's PD mode (launch_router
//   --pd-disaggregation --prefill URL BOOTSTRAP_PORT --decode URL).
// - TensorRT-LLM 1.0: "Disaggregated Serving" (trtllm-serve disaggregated -c with
//   context_servers and generation_servers; cache_transceiver_config per server).
// - NVIDIA Dynamo 0.4.0: the vLLM backend's disagg.sh (dynamo.vllm --is-prefill-worker).
#include <fmt/format.h>

#include "engine_args.h"
#include "placement.h"

namespace shardwise::emit::internal {
namespace {

std::string ModeName(const Worker& w) { return w.prefill() ? "prefill" : "decode"; }

StatusOr<LaunchConfig> VllmDisaggregated(const LaunchInputs& in,
                                         const std::vector<std::string>& names) {
  SW_ASSIGN_OR_RETURN(const Placement p, PlaceWorkers(in, 8100, 8200, 1));
  std::string notes = CheckpointNote(in);
  if (p.hosts > 1) {
    notes +=
        "# Across nodes also set VLLM_NIXL_SIDE_CHANNEL_HOST to each node's address (the NIXL "
        "handshake).\n";
  }
  auto command = [&](const Worker& w, int64_t rank) {
    std::vector<std::string> args = {
        fmt::format("--port {}", w.port),
        R"(--kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}')"};
    std::string own;
    for (std::string& a : VllmArgs(in, *w.pool, own)) args.push_back(std::move(a));
    // Each worker's NIXL handshake listens on its own ports, one per rank from the base.
    const std::string env =
        VllmEnv(*w.pool, own) + fmt::format("VLLM_NIXL_SIDE_CHANNEL_PORT={} ",
                                            5600 + w.deployment_gpu + rank * p.gpus_per_host);
    std::string text =
        OnHost(Engine::kVllm, p, w, rank, env, "vllm serve " + in.model, std::move(args), own);
    AddNotes(notes, own);
    return text;
  };
  std::string prefill_hosts, prefill_ports, decode_hosts, decode_ports;
  for (const Worker& w : p.workers) {
    (w.prefill() ? prefill_hosts : decode_hosts) += " " + Host(p, w.host);
    (w.prefill() ? prefill_ports : decode_ports) += fmt::format(" {}", w.port);
  }
  const std::string router = Command(
      "python toy_proxy_server.py",
      {"--port 8000", "--prefiller-hosts" + prefill_hosts, "--prefiller-ports" + prefill_ports,
       "--decoder-hosts" + decode_hosts, "--decoder-ports" + decode_ports});
  const std::string body =
      Body(p, command,
           "# vLLM's P/D proxy sends each request to a prefill worker, then to a decode worker:\n"
           "# tests/v1/kv_connector/nixl_integration/toy_proxy_server.py in vLLM's repository "
           "(pip install vllm does not ship it).\n",
           router);
  return LaunchConfig{Engine::kVllm, {{names[0], Header(Engine::kVllm, in) + notes + body}}};
}

StatusOr<LaunchConfig> SglangDisaggregated(const LaunchInputs& in,
                                           const std::vector<std::string>& names) {
  // SGLang takes a few ports above each server's; keep the servers 10 apart.
  SW_ASSIGN_OR_RETURN(const Placement p, PlaceWorkers(in, 30000, 31000, 10));
  std::string notes = CheckpointNote(in);
  notes +=
      "# Mooncake moves the KV over RDMA: add --disaggregation-ib-device (e.g. mlx5_0) when the "
      "nodes have several NICs.\n";
  auto bootstrap = [](const Worker& w) { return 8998 + w.index; };
  auto command = [&](const Worker& w, int64_t rank) {
    std::vector<std::string> args = {fmt::format("--model-path {}", in.model),
                                     "--disaggregation-mode " + ModeName(w),
                                     "--disaggregation-transfer-backend mooncake"};
    if (w.prefill())
      args.push_back(fmt::format("--disaggregation-bootstrap-port {}", bootstrap(w)));
    args.push_back("--host 0.0.0.0");
    args.push_back(fmt::format("--port {}", w.port));
    std::string own;
    for (std::string& a : SglangArgs(in, *w.pool, own)) args.push_back(std::move(a));
    std::string text =
        OnHost(Engine::kSglang, p, w, rank, "", "python -m sglang.launch_server", args, own);
    AddNotes(notes, own);
    return text;
  };
  std::vector<std::string> router = {"--pd-disaggregation"};
  for (const Worker& w : p.workers) {
    router.push_back(w.prefill() ? fmt::format("--prefill http://{}:{} {}", Host(p, w.host), w.port,
                                               bootstrap(w))
                                 : fmt::format("--decode http://{}:{}", Host(p, w.host), w.port));
  }
  router.push_back("--host 0.0.0.0");
  router.push_back("--port 8000");
  const std::string body =
      Body(p, command,
           "# sglang-router in PD mode: each request goes to a prefill server (with its bootstrap "
           "port) and a decode server.\n",
           Command("python -m sglang_router.launch_router", router));
  return LaunchConfig{Engine::kSglang, {{names[0], Header(Engine::kSglang, in) + notes + body}}};
}

// A context or generation server's options: the pool's own, the KV cache transceiver, and for
// context servers no overlap scheduler (TensorRT-LLM 1.0 "Disaggregated Serving").
std::string TrtllmServerYaml(const LaunchInputs& in, const PoolLaunch& pool, bool context) {
  std::string yaml = TrtllmYaml(in, pool);
  if (context) yaml += "disable_overlap_scheduler: true\n";
  yaml += fmt::format("cache_transceiver_config:\n  backend: UCX\n  max_tokens_in_buffer: {}\n",
                      in.max_model_len);
  return yaml;
}

StatusOr<LaunchConfig> TrtllmDisaggregated(const LaunchInputs& in,
                                           const std::vector<std::string>& names) {
  SW_ASSIGN_OR_RETURN(const Placement p, PlaceWorkers(in, 8100, 8200, 1));
  std::string notes = TrtllmWeightNote(in);
  auto command = [&](const Worker& w, int64_t rank) {
    std::vector<std::string> args = {"--host 0.0.0.0", fmt::format("--port {}", w.port)};
    std::string own;
    for (std::string& a : TrtllmArgs(in, *w.pool, own)) args.push_back(std::move(a));
    args.push_back("--extra_llm_api_options " + names[w.prefill() ? 2 : 3]);
    std::string text =
        OnHost(Engine::kTrtllm, p, w, rank, "", "trtllm-serve " + in.model, args, own);
    AddNotes(notes, own);
    return text;
  };
  // The disaggregated server's YAML cannot read shell variables: other nodes are nodeK there.
  std::string servers[2];
  int64_t counts[2] = {0, 0};
  for (const Worker& w : p.workers) {
    const std::string host = p.hosts == 1 ? "localhost" : fmt::format("node{}", w.host);
    servers[w.prefill() ? 0 : 1] += fmt::format("    - \"{}:{}\"\n", host, w.port);
    ++counts[w.prefill() ? 0 : 1];
  }
  const std::string disagg = fmt::format(
      "# Written by shardwise: the disaggregated server in front of {} context and {} "
      "generation servers ({}).\n{}hostname: localhost\nport: 8000\nbackend: pytorch\n"
      "context_servers:\n  num_instances: {}\n  urls:\n{}generation_servers:\n"
      "  num_instances: {}\n  urls:\n{}",
      counts[0], counts[1], EngineVersion(Engine::kTrtllm),
      p.hosts > 1 ? "# Replace nodeK by the address of node K.\n" : "", counts[0], servers[0],
      counts[1], servers[1]);
  const std::string body =
      Body(p, command,
           "# The disaggregated server sends each request to a context (prefill) server, then to a "
           "generation (decode) server.\n",
           Command("trtllm-serve disaggregated", {"-c " + names[1]}));
  return LaunchConfig{Engine::kTrtllm,
                      {{names[0], Header(Engine::kTrtllm, in) + notes + body},
                       {names[1], disagg},
                       {names[2], TrtllmServerYaml(in, *in.prefill_pool, true)},
                       {names[3], TrtllmServerYaml(in, in.pool, false)}}};
}

StatusOr<LaunchConfig> DynamoDisaggregated(const LaunchInputs& in,
                                           const std::vector<std::string>& names) {
  SW_ASSIGN_OR_RETURN(const Placement p, PlaceWorkers(in, 0, 0, 0));
  std::string notes = CheckpointNote(in);
  notes +=
      "# Needs etcd and NATS running (Dynamo's discovery and messaging); on other nodes set "
      "ETCD_ENDPOINTS and NATS_SERVER to them.\n# dynamo.vllm sets up vLLM's NixlConnector: "
      "prefill workers send each prompt's KV to a decode worker over NIXL.\n";
  auto command = [&](const Worker& w, int64_t rank) {
    std::vector<std::string> args = {fmt::format("--model {}", in.model)};
    std::string own;
    for (std::string& a : VllmArgs(in, *w.pool, own)) args.push_back(std::move(a));
    if (w.prefill()) args.push_back("--is-prefill-worker");
    const std::string env = VllmEnv(*w.pool, own);
    std::string text =
        OnHost(Engine::kDynamo, p, w, rank, env, "python -m dynamo.vllm", std::move(args), own);
    AddNotes(notes, own);
    return text;
  };
  const std::string body =
      Body(p, command,
           "# Dynamo's frontend routes each request to a decode worker, which has a prefill "
           "worker prefill it.\n",
           "python -m dynamo.frontend --http-port 8000\n");
  return LaunchConfig{Engine::kDynamo, {{names[0], Header(Engine::kDynamo, in) + notes + body}}};
}

}  // namespace

StatusOr<LaunchConfig> DisaggregatedConfig(Engine engine, const LaunchInputs& in) {
  SW_RETURN_IF_ERROR(NoContextParallel(engine, in.prefill_pool->layout));
  SW_RETURN_IF_ERROR(NoContextParallel(engine, in.pool.layout));
  if (in.prefill_pool->workers < 1 || in.pool.workers < 1) {
    return Error("a disaggregated deployment needs at least one prefill and one decode worker");
  }
  return WriteConfig(
      engine, in,
      {VllmDisaggregated, SglangDisaggregated, TrtllmDisaggregated, DynamoDisaggregated});
}

}  // namespace shardwise::emit::internal
