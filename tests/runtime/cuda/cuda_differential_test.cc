// The CUDA backend against the CPU reference: for tiny-dense and tiny-moe and every layout of
// up to 4 ranks (all ranks sharing this machine's GPUs over the threads communicator), the
// last step's logits must equal the single-rank fp32 CPU run within bf16 tolerance and the
// greedy tokens must agree. Tolerance: bf16 keeps 8 significant bits (unit roundoff 2^-9 =
// 0.2%); every GEMM input is rounded once per layer, so the logits' max error relative to
// their largest magnitude is bounded here by 2e-2, an order of magnitude under what a wrong
// kernel gives (O(1)). Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "../test_layouts.h"
#include "gpu_test_util.h"
#include "shardwise/model/catalog.h"
#include "shardwise/runtime/comm/thread_comm.h"
#include "shardwise/runtime/compute_registry.h"
#include "shardwise/runtime/runner.h"

namespace shardwise {
namespace {

constexpr double kBf16Tolerance = 2e-2;

RunResult RunLayout(const RunConfig& c) {
  RunResult out;
  const Status s =
      RunOnThreads(static_cast<int>(c.layout.gpus()), 60, [&](Communicator& w) -> Status {
        SW_ASSIGN_OR_RETURN(RunResult r, RunRank(c, w));
        if (w.rank() == 0) out = std::move(r);
        return Status();
      });
  EXPECT_TRUE(s.ok()) << c.layout.ToString() << " on " << c.device_compute << ": " << s.message();
  return out;
}

double MaxRelativeError(const std::vector<float>& ref, const std::vector<float>& got) {
  double scale = 0, diff = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    scale = std::max(scale, static_cast<double>(std::fabs(ref[i])));
    diff = std::max(diff, static_cast<double>(std::fabs(ref[i] - got[i])));
  }
  return diff / scale;
}

void ExpectCudaMatchesCpu(const std::string& model) {
  RunConfig c;
  c.model = LoadModel(model).value();
  c.batch = 4;
  c.prompt_tokens = 12;
  c.generate_tokens = 6;
  c.seed = 5;
  const RunResult ref = RunLayout(c);
  ASSERT_EQ(ref.tokens.size(), 4u);
  std::vector<Layout> layouts = {Layout{}};
  for (const Layout& l : testing::DifferentialLayouts(c.model)) {
    // Up to 4 ranks; layouts the CUDA backend refuses (context parallelism) are not its to run.
    if (l.gpus() <= 4 && CheckDeviceCompute("cuda", c.model, l).ok()) layouts.push_back(l);
  }
  for (const Layout& l : layouts) {
    RunConfig gpu = c;
    gpu.layout = l;
    gpu.device_compute = "cuda";
    const RunResult got = RunLayout(gpu);
    ASSERT_EQ(got.logits.size(), ref.logits.size()) << l.ToString();
    EXPECT_LE(MaxRelativeError(ref.logits, got.logits), kBf16Tolerance) << l.ToString();
    EXPECT_EQ(got.tokens, ref.tokens) << l.ToString();
  }
}

TEST(CudaDifferential, TinyDenseEveryLayoutUpToFourRanks) {
  SW_SKIP_WITHOUT_GPU();
  ExpectCudaMatchesCpu("tiny-dense");
}

TEST(CudaDifferential, TinyMoeEveryLayoutUpToFourRanks) {
  SW_SKIP_WITHOUT_GPU();
  ExpectCudaMatchesCpu("tiny-moe");
}

}  // namespace
}  // namespace shardwise
