// The Deployment value and its estimate: validation by field, the pool arithmetic by hand, and
// the engine profile's scheduler as policy values.
#include "shardwise/deploy/deployment.h"

#include <gtest/gtest.h>

#include <cmath>

#include "shardwise/deploy/estimate.h"
#include "shardwise/model/catalog.h"
#include "shardwise/perf/engine.h"

namespace shardwise {
namespace {

struct Fixture {
  ModelSpec model = LoadModel("llama-3.1-8b").value();
  ClusterSpec node = LoadCluster("dgx-h100").value();  // 8 GPUs

  Pool PoolOf(const std::string& layout, int64_t workers = 1, int64_t max_batch = 256) const {
    return EnginePool(PoolRole::kAggregated, ParseLayout(layout).value(), workers, node,
                      PerfOptions{}, max_batch);
  }
};

TEST(Deployment, AggregatedHasOneWorkerAndFitsItsCluster) {
  Fixture f;
  const StatusOr<Deployment> ok = Deployment::Aggregated(f.model, f.PoolOf("dp2tp4"));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->gpus(), 8);
  EXPECT_FALSE(ok->disaggregated());
  EXPECT_EQ(ok->ToString(), "dp2tp4");

  const StatusOr<Deployment> workers = Deployment::Aggregated(f.model, f.PoolOf("tp4", 2));
  ASSERT_FALSE(workers.ok());
  EXPECT_EQ(workers.status().field(), "workers");

  // 16 GPUs on an 8-GPU node.
  const StatusOr<Deployment> big = Deployment::Aggregated(f.model, f.PoolOf("dp2tp8"));
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(big.status().field(), "nodes");
}

TEST(Deployment, DisaggregatedPoolsShareTheirClusterAndNameTheirFields) {
  Fixture f;
  // 2 x tp2 + 1 x tp4 = 8 GPUs fit one node; 3 x tp2 + 1 x tp4 = 10 do not.
  const StatusOr<Deployment> d = Deployment::Disaggregated(
      f.model, f.PoolOf("tp2", 2), f.PoolOf("tp4", 1), KvTransferMode::kAfterPrefill, true);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->gpus(), 8);
  EXPECT_EQ(d->ToString(), "2P x tp2 + 1D x tp4");
  EXPECT_EQ(d->prefill().role, PoolRole::kPrefill);
  EXPECT_EQ(d->decode().role, PoolRole::kDecode);
  EXPECT_FALSE(Deployment::Disaggregated(f.model, f.PoolOf("tp2", 3), f.PoolOf("tp4", 1),
                                         KvTransferMode::kAfterPrefill, true)
                   .ok());
  const StatusOr<Deployment> zero = Deployment::Disaggregated(
      f.model, f.PoolOf("tp2", 0), f.PoolOf("tp4"), KvTransferMode::kAfterPrefill, true);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().field(), "prefill.workers");
  // Llama-3.1-8B has 8 KV heads and 32 query heads: tp3 divides neither.
  const StatusOr<Deployment> bad = Deployment::Disaggregated(
      f.model, f.PoolOf("tp2"), f.PoolOf("tp3"), KvTransferMode::kAfterPrefill, true);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "decode.layout");
}

TEST(Deployment, ExpertCopiesNeedAnExpertGroup) {
  Fixture f;
  const ModelSpec moe = LoadModel("qwen3-30b-a3b").value();  // 128 experts
  Pool pool = f.PoolOf("tp8");
  pool.perf.redundant_experts = 8;
  const StatusOr<Deployment> d = Deployment::Aggregated(moe, pool);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().field(), "redundant_experts");
  // ep8: (128 + 8) / 8 = 17 slots per rank.
  pool.layout = ParseLayout("dp8ep8").value();
  EXPECT_TRUE(Deployment::Aggregated(moe, pool).ok());
}

TEST(Deployment, EngineProfilesRunTheirOwnScheduler) {
  // TensorRT-LLM 1.0: GUARANTEED_NO_EVICT, no chunked prefill; vLLM: preemption, chunked mixed
  // iterations; SGLang: prefill batches first (data/engines/*.json cite each).
  const EngineProfile trt = LoadEngine("trtllm").value();
  const EngineProfile vllm = LoadEngine("vllm").value();
  const EngineProfile sglang = LoadEngine("sglang").value();
  EXPECT_TRUE(ReservesOutput(EngineAdmission(trt)));
  EXPECT_FALSE(ChunksPrompts(EngineSchedule(trt)));
  EXPECT_TRUE(DecodesBesidePrefill(EngineSchedule(trt)));
  EXPECT_FALSE(ReservesOutput(EngineAdmission(vllm)));
  EXPECT_TRUE(ChunksPrompts(EngineSchedule(vllm)));
  EXPECT_FALSE(DecodesBesidePrefill(EngineSchedule(sglang)));
  EXPECT_EQ(ScheduleName(EngineSchedule(sglang)), "prefill-first");
  const StatusOr<AdmissionPolicy> unknown = ParseAdmission("lifo");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().field(), "admission");
}

TEST(Deployment, BatchLimitsHoldPerAttentionRank) {
  // dp8ep8 of a MoE model is one replica of 8 attention ranks: 8 x 64 sequences and 8 x 8,192
  // tokens per iteration; dp8tp1 of a dense model is 8 replicas of one rank.
  Fixture f;
  Pool moe = f.PoolOf("dp8ep8", 1, 64);
  EXPECT_EQ(moe.Replicas(), 1);
  EXPECT_EQ(moe.Batch().max_batch, 8 * 64);
  EXPECT_EQ(moe.Batch().max_batched_tokens, 8 * moe.perf.max_batched_tokens);
  Pool dense = f.PoolOf("dp8", 1, 64);
  EXPECT_EQ(dense.Replicas(), 8);
  EXPECT_EQ(dense.Batch().max_batch, 64);
}

TEST(DeploymentEstimate, DisaggregatedTtftIsThePrefillPlusTheKvOverNvlink) {
  // Llama-3.1-8B in bf16: 32 layers x 8 KV heads x 128 dims x (K + V) x 2 bytes = 131,072
  // bytes per token on a tp1 worker. Both pools inside one NVLink domain: the transfer is the
  // NVLink hop's latency plus the prompt's KV over the GPU's achievable NVLink egress.
  Fixture f;
  const Deployment d = Deployment::Disaggregated(f.model, f.PoolOf("tp1", 1), f.PoolOf("tp1", 1),
                                                 KvTransferMode::kAfterPrefill, true)
                           .value();
  Workload w;
  w.prompt_tokens = 2048;
  w.output_tokens = 256;
  const DeploymentEstimate e = EstimateDeployment(f.model, d, w).value();
  const TopologyLevel& nvlink = f.node.levels[0];
  const double bytes_per_s = f.node.PerGpuEgressBytesPerS(0) * nvlink.efficiency;
  const double transfer_s =
      f.node.launch_latency_s + nvlink.hop_latency_s + 131072.0 * 2048 / bytes_per_s;
  EXPECT_NEAR(e.transfer_s, transfer_s, 1e-12);
  // The prefill alone, from the step model of the same worker.
  const StepModel step =
      StepModel::Create(f.model, f.node, ParseLayout("tp1").value(), PerfOptions{}).value();
  w.batch = 1;
  EXPECT_NEAR(e.unloaded_ttft_s, step.Estimate(w).ttft_s + transfer_s, 1e-12);
  // The deployment serves what its slower pool does, and the decode workers that balance the
  // prefill pool are its rate over one decode worker's.
  EXPECT_DOUBLE_EQ(e.capacity_requests_per_s,
                   std::min(e.prefill().requests_per_s, e.decode().requests_per_s));
  EXPECT_DOUBLE_EQ(e.balanced_decode_workers,
                   e.prefill().requests_per_s / e.decode().requests_per_s);
  // A decode worker holds its batch for OSL steps: batch / (OSL x TPOT) requests per second.
  const StepEstimate& at = e.decode().at_batch;
  EXPECT_NEAR(e.decode().requests_per_s,
              static_cast<double>(at.workload.batch) / (256.0 * at.tpot_s), 1e-9);
}

TEST(DeploymentEstimate, EachReplicasApiServerTokenizesOnePromptAtATime) {
  // Llama-3.1-8B as eight tp1 replicas, each behind its own API server. Without a tokenizing
  // time the GPUs set the capacity; at 100 us a prompt token (a slow tokenizer, chosen so that
  // it binds) one server passes 1 / (1e-4 x 1,024) = 9.77 prompts a second, the eight 78.1.
  Fixture f;
  Workload w;
  w.prompt_tokens = 1024;
  w.output_tokens = 256;
  Pool pool = f.PoolOf("dp8");
  const Deployment free = Deployment::Aggregated(f.model, pool).value();
  const DeploymentEstimate gpus = EstimateDeployment(f.model, free, w).value();
  EXPECT_TRUE(std::isinf(gpus.front_end_requests_per_s));
  EXPECT_DOUBLE_EQ(gpus.capacity_requests_per_s, gpus.prefill().requests_per_s);
  ASSERT_GT(gpus.capacity_requests_per_s, 8 / (1e-4 * 1024));
  pool.perf.engine.tokenize_s_per_token = 1e-4;
  const Deployment slow = Deployment::Aggregated(f.model, pool).value();
  const DeploymentEstimate e = EstimateDeployment(f.model, slow, w).value();
  EXPECT_NEAR(e.front_end_requests_per_s, 78.125, 1e-9);
  EXPECT_NEAR(e.capacity_requests_per_s, 78.125, 1e-9);
  EXPECT_DOUBLE_EQ(e.prefill().requests_per_s, gpus.prefill().requests_per_s);
}

TEST(DeploymentEstimate, ALayoutThatDoesNotFitNamesThePool) {
  // Llama-3.1-405B in bf16 (~810 GB) cannot prefill on one H100.
  Fixture f;
  const ModelSpec big = LoadModel("llama-3.1-405b").value();
  const Deployment d = Deployment::Disaggregated(big, f.PoolOf("tp1", 1), f.PoolOf("tp4", 1),
                                                 KvTransferMode::kAfterPrefill, true)
                           .value();
  const StatusOr<DeploymentEstimate> e = EstimateDeployment(big, d, Workload{});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().field(), "prefill.layout");
  EXPECT_NE(e.status().message().find("does not fit"), std::string::npos);
}

}  // namespace
}  // namespace shardwise
