// Megatron-LM's weak-scaling Table 1 (Narayanan et al., SC21, arXiv:2104.04473; the rows are in
// docs/validation.md): predicted TFLOP/s per GPU with the paper's own TP, PP and DP on DGX A100
// nodes, engine megatron-lm-sc21. The paper does not list micro-batch sizes or interleaving
// degrees per row, so those are chosen as its authors tuned them: the fastest that fits.
#include <gtest/gtest.h>

#include <cmath>

#include "shardwise/model/catalog.h"
#include "shardwise/train/planner.h"

namespace shardwise::train {
namespace {

struct Row {
  const char* model;
  int64_t tp, pp, gpus, batch;
  double tflops_per_gpu;  // Table 1, "Achieved teraFLOP/s per GPU"
};

constexpr Row kTable1[] = {
    {"megatron-gpt-1.7b", 1, 1, 32, 512, 137},     {"megatron-gpt-3.6b", 2, 1, 64, 512, 138},
    {"megatron-gpt-7.5b", 4, 1, 128, 512, 142},    {"megatron-gpt-18b", 8, 1, 256, 1024, 135},
    {"megatron-gpt-39b", 8, 2, 512, 1536, 138},    {"megatron-gpt-76b", 8, 4, 1024, 1792, 140},
    {"megatron-gpt-146b", 8, 8, 1536, 2304, 148},  {"megatron-gpt-310b", 8, 16, 1920, 2160, 155},
    {"megatron-gpt-530b", 8, 35, 2520, 2520, 163}, {"megatron-gpt-1t", 8, 64, 3072, 3072, 163},
};

ClusterSpec Selene(int64_t gpus) {
  return WithGpus(WithNodes(LoadCluster("dgx-a100").value(), gpus / 8).value(), gpus).value();
}

TrainRequest Request(const Row& r) {
  TrainRequest req;
  req.config.seq_len = 2048;  // Table 1: sequence length 2,048
  req.config.global_batch = r.batch;
  // The paper trains with activation recomputation and no ZeRO; schedules are searched.
  req.config.recompute = Recompute::kFull;
  req.search_recompute = false;
  req.config.zero = 0;
  req.search_zero = false;
  req.sizes = false;
  req.top = 1;
  return req;
}

double PaperLayoutTflops(const Row& r) {
  const ModelSpec m = LoadModel(r.model).value();
  const TrainEngine e = LoadTrainEngine("megatron-lm-sc21").value();
  const ClusterSpec c = Selene(r.gpus);
  TrainRequest req = Request(r);
  Layout l;
  l.tp = r.tp;
  l.pp = r.pp;
  l.dp = r.gpus / (r.tp * r.pp);
  req.only_layout = l;
  auto plan = PlanTraining(m, c, e, req);
  EXPECT_TRUE(plan.ok()) << r.model << ": " << plan.status().message();
  return plan.ok() ? plan->ranked.front().estimate.hardware_tflops_per_gpu : 0;
}

TEST(MegatronTable1, EveryRowWithinTenPercentMeanWithinSc21Calibration) {
  double sum_abs = 0;
  for (const Row& r : kTable1) {
    const double predicted = PaperLayoutTflops(r);
    const double error = predicted / r.tflops_per_gpu - 1;
    EXPECT_LT(std::abs(error), 0.10)
        << r.model << ": predicted " << predicted << " vs " << r.tflops_per_gpu;
    sum_abs += std::abs(error);
  }
  // The mean absolute error this table has been reproduced to (docs/validation.md: 3.8%) must not
  // grow as the engine model grows.
  EXPECT_LT(sum_abs / std::size(kTable1), 0.038);
}

TEST(MegatronTable1, PlannerIsAtLeastAsFastAsThePaper) {
  // Given each row's model, GPU count and batch, the planner's layout must be at least as fast
  // as the paper's own layout under the same engine and recompute mode.
  const TrainEngine e = LoadTrainEngine("megatron-lm-sc21").value();
  for (const Row& r : kTable1) {
    const ModelSpec m = LoadModel(r.model).value();
    auto plan = PlanTraining(m, Selene(r.gpus), e, Request(r));
    ASSERT_TRUE(plan.ok()) << r.model << ": " << plan.status().message();
    const double planned = plan->ranked.front().estimate.hardware_tflops_per_gpu;
    EXPECT_GE(planned, PaperLayoutTflops(r) * (1 - 1e-9))
        << r.model << " planner chose " << plan->ranked.front().estimate.layout.ToString();
  }
}

TEST(MegatronTable2, PtdpGpt3WithinTenPercent) {
  // Table 2 (same paper): GPT-3 175B with PTD-P, model-parallel size 96 (TP 8 x PP 12),
  // micro-batch 1, batch 1536: 153 / 149 / 141 TFLOP/s per GPU on 384 / 768 / 1536 GPUs.
  const ModelSpec m = LoadModel("megatron-gpt-175b").value();
  const TrainEngine e = LoadTrainEngine("megatron-lm-sc21").value();
  const std::pair<int64_t, double> kRows[] = {{384, 153}, {768, 149}, {1536, 141}};
  for (const auto& [gpus, tflops] : kRows) {
    TrainRequest req = Request({"megatron-gpt-175b", 8, 12, gpus, 1536, tflops});
    req.config.micro_batch = 1;
    req.search_micro_batch = false;
    Layout l;
    l.tp = 8;
    l.pp = 12;
    l.dp = gpus / 96;
    req.only_layout = l;
    auto plan = PlanTraining(m, Selene(gpus), e, req);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    const double predicted = plan->ranked.front().estimate.hardware_tflops_per_gpu;
    EXPECT_NEAR(predicted / tflops, 1.0, 0.10) << gpus << " GPUs: " << predicted;
  }
}

}  // namespace
}  // namespace shardwise::train
