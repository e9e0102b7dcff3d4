#include "shardwise/hw/gpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shardwise/catalog/embedded.h"
#include "shardwise/common/json_fields.h"

namespace shardwise {

double GpuSpec::PeakFlopsPerS(Dtype dtype) const {
  auto it = peak_flops_per_s.find(dtype);
  SW_CHECK(it != peak_flops_per_s.end(), "PeakFlopsPerS of an unsupported dtype");
  return it->second;
}

double GpuSpec::AchievableFlopsPerS(Dtype dtype) const {
  auto it = gemm_fraction.find(dtype);
  // A dtype without its own measurement uses the bf16 fraction (tensor-core GEMMs behave alike).
  const double fraction = it != gemm_fraction.end() ? it->second : gemm_fraction.at(Dtype::kBf16);
  return PeakFlopsPerS(dtype) * fraction;
}

double GpuSpec::GemmEfficiency(Dtype dtype, double m, double n, double k) const {
  return GemmEfficiency(GemmCalibrationFor(dtype), m, n, k);
}

GpuSpec::GemmCalibration GpuSpec::GemmCalibrationFor(Dtype dtype) const {
  auto it = gemm_fraction.find(dtype);
  return {it != gemm_fraction.end() ? it->second : gemm_fraction.at(Dtype::kBf16),
          TileOverheadK(dtype)};
}

double GpuSpec::GemmEfficiency(const GemmCalibration& calibration, double m, double n,
                               double k) const {
  // Output tiles of a Hopper/Blackwell-class tensor-core GEMM (CUTLASS's default 128 x 256;
  // 64 rows, the smallest MMA, when m is small).
  constexpr double kTileN = 256;
  const double tile_m = m <= 64 ? 64 : 128;
  const double sms = static_cast<double>(sm_count);
  const double tiles = std::ceil(m / tile_m) * std::ceil(n / kTileN);
  const double split_k = std::max(1.0, std::floor(sms / tiles));
  const double units = tiles * split_k;
  const double waves = std::ceil(units / sms);
  const double k_per_unit = k / split_k;
  return calibration.fraction * units / (waves * sms) * k_per_unit /
         (k_per_unit + calibration.tile_overhead_k);
}

double GpuSpec::TileOverheadK(Dtype dtype) const {
  for (Dtype d : {dtype, Dtype::kBf16}) {
    auto it = gemm_tile_overhead_k.find(d);
    if (it != gemm_tile_overhead_k.end()) return it->second;
  }
  return 0;
}

std::string GpuSpec::GemmFractionKey(Dtype dtype) {
  return "gemm_fraction." + std::string(DtypeName(dtype));
}

Provenance GpuSpec::ProvenanceOf(const std::string& key) const {
  auto it = provenance.find(key);
  if (it != provenance.end()) return it->second;
  // One format's fraction ("gemm_fraction.fp8") is as the fractions are unless the file says.
  if (key.starts_with("gemm_fraction.")) return ProvenanceOf("gemm_fraction");
  if (key == "gemm_fraction" || key == "hbm_fraction" || key == "gemm_tile_overhead_k") {
    return calibration_measured ? Provenance::kMeasured : Provenance::kAssumed;
  }
  return key == "kernel_latency_s" ? Provenance::kAssumed : Provenance::kMeasured;
}

Dtype GpuSpec::ComputeDtypeFor(Dtype weights) const {
  // Widening order for a weight format the tensor cores lack.
  static const std::map<Dtype, std::vector<Dtype>> kWider = {
      {Dtype::kFp4, {Dtype::kFp4, Dtype::kFp8, Dtype::kBf16}},
      // Hopper's int4 and MXFP4 kernels (Marlin, Machete, TensorRT-LLM's W4A16 and gpt-oss MoE
      // kernels) dequantise the weights to bf16 and multiply in bf16: no FP8 step in between.
      // MI355X multiplies MXFP4 natively.
      {Dtype::kMxfp4, {Dtype::kMxfp4, Dtype::kFp4, Dtype::kBf16}},
      {Dtype::kInt4, {Dtype::kBf16}},
      {Dtype::kFp8, {Dtype::kFp8, Dtype::kBf16}},
      {Dtype::kFp16, {Dtype::kBf16}},
      {Dtype::kBf16, {Dtype::kBf16}},
      {Dtype::kTf32, {Dtype::kTf32, Dtype::kFp32}},
      {Dtype::kFp32, {Dtype::kFp32}},
  };
  for (Dtype candidate : kWider.at(weights)) {
    if (Supports(candidate)) return candidate;
  }
  return Dtype::kBf16;
}

namespace {

Status RequireSource(const GpuSpec& gpu, const std::string& key, const std::string& source) {
  if (!gpu.sources.contains(key) || gpu.sources.at(key).empty()) {
    return Error(
        fmt::format("{}: '{}' has no entry in \"sources\"; every catalog number needs "
                    "its source",
                    source, key));
  }
  return Status();
}

StatusOr<std::map<Dtype, double>> ParseDtypeMap(const nlohmann::json& json, const std::string& key,
                                                const std::string& source, double max_value) {
  std::map<Dtype, double> out;
  if (!json.contains(key) || !json.at(key).is_object() || json.at(key).empty()) {
    return Error(fmt::format("{}: '{}' must be an object of dtype -> number", source, key));
  }
  for (const auto& [name, value] : json.at(key).items()) {
    SW_ASSIGN_OR_RETURN(Dtype dtype, ParseDtype(name));
    if (!value.is_number() || value.get<double>() <= 0 || value.get<double>() > max_value) {
      return Error(fmt::format("{}: {}.{} must be a number in (0, {:g}], got {}", source, key, name,
                               max_value, Excerpt(value)));
    }
    out[dtype] = value.get<double>();
  }
  return out;
}

}  // namespace

constexpr int64_t kMaxSmCount = 1'000'000;  // compute units; today's GPUs have up to ~300

StatusOr<GpuSpec> ParseGpuSpec(const nlohmann::json& json, const std::string& source) {
  if (!json.is_object()) return Error(fmt::format("{}: expected a JSON object", source));
  const JsonObject o{json, source};
  GpuSpec gpu;
  SW_ASSIGN_OR_RETURN(gpu.name, o.String("name"));
  if (o.Has("description")) {
    SW_ASSIGN_OR_RETURN(gpu.description, o.String("description"));
  }
  if (o.Has("scale_up")) {
    SW_ASSIGN_OR_RETURN(gpu.scale_up, o.String("scale_up"));
  }
  constexpr double kMaxFlops = 1e18;  // far above any accelerator; catches unit slips
  SW_ASSIGN_OR_RETURN(gpu.peak_flops_per_s,
                      ParseDtypeMap(json, "peak_flops_per_s", source, kMaxFlops));
  if (!gpu.Supports(Dtype::kBf16)) {
    return Error(fmt::format("{}: peak_flops_per_s must include bf16", source));
  }
  SW_ASSIGN_OR_RETURN(gpu.hbm_bytes, o.Number("hbm_bytes"));
  SW_ASSIGN_OR_RETURN(gpu.hbm_bytes_per_s, o.Number("hbm_bytes_per_s"));
  SW_ASSIGN_OR_RETURN(gpu.scale_up_bytes_per_s, o.Number("scale_up_bytes_per_s"));
  SW_ASSIGN_OR_RETURN(gpu.nic_bytes_per_s, o.Number("nic_bytes_per_s"));
  SW_ASSIGN_OR_RETURN(gpu.usd_per_gpu_hour, o.Number("usd_per_gpu_hour"));
  SW_ASSIGN_OR_RETURN(gpu.board_power_w, o.NumberOr("board_power_w", 0.0));
  constexpr double kMaxBoardPowerW = 1e5;  // far above any board (today's reach 1.4 kW)
  if (!(gpu.board_power_w >= 0 && gpu.board_power_w <= kMaxBoardPowerW)) {
    return Error(
        fmt::format("{}: board_power_w must be in [0, {:g}] watts", source, kMaxBoardPowerW));
  }

  if (!o.Has("achievable")) return o.MissingKey("achievable");
  const auto& ach = json.at("achievable");
  if (!ach.is_object()) {
    return Error(fmt::format("{}: 'achievable' must be an object of calibrated fractions", source));
  }
  const JsonObject a{ach, source + ": achievable"};
  SW_ASSIGN_OR_RETURN(gpu.gemm_fraction, ParseDtypeMap(ach, "gemm_fraction", a.source, 1.0));
  if (!gpu.gemm_fraction.contains(Dtype::kBf16)) {
    return Error(fmt::format("{}: achievable.gemm_fraction must include bf16", source));
  }
  SW_ASSIGN_OR_RETURN(gpu.hbm_fraction, a.Number("hbm_fraction"));
  if (gpu.hbm_fraction > 1) {
    return Error(fmt::format("{}: achievable.hbm_fraction must be at most 1", source));
  }
  SW_ASSIGN_OR_RETURN(gpu.calibration_measured, a.BoolOr("measured", false));
  // One number for every dtype, or an object of dtype -> number.
  constexpr double kMaxTileOverheadK = 1e6;  // far above any GEMM's k; catches slips
  if (ach.contains("gemm_tile_overhead_k") && ach.at("gemm_tile_overhead_k").is_object()) {
    SW_ASSIGN_OR_RETURN(gpu.gemm_tile_overhead_k,
                        ParseDtypeMap(ach, "gemm_tile_overhead_k", a.source, kMaxTileOverheadK));
  } else {
    SW_ASSIGN_OR_RETURN(const double overhead, a.NumberOr("gemm_tile_overhead_k", 0.0));
    if (overhead > kMaxTileOverheadK) {
      return Error(fmt::format("{}: achievable.gemm_tile_overhead_k must be at most {:g}", source,
                               kMaxTileOverheadK));
    }
    gpu.gemm_tile_overhead_k[Dtype::kBf16] = overhead;
  }
  SW_ASSIGN_OR_RETURN(gpu.kernel_latency_s, a.NumberOr("kernel_latency_s", 0.0));
  constexpr double kMaxKernelLatencyS = 1e-3;  // far above any GPU's; catches unit slips
  if (gpu.kernel_latency_s < 0 || gpu.kernel_latency_s > kMaxKernelLatencyS) {
    return Error(fmt::format("{}: achievable.kernel_latency_s must be in [0, {:g}] seconds", source,
                             kMaxKernelLatencyS));
  }
  SW_ASSIGN_OR_RETURN(gpu.sm_count, o.Int("sm_count", kMaxSmCount));

  if (o.Has("sources") && json.at("sources").is_object()) {
    for (const auto& [key, value] : json.at("sources").items()) {
      if (value.is_string()) gpu.sources[key] = value.get<std::string>();
    }
  }
  if (o.Has("provenance")) {
    const nlohmann::json& p = json.at("provenance");
    if (!p.is_object()) {
      return Error(
          fmt::format("{}: 'provenance' must be an object of number -> "
                      "\"measured|fitted|assumed\"",
                      source));
    }
    for (const auto& [key, value] : p.items()) {
      auto parsed = ParseProvenance(value.is_string() ? value.get<std::string>() : "");
      if (!parsed.ok()) {
        return Error(
            fmt::format("{}: provenance of '{}': {}", source, key, parsed.status().message()));
      }
      gpu.provenance[key] = *parsed;
    }
  }
  if (gpu.kernel_latency_s > 0) SW_RETURN_IF_ERROR(RequireSource(gpu, "kernel_latency_s", source));
  if (gpu.board_power_w > 0) SW_RETURN_IF_ERROR(RequireSource(gpu, "board_power_w", source));
  for (const char* key :
       {"peak_flops_per_s", "hbm_bytes", "hbm_bytes_per_s", "scale_up_bytes_per_s",
        "nic_bytes_per_s", "usd_per_gpu_hour", "achievable", "sm_count"}) {
    SW_RETURN_IF_ERROR(RequireSource(gpu, key, source));
  }
  return gpu;
}

std::vector<std::string> BuiltinGpuNames() { return catalog::NamesIn("gpus"); }

StatusOr<GpuSpec> LoadGpu(std::string_view name_or_path) {
  std::string source;
  SW_ASSIGN_OR_RETURN(
      nlohmann::json json,
      catalog::LoadEntry("gpus", name_or_path, "GPU",
                         "see 'shardwise gpus', or pass a path to a GPU .json file", source));
  return ParseGpuSpec(json, source);
}

StatusOr<std::vector<GpuSpec>> LoadBuiltinGpus() {
  std::vector<GpuSpec> gpus;
  for (const std::string& name : BuiltinGpuNames()) {
    SW_ASSIGN_OR_RETURN(GpuSpec gpu, LoadGpu(name));
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

}  // namespace shardwise
