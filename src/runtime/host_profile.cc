#include "shardwise/runtime/host_profile.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "shardwise/common/json_fields.h"
#include "shardwise/runtime/comm/thread_comm.h"
#include "shardwise/runtime/kernels.h"

namespace shardwise {
namespace {

using Clock = std::chrono::steady_clock;

template <typename F>
double BestOf(int repeats, F&& f) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

double AllReduceSeconds(size_t floats, int repeats) {
  double seconds = 0;
  const Status s = RunOnThreads(2, 30, [&](Communicator& c) {
    std::vector<float> buf(floats, 1.0f);
    for (int i = 0; i < 3; ++i) SW_RETURN_IF_ERROR(c.AllReduceSum(buf));  // warm up
    const double t = BestOf(repeats, [&] { (void)c.AllReduceSum(buf); });
    if (c.rank() == 0) seconds = t;
    return Status();
  });
  return s.ok() ? seconds : 0.0;
}

}  // namespace

HostProfile MeasureHostProfile() {
  HostProfile p;
  p.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Matrix FLOP/s: a decode-like batch of 64 rows against a 1024 x 1024 matrix.
  const int64_t m = 64, n = 1024, k = 1024;
  std::vector<float> x(m * k, 0.5f), w(n * k, 0.25f), y(m * n);
  const double gemm_s = BestOf(3, [&] { kernels::MatMulT(x.data(), w.data(), y.data(), m, n, k); });
  p.flops_per_s = 2.0 * m * n * k / gemm_s;
  // Copy bandwidth: 64 MB read and written.
  std::vector<float> a(16 << 20, 1.0f), b(16 << 20);
  const double copy_s = BestOf(3, [&] { std::memcpy(b.data(), a.data(), a.size() * 4); });
  p.copy_bytes_per_s = 2.0 * static_cast<double>(a.size() * 4) / copy_s;
  p.allreduce_latency_s = AllReduceSeconds(16, 200);
  const size_t big = 1 << 20;  // 4 MB
  p.allreduce_bytes_per_s = static_cast<double>(big * 4) / std::max(1e-9, AllReduceSeconds(big, 5) - p.allreduce_latency_s);
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
  SW_ASSIGN_OR_RETURN(p.flops_per_s, o.Number("flops_per_s"));
  SW_ASSIGN_OR_RETURN(p.copy_bytes_per_s, o.Number("copy_bytes_per_s"));
  SW_ASSIGN_OR_RETURN(int64_t cores, o.Int("cores", kMaxCores));
  p.cores = static_cast<int>(cores);
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
  out << nlohmann::json({{"flops_per_s", p.flops_per_s},
                         {"copy_bytes_per_s", p.copy_bytes_per_s},
                         {"cores", p.cores},
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
