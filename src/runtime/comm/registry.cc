// The only file with #ifdef SHARDWISE_WITH_MPI, and with compute_registry.cc the only runtime file
// with #ifdef SHARDWISE_WITH_CUDA (STYLE.md: one registry knows the backends).
#include "shardwise/runtime/comm/registry.h"

#include <cstdlib>

#include <fmt/format.h>

#include "shardwise/common/suggest.h"
#include "shardwise/runtime/comm/thread_comm.h"

#ifdef SHARDWISE_WITH_MPI
#include "mpi_comm.h"
#endif
#ifdef SHARDWISE_WITH_CUDA
#include "nccl_comm.h"
#include "shardwise/runtime/cuda/device.h"
#endif

namespace shardwise {

std::vector<std::string> BackendNames() {
  std::vector<std::string> names = {"threads"};
#ifdef SHARDWISE_WITH_MPI
  names.push_back("mpi");
#endif
#ifdef SHARDWISE_WITH_CUDA
  names.push_back("cuda");
  names.push_back("nccl");
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

namespace {

#ifdef SHARDWISE_WITH_CUDA
// The GPU count, or an error saying none is there and what to use instead.
StatusOr<int> RequireGpus(const std::string& backend) {
  const cuda::GpuInventory gpus = cuda::FindGpus();
  if (gpus.count == 0) {
    return Error(fmt::format("--backend {} needs a GPU and this machine has none ({}); use --backend threads",
                             backend, gpus.why_none));
  }
  return gpus.count;
}

// NCCL over one thread per GPU, or over the processes of an mpirun job (one per GPU).
Status LaunchNccl(int ranks, double timeout_s, const std::function<Status(Communicator&)>& body) {
  SW_ASSIGN_OR_RETURN(const int gpus, RequireGpus("nccl"));
  auto on_nccl = [&](Communicator& boot) -> Status {
    SW_ASSIGN_OR_RETURN(auto nccl, NcclWorld(boot, boot.rank() % gpus, timeout_s));
    return body(*nccl);
  };
#ifdef SHARDWISE_WITH_MPI
  if (std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr) return RunOnMpi(ranks, timeout_s, on_nccl);
#endif
  if (ranks > gpus) {
    return Error(fmt::format("--backend nccl runs one rank per GPU: the layout needs {} ranks and this machine "
                             "has {} GPU{}; use --backend cuda (ranks share GPUs over the threads communicator)",
                             ranks, gpus, gpus == 1 ? "" : "s"));
  }
  return RunOnThreads(ranks, timeout_s, on_nccl);
}
#endif

}  // namespace

Status LaunchRanks(const std::string& backend, int ranks, double timeout_s,
                   const std::function<Status(Communicator&)>& body) {
  if (!(timeout_s > 0)) return Error("--timeout-s must be positive");
  SW_RETURN_IF_ERROR(CheckRankCount(backend, ranks));
  if (backend == "threads") return RunOnThreads(ranks, timeout_s, body);
#ifdef SHARDWISE_WITH_MPI
  if (backend == "mpi") return RunOnMpi(ranks, timeout_s, body);
#endif
#ifdef SHARDWISE_WITH_CUDA
  if (backend == "cuda") {
    SW_RETURN_IF_ERROR(RequireGpus("cuda").status());
    return RunOnThreads(ranks, timeout_s, body);
  }
  if (backend == "nccl") return LaunchNccl(ranks, timeout_s, body);
#else
  if (backend == "cuda" || backend == "nccl") {
    return Error(fmt::format("this build has no CUDA backend (install the CUDA toolkit and NCCL, rebuild with "
                             "-DSHARDWISE_WITH_CUDA=ON); use --backend threads"));
  }
#endif
  if (backend == "mpi") {
    return Error("this build has no MPI backend (install libopenmpi-dev and rebuild); use "
                 "--backend threads");
  }
  return Error(UnknownNameMessage("backend", backend, BackendNames(), "use threads, mpi, cuda or nccl"));
}

void AbortPeers(const std::string& backend, int exit_code) {
#ifdef SHARDWISE_WITH_MPI
  if (backend == "mpi" || (backend == "nccl" && std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr)) AbortMpi(exit_code);
#endif
  (void)backend;
  (void)exit_code;
}

int ProcessRank(const std::string& backend) {
#ifdef SHARDWISE_WITH_MPI
  if (backend == "mpi" || (backend == "nccl" && std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr)) {
    return MpiWorldRank();
  }
#endif
  (void)backend;
  return 0;
}

}  // namespace shardwise
