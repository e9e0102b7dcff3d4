// Driver device names (as cudaGetDeviceProperties and nvidia-smi print them on these parts)
// against the built-in catalog.
#include "shardwise/hw/gpu_match.h"

#include <gtest/gtest.h>

namespace shardwise {
namespace {

std::string Match(std::string_view driver_name) {
  const auto gpus = LoadBuiltinGpus();
  EXPECT_TRUE(gpus.ok());
  const auto g = MatchDriverGpuName(driver_name, *gpus);
  return g.ok() ? g->name : "error: " + g.status().message();
}

TEST(GpuMatch, DriverNamesOfCatalogParts) {
  EXPECT_EQ(Match("NVIDIA H100 80GB HBM3"), "h100-sxm");  // H100 SXM5
  EXPECT_EQ(Match("NVIDIA H100 PCIe"), "h100-pcie");
  EXPECT_EQ(Match("NVIDIA H200"), "h200");
  EXPECT_EQ(Match("NVIDIA A100-SXM4-80GB"), "a100-80g");
  EXPECT_EQ(Match("NVIDIA GeForce RTX 4090"), "rtx-4090");
  EXPECT_EQ(Match("NVIDIA L40S"), "l40s");
}

TEST(GpuMatch, UnknownAndAmbiguousNamesSaySo) {
  EXPECT_EQ(Match("Tesla T4"),
            "error: GPU 'Tesla T4' is not in the catalog (see 'shardwise gpus'; add one with a "
            "GPU file)");
  // The H100 NVL shares only "NVIDIA H100" with both H100 entries.
  EXPECT_NE(
      Match("NVIDIA H100 NVL").find("matches several catalog GPUs equally (h100-pcie, h100-sxm)"),
      std::string::npos);
}

TEST(GpuMatch, SingleNodeClusterHoldsTheRanks) {
  const GpuSpec h100 = LoadGpu("h100-sxm").value();
  const auto c = SingleNodeClusterOf(h100, 2);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->gpu.name, "h100-sxm");
  EXPECT_EQ(c->num_gpus, 2);
  // No built-in cluster is made of RTX 4090s.
  EXPECT_FALSE(SingleNodeClusterOf(LoadGpu("rtx-4090").value(), 1).ok());
}

}  // namespace
}  // namespace shardwise
