#include "placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "engine_args.h"

namespace shardwise::emit::internal {
namespace {

// Ports the multi-node rendezvous of server `ordinal` listens on (SGLang's --dist-init-addr,
// vLLM's DP RPC and Ray's head), apart from every HTTP port the scripts use.
constexpr int64_t kDistInitPort = 20000;
constexpr int64_t kRayPort = 6379;  // Ray's default head port

class Placer {
 public:
  Placer(const LaunchInputs& in) : per_host_(std::max<int64_t>(1, in.gpus_per_host)) {
    p_.gpus_per_host = per_host_;
  }

  Status Add(Role role, int64_t index, const PoolLaunch* pool, int64_t gpus, int64_t port) {
    const int64_t used = offset_ % per_host_;
    if (used > 0 && (gpus > per_host_ || used + gpus > per_host_)) offset_ += per_host_ - used;
    Worker w{role, index, pool, gpus, offset_ / per_host_, 1, offset_ % per_host_, offset_};
    w.ordinal = static_cast<int64_t>(p_.workers.size());
    w.port = port;
    if (gpus > per_host_) {
      if (gpus % per_host_ != 0) {
        return Error(fmt::format(
            "a {}-GPU worker ({}) cannot be split evenly over hosts of {} GPUs; pick a layout "
            "whose GPUs per worker are a multiple of {}",
            gpus, pool->layout.ToString(), per_host_, per_host_));
      }
      w.hosts = gpus / per_host_;
    }
    p_.workers.push_back(w);
    offset_ += gpus;
    return Status();
  }

  Placement Done() {
    p_.hosts = std::max<int64_t>(1, (offset_ + per_host_ - 1) / per_host_);
    return std::move(p_);
  }

 private:
  int64_t per_host_;
  int64_t offset_ = 0;
  Placement p_;
};

// The environment that pins a server inside one host to its GPUs; a server of whole hosts
// takes them all.
std::string Devices(const Placement& p, const Worker& w) {
  if (w.hosts > 1 || (p.workers.size() == 1 && w.gpus == p.gpus_per_host)) return "";
  std::string ids;
  for (int64_t g = 0; g < w.gpus; ++g) ids += fmt::format("{}{}", g ? "," : "", w.first_gpu + g);
  return "CUDA_VISIBLE_DEVICES=" + ids + " ";
}

std::string RoleName(const Worker& w) {
  switch (w.role) {
    case Role::kPrefill:
      return "Prefill worker";
    case Role::kDecode:
      return "Decode worker";
    case Role::kAggregated:
      break;
  }
  return "Server";
}

// "# Prefill worker 1 of 2: tp4 on GPUs 0-3 of node 0." / "... on node 2 (rank 1 of 2)."
std::string WorkerComment(const Worker& w, int64_t rank) {
  const std::string of = w.role == Role::kAggregated
                             ? std::string()
                             : fmt::format(" {} of {}", w.index + 1, w.pool->workers);
  const std::string where =
      w.hosts > 1
          ? fmt::format("the {} GPUs of node {}, host {} of {}", w.gpus / w.hosts, w.host + rank,
                        rank + 1, w.hosts)
          : fmt::format("GPUs {}-{} of node {}", w.first_gpu, w.first_gpu + w.gpus - 1, w.host);
  return fmt::format("# {}{}: {} on {}.\n", RoleName(w), of, w.pool->layout.ToString(), where);
}

// vLLM: a layout whose DP ranks (engine cores of tp x pp GPUs) fit whole in a host runs as
// vLLM's multi-node data parallel deployment, one head and headless hosts; otherwise one rank
// spans hosts and Ray joins them ("Data Parallel Deployment" and "Distributed Inference and
// Serving", vLLM 0.10.1).
std::string VllmOnHost(bool serve, const Placement& p, const Worker& w, int64_t rank,
                       const std::string& head, const std::string& line,
                       std::vector<std::string> args, std::string& notes) {
  const Layout& l = w.pool->layout;
  const int64_t rank_gpus = l.tp * l.pp;
  if (l.dp > 1 && p.gpus_per_host % rank_gpus == 0) {
    const int64_t local = p.gpus_per_host / rank_gpus;
    if (rank > 0 && serve) args.push_back("--headless");
    args.push_back(fmt::format("--data-parallel-size-local {}", local));
    if (rank > 0) args.push_back(fmt::format("--data-parallel-start-rank {}", rank * local));
    args.push_back(fmt::format("--data-parallel-address {}", head));
    args.push_back(fmt::format("--data-parallel-rpc-port {}", kVllmDpRpcPort + w.ordinal));
    return Background(Command(line, args));
  }
  AddNotes(notes,
           "# A rank spanning hosts runs on a Ray cluster: the first host starts its head and the "
           "server, which waits for the other hosts to join (vLLM's Ray placement group).\n");
  if (rank > 0) {
    return fmt::format("ray start --address {}:{} --block &\n", head, kRayPort + w.ordinal);
  }
  args.push_back("--distributed-executor-backend ray");
  return fmt::format("ray start --head --port {}\n", kRayPort + w.ordinal) +
         Background(Command(line, args));
}

}  // namespace

StatusOr<Placement> PlaceWorkers(const LaunchInputs& in, int64_t prefill_port, int64_t decode_port,
                                 int64_t port_step) {
  Placer placer(in);
  for (const auto& [role, pool] :
       {std::pair{Role::kPrefill, &*in.prefill_pool}, {Role::kDecode, &in.pool}}) {
    const int64_t first = role == Role::kPrefill ? prefill_port : decode_port;
    for (int64_t i = 0; i < pool->workers; ++i) {
      SW_RETURN_IF_ERROR(placer.Add(role, i, pool, pool->layout.gpus(), first + i * port_step));
    }
  }
  return placer.Done();
}

StatusOr<Placement> PlaceServer(const LaunchInputs& in, int64_t gpus) {
  Placer placer(in);
  SW_RETURN_IF_ERROR(placer.Add(Role::kAggregated, 0, &in.pool, gpus, 8000));
  return placer.Done();
}

void AddNotes(std::string& notes, const std::string& more) {
  for (size_t start = 0; start < more.size();) {
    const size_t end = more.find('\n', start);
    const std::string line = more.substr(start, end - start + 1);
    if (notes.find(line) == std::string::npos) notes += line;
    start = end == std::string::npos ? more.size() : end + 1;
  }
}

std::string Host(const Placement& p, int64_t host) {
  return p.hosts == 1 ? "localhost" : fmt::format("$NODE{}", host);
}

std::string Background(std::string command) {
  command.insert(command.size() - 1, " &");
  return command;
}

std::string OnHost(Engine engine, const Placement& p, const Worker& w, int64_t rank,
                   const std::string& env, const std::string& program,
                   std::vector<std::string> args, std::string& notes) {
  const std::string line = Devices(p, w) + env + program;
  if (w.hosts == 1) return Background(Command(line, args));
  const std::string head = Host(p, w.host);
  switch (engine) {
    case Engine::kSglang:
      // SGLang "Multi-node deployment": every node runs the server with its rank.
      args.push_back(fmt::format("--nnodes {}", w.hosts));
      args.push_back(fmt::format("--node-rank {}", rank));
      args.push_back(fmt::format("--dist-init-addr {}:{}", head, kDistInitPort + w.ordinal));
      return Background(Command(line, args));
    case Engine::kTrtllm: {
      // TensorRT-LLM's multi-node serving: one MPI job over the hosts, its ranks set up by
      // trtllm-llmapi-launch, started from the first host.
      if (rank > 0) return fmt::format("# (started by mpirun from node {})\n", w.host);
      std::string hosts;
      for (int64_t r = 0; r < w.hosts; ++r) {
        hosts += fmt::format("{}{}:{}", r ? "," : "", Host(p, w.host + r), p.gpus_per_host);
      }
      return Background(Command(fmt::format("{}mpirun -np {} --host {} trtllm-llmapi-launch {}",
                                            env, w.gpus, hosts, program),
                                args));
    }
    case Engine::kVllm:
    case Engine::kDynamo:
    case Engine::kDynamoK8s:  // manifests place no hosts (kubernetes.cc)
    case Engine::kLlmD:
      return VllmOnHost(engine == Engine::kVllm, p, w, rank, head, line, std::move(args), notes);
  }
  return "";
}

std::string Body(const Placement& p,
                 const std::function<std::string(const Worker&, int64_t rank)>& command,
                 const std::string& router_comment, const std::string& router) {
  std::vector<std::string> on_host(static_cast<size_t>(p.hosts));
  for (const Worker& w : p.workers) {
    for (int64_t r = 0; r < w.hosts; ++r) {
      on_host[static_cast<size_t>(w.host + r)] += WorkerComment(w, r) + command(w, r);
    }
  }
  std::string out;
  if (p.hosts == 1) {
    out = on_host[0];
  } else {
    out = fmt::format(
        "# The deployment spans {} nodes (hosts of {} GPUs): run this script on each with "
        "NODE_RANK=0..{}, and NODEk set to the address of node k.\n"
        "NODE_RANK=${{NODE_RANK:?set NODE_RANK to this node's index}}\n",
        p.hosts, p.gpus_per_host, p.hosts - 1);
    for (int64_t k = 0; k < p.hosts; ++k) {
      out += fmt::format("NODE{0}=${{NODE{0}:?set NODE{0} to the address of node {0}}}\n", k);
    }
    for (int64_t k = 0; k < p.hosts; ++k) {
      const std::string& text = on_host[static_cast<size_t>(k)];
      if (!text.empty()) out += fmt::format("if [ \"$NODE_RANK\" = {} ]; then\n{}fi\n", k, text);
    }
  }
  if (!router.empty()) {
    const std::string routed = router_comment + Background(router);
    out += p.hosts == 1 ? routed : fmt::format("if [ \"$NODE_RANK\" = 0 ]; then\n{}fi\n", routed);
  }
  return out + "wait\n";
}

}  // namespace shardwise::emit::internal
