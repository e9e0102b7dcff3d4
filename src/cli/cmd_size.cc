// `shardwise size`: the minimum GPUs to serve a model (the sizing rule of the "Parallelism" web
// guide: weights x KV allowance, rounded up to an instance size).
#include <fmt/format.h>

#include <optional>

#include "command.h"
#include "shardwise/common/format.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/model/catalog.h"
#include "shardwise/plan/sizing.h"
#include "shardwise/report/table.h"

namespace shardwise::cli {
namespace {

// "Parallelism" (web guide on sizing LLM deployments): weights + ~80% headroom for the KV cache.
constexpr double kGuideKvAllowance = 1.8;

struct SizeOptions {
  std::string model = "llama-3.1-70b";
  std::string cluster;  // a cluster gives the GPU and the GPUs per node
  std::string gpu;      // alias kept from earlier versions: a GPU alone (8 per node)
  std::string dtype = "bf16";
  std::string kv_dtype;  // empty: fp8 with fp8 weights, else bf16 (as every other command)
  std::optional<double> kv_alloc;
  int64_t context = 0;
  int64_t concurrency = 0;
  double usable_fraction = 0.9;  // as --gpu-memory-utilization elsewhere (vLLM's default)
  bool json = false;
};

Status RunSize(const SizeOptions& opts) {
  SW_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(opts.model));
  if (!opts.cluster.empty() && !opts.gpu.empty()) {
    return Error("give --cluster or its alias --gpu, not both");
  }
  SizingRequest req;
  GpuSpec gpu;
  if (!opts.gpu.empty()) {
    SW_ASSIGN_OR_RETURN(gpu, LoadGpu(opts.gpu));
  } else {
    SW_ASSIGN_OR_RETURN(ClusterSpec cluster,
                        LoadCluster(opts.cluster.empty() ? "dgx-h100" : opts.cluster));
    gpu = cluster.gpu;
    req.gpus_per_node = cluster.GpusPerNode();
  }
  SW_ASSIGN_OR_RETURN(req.weight_dtype, ParseDtype(opts.dtype));
  if (opts.kv_dtype.empty()) {
    req.kv_dtype = req.weight_dtype == Dtype::kFp8 ? Dtype::kFp8 : Dtype::kBf16;
  } else {
    SW_ASSIGN_OR_RETURN(req.kv_dtype, ParseDtype(opts.kv_dtype));
  }
  if (!(opts.usable_fraction > 0 && opts.usable_fraction <= 1)) {
    return Error(
        fmt::format("--gpu-memory-utilization must be in (0, 1], got {:g}", opts.usable_fraction));
  }
  const bool exact = opts.context > 0 || opts.concurrency > 0;
  if (exact && opts.kv_alloc) {
    return Error("give --kv-alloc, or --context with --concurrency, not both");
  }
  if (exact && (opts.context <= 0 || opts.concurrency <= 0)) {
    return Error(
        "--context and --concurrency go together: give both (e.g. --context 8192 "
        "--concurrency 32)");
  }
  if (!exact) req.kv_allowance = opts.kv_alloc.value_or(kGuideKvAllowance);
  req.context_tokens = opts.context;
  req.concurrency = opts.concurrency;
  req.usable_fraction = opts.usable_fraction;
  SW_ASSIGN_OR_RETURN(SizingResult r, SizeDeployment(model, gpu, req));

  if (opts.json) {
    nlohmann::json ladder = nlohmann::json::array();
    for (const SizingStep& s : r.ladder) {
      ladder.push_back({{"gpus", s.gpus}, {"capacity_bytes", s.capacity_bytes}, {"fits", s.fits}});
    }
    PrintJson({{"model", model.name},
               {"gpu", gpu.name},
               {"dtype", DtypeName(req.weight_dtype)},
               {"kv_dtype", DtypeName(req.kv_dtype)},
               {"gpu_memory_utilization", req.usable_fraction},
               {"kv_allowance", req.kv_allowance ? nlohmann::json(*req.kv_allowance) : nullptr},
               {"context_tokens", opts.context},
               {"concurrency", opts.concurrency},
               {"gpus", r.gpus},
               {"nodes", r.nodes},
               {"required_bytes", r.required_bytes},
               {"weight_bytes", r.weight_bytes},
               {"kv_bytes", r.kv_bytes},
               {"capacity_bytes", r.capacity_bytes},
               {"ladder", ladder}});
    return Status();
  }
  std::cout << fmt::format("{} on {} ({} per GPU), weights in {}\n", model.name, gpu.name,
                           FormatBytes(gpu.hbm_bytes * req.usable_fraction),
                           DtypeName(req.weight_dtype));
  std::cout << fmt::format("  weights   {:>10}\n", FormatBytes(r.weight_bytes));
  if (req.kv_allowance) {
    std::cout << fmt::format("  KV        {:>10}   (allowance x{:g} on the weights)\n",
                             FormatBytes(r.kv_bytes), *req.kv_allowance);
  } else {
    std::cout << fmt::format("  KV        {:>10}   ({} sequences x {} tokens, {} cache)\n",
                             FormatBytes(r.kv_bytes), opts.concurrency, opts.context,
                             DtypeName(req.kv_dtype));
  }
  std::cout << fmt::format("  required  {:>10}\n\n", FormatBytes(r.required_bytes));
  Table table({"GPUs", "capacity", "fits"});
  for (const SizingStep& s : r.ladder) {
    table.AddRow({std::to_string(s.gpus), FormatBytes(s.capacity_bytes), s.fits ? "yes" : "no"});
  }
  std::cout << table.Render();
  std::cout << fmt::format("\n=> {} x {} ({} node{} of {})\n", r.gpus, gpu.name, r.nodes,
                           r.nodes == 1 ? "" : "s", req.gpus_per_node);
  return Status();
}

}  // namespace

void AddSizeCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<SizeOptions>();
  CLI::App* sub = app.add_subcommand(
      "size",
      "Minimum GPUs to serve a model: weights x KV allowance (or weights + exact KV for a\n"
      "context and concurrency), rounded up to 1, 2, 4, 8 GPUs, then to whole nodes. The rule\n"
      "and the 1.8 allowance are from the \"Parallelism\" web guide on sizing deployments.\n"
      "Example: shardwise size --model deepseek-v3 --cluster dgx-b200 --dtype fp8");
  sub->add_option("--model", opts->model, "Catalog model name or path to a config.json")
      ->capture_default_str();
  sub->add_option("--cluster", opts->cluster,
                  "Catalog cluster or cluster file: its GPU and GPUs per node (default dgx-h100)");
  sub->add_option("--gpu", opts->gpu,
                  "Alias: a catalog GPU or GPU file instead of --cluster (8 GPUs per node)");
  sub->add_option("--dtype", opts->dtype, "Weight format: fp32, bf16, fp8, int4, mxfp4, fp4")
      ->capture_default_str();
  sub->add_option("--kv-dtype", opts->kv_dtype,
                  "KV-cache format with --context (default: fp8 with fp8 weights, else bf16)");
  sub->add_option("--kv-alloc", opts->kv_alloc,
                  "Memory as a multiple of the weights (default 1.8: weights + 80% for KV)");
  sub->add_option("--context", opts->context, "Tokens per sequence, for an exact KV size");
  sub->add_option("--concurrency", opts->concurrency, "Sequences held at once (with --context)");
  sub->add_option("--gpu-memory-utilization,--usable-fraction", opts->usable_fraction,
                  "Fraction of each GPU's memory usable, as in every other command (vLLM's "
                  "default 0.9; the web guide's rule uses 1.0). --usable-fraction is an alias")
      ->capture_default_str();
  sub->add_flag("--json", opts->json, "Print JSON");
  BindCommand(sub, opts, result, RunSize);
}

}  // namespace shardwise::cli
