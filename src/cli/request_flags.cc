#include "request_flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "flags.h"
#include "validators.h"

namespace shardwise::cli {

bool AnyGiven(const std::vector<CLI::Option*>& options) {
  return std::any_of(options.begin(), options.end(), Given);
}

void ServingFlags::AddTo(CLI::App* sub, bool max_batch, bool admission) {
  api::ServingOverrides& v = values;
  engine =
      sub->add_option("--engine", v.engine,
                      "Serving engine profile: trtllm, vllm, sglang (each its newest version), "
                      "a versioned name (vllm-0.12; trtllm-cpp: TensorRT engines under the C++ "
                      "executor) or a profile .json (see data/engines/)")
          ->capture_default_str();
  given = {
      engine,
      sub->add_option("--dtype", v.dtype,
                      "Weight format of every module: bf16, fp8, int4, mxfp4, fp4 (default: the "
                      "checkpoint's own, per module, from its quantization config)"),
      sub->add_option("--kv-dtype", v.kv_dtype,
                      "KV-cache format (default: fp8 with fp8 weights, else bf16)"),
      sub->add_option("--gpu-memory-utilization", v.gpu_memory_utilization,
                      "Memory fraction for weights + KV (default: the engine's; TensorRT-LLM "
                      "applies it to the memory free after weights)"),
      sub->add_option(
          "--max-batched-tokens", v.max_batched_tokens,
          "Tokens per iteration per attention rank (default: the engine's; "
          "TensorRT-LLM without chunked prefill: the longest prompt + 1,500, up to 8,192 and "
          "at least the mean prompt + 1,500)"),
      sub->add_option("--expert-imbalance", v.expert_imbalance,
                      "Busiest expert rank's load over the mean (default: statistical estimate)"),
      sub->add_option("--redundant-experts", v.redundant_experts,
                      "Extra expert copies per EP group (DeepSeek-V3 decode: 32 over ep144); "
                      "each EP rank holds (routed + redundant) / ep experts, hot experts copied "
                      "first (default 0; layouts with ep > 1)"),
      sub->add_option("--expert-skew", v.expert_skew,
                      "Routing skew as a Zipf exponent s >= 0: expert i (hottest first) draws "
                      "(i+1)^-s of the tokens (default: uniform routing)"),
      sub->add_option("--expert-load", v.expert_load,
                      "Measured per-expert loads instead of --expert-skew: a JSON file holding "
                      "an array of the routed experts' token counts, or one such array per MoE "
                      "layer"),
      sub->add_option("--capacity-factor", v.capacity_factor,
                      "MoE: each expert computes at most F x its mean share of the step's (token, "
                      "expert) pairs and drops the rest (GShard capacity; default: no limit)"),
      sub->add_option("--shared-experts", v.shared_experts,
                      "replicated: each GPU computes the shared expert for its own tokens; "
                      "routed: it sits in routed experts' slots of the EP group, as DeepSeek-V3 "
                      "decodes (EP layouts)")
          ->capture_default_str(),
      sub->add_option("--ep-algorithm", v.ep_algorithm,
                      "EP dispatch/combine kernels: flat (NCCL all-to-all, the engines' default), "
                      "node-dedup (DeepEP normal), low-latency (DeepEP low-latency) or auto; "
                      "plan and recommend search these unless an EP flag is given"),
      sub->add_option("--ep-dispatch-dtype", v.ep_dispatch_dtype,
                      "Format tokens are dispatched in: fp8 (DeepEP, with per-128 scales) or "
                      "bf16 (default); combine stays in bf16"),
      sub->add_option("--overlap", v.overlap,
                      "tbo: two micro-batches per step, one's EP exchange hidden behind the "
                      "other's compute (DeepSeek, SGLang --enable-two-batch-overlap); none "
                      "(default)"),
      sub->add_option("--prefix-hit-rate", v.prefix_hit_rate,
                      "Fraction of each prompt's tokens already in the prefix cache, in [0, 1] "
                      "(default 0)"),
      sub->add_option("--speculative", v.speculative,
                      "Speculative decoding: mtp (the model's multi-token-prediction module), "
                      "eagle (an EAGLE head), draft:MODEL (a smaller model, same vocabulary), or "
                      "none (default)"),
      sub->add_option("--spec-tokens", v.spec_tokens,
                      "Draft tokens proposed per decode step, k (default: the count of "
                      "--acceptance)"),
      sub->add_option("--acceptance", v.acceptance,
                      "Chance each draft token is accepted given the earlier ones were, in (0, "
                      "1]: one value or a comma list per position (e.g. 0.8,0.6)")};
  if (max_batch) {
    given.push_back(sub->add_option(
        "--max-batch", v.max_batch,
        "Sequences running at once per attention rank: per replica, or per DP attention rank of "
        "an attention-DP layout such as dp8ep8 (default: the engine's max_num_seqs)"));
  }
  if (admission) {
    given.push_back(sub->add_option(
        "--admission", v.admission,
        "no-evict (reserve prompt + output KV, TensorRT-LLM's default) or max-utilization "
        "(reserve the prompt, preempt when full, as vLLM); default: the engine's (a "
        "disaggregated decode pool always reserves prompt + output)"));
  }
}

void ClusterFlags::AddTo(CLI::App* sub, bool priced) {
  name = sub->add_option("--cluster", values.name, "Catalog cluster name or path to a cluster file")
             ->capture_default_str();
  nodes = sub->add_option("--nodes", values.nodes, "Scale a node-type cluster to N nodes");
  gpus = sub->add_option("--gpus", values.gpus, "Use only the first N GPUs of the cluster");
  profile = sub->add_option("--profile", values.profile,
                            "Measured level profile (from 'collectives --import') replacing the "
                            "catalog's calibration");
  given = {name, nodes, gpus, profile};
  if (priced) {
    price = sub->add_option("--usd-per-gpu-hour", values.usd_per_gpu_hour,
                            "What one GPU costs an hour, for every cost and $ per token reported "
                            "(default: the GPU catalog's, 'shardwise gpus')");
  }
}

StatusOr<ClusterSpec> LoadClusterFlags(const ClusterFlags& flags) {
  std::string note;
  SW_ASSIGN_OR_RETURN(ClusterSpec c, api::Catalog::BuiltIn().Cluster(flags.values, &note));
  if (!note.empty()) std::fprintf(stderr, "shardwise: warning: %s\n", note.c_str());
  return c;
}

void DeploymentFlags::AddTo(CLI::App* sub, const std::string& layout_help) {
  api::DeploymentSpec& v = values;
  layout = sub->add_option("--layout", v.layout, layout_help)->check(kLayoutText);
  disaggregated = {
      sub->add_option("--prefill-layout", v.prefill_layout,
                      "Disaggregated: the layout of each prefill worker (with --decode-layout)")
          ->check(kLayoutText),
      sub->add_option("--decode-layout", v.decode_layout,
                      "Disaggregated: the layout of each decode worker (with --prefill-layout)")
          ->check(kLayoutText),
      workers[0] = sub->add_option("--prefill-workers", v.prefill_workers,
                                   "Disaggregated: prefill workers (xP); with --deployment, "
                                   "its split's")
                       ->capture_default_str(),
      workers[1] = sub->add_option("--decode-workers", v.decode_workers,
                                   "Disaggregated: decode workers (yD); with --deployment, its "
                                   "split's")
                       ->capture_default_str(),
      sub->add_option("--prefill-cluster", v.prefill_cluster,
                      "Disaggregated: the cluster (GPU type) of the prefill pool, when it is not "
                      "--cluster's; the KV then crosses both clusters' scale-out networks"),
      sub->add_option("--prefill-redundant-experts", v.prefill_redundant_experts,
                      "Disaggregated: extra expert copies per EP group of the prefill pool, when "
                      "it differs from --redundant-experts (the decode pool's)"),
      sub->add_option("--prefill-shared-experts", v.prefill_shared_experts,
                      "Disaggregated: replicated or routed shared experts in the prefill pool, "
                      "when it differs from --shared-experts"),
      sub->add_option("--kv-transfer", v.kv_transfer,
                      "Disaggregated: send each prompt's KV cache after-prefill (the engines' "
                      "default) or layer-by-layer while it is prefilled")
          ->capture_default_str()};
  sub->add_option("--deployment", file,
                  "A saved plan, recommend, explain, simulate or price --json: run its deployment "
                  "(model, cluster, options and layout or pools) under its workload and load, "
                  "unless given here");
}

void SloFlags::AddTo(CLI::App* sub, const std::string& what) {
  given = {sub->add_option("--max-ttft-ms", values.max_ttft_ms, what + ": time to first token")
               ->check(kPositiveFinite),
           sub->add_option("--max-tpot-ms", values.max_tpot_ms, what + ": time per output token")
               ->check(kPositiveFinite),
           sub->add_option("--percentile", values.percentile,
                           "Where the SLOs hold: pN for N in (0, 100), such as p50, p90, p99 or "
                           "p99.9, or mean (the same in plan, recommend, simulate and price)")
               ->capture_default_str()};
}

void LengthSpreadFlags::AddTo(CLI::App* sub) {
  isl_dist = sub->add_option("--isl-dist", values.isl_dist,
                             "How prompt lengths spread about --isl: fixed, uniform or lognormal")
                 ->capture_default_str();
  osl_dist = sub->add_option("--osl-dist", values.osl_dist,
                             "How output lengths spread about --osl: fixed, uniform or lognormal")
                 ->capture_default_str();
  length_cv_option =
      sub->add_option("--length-cv", length_cv,
                      "CV of the uniform (at most 0.577) or lognormal length distributions; only "
                      "with --isl-dist or --osl-dist")
          ->capture_default_str();
}

api::LengthSpreadRequest LengthSpreadFlags::Request() const {
  api::LengthSpreadRequest r = values;
  if (Given(length_cv_option)) r.length_cv = length_cv;
  return r;
}

api::GivenFields GivenOf(const std::vector<CLI::Option*>& lengths, const SloFlags& slo,
                         const LengthSpreadFlags* spread) {
  api::GivenFields given;
  given.isl = Given(lengths[0]);
  given.osl = Given(lengths[1]);
  given.max_ttft = Given(slo.given[0]);
  given.max_tpot = Given(slo.given[1]);
  given.percentile = Given(slo.given[2]);
  if (spread != nullptr) {
    given.isl_dist = Given(spread->isl_dist);
    given.osl_dist = Given(spread->osl_dist);
    given.length_cv = Given(spread->length_cv_option);
  }
  return given;
}

Status FromReplay(const Status& status, const DeploymentFlags& deployment, const CLI::App& sub) {
  if (status.ok() || deployment.file.empty() || status.field().empty()) return status;
  const CLI::Option* flag = sub.get_option_no_throw(FlagOf(status.field()));
  if (flag != nullptr && flag->count() > 0) return status;
  return Status(status.code(),
                fmt::format("{} ({} is {}'s: --deployment replays it)", status.message(),
                            FlagOf(status.field()), deployment.file),
                status.field());
}

StatusOr<std::optional<api::SavedDeployment>> LoadReplay(const DeploymentFlags& deployment,
                                                         const ServingFlags& serving,
                                                         const ClusterFlags& cluster,
                                                         CLI::Option* model) {
  if (deployment.file.empty()) return std::optional<api::SavedDeployment>();
  // A saved split's worker counts (--prefill-workers, --decode-workers), the cluster's size
  // (--nodes, --gpus) and its GPUs' price may be changed here; every other deployment flag
  // conflicts with the file.
  std::vector<CLI::Option*> pools;
  for (CLI::Option* option : deployment.disaggregated) {
    if (option != deployment.workers[0] && option != deployment.workers[1]) pools.push_back(option);
  }
  const std::vector<std::pair<std::vector<CLI::Option*>, const char*>> conflicts = {
      {{deployment.layout}, "--layout"},
      {pools, "the split's layouts and options (--prefill-layout, --decode-layout, ...)"},
      {{model}, "--model"},
      {{cluster.name, cluster.profile}, "--cluster and --profile"},
      {serving.given, "the serving options (--engine, --dtype, ...)"}};
  for (const auto& [options, names] : conflicts) {
    if (AnyGiven(options)) {
      return Error(
          fmt::format("--deployment {} names the model, cluster, options and layout it "
                      "was chosen with; drop {}, or drop --deployment",
                      deployment.file, names));
    }
  }
  SW_ASSIGN_OR_RETURN(api::SavedDeployment saved, api::LoadSavedDeployment(deployment.file));
  // More (or fewer) of the same GPUs: --nodes and --gpus resize the saved cluster; --nodes alone
  // takes all their GPUs (a saved --gpus would cap it).
  if (Given(cluster.nodes)) {
    saved.cluster.nodes = cluster.values.nodes;
    if (!Given(cluster.gpus)) saved.cluster.gpus.reset();
  }
  if (Given(cluster.gpus)) saved.cluster.gpus = cluster.values.gpus;
  // A new price for the same GPUs re-prices the saved deployment.
  if (Given(cluster.price)) saved.cluster.usd_per_gpu_hour = cluster.values.usd_per_gpu_hour;
  if (AnyGiven(deployment.workers)) {
    if (!saved.deployment.Disaggregated()) {
      return Error(
          fmt::format("--deployment {} is aggregated ({}); --prefill-workers and "
                      "--decode-workers size a disaggregated split",
                      deployment.file, saved.deployment.layout));
    }
    if (Given(deployment.workers[0])) {
      saved.deployment.prefill_workers = deployment.values.prefill_workers;
    }
    if (Given(deployment.workers[1]))
      saved.deployment.decode_workers = deployment.values.decode_workers;
  }
  return std::optional<api::SavedDeployment>(std::move(saved));
}

}  // namespace shardwise::cli
