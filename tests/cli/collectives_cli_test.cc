// End-to-end: `clusters` and `collectives` as a user runs them, and their bad input.
#include <gtest/gtest.h>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

TEST(ClustersCli, ListAndShow) {
  const RunResult list = RunShardwise("clusters");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("h100-superpod"), std::string::npos);
  const RunResult show = RunShardwise("clusters --show h100-superpod");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(show.Json()["levels"].size(), 3u);
  // The dump is a valid cluster file: use it as one.
  std::system(("echo '" + show.out + "' > /tmp/shardwise_pod.json").c_str());
  const RunResult reuse = RunShardwise("collectives --cluster /tmp/shardwise_pod.json --json");
  EXPECT_EQ(reuse.exit_code, 0) << reuse.err;
}

TEST(CollectivesCli, DefaultsPrintNcclTestsColumns) {
  const RunResult r = RunShardwise("collectives");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* column :
       {"size (B)", "count", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "algorithm"}) {
    EXPECT_NE(r.out.find(column), std::string::npos) << column;
  }
}

TEST(CollectivesCli, JsonRows) {
  const RunResult r = RunShardwise(
      "collectives --cluster dgx-h100 --nodes 2 --op all-to-all --min-bytes 1M --max-bytes 4M "
      "--json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = r.Json()["rows"];
  ASSERT_EQ(rows.size(), 3u);  // 1M, 2M, 4M
  for (const auto& row : rows) {
    for (const char* key :
         {"bytes", "time_s", "algbw_bytes_per_s", "busbw_bytes_per_s", "algorithm"}) {
      EXPECT_TRUE(row.contains(key)) << key;
    }
    // nccl-tests: all-to-all busbw = algbw x (n-1)/n, n = 16.
    EXPECT_NEAR(row["busbw_bytes_per_s"].get<double>() / row["algbw_bytes_per_s"].get<double>(),
                15.0 / 16.0, 1e-9);
  }
}

TEST(CollectivesCli, ImportThenProfile) {
  const std::string profile = "/tmp/shardwise_test_profile.json";
  const RunResult imp =
      RunShardwise("collectives --cluster hgx-h100-200g --nodes 2 --import " SHARDWISE_SOURCE_DIR
                   "/tests/data/nccl-tests-2x8-h100-allreduce.log --output " +
                   profile + " --json");
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  EXPECT_EQ(imp.Json()["profile"]["level"], "network");
  const RunResult use = RunShardwise("collectives --cluster hgx-h100-200g --nodes 2 --profile " +
                                     profile + " --min-bytes 8G --max-bytes 8G --json");
  ASSERT_EQ(use.exit_code, 0) << use.err;
  // The log's last row: 8 GiB all-reduce in 47,743 us (in place).
  EXPECT_NEAR(use.Json()["rows"][0]["time_s"].get<double>() / 47743e-6, 1.0, 0.10);
}

TEST(CollectivesCliErrors, BadInput) {
  ExpectOneLineError(RunShardwise("collectives --cluster dgx-h101"), "unknown cluster 'dgx-h101'");
  ExpectOneLineError(RunShardwise("collectives --gpus 9"), "more than cluster 'dgx-h100' has (8)");
  ExpectOneLineError(RunShardwise("collectives --nodes 0"), "--nodes must be between 1");
  ExpectOneLineError(RunShardwise("collectives --cluster h100-superpod --nodes 2"), "use --gpus N");
  ExpectOneLineError(RunShardwise("collectives --min-bytes 0"), "--min-bytes 0 is out of range");
  ExpectOneLineError(RunShardwise("collectives --max-bytes 1P"), "--max-bytes '1P' is not a size");
  ExpectOneLineError(RunShardwise("collectives --min-bytes 1G --max-bytes 1M"), "must not exceed");
  ExpectOneLineError(RunShardwise("collectives --factor 1"), "--factor must be between");
  ExpectOneLineError(RunShardwise("collectives --op all-scatter"), "unknown collective op");
  ExpectOneLineError(RunShardwise("collectives --nodes 2 --algo nvls"),
                     "nvls needs in-switch reduction");
  ExpectOneLineError(RunShardwise("collectives --gpus 1"), "at least 2 GPUs");
  ExpectOneLineError(RunShardwise("collectives --import /nonexistent.log"), "cannot open file");
  ExpectOneLineError(RunShardwise("collectives --profile /nonexistent.json"), "cannot open file");
}

TEST(CollectivesCliErrors, MalformedTopologyFile) {
  std::system(
      "echo '{\"name\": \"x\", \"gpu\": \"h100-sxm\", \"levels\": [' > "
      "/tmp/shardwise_bad_topo.json");
  ExpectOneLineError(RunShardwise("collectives --cluster /tmp/shardwise_bad_topo.json"),
                     "/tmp/shardwise_bad_topo.json: not valid JSON");
  std::system(
      "echo '{\"name\": \"x\", \"gpu\": \"h100-sxm\", \"launch_latency_s\": 1e-5, "
      "\"sources\": {\"launch_latency_s\": \"s\"}, \"levels\": [{\"name\": \"nv\", "
      "\"fan_out\": -8}]}' > /tmp/shardwise_bad_topo2.json");
  ExpectOneLineError(RunShardwise("collectives --cluster /tmp/shardwise_bad_topo2.json"),
                     "'fan_out' must not be negative");
}

}  // namespace
}  // namespace shardwise::testing

namespace shardwise::testing {
namespace {

TEST(CollectivesCli, EpDispatchAsDeepEpReportsIt) {
  // DeepEP normal internode kernels, EP32 on 4 H800 nodes, DeepSeek-V3 routing: 58 GB/s RDMA
  // (DeepEP docs/legacy.md). The auto choice for 4,096 tokens is node dedup, bound by RDMA.
  const RunResult r = RunShardwise(
      "collectives --cluster hgx-h800 --nodes 4 --op ep-dispatch --tokens 4096 --hidden 7168 "
      "--topk 8 --groups 4 --topk-groups 4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  for (const char* key : {"time_s", "bottleneck_bytes_per_s", "bottleneck_link", "algorithm"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["algorithm"], "node-dedup");
  EXPECT_EQ(j["bottleneck_link"], "rdma");
  EXPECT_NEAR(j["bottleneck_bytes_per_s"].get<double>() / 58e9, 1.0, 0.15);
  // The text form lists every algorithm and marks the choice.
  const RunResult text = RunShardwise(
      "collectives --cluster hgx-h800 --nodes 4 --op ep-combine --algo low-latency --tokens 128");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("low-latency"), std::string::npos);
  EXPECT_NE(text.out.find("<- asked"), std::string::npos);
}

TEST(CollectivesCli, EpDispatchBadInput) {
  ExpectOneLineError(RunShardwise("collectives --nodes 2 --op ep-dispatch --algo ring"),
                     "unknown EP algorithm");
  ExpectOneLineError(RunShardwise("collectives --nodes 2 --op ep-dispatch --groups 7"), "--groups");
  ExpectOneLineError(RunShardwise("collectives --nodes 2 --op ep-dispatch --tokens nan"),
                     "--tokens");
  ExpectOneLineError(RunShardwise("collectives --nodes 2 --op ep-dispatch --dtype int4"),
                     "--dtype");
  // A fraction of a token, and more destinations per token than GPUs, were accepted.
  ExpectOneLineError(RunShardwise("collectives --nodes 2 --op ep-dispatch --tokens 1.5"),
                     "--tokens must be a whole number");
  ExpectOneLineError(RunShardwise("collectives --op all-to-all-topk --topk 100 --gpus 8"),
                     "--topk is 100: each token goes to 1 to 8 of the 8 GPUs");
}

// collectives --json names its command, as every result does (report had called it "not a
// shardwise result").
TEST(CollectivesCli, JsonNamesItsCommand) {
  EXPECT_EQ(RunShardwise("collectives --json").Json()["command"], "collectives");
  EXPECT_EQ(RunShardwise("collectives --nodes 2 --op ep-dispatch --json").Json()["command"],
            "collectives");
}

}  // namespace
}  // namespace shardwise::testing
