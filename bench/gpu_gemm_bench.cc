// Benchmark: cuBLAS GEMM throughput (bf16 inputs, fp32 accumulation and output: the CUDA
// backend's gemm.h) over the projection shapes of llama-3.1-8b and llama-3.1-70b, for decode
// (m = 1, 8, 64 tokens) and prefill (m = 2048, 8192 tokens), against the catalog GPU's bf16
// peak and the perf model's predicted efficiency for that shape (GpuSpec::GemmEfficiency:
// calibrated large-GEMM fraction x wave quantisation x k / (k + tile overhead)). Decode shapes
// are bound by reading the weights, so their rate is also shown in bytes/s against HBM.
// Run on a GPU: build/bench/gpu_gemm_bench. Without one it says so and measures nothing.
#include <cstdio>
#include <vector>

#include "gpu_bench_util.h"
#include "shardwise/model/catalog.h"
#include "shardwise/runtime/cuda/gemm.h"

namespace shardwise {
namespace {

struct Shape {
  std::string model, op;
  int64_t n = 0, k = 0;
};

std::vector<Shape> Shapes(const std::string& name) {
  const ModelSpec m = LoadModel(name).value();
  const int64_t h = m.hidden_size, hd = m.head_dim;
  return {{name, "qkv", (m.num_heads + 2 * m.num_kv_heads) * hd, h},
          {name, "o", h, m.num_heads * hd},
          {name, "gate+up", 2 * m.intermediate_size, h},
          {name, "down", h, m.intermediate_size},
          {name, "lm_head", m.vocab_size, h}};
}

Status Run() {
  const auto gpu = bench::FindBenchGpu("gpu_gemm_bench");
  if (!gpu) return Status();
  SW_ASSIGN_OR_RETURN(cuda::Stream stream, cuda::Stream::Create());
  SW_ASSIGN_OR_RETURN(cuda::BlasHandles blas, cuda::BlasHandles::Create(stream.get()));
  std::printf("%-14s %-8s %6s %7s %6s %10s %8s %10s %10s %9s\n", "model", "op", "m", "n", "k",
              "TFLOP/s", "of peak", "predicted", "meas/pred", "GB/s");
  for (const std::string& model : {std::string("llama-3.1-8b"), std::string("llama-3.1-70b")}) {
    for (const Shape& s : Shapes(model)) {
      for (const int64_t m : {1, 8, 64, 2048, 8192}) {
        SW_ASSIGN_OR_RETURN(auto x,
                            cuda::DeviceBuffer<cuda::bf16>::Allocate(static_cast<size_t>(m * s.k)));
        SW_ASSIGN_OR_RETURN(
            auto w, cuda::DeviceBuffer<cuda::bf16>::Allocate(static_cast<size_t>(s.n * s.k)));
        SW_ASSIGN_OR_RETURN(auto y,
                            cuda::DeviceBuffer<float>::Allocate(static_cast<size_t>(m * s.n)));
        SW_RETURN_IF_ERROR(cuda::FillUniform(x.data(), m * s.k, 1, 1.0f, 0.0f, stream.get()));
        SW_RETURN_IF_ERROR(cuda::FillUniform(w.data(), s.n * s.k, 2, 0.01f, 0.0f, stream.get()));
        const int iters = m >= 2048 ? 10 : 50;
        SW_ASSIGN_OR_RETURN(const double t, bench::TimeOnStream(stream.get(), 3, iters, [&] {
                              return cuda::Gemm(blas, x.data(), w.data(), y.data(), m, s.n, s.k);
                            }));
        const double flops =
            2.0 * static_cast<double>(m) * static_cast<double>(s.n) * static_cast<double>(s.k);
        const double bytes =
            2.0 * static_cast<double>(s.n * s.k + m * s.k) + 4.0 * static_cast<double>(m * s.n);
        const double rate = flops / t;
        double peak = 0, predicted = 0;
        if (gpu->spec && gpu->spec->Supports(Dtype::kBf16)) {
          peak = gpu->spec->PeakFlopsPerS(Dtype::kBf16);
          predicted =
              peak * gpu->spec->GemmEfficiency(Dtype::kBf16, static_cast<double>(m),
                                               static_cast<double>(s.n), static_cast<double>(s.k));
        }
        std::printf("%-14s %-8s %6ld %7ld %6ld %10.1f %7.1f%% %10.1f %10.2f %9.0f\n", model.c_str(),
                    s.op.c_str(), static_cast<long>(m), static_cast<long>(s.n),
                    static_cast<long>(s.k), rate / 1e12, peak > 0 ? 100 * rate / peak : 0.0,
                    predicted / 1e12, predicted > 0 ? rate / predicted : 0.0, bytes / t / 1e9);
      }
    }
  }
  return Status();
}

}  // namespace
}  // namespace shardwise

int main() {
  const shardwise::Status s = shardwise::Run();
  if (!s.ok()) std::fprintf(stderr, "gpu_gemm_bench: %s\n", s.message().c_str());
  return s.ok() ? 0 : 1;
}
