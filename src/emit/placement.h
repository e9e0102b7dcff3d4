// Where a deployment's engine servers run, and the script that starts them. Servers fill the
// hosts in order, prefill workers first; a server that fits in one host never straddles two, and
// one larger than a host spans whole hosts of its own, started on each with its engine's
// multi-node flags. A script covering several hosts runs once per host under NODE_RANK, and
// reaches host k at $NODEk. Internal to emit/. Pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "shardwise/emit/launch_config.h"

namespace shardwise::emit::internal {

enum class Role { kAggregated, kPrefill, kDecode };

// The port vLLM's multi-node data parallel ranks meet their head on (its "Data Parallel
// Deployment" example); scripts add the server's ordinal.
inline constexpr int64_t kVllmDpRpcPort = 13345;

// One engine server: an aggregated deployment's, or one prefill or decode worker.
struct Worker {
  Role role = Role::kAggregated;
  int64_t index = 0;  // within its pool
  const PoolLaunch* pool = nullptr;
  int64_t gpus = 0;
  int64_t host = 0;            // its first host
  int64_t hosts = 1;           // > 1: it spans that many whole hosts
  int64_t first_gpu = 0;       // on its first host
  int64_t deployment_gpu = 0;  // its first GPU, counted over the whole deployment
  int64_t ordinal = 0;         // among the deployment's servers
  int64_t port = 0;            // its HTTP server
  bool prefill() const { return role == Role::kPrefill; }
};

struct Placement {
  std::vector<Worker> workers;  // prefill workers first
  int64_t hosts = 1;
  int64_t gpus_per_host = 8;
};

// The servers of a disaggregated deployment, each pool's ports counting up from its first by
// `port_step`; an error when a worker larger than a host does not fill whole hosts.
StatusOr<Placement> PlaceWorkers(const LaunchInputs& in, int64_t prefill_port, int64_t decode_port,
                                 int64_t port_step);
// An aggregated deployment's one server of `gpus` GPUs (its whole layout, or one replica where
// the engine starts one server per replica).
StatusOr<Placement> PlaceServer(const LaunchInputs& in, int64_t gpus);

// Appends the lines of `more` that `notes` does not hold yet (every worker reports its own).
void AddNotes(std::string& notes, const std::string& more);

// How a script reaches host `host`: localhost when the deployment fits one, else $NODE<k>.
std::string Host(const Placement& p, int64_t host);

// `command` (one line or continued lines ending in a newline) run in the background.
std::string Background(std::string command);

// The command that starts `w` on the `rank`-th of its hosts, from what it runs on one host:
// `env` (ending in a space, or empty), `program` and its `args`, with the engine's multi-node
// flags added when `w` spans hosts (SGLang's --nnodes/--node-rank/--dist-init-addr; vLLM's data
// parallel ranks per host, or a Ray cluster when one rank spans hosts; TensorRT-LLM under
// mpirun from the first host). In the background; what the operator must know goes to `notes`.
std::string OnHost(Engine engine, const Placement& p, const Worker& w, int64_t rank,
                   const std::string& env, const std::string& program,
                   std::vector<std::string> args, std::string& notes);

// The script body: each host's commands (behind a NODE_RANK guard when there are several hosts),
// then `router` (if any) on host 0, then `wait`. `command(w, rank)` writes worker `w`'s command
// on the `rank`-th of its hosts.
std::string Body(const Placement& p,
                 const std::function<std::string(const Worker&, int64_t rank)>& command,
                 const std::string& router_comment, const std::string& router);

}  // namespace shardwise::emit::internal
