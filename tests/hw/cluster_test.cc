// Cluster topologies: the built-in catalog, scaling, and bad topology files.
#include "shardwise/hw/cluster.h"

#include <gtest/gtest.h>

namespace shardwise {
namespace {

TEST(ClusterCatalog, HasTheRequiredClusters) {
  for (const char* name :
       {"dgx-h100", "dgx-h200", "dgx-b200", "dgx-a100", "hgx-h800", "gb200-nvl72", "h100-superpod",
        "hgx-h100-roce", "l40s-pcie-8", "mi300x-8"}) {
    auto c = LoadCluster(name);
    ASSERT_TRUE(c.ok()) << name << ": " << c.status().message();
    EXPECT_GE(c->num_gpus, 8);
  }
}

TEST(ClusterCatalog, SuperPodShape) {
  // How to Think About GPUs: 128 nodes of 8 GPUs = 1,024; scalable units of 32 nodes; 4 SUs.
  const ClusterSpec c = LoadCluster("h100-superpod").value();
  EXPECT_EQ(c.num_gpus, 1024);
  EXPECT_EQ(c.GpusPerUnit(1), 256);
}

TEST(ClusterCatalog, Nvl72IsOneNvlinkDomain) {
  const ClusterSpec c = LoadCluster("gb200-nvl72").value();
  EXPECT_EQ(c.GpusPerNode(), 72);
  EXPECT_DOUBLE_EQ(c.PerGpuEgressBytesPerS(0), 900e9);  // NVLink 5: 1.8 TB/s bidirectional
}

TEST(ClusterCatalog, Nvl72HostsAreTraysOfFourGpus) {
  // NVIDIA's GB200/GB300 NVL72 pages: 18 compute trays of 4 GPUs each (data/clusters/SOURCES.md).
  for (const char* name : {"gb200-nvl72", "gb300-nvl72"}) {
    const ClusterSpec c = LoadCluster(name).value();
    EXPECT_EQ(c.GpusPerHost(), 4) << name;
    EXPECT_EQ(ParseClusterSpec(ClusterToJson(c), "dump.json").value().GpusPerHost(), 4);
  }
  EXPECT_EQ(LoadCluster("dgx-h100").value().GpusPerHost(), 8);  // a DGX is one host
}

TEST(ClusterFileErrors, GpusPerHostMustDivideTheDomainAndCiteASource) {
  auto with = [](const char* extra) {
    return ParseClusterSpec(
        nlohmann::json::parse(std::string(R"({"name": "x", "gpu": "h100-sxm",
          "launch_latency_s": 0, "sources": {"launch_latency_s": "s")") +
                              extra + R"(, "levels": [{"name": "nvlink", "fan_out": 8,
          "efficiency": 0.8, "hop_latency_s": 1e-6, "ramp_bytes": 1e6, "sources":
          {"efficiency": "x", "hop_latency_s": "y", "ramp_bytes": "z"}}]})"),
        "my.json");
  };
  ASSERT_TRUE(with(R"(, "gpus_per_host": "a tray"}, "gpus_per_host": 4)").ok());
  EXPECT_NE(with(R"(, "gpus_per_host": "a tray"}, "gpus_per_host": 3)")
                .status()
                .message()
                .find("gpus_per_host 3 must divide the 8 GPUs of level 'nvlink'"),
            std::string::npos);
  EXPECT_NE(with(R"(}, "gpus_per_host": 4)")
                .status()
                .message()
                .find("'gpus_per_host' has no entry in \"sources\""),
            std::string::npos);
}

TEST(ClusterScaling, NodesAndGpus) {
  const ClusterSpec c = LoadCluster("dgx-h100").value();
  EXPECT_EQ(WithNodes(c, 4).value().num_gpus, 32);
  EXPECT_EQ(WithGpus(WithNodes(c, 4).value(), 20).value().num_gpus, 20);
  auto too_many = WithGpus(c, 9);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("more than cluster 'dgx-h100' has (8)"),
            std::string::npos)
      << too_many.status().message();
  auto fixed = WithNodes(LoadCluster("h100-superpod").value(), 2);
  ASSERT_FALSE(fixed.ok());
  EXPECT_NE(fixed.status().message().find("use --gpus N"), std::string::npos);
}

TEST(ClusterFile, RoundTripsThroughJson) {
  const ClusterSpec c = LoadCluster("h100-superpod").value();
  auto again = ParseClusterSpec(ClusterToJson(c), "dump.json");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->num_gpus, 1024);
  EXPECT_DOUBLE_EQ(again->PerGpuEgressBytesPerS(2), 25e9);
}

TEST(ClusterFileErrors, MissingCalibrationSource) {
  const auto j = nlohmann::json::parse(R"({"name": "x", "gpu": "h100-sxm",
    "launch_latency_s": 1e-5, "sources": {"launch_latency_s": "measured"},
    "levels": [{"name": "nvlink", "fan_out": 8, "efficiency": 0.8, "hop_latency_s": 1e-6,
                "ramp_bytes": 1e6, "sources": {"efficiency": "x", "hop_latency_s": "y"}}]})");
  auto c = ParseClusterSpec(j, "my.json");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "my.json level 'nvlink': 'ramp_bytes' has no entry in \"sources\"; every catalog "
            "number needs its source");
}

TEST(ClusterFileErrors, BadShapes) {
  auto no_levels = ParseClusterSpec(
      nlohmann::json::parse(R"({"name": "x", "gpu": "h100-sxm", "launch_latency_s": 0,
        "sources": {"launch_latency_s": "s"}, "levels": []})"),
      "my.json");
  EXPECT_EQ(no_levels.status().message(),
            "my.json: 'levels' must be a non-empty list, innermost first");
  auto bad_gpu =
      ParseClusterSpec(nlohmann::json::parse(R"({"name": "x", "gpu": "h999"})"), "my.json");
  EXPECT_NE(bad_gpu.status().message().find("unknown GPU 'h999'"), std::string::npos);
}

TEST(ClusterProfile, AppliesToTheNamedLevel) {
  LevelProfile p;
  p.cluster = "dgx-h100";
  p.level = "network";
  p.efficiency = 0.5;
  p.hop_latency_s = 1e-5;
  p.ramp_bytes = 1e6;
  p.ramp_exponent = 1;
  p.source = "test";
  auto c = ApplyProfile(LoadCluster("dgx-h100").value(), p);
  ASSERT_TRUE(c.ok());
  EXPECT_DOUBLE_EQ(c->levels[1].efficiency, 0.5);
  p.level = "spine";
  EXPECT_FALSE(ApplyProfile(LoadCluster("dgx-h100").value(), p).ok());
  auto parsed = ParseProfile(ProfileToJson(p), "p.json");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->level, "spine");
}

}  // namespace
}  // namespace shardwise
