// The GPU catalog: every built-in GPU parses with a source per number; datasheet and
// calibration numbers checked against their published values.
#include "shardwise/hw/gpu.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace shardwise {
namespace {

GpuSpec Load(const std::string& name) {
  auto g = LoadGpu(name);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return g.value();
}

TEST(GpuCatalog, HasTheRequiredParts) {
  for (const char* name : {"h100-sxm", "h100-pcie", "h200", "h800", "b200", "gb200", "a100-80g",
                           "mi300x", "l40s", "rtx-4090"}) {
    const GpuSpec g = Load(name);
    EXPECT_EQ(g.name, name);
    EXPECT_GT(g.hbm_bytes, 0);
    EXPECT_FALSE(g.sources.at("peak_flops_per_s").empty());
  }
}

TEST(GpuCatalog, H100Datasheet) {
  // NVIDIA H100 SXM datasheet: BF16 1,979 TFLOP/s with sparsity (989.4 dense), 3.35 TB/s,
  // NVLink 900 GB/s bidirectional.
  const GpuSpec g = Load("h100-sxm");
  EXPECT_DOUBLE_EQ(g.PeakFlopsPerS(Dtype::kBf16), 989.4e12);
  EXPECT_DOUBLE_EQ(g.hbm_bytes_per_s, 3.35e12);
  EXPECT_DOUBLE_EQ(2 * g.scale_up_bytes_per_s, 900e9);
}

TEST(GpuCatalog, H100GemmShapeModelReproducesPublishedMeasurements) {
  // calibration.md (Azure ND H100 v5, cuBLASLt FP8): 1,290.1 / 1,377.3 / 1,382.2 TFLOP/s at
  // 8192^3 / 16384^3 / 32768^3; bf16 8192^3 matmul 769-798 TFLOP/s (PyTorch). One asymptotic
  // fraction per dtype plus the shape model must land within 2% of each point.
  const GpuSpec g = Load("h100-sxm");
  const double fp8 = g.PeakFlopsPerS(Dtype::kFp8);
  for (const auto& [n, measured] : std::vector<std::pair<double, double>>{
           {8192, 1290.1e12}, {16384, 1377.3e12}, {32768, 1382.2e12}}) {
    EXPECT_NEAR(fp8 * g.GemmEfficiency(Dtype::kFp8, n, n, n) / measured, 1.0, 0.02) << n;
  }
  const double bf16 =
      g.PeakFlopsPerS(Dtype::kBf16) * g.GemmEfficiency(Dtype::kBf16, 8192, 8192, 8192);
  EXPECT_GE(bf16, 769e12 * 0.99);
  EXPECT_LE(bf16, 798e12 * 1.01);
  // calibration.md: HBM STREAM copy 2.90 TB/s.
  EXPECT_NEAR(g.AchievableHbmBytesPerS() / 2.90e12, 1.0, 0.01);
  EXPECT_TRUE(g.calibration_measured);
}

TEST(GpuCatalog, GemmEfficiencyFallsForSmallShapes) {
  // Wave quantisation by hand: m = 512, n = 4096 on 132 SMs is 4 x 16 = 64 tiles of 128 x 256,
  // split 2 ways along k (floor(132 / 64) = 2) = 128 of 132 SMs busy; k per split = 2048.
  // fp8 (overhead 500): k / (k + 500) = 0.8038, efficiency 0.718 x 128/132 x 0.8038 = 0.5596.
  // bf16 (overhead 260): k / (k + 260) = 0.8873, efficiency 0.840 x 128/132 x 0.8873 = 0.7228.
  const GpuSpec g = Load("h100-sxm");
  EXPECT_NEAR(g.GemmEfficiency(Dtype::kFp8, 512, 4096, 4096),
              0.718 * 128.0 / 132.0 * 2048.0 / 2548.0, 1e-9);
  EXPECT_NEAR(g.GemmEfficiency(Dtype::kBf16, 512, 4096, 4096),
              0.840 * 128.0 / 132.0 * 2048.0 / 2308.0, 1e-9);
}

TEST(GpuCatalog, EveryBuiltInGpuStatesItsBoardPowerWithASource) {
  auto gpus = LoadBuiltinGpus();
  ASSERT_TRUE(gpus.ok()) << gpus.status().message();
  ASSERT_FALSE(gpus->empty());
  for (const GpuSpec& g : *gpus) {
    EXPECT_GT(g.board_power_w, 0) << g.name;
    EXPECT_LE(g.board_power_w, 2000) << g.name;  // no board today is rated above 1.4 kW
    EXPECT_FALSE(g.sources.at("board_power_w").empty()) << g.name;
  }
  // Datasheets: NVIDIA H100 SXM5 up to 700 W; AMD Instinct MI300X 750 W TBP.
  EXPECT_DOUBLE_EQ(Load("h100-sxm").board_power_w, 700);
  EXPECT_DOUBLE_EQ(Load("mi300x").board_power_w, 750);
}

TEST(GpuCatalog, TileOverheadIsOneNumberOrOnePerDtype) {
  nlohmann::json j = nlohmann::json::parse(R"({"name": "x", "peak_flops_per_s": {"bf16": 1e14},
    "hbm_bytes": 1e10, "hbm_bytes_per_s": 1e12, "scale_up_bytes_per_s": 1e11,
    "nic_bytes_per_s": 1e10, "usd_per_gpu_hour": 1, "sm_count": 100,
    "achievable": {"gemm_fraction": {"bf16": 0.8}, "hbm_fraction": 0.8},
    "sources": {"peak_flops_per_s": "s", "hbm_bytes": "s", "hbm_bytes_per_s": "s",
                "scale_up_bytes_per_s": "s", "nic_bytes_per_s": "s", "usd_per_gpu_hour": "s",
                "achievable": "s", "sm_count": "s"}})");
  ASSERT_TRUE(ParseGpuSpec(j, "test").ok()) << ParseGpuSpec(j, "test").status().message();
  j["achievable"]["gemm_tile_overhead_k"] = 300;
  GpuSpec one = ParseGpuSpec(j, "test").value();
  EXPECT_EQ(one.TileOverheadK(Dtype::kBf16), 300);
  EXPECT_EQ(one.TileOverheadK(Dtype::kFp8), 300);  // no fp8 entry: bf16's
  j["achievable"]["gemm_tile_overhead_k"] = {{"bf16", 260}, {"fp8", 500}};
  GpuSpec per = ParseGpuSpec(j, "test").value();
  EXPECT_EQ(per.TileOverheadK(Dtype::kBf16), 260);
  EXPECT_EQ(per.TileOverheadK(Dtype::kFp8), 500);
  EXPECT_EQ(per.TileOverheadK(Dtype::kFp16), 260);
  j["achievable"]["gemm_tile_overhead_k"] = {{"bf16", -1}};
  EXPECT_FALSE(ParseGpuSpec(j, "test").ok());
  j["achievable"]["gemm_tile_overhead_k"] = 1e9;
  EXPECT_FALSE(ParseGpuSpec(j, "test").ok());
  j["achievable"]["gemm_tile_overhead_k"] = 300;
  // Board power is optional (0: unknown), bounded, and needs its source when given.
  EXPECT_EQ(ParseGpuSpec(j, "test").value().board_power_w, 0);
  j["board_power_w"] = 700;
  EXPECT_FALSE(ParseGpuSpec(j, "test").ok());  // no source
  j["sources"]["board_power_w"] = "s";
  EXPECT_EQ(ParseGpuSpec(j, "test").value().board_power_w, 700);
  j["board_power_w"] = -1;
  EXPECT_FALSE(ParseGpuSpec(j, "test").ok());
  j["board_power_w"] = 1e9;
  EXPECT_FALSE(ParseGpuSpec(j, "test").ok());
}

TEST(GpuCatalog, A100CalibrationMatchesPublishedMeasurements) {
  // calibration.md: A100 cuBLASLt FP16 253.7 / 256.5 TFLOP/s at 8192^3 / 16384^3; STREAM copy
  // 1.61 TB/s.
  const GpuSpec g = Load("a100-80g");
  const double peak = g.PeakFlopsPerS(Dtype::kBf16);
  EXPECT_NEAR(peak * g.GemmEfficiency(Dtype::kBf16, 8192, 8192, 8192) / 253.7e12, 1.0, 0.03);
  EXPECT_NEAR(peak * g.GemmEfficiency(Dtype::kBf16, 16384, 16384, 16384) / 256.5e12, 1.0, 0.03);
  EXPECT_NEAR(g.AchievableHbmBytesPerS() / 1.61e12, 1.0, 0.01);
}

TEST(GpuCatalog, H100CapacityIsWhatTheDriverReports) {
  // nvidia-smi on an H100 80GB HBM3 (SXM) reports 81,559 MiB (measured for this project,
  // docs/validation.md), the total the engines size their KV budgets from; "80 GB" rounds it.
  EXPECT_DOUBLE_EQ(Load("h100-sxm").hbm_bytes, 81559.0 * 1024 * 1024);
}

TEST(GpuCatalog, KernelLatencyStatesItsProvenance) {
  // Fitted on the H100 (a separate subset of the serving file), assumed elsewhere; the
  // calibrated fractions are measured where the file says so.
  const GpuSpec h100 = Load("h100-sxm");
  EXPECT_GT(h100.kernel_latency_s, 0);
  EXPECT_EQ(h100.ProvenanceOf("kernel_latency_s"), Provenance::kFitted);
  EXPECT_EQ(h100.ProvenanceOf("hbm_fraction"), Provenance::kMeasured);
  EXPECT_EQ(Load("h200").ProvenanceOf("kernel_latency_s"), Provenance::kAssumed);
  EXPECT_EQ(h100.ProvenanceOf("hbm_bytes"), Provenance::kMeasured);
}

TEST(GpuCatalogErrors, UnknownProvenanceIsRejected) {
  nlohmann::json j = nlohmann::json::parse(R"({"name": "x", "peak_flops_per_s": {"bf16": 1e14},
    "hbm_bytes": 1e10, "hbm_bytes_per_s": 1e12, "scale_up_bytes_per_s": 1e11,
    "nic_bytes_per_s": 1e10, "usd_per_gpu_hour": 1, "sm_count": 100,
    "achievable": {"gemm_fraction": {"bf16": 0.8}, "hbm_fraction": 0.8},
    "provenance": {"hbm_fraction": "guessed"}})");
  auto g = ParseGpuSpec(j, "my-gpu.json");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "my-gpu.json: provenance of 'hbm_fraction': provenance 'guessed' must be measured, "
            "fitted or assumed");
}

TEST(GpuCatalog, ComputeDtypeWidensWhenUnsupported) {
  // No fp4 on Hopper: the MXFP4/int4 kernels (Marlin, Machete, W4A16) dequantise to bf16.
  EXPECT_EQ(Load("h100-sxm").ComputeDtypeFor(Dtype::kMxfp4), Dtype::kBf16);
  EXPECT_EQ(Load("h100-sxm").ComputeDtypeFor(Dtype::kInt4), Dtype::kBf16);
  EXPECT_EQ(Load("b200").ComputeDtypeFor(Dtype::kMxfp4), Dtype::kFp4);
  EXPECT_EQ(Load("a100-80g").ComputeDtypeFor(Dtype::kFp8), Dtype::kBf16);  // no fp8 on Ampere
}

TEST(GpuCatalogErrors, MissingSourceIsRejected) {
  nlohmann::json j = nlohmann::json::parse(R"({"name": "x", "peak_flops_per_s": {"bf16": 1e14},
    "hbm_bytes": 1e10, "hbm_bytes_per_s": 1e12, "scale_up_bytes_per_s": 1e11,
    "nic_bytes_per_s": 1e10, "usd_per_gpu_hour": 1, "sm_count": 100,
    "achievable": {"gemm_fraction": {"bf16": 0.8}, "hbm_fraction": 0.8},
    "sources": {"peak_flops_per_s": "datasheet", "hbm_bytes": "datasheet"}})");
  auto g = ParseGpuSpec(j, "my-gpu.json");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "my-gpu.json: 'hbm_bytes_per_s' has no entry in \"sources\"; every catalog number "
            "needs its source");
}

TEST(GpuCatalogErrors, FractionAboveOne) {
  nlohmann::json j = nlohmann::json::parse(R"({"name": "x", "peak_flops_per_s": {"bf16": 1e14},
    "hbm_bytes": 1e10, "hbm_bytes_per_s": 1e12, "scale_up_bytes_per_s": 1e11,
    "nic_bytes_per_s": 1e10, "usd_per_gpu_hour": 1, "sm_count": 100,
    "achievable": {"gemm_fraction": {"bf16": 1.5}, "hbm_fraction": 0.8}})");
  auto g = ParseGpuSpec(j, "my-gpu.json");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("gemm_fraction.bf16 must be a number in (0, 1]"),
            std::string::npos)
      << g.status().message();
}

TEST(GpuCatalogErrors, UnknownSuggests) {
  auto g = LoadGpu("h100");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("did you mean"), std::string::npos);
  EXPECT_NE(g.status().message().find("'h100-sxm'"), std::string::npos) << g.status().message();
}

}  // namespace
}  // namespace shardwise
