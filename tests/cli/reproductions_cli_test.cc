// End-to-end: issue 24's reproductions of the decision commands' wrong answers, each checked
// against an independent figure (another command's model, or arithmetic written here).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

TEST(Reproductions, PriceTakesSlosAndPricesThePointThatMeetsThem) {
  // price once priced the largest batch (~7 tokens/s per user for 70B tp4) and refused
  // --max-tpot-ms. Now it prices the most load within the SLOs and says what that point is.
  const RunResult r =
      RunShardwise("price --layout tp4 --gpus 4 --max-ttft-ms 2000 --max-tpot-ms 50 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  EXPECT_EQ(j["operating_point"]["priced_at"], "most_within_slo");
  const auto& p = j["operating_point"]["point"];
  EXPECT_TRUE(p["meets_slo"].get<bool>());
  EXPECT_LE(p["ttft_s"]["p99"].get<double>(), 2.0);
  EXPECT_LE(p["tpot_s"]["p99"].get<double>(), 0.050);
  // Within a 50 ms TPOT a user sees at least 1 / 0.050 = 20 tokens/s (the mean TPOT is at most
  // the p99), not the largest batch's ~7.
  EXPECT_GE(p["output_tokens_per_s_per_user"].get<double>(), 20.0);
  // The bill by hand: 4 GPUs at the catalog's $/GPU-hour (the H100's, read from the GPU
  // catalog, not from the price under test) over the billed output tokens.
  double usd_per_gpu_hour = 0;
  for (const auto& g : RunShardwise("gpus --json").Json()) {
    if (g["name"] == "h100-sxm") usd_per_gpu_hour = g["usd_per_gpu_hour"];
  }
  ASSERT_GT(usd_per_gpu_hour, 0);
  EXPECT_EQ(j["usd_per_gpu_hour"].get<double>(), usd_per_gpu_hour);
  const double usd_per_hour = 4 * usd_per_gpu_hour;
  const double tokens_per_hour = j["billed"]["output_tokens_per_s"].get<double>() * 3600;
  EXPECT_NEAR(j["usd_per_mtok_output"].get<double>(), usd_per_hour / tokens_per_hour * 1e6,
              1e-9 * usd_per_hour / tokens_per_hour * 1e6);
  // The text says which TTFT, TPOT and tokens/s per user it assumed.
  const RunResult text = RunShardwise(
      "price --layout tp4 --gpus 4 --max-ttft-ms 2000 "
      "--max-tpot-ms 50");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("p99 TTFT"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("tokens/s per user"), std::string::npos) << text.out;
  // And under which load: closed-loop clients, which queue less than recommend's Poisson
  // arrivals at the same rate (a user comparing the two was told both were "the most load").
  EXPECT_NE(text.out.find("the most closed-loop clients within the SLOs"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("Poisson"), std::string::npos) << text.out;
}

TEST(Reproductions, PromptsBeyondTheContextAreRefusedEverywhere) {
  // Llama-3.1-8B's max_position_embeddings is 131,072 (its config.json); plan and simulate
  // accepted a 200k-token prompt.
  for (const char* command : {"plan", "simulate", "price", "recommend --rate 1"}) {
    ExpectOneLineError(
        RunShardwise(std::string(command) + " --model llama-3.1-8b --isl 200000 --max-ttft-ms "
                                            "5000 --max-tpot-ms 100"),
        "context of 131072 tokens");
  }
}

TEST(Reproductions, TensorRtLlmLongPromptsAreNotSerialised) {
  // gpt-oss-120b on 4 B200 under TensorRT-LLM at 8,192-token prompts and 128 clients once ran
  // one request at a time (TTFT 352 s, KV cache 0.1% full): its token budget was 8,192, which a
  // whole 8,192-token prompt and the running decodes overflow. The budget is now the prompt plus
  // the engine's headroom, as NVIDIA's AIConfigurator writes TensorRT-LLM's max_num_tokens
  // (data/engines/trtllm-1.0.json, prompt_headroom_tokens), so the 128 requests are in flight
  // together. Independent check: explain's
  // memory model says how many 9,216-token sequences one replica holds; all 128 clients' KV must
  // be resident at once, so the peak occupancy is at least 128 over that (less rounding).
  const std::string where =
      "--model gpt-oss-120b --cluster dgx-b200 --gpus 4 --layout tp4 --engine trtllm";
  const RunResult e = RunShardwise("explain " + where + " --context 9216 --json");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const double max_sequences = e.Json()["memory"]["max_sequences"].get<double>();
  ASSERT_GT(max_sequences, 128);
  const RunResult s =
      RunShardwise("simulate " + where + " --isl 8192 --osl 1024 --concurrency 128 --json");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const auto j = s.Json();
  EXPECT_GE(j["kv_occupancy"]["max_fraction"].get<double>(), 0.9 * 128 / max_sequences);
  // Serialised, each request would wait for the 127 others' whole generation: TTFT in seconds.
  EXPECT_LT(j["ttft_s"]["p99"].get<double>(), 1.0);
}

TEST(Reproductions, SimulateAndPriceStartFromPlansLayoutUnderTheSameSlos) {
  // Without --layout, simulate and price took the planner's layout ranked with no SLO (tp2pp4,
  // p99 TPOT 82 ms against a 30 ms SLO) while plan under the SLOs answers another.
  const std::string slo = " --model llama-3.1-70b --max-ttft-ms 1000 --max-tpot-ms 30 --json";
  const RunResult plan = RunShardwise("plan --top 1 --disagg off" + slo);
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const std::string layout = plan.Json()["layouts"][0]["layout"];
  for (const char* command : {"simulate", "price"}) {
    const RunResult r = RunShardwise(command + slo);
    ASSERT_EQ(r.exit_code, 0) << command << ": " << r.err;
    EXPECT_EQ(r.Json()["deployment"]["name"], layout) << command;
  }
}

TEST(Reproductions, AReplayKeepsWhatTheFlagsDoNotOverride) {
  // --isl alone on a replay dropped the saved OSL; --max-tpot-ms alone dropped the saved TTFT
  // limit and percentile. Each flag now overrides its own field.
  const RunResult plan = RunShardwise(
      "plan --model llama-3.1-8b --gpus 4 --isl 2048 --osl 512 --rate 4 --max-ttft-ms 3000 "
      "--percentile p90 --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const std::string saved = "/tmp/shardwise_replay_plan.json";
  std::ofstream(saved) << plan.out;
  const RunResult s = RunShardwise("simulate --deployment " + saved +
                                   " --isl 1024 --max-tpot-ms 40 --requests 300 --json");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const auto j = s.Json();
  EXPECT_EQ(j["lengths"]["input_tokens_mean"].get<double>(), 1024);
  EXPECT_EQ(j["lengths"]["output_tokens_mean"].get<double>(), 512);
  EXPECT_EQ(j["slo"]["percentile"], "p90");
  EXPECT_DOUBLE_EQ(j["slo"]["max_ttft_s"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(j["slo"]["max_tpot_s"].get<double>(), 0.040);
}

TEST(Reproductions, ASimulateReplayDrawsTheSameRequests) {
  // A saved simulate lost its burstiness, length distributions and seed: the replay of bursty,
  // lognormal traffic ran fixed Poisson traffic (p99 TTFT 0.050 s against 0.521 s). The
  // expected values are the saved run's own: the same seed draws the same requests.
  const RunResult a = RunShardwise(
      "simulate --model llama-3.1-8b --gpus 2 --rate 5 --burstiness 4 --osl-dist lognormal "
      "--seed 7 --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const std::string saved = "/tmp/shardwise_replay_simulate.json";
  std::ofstream(saved) << a.out;
  const RunResult b = RunShardwise("simulate --deployment " + saved + " --json");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(b.Json()["lengths"]["output_distribution"], "lognormal");
  EXPECT_EQ(b.Json()["seed"], 7);
  EXPECT_DOUBLE_EQ(b.Json()["ttft_s"]["p99"].get<double>(),
                   a.Json()["ttft_s"]["p99"].get<double>());
  EXPECT_DOUBLE_EQ(b.Json()["tpot_s"]["mean"].get<double>(),
                   a.Json()["tpot_s"]["mean"].get<double>());
}

TEST(Reproductions, PriceOfASavedSimulateDrawsTheSameRequests) {
  // price --deployment of a bursty or lognormal simulate priced fixed Poisson traffic (p99 TTFT
  // 274 ms against the saved 1.91 s). The expected values are the saved run's own.
  for (const std::string workload : {"--burstiness 4", "--isl-dist lognormal --length-cv 1.5"}) {
    const RunResult a = RunShardwise("simulate --model llama-3.1-8b --gpus 2 --rate 5 --seed 3 " +
                                     workload + " --json");
    ASSERT_EQ(a.exit_code, 0) << a.err;
    const std::string saved = "/tmp/shardwise_replay_price.json";
    std::ofstream(saved) << a.out;
    const RunResult p = RunShardwise("price --deployment " + saved + " --json");
    ASSERT_EQ(p.exit_code, 0) << p.err;
    const auto point = p.Json()["operating_point"]["point"];
    EXPECT_DOUBLE_EQ(point["ttft_s"]["p99"].get<double>(), a.Json()["ttft_s"]["p99"].get<double>())
        << workload;
    EXPECT_DOUBLE_EQ(point["tpot_s"]["p99"].get<double>(), a.Json()["tpot_s"]["p99"].get<double>())
        << workload;
  }
}

TEST(Reproductions, ASavedSplitTakesMoreWorkersAndNodes) {
  // price at twice the load advised "--decode-workers 2", which --deployment then refused (and
  // said to drop --prefill-layout and --decode-layout, neither given). The workers and the
  // cluster's size now resize the saved split; its layouts, model and engine stay.
  const RunResult plan = RunShardwise(
      "simulate --model llama-3.1-8b --prefill-layout tp2 --decode-layout tp2 --rate 5 --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const std::string saved = "/tmp/shardwise_replay_split.json";
  std::ofstream(saved) << plan.out;
  const RunResult more =
      RunShardwise("simulate --deployment " + saved + " --decode-workers 2 --nodes 2 --json");
  ASSERT_EQ(more.exit_code, 0) << more.err;
  EXPECT_EQ(more.Json()["deployment"]["name"], "1P x tp2 + 2D x tp2");
  ExpectOneLineError(RunShardwise("simulate --deployment " + saved + " --prefill-layout tp4"),
                     "drop the split's layouts and options");
  const RunResult agg = RunShardwise("simulate --model llama-3.1-8b --layout tp2 --json");
  ASSERT_EQ(agg.exit_code, 0) << agg.err;
  std::ofstream(saved) << agg.out;
  ExpectOneLineError(RunShardwise("simulate --deployment " + saved + " --decode-workers 2"),
                     "is aggregated");
}

TEST(Reproductions, ExplainOfASavedRateHoldsItsRequestsInFlight) {
  // explain --deployment of a recommend at 20 requests/s explained batch 32 and said the
  // deployment serves 1.27 requests/s with 44 decode workers needed. A saved rate now carries
  // the simulation's mean requests in flight (Little's law), shared among the replicas, and the
  // step there serves about the rate: requests in flight / (TTFT + OSL x TPOT) by Little's law.
  const RunResult rec = RunShardwise(
      "recommend --model llama-3.1-8b --rate 10 --max-ttft-ms 1000 --max-tpot-ms 30 --json");
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const std::string saved = "/tmp/shardwise_replay_rate.json";
  std::ofstream(saved) << rec.out;
  const double in_flight = rec.Json()["deployment"]["saved"]["load"]["in_flight"];
  const int replicas = rec.Json()["recommendation"]["replicas"];
  const RunResult e = RunShardwise("explain --deployment " + saved + " --json");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(e.Json()["batch"].get<int>(), static_cast<int>(std::ceil(in_flight / replicas)));
  const double served = e.Json()["output_tokens_per_s"].get<double>() / 256;
  EXPECT_NEAR(served, 10.0, 0.25 * 10.0);
}

TEST(Reproductions, ASavedTraceRunReplaysItsTrace) {
  // A saved simulate --trace recorded the unused --rate default (10 requests/s): its replay ran
  // Poisson 10/s, five times the trace's rate. It now saves the trace (simulate replays it) and
  // the trace's own offered rate: 200 requests 0.5 s apart arrive at 2 per second (price and
  // explain use it).
  const std::string trace = "/tmp/shardwise_replay_trace.csv";
  {
    std::ofstream out(trace);
    for (int i = 0; i < 200; ++i) out << i * 0.5 << ",512,64\n";
  }
  const RunResult a = RunShardwise("simulate --model llama-3.1-8b --gpus 1 --layout tp1 --trace " +
                                   trace + " --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NEAR(a.Json()["deployment"]["saved"]["load"]["rate"].get<double>(), 2.0, 1e-9);
  const std::string saved = "/tmp/shardwise_replay_trace.json";
  std::ofstream(saved) << a.out;
  const RunResult b = RunShardwise("simulate --deployment " + saved + " --json");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(b.Json()["requests"], 200);
  EXPECT_DOUBLE_EQ(b.Json()["ttft_s"]["p99"].get<double>(),
                   a.Json()["ttft_s"]["p99"].get<double>());
  // A trace whose requests all arrive at once is offline: no rate offered (it said "10
  // requests/s offered" and advised lowering --rate, which --trace refuses).
  std::ofstream(trace) << "0,512,64\n0,512,64\n0,512,64\n";
  const RunResult c = RunShardwise("simulate --model llama-3.1-8b --gpus 1 --layout tp1 --trace " +
                                   trace + " --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_TRUE(c.Json()["load"]["offered_requests_per_s"].is_null());
}

TEST(Reproductions, ASavedExplainKeepsItsBatch) {
  // explain --deployment of a saved explain --batch 16 explained batch 32; simulate and price
  // of it ran arbitrary loads. The batch is saved as the closed loop that keeps it.
  const RunResult a = RunShardwise(
      "explain --model llama-3.1-8b --layout tp2 --gpus 2 --batch 16 --context 2048 --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const std::string saved = "/tmp/shardwise_replay_explain_batch.json";
  std::ofstream(saved) << a.out;
  const RunResult e = RunShardwise("explain --deployment " + saved + " --json");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(e.Json()["batch"], 16);
  EXPECT_DOUBLE_EQ(e.Json()["decode_tpot_s"].get<double>(),
                   a.Json()["decode_tpot_s"].get<double>());
  const RunResult s = RunShardwise("simulate --deployment " + saved + " --requests 100 --json");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.Json()["concurrency"], 16);
}

TEST(Reproductions, ABadValueInASavedFileIsTheFilesNotAFlags) {
  // A saved burstiness of 500 read "--burstiness must be in (0, 100]", a flag never given.
  const RunResult a = RunShardwise("simulate --model llama-3.1-8b --gpus 1 --rate 2 --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  nlohmann::json edited = a.Json();
  edited["deployment"]["saved"]["load"]["burstiness"] = 500;
  const std::string saved = "/tmp/shardwise_replay_bad_value.json";
  std::ofstream(saved) << edited.dump();
  ExpectOneLineError(RunShardwise("simulate --deployment " + saved),
                     "(--burstiness is " + saved + "'s: --deployment replays it)");
}

TEST(Reproductions, ExplainOfASavedClosedLoopHoldsItsClients) {
  // explain --deployment ignored the saved load and explained --batch 32. A closed loop of 64
  // clients on a deployment shares them among its replicas (aggregated) or decode workers.
  const RunResult plan =
      RunShardwise("plan --model llama-3.1-8b --gpus 4 --concurrency 64 --disagg off --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const std::string saved = "/tmp/shardwise_replay_explain.json";
  std::ofstream(saved) << plan.out;
  const int replicas = plan.Json()["layouts"][0]["replicas"];
  const RunResult e = RunShardwise("explain --deployment " + saved + " --json");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(e.Json()["batch"].get<int>(), (64 + replicas - 1) / replicas);
}

TEST(Reproductions, ExplainOfASavedSpreadSaysItPricesTheMeansAndKeepsTheSpread) {
  // explain --deployment of a run with spread lengths explained the mean lengths without saying
  // so, and its own saved answer dropped the spread, so a replay of it ran fixed lengths.
  const RunResult a = RunShardwise(
      "simulate --model llama-3.1-8b --gpus 1 --concurrency 8 --isl-dist uniform --length-cv 0.3 "
      "--requests 200 --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const std::string saved = "/tmp/shardwise_replay_explain_spread.json";
  std::ofstream(saved) << a.out;
  const RunResult e = RunShardwise("explain --deployment " + saved + " --json");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const nlohmann::json j = e.Json();
  EXPECT_EQ(j["context"], 1024);  // the mean prompt
  EXPECT_NE(j["notes"].dump().find("the lengths are spread (prompts uniform, outputs fixed, CV "
                                   "0.3); explain prices requests of the mean lengths"),
            std::string::npos)
      << j["notes"].dump();
  const std::string again = "/tmp/shardwise_replay_explain_spread_again.json";
  std::ofstream(again) << e.out;
  const RunResult s = RunShardwise("simulate --deployment " + again + " --requests 200 --json");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.Json()["lengths"]["input_distribution"], "uniform");
  EXPECT_DOUBLE_EQ(s.Json()["lengths"]["length_cv"].get<double>(), 0.3);
  // Fixed lengths, or a spread of CV 0, replayed: no note.
  for (const char* lengths : {"", "--isl-dist uniform --length-cv 0 "}) {
    const RunResult run = RunShardwise(
        std::string("simulate --model llama-3.1-8b --gpus 1 --concurrency 8 --requests 200 ") +
        lengths + "--json");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const std::string file = "/tmp/shardwise_replay_explain_fixed.json";
    std::ofstream(file) << run.out;
    const RunResult fixed = RunShardwise("explain --deployment " + file + " --json");
    ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
    EXPECT_EQ(fixed.Json()["notes"].dump().find("spread"), std::string::npos) << lengths;
  }
}

}  // namespace
}  // namespace shardwise::testing
