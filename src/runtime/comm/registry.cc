// The only file with #ifdef SHARDWISE_WITH_MPI (STYLE.md: one registry knows the backends).
#include "shardwise/runtime/comm/registry.h"

#include <fmt/format.h>

#include "shardwise/common/suggest.h"
#include "shardwise/runtime/comm/thread_comm.h"

#ifdef SHARDWISE_WITH_MPI
#include "mpi_comm.h"
#endif

namespace shardwise {

std::vector<std::string> BackendNames() {
  std::vector<std::string> names = {"threads"};
#ifdef SHARDWISE_WITH_MPI
  names.push_back("mpi");
#endif
  return names;
}

Status CheckRankCount(const std::string& backend, int64_t ranks) {
  constexpr int64_t kMaxThreadRanks = 256;  // one thread per rank; beyond this use MPI
  if (backend == "threads" && ranks > kMaxThreadRanks) {
    return Error(
        fmt::format("the threads backend runs at most {} ranks in one process, the "
                    "layout needs {}; use a smaller layout or --backend mpi",
                    kMaxThreadRanks, ranks));
  }
  return Status();
}

Status LaunchRanks(const std::string& backend, int ranks, double timeout_s,
                   const std::function<Status(Communicator&)>& body) {
  if (!(timeout_s > 0)) return Error("--timeout-s must be positive");
  SW_RETURN_IF_ERROR(CheckRankCount(backend, ranks));
  if (backend == "threads") return RunOnThreads(ranks, timeout_s, body);
#ifdef SHARDWISE_WITH_MPI
  if (backend == "mpi") return RunOnMpi(ranks, timeout_s, body);
#endif
  if (backend == "mpi") {
    return Error("this build has no MPI backend (install libopenmpi-dev and rebuild); use "
                 "--backend threads");
  }
  return Error(UnknownNameMessage("backend", backend, BackendNames(), "use threads or mpi"));
}

void AbortPeers(const std::string& backend, int exit_code) {
#ifdef SHARDWISE_WITH_MPI
  if (backend == "mpi") AbortMpi(exit_code);
#endif
  (void)backend;
  (void)exit_code;
}

int ProcessRank(const std::string& backend) {
#ifdef SHARDWISE_WITH_MPI
  if (backend == "mpi") return MpiWorldRank();
#endif
  (void)backend;
  return 0;
}

}  // namespace shardwise
