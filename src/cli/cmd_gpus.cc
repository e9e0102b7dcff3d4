// `shardwise gpus`: the GPU catalog with peaks, memory, links, price and calibration.
#include <fmt/format.h>

#include "command.h"
#include "shardwise/api/json.h"
#include "shardwise/common/format.h"
#include "shardwise/common/provenance.h"
#include "shardwise/hw/gpu.h"
#include "shardwise/report/table.h"

namespace shardwise::cli {
namespace {

struct GpusOptions {
  bool json = false;
};

// The GEMM fractions' provenance, and the fp8 and fp4 ones' where the file states them apart.
std::string CalibrationCell(const GpuSpec& g) {
  const std::string all = ProvenanceName(g.ProvenanceOf("gemm_fraction"));
  std::string apart;
  for (const Dtype d : {Dtype::kFp8, Dtype::kFp4}) {
    const std::string own = ProvenanceName(g.ProvenanceOf(GpuSpec::GemmFractionKey(d)));
    if (own != all) apart += fmt::format("{}{} {}", apart.empty() ? "" : ", ", DtypeName(d), own);
  }
  return apart.empty() ? all : fmt::format("{} ({})", all, apart);
}

std::string FractionCell(const GpuSpec& g, Dtype d) {
  return g.Supports(d) ? fmt::format("{:.2f}", g.GemmCalibrationFor(d).fraction) : "-";
}

std::string PeakCell(const GpuSpec& g, Dtype d) {
  return g.Supports(d) ? fmt::format("{:.0f}", g.PeakFlopsPerS(d) / 1e12) : "-";
}

Status RunGpus(const GpusOptions& opts) {
  SW_ASSIGN_OR_RETURN(std::vector<GpuSpec> gpus, LoadBuiltinGpus());
  if (opts.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const GpuSpec& g : gpus) out.push_back(api::ToJson(g));
    PrintJson(out);
    return Status();
  }
  Table table({"gpu", "bf16 TF/s", "fp8 TF/s", "fp4 TF/s", "HBM", "HBM BW", "scale-up/dir",
               "NIC/dir", "$/GPU-h", "TDP W", "bf16 eff", "fp8 eff", "fp4 eff", "HBM eff",
               "calibration"});
  for (const GpuSpec& g : gpus) {
    table.AddRow({g.name, PeakCell(g, Dtype::kBf16), PeakCell(g, Dtype::kFp8),
                  PeakCell(g, Dtype::kFp4), FormatBytes(g.hbm_bytes),
                  FormatBandwidth(g.hbm_bytes_per_s), FormatBandwidth(g.scale_up_bytes_per_s),
                  FormatBandwidth(g.nic_bytes_per_s), fmt::format("{:.2f}", g.usd_per_gpu_hour),
                  g.board_power_w > 0 ? fmt::format("{:.0f}", g.board_power_w) : "-",
                  FractionCell(g, Dtype::kBf16), FractionCell(g, Dtype::kFp8),
                  FractionCell(g, Dtype::kFp4), fmt::format("{:.2f}", g.hbm_fraction),
                  CalibrationCell(g)});
  }
  std::cout << table.Render();
  std::cout
      << "\nPeaks are dense (no sparsity). GEMM (bf16, fp8, fp4) and HBM eff: achievable fraction\n"
         "of peak, from published kernel measurements ('measured'), fitted to published\n"
         "end-to-end results ('fitted'), or borrowed from a sibling part ('assumed').\n"
         "Sources of every number, provenance of each fraction: 'shardwise gpus --json'.\n";
  return Status();
}

}  // namespace

void AddGpusCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<GpusOptions>();
  CLI::App* sub = app.add_subcommand(
      "gpus", "List the built-in GPUs: dense peak FLOP/s, memory, links, price, calibration.");
  sub->add_flag("--json", opts->json, "Print JSON, including the source of every number");
  BindCommand(sub, opts, result, RunGpus);
}

}  // namespace shardwise::cli
