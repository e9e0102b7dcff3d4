// Benchmark: the fixed time of one kernel inside a CUDA graph, the per-kernel cost that a serving
// engine's decode step pays however little work each kernel does (issue 9: the perf model's
// kernel latency, until now fitted to serving data). Each case captures N back-to-back launches
// into one graph (each waits for the one before, as in a decode step) and times its replays for
// N = 100 and N = 1000; the slope (t_1000 - t_100) / 900 is the time per kernel without the
// graph's own launch ("per call"; "nodes" counts the graph nodes per call, as a library call may
// launch more than one kernel). The cases:
//   empty 1x32 / 132x256   a kernel that does nothing, on one block or on one block per SM;
//   scale-add 8KB          x = 0.5 x + 1 over 2,048 floats (8 KB read and written);
//   gemm m=M hbm           the backend's bf16 GEMM (cuda::Gemm, fp32 output) of M rows by a
//                          1024 x 1024 weight (2 MB), cycling through 64 weights (128 MB,
//                          over the L2) so that each call reads its weight from HBM;
//   gemm m=M l2            the same on one weight, which stays in the 50 MB L2.
// "work" is what the perf model charges the kernel's bytes and FLOPs (the larger of bytes over
// the calibrated HBM rate and FLOPs over peak x GemmEfficiency); "fixed" = per kernel - work.
// The same calls enqueued one by one on a stream (no graph) are shown for comparison.
// Run on a GPU: build/bench/gpu_kernel_latency_bench. Without one it says so and measures nothing.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "gpu_bench_kernels.h"
#include "gpu_bench_util.h"
#include "shardwise/runtime/cuda/gemm.h"

namespace shardwise {
namespace {

constexpr int kFewCalls = 100, kManyCalls = 1000, kReps = 9;
constexpr int64_t kElementwiseFloats = 2048;  // 8 KB
constexpr int64_t kGemmNk = 1024;
constexpr int kGemmWeights = 64;  // 64 x 2 MB = 128 MB, over twice the H100's 50 MB L2

struct Case {
  std::string name;
  double flops = 0, bytes = 0;  // per call: what the model charges
  double m = 0;                 // GEMM rows (0: not a GEMM)
  std::function<Status()> call;
};

Status Run() {
  const auto gpu = bench::FindBenchGpu("gpu_kernel_latency_bench");
  if (!gpu) return Status();
  SW_ASSIGN_OR_RETURN(cuda::Stream stream, cuda::Stream::Create());
  const cudaStream_t s = stream.get();
  SW_ASSIGN_OR_RETURN(cuda::BlasHandles blas, cuda::BlasHandles::Create(s));
  SW_ASSIGN_OR_RETURN(auto vec,
                      cuda::DeviceBuffer<float>::Allocate(static_cast<size_t>(kElementwiseFloats)));
  const std::vector<float> init(static_cast<size_t>(kElementwiseFloats), 1.5f);
  SW_RETURN_IF_ERROR(vec.CopyFromHost(init, s));
  std::vector<cuda::DeviceBuffer<cuda::bf16>> weights;
  for (int i = 0; i < kGemmWeights; ++i) {
    SW_ASSIGN_OR_RETURN(
        auto w, cuda::DeviceBuffer<cuda::bf16>::Allocate(static_cast<size_t>(kGemmNk * kGemmNk)));
    SW_RETURN_IF_ERROR(cuda::FillUniform(w.data(), kGemmNk * kGemmNk, 100 + i, 0.05f, 0.0f, s));
    weights.push_back(std::move(w));
  }
  SW_ASSIGN_OR_RETURN(auto x, cuda::DeviceBuffer<cuda::bf16>::Allocate(16 * kGemmNk));
  SW_RETURN_IF_ERROR(cuda::FillUniform(x.data(), 16 * kGemmNk, 7, 1.0f, 0.0f, s));
  SW_ASSIGN_OR_RETURN(auto y, cuda::DeviceBuffer<float>::Allocate(16 * kGemmNk));

  std::vector<Case> cases;
  cases.push_back({"empty 1x32", 0, 0, 0,
                   [&] { return cuda::CudaStatus(bench::LaunchEmpty(1, 32, s), "LaunchEmpty"); }});
  const int sms = gpu->spec ? static_cast<int>(gpu->spec->sm_count) : 132;
  cases.push_back({"empty " + std::to_string(sms) + "x256", 0, 0, 0, [&, sms] {
                     return cuda::CudaStatus(bench::LaunchEmpty(sms, 256, s), "LaunchEmpty");
                   }});
  cases.push_back({"scale-add 8KB", static_cast<double>(2 * kElementwiseFloats),
                   static_cast<double>(8 * kElementwiseFloats), 0, [&] {
                     return cuda::CudaStatus(
                         bench::LaunchScaleAdd(vec.data(), kElementwiseFloats, s),
                         "LaunchScaleAdd");
                   }});
  int next_weight = 0;
  for (const int64_t m : {1, 2, 4, 8, 16}) {
    const double flops = 2.0 * static_cast<double>(m * kGemmNk * kGemmNk);
    const double bytes =
        static_cast<double>(2 * kGemmNk * kGemmNk + 2 * m * kGemmNk + 4 * m * kGemmNk);
    cases.push_back(
        {"gemm m=" + std::to_string(m) + " hbm", flops, bytes, static_cast<double>(m), [&, m] {
           const auto& w = weights[static_cast<size_t>(next_weight++ % kGemmWeights)];
           return cuda::Gemm(blas, x.data(), w.data(), y.data(), m, kGemmNk, kGemmNk);
         }});
    cases.push_back(
        {"gemm m=" + std::to_string(m) + " l2", flops, bytes, static_cast<double>(m), [&, m] {
           return cuda::Gemm(blas, x.data(), weights[0].data(), y.data(), m, kGemmNk, kGemmNk);
         }});
  }

  std::printf("%-16s %8s %8s %10s %10s %6s %10s %9s %9s\n", "case", "KB", "work us", "t100 us",
              "t1000 us", "nodes", "per call", "fixed us", "stream us");
  for (Case& c : cases) {
    size_t nodes = 0;
    const StatusOr<double> few = bench::TimeGraphReplay(s, kFewCalls, kReps, c.call);
    const StatusOr<double> many = bench::TimeGraphReplay(s, kManyCalls, kReps, c.call, &nodes);
    if (!few.ok() || !many.ok()) {
      std::printf("# %s not measured in a graph: %s\n", c.name.c_str(),
                  (few.ok() ? many : few).status().message().c_str());
      (void)cudaGetLastError();
      continue;
    }
    SW_ASSIGN_OR_RETURN(const double streamed, bench::TimeOnStream(s, 10, kManyCalls, c.call));
    const double per_kernel = (*many - *few) / (kManyCalls - kFewCalls);
    double work = 0;
    if (gpu->spec) {
      work = c.bytes / gpu->spec->AchievableHbmBytesPerS();
      if (c.m > 0 && gpu->spec->Supports(Dtype::kBf16)) {
        const double nk = static_cast<double>(kGemmNk);
        work = std::max(work, c.flops / (gpu->spec->PeakFlopsPerS(Dtype::kBf16) *
                                         gpu->spec->GemmEfficiency(Dtype::kBf16, c.m, nk, nk)));
      }
    }
    std::printf("%-16s %8.1f %8.2f %10.1f %10.1f %6.2f %10.2f %9.2f %9.2f\n", c.name.c_str(),
                c.bytes / 1e3, work * 1e6, *few * 1e6, *many * 1e6,
                static_cast<double>(nodes) / kManyCalls, per_kernel * 1e6,
                (per_kernel - work) * 1e6, streamed * 1e6);
    std::fflush(stdout);
  }
  return Status();
}

}  // namespace
}  // namespace shardwise

int main() {
  const shardwise::Status s = shardwise::Run();
  if (!s.ok()) std::fprintf(stderr, "gpu_kernel_latency_bench: %s\n", s.message().c_str());
  return s.ok() ? 0 : 1;
}
