// The flags, environment variables and YAML keys each engine documents, written here from the
// engines' documentation for the stated versions (not from the emitter), and a reader that
// splits a launch script into its commands so every flag is checked against the list of the
// program it is given to:
// - vLLM 0.10.1: "Engine Arguments" and "Serve arguments" (docs.vllm.ai/en/v0.10.1), the
//   NixlConnector usage guide (--kv-transfer-config, VLLM_NIXL_SIDE_CHANNEL_PORT, and the P/D
//   proxy tests/v1/kv_connector/nixl_integration/toy_proxy_server.py).
// - SGLang 0.5.0: "Server Arguments" and "PD Disaggregation" (docs.sglang.ai), sglang-router's
//   README (launch_router --pd-disaggregation --prefill URL BOOTSTRAP_PORT --decode URL).
// - TensorRT-LLM 1.0: "trtllm-serve" command reference, the LLM API options, and
//   "Disaggregated Serving" (trtllm-serve disaggregated -c CONFIG, context_servers and
//   generation_servers, cache_transceiver_config).
// - NVIDIA Dynamo 0.4.0: "Running vLLM with Dynamo" (dynamo.frontend, dynamo.vllm, disagg.sh).
#pragma once

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace shardwise::emit::testing {

inline const std::set<std::string> kVllmFlags = {
    "--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size",
    "--data-parallel-size-local", "--data-parallel-address", "--enable-expert-parallel",
    "--max-num-seqs", "--max-num-batched-tokens", "--enable-chunked-prefill", "--max-model-len",
    "--kv-cache-dtype", "--quantization", "--gpu-memory-utilization", "--cuda-graph-sizes",
    // SchedulerConfig.async_scheduling (experimental, off by default).
    "--async-scheduling",
    // Multi-node: "Data Parallel Deployment" (--headless, --data-parallel-start-rank,
    // --data-parallel-rpc-port) and "Distributed Inference and Serving" (Ray).
    "--headless", "--data-parallel-start-rank", "--data-parallel-rpc-port",
    "--distributed-executor-backend",
    // "Speculative Decoding".
    "--speculative-config",
    // Serve arguments and the KV connector (NixlConnector usage guide).
    "--port", "--kv-transfer-config"};
inline const std::set<std::string> kVllmKvDtypes = {"auto", "fp8", "fp8_e4m3", "fp8_e5m2"};
// toy_proxy_server.py's arguments.
inline const std::set<std::string> kVllmProxyFlags = {
    "--host",          "--port",         "--prefiller-hosts", "--prefiller-ports",
    "--decoder-hosts", "--decoder-ports"};

inline const std::set<std::string> kSglangFlags = {
    "--model-path", "--tp-size", "--dp-size", "--enable-dp-attention", "--pp-size", "--ep-size",
    "--max-running-requests", "--chunked-prefill-size", "--context-length", "--kv-cache-dtype",
    "--quantization", "--mem-fraction-static", "--nnodes", "--node-rank", "--dist-init-addr",
    "--host", "--port", "--cuda-graph-max-bs",
    // Expert parallelism: "--moe-a2a-backend deepep --deepep-mode normal|low_latency|auto", and
    // two-batch overlap.
    "--moe-a2a-backend", "--deepep-mode", "--enable-two-batch-overlap",
    // "Speculative Decoding" (EAGLE, and DeepSeek's MTP as NextN under it).
    "--speculative-algorithm", "--speculative-draft-model-path", "--speculative-num-steps",
    "--speculative-eagle-topk", "--speculative-num-draft-tokens",
    // PD Disaggregation.
    "--disaggregation-mode", "--disaggregation-transfer-backend", "--disaggregation-bootstrap-port",
    "--disaggregation-ib-device"};
inline const std::set<std::string> kSglangDeepEpModes = {"normal", "low_latency", "auto"};
inline const std::set<std::string> kSglangKvDtypes = {"auto", "fp8_e5m2", "fp8_e4m3"};
inline const std::set<std::string> kSglangModes = {"null", "prefill", "decode"};
inline const std::set<std::string> kSglangTransferBackends = {"mooncake", "nixl"};
inline const std::set<std::string> kSglangRouterFlags = {
    "--pd-disaggregation", "--prefill",      "--decode", "--host", "--port",
    "--prefill-policy",    "--decode-policy"};

inline const std::set<std::string> kTrtllmFlags = {"--backend",
                                                   "--tp_size",
                                                   "--pp_size",
                                                   "--ep_size",
                                                   "--max_batch_size",
                                                   "--max_num_tokens",
                                                   "--max_seq_len",
                                                   "--kv_cache_free_gpu_memory_fraction",
                                                   "--extra_llm_api_options",
                                                   "--host",
                                                   "--port"};
// LLM API options (extra_llm_api_options YAML), with the cache transceiver's.
inline const std::set<std::string> kTrtllmYamlKeys = {
    "enable_attention_dp", "enable_chunked_prefill", "kv_cache_config", "dtype",
    // Mixture-of-experts parallelism (moe_tp x moe_ep = tp_size).
    "moe_tensor_parallel_size", "moe_expert_parallel_size", "disable_overlap_scheduler",
    "cache_transceiver_config", "backend", "max_tokens_in_buffer",
    // CudaGraphConfig.
    "cuda_graph_config", "enable_padding", "max_batch_size",
    // MTPDecodingConfig.
    "speculative_config", "decoding_type", "num_nextn_predict_layers"};
inline const std::set<std::string> kTrtllmTransceiverBackends = {"DEFAULT", "UCX", "NIXL", "MPI"};
// The disaggregated server's config.
inline const std::set<std::string> kTrtllmDisaggKeys = {
    "hostname",           "port",          "backend", "context_servers",
    "generation_servers", "num_instances", "urls"};

// dynamo.vllm takes vLLM's engine arguments, --model and, for prefill workers,
// --is-prefill-worker; dynamo.frontend takes --http-port.
inline std::set<std::string> DynamoWorkerFlags() {
  std::set<std::string> flags = kVllmFlags;
  flags.insert({"--model", "--is-prefill-worker"});
  flags.erase("--headless");  // a 'vllm serve' option, not an engine argument
  return flags;
}
inline const std::set<std::string> kDynamoFrontendFlags = {"--http-port"};

// Environment variables a command may set: CUDA's device list, vLLM's NIXL handshake port and
// its MoE all-to-all backend (envs.py VLLM_ALL2ALL_BACKEND).
inline const std::set<std::string> kEnvironment = {
    "CUDA_VISIBLE_DEVICES", "VLLM_NIXL_SIDE_CHANNEL_PORT", "VLLM_ALL2ALL_BACKEND"};
inline const std::set<std::string> kVllmAll2AllBackends = {
    "naive", "pplx", "deepep_high_throughput", "deepep_low_latency"};
// Ray's CLI, which joins hosts for a vLLM rank spanning them.
inline const std::set<std::string> kRayStartFlags = {"--head", "--port", "--address", "--block"};

// One command of a script: its environment, program ("vllm serve", "python -m
// sglang.launch_server", ...) and "--flag value" pairs.
struct ScriptCommand {
  std::map<std::string, std::string> env;
  // "mpirun -np 8 --host a:4,b:4 trtllm-llmapi-launch" before the program, if any.
  std::string launcher;
  std::string program;
  std::vector<std::string> words;  // after the environment
  std::vector<std::pair<std::string, std::string>> flags;
  bool background = false;
};

// Every command of `script`: continued lines joined, comments and the shell's own lines (set,
// if, fi, wait, variable defaults) left out.
inline std::vector<ScriptCommand> Commands(const std::string& script) {
  std::vector<ScriptCommand> out;
  std::istringstream lines(script);
  std::string line, joined;
  while (std::getline(lines, line)) {
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] == '#') continue;
    if (!line.empty() && line.back() == '\\') {
      joined += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    joined += line;
    std::istringstream words(joined);
    joined.clear();
    std::vector<std::string> w;
    for (std::string s; words >> s;) w.push_back(s);
    if (w.empty() || w[0] == "set" || w[0] == "if" || w[0] == "fi" || w[0] == "wait" ||
        w[0].find("=${") != std::string::npos) {
      continue;
    }
    ScriptCommand c;
    size_t i = 0;
    for (; i < w.size() && w[i].find('=') != std::string::npos && w[i].rfind("--", 0) != 0; ++i) {
      c.env[w[i].substr(0, w[i].find('='))] = w[i].substr(w[i].find('=') + 1);
    }
    if (w.back() == "&") {
      c.background = true;
      w.pop_back();
    }
    if (i < w.size() && w[i] == "mpirun") {
      for (; i < w.size() && w[i] != "trtllm-llmapi-launch"; ++i) c.launcher += w[i] + " ";
      if (i < w.size()) c.launcher += w[i++];
    }
    c.words.assign(w.begin() + static_cast<long>(i), w.end());
    // The program: its words up to the first flag, less the model a server loads.
    for (size_t k = 0; k < c.words.size() && c.words[k].rfind("--", 0) != 0 && c.words[k] != "-c";
         ++k) {
      if ((c.program == "vllm serve" || c.program == "trtllm-serve") &&
          c.words[k] != "disaggregated") {
        break;
      }
      c.program += (c.program.empty() ? "" : " ") + c.words[k];
    }
    for (size_t k = 0; k < c.words.size(); ++k) {
      if (c.words[k].rfind("--", 0) == 0) {
        c.flags.emplace_back(c.words[k], k + 1 < c.words.size() ? c.words[k + 1] : "");
      }
    }
    out.push_back(c);
  }
  return out;
}

// The documented flags of `program`; empty for a program no engine documents.
inline std::set<std::string> DocumentedFlags(const std::string& program) {
  if (program == "vllm serve") return kVllmFlags;
  if (program == "python toy_proxy_server.py") return kVllmProxyFlags;
  if (program == "python -m sglang.launch_server") return kSglangFlags;
  if (program == "python -m sglang_router.launch_router") return kSglangRouterFlags;
  if (program == "trtllm-serve") return kTrtllmFlags;
  if (program == "trtllm-serve disaggregated") return {"--config_file"};  // and -c
  if (program == "python -m dynamo.frontend") return kDynamoFrontendFlags;
  if (program == "python -m dynamo.vllm") return DynamoWorkerFlags();
  if (program == "ray start") return kRayStartFlags;
  return {};
}

// The keys of a YAML file's lines (comments and list items left out).
inline std::vector<std::string> YamlKeys(const std::string& yaml) {
  std::vector<std::string> keys;
  std::istringstream lines(yaml);
  for (std::string line; std::getline(lines, line);) {
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] == '#' || line[first] == '-') continue;
    keys.push_back(line.substr(first, line.find(':') - first));
  }
  return keys;
}

}  // namespace shardwise::emit::testing
