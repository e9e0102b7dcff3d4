// Training memory: model states by ZeRO stage and activations by recompute mode, against
// hand-calculated bytes and the published formulas.
#include "shardwise/train/memory.h"

#include <gtest/gtest.h>

#include "shardwise/model/catalog.h"

namespace shardwise::train {
namespace {

TEST(ModelStates, ZeroPaperFigureOne) {
  // Rajbhandari et al., "ZeRO" (SC20), Figure 1: a 7.5B-parameter model, Adam mixed precision
  // (2 + 2 + 12 bytes per parameter), 64-way data parallelism:
  //   baseline 16 x 7.5e9 = 120 GB; P_os (2 + 2 + 12/64) x 7.5e9 = 31.4 GB;
  //   P_os+g (2 + 14/64) x 7.5e9 = 16.6 GB; P_os+g+p 16/64 x 7.5e9 = 1.9 GB.
  const double psi = 7.5e9;
  auto total = [&](int zero) {
    const ModelStates s = ModelStateBytes(psi, 64, zero, 2, 2);
    return (s.weight_bytes + s.grad_bytes + s.optimizer_bytes) / 1e9;
  };
  EXPECT_NEAR(total(0), 120.0, 0.05);
  EXPECT_NEAR(total(1), 31.4, 0.05);
  EXPECT_NEAR(total(2), 16.6, 0.05);
  EXPECT_NEAR(total(3), 1.875, 0.001);
}

TEST(ModelStates, BytesPerParameterByStage) {
  // Hand calculation, fp32 gradient buffer (4 B) over 8 replicas: weights 2, grads 4 (ZeRO-2+:
  // 0.5), optimizer 12 (ZeRO-1+: 1.5); ZeRO-3 also shards the weights: 0.25.
  const ModelStates z0 = ModelStateBytes(1, 8, 0, 2, 4);
  EXPECT_DOUBLE_EQ(z0.weight_bytes + z0.grad_bytes + z0.optimizer_bytes, 18.0);
  const ModelStates z1 = ModelStateBytes(1, 8, 1, 2, 4);
  EXPECT_DOUBLE_EQ(z1.weight_bytes + z1.grad_bytes + z1.optimizer_bytes, 2 + 4 + 1.5);
  const ModelStates z2 = ModelStateBytes(1, 8, 2, 2, 4);
  EXPECT_DOUBLE_EQ(z2.weight_bytes + z2.grad_bytes + z2.optimizer_bytes, 2 + 0.5 + 1.5);
  const ModelStates z3 = ModelStateBytes(1, 8, 3, 2, 4);
  EXPECT_DOUBLE_EQ(z3.weight_bytes + z3.grad_bytes + z3.optimizer_bytes, 0.25 + 0.5 + 1.5);
  // Megatron-Core keeps FP8 weights alone under --fp8-param-gather (1 B), else the bf16 weights and
  // an FP8 copy (3 B); bf16 runs keep bf16 weights (2 B).
  TrainEngine e = LoadTrainEngine("megatron-core").value();
  TrainConfig c;
  EXPECT_DOUBLE_EQ(WeightBytesPerParam(e, c), 2.0);
  c.dtype = Dtype::kFp8;
  e.fp8_param_gather = true;
  EXPECT_DOUBLE_EQ(WeightBytesPerParam(e, c), 1.0);
  e.fp8_param_gather = false;
  EXPECT_DOUBLE_EQ(WeightBytesPerParam(e, c), 3.0);
}

TrainEngine Sc21() { return LoadTrainEngine("megatron-lm-sc21").value(); }

TEST(Activations, KorthikantiPerLayerFormula) {
  // Korthikanti et al. (arXiv:2205.05198), eq. 1: a GPT layer keeps s b h (34 + 5 a s / h) bytes
  // without parallelism; per token: h (34 + 5 a s / h) = 34 h + 5 a s. GPT 1.7B: h = 2304,
  // a = 24, s = 2048: 34 x 2304 + 5 x 24 x 2048 = 323,136 bytes.
  const ModelSpec m = LoadModel("megatron-gpt-1.7b").value();
  Layout l;
  const ModelShard shard = ShardModel(m, l, PerfOptions{});
  EXPECT_DOUBLE_EQ(ActivationBytesPerToken(m, shard, Sc21(), Recompute::kNone, false, 2048),
                   34.0 * 2304 + 5.0 * 24 * 2048);
  // Selective recompute drops the 5 a s score terms: 34 h.
  EXPECT_DOUBLE_EQ(ActivationBytesPerToken(m, shard, Sc21(), Recompute::kSelective, false, 2048),
                   34.0 * 2304);
  // Full recompute keeps the layer input: 2 h bytes.
  EXPECT_DOUBLE_EQ(ActivationBytesPerToken(m, shard, Sc21(), Recompute::kFull, false, 2048),
                   2.0 * 2304);
}

TEST(Activations, TensorAndSequenceParallel) {
  // Korthikanti et al., eq. 2 (TP without SP): s b h (10 + 24 / t + 5 a s / (h t)); eq. 4 (TP
  // with SP): s b h (34 / t + 5 a s / (h t)). GPT 18B (h = 6144, a = 48), t = 8, s = 2048.
  const ModelSpec m = LoadModel("megatron-gpt-18b").value();
  Layout l;
  l.tp = 8;
  const ModelShard shard = ShardModel(m, l, PerfOptions{});
  const double h = 6144, a = 48, s = 2048, t = 8;
  TrainEngine no_sp = Sc21();
  EXPECT_DOUBLE_EQ(ActivationBytesPerToken(m, shard, no_sp, Recompute::kNone, false, s),
                   h * (10 + 24 / t) + 5 * a * s / t);
  TrainEngine sp = no_sp;
  sp.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(ActivationBytesPerToken(m, shard, sp, Recompute::kNone, false, s),
                   h * 34 / t + 5 * a * s / t);
  EXPECT_DOUBLE_EQ(ActivationBytesPerToken(m, shard, sp, Recompute::kFull, false, s), 2 * h / t);
}

}  // namespace
}  // namespace shardwise::train
