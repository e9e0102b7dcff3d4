// Benchmark: how cuBLAS GEMM throughput falls with short k and with few rows, against the perf
// model's GpuSpec::GemmEfficiency (calibrated large-GEMM fraction x wave quantisation x
// k / (k + gemm_tile_overhead_k)); tools/fit_gemm_tile_overhead.py fits the tile overhead to this
// output (issue 9, item 7). Four series:
//   bf16-f32   the backend's GEMM (cuda::Gemm): bf16 inputs, fp32 output;
//   bf16-bf16  the same inputs with bf16 output, as serving engines write (cublasGemmEx here);
//   fp8-f32    the backend's fp8 GEMM (cuda::GemmFp8, cuBLASLt): e4m3 inputs, fp32 output;
//   fp8-bf16   the same inputs with bf16 output (cuBLASLt here).
// Shapes: m = n = 4096 and 8192 over k = 64 .. 16384, and m = 128 .. 1024 rows through
// llama-3.1-8b's projections. Each GEMM is timed as the median replay of a CUDA graph of
// back-to-back calls over rotating buffer sets (so that the weights come from HBM rather than
// L2, and the host's launch cost is hidden). One row per (series, shape): the time, measured
// TFLOP/s, the model's compute-bound prediction (peak x GemmEfficiency), its roofline prediction
// (the larger of that time and the bytes moved over the calibrated HBM rate: what
// perf/ops.cc charges), measured / roofline, and the seconds since the benchmark started (to
// line rows up with a clock log such as `nvidia-smi --query-gpu=clocks.sm ... -lms 50`). Set 0's
// bf16 outputs are checked against the fp32 outputs of the same inputs.
// Run on a GPU: build/bench/gpu_gemm_k_sweep_bench. Without one it says so and measures nothing.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "gpu_bench_kernels.h"
#include "gpu_bench_util.h"
#include "shardwise/model/catalog.h"
#include "shardwise/runtime/cuda/gemm.h"

namespace shardwise {
namespace {

// Buffer sets rotate until they span this many bytes: over twice the H100's 50 MB L2.
constexpr double kRotateBytes = 256e6;
constexpr int kMaxSets = 8;
// Calls per captured graph: about this long a replay, within [kMinCalls, kMaxCalls].
constexpr double kReplayS = 10e-3;
constexpr int kMinCalls = 4, kMaxCalls = 400, kReps = 7;

enum class Series { kBf16F32, kBf16Bf16, kFp8F32, kFp8Bf16 };
constexpr Series kSeries[] = {Series::kBf16F32, Series::kBf16Bf16, Series::kFp8F32,
                              Series::kFp8Bf16};

struct Shape {
  std::string label;
  int64_t m = 0, n = 0, k = 0;
};

std::vector<Shape> Shapes() {
  std::vector<Shape> shapes;
  for (const int64_t mn : {4096, 8192}) {
    for (const int64_t k : {64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}) {
      shapes.push_back({"square", mn, mn, k});
    }
  }
  const ModelSpec m = LoadModel("llama-3.1-8b").value();
  const int64_t h = m.hidden_size, hd = m.head_dim;
  const std::vector<Shape> ops = {{"8b-qkv", 0, (m.num_heads + 2 * m.num_kv_heads) * hd, h},
                                  {"8b-o", 0, h, m.num_heads * hd},
                                  {"8b-gate+up", 0, 2 * m.intermediate_size, h},
                                  {"8b-down", 0, h, m.intermediate_size}};
  for (const int64_t rows : {128, 256, 512, 1024}) {
    for (Shape s : ops) {
      s.m = rows;
      shapes.push_back(s);
    }
  }
  return shapes;
}

const char* Name(Series s) {
  switch (s) {
    case Series::kBf16F32:
      return "bf16-f32";
    case Series::kBf16Bf16:
      return "bf16-bf16";
    case Series::kFp8F32:
      return "fp8-f32";
    case Series::kFp8Bf16:
      return "fp8-bf16";
  }
  return "?";
}

// Bytes one call moves at least: each input read once, the output written once.
double BytesMoved(Series s, const Shape& g) {
  const double in = static_cast<double>(g.m * g.k + g.n * g.k);
  const double out = static_cast<double>(g.m * g.n);
  switch (s) {
    case Series::kBf16F32:
      return 2 * in + 4 * out;
    case Series::kBf16Bf16:
      return 2 * in + 2 * out;
    case Series::kFp8F32:
      return in + 4 * out;
    case Series::kFp8Bf16:
      return in + 2 * out;
  }
  return 0;
}

// y[m x n] (bf16) = x[m x k] . w[n x k]^T, fp32 accumulation: cuda::Gemm with a bf16 output.
Status GemmBf16Out(cuda::BlasHandles& blas, const cuda::bf16* x, const cuda::bf16* w, cuda::bf16* y,
                   int64_t m, int64_t n, int64_t k) {
  const float alpha = 1.0f, beta = 0.0f;
  return cuda::CublasStatus(
      cublasGemmEx(blas.blas(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                   static_cast<int>(k), &alpha, w, CUDA_R_16BF, static_cast<int>(k), x, CUDA_R_16BF,
                   static_cast<int>(k), &beta, y, CUDA_R_16BF, static_cast<int>(n),
                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      "cublasGemmEx (bf16 output)");
}

// One set of a shape's buffers for every series (fp8 and bf16 inputs hold the same role).
struct BufferSet {
  cuda::DeviceBuffer<cuda::bf16> x, w, y_bf16;
  cuda::DeviceBuffer<cuda::fp8> x8, w8;
  cuda::DeviceBuffer<float> y;
};

StatusOr<BufferSet> MakeSet(const Shape& g, int seed, cudaStream_t s) {
  BufferSet b;
  const int64_t mk = g.m * g.k, nk = g.n * g.k, mn = g.m * g.n;
  SW_ASSIGN_OR_RETURN(b.x, cuda::DeviceBuffer<cuda::bf16>::Allocate(static_cast<size_t>(mk)));
  SW_ASSIGN_OR_RETURN(b.w, cuda::DeviceBuffer<cuda::bf16>::Allocate(static_cast<size_t>(nk)));
  SW_ASSIGN_OR_RETURN(b.y_bf16, cuda::DeviceBuffer<cuda::bf16>::Allocate(static_cast<size_t>(mn)));
  SW_ASSIGN_OR_RETURN(b.x8, cuda::DeviceBuffer<cuda::fp8>::Allocate(static_cast<size_t>(mk)));
  SW_ASSIGN_OR_RETURN(b.w8, cuda::DeviceBuffer<cuda::fp8>::Allocate(static_cast<size_t>(nk)));
  SW_ASSIGN_OR_RETURN(b.y, cuda::DeviceBuffer<float>::Allocate(static_cast<size_t>(mn)));
  SW_RETURN_IF_ERROR(cuda::FillUniform(b.x.data(), mk, 4 * seed + 1, 1.0f, 0.0f, s));
  SW_RETURN_IF_ERROR(cuda::FillUniform(b.w.data(), nk, 4 * seed + 2, 0.05f, 0.0f, s));
  SW_RETURN_IF_ERROR(
      cuda::CudaStatus(bench::LaunchFillFp8(b.x8.data(), mk, 4 * seed + 3, s), "LaunchFillFp8"));
  SW_RETURN_IF_ERROR(
      cuda::CudaStatus(bench::LaunchFillFp8(b.w8.data(), nk, 4 * seed + 4, s), "LaunchFillFp8"));
  return b;
}

// ||a - b|| / ||b|| over the first elements of the two outputs of set 0 (bf16 against fp32
// output of the same product: bf16 rounding, ~4e-3, passes; a wrong or unwritten output fails).
StatusOr<double> OutputDifference(BufferSet& b, int64_t elements, cudaStream_t s) {
  std::vector<cuda::bf16> a(static_cast<size_t>(elements));
  std::vector<float> ref(static_cast<size_t>(elements));
  SW_RETURN_IF_ERROR(b.y_bf16.CopyToHost(a, s));
  SW_RETURN_IF_ERROR(b.y.CopyToHost(ref, s));
  SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaStreamSynchronize(s), "cudaStreamSynchronize"));
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(__bfloat162float(a[i])) - ref[i];
    diff += d * d;
    norm += static_cast<double>(ref[i]) * ref[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : 1.0;
}

Status Run() {
  const auto gpu = bench::FindBenchGpu("gpu_gemm_k_sweep_bench");
  if (!gpu) return Status();
  SW_ASSIGN_OR_RETURN(cuda::Stream stream, cuda::Stream::Create());
  SW_ASSIGN_OR_RETURN(cuda::BlasHandles blas, cuda::BlasHandles::Create(stream.get()));
  SW_ASSIGN_OR_RETURN(auto scales, cuda::DeviceBuffer<float>::Allocate(2));
  const std::vector<float> ones = {1.0f, 1.0f};
  SW_RETURN_IF_ERROR(scales.CopyFromHost(ones, stream.get()));
  const bool have_spec = gpu->spec && gpu->spec->Supports(Dtype::kBf16);
  const std::time_t now = std::time(nullptr);
  char started[32];
  std::strftime(started, sizeof(started), "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  std::printf("started %s\n", started);
  if (have_spec) {
    std::printf(
        "catalog %s: sm_count %ld, tile overhead %g, bf16 peak %.1f x %.3f, fp8 peak %.1f "
        "x %.3f TFLOP/s, HBM %.0f GB/s achievable\n",
        gpu->spec->name.c_str(), static_cast<long>(gpu->spec->sm_count),
        gpu->spec->TileOverheadK(Dtype::kBf16), gpu->spec->PeakFlopsPerS(Dtype::kBf16) / 1e12,
        gpu->spec->gemm_fraction.at(Dtype::kBf16),
        gpu->spec->Supports(Dtype::kFp8) ? gpu->spec->PeakFlopsPerS(Dtype::kFp8) / 1e12 : 0,
        gpu->spec->gemm_fraction.contains(Dtype::kFp8) ? gpu->spec->gemm_fraction.at(Dtype::kFp8)
                                                       : 0.0,
        gpu->spec->AchievableHbmBytesPerS() / 1e9);
  }
  std::printf("%-9s %-10s %5s %6s %6s %10s %5s %5s %10s %10s %8s %9s %9s %7s %7s\n", "series",
              "shape", "m", "n", "k", "MB", "sets", "nodes", "us", "TFLOP/s", "of peak", "pred",
              "roofline", "meas/rf", "at s");
  bool all_checked = true;
  const auto start = std::chrono::steady_clock::now();
  for (const Shape& g : Shapes()) {
    const double set_bytes = BytesMoved(Series::kBf16F32, g);
    const int sets = std::clamp(static_cast<int>(std::ceil(kRotateBytes / set_bytes)), 1, kMaxSets);
    std::vector<BufferSet> buffers;
    for (int i = 0; i < sets; ++i) {
      SW_ASSIGN_OR_RETURN(BufferSet b, MakeSet(g, i, stream.get()));
      buffers.push_back(std::move(b));
    }
    for (const Series series : kSeries) {
      const bool fp8 = series == Series::kFp8F32 || series == Series::kFp8Bf16;
      const Dtype dtype = fp8 ? Dtype::kFp8 : Dtype::kBf16;
      const double flops =
          2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
      const double bytes = BytesMoved(series, g);
      double peak = 0, compute_s = 0, roofline_s = 0;
      if (have_spec && gpu->spec->Supports(dtype)) {
        peak = gpu->spec->PeakFlopsPerS(dtype);
        compute_s = flops / (peak * gpu->spec->GemmEfficiency(dtype, static_cast<double>(g.m),
                                                              static_cast<double>(g.n),
                                                              static_cast<double>(g.k)));
        roofline_s = std::max(compute_s, bytes / gpu->spec->AchievableHbmBytesPerS());
      }
      const double estimate_s = roofline_s > 0 ? roofline_s : flops / 500e12;
      const int calls =
          std::clamp(static_cast<int>(std::lround(kReplayS / estimate_s)), kMinCalls, kMaxCalls);
      int call = 0;
      auto one = [&]() -> Status {
        BufferSet& b = buffers[static_cast<size_t>(call++ % sets)];
        switch (series) {
          case Series::kBf16F32:
            return cuda::Gemm(blas, b.x.data(), b.w.data(), b.y.data(), g.m, g.n, g.k);
          case Series::kBf16Bf16:
            return GemmBf16Out(blas, b.x.data(), b.w.data(), b.y_bf16.data(), g.m, g.n, g.k);
          case Series::kFp8F32:
            return cuda::GemmFp8(blas, b.x8.data(), scales.data(), b.w8.data(), scales.data(),
                                 b.y.data(), g.m, g.n, g.k);
          case Series::kFp8Bf16:
            return cuda::GemmFp8Bf16Out(blas, b.x8.data(), scales.data(), b.w8.data(),
                                        scales.data(), b.y_bf16.data(), g.m, g.n, g.k);
        }
        return Status();
      };
      size_t nodes = 0;
      StatusOr<double> replay_s = bench::TimeGraphReplay(stream.get(), calls, kReps, one, &nodes);
      if (!replay_s.ok()) {  // not capturable: time the same calls enqueued on the stream
        std::printf("# %s %s m=%ld n=%ld k=%ld: %s; timed on the stream instead\n", Name(series),
                    g.label.c_str(), static_cast<long>(g.m), static_cast<long>(g.n),
                    static_cast<long>(g.k), replay_s.status().message().c_str());
        (void)cudaGetLastError();
        replay_s = bench::TimeOnStream(stream.get(), 2, calls, one);
        if (replay_s.ok()) replay_s.value() *= calls;
      }
      if (!replay_s.ok()) {  // e.g. no fp8 GEMM for this shape: the other rows still count
        std::printf("# %s %s not measured: %s\n", Name(series), g.label.c_str(),
                    replay_s.status().message().c_str());
        continue;
      }
      const double t = *replay_s / calls;
      std::printf(
          "%-9s %-10s %5ld %6ld %6ld %10.1f %5d %5.2f %10.1f %10.1f %7.1f%% %9.1f %9.1f %7.3f "
          "%7.2f\n",
          Name(series), g.label.c_str(), static_cast<long>(g.m), static_cast<long>(g.n),
          static_cast<long>(g.k), bytes / 1e6, sets, static_cast<double>(nodes) / calls, t * 1e6,
          flops / t / 1e12, peak > 0 ? 100 * flops / t / peak : 0.0,
          compute_s > 0 ? flops / compute_s / 1e12 : 0.0,
          roofline_s > 0 ? flops / roofline_s / 1e12 : 0.0, roofline_s > 0 ? roofline_s / t : 0.0,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      std::fflush(stdout);
    }
    // Set 0's bf16 and fp32 outputs of the same inputs, for bf16 and for fp8 inputs.
    const int64_t compared = std::min<int64_t>(g.m * g.n, 1 << 20);
    BufferSet& b = buffers[0];
    for (const bool fp8 : {false, true}) {
      Status made = fp8 ? cuda::GemmFp8(blas, b.x8.data(), scales.data(), b.w8.data(),
                                        scales.data(), b.y.data(), g.m, g.n, g.k)
                        : cuda::Gemm(blas, b.x.data(), b.w.data(), b.y.data(), g.m, g.n, g.k);
      if (made.ok()) {
        made = fp8 ? cuda::GemmFp8Bf16Out(blas, b.x8.data(), scales.data(), b.w8.data(),
                                          scales.data(), b.y_bf16.data(), g.m, g.n, g.k)
                   : GemmBf16Out(blas, b.x.data(), b.w.data(), b.y_bf16.data(), g.m, g.n, g.k);
      }
      if (!made.ok()) {
        std::printf("# check %s %s not run: %s\n", fp8 ? "fp8" : "bf16", g.label.c_str(),
                    made.message().c_str());
        all_checked = false;
        continue;
      }
      SW_ASSIGN_OR_RETURN(const double diff, OutputDifference(b, compared, stream.get()));
      if (!(diff <= 1e-2)) {
        std::printf("# check %s %s m=%ld n=%ld k=%ld: bf16 output differs from fp32 by %.2e\n",
                    fp8 ? "fp8" : "bf16", g.label.c_str(), static_cast<long>(g.m),
                    static_cast<long>(g.n), static_cast<long>(g.k), diff);
        all_checked = false;
      }
    }
  }
  std::printf("# check: bf16 against fp32 outputs (bf16 and fp8 inputs) %s\n",
              all_checked ? "within 1e-2 for every shape" : "FAILED (see above)");
  return all_checked ? Status() : Error("a bf16-output GEMM differs from its fp32-output GEMM");
}

}  // namespace
}  // namespace shardwise

int main() {
  const shardwise::Status s = shardwise::Run();
  if (!s.ok()) std::fprintf(stderr, "gpu_gemm_k_sweep_bench: %s\n", s.message().c_str());
  return s.ok() ? 0 : 1;
}
