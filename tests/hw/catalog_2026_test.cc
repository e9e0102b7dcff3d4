// The 2026 GPUs and systems: each parses with a source per number, and the datasheet numbers
// shardwise derives (per-GPU shares of rack figures, dense from sparse) match the datasheets.
#include <gtest/gtest.h>

#include "shardwise/hw/cluster.h"
#include "shardwise/hw/gpu.h"

namespace shardwise {
namespace {

GpuSpec LoadG(const std::string& name) {
  auto g = LoadGpu(name);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return g.value();
}

ClusterSpec LoadC(const std::string& name) {
  auto c = LoadCluster(name);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.value();
}

TEST(Catalog2026, Gb300IsBlackwellUltra) {
  // GB300 NVL72 datasheet: FP4 1,080 PFLOP/s dense over 72 GPUs = 15 PFLOP/s each, 1.5x the
  // GB200's 10 (GB200 NVL72 datasheet: 1,440 sparse / 72 / 2); 21 TB HBM3e / 72 ~ 288 GB.
  const GpuSpec ultra = LoadG("gb300");
  const GpuSpec gb200 = LoadG("gb200");
  EXPECT_DOUBLE_EQ(ultra.PeakFlopsPerS(Dtype::kFp4), 1080e15 / 72);
  EXPECT_DOUBLE_EQ(ultra.PeakFlopsPerS(Dtype::kFp4) / gb200.PeakFlopsPerS(Dtype::kFp4), 1.5);
  EXPECT_DOUBLE_EQ(ultra.hbm_bytes, 288e9);
  EXPECT_FALSE(ultra.calibration_measured);  // no Blackwell Ultra measurement: assumed
}

TEST(Catalog2026, B300FromTheHgxDatasheet) {
  // HGX B300, 8 GPUs: FP4 108 PFLOP/s dense, BF16 36 PFLOP/s sparse -> 13.5 and 2.25 per GPU.
  const GpuSpec g = LoadG("b300");
  EXPECT_DOUBLE_EQ(g.PeakFlopsPerS(Dtype::kFp4), 108e15 / 8);
  EXPECT_DOUBLE_EQ(g.PeakFlopsPerS(Dtype::kBf16), 36e15 / 8 / 2);
  EXPECT_DOUBLE_EQ(g.nic_bytes_per_s, 800e9 / 8);  // ConnectX-8, 800 Gb/s
}

TEST(Catalog2026, AmdParts) {
  // MI355X datasheet: 288 GB, 8 TB/s, MXFP4 10,066.3 TFLOP/s dense; mxfp4 weights run at that
  // rate, NVFP4 (not an MI355X format) falls back to fp8. MI325X: 256 GB at 6 TB/s.
  const GpuSpec mi355 = LoadG("mi355x");
  EXPECT_DOUBLE_EQ(mi355.hbm_bytes, 288e9);
  EXPECT_EQ(mi355.ComputeDtypeFor(Dtype::kMxfp4), Dtype::kMxfp4);
  EXPECT_EQ(mi355.ComputeDtypeFor(Dtype::kFp4), Dtype::kFp8);
  EXPECT_DOUBLE_EQ(mi355.PeakFlopsPerS(Dtype::kMxfp4), 10066.3e12);
  // 7 links x 153.6 GB/s bidirectional / 2 = 537.6 GB/s per direction.
  EXPECT_DOUBLE_EQ(mi355.scale_up_bytes_per_s, 7 * 153.6e9 / 2);
  EXPECT_DOUBLE_EQ(LoadG("mi325x").hbm_bytes_per_s, 6e12);
  // On Blackwell, mxfp4 weights run on the fp4 tensor cores.
  EXPECT_EQ(LoadG("b300").ComputeDtypeFor(Dtype::kMxfp4), Dtype::kFp4);
}

TEST(Catalog2026, H20AndRtxPro6000) {
  // H20 product brief: 96 GB, 4.0 TB/s, BF16 148 TFLOP/s dense; RTX PRO 6000 Blackwell: 96 GB
  // GDDR7 at 1,597 GB/s on PCIe Gen5 x16 (64 GB/s per direction), no NVLink.
  const GpuSpec h20 = LoadG("h20");
  EXPECT_DOUBLE_EQ(h20.PeakFlopsPerS(Dtype::kBf16), 148e12);
  EXPECT_DOUBLE_EQ(h20.hbm_bytes_per_s, 4e12);
  const GpuSpec rtx = LoadG("rtx-pro-6000");
  EXPECT_DOUBLE_EQ(rtx.hbm_bytes_per_s, 1.597e12);
  EXPECT_DOUBLE_EQ(rtx.scale_up_bytes_per_s, 64e9);
}

TEST(Catalog2026, Clusters) {
  struct Row {
    const char* cluster;
    const char* gpu;
    int64_t gpus_per_node;
    bool mesh;
    bool in_network;
  };
  for (const Row& r :
       {Row{"dgx-b300", "b300", 8, false, true}, Row{"gb300-nvl72", "gb300", 72, false, true},
        Row{"hgx-h20", "h20", 8, false, true}, Row{"mi355x-8", "mi355x", 8, true, false},
        Row{"mi325x-8", "mi325x", 8, true, false},
        Row{"rtx-pro-6000-8", "rtx-pro-6000", 8, false, false}}) {
    const ClusterSpec c = LoadC(r.cluster);
    EXPECT_EQ(c.gpu.name, r.gpu) << r.cluster;
    EXPECT_EQ(c.GpusPerNode(), r.gpus_per_node) << r.cluster;
    EXPECT_EQ(c.levels[0].mesh, r.mesh) << r.cluster;
    EXPECT_EQ(c.levels[0].in_network_reduction, r.in_network) << r.cluster;
    // Scale-up egress comes from the GPU's datasheet link rate.
    EXPECT_DOUBLE_EQ(c.levels[0].egress_bytes_per_s, c.gpu.scale_up_bytes_per_s) << r.cluster;
  }
}

}  // namespace
}  // namespace shardwise
