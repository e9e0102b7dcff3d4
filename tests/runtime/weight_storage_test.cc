// Weight storage and threads per rank on whole runs:
//  - bf16 and int8 runs, sharded, equal the unsharded run in the same storage (the int8 weight
//    scales are whole-row and the activations' int8 blocks align with every shard, so every
//    sharding quantises identically) within the storage's reference tolerance
//    (compute_registry.h: products whose inputs are rounded may round a value near a boundary
//    either way in two layouts) and with the same greedy tokens except after near ties;
//  - threads split whole weight rows and whole heads, so more threads give bit-identical logits;
//  - bf16 and int8 logits stay within a budget of the fp32 run's, derived from the formats'
//    rounding (below).
#include <gtest/gtest.h>

#include <cmath>

#include "run_layout.h"
#include "shardwise/model/catalog.h"
#include "shardwise/runtime/comm/thread_comm.h"
#include "shardwise/runtime/compute_registry.h"
#include "shardwise/runtime/reference_check.h"
#include "shardwise/runtime/runner.h"

namespace shardwise {
namespace {

using testing::MaxRelativeError;
using testing::RunLayout;

RunConfig Config(const std::string& model, WeightStorage storage) {
  RunConfig c;
  c.model = LoadModel(model).value();
  c.batch = 4;
  c.prompt_tokens = 12;
  c.generate_tokens = 4;
  c.seed = 7;
  c.kernels.weights = storage;
  return c;
}

TEST(WeightStorage, ShardedRunsEqualTheUnshardedRunInTheSameStorage) {
  struct Case {
    const char* model;
    std::vector<const char*> layouts;
  };
  // tiny-gptoss: fused experts, whose int8 down projections take their scales from the
  // expert's whole rows too.
  const std::vector<Case> cases = {{"tiny-dense", {"tp2", "tp3pp2", "tp4", "cp2"}},
                                   {"tiny-moe", {"tp2ep2", "ep4"}},
                                   {"tiny-gptoss", {"tp2ep2", "tp2"}}};
  for (WeightStorage storage : {WeightStorage::kBf16, WeightStorage::kInt8}) {
    for (const Case& k : cases) {
      const RunConfig c = Config(k.model, storage);
      const RunResult ref = RunLayout(c);
      for (const char* layout : k.layouts) {
        RunConfig sharded = c;
        sharded.layout = ParseLayout(layout).value();
        sharded.kernels.threads = 2;
        const RunResult got = RunLayout(sharded);
        const double tolerance = ReferenceTolerance("cpu", storage);
        const ReferenceComparison check = CompareWithReference(ref, got, tolerance);
        EXPECT_TRUE(check.Matches(tolerance))
            << k.model << " " << layout << " " << WeightStorageName(storage) << ": "
            << check.max_relative_error << ", " << check.diverged << " diverged";
        EXPECT_GE(check.compared, 2) << k.model << " " << layout;
      }
    }
  }
}

TEST(WeightStorage, ThreadsDoNotChangeTheLogits) {
  for (WeightStorage storage : {WeightStorage::kFp32, WeightStorage::kInt8}) {
    RunConfig c = Config("tiny-moe", storage);
    const RunResult one = RunLayout(c);
    c.kernels.threads = 3;
    const RunResult three = RunLayout(c);
    EXPECT_EQ(one.logits, three.logits) << WeightStorageName(storage);
    EXPECT_EQ(one.tokens, three.tokens) << WeightStorageName(storage);
  }
}

// The budget: tiny-dense's logits come out of P = 7 L + 1 = 29 weight products (Q, K, V, O,
// gate, up, down per layer, then the LM head). Rounding the weights moves each product by at
// most u_f of sum |x w| (bf16: u_f = 2^-9; int8: half a step of the row's largest weight,
// 1/254 of it, which for uniform weights is at most 1/127 of the average |w|, so u_f = 1/127),
// and where the CPU multiplies in the weights' format, rounding the activations as much again.
// If each product passed its whole relative error on and they added up, the logits would move
// by at most 2 P u_f of their scale; norms and softmax do not amplify uniformly scaled errors.
// This is a budget, not a bound: it checks that the formats are read and scaled correctly (a
// wrong scale or a misplaced bf16 half is off by far more).
TEST(WeightStorage, Bf16AndInt8StayWithinTheirRoundingBudgetOfFp32) {
  const RunResult fp32 = RunLayout(Config("tiny-dense", WeightStorage::kFp32));
  const double products = 7 * LoadModel("tiny-dense").value().num_layers() + 1;
  const RunResult bf16 = RunLayout(Config("tiny-dense", WeightStorage::kBf16));
  const RunResult int8 = RunLayout(Config("tiny-dense", WeightStorage::kInt8));
  const double bf16_error = MaxRelativeError(fp32.logits, bf16.logits);
  const double int8_error = MaxRelativeError(fp32.logits, int8.logits);
  EXPECT_LE(bf16_error, 2 * products * std::ldexp(1.0, -9));
  EXPECT_LE(int8_error, 2 * products / 127.0);
  // And they do differ: the weights really were rounded.
  EXPECT_GT(bf16_error, 0.0);
  EXPECT_GT(int8_error, bf16_error);
}

}  // namespace
}  // namespace shardwise
