// Cluster files whose fan-outs multiply past 1,000,000 GPUs (or overflow int64) are refused,
// also when --nodes scales a level above a wide one (which made planning loop for ever).
#include <gtest/gtest.h>

#include "shardwise/hw/cluster.h"

namespace shardwise {
namespace {

nlohmann::json Cluster(std::vector<int64_t> fan_outs, const char* nodes_level = nullptr) {
  nlohmann::json levels = nlohmann::json::array();
  for (size_t i = 0; i < fan_outs.size(); ++i) {
    levels.push_back(
        {{"name", "l" + std::to_string(i)},
         {"fan_out", fan_outs[i]},
         {"efficiency", 0.8},
         {"hop_latency_s", 1e-6},
         {"ramp_bytes", 1e6},
         {"sources", {{"efficiency", "test"}, {"hop_latency_s", "test"}, {"ramp_bytes", "test"}}}});
  }
  nlohmann::json c = {{"name", "c"},
                      {"gpu", "h100-sxm"},
                      {"launch_latency_s", 1e-5},
                      {"sources", {{"launch_latency_s", "test"}}},
                      {"levels", levels}};
  if (nodes_level) c["nodes_level"] = nodes_level;
  return c;
}

TEST(ClusterLimits, FanOutProductsAreChecked) {
  // 65536^4 = 2^64 wraps to 0 in int64; 1e6 x 1e6 x 10 x 922338 would go negative.
  for (const auto& fan_outs : {std::vector<int64_t>{65536, 65536, 65536, 65536},
                               std::vector<int64_t>{1000000, 1000000, 10, 922338}}) {
    const StatusOr<ClusterSpec> c = ParseClusterSpec(Cluster(fan_outs), "c.json");
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().message(),
              "c.json: the levels' fan-outs multiply to more than 1000000 GPUs; check the fan_out "
              "values (and --nodes)");
  }
  EXPECT_TRUE(ParseClusterSpec(Cluster({8, 125000}), "c.json").ok());  // exactly 1e6
}

TEST(ClusterLimits, NodesCannotScaleBeyondTheLimit) {
  // 8 GPUs x 1 node x 125000: 1e6 GPUs as written; --nodes 2 would double it.
  const StatusOr<ClusterSpec> c = ParseClusterSpec(Cluster({8, 1, 125000}, "l1"), "c.json");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const StatusOr<ClusterSpec> scaled = WithNodes(*c, 2);
  ASSERT_FALSE(scaled.ok());
  EXPECT_EQ(scaled.status().message(),
            "cluster 'c' with --nodes 2: the levels' fan-outs multiply to more than 1000000 GPUs; "
            "check the fan_out values (and --nodes)");
}

}  // namespace
}  // namespace shardwise
