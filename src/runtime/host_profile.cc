#include "shardwise/runtime/host_profile.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "shardwise/common/json_fields.h"
#include "shardwise/runtime/comm/thread_comm.h"
#include "shardwise/runtime/kernels.h"
#include "shardwise/runtime/thread_pool.h"

namespace shardwise {
namespace {

using Clock = std::chrono::steady_clock;

template <typename F>
double MedianOf(int repeats, F&& f) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = Clock::now();
    f();
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double AllReduceSeconds(size_t floats, int repeats) {
  double seconds = 0;
  const Status s = RunOnThreads(2, 30, [&](Communicator& c) {
    std::vector<float> buf(floats, 1.0f);
    for (int i = 0; i < 3; ++i) SW_RETURN_IF_ERROR(c.AllReduceSum(buf));  // warm up
    const double t = MedianOf(repeats, [&] { (void)c.AllReduceSum(buf); });
    if (c.rank() == 0) seconds = t;
    return Status();
  });
  return s.ok() ? seconds : 0.0;
}

// The decode kernel's sustained read rate, with `threads` threads splitting the rows of a matrix
// that no cache can hold: 4x this machine's last-level cache (sysconf's, the CPU's own report),
// at least 256 MiB. A matrix that fits (256 MiB against this build machine's reported 300 MiB L3)
// is read partly from the cache on the second pass, and the rate overstates what a model's
// weights, streamed every token, get. The median of three passes, as a decode step is a
// sustained stream and not its luckiest moment.
double ReadBytesPerS(int threads) {
  constexpr int64_t kCols = 4096, kMinBytes = int64_t{256} << 20;
  const int64_t llc = std::max<int64_t>(0, sysconf(_SC_LEVEL3_CACHE_SIZE));
  const int64_t rows = std::max(kMinBytes, 4 * llc) / (kCols * 4);
  const WeightMatrix w =
      WeightMatrix::Make(std::vector<float>(static_cast<size_t>(rows * kCols), 0.5f), rows, kCols,
                         WeightStorage::kFp32);
  std::vector<float> x(kCols, 1.0f), y(static_cast<size_t>(rows));
  ThreadPool pool(threads);
  const double s = MedianOf(3, [&] { kernels::MatMulT(x.data(), w, y.data(), 1, nullptr, &pool); });
  return static_cast<double>(w.bytes()) / s;
}

}  // namespace

double HostProfile::GemmFlopsPerS(WeightStorage storage) const {
  switch (storage) {
    case WeightStorage::kBf16:
      return gemm_flops_per_s_bf16;
    case WeightStorage::kInt8:
      return gemm_flops_per_s_int8;
    case WeightStorage::kFp32:
      break;
  }
  return gemm_flops_per_s_fp32;
}

HostProfile MeasureHostProfile() {
  HostProfile p;
  p.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  p.memory_bytes =
      static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  // Prefill: 128 rows against small-dense's gate projection, per weight storage.
  const int64_t m = 128, n = 2048, k = 768;
  std::vector<float> x(static_cast<size_t>(m * k), 0.5f), y(static_cast<size_t>(m * n));
  std::vector<float> values(static_cast<size_t>(n * k));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 7) - 3.0f;
  for (WeightStorage storage : {WeightStorage::kFp32, WeightStorage::kBf16, WeightStorage::kInt8}) {
    const WeightMatrix w = WeightMatrix::Make(values, n, k, storage);
    const double s = MedianOf(5, [&] { kernels::MatMulT(x.data(), w, y.data(), m); });
    const double rate = 2.0 * static_cast<double>(m * n * k) / s;
    (storage == WeightStorage::kFp32   ? p.gemm_flops_per_s_fp32
     : storage == WeightStorage::kBf16 ? p.gemm_flops_per_s_bf16
                                       : p.gemm_flops_per_s_int8) = rate;
  }
  p.read_bytes_per_s = ReadBytesPerS(1);
  p.read_bytes_per_s_all_cores = ReadBytesPerS(p.cores);
  p.allreduce_latency_s = AllReduceSeconds(16, 200);
  const size_t big = 1 << 20;  // 4 MB
  p.allreduce_bytes_per_s = static_cast<double>(big * 4) /
                            std::max(1e-9, AllReduceSeconds(big, 5) - p.allreduce_latency_s);
  return p;
}

StatusOr<HostProfile> ParseHostProfile(const nlohmann::json& json, const std::string& source) {
  if (!json.is_object()) {
    return Error(
        fmt::format("{}: expected a JSON object (a host profile written by 'shardwise "
                    "run')",
                    source));
  }
  constexpr int64_t kMaxCores = 65536;
  const JsonObject o{json, source};
  HostProfile p;
  SW_ASSIGN_OR_RETURN(int64_t cores, o.Int("cores", kMaxCores));
  p.cores = static_cast<int>(cores);
  SW_ASSIGN_OR_RETURN(p.memory_bytes, o.Number("memory_bytes"));
  SW_ASSIGN_OR_RETURN(p.gemm_flops_per_s_fp32, o.Number("gemm_flops_per_s_fp32"));
  SW_ASSIGN_OR_RETURN(p.gemm_flops_per_s_bf16, o.Number("gemm_flops_per_s_bf16"));
  SW_ASSIGN_OR_RETURN(p.gemm_flops_per_s_int8, o.Number("gemm_flops_per_s_int8"));
  SW_ASSIGN_OR_RETURN(p.read_bytes_per_s, o.Number("read_bytes_per_s"));
  SW_ASSIGN_OR_RETURN(p.read_bytes_per_s_all_cores, o.Number("read_bytes_per_s_all_cores"));
  SW_ASSIGN_OR_RETURN(p.allreduce_latency_s, o.Number("allreduce_latency_s"));
  SW_ASSIGN_OR_RETURN(p.allreduce_bytes_per_s, o.Number("allreduce_bytes_per_s"));
  return p;
}

StatusOr<HostProfile> LoadHostProfile(const std::string& path) {
  SW_ASSIGN_OR_RETURN(nlohmann::json json, ReadJsonFile(path, kProfileInput));
  return ParseHostProfile(json, path);
}

Status SaveHostProfile(const HostProfile& p, const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  std::ofstream out(path);
  if (!out) return Error(fmt::format("{}: cannot write the host profile", path));
  out << nlohmann::json({{"cores", p.cores},
                         {"memory_bytes", p.memory_bytes},
                         {"gemm_flops_per_s_fp32", p.gemm_flops_per_s_fp32},
                         {"gemm_flops_per_s_bf16", p.gemm_flops_per_s_bf16},
                         {"gemm_flops_per_s_int8", p.gemm_flops_per_s_int8},
                         {"read_bytes_per_s", p.read_bytes_per_s},
                         {"read_bytes_per_s_all_cores", p.read_bytes_per_s_all_cores},
                         {"allreduce_latency_s", p.allreduce_latency_s},
                         {"allreduce_bytes_per_s", p.allreduce_bytes_per_s},
                         {"source", "measured by shardwise run on this machine"}})
             .dump(2)
      << "\n";
  return Status();
}

std::string DefaultHostProfilePath() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string base = xdg && *xdg ? xdg : std::string(home ? home : "/tmp") + "/.cache";
  return base + "/shardwise/host-profile.json";
}

}  // namespace shardwise
