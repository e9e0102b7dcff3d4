// `shardwise roofline`: decode arithmetic intensity against batch, the sweet-spot batch, and
// the critical batch sizes and degrees of "How to Think About GPUs" (How To Scale Your Model).
#include <fmt/format.h>

#include "command.h"
#include "shardwise/api/roofline.h"
#include "shardwise/common/format.h"
#include "shardwise/report/table.h"

namespace shardwise::cli {
namespace {

struct RooflineOptions {
  api::RooflineRequest request;
  bool json = false;
};

Status RunRoofline(const RooflineOptions& o) {
  SW_ASSIGN_OR_RETURN(const api::RooflineReport rep,
                      api::RooflineOf(api::Catalog::BuiltIn(), o.request));
  if (o.json) {
    PrintJson(api::ToJson(rep));
    return Status();
  }
  const ModelSpec& model = rep.model;
  const GpuSpec& gpu = rep.gpu;
  const Roofline& r = rep.roofline;
  const api::RooflineRequest& req = rep.request;
  std::cout << fmt::format(
      "{} on {}: {} weights ({} tensor cores){}\n"
      "ridge point: {:.0f} FLOPs per byte (achievable {} / {})\n\n",
      model.name, gpu.name, req.dtype, DtypeName(r.compute_dtype),
      req.context > 0 ? fmt::format(", KV of {} tokens per sequence", req.context) : "",
      r.ridge_flops_per_byte, FormatRate(gpu.AchievableFlopsPerS(r.compute_dtype), "FLOP/s"),
      FormatBandwidth(gpu.AchievableHbmBytesPerS()));
  Table table({"batch", "FLOPs/byte", "attainable", "bound"});
  for (const RooflinePoint& p : r.points) {
    table.AddRow({std::to_string(p.batch), fmt::format("{:.1f}", p.intensity),
                  FormatRate(p.attainable_flops_per_s, "FLOP/s"),
                  p.compute_bound ? "compute" : "HBM bandwidth"});
  }
  std::cout << table.Render();
  std::cout << fmt::format(
      "\ndecode turns compute-bound at batch {} (sweet spot: ridge x bytes/param / 2 x "
      "total/active params = {:.0f}; \"The Math Behind LLM Pricing 05\" puts it near 300 x inverse "
      "sparsity)\n",
      r.compute_bound_batch > 0 ? std::to_string(r.compute_bound_batch)
                                : "never (KV reads grow with batch)",
      r.sweet_spot_batch);
  auto critical = [&](const std::string& where, const CriticalSizes& c) {
    std::cout << fmt::format(
        "{}: DP/FSDP needs > {:.0f} tokens per GPU; TP stays compute-bound up to {:.1f} "
        "ranks; EP{} needs expert FFN width > {:.0f} (model: {})\n",
        where, c.dp_tokens_per_gpu, c.max_tp, r.ep_degree, c.ep_min_expert_ffn,
        model.is_moe() ? std::to_string(model.moe.expert_intermediate_size) : "dense");
  };
  std::cout << "\ncritical sizes (\"How to Think About GPUs\": peak FLOP/s over link "
               "bandwidth):\n";
  critical(fmt::format("  inside a node ({} per GPU over NVLink)",
                       FormatBandwidth(r.intra_node.bandwidth_bytes_per_s)),
           r.intra_node);
  // Across nodes each GPU has only its own NIC; a group that fills whole nodes reaches the
  // node's aggregate egress because a hierarchical collective drives every NIC at once (the
  // cost model of 'collectives' and 'explain' does the same).
  critical(fmt::format("  across nodes  ({} node egress = {} NICs x {} per GPU; groups that fill "
                       "whole nodes)",
                       FormatBandwidth(r.inter_node.bandwidth_bytes_per_s), req.gpus_per_node,
                       FormatBandwidth(gpu.nic_bytes_per_s)),
           r.inter_node);
  return Status();
}

}  // namespace

void AddRooflineCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<RooflineOptions>();
  CLI::App* sub = app.add_subcommand(
      "roofline",
      "Decode arithmetic intensity versus batch on one GPU, the batch where decode turns\n"
      "compute-bound, and the critical batch sizes for DP/FSDP, TP and EP. Example:\n"
      "  shardwise roofline --model deepseek-v3 --gpu h100-sxm --dtype fp8");
  sub->add_option("--model", opts->request.model, "Catalog model or config.json")
      ->capture_default_str();
  sub->add_option("--gpu", opts->request.gpu, "Catalog GPU or GPU file")->capture_default_str();
  sub->add_option("--dtype", opts->request.dtype, "Weight format")->capture_default_str();
  sub->add_option("--kv-dtype", opts->request.kv_dtype, "KV-cache format")->capture_default_str();
  sub->add_option("--context", opts->request.context,
                  "KV tokens read per sequence each step (0: weights only, as the sweet-spot rule)")
      ->capture_default_str();
  sub->add_option("--gpus-per-node", opts->request.gpus_per_node, "GPUs sharing a node's NICs")
      ->capture_default_str();
  sub->add_flag("--json", opts->json, "Print JSON");
  BindCommand(sub, opts, result, RunRoofline);
}

}  // namespace shardwise::cli
