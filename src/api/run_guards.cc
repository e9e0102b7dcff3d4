#include "shardwise/api/run_guards.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "shardwise/common/format.h"
#include "shardwise/runtime/run_budget.h"

namespace shardwise::api {
namespace {

std::optional<int64_t> EnvInt(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (*end != '\0') return std::nullopt;
  return n;
}

// A number from a file such as /sys/fs/cgroup/memory.max ("max" means no limit).
std::optional<double> FileNumber(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(word.c_str(), &end);
  if (*end != '\0') return std::nullopt;
  return v;
}

// Memory this process can still use: MemAvailable, capped by the cgroup's remaining limit.
std::optional<double> AvailableBytes() {
  std::optional<double> available;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    std::istringstream words(line);
    std::string key;
    double kb = 0;
    if (words >> key >> kb && key == "MemAvailable:") available = kb * 1024;
  }
  const auto limit = FileNumber("/sys/fs/cgroup/memory.max");
  const auto used = FileNumber("/sys/fs/cgroup/memory.current");
  if (limit && used) {
    const double left = std::max(0.0, *limit - *used);
    available = available ? std::min(*available, left) : left;
  }
  return available;
}

}  // namespace

Status CheckLauncher(const std::string& backend) {
  if (backend == "mpi") return Status();
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    const auto size = EnvInt(name);
    if (size && *size > 1) {
      return Error(
          fmt::format("running under mpirun ({} processes, {}) with `backend` {}: each "
                      "process would run the whole job; set `backend` to mpi",
                      *size, name, backend));
    }
  }
  return Status();
}

Status CheckRunFitsHost(const RunConfig& c, const std::string& backend, bool with_reference) {
  // Threads: every rank lives in this process. MPI: this process holds one rank, and the
  // processes on this host (OMPI_COMM_WORLD_LOCAL_SIZE) share its memory.
  const int64_t ranks_here =
      backend == "mpi" ? std::max<int64_t>(1, EnvInt("OMPI_COMM_WORLD_LOCAL_SIZE").value_or(1))
                       : c.layout.gpus();
  const RunMemory need = EstimateRunMemory(c, ranks_here, with_reference);
  const std::optional<double> have = AvailableBytes();
  if (!have || need.PeakBytes() <= *have) return Status();
  const bool reference_binds =
      need.reference_bytes > need.weight_bytes + need.kv_bytes + need.activation_bytes;
  return Error(fmt::format(
      "{} needs about {} of memory here (weights {}, KV cache {}, activations {}{}) but this "
      "machine has {} available; run fewer `layers`, a shorter or smaller `batch`, or "
      "a smaller model",
      c.model.name, FormatBytes(need.PeakBytes()), FormatBytes(need.weight_bytes),
      FormatBytes(need.kv_bytes), FormatBytes(need.activation_bytes),
      reference_binds ? fmt::format("; the unsharded reference check needs {}, skip it "
                                    "(`no_check`)",
                                    FormatBytes(need.reference_bytes))
                      : "",
      FormatBytes(*have)));
}

StatusOr<HostProfile> ResolveHostProfile(const std::string& user_path, std::string& used_path) {
  if (!user_path.empty()) {
    used_path = user_path;
    return LoadHostProfile(user_path);
  }
  used_path = DefaultHostProfilePath();
  if (auto cached = LoadHostProfile(used_path); cached.ok()) return cached;
  const HostProfile measured = MeasureHostProfile();
  (void)SaveHostProfile(measured, used_path);  // a cache: failing to write it is harmless
  return measured;
}

}  // namespace shardwise::api
