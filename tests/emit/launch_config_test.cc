// Launch configs against the engines' documented flags. Each list below is written from the
// engine's documentation for the stated version, not from the emitter:
// - vLLM 0.10.1, "Engine Arguments" (docs.vllm.ai/en/v0.10.1/configuration/engine_args.html).
// - SGLang 0.5.0, "Server Arguments" (docs.sglang.ai/backend/server_arguments.html).
// - TensorRT-LLM 1.0, "trtllm-serve" command reference and the LLM API options
//   (nvidia.github.io/TensorRT-LLM/commands/trtllm-serve).
// - NVIDIA Dynamo 0.4.0, "Running vLLM with Dynamo" (dynamo.frontend, dynamo.vllm).
#include "shardwise/emit/launch_config.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

namespace shardwise::emit {
namespace {

const std::set<std::string> kVllmFlags = {"--tensor-parallel-size",   "--pipeline-parallel-size",
                                          "--data-parallel-size",     "--data-parallel-size-local",
                                          "--data-parallel-address",  "--enable-expert-parallel",
                                          "--max-num-seqs",           "--max-num-batched-tokens",
                                          "--enable-chunked-prefill", "--max-model-len",
                                          "--kv-cache-dtype",         "--quantization",
                                          "--gpu-memory-utilization"};
const std::set<std::string> kVllmKvDtypes = {"auto", "fp8", "fp8_e4m3", "fp8_e5m2"};

const std::set<std::string> kSglangFlags = {"--model-path",
                                            "--tp-size",
                                            "--dp-size",
                                            "--enable-dp-attention",
                                            "--pp-size",
                                            "--ep-size",
                                            "--max-running-requests",
                                            "--chunked-prefill-size",
                                            "--context-length",
                                            "--kv-cache-dtype",
                                            "--quantization",
                                            "--mem-fraction-static",
                                            "--nnodes",
                                            "--node-rank",
                                            "--dist-init-addr"};
const std::set<std::string> kSglangKvDtypes = {"auto", "fp8_e5m2", "fp8_e4m3"};

const std::set<std::string> kTrtllmFlags = {"--backend",
                                            "--tp_size",
                                            "--pp_size",
                                            "--ep_size",
                                            "--max_batch_size",
                                            "--max_num_tokens",
                                            "--max_seq_len",
                                            "--kv_cache_free_gpu_memory_fraction",
                                            "--extra_llm_api_options"};
const std::set<std::string> kTrtllmYamlKeys = {"enable_attention_dp", "enable_chunked_prefill",
                                               "kv_cache_config", "dtype"};

std::set<std::string> DynamoFlags() {
  std::set<std::string> flags = kVllmFlags;  // dynamo.vllm takes vLLM's engine arguments
  // dynamo.frontend's --http-port; dynamo.vllm's --model and, for the prefill workers of a
  // disaggregated deployment, --is-prefill-worker (Dynamo 0.4.0 vLLM backend, "disagg.sh").
  flags.insert({"--http-port", "--model", "--is-prefill-worker"});
  return flags;
}

// Every "--flag" of the non-comment lines of `text`, with the word after it.
std::vector<std::pair<std::string, std::string>> Flags(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find('#') != std::string::npos && line.find_first_not_of(' ') == line.find('#')) {
      continue;
    }
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string s; words >> s;) w.push_back(s);
    for (size_t i = 0; i < w.size(); ++i) {
      if (w[i].rfind("--", 0) == 0) out.emplace_back(w[i], i + 1 < w.size() ? w[i + 1] : "");
    }
  }
  return out;
}

LaunchInputs Inputs(const std::string& layout, bool moe) {
  LaunchInputs in;
  in.model = moe ? "deepseek-ai/DeepSeek-V3" : "meta-llama/Llama-3.1-70B";
  in.layout = ParseLayout(layout).value();
  in.moe = moe;
  in.max_num_seqs = 128;
  in.max_batched_tokens = 8192;
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
    for (const auto& [flag, value] : Flags(Script(Engine::kVllm, in))) {
      EXPECT_TRUE(kVllmFlags.contains(flag)) << "vllm " << layout << ": " << flag;
      if (flag == "--kv-cache-dtype") EXPECT_TRUE(kVllmKvDtypes.contains(value)) << value;
    }
    for (const auto& [flag, value] : Flags(Script(Engine::kSglang, in))) {
      EXPECT_TRUE(kSglangFlags.contains(flag)) << "sglang " << layout << ": " << flag;
      if (flag == "--kv-cache-dtype") EXPECT_TRUE(kSglangKvDtypes.contains(value)) << value;
    }
    auto trt = MakeLaunchConfig(Engine::kTrtllm, in);
    ASSERT_TRUE(trt.ok());
    for (const auto& [flag, value] : Flags(trt.value().files[0].text)) {
      EXPECT_TRUE(kTrtllmFlags.contains(flag)) << "trtllm " << layout << ": " << flag;
    }
    ASSERT_EQ(trt.value().files.size(), 2u);
    std::istringstream yaml(trt.value().files[1].text);
    for (std::string line; std::getline(yaml, line);) {
      if (line.empty() || line[0] == '#') continue;
      const std::string key =
          line.substr(line.find_first_not_of(' '), line.find(':') - line.find_first_not_of(' '));
      EXPECT_TRUE(kTrtllmYamlKeys.contains(key)) << "trtllm yaml: " << key;
    }
    const std::set<std::string> dynamo = DynamoFlags();
    for (const auto& [flag, value] : Flags(Script(Engine::kDynamo, in))) {
      EXPECT_TRUE(dynamo.contains(flag)) << "dynamo " << layout << ": " << flag;
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

TEST(LaunchConfig, DynamoDisaggregatedWorkers) {
  LaunchInputs in = Inputs("tp8", false);
  in.prefill_layout = ParseLayout("tp2").value();
  in.prefill_max_num_seqs = 4;
  const std::string script = Script(Engine::kDynamo, in);
  for (const auto& [flag, value] : Flags(script)) {
    EXPECT_TRUE(DynamoFlags().contains(flag)) << "dynamo disagg: " << flag;
  }
  // Two workers: decode on tp8 in the background, then prefill on tp2 with its own batch.
  const size_t decode = script.find("python -m dynamo.vllm");
  const size_t prefill = script.find("python -m dynamo.vllm", decode + 1);
  ASSERT_NE(prefill, std::string::npos) << script;
  const std::string decode_cmd = script.substr(decode, prefill - decode);
  const std::string prefill_cmd = script.substr(prefill);
  EXPECT_TRUE(Has(decode_cmd, "--tensor-parallel-size 8"));
  EXPECT_TRUE(Has(decode_cmd, "--max-num-seqs 128 "));
  EXPECT_TRUE(Has(decode_cmd, " &\n"));
  EXPECT_FALSE(Has(decode_cmd, "--is-prefill-worker"));
  EXPECT_TRUE(Has(prefill_cmd, "--tensor-parallel-size 2"));
  EXPECT_TRUE(Has(prefill_cmd, "--max-num-seqs 4 "));
  EXPECT_TRUE(Has(prefill_cmd, "--is-prefill-worker"));
  // Without a prefill layout: one aggregated worker.
  const std::string one = Script(Engine::kDynamo, Inputs("tp8", false));
  EXPECT_EQ(one.find("python -m dynamo.vllm", one.find("python -m dynamo.vllm") + 1),
            std::string::npos);
  EXPECT_FALSE(Has(one, "--is-prefill-worker"));
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

}  // namespace
}  // namespace shardwise::emit
