// Launch configs for workers larger than a host (GB200 NVL72 trays of 4 GPUs, 8-GPU HGX nodes),
// and the engine switches for what the prediction assumed: DeepEP's kernels, two-batch overlap,
// CUDA graphs. Expected commands follow the engines' own documentation (engine_flags.h):
// - SGLang "Multi-node deployment": every node runs launch_server with --nnodes, its
//   --node-rank and the same --dist-init-addr.
// - vLLM "Data Parallel Deployment": the head runs --data-parallel-size-local L with
//   --data-parallel-address and --data-parallel-rpc-port; node k runs the same with --headless
//   and --data-parallel-start-rank k x L. A rank larger than a node runs on a Ray cluster
//   (ray start --head; ray start --address; --distributed-executor-backend ray).
// - TensorRT-LLM multi-node serving: one MPI job of all ranks, trtllm-llmapi-launch.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine_flags.h"
#include "shardwise/emit/launch_config.h"

namespace shardwise::emit::multi_host {
namespace {

using testing::Commands;
using testing::ScriptCommand;

LaunchInputs TrayInputs(const std::string& layout, int64_t gpus_per_host) {
  LaunchInputs in;
  in.model = "Qwen/Qwen3-235B-A22B";
  in.moe = true;
  in.pool.layout = ParseLayout(layout).value();
  in.pool.max_num_seqs = 256;
  in.max_model_len = 40960;
  in.gpus_per_host = gpus_per_host;
  return in;
}

std::vector<ScriptCommand> Launched(Engine e, const LaunchInputs& in,
                                    std::string* script = nullptr) {
  auto c = MakeLaunchConfig(e, in);
  EXPECT_TRUE(c.ok()) << c.status().message();
  if (!c.ok()) return {};
  if (script) *script = c.value().files[0].text;
  return Commands(c.value().files[0].text);
}

std::string FlagValue(const ScriptCommand& c, const std::string& flag) {
  for (const auto& [f, v] : c.flags) {
    if (f == flag) return v;
  }
  return "(absent)";
}

void ExpectDocumented(const std::vector<ScriptCommand>& commands, const std::string& what) {
  for (const ScriptCommand& c : commands) {
    const std::set<std::string> documented = testing::DocumentedFlags(c.program);
    EXPECT_FALSE(documented.empty()) << what << ": unknown program '" << c.program << "'";
    for (const auto& [flag, value] : c.flags) {
      EXPECT_TRUE(documented.contains(flag)) << what << " " << c.program << ": " << flag;
    }
    for (const auto& [name, value] : c.env) {
      EXPECT_TRUE(testing::kEnvironment.contains(name)) << what << ": " << name;
    }
  }
}

TEST(MultiHostLaunch, EightGpusOnNvl72TraysAreTwoHosts) {
  // dp8ep8 on trays of 4 GPUs: 2 hosts, 4 attention-DP ranks each.
  const LaunchInputs in = TrayInputs("dp8ep8", 4);
  std::string script;
  const auto sglang = Launched(Engine::kSglang, in, &script);
  ExpectDocumented(sglang, "sglang");
  ASSERT_EQ(sglang.size(), 2u) << script;
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(FlagValue(sglang[rank], "--nnodes"), "2");
    EXPECT_EQ(FlagValue(sglang[rank], "--node-rank"), std::to_string(rank));
    EXPECT_EQ(FlagValue(sglang[rank], "--dist-init-addr"),
              FlagValue(sglang[0], "--dist-init-addr"));
    EXPECT_EQ(FlagValue(sglang[rank], "--tp-size"), "8");  // the whole server, over both hosts
  }
  EXPECT_TRUE(FlagValue(sglang[0], "--dist-init-addr").starts_with("$NODE0:"));
  EXPECT_NE(script.find("if [ \"$NODE_RANK\" = 1 ]"), std::string::npos);

  const auto vllm = Launched(Engine::kVllm, in);
  ExpectDocumented(vllm, "vllm");
  ASSERT_EQ(vllm.size(), 2u);
  EXPECT_EQ(FlagValue(vllm[0], "--data-parallel-size"), "8");
  EXPECT_EQ(FlagValue(vllm[0], "--data-parallel-size-local"), "4");
  EXPECT_EQ(FlagValue(vllm[0], "--headless"), "(absent)");
  EXPECT_EQ(FlagValue(vllm[1], "--data-parallel-start-rank"), "4");
  EXPECT_NE(FlagValue(vllm[1], "--headless"), "(absent)");
  EXPECT_EQ(FlagValue(vllm[1], "--data-parallel-address"), "$NODE0");
  EXPECT_EQ(FlagValue(vllm[1], "--data-parallel-rpc-port"),
            FlagValue(vllm[0], "--data-parallel-rpc-port"));

  const auto trt = Launched(Engine::kTrtllm, in);
  ExpectDocumented(trt, "trtllm");
  ASSERT_EQ(trt.size(), 1u);  // mpirun starts the ranks of both hosts
  EXPECT_EQ(trt[0].launcher, "mpirun -np 8 --host $NODE0:4,$NODE1:4 trtllm-llmapi-launch");
  EXPECT_EQ(trt[0].program, "trtllm-serve");

  const auto dynamo = Launched(Engine::kDynamo, in);
  ExpectDocumented(dynamo, "dynamo");
  int workers = 0;
  for (const ScriptCommand& c : dynamo) workers += c.program == "python -m dynamo.vllm";
  EXPECT_EQ(workers, 2);
}

TEST(MultiHostLaunch, ARankLargerThanAHostRunsOnRay) {
  // tp8 on trays of 4: one vLLM rank spans two hosts, which only a Ray cluster joins.
  const auto vllm = Launched(Engine::kVllm, TrayInputs("tp8", 4));
  ExpectDocumented(vllm, "vllm tp8");
  ASSERT_EQ(vllm.size(), 3u);
  EXPECT_EQ(vllm[0].program, "ray start");
  EXPECT_NE(FlagValue(vllm[0], "--head"), "(absent)");
  EXPECT_EQ(vllm[1].program, "vllm serve");
  EXPECT_EQ(FlagValue(vllm[1], "--distributed-executor-backend"), "ray");
  EXPECT_EQ(vllm[2].program, "ray start");
  EXPECT_TRUE(FlagValue(vllm[2], "--address").starts_with("$NODE0:"));
}

TEST(MultiHostLaunch, AWorkerWithinAHostNeedsNoMultiNodeFlags) {
  // The same dp8ep8 on an 8-GPU HGX node is one command, as before.
  const auto sglang = Launched(Engine::kSglang, TrayInputs("dp8ep8", 8));
  ASSERT_EQ(sglang.size(), 1u);
  EXPECT_EQ(FlagValue(sglang[0], "--nnodes"), "(absent)");
}

TEST(MultiHostLaunch, DisaggregatedWorkersOnTrays) {
  // 1 tp4 prefill worker (one tray) and a dp8ep8 decode worker over trays 1 and 2.
  LaunchInputs in = TrayInputs("dp8ep8", 4);
  in.prefill_pool = PoolLaunch{ParseLayout("tp4").value(), 1, 8, 8192, 0.5};
  std::string script;
  const auto sglang = Launched(Engine::kSglang, in, &script);
  ExpectDocumented(sglang, "sglang disaggregated");
  std::vector<ScriptCommand> decode;
  for (const ScriptCommand& c : sglang) {
    if (FlagValue(c, "--disaggregation-mode") == "decode") decode.push_back(c);
  }
  ASSERT_EQ(decode.size(), 2u) << script;
  EXPECT_EQ(FlagValue(decode[0], "--dist-init-addr").substr(0, 7), "$NODE1:");
  EXPECT_EQ(FlagValue(decode[1], "--node-rank"), "1");
  EXPECT_NE(script.find("if [ \"$NODE_RANK\" = 2 ]"), std::string::npos);
}

TEST(MultiHostLaunch, AWorkerThatCannotFillWholeHostsIsAnError) {
  auto config = MakeLaunchConfig(Engine::kSglang, TrayInputs("tp6", 4));
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("hosts of 4 GPUs"), std::string::npos);
}

TEST(EngineSwitches, DeepEpExactlyWhenPredicted) {
  LaunchInputs in = TrayInputs("dp8ep8", 8);
  // No EP kernels assumed: no DeepEP anywhere.
  for (Engine e : {Engine::kVllm, Engine::kSglang, Engine::kTrtllm, Engine::kDynamo}) {
    auto c = MakeLaunchConfig(e, in).value();
    EXPECT_EQ(c.files[0].text.find("deepep"), std::string::npos) << EngineName(e);
    EXPECT_EQ(c.files[0].text.find("DeepEP"), std::string::npos) << EngineName(e);
  }
  // Normal kernels for prompts, low-latency for decode steps: SGLang's auto mode is exactly
  // that; vLLM runs one backend per server, the decode steps' (with a note).
  in.pool.prefill_ep = EpKernels::kDeepEpNormal;
  in.pool.decode_ep = EpKernels::kDeepEpLowLatency;
  const auto sglang = Launched(Engine::kSglang, in);
  ExpectDocumented(sglang, "sglang deepep");
  EXPECT_EQ(FlagValue(sglang[0], "--moe-a2a-backend"), "deepep");
  EXPECT_EQ(FlagValue(sglang[0], "--deepep-mode"), "auto");
  std::string script;
  const auto vllm = Launched(Engine::kVllm, in, &script);
  EXPECT_EQ(vllm[0].env.at("VLLM_ALL2ALL_BACKEND"), "deepep_low_latency");
  EXPECT_NE(script.find("one all-to-all backend per server"), std::string::npos);
  // Normal kernels in both phases.
  in.pool.decode_ep = EpKernels::kDeepEpNormal;
  EXPECT_EQ(FlagValue(Launched(Engine::kSglang, in)[0], "--deepep-mode"), "normal");
  EXPECT_EQ(Launched(Engine::kVllm, in)[0].env.at("VLLM_ALL2ALL_BACKEND"),
            "deepep_high_throughput");
  // TensorRT-LLM 1.0 has no DeepEP switch: a note, not a made-up flag.
  auto trt = MakeLaunchConfig(Engine::kTrtllm, in).value();
  EXPECT_NE(trt.files[0].text.find("no switch for it"), std::string::npos);
}

TEST(EngineSwitches, TwoBatchOverlapAndCudaGraphs) {
  LaunchInputs in = TrayInputs("dp8ep8", 8);
  in.pool.two_batch_overlap = true;
  in.pool.cuda_graph_max_batch = 160;
  const auto sglang = Launched(Engine::kSglang, in);
  EXPECT_NE(FlagValue(sglang[0], "--enable-two-batch-overlap"), "(absent)");
  EXPECT_EQ(FlagValue(sglang[0], "--cuda-graph-max-bs"), "160");
  std::string script;
  const auto vllm = Launched(Engine::kVllm, in, &script);
  EXPECT_EQ(FlagValue(vllm[0], "--cuda-graph-sizes"), "160");
  EXPECT_NE(script.find("assumed two-batch overlap; vLLM 0.10.1 has no switch"), std::string::npos);
  auto trt = MakeLaunchConfig(Engine::kTrtllm, in).value();
  EXPECT_NE(trt.files[1].text.find("cuda_graph_config:\n  enable_padding: true\n  "
                                   "max_batch_size: 160\n"),
            std::string::npos);
  // Nothing the prediction did not assume.
  in.pool.two_batch_overlap = false;
  in.pool.cuda_graph_max_batch = 0;
  const auto plain = Launched(Engine::kSglang, in);
  EXPECT_EQ(FlagValue(plain[0], "--enable-two-batch-overlap"), "(absent)");
  EXPECT_EQ(FlagValue(plain[0], "--cuda-graph-max-bs"), "(absent)");
}

TEST(EngineSwitches, SpeculativeDecodingAsPredicted) {
  LaunchInputs in = TrayInputs("dp8ep8", 8);
  in.model = "deepseek-ai/DeepSeek-R1";
  in.architecture = "DeepseekV3ForCausalLM";
  in.pool.speculative = {SpeculativeLaunch::Method::kMtp, 2, ""};
  std::string script;
  const auto vllm = Launched(Engine::kVllm, in, &script);
  ExpectDocumented(vllm, "vllm mtp");
  const std::string config = FlagValue(vllm[0], "--speculative-config");
  const auto j = nlohmann::json::parse(config.substr(1, config.size() - 2));
  EXPECT_EQ(j["method"], "deepseek_mtp");
  EXPECT_EQ(j["num_speculative_tokens"], 2);
  // SGLang runs DeepSeek's MTP module as EAGLE/NextN: k steps of top-1, k + 1 tokens verified.
  const auto sglang = Launched(Engine::kSglang, in);
  ExpectDocumented(sglang, "sglang mtp");
  EXPECT_EQ(FlagValue(sglang[0], "--speculative-algorithm"), "EAGLE");
  EXPECT_EQ(FlagValue(sglang[0], "--speculative-num-steps"), "2");
  EXPECT_EQ(FlagValue(sglang[0], "--speculative-eagle-topk"), "1");
  EXPECT_EQ(FlagValue(sglang[0], "--speculative-num-draft-tokens"), "3");
  auto trt = MakeLaunchConfig(Engine::kTrtllm, in).value();
  EXPECT_NE(trt.files[1].text.find("speculative_config:\n  decoding_type: MTP\n  "
                                   "num_nextn_predict_layers: 2\n"),
            std::string::npos);
  for (const std::string& key : testing::YamlKeys(trt.files[1].text)) {
    EXPECT_TRUE(testing::kTrtllmYamlKeys.contains(key)) << key;
  }
  // Another architecture's MTP: no documented vLLM switch at 0.10.1, a comment.
  in.architecture = "Glm4MoeForCausalLM";
  const std::string glm = MakeLaunchConfig(Engine::kVllm, in).value().files[0].text;
  EXPECT_EQ(glm.find("--speculative-config"), std::string::npos);
  EXPECT_NE(glm.find("documents no switch for it"), std::string::npos);
  // An EAGLE head: its location from $EAGLE_MODEL, which the script requires.
  in.pool.speculative = {SpeculativeLaunch::Method::kEagle, 3, ""};
  const auto eagle = Launched(Engine::kSglang, in, &script);
  EXPECT_EQ(FlagValue(eagle[0], "--speculative-draft-model-path"), "$EAGLE_MODEL");
  EXPECT_NE(script.find("EAGLE_MODEL=${EAGLE_MODEL:?"), std::string::npos);
  // A draft model: vLLM loads it by its repository.
  in.pool.speculative = {SpeculativeLaunch::Method::kDraftModel, 4, "meta-llama/Llama-3.2-1B"};
  const std::string draft = FlagValue(Launched(Engine::kVllm, in)[0], "--speculative-config");
  const auto d = nlohmann::json::parse(draft.substr(1, draft.size() - 2));
  EXPECT_EQ(d["model"], "meta-llama/Llama-3.2-1B");
  EXPECT_EQ(d["num_speculative_tokens"], 4);
}

}  // namespace
}  // namespace shardwise::emit::multi_host
