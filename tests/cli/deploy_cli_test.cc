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
  const RunResult j = RunShardwise("plan --json --emit vllm");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto top = j.Json()["layouts"][0];
  const RunResult r = RunShardwise("plan --emit vllm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("vllm serve meta-llama/Llama-3.1-70B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--tensor-parallel-size " + std::to_string(top["tp"].get<int>())),
            std::string::npos);
  EXPECT_NE(r.out.find("--max-num-seqs " + std::to_string(top["batch"].get<int>())),
            std::string::npos);
  const auto launch = j.Json()["launch"];
  EXPECT_EQ(launch["engine"], "vllm");
  EXPECT_EQ(launch["layout"], top["layout"]);
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

TEST(PlanEmit, DynamoDisaggregatedTakesTheFastestPrefillLayout) {
  const RunResult r = RunShardwise("plan --emit dynamo --emit-disagg --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  // The prefill workers run the ranked layout with the lowest TTFT, found here from the list.
  std::string fastest;
  double best_ttft_s = 1e300;
  for (const auto& l : j["layouts"]) {
    if (l["ttft_s"].get<double>() < best_ttft_s) {
      best_ttft_s = l["ttft_s"];
      fastest = l["layout"];
    }
  }
  EXPECT_EQ(j["launch"]["prefill_layout"], fastest);
  EXPECT_EQ(j["launch"]["layout"], j["layouts"][0]["layout"]);
  const std::string text = j["launch"]["files"][0]["text"];
  EXPECT_NE(text.find("--is-prefill-worker"), std::string::npos) << text;
  ExpectOneLineError(RunShardwise("plan --emit vllm --emit-disagg"), "--emit dynamo");
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

TEST(Compare, BadInput) {
  ExpectOneLineError(RunShardwise("compare /nonexistent.json \"plan\""), "no such file");
  ExpectOneLineError(RunShardwise("compare \"plan --top 1\" \"price\""), "cannot compare a plan");
  ExpectOneLineError(RunShardwise("compare \"plan; rm -rf x\" \"plan\""),
                     "neither a result file nor");
}

}  // namespace
}  // namespace shardwise::testing
