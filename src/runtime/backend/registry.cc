// The one table of the runtime's backends, as ggml's ggml-backend-reg.cpp keeps its registry: the
// communicators (`--backend`) and the compute devices (`--device-compute`) this build has. The
// only file with #ifdef SHARDWISE_WITH_MPI or SHARDWISE_WITH_CUDA; everything else looks a
// backend up by name here.
#include "shardwise/runtime/comm/registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string_view>

#include "cpu_kernels.h"
#include "shardwise/common/suggest.h"
#include "shardwise/runtime/comm/thread_comm.h"
#include "shardwise/runtime/compute_registry.h"
#include "shardwise/runtime/forward/stage_forward.h"

#ifdef SHARDWISE_WITH_MPI
#include "../comm/mpi_comm.h"
#endif
#ifdef SHARDWISE_WITH_CUDA
#include "../comm/nccl_comm.h"
#include "../cuda/cuda_kernels.h"
#include "../cuda/measure.h"
#include "shardwise/runtime/cuda/device.h"
#endif

namespace shardwise {
namespace {

using Body = std::function<Status(Communicator&)>;

// A communicator backend.
struct CommEntry {
  std::string_view name;
  Status (*launch)(int ranks, double timeout_s, const Body& body);
  // This process's part of a multi-process job (mpirun), if it is one.
  bool (*multi_process)();
};

// A compute backend.
struct ComputeEntry {
  std::string_view name;
  Status (*available)();  // a device present
  Status (*supports)(const OpNeed& op);
  StatusOr<std::unique_ptr<Kernels>> (*make)(int world_rank, int threads);
  double tolerance;  // compute_registry.h's ReferenceTolerance
};

bool NotMultiProcess() { return false; }
bool UnderMpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr; }

Status Always() { return Status(); }
Status EveryOp(const OpNeed&) { return Status(); }
StatusOr<std::unique_ptr<Kernels>> MakeCpu(int, int threads) {
  return std::unique_ptr<Kernels>(std::make_unique<CpuKernels>(threads));
}

#ifdef SHARDWISE_WITH_CUDA
// The GPU count, or an error saying none is there.
StatusOr<int> RequireGpus(std::string_view what) {
  const cuda::GpuInventory gpus = cuda::FindGpus();
  if (gpus.count == 0) {
    return Error(
        fmt::format("{} needs a GPU and this machine has none ({}); use --backend threads "
                    "`device_compute` cpu",
                    what, gpus.why_none));
  }
  return gpus.count;
}

Status LaunchCuda(int ranks, double timeout_s, const Body& body) {
  SW_RETURN_IF_ERROR(RequireGpus("`backend` cuda").status());
  return RunOnThreads(ranks, timeout_s, body);
}

// NCCL over one thread per GPU, or over the processes of an mpirun job (one per GPU).
Status LaunchNccl(int ranks, double timeout_s, const Body& body) {
  SW_ASSIGN_OR_RETURN(const int gpus, RequireGpus("`backend` nccl"));
  auto on_nccl = [&](Communicator& boot) -> Status {
    SW_ASSIGN_OR_RETURN(auto nccl, NcclWorld(boot, boot.rank() % gpus, timeout_s));
    return body(*nccl);
  };
#ifdef SHARDWISE_WITH_MPI
  if (UnderMpirun()) return RunOnMpi(ranks, timeout_s, on_nccl);
#endif
  if (ranks > gpus) {
    return Error(
        fmt::format("`backend` nccl runs one rank per GPU: the layout needs {} ranks and "
                    "this machine has {} GPU{}; use --backend cuda (ranks share GPUs over "
                    "the threads communicator)",
                    ranks, gpus, gpus == 1 ? "" : "s"));
  }
  return RunOnThreads(ranks, timeout_s, on_nccl);
}

Status CudaAvailable() { return RequireGpus("computing on CUDA").status(); }

StatusOr<std::unique_ptr<Kernels>> MakeCuda(int world_rank, int) {
  SW_ASSIGN_OR_RETURN(const int gpus, RequireGpus("`device_compute` cuda"));
  return cuda::MakeCudaKernels(world_rank % gpus);
}
#endif

const std::vector<CommEntry>& CommBackends() {
  static const std::vector<CommEntry> table = {
      {"threads", RunOnThreads, NotMultiProcess},
#ifdef SHARDWISE_WITH_MPI
      {"mpi", RunOnMpi, [] { return true; }},
#endif
#ifdef SHARDWISE_WITH_CUDA
      {"cuda", LaunchCuda, NotMultiProcess},
      {"nccl", LaunchNccl, UnderMpirun},
#endif
  };
  return table;
}

const std::vector<ComputeEntry>& ComputeBackends() {
  static const std::vector<ComputeEntry> table = {
      {"cpu", Always, EveryOp, MakeCpu, 1e-4},
#ifdef SHARDWISE_WITH_CUDA
      {"cuda", CudaAvailable, cuda::SupportsOp, MakeCuda, 2e-2},
#endif
  };
  return table;
}

template <typename Entry>
const Entry* Find(const std::vector<Entry>& table, std::string_view name) {
  for (const Entry& e : table) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

template <typename Entry>
std::vector<std::string> Names(const std::vector<Entry>& table) {
  std::vector<std::string> out;
  for (const Entry& e : table) out.emplace_back(e.name);
  return out;
}

// The error for a backend this build lacks or that does not exist.
Status Missing(std::string_view flag, std::string_view name, const std::vector<std::string>& known,
               std::string_view hint) {
  if (name == "mpi") {
    return Error(
        "this build has no MPI backend (install libopenmpi-dev and rebuild); use "
        "`backend` threads");
  }
  if (name == "cuda" || name == "nccl") {
    return Error(
        "this build has no CUDA backend (install the CUDA toolkit and NCCL, rebuild with "
        "-DSHARDWISE_WITH_CUDA=ON); use --backend threads --device-compute cpu");
  }
  return Error(UnknownNameMessage(flag, name, known, hint));
}

}  // namespace

std::vector<std::string> BackendNames() { return Names(CommBackends()); }

Status CheckRankCount(const std::string& backend, int64_t ranks) {
  constexpr int64_t kMaxThreadRanks = 256;  // one thread per rank; beyond this use MPI
  if (backend == "threads" && ranks > kMaxThreadRanks) {
    return Error(
        fmt::format("the threads backend runs at most {} ranks in one process, the "
                    "layout needs {}; use a smaller layout or `backend` mpi",
                    kMaxThreadRanks, ranks));
  }
  return Status();
}

Status LaunchRanks(const std::string& backend, int ranks, double timeout_s, const Body& body) {
  if (!(timeout_s > 0)) return Error("`timeout_s` must be positive");
  SW_RETURN_IF_ERROR(CheckRankCount(backend, ranks));
  const CommEntry* e = Find(CommBackends(), backend);
  if (e == nullptr) {
    return Missing("backend", backend, BackendNames(), "use threads, mpi, cuda or nccl");
  }
  return e->launch(ranks, timeout_s, body);
}

void AbortPeers(const std::string& backend, int exit_code) {
#ifdef SHARDWISE_WITH_MPI
  const CommEntry* e = Find(CommBackends(), backend);
  if (e != nullptr && e->multi_process()) AbortMpi(exit_code);
#endif
  (void)backend;
  (void)exit_code;
}

int ProcessRank(const std::string& backend) {
#ifdef SHARDWISE_WITH_MPI
  const CommEntry* e = Find(CommBackends(), backend);
  if (e != nullptr && e->multi_process()) return MpiWorldRank();
#endif
  (void)backend;
  return 0;
}

std::vector<std::string> DeviceComputeNames() { return Names(ComputeBackends()); }

Status CheckDeviceCompute(const std::string& device, const ModelSpec& model, const Layout& layout,
                          WeightStorage storage) {
  (void)layout;  // every parallel layout runs on every backend: the pass is the same
  const ComputeEntry* e = Find(ComputeBackends(), device);
  if (e == nullptr) {
    return Missing("`device_compute`", device, DeviceComputeNames(), "use cpu or cuda");
  }
  SW_RETURN_IF_ERROR(e->available());
  for (const OpNeed& op : StageOpNeeds(model, storage)) {
    if (Status s = e->supports(op); !s.ok()) {
      return Error(fmt::format("{}: {}", model.name, s.message()));
    }
  }
  return Status();
}

StatusOr<std::unique_ptr<Kernels>> MakeKernels(const std::string& device, int world_rank,
                                               int threads) {
  const ComputeEntry* e = Find(ComputeBackends(), device);
  if (e == nullptr) {
    return Missing("`device_compute`", device, DeviceComputeNames(), "use cpu or cuda");
  }
  return e->make(world_rank, threads);
}

double ReferenceTolerance(const std::string& device, WeightStorage storage) {
  const ComputeEntry* e = Find(ComputeBackends(), device);
  const double rounded_inputs = storage == WeightStorage::kInt8   ? 4e-2
                                : storage == WeightStorage::kBf16 ? 2e-2
                                                                  : 0.0;
  return std::max(e != nullptr ? e->tolerance : 1e-4, rounded_inputs);
}

std::vector<std::string> VisibleGpuNames() {
  std::vector<std::string> names;
#ifdef SHARDWISE_WITH_CUDA
  const cuda::GpuInventory gpus = cuda::FindGpus();
  for (int i = 0; i < gpus.count; ++i) {
    auto name = cuda::DeviceName(i);
    names.push_back(name.ok() ? *name : std::string("unknown GPU"));
  }
#endif
  return names;
}

StatusOr<MeasuredGpuRates> MeasureGpuRates() {
#ifdef SHARDWISE_WITH_CUDA
  return cuda::MeasureRates(0);
#else
  return Error("this build has no CUDA backend");
#endif
}

}  // namespace shardwise
