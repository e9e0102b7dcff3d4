// Disaggregated (xPyD) launch configs: every command's flags against the engines' documented
// lists (engine_flags.h), and the workers, their GPUs, ports and connector, and the router that
// joins them, as each engine's P/D documentation sets them up.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine_flags.h"
#include "shardwise/emit/launch_config.h"

namespace shardwise::emit {
namespace {

using testing::Commands;
using testing::ScriptCommand;

// 2 prefill workers of `prefill` and 1 decode worker of `decode`, each prefill worker taking 8
// prompts of 1024 tokens per iteration, each decode worker 256 sequences.
LaunchInputs Inputs(const std::string& prefill, int64_t prefill_workers, const std::string& decode,
                    int64_t decode_workers, bool moe) {
  LaunchInputs in;
  in.model = moe ? "deepseek-ai/DeepSeek-V3" : "meta-llama/Llama-3.1-70B";
  in.moe = moe;
  in.prefill_pool = PoolLaunch{ParseLayout(prefill).value(), prefill_workers, 8, 8192, 0.5};
  in.pool = PoolLaunch{ParseLayout(decode).value(), decode_workers, 256, 8192, 0.8};
  in.max_model_len = 1280;
  in.weight_dtype = Dtype::kFp8;
  in.kv_dtype = Dtype::kFp8;
  return in;
}

LaunchConfig Config(Engine e, const LaunchInputs& in) {
  auto c = MakeLaunchConfig(e, in);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? c.value() : LaunchConfig{};
}

std::vector<ScriptCommand> Of(const std::vector<ScriptCommand>& all, const std::string& program) {
  std::vector<ScriptCommand> out;
  for (const ScriptCommand& c : all) {
    if (c.program == program) out.push_back(c);
  }
  return out;
}

std::string Value(const ScriptCommand& c, const std::string& flag) {
  for (const auto& [f, v] : c.flags) {
    if (f == flag) return v;
  }
  return "(absent)";
}

bool HasFlag(const ScriptCommand& c, const std::string& flag) {
  return Value(c, flag) != "(absent)";
}

// The words after `flag` up to the next flag ("--prefiller-ports 8100 8101" -> "8100 8101").
std::string Values(const ScriptCommand& c, const std::string& flag) {
  std::string out;
  for (size_t k = 0; k < c.words.size(); ++k) {
    if (c.words[k] != flag) continue;
    for (size_t j = k + 1; j < c.words.size() && c.words[j].rfind("--", 0) != 0; ++j) {
      out += (out.empty() ? "" : " ") + c.words[j];
    }
  }
  return out;
}

TEST(DisaggregatedLaunch, EveryEmittedFlagIsDocumented) {
  const std::vector<LaunchInputs> deployments = {
      Inputs("tp2", 2, "tp4", 1, false), Inputs("pp2", 2, "tp4", 1, false),
      Inputs("tp8", 1, "dp8ep8", 1, true),
      Inputs("tp8", 2, "dp16ep16", 1, true)};  // three nodes of 8 GPUs
  for (const LaunchInputs& in : deployments) {
    for (Engine engine : {Engine::kVllm, Engine::kSglang, Engine::kTrtllm, Engine::kDynamo}) {
      const LaunchConfig config = Config(engine, in);
      ASSERT_EQ(config.files.size(), LaunchFileNames(engine, true).size());
      const std::string what =
          std::string(EngineName(engine)) + " " + in.prefill_pool->layout.ToString();
      for (const ScriptCommand& c : Commands(config.files[0].text)) {
        const std::set<std::string> documented = testing::DocumentedFlags(c.program);
        EXPECT_FALSE(documented.empty()) << what << ": unknown program '" << c.program << "'";
        for (const auto& [name, value] : c.env) {
          EXPECT_TRUE(testing::kEnvironment.contains(name)) << what << ": " << name;
        }
        for (const auto& [flag, value] : c.flags) {
          EXPECT_TRUE(documented.contains(flag)) << what << " " << c.program << ": " << flag;
          if (flag == "--kv-transfer-config") {
            // A JSON object in single quotes: the NixlConnector, sending and receiving.
            const auto j = nlohmann::json::parse(value.substr(1, value.size() - 2));
            EXPECT_EQ(j["kv_connector"], "NixlConnector");
            EXPECT_TRUE((std::set<std::string>{"kv_producer", "kv_consumer", "kv_both"}.contains(
                j["kv_role"].get<std::string>())));
          }
          if (flag == "--disaggregation-mode") {
            EXPECT_TRUE(testing::kSglangModes.contains(value)) << value;
          }
          if (flag == "--disaggregation-transfer-backend") {
            EXPECT_TRUE(testing::kSglangTransferBackends.contains(value)) << value;
          }
        }
        if (c.program == "trtllm-serve disaggregated") {
          ASSERT_GE(c.words.size(), 4u);
          EXPECT_EQ(c.words[2], "-c");  // -c / --config_file
          EXPECT_EQ(c.words[3], config.files[1].name);
        }
      }
      if (engine != Engine::kTrtllm) continue;
      for (const std::string& key : testing::YamlKeys(config.files[1].text)) {
        EXPECT_TRUE(testing::kTrtllmDisaggKeys.contains(key)) << "disagg yaml: " << key;
      }
      for (size_t f = 2; f < 4; ++f) {
        for (const std::string& key : testing::YamlKeys(config.files[f].text)) {
          EXPECT_TRUE(testing::kTrtllmYamlKeys.contains(key)) << config.files[f].name << key;
        }
      }
    }
  }
}

TEST(DisaggregatedLaunch, VllmWorkersWithNixlAndTheProxy) {
  // 2 prefill workers of tp2 and 1 decode worker of tp4 fill one 8-GPU node: GPUs 0-1, 2-3,
  // then 4-7.
  const LaunchConfig config = Config(Engine::kVllm, Inputs("tp2", 2, "tp4", 1, false));
  const auto commands = Commands(config.files[0].text);
  const auto servers = Of(commands, "vllm serve");
  ASSERT_EQ(servers.size(), 3u) << config.files[0].text;
  EXPECT_EQ(servers[0].env.at("CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(servers[1].env.at("CUDA_VISIBLE_DEVICES"), "2,3");
  EXPECT_EQ(servers[2].env.at("CUDA_VISIBLE_DEVICES"), "4,5,6,7");
  // Each worker's NIXL handshake ports (one per rank from the base) do not overlap.
  EXPECT_EQ(servers[0].env.at("VLLM_NIXL_SIDE_CHANNEL_PORT"), "5600");
  EXPECT_EQ(servers[1].env.at("VLLM_NIXL_SIDE_CHANNEL_PORT"), "5602");
  EXPECT_EQ(servers[2].env.at("VLLM_NIXL_SIDE_CHANNEL_PORT"), "5604");
  for (const ScriptCommand& s : servers) {
    EXPECT_TRUE(s.background);
    EXPECT_EQ(s.words[2], "meta-llama/Llama-3.1-70B");
  }
  EXPECT_EQ(Value(servers[0], "--tensor-parallel-size"), "2");
  EXPECT_EQ(Value(servers[0], "--max-num-seqs"), "8");
  EXPECT_EQ(Value(servers[2], "--tensor-parallel-size"), "4");
  EXPECT_EQ(Value(servers[2], "--max-num-seqs"), "256");
  EXPECT_EQ(Value(servers[2], "--kv-cache-dtype"), "fp8");
  EXPECT_EQ(Value(servers[2], "--quantization"), "fp8");
  const auto proxy = Of(commands, "python toy_proxy_server.py");
  ASSERT_EQ(proxy.size(), 1u);
  EXPECT_EQ(Values(proxy[0], "--prefiller-hosts"), "localhost localhost");
  EXPECT_EQ(Values(proxy[0], "--prefiller-ports"),
            Value(servers[0], "--port") + " " + Value(servers[1], "--port"));
  EXPECT_EQ(Values(proxy[0], "--decoder-hosts"), "localhost");
  EXPECT_EQ(Values(proxy[0], "--decoder-ports"), Value(servers[2], "--port"));
}

TEST(DisaggregatedLaunch, SglangModesBootstrapPortsAndRouter) {
  const LaunchConfig config = Config(Engine::kSglang, Inputs("tp2", 2, "tp4", 1, false));
  const auto commands = Commands(config.files[0].text);
  const auto servers = Of(commands, "python -m sglang.launch_server");
  ASSERT_EQ(servers.size(), 3u);
  const auto router = Of(commands, "python -m sglang_router.launch_router");
  ASSERT_EQ(router.size(), 1u);
  EXPECT_TRUE(HasFlag(router[0], "--pd-disaggregation"));
  std::string prefill_targets, decode_targets;
  for (const ScriptCommand& s : servers) {
    EXPECT_EQ(Value(s, "--disaggregation-transfer-backend"), "mooncake");
    const std::string url = "http://localhost:" + Value(s, "--port");
    if (Value(s, "--disaggregation-mode") == "prefill") {
      EXPECT_EQ(Value(s, "--tp-size"), "2");
      EXPECT_EQ(Value(s, "--max-running-requests"), "8");
      prefill_targets += url + " " + Value(s, "--disaggregation-bootstrap-port") + ";";
    } else {
      EXPECT_EQ(Value(s, "--disaggregation-mode"), "decode");
      EXPECT_EQ(Value(s, "--tp-size"), "4");
      EXPECT_FALSE(HasFlag(s, "--disaggregation-bootstrap-port"));
      decode_targets += url + ";";
    }
  }
  // The router names each prefill server with its bootstrap port, each decode server alone.
  std::string routed_prefill, routed_decode;
  for (size_t k = 0; k < router[0].words.size(); ++k) {
    if (router[0].words[k] == "--prefill") {
      routed_prefill += router[0].words[k + 1] + " " + router[0].words[k + 2] + ";";
    }
    if (router[0].words[k] == "--decode") routed_decode += router[0].words[k + 1] + ";";
  }
  EXPECT_EQ(routed_prefill, prefill_targets);
  EXPECT_EQ(routed_decode, decode_targets);
  EXPECT_NE(prefill_targets.find(" 8998;"), std::string::npos);
  EXPECT_NE(prefill_targets.find(" 8999;"), std::string::npos);
}

TEST(DisaggregatedLaunch, TrtllmContextAndGenerationServers) {
  const LaunchConfig config = Config(Engine::kTrtllm, Inputs("tp2", 2, "tp4", 1, false));
  ASSERT_EQ(config.files.size(), 4u);
  const auto commands = Commands(config.files[0].text);
  const auto servers = Of(commands, "trtllm-serve");
  ASSERT_EQ(servers.size(), 3u);
  ASSERT_EQ(Of(commands, "trtllm-serve disaggregated").size(), 1u);
  // The disaggregated server's YAML lists the context and generation servers the script starts.
  const std::string& disagg = config.files[1].text;
  EXPECT_NE(disagg.find("context_servers:\n  num_instances: 2\n"), std::string::npos) << disagg;
  EXPECT_NE(disagg.find("generation_servers:\n  num_instances: 1\n"), std::string::npos);
  for (const ScriptCommand& s : servers) {
    const bool context = Value(s, "--extra_llm_api_options") == config.files[2].name;
    EXPECT_TRUE(context || Value(s, "--extra_llm_api_options") == config.files[3].name);
    EXPECT_EQ(Value(s, "--tp_size"), context ? "2" : "4");
    EXPECT_EQ(Value(s, "--max_batch_size"), context ? "8" : "256");
    EXPECT_EQ(Value(s, "--kv_cache_free_gpu_memory_fraction"), context ? "0.50" : "0.80");
    const std::string url = "\"localhost:" + Value(s, "--port") + "\"";
    const size_t listed = disagg.find(url);
    ASSERT_NE(listed, std::string::npos) << url;
    EXPECT_EQ(listed < disagg.find("generation_servers:"), context);
  }
  // Context servers run without the overlap scheduler; both send or take the KV over UCX.
  EXPECT_NE(config.files[2].text.find("disable_overlap_scheduler: true"), std::string::npos);
  EXPECT_EQ(config.files[3].text.find("disable_overlap_scheduler"), std::string::npos);
  for (size_t f = 2; f < 4; ++f) {
    EXPECT_NE(config.files[f].text.find("cache_transceiver_config:\n  backend: UCX\n"),
              std::string::npos);
    EXPECT_NE(config.files[f].text.find("kv_cache_config:\n  dtype: fp8"), std::string::npos);
  }
}

TEST(DisaggregatedLaunch, DynamoWorkerCountsAndLayouts) {
  const LaunchConfig config = Config(Engine::kDynamo, Inputs("tp2", 2, "tp4", 1, false));
  const auto commands = Commands(config.files[0].text);
  ASSERT_EQ(Of(commands, "python -m dynamo.frontend").size(), 1u);
  const auto workers = Of(commands, "python -m dynamo.vllm");
  ASSERT_EQ(workers.size(), 3u);
  int prefill = 0;
  for (const ScriptCommand& w : workers) {
    const bool is_prefill = HasFlag(w, "--is-prefill-worker");
    prefill += is_prefill;
    EXPECT_EQ(Value(w, "--tensor-parallel-size"), is_prefill ? "2" : "4");
    EXPECT_EQ(Value(w, "--max-num-seqs"), is_prefill ? "8" : "256");
    EXPECT_TRUE(w.background);
  }
  EXPECT_EQ(prefill, 2);
}

TEST(DisaggregatedLaunch, AttentionDpDecodePool) {
  // A tp8 prefill worker and a dp8ep8 decode worker (DeepSeek's decode shape at one node):
  // each engine's DP-attention and expert-parallel switches, as for an aggregated layout.
  const LaunchInputs in = Inputs("tp8", 1, "dp8ep8", 1, true);
  const auto sglang =
      Of(Commands(Config(Engine::kSglang, in).files[0].text), "python -m sglang.launch_server");
  ASSERT_EQ(sglang.size(), 2u);
  EXPECT_EQ(Value(sglang[1], "--disaggregation-mode"), "decode");
  EXPECT_EQ(Value(sglang[1], "--tp-size"), "8");
  EXPECT_EQ(Value(sglang[1], "--dp-size"), "8");
  EXPECT_TRUE(HasFlag(sglang[1], "--enable-dp-attention"));
  EXPECT_EQ(Value(sglang[1], "--ep-size"), "8");
  EXPECT_FALSE(HasFlag(sglang[0], "--enable-dp-attention"));
  const auto vllm = Of(Commands(Config(Engine::kVllm, in).files[0].text), "vllm serve");
  ASSERT_EQ(vllm.size(), 2u);
  EXPECT_EQ(Value(vllm[1], "--data-parallel-size"), "8");
  EXPECT_TRUE(HasFlag(vllm[1], "--enable-expert-parallel"));
  EXPECT_EQ(Value(vllm[1], "--max-num-seqs"), "32");  // 256 over 8 engine cores
  const LaunchConfig trt = Config(Engine::kTrtllm, in);
  EXPECT_NE(trt.files[3].text.find("enable_attention_dp: true"), std::string::npos);
  EXPECT_NE(trt.files[2].text.find("enable_attention_dp: false"), std::string::npos);
}

TEST(DisaggregatedLaunch, AcrossNodes) {
  // 2 tp8 prefill workers fill nodes 0 and 1; the dp16ep16 decode worker spans nodes 2 and 3.
  const LaunchConfig config = Config(Engine::kVllm, Inputs("tp8", 2, "dp16ep16", 1, true));
  const std::string& script = config.files[0].text;
  EXPECT_NE(script.find("NODE_RANK=${NODE_RANK:?"), std::string::npos) << script;
  EXPECT_NE(script.find("if [ \"$NODE_RANK\" = 1 ]"), std::string::npos);
  const auto commands = Commands(script);
  const auto servers = Of(commands, "vllm serve");
  // The decode worker starts on both of its nodes as vLLM's multi-node data-parallel
  // deployment: 8 DP ranks per node, the second node's headless from rank 8.
  ASSERT_EQ(servers.size(), 4u);
  EXPECT_EQ(servers[1].env.at("CUDA_VISIBLE_DEVICES"), "0,1,2,3,4,5,6,7");
  EXPECT_FALSE(servers[2].env.contains("CUDA_VISIBLE_DEVICES"));  // all of its nodes' GPUs
  EXPECT_EQ(Value(servers[2], "--data-parallel-size-local"), "8");
  EXPECT_EQ(Value(servers[3], "--data-parallel-start-rank"), "8");
  EXPECT_TRUE(HasFlag(servers[3], "--headless"));
  EXPECT_EQ(Value(servers[3], "--data-parallel-address"), "$NODE2");
  const auto proxy = Of(commands, "python toy_proxy_server.py");
  ASSERT_EQ(proxy.size(), 1u);
  EXPECT_EQ(Values(proxy[0], "--prefiller-hosts"), "$NODE0 $NODE1");
  EXPECT_EQ(Values(proxy[0], "--decoder-hosts"), "$NODE2");
  const std::string yaml =
      Config(Engine::kTrtllm, Inputs("tp8", 2, "dp16ep16", 1, true)).files[1].text;
  EXPECT_NE(yaml.find("\"node1:"), std::string::npos) << yaml;
}

TEST(DisaggregatedLaunch, WhatAnEngineCannotRunIsAnError) {
  EXPECT_FALSE(MakeLaunchConfig(Engine::kSglang, Inputs("tp4cp2", 1, "tp8", 1, false)).ok());
  EXPECT_FALSE(MakeLaunchConfig(Engine::kVllm, Inputs("tp4", 0, "tp8", 1, false)).ok());
}

}  // namespace
}  // namespace shardwise::emit
