// End-to-end: the launch configs of the two deployments users asked for match their plans
// (DeepSeek-R1 on two 8-GPU H200 nodes, Qwen3-235B-A22B on 8 GPUs of a GB200 NVL72 rack): the
// Hugging Face id (data/models/SOURCES.md), the model's own context length (its config.json),
// DeepEP exactly when the plan's step model exchanged tokens with DeepEP's kernels, and workers
// larger than a host started on each of its hosts. --hf-id and --max-model-len replace what is
// derived.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_binary.h"

namespace shardwise::testing::launch_cli {
namespace {

int64_t ContextOf(const std::string& catalog_name) {
  std::ifstream in(std::string(SHARDWISE_SOURCE_DIR) + "/data/models/" + catalog_name + ".json");
  return nlohmann::json::parse(in).at("max_position_embeddings").get<int64_t>();
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// SGLang's --deepep-mode for the kernels the plan timed each phase with ("Server Arguments":
// normal, low_latency, or auto = normal kernels for prefill, low-latency for decode); empty
// when neither phase used DeepEP. The plan's names: flat (the engine's own all-to-all),
// node-dedup (DeepEP normal), low-latency (DeepEP low-latency).
std::string DeepEpMode(const std::string& prefill, const std::string& decode) {
  const bool normal = prefill == "node-dedup" || decode == "node-dedup";
  const bool low_latency = prefill == "low-latency" || decode == "low-latency";
  if (normal && low_latency) return "auto";
  if (normal) return "normal";
  if (low_latency) return "low_latency";
  return "";
}

std::string ScriptOf(const nlohmann::json& plan) {
  return plan.at("launch").at("files").at(0).at("text").get<std::string>();
}

void ExpectDeepEpAsPlanned(const nlohmann::json& plan) {
  const nlohmann::json& top = plan.at("layouts").at(0);
  ASSERT_EQ(plan["launch"]["name"], top["layout"]);
  const std::string prefill = top["prefill"]["ep_algorithm"].is_string()
                                  ? top["prefill"]["ep_algorithm"].get<std::string>()
                                  : "flat";
  const std::string decode = top["decode"]["ep_algorithm"].is_string()
                                 ? top["decode"]["ep_algorithm"].get<std::string>()
                                 : "flat";
  const std::string mode = DeepEpMode(prefill, decode);
  const std::string script = ScriptOf(plan);
  if (mode.empty()) {
    EXPECT_EQ(script.find("deepep"), std::string::npos) << script;
  } else {
    EXPECT_NE(script.find("--moe-a2a-backend deepep"), std::string::npos) << script;
    EXPECT_NE(script.find("--deepep-mode " + mode + " "), std::string::npos)
        << prefill << "/" << decode << "\n"
        << script;
  }
}

TEST(LaunchMatchesPlan, DeepSeekR1OnTwoH200Nodes) {
  const RunResult r = RunShardwise(
      "plan --model deepseek-r1 --cluster dgx-h200 --nodes 2 --isl 2048 --osl 1024 "
      "--engine sglang --json --emit sglang --emit-deployment aggregated");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json plan = r.Json();
  EXPECT_EQ(plan["launch"]["model"], "deepseek-ai/DeepSeek-R1");
  const int64_t context = ContextOf("deepseek-r1");  // 163,840
  EXPECT_EQ(plan["launch"]["max_model_len"], context);
  const std::string script = ScriptOf(plan);
  EXPECT_NE(script.find("--context-length " + std::to_string(context) + " "), std::string::npos);
  ExpectDeepEpAsPlanned(plan);
  // A DGX H200 is one host of 8 GPUs: a worker of more starts on each of its hosts (ranks
  // 0..H-1), one of at most 8 as a single server.
  const int gpus = plan["layouts"][0]["gpus"].get<int>();
  const int hosts = (gpus + 7) / 8;
  if (hosts > 1) {
    EXPECT_EQ(Count(script, "--nnodes " + std::to_string(hosts) + " "), static_cast<size_t>(hosts));
    EXPECT_NE(script.find("--node-rank " + std::to_string(hosts - 1) + " "), std::string::npos);
  } else {
    EXPECT_EQ(script.find("--nnodes"), std::string::npos) << script;
    EXPECT_EQ(Count(script, "python -m sglang.launch_server"), 1u);
  }
}

TEST(LaunchMatchesPlan, Qwen3OnTwoGb200Trays) {
  const std::string plan_args =
      "plan --model qwen3-235b-a22b --cluster gb200-nvl72 --gpus 8 --engine sglang --json "
      "--emit-deployment aggregated --emit ";
  const RunResult r = RunShardwise(plan_args + "sglang");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json plan = r.Json();
  EXPECT_EQ(plan["launch"]["model"], "Qwen/Qwen3-235B-A22B");
  EXPECT_EQ(plan["launch"]["max_model_len"], ContextOf("qwen3-235b-a22b"));  // 40,960
  ExpectDeepEpAsPlanned(plan);
  // A GB200 compute tray is one host of 4 GPUs (NVIDIA's GB200 NVL72 page): an 8-GPU worker is
  // a two-host job.
  ASSERT_EQ(plan["layouts"][0]["gpus"], 8);
  const std::string script = ScriptOf(plan);
  EXPECT_EQ(Count(script, "--nnodes 2 "), 2u) << script;
  EXPECT_NE(script.find("--node-rank 1 "), std::string::npos);
  EXPECT_NE(script.find("NODE_RANK=${NODE_RANK:?"), std::string::npos);
  const RunResult trt = RunShardwise(plan_args + "trtllm");
  ASSERT_EQ(trt.exit_code, 0) << trt.err;
  EXPECT_NE(ScriptOf(trt.Json()).find("mpirun -np 8 --host $NODE0:4,$NODE1:4 trtllm-llmapi-launch"),
            std::string::npos);
}

TEST(LaunchOverrides, HfIdAndMaxModelLen) {
  const RunResult r = RunShardwise(
      "plan --model llama-3.1-8b --cluster dgx-h100 --emit vllm --hf-id my-org/Llama-8B-FP8 "
      "--max-model-len 8192");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("vllm serve my-org/Llama-8B-FP8 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--max-model-len 8192 "), std::string::npos);
}

TEST(LaunchOverrides, AsyncSchedulingAsTheProfilePredicted) {
  // vLLM 0.18's profile schedules one iteration ahead (data/engines/vllm-0.18.json); the launch
  // asks for it, since the flags follow vLLM 0.10.1, where it is off by default. 0.12's does not,
  // and neither does a prediction made with another engine's profile.
  const std::string plan = "plan --model llama-3.1-8b --cluster dgx-h100 --emit vllm ";
  const RunResult newest = RunShardwise(plan + "--engine vllm");
  ASSERT_EQ(newest.exit_code, 0) << newest.err;
  EXPECT_NE(newest.out.find(" --async-scheduling"), std::string::npos) << newest.out;
  for (const char* engine : {"vllm-0.12", "trtllm"}) {
    const RunResult other = RunShardwise(plan + "--engine " + engine);
    ASSERT_EQ(other.exit_code, 0) << other.err;
    EXPECT_EQ(other.out.find("async"), std::string::npos) << engine << ": " << other.out;
  }
  // vLLM runs it without pipeline parallelism only: the launch says what the prediction assumed
  // instead of passing the flag.
  const RunResult pp = RunShardwise(plan + "--engine vllm --layout tp4pp2");
  ASSERT_EQ(pp.exit_code, 0) << pp.err;
  EXPECT_EQ(pp.out.find("--async-scheduling"), std::string::npos) << pp.out;
  EXPECT_NE(pp.out.find("# The prediction assumed asynchronous scheduling"), std::string::npos)
      << pp.out;
  EXPECT_NE(pp.out.find("this launch has pipeline parallelism (pp 2), so it schedules "
                        "synchronously"),
            std::string::npos)
      << pp.out;
}

// --emit ENGINE models the engine launched unless --engine names another: the launch carried
// TensorRT-LLM's settings (whole prompts, 2,048 sequences) into a vLLM script that chunks them.
TEST(LaunchOverrides, TheEngineLaunchedIsTheEngineModelled) {
  const std::string plan = "plan --model llama-3.1-8b --cluster dgx-h100 --json --emit ";
  const RunResult vllm = RunShardwise(plan + "vllm");
  ASSERT_EQ(vllm.exit_code, 0) << vllm.err;
  const auto j = vllm.Json();
  EXPECT_TRUE(j["engine"].get<std::string>().starts_with("vllm-")) << j["engine"];
  EXPECT_TRUE(j["launch"]["pools"][0]["chunked_prefill"].get<bool>());
  EXPECT_NE(ScriptOf(j).find("--enable-chunked-prefill"), std::string::npos);
  // The script names the profile the prediction used beside the release its flags follow.
  EXPECT_NE(ScriptOf(j).find("; predicted with shardwise's " + j["engine"].get<std::string>() +
                             " profile."),
            std::string::npos)
      << ScriptOf(j);
  // recommend alike, and a named engine stays.
  const RunResult rec = RunShardwise(
      "recommend --model llama-3.1-8b --rate 5 --max-ttft-ms 1000 --max-tpot-ms 50 --json "
      "--emit sglang");
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const auto settings = rec.Json()["deployment"]["pools"][0]["engine_settings"];
  EXPECT_TRUE(settings["engine"].get<std::string>().starts_with("sglang-")) << settings.dump();
  const RunResult named = RunShardwise(plan + "vllm --engine trtllm");
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_TRUE(named.Json()["engine"].get<std::string>().starts_with("trtllm-"));
}

// The trtllm-cpp profile models TensorRT engines under TensorRT-LLM's C++ executor
// (data/engines/trtllm-cpp.json, emit_matches false); --emit trtllm writes trtllm-serve's PyTorch
// backend, so the launch says the runtime modelled is not the one it starts, and which is.
TEST(LaunchOverrides, ATensorRtEngineProfileSaysTheLaunchRunsAnotherRuntime) {
  const std::string plan = "plan --model llama-3.1-8b --cluster dgx-h100 --emit trtllm --engine ";
  const RunResult cpp = RunShardwise(plan + "trtllm-cpp");
  ASSERT_EQ(cpp.exit_code, 0) << cpp.err;
  EXPECT_NE(cpp.err.find("modelled with the trtllm-cpp profile, whose runtime the trtllm launch "
                         "written does not start"),
            std::string::npos)
      << cpp.err;
  EXPECT_NE(cpp.err.find("set --engine to trtllm to model the one launched"), std::string::npos)
      << cpp.err;
  const RunResult pytorch = RunShardwise(plan + "trtllm");
  ASSERT_EQ(pytorch.exit_code, 0) << pytorch.err;
  EXPECT_EQ(pytorch.err.find("modelled with the"), std::string::npos) << pytorch.err;
  // --json carries the note in the launch object, and none where the runtimes match.
  const auto notes = RunShardwise(plan + "trtllm-cpp --json").Json()["launch"]["notes"];
  ASSERT_EQ(notes.size(), 1u) << notes.dump();
  EXPECT_NE(notes[0].get<std::string>().find("trtllm-cpp profile, whose runtime"),
            std::string::npos);
  EXPECT_TRUE(RunShardwise(plan + "trtllm --json").Json()["launch"]["notes"].empty());
}

// TensorRT-LLM without chunked prefill refuses a prompt longer than max_num_tokens
// (tensorrt_llm/llmapi/llm.py): the script says so where the context is longer. The budget is
// the 1,024-token prompt + 1,500 (data/engines/trtllm-1.0.json), Llama 3.1's context 131,072.
TEST(LaunchOverrides, TrtllmSaysWhichPromptsItRefuses) {
  const RunResult r = RunShardwise("plan --model llama-3.1-8b --cluster dgx-h100 --emit trtllm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--max_num_tokens 2524 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("refuses a prompt longer than --max_num_tokens (2524), though "
                       "--max_seq_len is 131072"),
            std::string::npos)
      << r.out;
  // Replicas each need their own GPUs and port.
  const RunResult dp =
      RunShardwise("plan --model llama-3.1-8b --cluster dgx-h100 --emit trtllm --layout dp8");
  ASSERT_EQ(dp.exit_code, 0) << dp.err;
  EXPECT_NE(dp.out.find("# Start 8 of these servers (one per replica) behind a router, each on "
                        "its own GPU (CUDA_VISIBLE_DEVICES) and port (--port)."),
            std::string::npos)
      << dp.out;
}

// With spread prompts the budget is set for the longest the workload sends: a lognormal spread
// of CV 0.5 about 1,024 tokens reaches 4 x 1.5 x 1,024 = 6,144 (sim/serving.h), + 1,500. Set for
// the mean (2,524), prompts a little shorter than that waited behind the running decodes, and
// Llama-3.1-70B on tp4 at 7.5 requests/s showed a p99 TTFT of 3.3 s (0.56 s at the engine's own
// 8,192); the launch script runs what the simulation ran.
TEST(LaunchOverrides, TrtllmBudgetsForTheLongestPrompt) {
  const std::string spread =
      "--model llama-3.1-70b --cluster dgx-h100 --layout tp4 --engine trtllm --isl-dist lognormal "
      "--length-cv 0.5 ";
  const RunResult plan = RunShardwise("plan " + spread + "--emit trtllm");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("--max_num_tokens 7644 "), std::string::npos) << plan.out;
  const RunResult sim = RunShardwise("simulate " + spread + "--rate 7.5 --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const nlohmann::json j = sim.Json();
  EXPECT_EQ(
      j["deployment"]["pools"][0]["engine_settings"]["max_batched_tokens_per_rank"].get<int>(),
      7644)
      << j["deployment"].dump();
  EXPECT_LT(j["ttft_s"]["p99"].get<double>(), 1.0);
}

// A profile that claims context parallelism ranks a cp layout first for 8,192-token prompts,
// which no engine's launch flags run: --emit's refusal names the best ranked layout the engine
// does run, and that rank launches.
TEST(LaunchOverrides, AnUnlaunchableWinnerNamesTheRankThatLaunches) {
  // A profile (a copy of vLLM 0.18's) that claims context parallelism: plan ranks a cp layout
  // first for 8k prompts, which vllm serve's flags cannot launch. The built-in profile ranks none.
  nlohmann::json profile =
      nlohmann::json::parse(Slurp(SHARDWISE_SOURCE_DIR "/data/engines/vllm-0.18.json"));
  profile["fields"]["context_parallel"]["value"] = true;
  const std::string path = "/tmp/shardwise_cp_profile_" + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << profile.dump();
  const std::string base = "plan --model llama-3.1-8b --cluster dgx-h100 --isl 8192 --osl 256 ";
  const RunResult builtin = RunShardwise(base + "--engine vllm --json");
  ASSERT_EQ(builtin.exit_code, 0) << builtin.err;
  // (The array held in a variable: a range over a temporary's element dangles.)
  const nlohmann::json builtin_layouts = builtin.Json()["layouts"];
  ASSERT_FALSE(builtin_layouts.empty());
  for (const auto& l : builtin_layouts) EXPECT_EQ(l["cp"], 1) << l["layout"];
  const std::string plan = base + "--engine " + path + " ";
  const RunResult ranked = RunShardwise(plan + "--json");
  ASSERT_EQ(ranked.exit_code, 0) << ranked.err;
  const auto layouts = ranked.Json()["layouts"];
  ASSERT_NE(layouts[0]["layout"].get<std::string>().find("cp"), std::string::npos) << layouts;
  int rank = 0;
  for (size_t i = 0; i < layouts.size() && rank == 0; ++i) {
    if (layouts[i]["layout"].get<std::string>().find("cp") == std::string::npos) rank = i + 1;
  }
  ASSERT_GT(rank, 1);
  const std::string layout = layouts[rank - 1]["layout"];
  ExpectOneLineError(RunShardwise(plan + "--emit vllm"),
                     "--emit-rank " + std::to_string(rank) + " (" + layout +
                         ") is the best ranked layout vllm runs");
  // A refusal the layout did not cause names no rank (a bad --hf-id).
  const RunResult bad_id = RunShardwise(plan + "--emit vllm --emit-rank 1 --hf-id 'bad id!'");
  ExpectOneLineError(bad_id, "--hf-id");
  EXPECT_EQ(RunShardwise("plan --model llama-3.1-8b --emit vllm --hf-id 'bad id!'")
                .err.find("--emit-rank"),
            std::string::npos);
  const RunResult launched = RunShardwise(plan + "--emit vllm --emit-rank " + std::to_string(rank));
  ASSERT_EQ(launched.exit_code, 0) << launched.err;
  EXPECT_NE(launched.out.find("launch " + layout + " with vLLM"), std::string::npos)
      << launched.out;
  std::remove(path.c_str());
}

TEST(LaunchOverrides, BadInput) {
  const std::string plan = "plan --model llama-3.1-8b --cluster dgx-h100 --emit vllm ";
  ExpectOneLineError(RunShardwise(plan + "--hf-id 'my org/x'"), "--hf-id");
  ExpectOneLineError(RunShardwise(plan + "--hf-id 'x;rm -rf ~'"), "--hf-id");
  // The default request is 1,024 + 256 tokens; Llama 3.1's context is 131,072.
  ExpectOneLineError(RunShardwise(plan + "--max-model-len 1000"), "--max-model-len 1000 is below");
  ExpectOneLineError(RunShardwise(plan + "--max-model-len 200000"), "131072");
  ExpectOneLineError(RunShardwise(plan + "--max-model-len 0"), "--max-model-len");
  ExpectOneLineError(RunShardwise("plan --hf-id a/b"), "needs --emit");
  ExpectOneLineError(RunShardwise("plan --max-model-len 4096"), "needs --emit");
}

TEST(SimulateBenchmark, AiperfMatchesTheSimulatedWorkload) {
  const RunResult r = RunShardwise(
      "simulate --model llama-3.1-70b --cluster dgx-h100 --layout dp2tp4 --concurrency 64 "
      "--isl 2048 --osl 1024 --json --emit-benchmark aiperf");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = r.Json();
  const nlohmann::json& b = j.at("benchmark");
  const std::string text = b.at("text");
  for (const char* flag :
       {"aiperf profile", "--model meta-llama/Llama-3.1-70B ",
        "--synthetic-input-tokens-mean 2048 ", "--synthetic-input-tokens-stddev 0 ",
        "--output-tokens-mean 1024 ", "--concurrency 64 "}) {
    EXPECT_NE(text.find(flag), std::string::npos) << flag << "\n" << text;
  }
  // The warm-up and measured requests are the simulation's, for every replica: the steady
  // state's counts times replicas / simulated replicas.
  const nlohmann::json& steady = j.at("steady_state");
  const double scale =
      steady["replicas"].get<double>() / steady["simulated_replicas"].get<double>();
  const int64_t measured = std::llround(steady["measured_requests"].get<double>() * scale);
  const int64_t warmup = std::llround(steady["warmup_requests"].get<double>() * scale);
  EXPECT_EQ(b["requests"], measured);
  EXPECT_NE(text.find("--request-count " + std::to_string(measured) + " "), std::string::npos);
  EXPECT_NE(text.find("--warmup-request-count " + std::to_string(warmup) + " "), std::string::npos);
  // The steady state's figures are the simulation's.
  EXPECT_DOUBLE_EQ(b["steady_state"]["output_tokens_per_s"].get<double>(),
                   j["throughput"]["output_tokens_per_s"].get<double>());
  EXPECT_DOUBLE_EQ(b["steady_state"]["ttft_p99_ms"].get<double>(),
                   1e3 * j["ttft_s"]["p99"].get<double>());
  // AIPerf measures its requests from an idle server (its warm-up phase finishes first), so the
  // 64 clients' first burst counts. The default engine (trtllm-1.0) admits whole prompts within
  // max_num_tokens = 2,048 + 1,500 less the running decodes: one 2,048-token prompt an
  // iteration, so each replica's 32 clients enter one by one. The p99 of 1,000 requests is
  // about the 10th longest TTFT, and the 5 longest of each replica waited behind at least 27
  // prompts' iterations. By hand, one iteration with a 2,048-token prompt takes at least its
  // weight FLOPs at the H100's dense BF16 peak: 2 x 70.6e9 x 2,048 / (4 x 989.4e12) = 73 ms, so
  // p99 >= 20 x 73 ms (a margin below 27) = 1.46 s; the steady state's p99 stays near one
  // prefill (under 1 s).
  EXPECT_LT(b["steady_state"]["ttft_p99_ms"].get<double>(), 1000.0);
  EXPECT_GT(b["predicted"]["ttft_p99_ms"].get<double>(), 1460.0);
  EXPECT_NE(text.find("start from an idle server, the clients' first burst included"),
            std::string::npos)
      << text;
  // The run the tool measures is simulate's fixed run of as many requests (every one measured).
  const RunResult fixed = RunShardwise(
      "simulate --model llama-3.1-70b --cluster dgx-h100 --layout dp2tp4 --concurrency 64 "
      "--isl 2048 --osl 1024 --json --requests " +
      std::to_string(measured));
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  const nlohmann::json f = fixed.Json();
  EXPECT_DOUBLE_EQ(b["predicted"]["ttft_p99_ms"].get<double>(),
                   1e3 * f["ttft_s"]["p99"].get<double>());
  EXPECT_DOUBLE_EQ(b["predicted"]["tpot_p50_ms"].get<double>(),
                   1e3 * f["tpot_s"]["p50"].get<double>());
}

TEST(SimulateBenchmark, AFixedRunIsAlreadyTheRunTheToolMeasures) {
  // With --requests the simulation counts every request from the first burst, as the tool
  // does: its figures are the benchmark's, and there is no steady state beside them.
  const RunResult r =
      RunShardwise("simulate --concurrency 8 --requests 300 --json --emit-benchmark aiperf");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = r.Json();
  const nlohmann::json& b = j.at("benchmark");
  EXPECT_EQ(b["requests"], 300);
  EXPECT_TRUE(b["steady_state"].is_null());
  EXPECT_DOUBLE_EQ(b["predicted"]["ttft_p99_ms"].get<double>(),
                   1e3 * j["ttft_s"]["p99"].get<double>());
  EXPECT_EQ(b["text"].get<std::string>().find("steady state"), std::string::npos);
}

TEST(SimulateBenchmark, WrittenIntoADirectoryAndBadInput) {
  char name[] = "/tmp/shardwise_bench_XXXXXX";
  const std::string dir = mkdtemp(name) ? name : "/tmp";
  const std::string sim = "simulate --concurrency 8 --emit-benchmark vllm --emit-dir " + dir;
  const RunResult r = RunShardwise(sim);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + dir + "/bench_vllm.sh"), std::string::npos) << r.out;
  EXPECT_EQ(RunShardwise(sim).exit_code, 0);  // its own file is replaced
  std::ofstream(dir + "/bench_vllm.sh") << "#!/bin/sh\necho mine\n";
  ExpectOneLineError(RunShardwise(sim), "--force");
  ExpectOneLineError(RunShardwise("simulate --emit-benchmark aiperff"), "did you mean 'aiperf'");
  ExpectOneLineError(RunShardwise("simulate --emit-dir /tmp/x"), "needs --emit-benchmark");
  ExpectOneLineError(
      RunShardwise("simulate --isl-dist uniform --length-cv 0.9 --emit-benchmark vllm"),
      "--length-cv");
}

// plan's and recommend's --emit-benchmark check their own answer: the workload, load and
// predicted figures are the ones the command's JSON states for the deployment it chose.
// `isl_flag` and `osl_flag` are the tool's length options (its documentation's names).
void ExpectBenchmarkOfTheAnswer(const nlohmann::json& j, const nlohmann::json& point,
                                const std::string& isl_flag, const std::string& osl_flag) {
  const nlohmann::json& b = j.at("benchmark");
  const std::string text = b.at("text");
  EXPECT_NE(text.find(isl_flag + " " + j["isl"].dump() + " "), std::string::npos) << text;
  EXPECT_NE(text.find(osl_flag + " " + j["osl"].dump() + " "), std::string::npos);
  // The answer is a steady state; the benchmark's measured run starts from an idle server, so
  // its steady-state figures are the answer's and its predicted ones are of the run.
  const nlohmann::json& p = b.at("steady_state");
  // The run's decode steps are the steady state's but for the start, so its TPOT is close.
  EXPECT_EQ(b["predicted_basis"], "run");
  EXPECT_NEAR(b["predicted"]["tpot_p50_ms"].get<double>(), p["tpot_p50_ms"].get<double>(),
              0.25 * p["tpot_p50_ms"].get<double>());
  // plan, simulate --deployment and price --deployment agree within 1% (consistency_test.cc).
  EXPECT_NEAR(p["ttft_p99_ms"].get<double>(), 1e3 * point["ttft_s"]["p99"].get<double>(),
              0.01 * 1e3 * point["ttft_s"]["p99"].get<double>());
  EXPECT_NEAR(p["tpot_p99_ms"].get<double>(), 1e3 * point["tpot_s"]["p99"].get<double>(),
              0.01 * 1e3 * point["tpot_s"]["p99"].get<double>());
  // The throughput the bill is spread over: the rate offered where the deployment keeps up (the
  // window's served count carries its arrivals' Poisson noise), as the command bills it.
  EXPECT_NEAR(p["output_tokens_per_s"].get<double>(),
              point["billed_output_tokens_per_s"].get<double>(),
              0.01 * point["billed_output_tokens_per_s"].get<double>());
  if (!j["load_value"].is_null() && j.value("load", "") == "rate") {
    // An open loop that keeps up: the rate offered, and that rate times the output length, over
    // the run as over the steady state.
    for (const nlohmann::json* q : {&p, &b.at("predicted")}) {
      EXPECT_DOUBLE_EQ((*q)["requests_per_s"].get<double>(), j["load_value"].get<double>());
      EXPECT_DOUBLE_EQ((*q)["output_tokens_per_s"].get<double>(),
                       j["load_value"].get<double>() * j["osl"].get<double>());
    }
  }
}

TEST(PlanBenchmark, AiperfChecksTheWinnerAtItsLoad) {
  const RunResult r = RunShardwise(
      "plan --model llama-3.1-70b --cluster dgx-h100 --nodes 2 --rate 20 --max-ttft-ms 2000 "
      "--max-tpot-ms 50 --json --emit-benchmark aiperf");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = r.Json();
  const bool split = j["verdict"]["winner"] == "disaggregated";
  ExpectBenchmarkOfTheAnswer(j, split ? j["disaggregated"]["at_load"] : j["layouts"][0],
                             "--synthetic-input-tokens-mean", "--output-tokens-mean");
  // An open loop at the plan's rate (Poisson: vLLM's burstiness 1, AIPerf's request rate).
  EXPECT_NE(j["benchmark"]["text"].get<std::string>().find("--request-rate 20"), std::string::npos);
}

TEST(PlanBenchmark, ChecksTheRankedLayoutEmitted) {
  // With --emit-rank 2 the launch is the second layout, and so is the benchmark's prediction
  // (it once replayed the winner beside the second layout's launch).
  const RunResult r =
      RunShardwise("plan --top 3 --emit vllm --emit-rank 2 --emit-benchmark vllm --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = r.Json();
  ASSERT_GE(j["layouts"].size(), 2u);
  EXPECT_EQ(j["launch"]["name"], j["layouts"][1]["layout"]);
  const double p99_ms = 1e3 * j["layouts"][1]["tpot_s"]["p99"].get<double>();
  EXPECT_NEAR(j["benchmark"]["steady_state"]["tpot_p99_ms"].get<double>(), p99_ms, 0.01 * p99_ms);
}

TEST(RecommendBenchmark, SglangChecksTheRecommendation) {
  const RunResult r = RunShardwise(
      "recommend --model llama-3.1-8b --rate 10 --max-ttft-ms 500 --max-tpot-ms 30 --json "
      "--emit-benchmark sglang");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = r.Json();
  ExpectBenchmarkOfTheAnswer(j, j["recommendation"]["at_load"], "--random-input-len",
                             "--random-output-len");
  EXPECT_NE(j["benchmark"]["text"].get<std::string>().find("sglang.bench_serving"),
            std::string::npos);
}

TEST(PlanBenchmark, WrittenBesideTheLaunchAndBadInput) {
  char name[] = "/tmp/shardwise_plan_bench_XXXXXX";
  const std::string dir = mkdtemp(name) ? name : "/tmp";
  const RunResult r =
      RunShardwise("plan --top 1 --emit vllm --emit-benchmark vllm --emit-dir " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + dir + "/bench_vllm.sh"), std::string::npos) << r.out;
  // --emit-dir and --hf-id serve the benchmark alone too.
  EXPECT_EQ(RunShardwise("plan --top 1 --emit-benchmark vllm --hf-id my/model --emit-dir " + dir)
                .exit_code,
            0);
  ExpectOneLineError(RunShardwise("plan --top 1 --emit-benchmark aiperff"),
                     "did you mean 'aiperf'");
  ExpectOneLineError(RunShardwise("recommend --rate 5 --emit-benchmark nope"), "aiperf");
  std::ofstream(dir + "/bench_vllm.sh") << "#!/bin/sh\necho mine\n";
  ExpectOneLineError(RunShardwise("plan --top 1 --emit-benchmark vllm --emit-dir " + dir),
                     "--force");
}

}  // namespace
}  // namespace shardwise::testing::launch_cli
