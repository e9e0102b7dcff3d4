// The CUDA backend against the CPU reference: for tiny-dense, tiny-moe, tiny-mla (DeepSeek-V3's
// MLA and routing) and tiny-gptoss (sliding windows, sinks, biased experts) and every layout of
// up to 4 ranks with cp in {1, 2} (all ranks sharing this machine's GPUs over the threads
// communicator), plus redundant experts and capacity factors, the logits of the prefill and of
// the first decode step (which reads the prompt's KV cache) must equal the single-rank fp32 CPU
// run's within bf16 tolerance, and the greedy tokens must agree wherever rounding cannot swap
// them. Tolerance: bf16 keeps 8 significant bits (unit roundoff 2^-9 = 0.2%); every GEMM input is
// rounded once per layer, so the logits' max error relative to their largest magnitude is bounded
// here by 2e-2, an order of magnitude under what a wrong kernel gives (O(1)).
//
// Tokens: with random weights many sequences' two best logits lie closer than that error, and
// the GPU may then pick the other one, after which the sequences legitimately diverge (seen on
// an H100: one of 4 sequences of tiny-dense at its fourth token). So tokens are compared only
// for sequences whose reference margin (best minus second-best logit) exceeds twice the
// tolerance, which no in-tolerance error can overturn. A MoE sequence whose logits are off is
// excused where the reference routed one of its tokens between near-tied experts (its routing
// margin within twice the tolerance, reference_check.h). At least a quarter of the sequences
// must be compared, so the check cannot pass by comparing nothing. Skips without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "../run_layout.h"
#include "../test_layouts.h"
#include "gpu_test_util.h"
#include "shardwise/model/catalog.h"
#include "shardwise/runtime/comm/thread_comm.h"
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
// magnitude over all rows; a row off by more than the tolerance whose reference routed a token
// between near-tied experts is left out (reference_check.h), and at least a quarter of the rows
// must remain.
double MaxRelativeError(const RunResult& ref, const RunResult& got, const std::vector<int>& rows) {
  const size_t v = static_cast<size_t>(ref.vocab);
  const double scale = Scale(ref.logits.data(), ref.logits.size());
  double diff = 0;
  size_t compared = 0;
  for (int r : rows) {
    double row_diff = 0;
    for (size_t i = 0; i < v; ++i) {
      const size_t k = static_cast<size_t>(r) * v + i;
      row_diff = std::max(row_diff, static_cast<double>(std::fabs(ref.logits[k] - got.logits[k])));
    }
    if (row_diff > kBf16Tolerance * scale && ref.router_margins[r] <= 2 * kBf16Tolerance) continue;
    diff = std::max(diff, row_diff);
    ++compared;
  }
  EXPECT_GE(4 * compared, ref.tokens.size()) << "too few sequences compared";
  return diff / scale;
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

// A CUDA run's options beside its layout.
struct Variant {
  int64_t redundant_experts = 0;
  double capacity_factor = 0;
};

void ExpectCudaMatchesCpu(const std::string& model, const std::vector<Layout>& layouts,
                          const Variant& v = {}) {
  RunConfig c;
  c.model = LoadModel(model).value();
  c.batch = 8;
  c.prompt_tokens = 12;  // 2 x cp chunks for cp 2
  c.seed = 5;
  c.capacity_factor = v.capacity_factor;
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
  for (const Layout& l : layouts) {
    RunConfig gpu_prefill = prefill, gpu_decode = decode;
    gpu_prefill.layout = gpu_decode.layout = l;
    gpu_prefill.device_compute = gpu_decode.device_compute = "cuda";
    gpu_prefill.redundant_experts = gpu_decode.redundant_experts = v.redundant_experts;
    const std::string what = fmt::format("{} {} +{} experts, capacity {}", model, l.ToString(),
                                         v.redundant_experts, v.capacity_factor);
    const RunResult got_prefill = RunLayout(gpu_prefill), got_decode = RunLayout(gpu_decode);
    ASSERT_EQ(got_prefill.logits.size(), ref_prefill.logits.size()) << what;
    ASSERT_EQ(got_decode.logits.size(), ref_decode.logits.size()) << what;
    EXPECT_LE(MaxRelativeError(ref_prefill, got_prefill, first_clear), kBf16Tolerance)
        << "prefill, " << what;
    // The decode step's input is the first token: comparable where that token is certain.
    EXPECT_LE(MaxRelativeError(ref_decode, got_decode, second_clear), kBf16Tolerance)
        << "decode, " << what;
    for (int b : first_clear) {
      EXPECT_EQ(got_decode.tokens[b][0], ref_decode.tokens[b][0]) << what << " seq " << b;
    }
    for (int b : second_clear) {
      EXPECT_EQ(got_decode.tokens[b][1], ref_decode.tokens[b][1]) << what << " seq " << b;
    }
  }
}

// Every differential layout of up to 4 ranks, with cp 1 and 2.
std::vector<Layout> UpToFourRanks(const std::string& model) {
  std::vector<Layout> out = {Layout{}};
  for (const Layout& l : testing::DifferentialLayouts(LoadModel(model).value(), {1, 2})) {
    if (l.gpus() <= 4) out.push_back(l);
  }
  return out;
}

TEST(CudaDifferential, TinyDenseEveryLayoutUpToFourRanks) {
  SW_SKIP_WITHOUT_GPU();
  ExpectCudaMatchesCpu("tiny-dense", UpToFourRanks("tiny-dense"));
}

TEST(CudaDifferential, TinyMoeEveryLayoutUpToFourRanks) {
  SW_SKIP_WITHOUT_GPU();
  ExpectCudaMatchesCpu("tiny-moe", UpToFourRanks("tiny-moe"));
}

TEST(CudaDifferential, TinyMlaEveryLayoutUpToFourRanks) {
  SW_SKIP_WITHOUT_GPU();
  ExpectCudaMatchesCpu("tiny-mla", UpToFourRanks("tiny-mla"));
}

TEST(CudaDifferential, TinyGptOssEveryLayoutUpToFourRanks) {
  SW_SKIP_WITHOUT_GPU();
  ExpectCudaMatchesCpu("tiny-gptoss", UpToFourRanks("tiny-gptoss"));
}

// Redundant experts (replicas hold the same weights) and capacity factors (the unsharded
// reference drops the same pairs), with CP and EP spanning it.
TEST(CudaDifferential, RedundantExpertsAndCapacity) {
  SW_SKIP_WITHOUT_GPU();
  auto layouts = [](std::initializer_list<const char*> names) {
    std::vector<Layout> out;
    for (const char* n : names) out.push_back(ParseLayout(n).value());
    return out;
  };
  ExpectCudaMatchesCpu("tiny-moe", layouts({"ep2", "tp2ep4", "cp2ep4"}), {4, 0});
  ExpectCudaMatchesCpu("tiny-moe", layouts({"ep2", "cp2ep2", "tp2ep2"}), {2, 1.0});
  ExpectCudaMatchesCpu("tiny-mla", layouts({"ep2", "cp2ep4"}), {2, 0.75});
  ExpectCudaMatchesCpu("tiny-gptoss", layouts({"tp2ep2"}), {2, 1.0});
}

}  // namespace
}  // namespace shardwise
