// `shardwise size`: the minimum GPUs to serve a model (api/size.h).
#include <fmt/format.h>

#include "command.h"
#include "shardwise/common/format.h"
#include "shardwise/report/table.h"
#include "shardwise/shardwise.h"

namespace shardwise::cli {
namespace {

struct SizeOptions {
  api::SizeRequest request;
  bool json = false;
};

void PrintText(const api::SizeReport& rep) {
  const SizingRequest& req = rep.request;
  const SizingResult& r = rep.result;
  std::cout << fmt::format("{} on {} ({} per GPU), weights in {}\n", rep.model.name, rep.gpu.name,
                           FormatBytes(rep.gpu.hbm_bytes * req.usable_fraction),
                           rep.weight_formats);
  std::cout << fmt::format("  weights   {:>10}\n", FormatBytes(r.weight_bytes));
  if (req.kv_allowance) {
    std::cout << fmt::format("  KV        {:>10}   (allowance x{:g} on the weights)\n",
                             FormatBytes(r.kv_bytes), *req.kv_allowance);
  } else {
    std::cout << fmt::format(
        "  KV        {:>10}   ({} sequence{} x {} tokens, {} cache{})\n", FormatBytes(r.kv_bytes),
        req.concurrency, req.concurrency == 1 ? "" : "s", req.context_tokens,
        DtypeName(req.kv_dtype),
        rep.model.max_position_embeddings == req.context_tokens && req.concurrency == 1
            ? "; one request at the model's full context"
            : "");
  }
  std::cout << fmt::format("  required  {:>10}\n\n", FormatBytes(r.required_bytes));
  Table table({"GPUs", "capacity", "fits"});
  for (const SizingStep& s : r.ladder) {
    table.AddRow({std::to_string(s.gpus), FormatBytes(s.capacity_bytes), s.fits ? "yes" : "no"});
  }
  std::cout << table.Render();
  std::cout << fmt::format("\n=> {} x {} ({} node{} of {})\n", r.gpus, rep.gpu.name, r.nodes,
                           r.nodes == 1 ? "" : "s", req.gpus_per_node);
}

Status RunSize(const SizeOptions& o) {
  SW_ASSIGN_OR_RETURN(const api::SizeReport rep, api::Size(api::Catalog::BuiltIn(), o.request));
  if (o.json) {
    PrintJson(api::ToJson(rep));
  } else {
    PrintText(rep);
  }
  return Status();
}

}  // namespace

void AddSizeCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<SizeOptions>();
  api::SizeRequest& r = opts->request;
  CLI::App* sub = app.add_subcommand(
      "size",
      "Minimum GPUs to serve a model: its weights in the checkpoint's own formats plus the KV\n"
      "cache of one request at the model's full context (or of --context x --concurrency, or\n"
      "the \"Parallelism\" web guide's allowance: weights x --kv-alloc), rounded up to 1, 2, 4,\n"
      "8 GPUs, then to whole nodes. Example: shardwise size --model deepseek-r1 --cluster "
      "dgx-h200");
  sub->add_option("--model", r.model, "Catalog model name or path to a config.json")
      ->capture_default_str();
  sub->add_option("--cluster", r.cluster,
                  "Catalog cluster or cluster file: its GPU and GPUs per node (default dgx-h100)");
  sub->add_option("--gpu", r.gpu,
                  "Alias: a catalog GPU or GPU file instead of --cluster (8 GPUs per node)");
  sub->add_option("--dtype", r.dtype,
                  "Weight format of every module: fp32, bf16, fp8, int4, mxfp4, fp4 (default: the "
                  "checkpoint's own, per module)");
  sub->add_option("--kv-dtype", r.kv_dtype,
                  "KV-cache format (default: fp8 with fp8 weights, else bf16)");
  sub->add_option("--kv-alloc", r.kv_alloc,
                  "The Parallelism guide's rule instead: memory as a multiple of the weights "
                  "(1.8: weights + 80% for KV)");
  sub->add_option("--context", r.context, "Tokens per sequence, for an exact KV size");
  sub->add_option("--concurrency", r.concurrency, "Sequences held at once (with --context)");
  sub->add_option("--gpu-memory-utilization,--usable-fraction", r.gpu_memory_utilization,
                  "Fraction of each GPU's memory usable, as in every other command (vLLM's "
                  "default 0.9; the web guide's rule uses 1.0). --usable-fraction is an alias")
      ->capture_default_str();
  sub->add_flag("--json", opts->json, "Print JSON");
  BindCommand(sub, opts, result, RunSize);
}

}  // namespace shardwise::cli
