// Aggregated launch configs against the engines' documented flags (engine_flags.h, with the
// documentation and versions they come from).
#include "shardwise/emit/launch_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "engine_flags.h"

namespace shardwise::emit {
namespace {

using testing::Commands;
using testing::DocumentedFlags;

LaunchInputs Inputs(const std::string& layout, bool moe) {
  LaunchInputs in;
  in.model = moe ? "deepseek-ai/DeepSeek-V3" : "meta-llama/Llama-3.1-70B";
  in.pool.layout = ParseLayout(layout).value();
  in.moe = moe;
  in.pool.max_num_seqs = 128;
  in.pool.max_batched_tokens = 8192;
  in.max_model_len = 1280;
  in.weight_dtype = Dtype::kFp8;
  in.kv_dtype = Dtype::kFp8;
  return in;
}

std::string Script(Engine e, const LaunchInputs& in) {
  auto c = MakeLaunchConfig(e, in);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? c.value().files[0].text : "";
}

TEST(LaunchConfig, EveryEmittedFlagIsDocumented) {
  for (const char* layout : {"tp8", "tp2pp4", "dp2tp4", "dp8ep8", "tp4ep4dp2", "tp8pp2"}) {
    const bool moe = std::string(layout).find("ep") != std::string::npos;
    const LaunchInputs in = Inputs(layout, moe);
    for (Engine engine : {Engine::kVllm, Engine::kSglang, Engine::kTrtllm, Engine::kDynamo}) {
      auto config = MakeLaunchConfig(engine, in);
      ASSERT_TRUE(config.ok()) << config.status().message();
      ASSERT_EQ(config.value().files.size(), LaunchFileNames(engine, false).size());
      for (const testing::ScriptCommand& c : Commands(config.value().files[0].text)) {
        const std::set<std::string> documented = DocumentedFlags(c.program);
        EXPECT_FALSE(documented.empty()) << layout << ": unknown program " << c.program;
        EXPECT_TRUE(c.env.empty()) << layout << ": one instance needs no environment";
        for (const auto& [flag, value] : c.flags) {
          EXPECT_TRUE(documented.contains(flag)) << c.program << " " << layout << ": " << flag;
          if (flag == "--kv-cache-dtype") {
            EXPECT_TRUE(
                (engine == Engine::kSglang ? testing::kSglangKvDtypes : testing::kVllmKvDtypes)
                    .contains(value))
                << value;
          }
        }
      }
    }
    auto trt = MakeLaunchConfig(Engine::kTrtllm, in);
    ASSERT_TRUE(trt.ok());
    for (const std::string& key : testing::YamlKeys(trt.value().files[1].text)) {
      EXPECT_TRUE(testing::kTrtllmYamlKeys.contains(key)) << "trtllm yaml: " << key;
    }
  }
}

bool Has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

TEST(LaunchConfig, DenseTensorAndPipelineParallel) {
  const std::string vllm = Script(Engine::kVllm, Inputs("tp2pp4", false));
  EXPECT_TRUE(Has(vllm, "vllm serve meta-llama/Llama-3.1-70B"));
  EXPECT_TRUE(Has(vllm, "--tensor-parallel-size 2"));
  EXPECT_TRUE(Has(vllm, "--pipeline-parallel-size 4"));
  EXPECT_TRUE(Has(vllm, "--max-num-seqs 128"));
  EXPECT_TRUE(Has(vllm, "--kv-cache-dtype fp8"));
  EXPECT_TRUE(Has(vllm, "--quantization fp8"));
  EXPECT_TRUE(Has(vllm, "--gpu-memory-utilization 0.9"));
  EXPECT_FALSE(Has(vllm, "--enable-expert-parallel"));  // dense
  const std::string trt = Script(Engine::kTrtllm, Inputs("tp2pp4", false));
  EXPECT_TRUE(Has(trt, "--tp_size 2"));
  EXPECT_TRUE(Has(trt, "--pp_size 4"));
  EXPECT_TRUE(Has(trt, "--max_batch_size 128"));
}

TEST(LaunchConfig, DataParallelAttentionWithWideExperts) {
  // SGLang's DeepSeek-V3 recipe: "--tp 8 --dp 8 --enable-dp-attention" runs attention DP over
  // the 8 GPUs and the experts over all 8: our dp8ep8.
  const std::string sglang = Script(Engine::kSglang, Inputs("dp8ep8", true));
  EXPECT_TRUE(Has(sglang, "--tp-size 8"));
  EXPECT_TRUE(Has(sglang, "--dp-size 8"));
  EXPECT_TRUE(Has(sglang, "--enable-dp-attention"));
  EXPECT_TRUE(Has(sglang, "--ep-size 8"));
  EXPECT_TRUE(Has(sglang, "--kv-cache-dtype fp8_e4m3"));
  // TensorRT-LLM: tp_size 8 with enable_attention_dp in the YAML, ep_size 8.
  auto trt = MakeLaunchConfig(Engine::kTrtllm, Inputs("dp8ep8", true)).value();
  EXPECT_TRUE(Has(trt.files[0].text, "--tp_size 8"));
  EXPECT_TRUE(Has(trt.files[0].text, "--ep_size 8"));
  EXPECT_TRUE(Has(trt.files[1].text, "enable_attention_dp: true"));
  // vLLM: DP 8 with expert parallelism (its EP size is TP x DP = 8).
  const std::string vllm = Script(Engine::kVllm, Inputs("dp8ep8", true));
  EXPECT_TRUE(Has(vllm, "--data-parallel-size 8"));
  EXPECT_TRUE(Has(vllm, "--enable-expert-parallel"));
  EXPECT_FALSE(Has(vllm, "plan used EP"));
}

TEST(LaunchConfig, AttentionDpBatchLimitsPerEngine) {
  // The instance runs 128 sequences over 8 attention-DP ranks, 8192 prompt tokens per rank per
  // iteration. vLLM runs each DP rank as its own engine core with its own --max-num-seqs
  // ("Data Parallel Deployment"): 128 / 8 = 16. TensorRT-LLM's max_batch_size holds per
  // attention-DP rank: 16; max_num_tokens per rank: 8192. SGLang divides --max-running-requests
  // and --chunked-prefill-size by --dp-size under DP attention, so it takes the instance's: 128
  // and 8 x 8192 = 65536.
  const LaunchInputs in = Inputs("dp8ep8", true);
  const std::string vllm = Script(Engine::kVllm, in);
  EXPECT_TRUE(Has(vllm, "--max-num-seqs 16 "));
  EXPECT_TRUE(Has(vllm, "--max-num-batched-tokens 8192 "));
  const std::string trt = Script(Engine::kTrtllm, in);
  EXPECT_TRUE(Has(trt, "--max_batch_size 16 "));
  EXPECT_TRUE(Has(trt, "--max_num_tokens 8192 "));
  const std::string sglang = Script(Engine::kSglang, in);
  EXPECT_TRUE(Has(sglang, "--max-running-requests 128 "));
  EXPECT_TRUE(Has(sglang, "--chunked-prefill-size 65536 "));
  // Without attention DP every engine takes the instance's limits as they are.
  const std::string tp = Script(Engine::kVllm, Inputs("tp4ep4dp2", true));
  EXPECT_TRUE(Has(tp, "--max-num-seqs 128 "));
}

TEST(LaunchConfig, WhatAnEngineCannotRunIsAnError) {
  EXPECT_FALSE(MakeLaunchConfig(Engine::kVllm, Inputs("tp4cp2", false)).ok());
  EXPECT_FALSE(ParseEngine("vlm").ok());
  EXPECT_NE(ParseEngine("vlm").status().message().find("did you mean 'vllm'"), std::string::npos);
}

TEST(LaunchConfig, FourBitWeightsNeedAQuantisedCheckpoint) {
  LaunchInputs in = Inputs("tp4", false);
  in.weight_dtype = Dtype::kInt4;
  const std::string vllm = Script(Engine::kVllm, in);
  EXPECT_FALSE(Has(vllm, "--quantization"));  // the engine reads it from the checkpoint
  EXPECT_TRUE(Has(vllm, "already quantised to int4"));
}

TEST(LaunchConfig, CatalogModelsMapToTheirRepositories) {
  // data/models/SOURCES.md.
  EXPECT_EQ(HuggingFaceRepo("deepseek-v3"), "deepseek-ai/DeepSeek-V3");
  EXPECT_EQ(HuggingFaceRepo("llama-3.1-8b"), "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(HuggingFaceRepo("my-model"), "");
}

TEST(LaunchConfig, EveryPublishedCatalogModelHasItsRepository) {
  // The table of data/models/SOURCES.md (| catalog | repository | ...) is the independent record
  // of where each catalog config.json came from: every row's repository is what --emit loads.
  std::ifstream in(std::string(SHARDWISE_SOURCE_DIR) + "/data/models/SOURCES.md");
  ASSERT_TRUE(in.good());
  int rows = 0;
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("| ") || line.starts_with("| catalog") || line.starts_with("|--")) {
      continue;
    }
    const size_t a = line.find(" | ");
    const size_t b = line.find(" | ", a + 3);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string name = line.substr(2, a - 2);
    const std::string repo = line.substr(a + 3, b - a - 3);
    if (repo.find('/') == std::string::npos) continue;  // not a Hugging Face repository
    EXPECT_EQ(HuggingFaceRepo(name), repo) << name;
    ++rows;
  }
  EXPECT_GE(rows, 24);
}

}  // namespace
}  // namespace shardwise::emit
