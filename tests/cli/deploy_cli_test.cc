// End-to-end: from a plan to a launch command (--emit, --emit-dir, --emit-rank).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

std::string TempDir() {
  char name[] = "/tmp/shardwise_emit_XXXXXX";
  return mkdtemp(name) ? name : "/tmp";
}

TEST(PlanEmit, PrintsTheTopLayoutsCommand) {
  const RunResult j = RunShardwise("plan --json --emit vllm --engine vllm");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto top = j.Json()["layouts"][0];
  const RunResult r = RunShardwise("plan --emit vllm --engine vllm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("vllm serve meta-llama/Llama-3.1-70B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--tensor-parallel-size " + std::to_string(top["tp"].get<int>())),
            std::string::npos);
  // The engine settings the plan served the deployment with are the ones written: sequences and
  // the token budget per attention rank (engine_settings in the deployment's JSON).
  const auto settings = j.Json()["deployment"]["pools"][0]["engine_settings"];
  EXPECT_NE(r.out.find("--max-num-seqs " +
                       std::to_string(settings["max_num_seqs_per_rank"].get<int>()) + " "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--max-num-batched-tokens " +
                       std::to_string(settings["max_batched_tokens_per_rank"].get<int>()) + " "),
            std::string::npos)
      << r.out;
  const auto launch = j.Json()["launch"];
  EXPECT_EQ(launch["engine"], "vllm");
  EXPECT_EQ(launch["deployment"], "aggregated");
  EXPECT_EQ(launch["name"], top["layout"]);
}

TEST(PlanEmit, ChosenRankAndDirectory) {
  const std::string dir = TempDir();
  const RunResult j = RunShardwise("plan --json --top 3");
  const std::string second = j.Json()["layouts"][1]["layout"];
  const RunResult r = RunShardwise("plan --top 3 --emit trtllm --emit-rank 2 --emit-dir " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream script(dir + "/launch_trtllm.sh");
  std::string text((std::istreambuf_iterator<char>(script)), {});
  EXPECT_NE(text.find("layout " + second), std::string::npos) << text;
  EXPECT_EQ(access((dir + "/launch_trtllm.sh").c_str(), X_OK), 0);
  EXPECT_TRUE(std::filesystem::exists(dir + "/trtllm_extra.yaml"));
  // Its own files are replaced; a user's file is not.
  EXPECT_EQ(RunShardwise("plan --emit trtllm --emit-dir " + dir).exit_code, 0);
  std::ofstream(dir + "/launch_vllm.sh") << "#!/bin/sh\necho mine\n";
  ExpectOneLineError(RunShardwise("plan --emit vllm --emit-dir " + dir), "--force");
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(PlanEmit, TheWinningDisaggregatedDeployment) {
  // At a 20 ms TPOT SLO the planner's split of the default cluster beats its best aggregated
  // layout; --emit then writes that deployment: each pool's workers with its own layout.
  const RunResult r = RunShardwise("plan --max-tpot-ms 20 --emit sglang --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  ASSERT_EQ(j["verdict"]["winner"], "disaggregated") << j["verdict"]["why"];
  const auto& d = j["disaggregated"];
  const auto& launch = j["launch"];
  EXPECT_EQ(launch["deployment"], "disaggregated");
  EXPECT_EQ(launch["name"], d["name"]);
  ASSERT_EQ(launch["pools"].size(), 2u);
  EXPECT_EQ(launch["pools"][0]["role"], "prefill");
  EXPECT_EQ(launch["pools"][0]["layout"], d["prefill"]["layout"]);
  EXPECT_EQ(launch["pools"][0]["workers"], d["prefill"]["workers"]);
  EXPECT_EQ(launch["pools"][1]["layout"], d["decode"]["layout"]);
  EXPECT_EQ(launch["pools"][1]["workers"], d["decode"]["workers"]);
  // Each pool's launch carries the engine settings the plan served it with.
  for (size_t i = 0; i < 2; ++i) {
    const auto settings = j["deployment"]["pools"][i]["engine_settings"];
    EXPECT_EQ(launch["pools"][i]["max_batched_tokens"], settings["max_batched_tokens_per_rank"]);
    EXPECT_EQ(launch["pools"][i]["chunked_prefill"], settings["chunked_prefill"]);
    EXPECT_EQ(launch["pools"][i]["max_num_seqs"].get<int64_t>() %
                  settings["max_num_seqs_per_rank"].get<int64_t>(),
              0);
  }
  const std::string text = launch["files"][0]["text"];
  EXPECT_EQ(Count(text, "--disaggregation-mode prefill"), d["prefill"]["workers"].get<size_t>());
  EXPECT_EQ(Count(text, "--disaggregation-mode decode"), d["decode"]["workers"].get<size_t>());
  EXPECT_NE(text.find("sglang_router.launch_router"), std::string::npos) << text;
  // --emit-rank names an aggregated layout, and --emit-deployment aggregated the best one.
  for (const char* pick : {"--emit-rank 1", "--emit-deployment aggregated"}) {
    const RunResult a =
        RunShardwise(std::string("plan --max-tpot-ms 20 --emit sglang --json ") + pick);
    ASSERT_EQ(a.exit_code, 0) << a.err;
    EXPECT_EQ(a.Json()["launch"]["deployment"], "aggregated") << pick;
    EXPECT_EQ(a.Json()["launch"]["name"], a.Json()["layouts"][0]["layout"]) << pick;
  }
}

TEST(PlanEmit, AskedForTheDisaggregatedDeployment) {
  // The default plan keeps the aggregated layout; asked for, the split is emitted all the same.
  const RunResult w = RunShardwise("plan --emit trtllm --json");
  ASSERT_EQ(w.exit_code, 0) << w.err;
  EXPECT_EQ(w.Json()["launch"]["deployment"], w.Json()["verdict"]["winner"]);
  const std::string dir = TempDir();
  const RunResult r =
      RunShardwise("plan --emit trtllm --emit-deployment disaggregated --emit-dir " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"launch_trtllm.sh", "trtllm_disagg.yaml", "trtllm_ctx_extra.yaml",
                           "trtllm_gen_extra.yaml"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + name)) << name;
  }
  std::ifstream script(dir + "/launch_trtllm.sh");
  const std::string text((std::istreambuf_iterator<char>(script)), {});
  EXPECT_NE(text.find("trtllm-serve disaggregated"), std::string::npos) << text;
}

TEST(PlanEmit, DeploymentBadInput) {
  ExpectOneLineError(RunShardwise("plan --emit vllm --emit-deployment disaggregated --disagg off"),
                     "--disagg off");
  ExpectOneLineError(RunShardwise("plan --emit vllm --emit-deployment disaggregated --emit-rank 2"),
                     "--emit-rank");
  ExpectOneLineError(RunShardwise("plan --emit-deployment aggregated"), "needs --emit");
  ExpectOneLineError(RunShardwise("plan --emit vllm --emit-deployment split"), "--emit-deployment");
  ExpectOneLineError(RunShardwise("plan --emit dynamo --emit-disagg"),
                     "use --emit-deployment disaggregated");
}

TEST(PlanEmit, BadInput) {
  ExpectOneLineError(RunShardwise("plan --emit vlm"), "did you mean 'vllm'");
  ExpectOneLineError(RunShardwise("plan --top 2 --emit vllm --emit-rank 5"), "--emit-rank 5");
  ExpectOneLineError(RunShardwise("plan --emit-dir /tmp/x"), "--emit-dir needs --emit");
}

TEST(Compare, TwoCommandLinesAndTwoFiles) {
  const RunResult r = RunShardwise(
      "compare \"plan --model llama-3.1-8b --cluster dgx-h100\" "
      "\"plan --model llama-3.1-8b --cluster dgx-a100\" --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  EXPECT_EQ(j["compared"], "plan");
  bool cluster_differs = false;
  for (const auto& row : j["inputs"]) cluster_differs |= row["name"] == "cluster";
  EXPECT_TRUE(cluster_differs);
  EXPECT_FALSE(j["verdict"].get<std::string>().empty());
  // The same two results from files give the same metrics.
  const std::string dir = TempDir();
  std::ofstream(dir + "/a.json") << RunShardwise("plan --model llama-3.1-8b --json").out;
  std::ofstream(dir + "/b.json")
      << RunShardwise("plan --model llama-3.1-8b --cluster dgx-a100 --json").out;
  const RunResult f = RunShardwise("compare " + dir + "/a.json " + dir + "/b.json --json");
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(f.Json()["metrics"], j["metrics"]);
  const RunResult text = RunShardwise("compare " + dir + "/a.json " + dir + "/b.json");
  EXPECT_NE(text.out.find("B / A"), std::string::npos);
  EXPECT_NE(text.out.find("why:"), std::string::npos);
}

TEST(Compare, TrainResults) {
  // train --json had no "command": compare and report refused it.
  const RunResult a = RunShardwise("train --no-sizes --json");
  const RunResult b = RunShardwise("train --no-sizes --dtype fp8 --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const RunResult r =
      RunShardwise("compare \"train --no-sizes\" \"train --no-sizes --dtype fp8\" --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  EXPECT_EQ(j["compared"], "train");
  bool spread = false;  // each side's published-runs spread among the reasons
  for (const auto& reason : j["reasons"]) {
    spread |= reason.get<std::string>().find("published runs at 0.79-1.12x") != std::string::npos;
  }
  EXPECT_TRUE(spread) << j["reasons"];
  const auto& first = j["metrics"][0];
  EXPECT_EQ(first["name"], "tokens/s per GPU");
  EXPECT_NEAR(first["b_over_a"].get<double>(),
              b.Json()["tokens_per_s_per_gpu"].get<double>() /
                  a.Json()["tokens_per_s_per_gpu"].get<double>(),
              1e-9);
  const std::string dir = TempDir();
  std::ofstream(dir + "/train.json") << a.out;
  const RunResult page = RunShardwise("report " + dir + "/train.json --html " + dir + "/t.html");
  ASSERT_EQ(page.exit_code, 0) << page.err;
  std::ifstream html(dir + "/t.html");
  const std::string text((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("Where the step goes"), std::string::npos);
  // The spread of NVIDIA's runs (0.79-1.12x, data/training/megatron-core.json) is on the page.
  EXPECT_NE(text.find("ran at 0.79-1.12x the predicted throughput"), std::string::npos);
  EXPECT_NE(text.find(a.Json()["layout"].get<std::string>()), std::string::npos);
}

TEST(Compare, BadInput) {
  ExpectOneLineError(RunShardwise("compare /nonexistent.json \"plan\""), "no such file");
  ExpectOneLineError(RunShardwise("compare \"plan --top 1\" \"price\""), "cannot compare a plan");
  // Shell operators in a command line stay words of it: nothing runs but shardwise, whose own
  // error comes back on the one line. (A character list had refused them, and with them the
  // '|' and '*' of a pipeline layout.)
  const std::string dir = TempDir();
  // (Single quotes keep the test's own shell from running them first.)
  const RunResult injected = RunShardwise("compare 'plan; touch " + dir + "/ran' 'plan'");
  ExpectOneLineError(injected, "A: 'shardwise plan; touch");
  EXPECT_NE(injected.err.find("failed: unknown command 'plan;'"), std::string::npos)
      << injected.err;
  EXPECT_FALSE(std::ifstream(dir + "/ran").good());
  ExpectOneLineError(RunShardwise("compare 'plan --top 1' 'plan $(touch " + dir + "/ran)'"),
                     "B: 'shardwise plan $(touch");
  EXPECT_FALSE(std::ifstream(dir + "/ran").good());
  ExpectOneLineError(RunShardwise("compare \"plan --model 'x\" \"plan\""), "never closed");
  ExpectOneLineError(RunShardwise("compare '' plan"), "A is empty");
}

// Metric values are the results' numbers; a train result's totals for different token counts
// are weighed per billion tokens; a pipeline layout's '|' and '*' reach train.
TEST(Compare, NumbersStayNumbersAndTokenTotalsArePerBillion) {
  const RunResult r =
      RunShardwise("compare \"train --no-sizes\" \"train --no-sizes --tokens 1T\" --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  const RunResult a = RunShardwise("train --no-sizes --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto ja = a.Json();
  bool found = false;
  for (const auto& m : j["metrics"]) {
    EXPECT_TRUE(m["a"].is_number()) << m.dump();
    if (m["name"] == "$ per billion tokens") {
      found = true;
      // By hand: the default run's $ over its 300B tokens, x 1e9.
      EXPECT_NEAR(m["a"].get<double>(), ja["usd"].get<double>() / 300e9 * 1e9, 1e-9);
    }
    EXPECT_NE(m["name"], "$ for the tokens");  // not like for like across token counts
  }
  EXPECT_TRUE(found) << j["metrics"];
  EXPECT_EQ(j["verdict"], "A and B are level on tokens/s per GPU");
  const RunResult uneven = RunShardwise(
      "compare \"train --no-sizes --layout dp4pp2 --zero 1 --pipeline-layout 'Et*15|t*17L'\" "
      "\"train --no-sizes --layout dp4pp2 --zero 1\" --json");
  ASSERT_EQ(uneven.exit_code, 0) << uneven.err;
  bool layout_differs = false;  // the split asked for against Megatron-Core's own
  const nlohmann::json inputs = uneven.Json()["inputs"];
  for (const auto& row : inputs) {
    // Megatron's notation written out: E, 15 layers | 17 layers, L.
    layout_differs |= row["name"] == "pipeline layout" &&
                      row["a"] == "E" + std::string(15, 't') + "|" + std::string(17, 't') + "L";
  }
  EXPECT_TRUE(layout_differs) << inputs;
}

}  // namespace
}  // namespace shardwise::testing
