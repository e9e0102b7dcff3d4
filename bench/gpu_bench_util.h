// Shared by the GPU benchmarks: the GPU this process sees, matched to the catalog (whose peak
// rates and calibrated fractions the measurements are compared with), and CUDA event timers of
// calls enqueued on a stream or replayed from a CUDA graph.
#pragma once

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/hw/gpu_match.h"
#include "shardwise/runtime/cuda/device.h"

namespace shardwise::bench {

struct BenchGpu {
  std::string driver_name;
  std::optional<GpuSpec> spec;  // absent: not in the catalog (measurements print without ratios)
};

// The first visible GPU, or nullopt after printing why there is none (then nothing is measured).
inline std::optional<BenchGpu> FindBenchGpu(const char* program) {
  const cuda::GpuInventory inv = cuda::FindGpus();
  if (inv.count == 0) {
    std::printf("%s: no GPU on this machine (%s); nothing measured\n", program,
                inv.why_none.c_str());
    return std::nullopt;
  }
  BenchGpu g;
  g.driver_name = cuda::DeviceName(0).ok() ? *cuda::DeviceName(0) : "unknown GPU";
  const auto gpus = LoadBuiltinGpus();
  if (gpus.ok()) {
    auto spec = MatchDriverGpuName(g.driver_name, *gpus);
    if (spec.ok()) {
      g.spec = *spec;
    } else {
      std::printf("%s\n", spec.status().message().c_str());
    }
  }
  std::printf("GPU: %s (catalog: %s)\n", g.driver_name.c_str(),
              g.spec ? g.spec->name.c_str() : "none");
  return g;
}

// Mean seconds of `iters` calls of f() on `stream`, after `warmup` untimed calls.
template <typename F>
StatusOr<double> TimeOnStream(cudaStream_t stream, int warmup, int iters, F&& f) {
  for (int i = 0; i < warmup; ++i) SW_RETURN_IF_ERROR(f());
  cudaEvent_t start, stop;
  SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaEventCreate(&start), "cudaEventCreate"));
  SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaEventCreate(&stop), "cudaEventCreate"));
  SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaEventRecord(start, stream), "cudaEventRecord"));
  for (int i = 0; i < iters; ++i) SW_RETURN_IF_ERROR(f());
  SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaEventRecord(stop, stream), "cudaEventRecord"));
  SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaEventSynchronize(stop), "cudaEventSynchronize"));
  float ms = 0;
  SW_RETURN_IF_ERROR(
      cuda::CudaStatus(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime"));
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  return static_cast<double>(ms) * 1e-3 / iters;
}

// Owns a captured graph, its executable instance and two events (TimeInGraph's handles).
struct GraphTimer {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  GraphTimer() = default;
  GraphTimer(const GraphTimer&) = delete;
  GraphTimer& operator=(const GraphTimer&) = delete;
  ~GraphTimer() {
    if (exec != nullptr) (void)cudaGraphExecDestroy(exec);
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    if (start != nullptr) (void)cudaEventDestroy(start);
    if (stop != nullptr) (void)cudaEventDestroy(stop);
  }
};

// Seconds per replay of a CUDA graph holding `calls` back-to-back calls of f() captured from
// `stream` (the median of `reps` timed replays, after one untimed call of f() outside the graph
// and one untimed replay). As in a serving engine's CUDA graphs, the host's launch cost is
// absent and each kernel starts when the one before it ends. `nodes`, when given, receives the
// graph's node count (kernels and memsets: a library call may enqueue more than one).
template <typename F>
StatusOr<double> TimeGraphReplay(cudaStream_t stream, int calls, int reps, F&& f,
                                 size_t* nodes = nullptr) {
  SW_RETURN_IF_ERROR(f());  // outside the graph: loads the kernels, lets cuBLAS pick its algorithm
  SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaStreamSynchronize(stream), "cudaStreamSynchronize"));
  GraphTimer t;
  SW_RETURN_IF_ERROR(cuda::CudaStatus(
      cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture"));
  Status captured;
  for (int i = 0; i < calls && captured.ok(); ++i) captured = f();
  const cudaError_t ended = cudaStreamEndCapture(stream, &t.graph);
  SW_RETURN_IF_ERROR(captured);
  SW_RETURN_IF_ERROR(cuda::CudaStatus(ended, "cudaStreamEndCapture"));
  if (nodes != nullptr) {
    SW_RETURN_IF_ERROR(
        cuda::CudaStatus(cudaGraphGetNodes(t.graph, nullptr, nodes), "cudaGraphGetNodes"));
  }
  SW_RETURN_IF_ERROR(
      cuda::CudaStatus(cudaGraphInstantiate(&t.exec, t.graph, 0), "cudaGraphInstantiate"));
  SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaEventCreate(&t.start), "cudaEventCreate"));
  SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaEventCreate(&t.stop), "cudaEventCreate"));
  SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaGraphLaunch(t.exec, stream), "cudaGraphLaunch"));
  std::vector<double> seconds;
  for (int r = 0; r < reps; ++r) {
    SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaEventRecord(t.start, stream), "cudaEventRecord"));
    SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaGraphLaunch(t.exec, stream), "cudaGraphLaunch"));
    SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaEventRecord(t.stop, stream), "cudaEventRecord"));
    SW_RETURN_IF_ERROR(cuda::CudaStatus(cudaEventSynchronize(t.stop), "cudaEventSynchronize"));
    float ms = 0;
    SW_RETURN_IF_ERROR(
        cuda::CudaStatus(cudaEventElapsedTime(&ms, t.start, t.stop), "cudaEventElapsedTime"));
    seconds.push_back(static_cast<double>(ms) * 1e-3);
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

}  // namespace shardwise::bench
