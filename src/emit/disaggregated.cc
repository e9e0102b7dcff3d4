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

#include <functional>

#include "engine_args.h"

namespace shardwise::emit::internal {
namespace {

// Where one worker of the deployment runs.
struct Worker {
  bool prefill = false;
  int64_t index = 0;  // within its pool
  const PoolLaunch* pool = nullptr;
  int64_t node = 0;
  int64_t first_gpu = 0;       // on its node
  int64_t deployment_gpu = 0;  // its first GPU, counted over the whole deployment
  bool spans_nodes = false;
  int64_t port = 0;  // its HTTP server
};

struct Placement {
  std::vector<Worker> workers;  // prefill workers first
  int64_t nodes = 1;
};

// Workers fill the nodes in order, prefill first; a worker that fits in one node never straddles
// two, and one larger than a node starts on a node of its own.
Placement Place(const LaunchInputs& in, int64_t prefill_port, int64_t decode_port,
                int64_t port_step) {
  Placement p;
  const int64_t per_node = std::max<int64_t>(1, in.gpus_per_node);
  int64_t offset = 0;
  for (const auto& [prefill, pool] : {std::pair{true, &*in.prefill_pool}, {false, &in.pool}}) {
    for (int64_t i = 0; i < pool->workers; ++i) {
      const int64_t gpus = pool->layout.gpus();
      const int64_t used = offset % per_node;
      if (used > 0 && (gpus > per_node || used + gpus > per_node)) offset += per_node - used;
      p.workers.push_back({prefill, i, pool, offset / per_node, offset % per_node, offset,
                           gpus > per_node,
                           (prefill ? prefill_port : decode_port) + i * port_step});
      offset += gpus;
    }
  }
  p.nodes = (offset + per_node - 1) / per_node;
  return p;
}

// Appends the lines of `more` that `notes` does not hold yet (every worker reports its own).
void AddNotes(std::string& notes, const std::string& more) {
  for (size_t start = 0; start < more.size();) {
    const size_t end = more.find('\n', start);
    const std::string line = more.substr(start, end - start + 1);
    if (notes.find(line) == std::string::npos) notes += line;
    start = end == std::string::npos ? more.size() : end + 1;
  }
}

std::string Role(const Worker& w) { return w.prefill ? "prefill" : "decode"; }

// "Prefill worker 1 of 2: tp4 on GPUs 0-3 of node 0."
std::string WorkerComment(const Worker& w) {
  const int64_t gpus = w.pool->layout.gpus();
  const std::string where = w.spans_nodes ? fmt::format("{} GPUs from node {} on", gpus, w.node)
                                          : fmt::format("GPUs {}-{} of node {}", w.first_gpu,
                                                        w.first_gpu + gpus - 1, w.node);
  return fmt::format("# {} worker {} of {}: {} on {}.\n", w.prefill ? "Prefill" : "Decode",
                     w.index + 1, w.pool->workers, w.pool->layout.ToString(), where);
}

// The environment that pins a worker inside one node to its GPUs.
std::string Devices(const Worker& w) {
  if (w.spans_nodes) return "";
  std::string ids;
  for (int64_t g = 0; g < w.pool->layout.gpus(); ++g) {
    ids += fmt::format("{}{}", g ? "," : "", w.first_gpu + g);
  }
  return "CUDA_VISIBLE_DEVICES=" + ids + " ";
}

std::string Background(std::string command) {
  command.insert(command.size() - 1, " &");
  return command;
}

// How the router reaches a node: localhost when the deployment fits one, else $NODE<k>.
std::string Host(const Placement& p, int64_t node) {
  return p.nodes == 1 ? "localhost" : fmt::format("$NODE{}", node);
}

// The script body: each node's workers (behind a NODE_RANK guard when there are several nodes),
// then the router on node 0. `command` writes one worker's command line and its notes.
std::string Body(const Placement& p, const std::function<std::string(const Worker&)>& command,
                 const std::string& router_comment, const std::string& router) {
  std::string out;
  const bool names_hosts = router.find("$NODE") != std::string::npos;
  if (p.nodes > 1) {
    out += fmt::format(
        "# The deployment spans {} nodes: run this script on each with NODE_RANK=0..{}; node 0 "
        "also runs the router{}.\nNODE_RANK=${{NODE_RANK:?set NODE_RANK to this node's index}}\n",
        p.nodes, p.nodes - 1,
        names_hosts ? ",\n# which reaches node k at $NODEk (set them to the nodes' addresses)"
                    : "");
  }
  for (int64_t node = 0; node < p.nodes; ++node) {
    std::string workers;
    for (const Worker& w : p.workers) {
      if (w.node == node) workers += WorkerComment(w) + command(w);
    }
    if (p.nodes == 1) {
      out += workers;
    } else if (!workers.empty()) {
      out += fmt::format("if [ \"$NODE_RANK\" = {} ]; then\n{}fi\n", node, workers);
    }
  }
  std::string hosts;
  for (int64_t node = 0; p.nodes > 1 && names_hosts && node < p.nodes; ++node) {
    hosts +=
        node == 0
            ? "NODE0=${NODE0:-localhost}\n"
            : fmt::format("NODE{0}=${{NODE{0}:?set NODE{0} to the address of node {0}}}\n", node);
  }
  const std::string routed = router_comment + Background(router);
  out += p.nodes == 1 ? routed
                      : fmt::format("if [ \"$NODE_RANK\" = 0 ]; then\n{}{}fi\n", hosts, routed);
  return out + "wait\n";
}

StatusOr<LaunchConfig> VllmDisaggregated(const LaunchInputs& in,
                                         const std::vector<std::string>& names) {
  const Placement p = Place(in, 8100, 8200, 1);
  std::string notes = CheckpointNote(in);
  if (p.nodes > 1) {
    notes +=
        "# Across nodes also set VLLM_NIXL_SIDE_CHANNEL_HOST to each node's address (the NIXL "
        "handshake).\n";
  }
  auto command = [&](const Worker& w) {
    std::vector<std::string> args = {
        fmt::format("--port {}", w.port),
        R"(--kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}')"};
    std::string own;
    for (std::string& a : VllmArgs(in, *w.pool, own)) args.push_back(std::move(a));
    AddNotes(notes, own);
    // Each worker's NIXL handshake listens on its own ports, one per rank from the base.
    return Background(Command(fmt::format("{}VLLM_NIXL_SIDE_CHANNEL_PORT={} vllm serve {}",
                                          Devices(w), 5600 + w.deployment_gpu, in.model),
                              args));
  };
  std::string prefill_hosts, prefill_ports, decode_hosts, decode_ports;
  for (const Worker& w : p.workers) {
    (w.prefill ? prefill_hosts : decode_hosts) += " " + Host(p, w.node);
    (w.prefill ? prefill_ports : decode_ports) += fmt::format(" {}", w.port);
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
  const Placement p = Place(in, 30000, 31000, 10);
  std::string notes = CheckpointNote(in);
  notes +=
      "# Mooncake moves the KV over RDMA: add --disaggregation-ib-device (e.g. mlx5_0) when the "
      "nodes have several NICs.\n";
  auto bootstrap = [](const Worker& w) { return 8998 + w.index; };
  auto command = [&](const Worker& w) {
    std::vector<std::string> args = {fmt::format("--model-path {}", in.model),
                                     "--disaggregation-mode " + Role(w),
                                     "--disaggregation-transfer-backend mooncake"};
    if (w.prefill) args.push_back(fmt::format("--disaggregation-bootstrap-port {}", bootstrap(w)));
    args.push_back("--host 0.0.0.0");
    args.push_back(fmt::format("--port {}", w.port));
    std::string own;
    for (std::string& a : SglangArgs(in, *w.pool, own)) args.push_back(std::move(a));
    AddNotes(notes, own);
    return Background(Command(Devices(w) + "python -m sglang.launch_server", args));
  };
  std::vector<std::string> router = {"--pd-disaggregation"};
  for (const Worker& w : p.workers) {
    router.push_back(
        w.prefill ? fmt::format("--prefill http://{}:{} {}", Host(p, w.node), w.port, bootstrap(w))
                  : fmt::format("--decode http://{}:{}", Host(p, w.node), w.port));
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
  const Placement p = Place(in, 8100, 8200, 1);
  std::string notes = TrtllmWeightNote(in);
  auto command = [&](const Worker& w) {
    std::vector<std::string> args = {"--host 0.0.0.0", fmt::format("--port {}", w.port)};
    std::string own;
    for (std::string& a : TrtllmArgs(in, *w.pool, own)) args.push_back(std::move(a));
    AddNotes(notes, own);
    args.push_back("--extra_llm_api_options " + names[w.prefill ? 2 : 3]);
    if (w.spans_nodes) {
      AddNotes(notes,
               "# A server spanning nodes runs under mpirun or srun with trtllm-llmapi-launch "
               "(TensorRT-LLM's multi-node serving).\n");
    }
    return Background(Command(Devices(w) + "trtllm-serve " + in.model, args));
  };
  // The disaggregated server's YAML cannot read shell variables: other nodes are nodeK there.
  std::string servers[2];
  int64_t counts[2] = {0, 0};
  for (const Worker& w : p.workers) {
    const std::string host = p.nodes == 1 ? "localhost" : fmt::format("node{}", w.node);
    servers[w.prefill ? 0 : 1] += fmt::format("    - \"{}:{}\"\n", host, w.port);
    ++counts[w.prefill ? 0 : 1];
  }
  const std::string disagg = fmt::format(
      "# Written by shardwise: the disaggregated server in front of {} context and {} "
      "generation servers ({}).\n{}hostname: localhost\nport: 8000\nbackend: pytorch\n"
      "context_servers:\n  num_instances: {}\n  urls:\n{}generation_servers:\n"
      "  num_instances: {}\n  urls:\n{}",
      counts[0], counts[1], EngineVersion(Engine::kTrtllm),
      p.nodes > 1 ? "# Replace nodeK by the address of node K.\n" : "", counts[0], servers[0],
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
  const Placement p = Place(in, 0, 0, 0);
  std::string notes = CheckpointNote(in);
  notes +=
      "# Needs etcd and NATS running (Dynamo's discovery and messaging); on other nodes set "
      "ETCD_ENDPOINTS and NATS_SERVER to them.\n# dynamo.vllm sets up vLLM's NixlConnector: "
      "prefill workers send each prompt's KV to a decode worker over NIXL.\n";
  auto command = [&](const Worker& w) {
    std::vector<std::string> args = {fmt::format("--model {}", in.model)};
    std::string own;
    for (std::string& a : VllmArgs(in, *w.pool, own)) args.push_back(std::move(a));
    AddNotes(notes, own);
    if (w.prefill) args.push_back("--is-prefill-worker");
    return Background(Command(Devices(w) + "python -m dynamo.vllm", args));
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
