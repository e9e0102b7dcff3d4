// End-to-end: `shardwise train` as a user runs it, and its bad input.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

TEST(TrainCli, DefaultsRankLayouts) {
  const RunResult r = RunShardwise("train --no-sizes");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text : {"layout", "why:", "critical batch", "GPU-hours", "MFU"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text;
  }
}

TEST(TrainCli, JsonHasTheIssueKeys) {
  const RunResult r = RunShardwise(
      "train --model llama-3.1-70b --cluster dgx-h100 --nodes 8 --seq-len 4096 --global-batch 256 "
      "--tokens 1T --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  for (const char* key : {"layout", "step_s", "tokens_per_s", "model_flops_per_s_per_gpu", "mfu",
                          "memory_per_gpu_bytes", "gpu_hours", "usd", "why", "bound"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  // Compute for 1T tokens: steps x step time, steps = 1e12 / (256 x 4096) = 953,674.3 rounded
  // up to whole steps; GPU-hours: the wall clock (compute over goodput, interruptions included)
  // x GPUs / 3600.
  const double steps = 953'675;
  EXPECT_EQ(j["steps"].get<double>(), steps);
  EXPECT_NEAR(j["compute_s"].get<double>(), steps * j["step_s"].get<double>(),
              1e-6 * j["compute_s"].get<double>());
  EXPECT_NEAR(j["gpu_hours"].get<double>(),
              j["compute_s"].get<double>() / j["goodput"].get<double>() * 64 / 3600,
              1e-6 * j["gpu_hours"].get<double>());
  EXPECT_NEAR(j["usd"].get<double>(), 3.0 * j["gpu_hours"].get<double>(),
              1e-6 * j["usd"].get<double>());  // h100-sxm: $3.00 per GPU-hour (assumed)
  // 0.9 of the 81,559 MiB an H100 80GB's driver reports.
  EXPECT_LE(j["memory_per_gpu_bytes"].get<double>(), 0.9 * 81'559.0 * 1024 * 1024);
  // The step's parts are a labelled series, each at most the step.
  ASSERT_TRUE(j["step_parts"].is_array());
  ASSERT_FALSE(j["step_parts"].empty());
  for (const auto& part : j["step_parts"]) {
    EXPECT_TRUE(part["part"].is_string());
    EXPECT_GE(part["time_s"].get<double>(), 0);
    EXPECT_LE(part["time_s"].get<double>(), j["step_s"].get<double>()) << part["part"];
  }
  ASSERT_FALSE(j["sizes"].empty());
  bool any_pareto = false;
  for (const auto& s : j["sizes"]) any_pareto = any_pareto || s["pareto"].get<bool>();
  EXPECT_TRUE(any_pareto);
}

TEST(TrainCli, ExplainsOneLayoutPerPhase) {
  const RunResult r = RunShardwise(
      "train --model megatron-gpt-39b --cluster dgx-a100 --nodes 64 --layout tp8pp2dp32 "
      "--seq-len 2048 --global-batch 1536 --engine megatron-lm-sc21 --zero 0 --recompute full");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text : {"forward", "backward (+ recompute)", "pipeline bubble", "memory per GPU",
                           "TFLOP/s per GPU"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text;
  }
}

TEST(TrainCli, GlobalBatchNotDivisible) {
  // 36 = 2 x 18 sequences per micro-batch, over DP 8: the nearest multiple of 16 is 32, and DP
  // must divide 18.
  const RunResult r = RunShardwise(
      "train --model llama-3.1-8b --nodes 1 --layout dp8 --global-batch 36 --micro-batch 2");
  ExpectOneLineError(r,
                     "global batch 36 is not divisible into micro-batches x DP = 2 x 8 = 16; use a "
                     "--global-batch that is a multiple of 16 (such as 32), or a layout whose DP "
                     "divides 18");
  // A micro-batch that does not divide the batch whatever the layout (512 = 2^9) is named as the
  // cause, not a DP the search happened to try: the hint had been "a multiple of 6" for DP 2.
  ExpectOneLineError(RunShardwise("train --micro-batch 3 --no-sizes"),
                     "global batch 512 is not a multiple of the micro-batch 3; use a "
                     "--global-batch that is a multiple of 3 (such as 513), or a --micro-batch "
                     "that divides 512");
  // DP 3 cannot divide 512: another micro-batch would not help, so it is not offered.
  ExpectOneLineError(RunShardwise("train --gpus 3 --layout dp3 --no-sizes"),
                     "use a --global-batch that is a multiple of 3 (such as 513), or a layout "
                     "whose DP divides 512");
}

// A schedule the engine lacks names those it offers (data/training/megatron-core.json lists
// 1f1b and interleaved).
TEST(TrainCli, AScheduleTheEngineLacksNamesThoseItOffers) {
  ExpectOneLineError(RunShardwise("train --schedule zero-bubble"),
                     "does not offer the zero-bubble schedule; use 1f1b, interleaved:V");
}

TEST(TrainCli, ZeroThreeWithPipeline) {
  const RunResult r = RunShardwise(
      "train --model llama-3.1-8b --nodes 1 --layout pp2dp4 --zero 3 --global-batch 32");
  ExpectOneLineError(r, "ZeRO-3");
  ExpectOneLineError(r, "use --zero 0 or 1 or 2 with pp, or a layout without pp");
  // With no layout given, the interleaved schedule is what needs pp: the hint names it.
  ExpectOneLineError(RunShardwise("train --zero 3 --schedule interleaved:2 --no-sizes"),
                     "or a layout without pp (the interleaved schedule needs pp: without it, "
                     "--schedule 1f1b)");
  // The SC21 engine offers ZeRO-0 alone: the hint offers only it.
  ExpectOneLineError(
      RunShardwise("train --engine megatron-lm-sc21 --zero 3 --layout dp4pp2 --no-sizes"),
      "use --zero 0 with pp, or a layout without pp");
  // A micro-batch the user set, whose activations do not fit, is named among the remedies.
  ExpectOneLineError(RunShardwise("train --layout dp8 --micro-batch 64 --no-sizes"),
                     "lower --micro-batch (from 64)");
}

TEST(TrainCli, LayoutThatDoesNotFit) {
  // Llama-3.1-8B as dp8 at ZeRO-0 holds 16 bytes x 8e9 of states per GPU, ~128 GB; ZeRO-3
  // shards them 8 ways (~16 GB), so raising it is offered, with full recompute.
  const RunResult r = RunShardwise(
      "train --model llama-3.1-8b --nodes 1 --layout dp8 --zero 0 --recompute none "
      "--global-batch 64");
  ExpectOneLineError(r, "does not fit");
  EXPECT_NE(r.err.find("add GPUs (--nodes), raise --zero (to 3) or use --recompute full"),
            std::string::npos)
      << r.err;
  // 70B's states alone over 8 H100s at ZeRO-3 are 16 x 70.6e9 / 8 = 141 GB per GPU: raising
  // the stage or recompute asked at 0 and none would not help, so only more GPUs are offered.
  const RunResult fixed = RunShardwise(
      "train --model llama-3.1-70b --nodes 1 --layout dp8 --recompute none --zero 0 "
      "--global-batch 64");
  ExpectOneLineError(fixed, "does not fit");
  EXPECT_EQ(fixed.err.substr(fixed.err.size() - 21), "; add GPUs (--nodes)\n") << fixed.err;
  // SC21's engine offers ZeRO-0 alone, and 8B's unsharded states do not fit: more GPUs only.
  const RunResult sc21 = RunShardwise(
      "train --engine megatron-lm-sc21 --model llama-3.1-8b --nodes 1 --layout dp8 "
      "--recompute none --global-batch 64");
  ExpectOneLineError(sc21, "does not fit");
  EXPECT_EQ(sc21.err.substr(sc21.err.size() - 21), "; add GPUs (--nodes)\n") << sc21.err;
  // tp8 on one node leaves no replica to shard over and recomputes in full already: 405B's
  // 812 GB of states per GPU (16 bytes x 406e9 / 8) need more GPUs, and only that is offered.
  const RunResult big = RunShardwise("train --model llama-3.1-405b --nodes 1 --no-sizes");
  ExpectOneLineError(big, "does not fit");
  EXPECT_EQ(big.err.substr(big.err.size() - 21), "; add GPUs (--nodes)\n") << big.err;
}

TEST(TrainCli, LayoutMustSpanTheGpus) {
  // pp4 on one 8-GPU node had run on 4 GPUs and priced 4, under a header naming all 8.
  ExpectOneLineError(RunShardwise("train --model llama-3.1-8b --gpus 8 --seq-len 4096 "
                                  "--global-batch 64 --layout pp4 --schedule 1f1b"),
                     "uses 4 of the 8 GPUs of dgx-h100: give --gpus 4, or a layout of 8 GPUs "
                     "such as dp2pp4");
  const RunResult r = RunShardwise(
      "train --model llama-3.1-8b --gpus 4 --seq-len 4096 --global-batch 64 --layout pp4 "
      "--schedule 1f1b --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.Json()["gpus"], 4);
}

TEST(TrainCli, GpuPriceReplacesTheCatalogs) {
  const RunResult r = RunShardwise(
      "train --model llama-3.1-8b --nodes 1 --layout dp8 --global-batch 64 --no-sizes "
      "--usd-per-gpu-hour 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  EXPECT_EQ(j["usd_per_gpu_hour"].get<double>(), 2.0);
  EXPECT_NEAR(j["usd"].get<double>(), 2.0 * j["gpu_hours"].get<double>(),
              1e-9 * j["usd"].get<double>());
  ExpectOneLineError(RunShardwise("train --usd-per-gpu-hour -1"), "--usd-per-gpu-hour");
  ExpectOneLineError(RunShardwise("train --usd-per-gpu-hour inf"), "--usd-per-gpu-hour");
}

TEST(TrainCli, SaysWhereNoMeasurementStandsBehindTheRates) {
  // data/training/megatron-core.json states no MI300X rates and data/gpus/mi300x.json's GEMM
  // fractions are no kernel measurement ("measured": false; fp8 fitted to MLPerf serving rows,
  // bf16 assumed from it).
  const RunResult mi = RunShardwise(
      "train --model llama-3.1-8b --cluster mi300x-8 --global-batch 64 --no-sizes --json");
  ASSERT_EQ(mi.exit_code, 0) << mi.err;
  EXPECT_NE(mi.err.find("warning: megatron-core states no training rates for mi300x"),
            std::string::npos)
      << mi.err;
  ASSERT_EQ(mi.Json()["notes"].size(), 1u);
  EXPECT_TRUE(mi.Json()["measured"].is_null());  // the NVIDIA runs' spread says nothing here
  // The H100 has its own rates; the A100's catalog fractions are measured (cuBLAS).
  for (const char* cluster : {"dgx-h100", "dgx-a100"}) {
    const RunResult r = RunShardwise(std::string("train --model llama-3.1-8b --cluster ") +
                                     cluster + " --global-batch 64 --no-sizes --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << cluster << ": " << r.err;
    EXPECT_TRUE(r.Json()["notes"].empty()) << cluster;
  }
}

TEST(TrainCli, StatesThePublishedRunsSpread) {
  // data/training/megatron-core.json: NVIDIA's runs at 0.79-1.12x the predictions (10th-90th
  // percentile); the band scales the winner's tokens/s per GPU by them, and its wall clock by
  // their inverses.
  const RunResult r = RunShardwise("train --no-sizes --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  const auto& m = j["measured"];
  EXPECT_EQ(m["ratio"]["p10"].get<double>(), 0.79);
  EXPECT_EQ(m["ratio"]["p90"].get<double>(), 1.12);
  const double tps = j["tokens_per_s_per_gpu"].get<double>();
  EXPECT_NEAR(m["tokens_per_s_per_gpu"]["low"].get<double>(), 0.79 * tps, 1e-9 * tps);
  EXPECT_NEAR(m["tokens_per_s_per_gpu"]["high"].get<double>(), 1.12 * tps, 1e-9 * tps);
  const double wall = j["time_s"].get<double>();
  EXPECT_NEAR(m["time_s"]["low"].get<double>(), wall / 1.12, 1e-9 * wall);
  EXPECT_NEAR(m["time_s"]["high"].get<double>(), wall / 0.79, 1e-9 * wall);
  EXPECT_TRUE(m["on_this_gpu"].get<bool>());  // NVIDIA's tables have DGX-H100 rows
  const RunResult text = RunShardwise("train --no-sizes");
  EXPECT_NE(text.out.find("ran at 0.79-1.12x the predicted throughput"), std::string::npos)
      << text.out;
  // SC21's spread, data/training/megatron-lm-sc21.json: 0.96-1.07x on DGX A100 runs.
  const RunResult sc21 = RunShardwise(
      "train --model megatron-gpt-39b --cluster dgx-a100 --nodes 64 --layout tp8pp2dp32 "
      "--seq-len 2048 --global-batch 1536 --engine megatron-lm-sc21 --zero 0 --recompute full "
      "--json");
  ASSERT_EQ(sc21.exit_code, 0) << sc21.err;
  EXPECT_EQ(sc21.Json()["measured"]["ratio"]["p10"].get<double>(), 0.96);
  EXPECT_EQ(sc21.Json()["measured"]["ratio"]["p90"].get<double>(), 1.07);
  EXPECT_TRUE(sc21.Json()["measured"]["on_this_gpu"].get<bool>());
  // Megatron-Core's runs were on Hopper and Blackwell: on an A100 the spread is out of sample.
  const RunResult a100 = RunShardwise("train --cluster dgx-a100 --no-sizes");
  ASSERT_EQ(a100.exit_code, 0) << a100.err;
  EXPECT_NE(a100.out.find("none of them on a100-80g, so out of sample:"), std::string::npos)
      << a100.out;
}

TEST(TrainCli, StatesTheModelsOwnPublishedRuns) {
  // A profile whose runs of llama-3.1-8b were 0.50-0.60x its predictions on H100 (3 runs) and
  // 1.10x on B200 (1 run), beside a 0.79-1.12x spread over all runs.
  nlohmann::json profile =
      nlohmann::json::parse(Slurp(SHARDWISE_SOURCE_DIR "/data/training/megatron-core.json"));
  profile["fields"]["measured_by_model"]["value"] = {
      {"llama-3.1-8b",
       {{"h100-sxm", {{"low", 0.5}, {"high", 0.6}, {"rows", 3}, {"runs", "BF16"}}},
        {"b200", {{"low", 1.1}, {"high", 1.1}, {"rows", 1}, {"runs", "FP8-CS"}}}}}};
  const std::string file = ::testing::TempDir() + "/by_model_profile.json";
  std::ofstream(file) << profile.dump();
  const std::string train = "train --model llama-3.1-8b --no-sizes --engine " + file;
  const RunResult h100 = RunShardwise(train + " --json");
  ASSERT_EQ(h100.exit_code, 0) << h100.err;
  const auto own = h100.Json()["measured"]["this_model"];
  ASSERT_EQ(own.size(), 1u) << own;  // the runs on this GPU only
  EXPECT_EQ(own[0]["gpu"], "h100-sxm");
  EXPECT_EQ(own[0]["rows"], 3);
  EXPECT_EQ(own[0]["ratio"]["low"].get<double>(), 0.5);
  EXPECT_EQ(own[0]["ratio"]["high"].get<double>(), 0.6);
  EXPECT_EQ(own[0]["runs"], "BF16");
  // Below the 0.79-1.12x spread: the winner's tokens/s per GPU at 0.5 and 0.6 of it.
  const double tps = h100.Json()["tokens_per_s_per_gpu"].get<double>();
  char expect[64];
  std::snprintf(expect, sizeof(expect), "so expect %.0f-%.0f tokens/s per GPU here", 0.5 * tps,
                0.6 * tps);
  const RunResult text = RunShardwise(train);
  EXPECT_NE(text.out.find("llama-3.1-8b's runs among them: h100-sxm 0.50-0.60x (3 runs, BF16): "
                          "below the spread, " +
                          std::string(expect)),
            std::string::npos)
      << text.out;
  // On a GPU without runs of the model, every GPU that has them, and no verdict across both.
  const RunResult h200 = RunShardwise(train + " --cluster dgx-h200");
  EXPECT_NE(h200.out.find("runs among them (none on h200): b200 1.10x (1 run, FP8-CS), h100-sxm "
                          "0.50-0.60x (3 runs, BF16)\n"),
            std::string::npos)
      << h200.out;
  // A model without runs states none.
  const RunResult qwen = RunShardwise("train --model qwen3-32b --no-sizes --json --engine " + file);
  ASSERT_EQ(qwen.exit_code, 0) << qwen.err;
  EXPECT_TRUE(qwen.Json()["measured"]["this_model"].empty());
  // A model name that is no catalog model would never be shown: refused.
  profile["fields"]["measured_by_model"]["value"]["llama-3.1-8B"] =
      profile["fields"]["measured_by_model"]["value"]["llama-3.1-8b"];
  std::ofstream(file) << profile.dump();
  ExpectOneLineError(RunShardwise(train), "measured_by_model names 'llama-3.1-8B'");
}

TEST(TrainCli, StatesTheRunsOfTheRoutingItTrains) {
  // A profile whose runs of qwen3-30b-a3b on H100 were 0.48x dropless and 1.00x with token drop:
  // each routing reads its own (the line had merged them as "0.47-1.01x, 1 of 2 with token drop",
  // hiding that the dropless run, what train predicts by default, came in at half).
  nlohmann::json profile =
      nlohmann::json::parse(Slurp(SHARDWISE_SOURCE_DIR "/data/training/megatron-core.json"));
  profile["fields"]["measured_by_model"]["value"] = {
      {"qwen3-30b-a3b dropless",
       {{"h100-sxm", {{"low", 0.48}, {"high", 0.48}, {"rows", 1}, {"runs", "FP8-CS"}}}}},
      {"qwen3-30b-a3b token-drop",
       {{"h100-sxm", {{"low", 1.0}, {"high", 1.0}, {"rows", 1}, {"runs", "FP8-CS"}}}}}};
  const std::string file = ::testing::TempDir() + "/by_routing_profile.json";
  std::ofstream(file) << profile.dump();
  const std::string train =
      "train --model qwen3-30b-a3b --cluster dgx-h100 --nodes 4 --dtype fp8 --no-sizes --top 1 "
      "--engine " +
      file;
  const RunResult dropless = RunShardwise(train + " --json");
  ASSERT_EQ(dropless.exit_code, 0) << dropless.err;
  const nlohmann::json own = dropless.Json()["measured"]["this_model"];
  ASSERT_EQ(own.size(), 1u) << own;
  EXPECT_EQ(own[0]["moe_routing"], "dropless");
  EXPECT_EQ(own[0]["ratio"]["low"].get<double>(), 0.48);
  // Below the 0.79-1.12x spread: the winner's tokens/s per GPU at 0.48 of it.
  const double tps = dropless.Json()["tokens_per_s_per_gpu"].get<double>();
  char expect[160];
  std::snprintf(expect, sizeof(expect),
                "qwen3-30b-a3b's dropless runs among them: h100-sxm 0.48x (1 run, FP8-CS): below "
                "the spread, so expect about %.0f tokens/s per GPU",
                0.48 * tps);
  const RunResult text = RunShardwise(train);
  EXPECT_NE(text.out.find(expect), std::string::npos) << text.out;
  // A routing on a dense model's runs would never be shown: refused.
  nlohmann::json dense = profile;
  dense["fields"]["measured_by_model"]["value"] = {
      {"llama-3.1-8b dropless",
       {{"h100-sxm", {{"low", 0.9}, {"high", 0.9}, {"rows", 1}, {"runs", "BF16"}}}}}};
  const std::string dense_file = ::testing::TempDir() + "/dense_routing_profile.json";
  std::ofstream(dense_file) << dense.dump();
  ExpectOneLineError(RunShardwise("train --no-sizes --engine " + dense_file),
                     "measured_by_model keys 'llama-3.1-8b dropless', but llama-3.1-8b is dense: "
                     "name its runs 'llama-3.1-8b'");
  const RunResult dropped = RunShardwise(train + " --moe-token-drop");
  EXPECT_NE(dropped.out.find("qwen3-30b-a3b's token-drop runs among them: h100-sxm 1.00x (1 run, "
                             "FP8-CS)\n"),
            std::string::npos)
      << dropped.out;
}

TEST(TrainCli, SaysWhatItLeavesOutOfTheModel) {
  // Kimi-K2.5's config.json nests a text model beside a vision tower; DeepSeek-V3.2's sparse
  // attention trains dense in its warm-up stage only. Both had been costed without a word.
  const RunResult kimi =
      RunShardwise("train --model kimi-k2.5 --nodes 64 --no-sizes --top 1 --json");
  ASSERT_EQ(kimi.exit_code, 0) << kimi.err;
  EXPECT_NE(kimi.err.find("note: kimi-k2.5: language model only"), std::string::npos) << kimi.err;
  EXPECT_EQ(kimi.Json()["notes"][0],
            "kimi-k2.5: language model only (text_config); the vision "
            "tower is not modelled");
  const RunResult dsa =
      RunShardwise("train --model deepseek-v3.2 --nodes 64 --no-sizes --top 1 --json");
  ASSERT_EQ(dsa.exit_code, 0) << dsa.err;
  EXPECT_NE(dsa.err.find("the indexer's sparse stage (top 2048 keys) is not modelled"),
            std::string::npos)
      << dsa.err;
  // DeepSeek-V3's config declares one too (num_nextn_predict_layers).
  const RunResult v3 = RunShardwise("train --model deepseek-v3 --nodes 64 --no-sizes --top 1");
  ASSERT_EQ(v3.exit_code, 0) << v3.err;
  EXPECT_NE(v3.err.find("deepseek-v3: its config declares 1 MTP module(s)"), std::string::npos)
      << v3.err;
  // Its config declares one MTP module: named until --mtp-layers trains it.
  EXPECT_NE(dsa.err.find("declares 1 MTP module(s), not trained here; --mtp-layers 1"),
            std::string::npos)
      << dsa.err;
  const RunResult mtp =
      RunShardwise("train --model deepseek-v3.2 --nodes 64 --no-sizes --top 1 --mtp-layers 1");
  ASSERT_EQ(mtp.exit_code, 0) << mtp.err;
  EXPECT_EQ(mtp.err.find("MTP"), std::string::npos) << mtp.err;
}

TEST(TrainCli, NamesTheMoeRoutingAndMtpLayers) {
  // --moe-token-drop and --mtp-layers change the answer (the all-to-all dispatcher, an MTP
  // module's layer) but had been recorded nowhere: compare saw two runs with the same settings.
  const std::string qwen =
      "train --model qwen3-30b-a3b --cluster dgx-b200 --nodes 2 --no-sizes --top 1";
  const RunResult dropless = RunShardwise(qwen + " --json");
  const RunResult dropped = RunShardwise(qwen + " --moe-token-drop --json");
  ASSERT_EQ(dropless.exit_code, 0) << dropless.err;
  ASSERT_EQ(dropped.exit_code, 0) << dropped.err;
  EXPECT_EQ(dropless.Json()["moe_routing"], "dropless");
  EXPECT_EQ(dropped.Json()["moe_routing"], "token-drop");
  EXPECT_EQ(dropped.Json()["mtp_layers"], 0);
  const RunResult text = RunShardwise(qwen + " --moe-token-drop");
  EXPECT_NE(text.out.find(", bf16, token-drop MoE; MFU"), std::string::npos) << text.out;
  // A dense model has no routing.
  const RunResult dense = RunShardwise("train --no-sizes --top 1 --json");
  ASSERT_EQ(dense.exit_code, 0) << dense.err;
  EXPECT_TRUE(dense.Json()["moe_routing"].is_null());
  const RunResult mtp =
      RunShardwise("train --model deepseek-v3 --nodes 64 --no-sizes --top 1 --mtp-layers 1 --json");
  ASSERT_EQ(mtp.exit_code, 0) << mtp.err;
  EXPECT_EQ(mtp.Json()["mtp_layers"], 1);
  const RunResult mtp_text =
      RunShardwise("train --model deepseek-v3 --nodes 64 --no-sizes --top 1 --mtp-layers 1");
  EXPECT_NE(mtp_text.out.find("dropless MoE, 1 MTP layer; MFU"), std::string::npos) << mtp_text.out;
  // compare names the setting that differs.
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/dropless.json") << dropless.out;
  std::ofstream(dir + "/dropped.json") << dropped.out;
  const RunResult cmp =
      RunShardwise("compare " + dir + "/dropless.json " + dir + "/dropped.json --json");
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  const nlohmann::json inputs = cmp.Json()["inputs"];
  bool routing = false;
  for (const auto& row : inputs) {
    routing |= row["name"] == "MoE routing" && row["a"] == "dropless" && row["b"] == "token-drop";
  }
  EXPECT_TRUE(routing) << inputs;
}

TEST(TrainCli, SmallRunsAndSmallModelsReadRight) {
  // One token costs one whole step; its dollars at $0.001 per GPU-hour are a few millionths,
  // written out, not as 4.4e-05 or $0.
  const RunResult one =
      RunShardwise("train --no-sizes --top 1 --tokens 1 --usd-per-gpu-hour 0.001 --json");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto j = one.Json();
  EXPECT_EQ(j["steps"], 1);
  const RunResult text =
      RunShardwise("train --no-sizes --top 1 --tokens 1 --usd-per-gpu-hour 0.001");
  ASSERT_NE(text.out.find("\n1 token: 1 step,"), std::string::npos) << text.out;
  const std::string line = text.out.substr(text.out.find(" GPU-hours, $"));
  EXPECT_EQ(line.find("e-0"), std::string::npos) << line;
  EXPECT_EQ(line.find("e+0"), std::string::npos) << line;
  EXPECT_NE(line.find("at $0.0010/GPU-hour"), std::string::npos) << line;
  // Qwen3-30B-A3B's TP rule of thumb gives under two ways: no TP degree stays compute-bound.
  const RunResult moe = RunShardwise("train --model qwen3-30b-a3b --nodes 2 --no-sizes --top 1");
  ASSERT_EQ(moe.exit_code, 0) << moe.err;
  EXPECT_NE(moe.out.find("TP stays compute-bound at no degree across nodes"), std::string::npos)
      << moe.out;
  // tp8 alone on 8 GPUs has no data-parallel replica to shard over: the searched stage is 0.
  const RunResult tp8 = RunShardwise(
      "train --model llama-3.1-8b --nodes 1 --layout tp8 --global-batch 8 --no-sizes --json");
  ASSERT_EQ(tp8.exit_code, 0) << tp8.err;
  EXPECT_EQ(tp8.Json()["zero"], 0);
}

TEST(TrainCli, WhySaysWhereTheRunnerUpLosesAndGains) {
  // The part of the step where the second layout spends most beyond the first, and the part where
  // it spends most less, read here from both layouts' step_parts.
  const RunResult r = RunShardwise("train --no-sizes --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  const auto& a = j["ranked"][0]["step_parts"];
  const auto& b = j["ranked"][1]["step_parts"];
  ASSERT_EQ(a.size(), b.size());
  size_t loses = 0, gains = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double more = b[i]["time_s"].get<double>() - a[i]["time_s"].get<double>();
    if (more > b[loses]["time_s"].get<double>() - a[loses]["time_s"].get<double>()) loses = i;
    if (-more > a[gains]["time_s"].get<double>() - b[gains]["time_s"].get<double>()) gains = i;
  }
  const std::string why = j["why"];
  EXPECT_NE(why.find("loses on " + b[loses]["part"].get<std::string>() + ": "), std::string::npos)
      << why;
  if (a[gains]["time_s"].get<double>() > b[gains]["time_s"].get<double>()) {
    EXPECT_NE(why.find("gains on " + b[gains]["part"].get<std::string>() + ": "), std::string::npos)
        << why;
  }
  EXPECT_EQ(why.find(" 0.0 us"), std::string::npos) << why;  // a part one lacks is "none"
}

TEST(TrainCli, BadValues) {
  ExpectOneLineError(RunShardwise("train --schedule gpipe"), "--schedule");
  ExpectOneLineError(RunShardwise("train --recompute some"), "--recompute");
  ExpectOneLineError(RunShardwise("train --tokens lots"), "--tokens");
  ExpectOneLineError(RunShardwise("train --seq-len 0"), "--seq-len");
  ExpectOneLineError(RunShardwise("train --dtype int4"), "--dtype");
  ExpectOneLineError(RunShardwise("train --model gpt2 --seq-len 4096 --nodes 1 --global-batch 8"),
                     "position table");
  ExpectOneLineError(RunShardwise("train --dtype fp4"), "FP4 (NVFP4, MXFP4) training is not");
  ExpectOneLineError(RunShardwise("train --dtype fp8 --fp8-recipe nvfp4"), "--fp8-recipe");
  ExpectOneLineError(RunShardwise("train --recompute full:x"), "--recompute");
  // A blank value had read as not given (the catalog's price, the engine's rate).
  ExpectOneLineError(RunShardwise("train --usd-per-gpu-hour ''"), "--usd-per-gpu-hour: is empty");
  ExpectOneLineError(RunShardwise("train --interruption-rate ''"), "--interruption-rate: is empty");
  // Token dropping is a mixture-of-experts option: on a dense model it had been ignored.
  ExpectOneLineError(RunShardwise("train --moe-token-drop"),
                     "--moe-token-drop needs a mixture-of-experts model; llama-3.1-8b is dense");
  // A context-parallel layout too short for the sequence is told to raise cp, not to add it.
  const RunResult cp =
      RunShardwise("train --seq-len 131072 --layout dp4cp2 --global-batch 64 --no-sizes");
  ExpectOneLineError(cp, "does not fit");
  EXPECT_NE(cp.err.find("more context-parallel ranks (cp above 2 in --layout)"), std::string::npos)
      << cp.err;
  // A sequence beyond the model's context (Llama 3.1: 131,072 tokens) had been costed.
  ExpectOneLineError(RunShardwise("train --seq-len 200000 --no-sizes"),
                     "--seq-len 200000 exceeds llama-3.1-8b's context of 131072 tokens "
                     "(max_position_embeddings); use a shorter --seq-len or a model with a longer "
                     "context");
  ExpectOneLineError(RunShardwise("train --engine megatron-cor"),
                     "did you mean 'megatron-core' or 'megatron-lm-sc21'? (built-in training "
                     "engines: megatron-core, megatron-lm-sc21, or a path to a profile .json)");
}

TEST(TrainCli, Fp8RecipeTheGpuLacks) {
  // MXFP8 is Blackwell's block-scaled format; the profile states its rate on the Blackwell GPUs
  // NVIDIA's tables ran, and names them.
  ExpectOneLineError(RunShardwise("train --model llama-3.1-8b --nodes 1 --layout dp8 "
                                  "--global-batch 64 --dtype fp8 --fp8-recipe mxfp8"),
                     "states no FP8 mxfp8 GEMM rate for h100-sxm (only for b200, gb200, gb300)");
  // Without --layout the search refused every layout for that reason and said "the global batch
  // must divide into micro-batches x DP (try a multiple of 8)" of a batch of 512.
  ExpectOneLineError(RunShardwise("train --dtype fp8 --fp8-recipe mxfp8"),
                     "states no FP8 mxfp8 GEMM rate for h100-sxm");
  // The B300 has MXFP8 tensor cores; the profile has no rate for it (no table row ran on one):
  // the error had blamed its tensor cores.
  ExpectOneLineError(RunShardwise("train --cluster dgx-b300 --dtype fp8 --fp8-recipe mxfp8"),
                     "states no FP8 mxfp8 GEMM rate for b300 (only for b200, gb200, gb300); "
                     "choose another --fp8-recipe or --dtype bf16, or give the rate in an engine "
                     "profile (--engine FILE)");
  ExpectOneLineError(RunShardwise("train --dtype fp8 --cluster dgx-a100"),
                     "a100-80g has no fp8 tensor cores");
  ExpectOneLineError(RunShardwise("train --pipeline-layout garbage"), "--pipeline-layout");
  // An empty one had read as not given: the default split ran.
  ExpectOneLineError(RunShardwise("train --pipeline-layout ''"), "--pipeline-layout");
}

TEST(TrainCli, WhatTheSc21EngineDidNotHave) {
  // Megatron-LM of SC21 trained in 16 bits with DP, TP and PP: FP8 and context parallelism had
  // been accepted under it, and an MoE model's search ranked expert-parallel layouts.
  ExpectOneLineError(RunShardwise("train --engine megatron-lm-sc21 --dtype fp8 --no-sizes"),
                     "engine 'megatron-lm-sc21' does not train in fp8 (its profile's 'dtypes'); "
                     "use --dtype bf16, or another --engine");
  // Its memory remedies offer no context parallelism either.
  const RunResult longer =
      RunShardwise("train --engine megatron-lm-sc21 --seq-len 131072 --global-batch 64 --no-sizes");
  ExpectOneLineError(longer, "or shorten --seq-len");
  EXPECT_EQ(longer.err.find("context parallelism"), std::string::npos) << longer.err;
  ExpectOneLineError(RunShardwise("train --engine megatron-lm-sc21 --layout dp4cp2 --seq-len 8192 "
                                  "--global-batch 64 --no-sizes"),
                     "engine 'megatron-lm-sc21' has no context parallelism");
  ExpectOneLineError(RunShardwise("train --engine megatron-lm-sc21 --model qwen3-30b-a3b "
                                  "--layout dp8ep8 --no-sizes"),
                     "has no expert parallelism");
  const RunResult moe =
      RunShardwise("train --engine megatron-lm-sc21 --model qwen3-30b-a3b --no-sizes --json");
  ASSERT_EQ(moe.exit_code, 0) << moe.err;
  const nlohmann::json ranked = moe.Json()["ranked"];
  ASSERT_FALSE(ranked.empty());
  for (const auto& l : ranked) {
    EXPECT_EQ(l["ep"], 1) << l["layout"];
    EXPECT_EQ(l["cp"], 1) << l["layout"];
  }
}

TEST(TrainCli, PipelineSplitThatCannotHoldTheLayers) {
  // Llama-3.1-8B has 32 layers; the layout places 4 in 2 chunks where pp 4 needs 4 chunks.
  ExpectOneLineError(RunShardwise("train --nodes 1 --layout pp4dp2 --global-batch 64 "
                                  "--pipeline-layout 'Ett|ttL'"),
                     "pp x vp = 4 x 1 needs 4");
  ExpectOneLineError(RunShardwise("train --nodes 8 --layout pp64 --global-batch 64 "
                                  "--micro-batch 1"),
                     "pp (64) exceeds");
  ExpectOneLineError(RunShardwise("train --nodes 2 --layout pp16 --global-batch 64 "
                                  "--schedule interleaved:4 --micro-batch 1"),
                     "more than 32 layers can fill");
  ExpectOneLineError(RunShardwise("train --nodes 1 --layout pp4dp2 --global-batch 64 "
                                  "--first-stage-layers 7 --last-stage-layers 8"),
                     "must share them evenly");
}

TEST(TrainCli, UnevenPipelineAndGoodputInJson) {
  // Llama-3.1-405B's 126 layers over pp 8 x interleaved:8 (NVIDIA's H100 recipe); tokens/s per
  // GPU, MFU and HFU apart, and the job's goodput with interruptions.
  const RunResult r = RunShardwise(
      "train --model llama-3.1-405b --cluster dgx-h100 --nodes 128 --layout dp8tp8cp2pp8 "
      "--seq-len 8192 --global-batch 512 --micro-batch 1 --schedule interleaved:8 --zero 1 "
      "--dtype fp8 --tokens 15T --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  EXPECT_EQ(j["pipeline_layout"].get<std::string>().substr(0, 6), "Et|tt|");
  EXPECT_EQ(j["precision"], "fp8-current");
  EXPECT_NEAR(j["tokens_per_s_per_gpu"].get<double>(), j["tokens_per_s"].get<double>() / 1024,
              1e-9 * j["tokens_per_s"].get<double>());
  EXPECT_LE(j["mfu"].get<double>(), j["hfu"].get<double>());
  EXPECT_GT(j["interruptions"].get<double>(), 0);
  EXPECT_GT(j["goodput"].get<double>(), 0.5);
  EXPECT_LT(j["goodput"].get<double>(), 1.0);
  EXPECT_NEAR(j["time_s"].get<double>(), j["compute_s"].get<double>() / j["goodput"].get<double>(),
              1e-6 * j["time_s"].get<double>());
  EXPECT_GT(j["checkpoint_interval_s"].get<double>(), 0);
  // Without interruptions there is no checkpoint interval: 0 (a number, as schema 4 has it).
  const RunResult never = RunShardwise("train --no-sizes --top 1 --interruption-rate 0 --json");
  ASSERT_EQ(never.exit_code, 0) << never.err;
  EXPECT_EQ(never.Json()["checkpoint_interval_s"], 0.0);
  EXPECT_EQ(never.Json()["goodput"], 1.0);
}

}  // namespace
}  // namespace shardwise::testing
