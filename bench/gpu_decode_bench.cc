// Benchmark: decode of llama-3.1-8b shapes on one GPU (weights generated on the device, bf16;
// the runtime's forward pass, StageForward, on the CUDA kernels) at batch 1, 8 and 64 after a
// 512-token prompt, against
//   - the HBM roofline: each decode step reads every weight (the LM head included, the input
//     embedding but one row per token excluded) and each sequence's KV cache once, so a step
//     cannot take less than those bytes / the catalog's peak HBM bandwidth (target at batch 1:
//     >= 80% of the roofline), and
//   - `shardwise explain`'s prediction for the same GPU, layout (tp1) and workload (its TPOT,
//     and its TTFT x batch for the prefill of all prompts, which the run does in one pass).
// Each step is what `run` does per token: the new tokens' embeddings, the layers (replayed as a
// CUDA graph from the third step on), the LM head and the greedy choice on the device, the
// chosen tokens back to the host. Run on a GPU: build/bench/gpu_decode_bench.
#include <chrono>
#include <cstdio>
#include <vector>

#include "gpu_bench_util.h"
#include "shardwise/layout/layout.h"
#include "shardwise/model/catalog.h"
#include "shardwise/perf/step.h"
#include "shardwise/runtime/comm/thread_comm.h"
#include "shardwise/runtime/compute_registry.h"
#include "shardwise/runtime/forward/stage_forward.h"

namespace shardwise {
namespace {

constexpr int64_t kPrompt = 512;
constexpr int64_t kSteps = 32;

// Positions begin, begin + 1, ..., begin + n - 1.
std::vector<int64_t> Positions(int64_t begin, int64_t n) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) p[static_cast<size_t>(i)] = begin + i;
  return p;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Bytes of bf16 weights a decode step reads (all layers, final norm, LM head).
double WeightBytes(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden_size), hd = static_cast<double>(m.head_dim);
  const double attn = h * hd * static_cast<double>(2 * m.num_heads + 2 * m.num_kv_heads);
  const double mlp = 3.0 * h * static_cast<double>(m.intermediate_size);
  return 2.0 * (static_cast<double>(m.num_layers()) * (attn + mlp + 2 * h) + h +
                static_cast<double>(m.vocab_size) * h);
}

Status Run() {
  const auto gpu = bench::FindBenchGpu("gpu_decode_bench");
  if (!gpu) return Status();
  SW_ASSIGN_OR_RETURN(const ModelSpec m, LoadModel("llama-3.1-8b"));
  std::optional<ClusterSpec> cluster;  // outlives `step`, which refers to it
  std::optional<StepModel> step;
  if (gpu->spec) {
    SW_ASSIGN_OR_RETURN(cluster, SingleNodeClusterOf(*gpu->spec, 1));
    SW_ASSIGN_OR_RETURN(step, StepModel::Create(m, *cluster, Layout{}, PerfOptions{}));
  }
  const double kv_bytes_per_token =
      2.0 * 2.0 *
      static_cast<double>(m.num_layers() * m.num_kv_heads * m.head_dim);  // K and V, bf16
  std::printf("%5s %10s %10s %9s %10s %9s %11s %11s %9s\n", "batch", "step", "tokens/s", "roofline",
              "of roofl.", "explain", "meas/expl", "prefill", "expl x B");
  for (const int64_t batch : {1, 8, 64}) {
    SW_ASSIGN_OR_RETURN(std::unique_ptr<Kernels> kernels, MakeKernels("cuda", 0, 1));
    SW_ASSIGN_OR_RETURN(auto stage,
                        StageForward::Load(m, Layout{}, 0, {nullptr, 7}, std::move(kernels), batch,
                                           kPrompt + 2 * kSteps + 1));
    std::vector<int> seqs(static_cast<size_t>(batch));
    std::vector<int64_t> tokens;
    for (int64_t s = 0; s < batch; ++s) {
      seqs[static_cast<size_t>(s)] = static_cast<int>(s);
      for (int64_t t = 0; t < kPrompt; ++t)
        tokens.push_back((s * 7919 + t * 104729) % m.vocab_size);
    }
    double prefill_s = 0, step_s = 0;
    // A warm-up prefill and decode loads the kernels and picks cuBLAS's algorithms; a second
    // stage is then timed from its prefill on (its first two decode steps issued op by op, the
    // rest replayed as one graph each).
    const Status run = RunOnThreads(1, 600, [&](Communicator& world) -> Status {
      const RankComms comms{&world, &world, &world};
      int64_t context = 0;
      for (int pass = 0; pass < 2; ++pass) {
        auto t0 = std::chrono::steady_clock::now();
        if (pass == 1) {  // the timed prefill writes the caches from the start again
          SW_ASSIGN_OR_RETURN(std::unique_ptr<Kernels> k, MakeKernels("cuda", 0, 1));
          SW_ASSIGN_OR_RETURN(stage, StageForward::Load(m, Layout{}, 0, {nullptr, 7}, std::move(k),
                                                        batch, kPrompt + 2 * kSteps + 1));
          t0 = std::chrono::steady_clock::now();
        }
        SW_RETURN_IF_ERROR(stage->Embed(tokens));
        SW_RETURN_IF_ERROR(stage->Forward(seqs, Positions(0, kPrompt), kPrompt, true, comms));
        SW_ASSIGN_OR_RETURN(Sampled first, stage->Sample(batch, kPrompt, world, "the logits"));
        prefill_s = Seconds(t0);
        std::vector<int64_t> next = first.tokens;
        context = kPrompt;
        t0 = std::chrono::steady_clock::now();
        for (int64_t i = 0; i < kSteps; ++i) {
          SW_RETURN_IF_ERROR(stage->Embed(next));
          SW_RETURN_IF_ERROR(stage->Forward(seqs, {context}, context + 1, false, comms));
          ++context;
          SW_ASSIGN_OR_RETURN(Sampled chosen, stage->Sample(batch, 1, world, "the logits"));
          next = chosen.tokens;
        }
        step_s = Seconds(t0) / kSteps;
      }
      return Status();
    });
    SW_RETURN_IF_ERROR(run);
    const double context = static_cast<double>(kPrompt) + kSteps / 2.0;
    const double bytes = WeightBytes(m) + static_cast<double>(batch) * context * kv_bytes_per_token;
    const double roofline_s = gpu->spec ? bytes / gpu->spec->hbm_bytes_per_s : 0;
    double explain_tpot = 0, explain_prefill = 0;
    if (step) {
      Workload w;
      w.batch = batch;
      w.prompt_tokens = kPrompt;
      w.output_tokens = kSteps;
      const StepEstimate e = step->Estimate(w);
      explain_tpot = e.tpot_s;
      explain_prefill = e.ttft_s * static_cast<double>(batch);
    }
    std::printf("%5ld %8.2fms %10.0f %7.2fms %9.1f%% %7.2fms %11.2f %9.1fms %7.1fms\n",
                static_cast<long>(batch), step_s * 1e3, static_cast<double>(batch) / step_s,
                roofline_s * 1e3, roofline_s > 0 ? 100 * roofline_s / step_s : 0.0,
                explain_tpot * 1e3, explain_tpot > 0 ? step_s / explain_tpot : 0.0, prefill_s * 1e3,
                explain_prefill * 1e3);
  }
  return Status();
}

}  // namespace
}  // namespace shardwise

int main() {
  const shardwise::Status s = shardwise::Run();
  if (!s.ok()) std::fprintf(stderr, "gpu_decode_bench: %s\n", s.message().c_str());
  return s.ok() ? 0 : 1;
}
