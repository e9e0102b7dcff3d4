// The CUDA backend against the CPU reference: for tiny-dense and tiny-moe and every layout of
// up to 4 ranks (all ranks sharing this machine's GPUs over the threads communicator), the
// logits of the prefill and of the first decode step (which reads the prompt's KV cache) must
// equal the single-rank fp32 CPU run's within bf16 tolerance, and the greedy tokens must agree
// wherever rounding cannot swap them. Tolerance: bf16 keeps 8 significant bits (unit roundoff
// 2^-9 = 0.2%); every GEMM input is rounded once per layer, so the logits' max error relative to
// their largest magnitude is bounded here by 2e-2, an order of magnitude under what a wrong
// kernel gives (O(1)).
//
// Tokens: with random weights many sequences' two best logits lie closer than that error, and
// the GPU may then pick the other one, after which the sequences legitimately diverge (seen on
// an H100: one of 4 sequences of tiny-dense at its fourth token). So tokens are compared only
// for sequences whose reference margin (best minus second-best logit) exceeds twice the
// tolerance, which no in-tolerance error can overturn; at least a quarter of the sequences must
// have such a margin, so the check cannot pass by comparing nothing. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "../run_layout.h"
#include "../test_layouts.h"
#include "gpu_test_util.h"
#include "shardwise/model/catalog.h"
#include "shardwise/runtime/comm/thread_comm.h"
#include "shardwise/runtime/compute_registry.h"
#include "shardwise/runtime/runner.h"

namespace shardwise {
namespace {

constexpr double kBf16Tolerance = 2e-2;

// A GPU run takes longer to start than a CPU one.
RunResult RunLayout(const RunConfig& c) { return testing::RunLayout(c, 60); }

double Scale(const float* v, size_t n) {
  double scale = 0;
  for (size_t i = 0; i < n; ++i) scale = std::max(scale, static_cast<double>(std::fabs(v[i])));
  return scale;
}

// max |ref - got| over `rows` rows of `vocab` logits (row r of both), relative to ref's largest
// magnitude over all rows.
double MaxRelativeError(const RunResult& ref, const RunResult& got, const std::vector<int>& rows) {
  const size_t v = static_cast<size_t>(ref.vocab);
  double diff = 0;
  for (int r : rows) {
    for (size_t i = 0; i < v; ++i) {
      const size_t k = static_cast<size_t>(r) * v + i;
      diff = std::max(diff, static_cast<double>(std::fabs(ref.logits[k] - got.logits[k])));
    }
  }
  return diff / Scale(ref.logits.data(), ref.logits.size());
}

// The sequences whose best logit leads the second by more than twice the tolerance: no pair of
// errors within tolerance can swap their greedy token.
std::vector<int> ClearSequences(const RunResult& ref) {
  const double scale = Scale(ref.logits.data(), ref.logits.size());
  std::vector<int> clear;
  for (size_t b = 0; b < ref.tokens.size(); ++b) {
    const float* row = ref.logits.data() + b * static_cast<size_t>(ref.vocab);
    std::vector<float> sorted(row, row + ref.vocab);
    std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<float>());
    if (sorted[0] - sorted[1] > 2 * kBf16Tolerance * scale) clear.push_back(static_cast<int>(b));
  }
  return clear;
}

std::vector<int> AllSequences(const RunResult& r) {
  std::vector<int> all(r.tokens.size());
  for (size_t b = 0; b < all.size(); ++b) all[b] = static_cast<int>(b);
  return all;
}

void ExpectCudaMatchesCpu(const std::string& model) {
  RunConfig c;
  c.model = LoadModel(model).value();
  c.batch = 8;
  c.prompt_tokens = 12;
  c.seed = 5;
  RunConfig prefill = c, decode = c;
  prefill.generate_tokens = 1;  // the last logits are the prefill's
  decode.generate_tokens = 2;   // the last logits are the first decode step's
  const RunResult ref_prefill = RunLayout(prefill), ref_decode = RunLayout(decode);
  ASSERT_EQ(ref_prefill.tokens.size(), 8u);
  // Sequences whose first token is certain; of those, the ones whose second token is too.
  const std::vector<int> first_clear = ClearSequences(ref_prefill);
  std::vector<int> second_clear;
  for (int b : ClearSequences(ref_decode)) {
    if (std::find(first_clear.begin(), first_clear.end(), b) != first_clear.end())
      second_clear.push_back(b);
  }
  ASSERT_GE(first_clear.size(), 2u) << "too few sequences with a clear first token to compare";
  std::vector<Layout> layouts = {Layout{}};
  for (const Layout& l : testing::DifferentialLayouts(c.model)) {
    // Up to 4 ranks; layouts the CUDA backend refuses (context parallelism) are not its to run.
    if (l.gpus() <= 4 && CheckDeviceCompute("cuda", c.model, l).ok()) layouts.push_back(l);
  }
  for (const Layout& l : layouts) {
    RunConfig gpu_prefill = prefill, gpu_decode = decode;
    gpu_prefill.layout = gpu_decode.layout = l;
    gpu_prefill.device_compute = gpu_decode.device_compute = "cuda";
    const RunResult got_prefill = RunLayout(gpu_prefill), got_decode = RunLayout(gpu_decode);
    ASSERT_EQ(got_prefill.logits.size(), ref_prefill.logits.size()) << l.ToString();
    ASSERT_EQ(got_decode.logits.size(), ref_decode.logits.size()) << l.ToString();
    EXPECT_LE(MaxRelativeError(ref_prefill, got_prefill, AllSequences(ref_prefill)), kBf16Tolerance)
        << "prefill, " << l.ToString();
    // The decode step's input is the first token: comparable where that token is certain.
    EXPECT_LE(MaxRelativeError(ref_decode, got_decode, first_clear), kBf16Tolerance)
        << "decode, " << l.ToString();
    for (int b : first_clear) {
      EXPECT_EQ(got_decode.tokens[b][0], ref_decode.tokens[b][0]) << l.ToString() << " seq " << b;
    }
    for (int b : second_clear) {
      EXPECT_EQ(got_decode.tokens[b][1], ref_decode.tokens[b][1]) << l.ToString() << " seq " << b;
    }
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
