// Kubernetes manifests (--emit dynamo-k8s, --emit llm-d) written by hand from each layout: the
// pods' GPUs cover the layout's GPUs exactly (replicas x nodes x GPUs per pod), an aggregated
// layout's plain replicas become the service's replicas, a worker larger than a host becomes
// one of whole hosts, and the vLLM flags are the shell scripts'. tests/python/test_manifests.py
// parses the same manifests as YAML.
#include <gtest/gtest.h>

#include "shardwise/emit/launch_config.h"

namespace shardwise::emit::kubernetes_manifest {
namespace {

LaunchInputs Inputs(const std::string& layout, int64_t gpus_per_host, bool moe = false) {
  LaunchInputs in;
  in.model = "org/Some-Model_v2.5";
  in.moe = moe;
  in.pool.layout = ParseLayout(layout).value();
  in.pool.max_num_seqs = 64;
  in.max_model_len = 32768;
  in.gpus_per_host = gpus_per_host;
  return in;
}

std::string Manifest(Engine e, const LaunchInputs& in) {
  auto c = MakeLaunchConfig(e, in);
  EXPECT_TRUE(c.ok()) << c.status().message();
  if (!c.ok()) return "";
  EXPECT_EQ(c.value().files.size(), 1u);
  return c.value().files[0].text;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

bool Has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

TEST(DynamoK8s, PlainReplicasAreTheServiceReplicas) {
  // dp2tp4 without experts: two vLLM servers of 4 GPUs, not one of 8 with DP ranks.
  const std::string y = Manifest(Engine::kDynamoK8s, Inputs("dp2tp4", 8));
  EXPECT_TRUE(Has(y, "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\n")) << y;
  EXPECT_TRUE(Has(y, "  name: some-model-v2-5-agg\n")) << y;  // DNS-1123: lower case, '-'
  EXPECT_TRUE(Has(y, "      componentType: frontend\n"));
  EXPECT_TRUE(
      Has(y, "      replicas: 2\n      resources:\n        limits:\n          gpu: \"4\"\n"))
      << y;
  EXPECT_FALSE(Has(y, "--data-parallel-size"));
  EXPECT_FALSE(Has(y, "multinode"));
  EXPECT_TRUE(Has(y,
                  "exec python3 -m dynamo.vllm --model org/Some-Model_v2.5 "
                  "--tensor-parallel-size 4 "));
  EXPECT_TRUE(Has(y, "--max-num-seqs 64 "));
  EXPECT_TRUE(Has(y, "--max-model-len 32768 "));
  EXPECT_TRUE(Has(y, "Written by 'shardwise --emit dynamo-k8s'"));
}

TEST(DynamoK8s, AWorkerLargerThanAHostSpansWholeNodes) {
  // tp8 on GB200 trays of 4 GPUs: one worker of two 4-GPU pods.
  const std::string y = Manifest(Engine::kDynamoK8s, Inputs("tp8", 4));
  EXPECT_TRUE(Has(y, "          gpu: \"4\"\n      multinode:\n        nodeCount: 2\n")) << y;
  EXPECT_TRUE(Has(y, "--tensor-parallel-size 8 "));
  // 6 GPUs cannot fill hosts of 4.
  auto bad = MakeLaunchConfig(Engine::kDynamoK8s, Inputs("tp2pp3", 4));
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Has(bad.status().message(), "cannot be split evenly over hosts of 4 GPUs"))
      << bad.status().message();
}

TEST(DynamoK8s, DisaggregatedPoolsAreTwoWorkerServices) {
  LaunchInputs in = Inputs("tp4", 8);
  in.pool.workers = 1;
  PoolLaunch prefill;
  prefill.layout = ParseLayout("tp2").value();
  prefill.workers = 3;
  in.prefill_pool = prefill;
  const std::string y = Manifest(Engine::kDynamoK8s, in);
  EXPECT_TRUE(Has(y, "  name: some-model-v2-5-disagg\n"));
  const size_t decode = y.find("    VllmDecodeWorker:\n");
  const size_t prefill_at = y.find("    VllmPrefillWorker:\n");
  ASSERT_NE(decode, std::string::npos) << y;
  ASSERT_NE(prefill_at, std::string::npos) << y;
  const std::string decode_part = y.substr(decode, prefill_at - decode);
  const std::string prefill_part = y.substr(prefill_at);
  EXPECT_TRUE(Has(decode_part, "replicas: 1\n")) << decode_part;
  EXPECT_TRUE(Has(decode_part, "gpu: \"4\"\n"));
  EXPECT_FALSE(Has(decode_part, "--is-prefill-worker"));
  EXPECT_TRUE(Has(prefill_part, "replicas: 3\n")) << prefill_part;
  EXPECT_TRUE(Has(prefill_part, "gpu: \"2\"\n"));
  EXPECT_TRUE(Has(prefill_part, "--is-prefill-worker"));
  EXPECT_EQ(Count(y, "componentType: worker\n"), 2u);
}

TEST(DynamoK8s, DeepEpKernelsAsAContainerEnvironment) {
  LaunchInputs in = Inputs("dp8ep8", 8, true);
  in.pool.decode_ep = EpKernels::kDeepEpLowLatency;
  in.pool.prefill_ep = EpKernels::kDeepEpLowLatency;
  const std::string y = Manifest(Engine::kDynamoK8s, in);
  EXPECT_TRUE(Has(y,
                  "          env:\n            - name: VLLM_ALL2ALL_BACKEND\n"
                  "              value: \"deepep_low_latency\"\n"))
      << y;
  EXPECT_TRUE(Has(y, "--enable-expert-parallel"));
  // Attention DP stays inside the one server: its DP ranks are the flag, not replicas.
  EXPECT_TRUE(Has(y, "--data-parallel-size 8 "));
  EXPECT_TRUE(Has(y, "      replicas: 1\n      resources:"));
}

TEST(LlmD, AggregatedValues) {
  const std::string y = Manifest(Engine::kLlmD, Inputs("dp2tp4", 8));
  EXPECT_TRUE(Has(y, "multinode: false\n")) << y;
  EXPECT_TRUE(Has(y, "  uri: \"hf://org/Some-Model_v2.5\"\n"));
  EXPECT_TRUE(Has(y, "    enabled: false\n"));  // no P/D proxy without prefill pods
  EXPECT_TRUE(Has(y, "decode:\n  create: true\n  replicas: 2\n  parallelism:\n    tensor: 4\n"));
  EXPECT_TRUE(Has(y, "prefill:\n  create: false\n"));
  EXPECT_TRUE(Has(y, "exec vllm serve org/Some-Model_v2.5 --port 8000 --tensor-parallel-size 4 "));
  EXPECT_TRUE(Has(y,
                  "          nvidia.com/gpu: \"4\"\n        requests:\n"
                  "          nvidia.com/gpu: \"4\"\n"));
  EXPECT_FALSE(Has(y, "NixlConnector"));
}

TEST(LlmD, DisaggregatedPodsMeetThroughNixl) {
  LaunchInputs in = Inputs("tp4", 8);
  PoolLaunch prefill;
  prefill.layout = ParseLayout("tp1").value();
  prefill.workers = 5;
  in.prefill_pool = prefill;
  const std::string y = Manifest(Engine::kLlmD, in);
  EXPECT_TRUE(Has(y, "    enabled: true\n    targetPort: 8200\n")) << y;
  // The decode pods' vLLM listens behind the routing sidecar; the prefill pods' on the service's.
  EXPECT_TRUE(Has(y, "--port 8200 ")) << y;
  EXPECT_TRUE(Has(y, "prefill:\n  create: true\n  replicas: 5\n"));
  EXPECT_EQ(Count(y, R"(--kv-transfer-config '{\"kv_connector\":\"NixlConnector\")"), 2u) << y;
  EXPECT_EQ(Count(y, "fieldPath: status.podIP"), 2u);
}

TEST(LlmD, WorkersLargerThanAHostAreLeaderWorkerSets) {
  // dp8ep8 (attention DP, one GPU per rank) on trays of 4: two pods of 4 DP ranks, the second
  // headless from rank 4 on.
  const std::string y = Manifest(Engine::kLlmD, Inputs("dp8ep8", 4, true));
  EXPECT_TRUE(Has(y, "multinode: true\n")) << y;
  EXPECT_TRUE(Has(y, "    data: 8\n    dataLocal: 4\n    workers: 2\n")) << y;
  EXPECT_TRUE(Has(y, "--data-parallel-size-local 4 "));
  EXPECT_TRUE(Has(y, "--data-parallel-start-rank $((LWS_WORKER_INDEX * 4)) "));
  EXPECT_TRUE(Has(y, "--data-parallel-address $LWS_LEADER_ADDRESS "));
  EXPECT_TRUE(Has(y, "HEADLESS=--headless"));
  // One tp8 rank over two trays would need Ray: refused with the alternative named.
  auto bad = MakeLaunchConfig(Engine::kLlmD, Inputs("tp8", 4));
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Has(bad.status().message(), "emit dynamo-k8s")) << bad.status().message();
}

TEST(Manifests, RefuseContextParallelism) {
  for (Engine e : {Engine::kDynamoK8s, Engine::kLlmD}) {
    auto bad = MakeLaunchConfig(e, Inputs("tp2cp2", 8));
    ASSERT_FALSE(bad.ok()) << EngineName(e);
    EXPECT_TRUE(Has(bad.status().message(), "context parallelism"));
  }
  EXPECT_EQ(ParseEngine("dynamo-k8s").value(), Engine::kDynamoK8s);
  EXPECT_EQ(ParseEngine("llm-d").value(), Engine::kLlmD);
  EXPECT_TRUE(Has(ParseEngine("helm").status().message(), "llm-d"));
}

}  // namespace
}  // namespace shardwise::emit::kubernetes_manifest
