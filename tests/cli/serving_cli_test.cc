// End-to-end: `simulate` and `price` as a user runs them, and their bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

TEST(SimulateCli, DefaultsRun) {
  const RunResult r = RunShardwise("simulate");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text : {"TTFT", "TPOT", "ITL", "goodput", "MFU", "per million output tokens"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text;
  }
}

TEST(SimulateCli, OneGpuTakesTheSingular) {
  const RunResult sim = RunShardwise(
      "simulate --model llama-3.1-8b --gpus 1 --layout tp1 --concurrency 1 --isl 128 --osl 16");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_NE(sim.out.find("closed loop, 1 client, ISL 128"), std::string::npos) << sim.out;
  EXPECT_NE(sim.out.find("on dgx-h100 (1 GPU), layout tp1 (1 replica of 1 GPU)"), std::string::npos)
      << sim.out;
  const RunResult explain = RunShardwise("explain --model llama-3.1-8b --gpus 1 --layout tp1");
  ASSERT_EQ(explain.exit_code, 0) << explain.err;
  EXPECT_NE(explain.out.find("layout tp1 (1 GPU: 1 replica of 1)"), std::string::npos)
      << explain.out;
}

TEST(SimulateCli, ClosedLoopReportsWhatBenchmarksPrint) {
  const RunResult r = RunShardwise(
      "simulate --model llama-3.1-8b --gpus 1 --layout tp1 --concurrency 16 --requests 160 "
      "--isl 512 --osl 64 --engine vllm --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  EXPECT_EQ(j["concurrency"], 16);
  EXPECT_EQ(j["engine"], "vllm-0.18");  // a bare engine name runs its newest profile
  // and the saved question names that version, so a replay runs it after a newer one ships.
  EXPECT_EQ(j["deployment"]["saved"]["serving"]["engine"], "vllm-0.18");
  for (const char* key : {"ttft_s", "tpot_s", "itl_s", "e2e_s"}) {
    for (const char* stat : {"mean", "p50", "p90", "p99"}) EXPECT_TRUE(j[key].contains(stat));
  }
  EXPECT_GT(j["throughput"]["output_tokens_per_s_per_gpu"].get<double>(), 0);
  EXPECT_GT(j["throughput"]["output_tokens_per_s_per_user"].get<double>(), 0);
  // Little's law for a closed loop: 16 clients = request rate x mean end-to-end latency.
  const double in_flight =
      j["throughput"]["requests_per_s"].get<double>() * j["e2e_s"]["mean"].get<double>();
  EXPECT_NEAR(in_flight, 16.0, 1.6);
  // A closed loop offers no rate; the lengths it was asked for are in the output.
  EXPECT_TRUE(j["load"]["offered_requests_per_s"].is_null());
  EXPECT_EQ(j["lengths"]["input_tokens_mean"], 512);
  EXPECT_EQ(j["lengths"]["output_distribution"], "fixed");
  EXPECT_TRUE(j["lengths"]["length_cv"].is_null());
}

TEST(SimulateCli, ClosedLoopSaysWhatItsNumbersDependOn) {
  const std::string base = "simulate --model llama-3.1-8b --gpus 1 --layout tp1 --engine vllm ";
  // Fixed lengths: the lockstep note. 12 clients for 8 batch slots (1 replica x 1 attention
  // rank x --max-batch 8): 4 wait.
  const RunResult fixed = RunShardwise(base + "--concurrency 12 --max-batch 8");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_NE(fixed.out.find("lockstep"), std::string::npos) << fixed.out;
  EXPECT_NE(fixed.out.find("12 clients for at most 8 batch slots"), std::string::npos) << fixed.out;
  EXPECT_NE(fixed.out.find("the other 4 wait"), std::string::npos) << fixed.out;
  // A steady state says what a benchmark tool measures instead; a fixed count is that run.
  EXPECT_NE(fixed.out.find("the clients' first burst included: --requests N"), std::string::npos)
      << fixed.out;
  const RunResult counted = RunShardwise(base + "--concurrency 12 --requests 200");
  ASSERT_EQ(counted.exit_code, 0) << counted.err;
  EXPECT_EQ(counted.out.find("first burst"), std::string::npos) << counted.out;
  // Spread output lengths: no lockstep note, the spread in the header and the JSON; no queue
  // note when the clients fit.
  const RunResult spread =
      RunShardwise(base + "--concurrency 8 --osl-dist uniform --length-cv 0.01");
  ASSERT_EQ(spread.exit_code, 0) << spread.err;
  EXPECT_EQ(spread.out.find("lockstep"), std::string::npos) << spread.out;
  EXPECT_EQ(spread.out.find("queue"), std::string::npos) << spread.out;
  EXPECT_NE(spread.out.find("(fixed / uniform, CV 0.01)"), std::string::npos) << spread.out;
  const RunResult json =
      RunShardwise(base + "--concurrency 8 --osl-dist uniform --length-cv 0.01 --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_DOUBLE_EQ(json.Json()["lengths"]["length_cv"].get<double>(), 0.01);
}

TEST(SimulateCli, SaysWhenTheLayoutLeavesGpusIdle) {
  // tp4 is 4 GPUs (dp x pp x tp x cp); 8 were given: 2 copies would use them all.
  const RunResult idle = RunShardwise("simulate --gpus 8 --layout tp4 --rate 1 --requests 20");
  ASSERT_EQ(idle.exit_code, 0) << idle.err;
  EXPECT_NE(idle.err.find("shardwise: note: layout tp4 uses 4 of the cluster's 8 GPUs; --layout "
                          "dp2tp4 would use them all"),
            std::string::npos)
      << idle.err;
  const RunResult all = RunShardwise("simulate --gpus 8 --layout dp2tp4 --rate 1 --requests 20");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(all.err.find("of the cluster's"), std::string::npos) << all.err;
}

TEST(SimulateCli, ClosedLoopBandCoversBothClientPhases) {
  // Fixed lengths run in lockstep; the same loop out of phase is the run with output lengths
  // spread by 1% (`--osl-dist uniform --length-cv 0.01`, same clients, requests and seed).
  const std::string loop =
      "simulate --model llama-3.1-70b --gpus 8 --layout tp8 --engine vllm --dtype fp8 "
      "--isl 1024 --osl 1024 --concurrency 16 --requests 160 --json";
  const RunResult fixed = RunShardwise(loop);
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  const auto j = fixed.Json();
  const RunResult spread = RunShardwise(loop + " --osl-dist uniform --length-cv 0.01");
  ASSERT_EQ(spread.exit_code, 0) << spread.err;
  const auto s = spread.Json();
  const auto& phase = j["client_phase"];
  ASSERT_TRUE(phase.is_object()) << j.dump();
  EXPECT_DOUBLE_EQ(phase["lockstep"]["ttft_s"].get<double>(), j["ttft_s"]["mean"].get<double>());
  EXPECT_DOUBLE_EQ(phase["out_of_phase"]["ttft_s"].get<double>(),
                   s["ttft_s"]["mean"].get<double>());
  EXPECT_DOUBLE_EQ(phase["out_of_phase"]["tpot_s"].get<double>(),
                   s["tpot_s"]["mean"].get<double>());
  // 16 prompts of 1,024 tokens prefilled in waves against one at a time: the phases differ.
  EXPECT_GT(phase["lockstep"]["ttft_s"].get<double>(),
            1.5 * phase["out_of_phase"]["ttft_s"].get<double>());
  for (const char* key : {"ttft_s", "tpot_s"}) {
    const double a = phase["lockstep"][key].get<double>();
    const double b = phase["out_of_phase"][key].get<double>();
    EXPECT_LT(j[key]["low"].get<double>(), std::min(a, b)) << key;
    EXPECT_GT(j[key]["high"].get<double>(), std::max(a, b)) << key;
  }
  const auto assumed = j["assumed_inputs"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(assumed.begin(), assumed.end(), "closed_loop.client_phase"), assumed.end());
  // The user chose the regime, or there is no closed loop: no phase. A spread of the prompts
  // alone keeps the waves, so it keeps the second run.
  EXPECT_TRUE(s["client_phase"].is_null());
  const RunResult prompts = RunShardwise(loop + " --isl-dist uniform --length-cv 0.2");
  ASSERT_EQ(prompts.exit_code, 0) << prompts.err;
  EXPECT_TRUE(prompts.Json()["client_phase"].is_object());
  const RunResult open = RunShardwise("simulate --gpus 1 --rate 1 --requests 50 --json");
  ASSERT_EQ(open.exit_code, 0) << open.err;
  EXPECT_TRUE(open.Json()["client_phase"].is_null());
}

TEST(SimulateCli, OutOfPhaseRunFollowsTheSameStreamAndNeverFailsTheCommand) {
  // --duration cuts both runs' streams alike: the out-of-phase mean is the spread run's.
  const std::string loop = "simulate --concurrency 64 --duration 3 --json";
  const RunResult fixed = RunShardwise(loop);
  const RunResult spread = RunShardwise(loop + " --osl-dist uniform --length-cv 0.01");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  ASSERT_EQ(spread.exit_code, 0) << spread.err;
  EXPECT_DOUBLE_EQ(fixed.Json()["client_phase"]["out_of_phase"]["ttft_s"].get<double>(),
                   spread.Json()["ttft_s"]["mean"].get<double>());
  // 57,200 + 9,950 tokens fit the 67,280 a Llama-3.1-70B TP2 replica holds with an 8,192-token
  // iteration budget (TensorRT-LLM's default covers the whole prompt); outputs spread by
  // 1% reach ~10,120 tokens, which do not. The lockstep loop stands, with a note.
  const RunResult tight = RunShardwise(
      "simulate --model llama-3.1-70b --layout tp2 --gpus 2 --concurrency 2 --requests 200 "
      "--isl 57200 --osl 9950 --max-batched-tokens 8192 --json");
  ASSERT_EQ(tight.exit_code, 0) << tight.err;
  EXPECT_TRUE(tight.Json()["client_phase"].is_null());
  EXPECT_NE(tight.err.find("the band covers the lockstep loop only"), std::string::npos)
      << tight.err;
  // One client per replica has no wave to leave: no second run.
  const RunResult one = RunShardwise("simulate --gpus 1 --concurrency 1 --json");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_TRUE(one.Json()["client_phase"].is_null());
}

TEST(SimulateCli, PredictionsCarryABandAndTheirAssumedInputs) {
  // vLLM's kernel counts are assumed (data/engines/vllm-0.12.json): TPOT and TTFT carry a band
  // around their means in simulate and explain, and name what was assumed.
  const RunResult r = RunShardwise(
      "simulate --model llama-3.1-8b --gpus 1 --layout tp1 --concurrency 4 --requests 40 "
      "--isl 512 --osl 64 --engine vllm --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  for (const char* key : {"ttft_s", "tpot_s"}) {
    const double mean = j[key]["mean"].get<double>();
    EXPECT_LT(j[key]["low"].get<double>(), mean) << key;
    EXPECT_GT(j[key]["high"].get<double>(), mean) << key;
  }
  const auto assumed = j["assumed_inputs"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(assumed.begin(), assumed.end(), "engine.kernels_per_attention"),
            assumed.end());
  const RunResult e = RunShardwise(
      "explain --model llama-3.1-8b --gpus 1 --layout tp1 --batch 4 --engine vllm --json");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_LT(e.Json()["decode_tpot_s_low"].get<double>(), e.Json()["decode_tpot_s"].get<double>());
  EXPECT_NE(RunShardwise("explain --model llama-3.1-8b --gpus 1 --layout tp1").out.find("±"),
            std::string::npos);
}

TEST(SimulateCli, ClosedLoopBandCoversWhereMeasuredLoopsFell) {
  // A profile whose measured closed loops ran at 0.5-3x the prediction (a copy of vLLM's with
  // those two TTFT fields changed): the TTFT band reaches from half the mean to three times it,
  // wider than the inputs' provenance gives alone (a few %). The clients are out of phase by
  // the user's choice, so there is no second client phase to cover.
  nlohmann::json profile =
      nlohmann::json::parse(Slurp(SHARDWISE_SOURCE_DIR "/data/engines/vllm-0.12.json"));
  profile["fields"]["closed_loop_ttft_ratio_p10"]["value"] = 0.5;
  profile["fields"]["closed_loop_ttft_ratio_p90"]["value"] = 3.0;
  const std::string path = "/tmp/shardwise_spread_profile_" + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << profile.dump();
  const std::string loop =
      "simulate --model llama-3.1-8b --gpus 1 --layout tp1 --concurrency 4 --requests 40 "
      "--isl 512 --osl 64 --osl-dist uniform --length-cv 0.01 --json --engine " +
      path;
  const RunResult r = RunShardwise(loop);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  const double mean = j["ttft_s"]["mean"].get<double>();
  EXPECT_NEAR(j["ttft_s"]["low"].get<double>(), 0.5 * mean, 1e-12 * mean);
  EXPECT_NEAR(j["ttft_s"]["high"].get<double>(), 3.0 * mean, 1e-12 * mean);
  EXPECT_DOUBLE_EQ(j["measured_spread"]["ttft"]["p90"].get<double>(), 3.0);
  EXPECT_NE(RunShardwise(loop.substr(0, loop.find(" --json")) + " --engine " + path)
                .out.find("ran at 0.50-3.00x the\n             predicted TTFT"),
            std::string::npos);
  // On another GPU than the one measured (the built-in profiles: h100-sxm), the spread is used
  // and named an assumption.
  const RunResult b200 = RunShardwise(
      "simulate --model llama-3.1-8b --cluster dgx-b200 --gpus 1 --layout tp1 --concurrency 4 "
      "--requests 40 --isl 512 --osl 64 --engine vllm --json");
  ASSERT_EQ(b200.exit_code, 0) << b200.err;
  const auto b = b200.Json();
  EXPECT_EQ(b["measured_spread"]["measured_on"], "h100-sxm");
  const auto assumed = b["assumed_inputs"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(assumed.begin(), assumed.end(), "engine.closed_loop_measured_on"),
            assumed.end());
  const auto h100 = r.Json()["assumed_inputs"].get<std::vector<std::string>>();
  EXPECT_EQ(std::find(h100.begin(), h100.end(), "engine.closed_loop_measured_on"), h100.end());
  // A profile whose spread is itself assumed (trtllm-cpp borrows trtllm-1.0's: no closed loop of
  // TensorRT-LLM's C++ executor is measured) says so, on the GPU measured too.
  const std::string cpp_loop =
      "simulate --model llama-3.1-8b --cluster dgx-h100 --gpus 1 --layout tp1 --concurrency 4 "
      "--requests 40 --isl 512 --osl 64 --engine trtllm-cpp";
  const RunResult cpp = RunShardwise(cpp_loop);
  ASSERT_EQ(cpp.exit_code, 0) << cpp.err;
  EXPECT_NE(cpp.out.find("for the trtllm-cpp profile that spread is assumed, not measured"),
            std::string::npos)
      << cpp.out;
  const auto cpp_json = RunShardwise(cpp_loop + " --json").Json();
  const auto cpp_assumed = cpp_json["assumed_inputs"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(cpp_assumed.begin(), cpp_assumed.end(), "engine.closed_loop_ttft_ratio"),
            cpp_assumed.end());
  EXPECT_EQ(std::find(h100.begin(), h100.end(), "engine.closed_loop_ttft_ratio"), h100.end());
  // An open loop is not what those measurements were: its band is the inputs' alone.
  const RunResult open = RunShardwise(
      "simulate --model llama-3.1-8b --gpus 1 --layout tp1 --rate 2 --requests 40 --isl 512 "
      "--osl 64 --json --engine " +
      path);
  ASSERT_EQ(open.exit_code, 0) << open.err;
  const auto o = open.Json();
  EXPECT_TRUE(o["measured_spread"].is_null());
  EXPECT_GT(o["ttft_s"]["low"].get<double>(), 0.5 * o["ttft_s"]["mean"].get<double>());
}

TEST(SimulateCli, BadConcurrencyAndEngine) {
  ExpectOneLineError(RunShardwise("simulate --concurrency 0"), "--concurrency");
  ExpectOneLineError(RunShardwise("simulate --concurrency -3"), "--concurrency");
  ExpectOneLineError(RunShardwise("simulate --concurrency 4 --rate 5"), "exclude");
  // Even the rate that is the default is refused when given: a closed loop would ignore it.
  ExpectOneLineError(RunShardwise("simulate --concurrency 4 --rate 10"), "exclude");
  ExpectOneLineError(RunShardwise("simulate --concurrency 4 --burstiness 3"), "--burstiness");
  // --length-cv would be ignored by fixed lengths.
  ExpectOneLineError(RunShardwise("simulate --length-cv 0.2"), "--osl-dist");
  ExpectOneLineError(RunShardwise("simulate --engine tensorrt"), "unknown engine");
  ExpectOneLineError(RunShardwise("explain --engine vlm"), "unknown engine 'vlm'");
  // The short names are suggested, not only the versioned files ('vlm' is one edit from 'vllm').
  ExpectOneLineError(RunShardwise("explain --engine vlm"), "did you mean 'vllm'?");
}

TEST(SimulateCli, EngineProfileMissingAFieldIsOneLine) {
  ExpectOneLineError(RunShardwise(std::string("plan --engine ") + SHARDWISE_SOURCE_DIR +
                                  "/tests/data/engine-missing-field.json"),
                     "lacks field 'step_overhead_s'");
}

TEST(SimulateCli, JsonFieldsAndDeterminism) {
  const std::string args =
      "simulate --model llama-3.1-8b --gpus 2 --layout dp2 --rate 30 --burstiness 2 --isl-dist "
      "lognormal --osl-dist uniform --requests 400 --seed 11 --json";
  const RunResult a = RunShardwise(args);
  const RunResult b = RunShardwise(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);  // same seed, identical JSON
  const auto j = a.Json();
  // One style (docs/json.md): a nested object per metric, units in the names.
  EXPECT_EQ(j["schema_version"], 4);
  for (const char* metric : {"ttft_s", "tpot_s", "itl_s", "e2e_s"}) {
    for (const char* key : {"p50", "p90", "p99", "mean", "cdf"}) {
      EXPECT_TRUE(j[metric].contains(key)) << metric << "." << key;
    }
  }
  EXPECT_TRUE(j["throughput"].contains("output_tokens_per_s"));
  EXPECT_TRUE(j["utilization"].contains("mfu"));
  EXPECT_TRUE(j["cost"].contains("usd_per_mtok_output"));
  EXPECT_FALSE(j.contains("ttft_p50_s"));
  EXPECT_EQ(j["requests"], 400);
  const RunResult other = RunShardwise(
      "simulate --model llama-3.1-8b --gpus 2 --layout dp2 --rate 30 --burstiness 2 --isl-dist "
      "lognormal --osl-dist uniform --requests 400 --seed 12 --json");
  EXPECT_NE(a.out, other.out);
}

TEST(SimulateCli, TraceFile) {
  std::system(
      "printf 'arrival_s,input_tokens,output_tokens\\n0.0,500,50\\n0.1,800,20\\n0.1,100,5\\n' "
      "> /tmp/shardwise_trace.csv");
  const RunResult r =
      RunShardwise("simulate --gpus 1 --layout tp1 --trace /tmp/shardwise_trace.csv --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.Json()["requests"], 3);
  // Requests of one output token have no TPOT or ITL: the table says so rather than 0.0 us.
  std::system(
      "printf 'arrival_s,input_tokens,output_tokens\\n0.0,500,1\\n0.1,800,1\\n' > "
      "/tmp/shardwise_one_token.csv");
  const RunResult one =
      RunShardwise("simulate --gpus 1 --layout tp1 --trace /tmp/shardwise_one_token.csv");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("(no request has a second token)"), std::string::npos) << one.out;
}

TEST(SimulateCliErrors, BadInput) {
  std::system("printf '0.0,500,50\\n0.2,-8,20\\n' > /tmp/shardwise_neg.csv");
  ExpectOneLineError(RunShardwise("simulate --trace /tmp/shardwise_neg.csv"),
                     "token counts must be whole numbers from 1 to");
  std::system("printf '0.5,500,50\\n0.2,8,20\\n' > /tmp/shardwise_unsorted.csv");
  ExpectOneLineError(RunShardwise("simulate --trace /tmp/shardwise_unsorted.csv"),
                     "arrival times must not decrease");
  ExpectOneLineError(RunShardwise("simulate --rate 0"), "--rate must be requests per second");
  ExpectOneLineError(RunShardwise("simulate --rate fast"), "--rate 'fast'");
  ExpectOneLineError(RunShardwise("simulate --model llama-3.1-70b --gpus 1 --layout tp1"),
                     "does not fit");
  ExpectOneLineError(RunShardwise("simulate --router random"), "unknown router 'random'");
  ExpectOneLineError(RunShardwise("simulate --isl-dist zipf"), "unknown length distribution");
  ExpectOneLineError(RunShardwise("simulate --trace /nonexistent.csv"), "cannot open file");
  // Beyond Llama 3.1's 131,072-token context: the fix named is what set the longest request (a
  // trace's row, or the spread's cap), not an --isl the user never gave.
  std::system("printf '0.0,200000,10\\n' > /tmp/shardwise_long.csv");
  ExpectOneLineError(RunShardwise("simulate --trace /tmp/shardwise_long.csv"),
                     "shorten or drop the trace's longest requests");
  ExpectOneLineError(RunShardwise("simulate --isl 60000 --osl 30000 --isl-dist lognormal "
                                  "--osl-dist lognormal --length-cv 3"),
                     "the lengths' spread draws them up to its cap");
  // A first row that starts with a number is a request, not a header: a bad field in it is an
  // error (it was dropped as a header); so is a fourth column or trailing text.
  std::system("printf '0,abc,10\\n1,100,10\\n' > /tmp/shardwise_badfirst.csv");
  ExpectOneLineError(RunShardwise("simulate --trace /tmp/shardwise_badfirst.csv"),
                     "shardwise_badfirst.csv:1: expected three numbers");
  std::system("printf '0,100,10,5\\n' > /tmp/shardwise_four.csv");
  ExpectOneLineError(RunShardwise("simulate --trace /tmp/shardwise_four.csv"), "three numbers");
  // nan, inf and hexadecimal are not decimal numbers: a first row of them is not a header.
  std::system("printf 'nan,100,10\\n1,100,10\\n' > /tmp/shardwise_nan.csv");
  ExpectOneLineError(RunShardwise("simulate --trace /tmp/shardwise_nan.csv"), "three numbers");
  std::system("printf '0x10,1024,256\\n' > /tmp/shardwise_hex.csv");
  ExpectOneLineError(RunShardwise("simulate --trace /tmp/shardwise_hex.csv"), "three numbers");
  std::system("printf '0,100,10x\\n' > /tmp/shardwise_tail.csv");
  ExpectOneLineError(RunShardwise("simulate --trace /tmp/shardwise_tail.csv"), "three numbers");
  // A trace fixes the load: the generated load's knobs are refused, not ignored.
  std::system("printf '0,100,10\\n' > /tmp/shardwise_one.csv");
  for (const std::string knob : {"--rate 5", "--burstiness 2", "--isl 200", "--osl-dist uniform",
                                 "--requests 5", "--duration 3"}) {
    ExpectOneLineError(RunShardwise("simulate --trace /tmp/shardwise_one.csv " + knob),
                       "exclude each other");
  }
  // A run cut off before any request finishes has nothing to report (it printed 0 requests,
  // $0.000 per million tokens and "meets_slo": true).
  ExpectOneLineError(RunShardwise("simulate --duration 0.01 --max-ttft-ms 100 --max-tpot-ms 10"),
                     "no request finished within --duration");
}

TEST(PriceCli, DutyCycleAndBreakEven) {
  const RunResult r = RunShardwise(
      "price --model llama-3.1-70b --layout tp4 --duty-cycle 0.4 --api-usd-per-mtok 0.9 "
      "--demand-tokens-per-s 20000 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  // The economics blog: a 40% duty cycle costs ~2.5x the full-load price.
  EXPECT_DOUBLE_EQ(j["duty_cycle"]["cost_multiplier"].get<double>(), 2.5);
  const double full = j["full_load"]["usd_per_mtok_output"].get<double>();
  EXPECT_NEAR(j["at_duty_cycle"]["usd_per_mtok_output"].get<double>() / full, 2.5, 1e-9);
  // Break-even uses the duty cycle: the output tokens' share of the full-load bill per Mtok /
  // (0.9 x 0.4).
  EXPECT_NEAR(j["break_even"]["output_utilization"].get<double>(),
              j["full_load"]["usd_per_mtok_output_share"].get<double>() / (0.9 * 0.4), 1e-9);
  EXPECT_GT(j["demand"]["gpus"].get<int>(), 0);
  ASSERT_EQ(j["curve"].size(), 10u);
  // The table is scaled by the duty cycle: at 100% utilisation it is the duty-cycle price.
  EXPECT_NEAR(j["curve"][9]["usd_per_mtok_output"].get<double>(), 2.5 * full, 1e-9);
}

TEST(PriceCliErrors, BadInput) {
  ExpectOneLineError(RunShardwise("price --duty-cycle 0"), "--duty-cycle must be in [0.001, 1]");
  ExpectOneLineError(RunShardwise("price --usd-per-gpu-hour -3"), "--usd-per-gpu-hour");
  ExpectOneLineError(RunShardwise("price --layout tp8pp4"), "needs 32 GPUs");
}

TEST(SimulateCli, AnOverloadedOpenLoopReportsWhatItServes) {
  // Llama-3.1-70B on one TP8 replica serves about 17 requests/s of 1,024 + 256 tokens. Offered
  // 1,000 or 10 million a second it serves the same: its output tokens/s had read 3,605 and 0
  // (the window of arrivals lasting microseconds), its cost $0, its GPUs 100.1% busy.
  const std::string base = "simulate --model llama-3.1-70b --cluster dgx-h100 --layout tp8 --json ";
  const RunResult some = RunShardwise(base + "--rate 1000");
  const RunResult flood = RunShardwise(base + "--rate 1e7");
  ASSERT_EQ(some.exit_code, 0) << some.err;
  ASSERT_EQ(flood.exit_code, 0) << flood.err;
  const double served = some.Json()["throughput"]["output_tokens_per_s"].get<double>();
  const double flooded = flood.Json()["throughput"]["output_tokens_per_s"].get<double>();
  EXPECT_NEAR(flooded, served, 0.02 * served);
  // By hand, below the GPUs' peak: each output token carries 5 tokens of weight FLOPs (1,024 +
  // 256 per 256 outputs), 2 x 70.6e9 each, on 8 x 989.4e12 FLOP/s: at most 11,210 output
  // tokens/s; and far from the 0 it had read.
  EXPECT_LT(flooded, 8 * 989.4e12 / (2 * 70.6e9 * 5));
  EXPECT_GT(flooded, 1000.0);
  for (const RunResult* r : {&some, &flood}) {
    EXPECT_LE(r->Json()["utilization"]["busy_fraction"].get<double>(), 1.0);
    EXPECT_GT(r->Json()["cost"]["usd_per_mtok_output"].get<double>(), 0.0);
  }
}

TEST(SimulateCli, AFixedRunThatFallsBehindIsOverloaded) {
  // DeepSeek-R1 on one H200 node (dp8ep8) at 8 requests/s of 1,000 + 3,700 tokens: the analytic
  // capacity (about 8.1/s) passes the rate and 10,000 requests are too few against the requests
  // in flight to compare their halves' TTFTs, yet the simulation serves about 5.6/s and the later
  // TTFTs run to minutes. Between its middle and its last arrival it finished fewer than 95% of
  // the 4,999 requests that arrived meanwhile (by Little's count: those in its system at the
  // middle, plus the arrivals, less those in it at the last), while its system grew.
  const std::string base =
      "simulate --model deepseek-r1 --cluster dgx-h200 --layout dp8ep8 --isl 1000 --osl 3700 "
      "--json ";
  const RunResult over = RunShardwise(base + "--rate 8 --requests 10000");
  ASSERT_EQ(over.exit_code, 0) << over.err;
  const nlohmann::json j = over.Json();
  EXPECT_TRUE(j["load"]["overloaded"].get<bool>());
  EXPECT_GT(j["load"]["capacity_requests_per_s"].get<double>(), 8.0);
  // What it served over the run is well under the 8/s offered (no growing queue needed to see
  // it once the run drained: 10,000 requests over about 10,000 / 8 = 1,250 s of arrivals).
  EXPECT_LT(j["load"]["served_requests_per_s"].get<double>(), 0.95 * 8);
  EXPECT_FALSE(j["steady_state"]["halves_compared"].get<bool>());
  const nlohmann::json& in_system = j["steady_state"]["in_system"];
  const double middle = in_system["at_middle_arrival"].get<double>();
  const double last = in_system["at_last_arrival"].get<double>();
  EXPECT_LT(middle + 4999 - last, 0.95 * 4999);
  EXPECT_TRUE(in_system["grew"].get<bool>());
  // Half the rate keeps up: served all along, nothing grew.
  const RunResult half = RunShardwise(base + "--rate 4 --requests 5000");
  ASSERT_EQ(half.exit_code, 0) << half.err;
  EXPECT_FALSE(half.Json()["load"]["overloaded"].get<bool>());
  EXPECT_FALSE(half.Json()["steady_state"]["in_system"]["grew"].get<bool>());
}

TEST(SimulateCli, GoodputNeverExceedsThroughput) {
  // Every request met the SLOs, and goodput read 2,828 output tokens/s beside a throughput of
  // 2,806: the measured requests' own tokens over the window, not the window's tokens.
  const RunResult r = RunShardwise(
      "simulate --model llama-3.1-70b --cluster dgx-h100 --layout dp2tp4 --rate 10 "
      "--max-ttft-ms 500 --max-tpot-ms 50 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = r.Json();
  ASSERT_DOUBLE_EQ(j["goodput"]["request_fraction"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["goodput"]["output_tokens_per_s"].get<double>(),
                   j["throughput"]["output_tokens_per_s"].get<double>());
}

TEST(SimulateCli, ADisaggregatedKvCacheIsTheDecodePools) {
  // 1P + 1D of Llama-3.1-8B at TP1, 4 requests/s of 1,024 + 256 tokens. By Little's law the
  // decode pool holds 4/s x 255 x TPOT sequences, each about 1,024 + 256 / 2 tokens on average
  // through its decode: that over one worker's KV capacity is its occupancy. It had pooled both
  // pools, the prefill pool's nearly empty cache halving it.
  const RunResult r = RunShardwise(
      "simulate --model llama-3.1-8b --cluster dgx-h100 --prefill-layout tp1 --decode-layout tp1 "
      "--engine vllm --rate 4 --isl 1024 --osl 256 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = r.Json();
  const double capacity =
      j["deployment"]["pools"][1]["kv_capacity_tokens_per_worker"].get<double>();
  const double sequences = 4 * 255 * j["tpot_s"]["mean"].get<double>();
  const double by_hand = sequences * (1024 + 256 / 2.0) / capacity;
  EXPECT_NEAR(j["kv_occupancy"]["mean_fraction"].get<double>(), by_hand, 0.15 * by_hand);
}

}  // namespace
}  // namespace shardwise::testing
