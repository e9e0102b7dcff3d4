#include "engine_args.h"

#include <fmt/format.h>

#include "shardwise/common/format.h"

namespace shardwise::emit::internal {
namespace {

bool QuantizedByFlag(Dtype d) { return d == Dtype::kFp8; }
bool NeedsQuantizedCheckpoint(Dtype d) {
  return d == Dtype::kInt4 || d == Dtype::kMxfp4 || d == Dtype::kFp4;
}

// Sequences per attention rank: vLLM runs each DP rank as its own engine core with its own
// --max-num-seqs ("Data Parallel Deployment", vLLM 0.10.1), and TensorRT-LLM's attention-DP
// ranks each schedule up to max_batch_size requests.
int64_t SeqsPerAttentionRank(const PoolLaunch& pool) {
  const int64_t adp = pool.layout.AttentionDp();
  return std::max<int64_t>(1, (pool.max_num_seqs + adp - 1) / adp);
}

// What the prediction assumed that `engine` has no switch for at the version emitted.
std::string NoSwitchNote(Engine engine, const char* what) {
  return fmt::format(
      "# The prediction assumed {}; {} has no switch for it: expect the measured step to "
      "differ.\n",
      what, EngineRelease(engine));
}

// Tokens dispatched in fp8 are the DeepEP paths' own choice for fp8 checkpoints, not a flag.
std::string DispatchNote(const PoolLaunch& pool) {
  if (!pool.fp8_dispatch || (pool.prefill_ep == EpKernels::kEngineDefault &&
                             pool.decode_ep == EpKernels::kEngineDefault)) {
    return "";
  }
  return "# The prediction dispatched tokens in fp8 with per-128 scales, as DeepEP's kernels do "
         "for fp8 weights; no flag sets it.\n";
}

// The one EP backend an engine that runs a single one per server takes for `pool`: DeepEP's
// decode steps' kernels when they are DeepEP's, else the prompts'.
EpKernels OneKernel(Engine engine, const PoolLaunch& pool, std::string& notes) {
  const EpKernels one =
      pool.decode_ep != EpKernels::kEngineDefault ? pool.decode_ep : pool.prefill_ep;
  if (pool.prefill_ep != one || pool.decode_ep != one) {
    notes += fmt::format(
        "# The prediction used {} kernels for prompts and {} for decode steps; {} runs one "
        "all-to-all backend per server, set to the decode steps' where they use DeepEP.\n",
        KernelName(pool.prefill_ep), KernelName(pool.decode_ep), EngineRelease(engine));
  }
  return one;
}

}  // namespace

std::string_view KernelName(EpKernels k) {
  switch (k) {
    case EpKernels::kDeepEpNormal:
      return "DeepEP normal";
    case EpKernels::kDeepEpLowLatency:
      return "DeepEP low-latency";
    case EpKernels::kEngineDefault:
      break;
  }
  return "the engine's own all-to-all";
}

std::string_view EngineRelease(Engine engine) {
  const std::string_view version = EngineVersion(engine);
  return version.substr(0, version.find(" ("));
}

std::string Command(const std::string& head, const std::vector<std::string>& args) {
  std::string out = head;
  for (const std::string& a : args) out += " \\\n    " + a;
  return out + "\n";
}

std::string Header(Engine engine, const LaunchInputs& in) {
  const PoolLaunch& p = in.pool;
  std::string what, shape;
  if (in.prefill_pool) {
    const PoolLaunch& f = *in.prefill_pool;
    what = fmt::format("the disaggregated deployment {}P x {} + {}D x {}", f.workers,
                       f.layout.ToString(), p.workers, p.layout.ToString());
    auto workers = [](int64_t n, const char* role) {
      return fmt::format("{} {} worker{}", n, role, n == 1 ? "" : "s");
    };
    shape = fmt::format("# {} ({} GPUs each) and {} ({} GPUs each).", workers(f.workers, "prefill"),
                        f.layout.gpus(), workers(p.workers, "decode"), p.layout.gpus());
  } else {
    what = "layout " + p.layout.ToString();
    shape = fmt::format("# {} per engine instance, {}.",
                        Counted(p.layout.InstanceGpus(), "GPU", "GPUs"),
                        Counted(p.layout.Replicas(), "replica", "replicas"));
  }
  return fmt::format(
      "#!/usr/bin/env bash\n# Written by 'shardwise --emit {}' for {} of {}.\n"
      "# Flags as documented for {}{}.\n{}\nset -euo pipefail\n",
      EngineName(engine), what, in.model, EngineVersion(engine),
      in.profile.empty() ? "" : "; predicted with shardwise's " + in.profile + " profile", shape);
}

std::string CheckpointNote(const LaunchInputs& in) {
  return NeedsQuantizedCheckpoint(in.weight_dtype)
             ? fmt::format(
                   "# {} weights: point the engine at a checkpoint already quantised to "
                   "{} (the engine reads the format from its config); no flag is set.\n",
                   DtypeName(in.weight_dtype), DtypeName(in.weight_dtype))
             : "";
}

Status NoContextParallel(Engine engine, const Layout& l) {
  if (l.cp > 1) {
    return Error(
        fmt::format("{} cannot run {}: its serving path has no context parallelism; "
                    "emit a layout without cp (plan --layout ...)",
                    EngineName(engine), l.ToString()));
  }
  return Status();
}

std::vector<std::string> VllmArgs(const LaunchInputs& in, const PoolLaunch& pool,
                                  std::string& notes) {
  const Layout& l = pool.layout;
  std::vector<std::string> a = {fmt::format("--tensor-parallel-size {}", l.tp)};
  if (l.pp > 1) a.push_back(fmt::format("--pipeline-parallel-size {}", l.pp));
  // vLLM's data parallelism runs attention DP inside one server when experts are parallel, and
  // plain replicas otherwise; either way --data-parallel-size counts the DP ranks.
  if (l.dp > 1) a.push_back(fmt::format("--data-parallel-size {}", l.dp));
  if (in.moe && l.GathersTokensForExperts() && l.ep == 1) {
    notes += fmt::format(
        "# vLLM splits each expert over TP x DP = {} ranks by tensor parallelism when expert "
        "parallelism is off; the plan split it over {}.\n",
        l.tp * l.dp, l.etp);
  }
  if (in.moe && l.ep > 1) {
    a.push_back("--enable-expert-parallel");
    const int64_t vllm_ep = l.tp * (l.AttentionDp() > 1 ? l.dp : 1);
    if (vllm_ep != l.ep) {
      notes += fmt::format(
          "# vLLM spreads experts over TP x DP = {} ranks; the plan used EP {}{}.\n", vllm_ep, l.ep,
          l.GathersTokensForExperts()
              ? fmt::format(" with each expert split over {} ranks (vLLM has no expert-TP "
                            "beside EP)",
                            l.etp)
              : "");
    }
  }
  a.push_back(fmt::format("--max-num-seqs {}", SeqsPerAttentionRank(pool)));
  a.push_back(fmt::format("--max-num-batched-tokens {}", pool.max_batched_tokens));
  a.push_back("--enable-chunked-prefill");
  // vLLM runs asynchronous scheduling without pipeline parallelism and speculative decoding
  // only (its configuration refuses the combinations).
  if (pool.async_scheduling && l.pp == 1 &&
      pool.speculative.method == SpeculativeLaunch::Method::kNone) {
    a.push_back("--async-scheduling");
  } else if (pool.async_scheduling) {
    notes += fmt::format(
        "# The prediction assumed asynchronous scheduling, which {} runs only without pipeline "
        "parallelism or speculative decoding; this launch has {}, so it schedules synchronously: "
        "expect each prompt's first token about one iteration sooner than predicted.\n",
        EngineRelease(Engine::kVllm),
        l.pp > 1 ? fmt::format("pipeline parallelism (pp {})", l.pp) : "speculative decoding");
  }
  a.push_back(fmt::format("--max-model-len {}", in.max_model_len));
  if (in.kv_dtype == Dtype::kFp8) a.push_back("--kv-cache-dtype fp8");
  if (QuantizedByFlag(in.weight_dtype)) a.push_back("--quantization fp8");
  a.push_back(fmt::format("--gpu-memory-utilization {:g}", in.gpu_memory_utilization));
  // SchedulerConfig.cuda_graph_sizes: one value N captures [1, 2, 4] and every multiple of 8 up
  // to N.
  if (pool.cuda_graph_max_batch > 0) {
    a.push_back(fmt::format("--cuda-graph-sizes {}", pool.cuda_graph_max_batch));
  }
  if (pool.two_batch_overlap) notes += NoSwitchNote(Engine::kVllm, "two-batch overlap");
  notes += DispatchNote(pool);
  AddVllmSpeculative(in, pool, a, notes);
  return a;
}

std::string VllmEnv(const PoolLaunch& pool, std::string& notes) {
  // VLLM_ALL2ALL_BACKEND ("Expert Parallel Deployment", vLLM 0.10.1): one backend per server
  // for both phases.
  const EpKernels kernels = OneKernel(Engine::kVllm, pool, notes);
  if (kernels == EpKernels::kDeepEpNormal) return "VLLM_ALL2ALL_BACKEND=deepep_high_throughput ";
  if (kernels == EpKernels::kDeepEpLowLatency) return "VLLM_ALL2ALL_BACKEND=deepep_low_latency ";
  return "";
}

std::vector<std::string> SglangArgs(const LaunchInputs& in, const PoolLaunch& pool,
                                    std::string& notes) {
  const Layout& l = pool.layout;
  const int64_t adp = l.AttentionDp();
  // With DP attention SGLang's --tp-size counts every GPU of the instance and --dp-size the
  // attention-DP groups among them.
  std::vector<std::string> a = {fmt::format("--tp-size {}", l.tp * adp)};
  if (adp > 1) {
    a.push_back(fmt::format("--dp-size {}", adp));
    a.push_back("--enable-dp-attention");
    if (l.Replicas() > 1) {
      notes += fmt::format("# Start {} of these servers (one per replica) behind a router.\n",
                           l.Replicas());
    }
  } else if (l.Replicas() > 1) {
    a.push_back(fmt::format("--dp-size {}", l.Replicas()));  // replicas behind SGLang's router
  }
  if (l.pp > 1) a.push_back(fmt::format("--pp-size {}", l.pp));
  if (in.moe && l.ep > 1) a.push_back(fmt::format("--ep-size {}", l.ep));
  if (in.moe && l.GathersTokensForExperts()) {
    notes += fmt::format(
        "# Each expert is split over --tp-size / --ep-size = {} ranks (expert-TP).\n", l.etp);
  }
  // Under DP attention SGLang divides both limits by --dp-size among the attention ranks
  // (SGLang 0.5.0 server arguments), so they are given for the whole instance.
  a.push_back(fmt::format("--max-running-requests {}", pool.max_num_seqs));
  a.push_back(fmt::format("--chunked-prefill-size {}", pool.max_batched_tokens * adp));
  a.push_back(fmt::format("--context-length {}", in.max_model_len));
  if (in.kv_dtype == Dtype::kFp8) a.push_back("--kv-cache-dtype fp8_e4m3");
  if (QuantizedByFlag(in.weight_dtype)) a.push_back("--quantization fp8");
  a.push_back(fmt::format("--mem-fraction-static {:g}", in.gpu_memory_utilization));
  // --moe-a2a-backend deepep with --deepep-mode: normal, low_latency, or auto (normal kernels
  // for prefill batches, low-latency for decode).
  const bool normal =
      pool.prefill_ep == EpKernels::kDeepEpNormal || pool.decode_ep == EpKernels::kDeepEpNormal;
  const bool low_latency = pool.prefill_ep == EpKernels::kDeepEpLowLatency ||
                           pool.decode_ep == EpKernels::kDeepEpLowLatency;
  if (normal || low_latency) {
    a.push_back("--moe-a2a-backend deepep");
    a.push_back(fmt::format("--deepep-mode {}", normal && low_latency ? "auto"
                                                : normal              ? "normal"
                                                                      : "low_latency"));
    if (pool.prefill_ep == EpKernels::kEngineDefault ||
        pool.decode_ep == EpKernels::kEngineDefault) {
      notes += fmt::format(
          "# The prediction used the engine's own all-to-all for {} and DeepEP for the other "
          "phase; SGLang runs DeepEP for both.\n",
          pool.prefill_ep == EpKernels::kEngineDefault ? "prefill" : "decode");
    }
  }
  if (pool.two_batch_overlap) a.push_back("--enable-two-batch-overlap");
  if (pool.cuda_graph_max_batch > 0) {
    a.push_back(fmt::format("--cuda-graph-max-bs {}", pool.cuda_graph_max_batch));
  }
  notes += DispatchNote(pool);
  AddSglangSpeculative(pool, a, notes);
  return a;
}

std::vector<std::string> TrtllmArgs(const LaunchInputs& in, const PoolLaunch& pool,
                                    std::string& notes) {
  const Layout& l = pool.layout;
  if (l.Replicas() > 1) {
    const int64_t per = l.gpus() / l.Replicas();
    notes += fmt::format(
        "# Start {} of these servers (one per replica) behind a router, each on its own {} "
        "(CUDA_VISIBLE_DEVICES) and port (--port).\n",
        l.Replicas(), per == 1 ? std::string("GPU") : fmt::format("{} GPUs", per));
  }
  // trtllm-serve's --tp_size counts every GPU of a pipeline stage; attention DP is a YAML switch.
  std::vector<std::string> a = {"--backend pytorch",
                                fmt::format("--tp_size {}", l.tp * l.AttentionDp())};
  if (l.pp > 1) a.push_back(fmt::format("--pp_size {}", l.pp));
  if (in.moe && l.ep > 1) a.push_back(fmt::format("--ep_size {}", l.ep));
  a.push_back(fmt::format("--max_batch_size {}", SeqsPerAttentionRank(pool)));
  a.push_back(fmt::format("--max_num_tokens {}", pool.max_batched_tokens));
  a.push_back(fmt::format("--max_seq_len {}", in.max_model_len));
  // Without chunked prefill the LLM API refuses a prompt longer than max_num_tokens
  // (tensorrt_llm/llmapi/llm.py; "Why closed-loop TTFT grows", section 2.1).
  if (!pool.chunked_prefill && pool.max_batched_tokens < in.max_model_len) {
    notes += fmt::format(
        "# Without chunked prefill TensorRT-LLM refuses a prompt longer than --max_num_tokens "
        "({}), though --max_seq_len is {}: for longer prompts, plan again with "
        "--max-batched-tokens "
        "above them.\n",
        pool.max_batched_tokens, in.max_model_len);
  }
  a.push_back(fmt::format("--kv_cache_free_gpu_memory_fraction {:.2f}", pool.kv_free_fraction));
  if (pool.prefill_ep != EpKernels::kEngineDefault || pool.decode_ep != EpKernels::kEngineDefault) {
    notes += NoSwitchNote(Engine::kTrtllm, "DeepEP's kernels for the MoE exchange");
  }
  if (pool.two_batch_overlap) notes += NoSwitchNote(Engine::kTrtllm, "two-batch overlap");
  notes += DispatchNote(pool);
  notes += TrtllmSpeculativeNote(in, pool);
  return a;
}

std::string TrtllmYaml(const LaunchInputs& in, const PoolLaunch& pool) {
  std::string yaml = fmt::format("# Written by shardwise: LLM API options for {} ({}).\n",
                                 pool.layout.ToString(), EngineVersion(Engine::kTrtllm));
  yaml +=
      fmt::format("enable_attention_dp: {}\n", pool.layout.AttentionDp() > 1 ? "true" : "false");
  // Expert-TP over attention DP: moe_tp x moe_ep = --tp_size (what --ep_size leaves, made plain).
  if (pool.layout.GathersTokensForExperts()) {
    yaml += fmt::format("moe_tensor_parallel_size: {}\nmoe_expert_parallel_size: {}\n",
                        pool.layout.etp, pool.layout.ep);
  }
  yaml += fmt::format("enable_chunked_prefill: {}\n", pool.chunked_prefill ? "true" : "false");
  if (in.kv_dtype == Dtype::kFp8) yaml += "kv_cache_config:\n  dtype: fp8\n";
  // CudaGraphConfig: padded to the captured sizes up to max_batch_size.
  if (pool.cuda_graph_max_batch > 0) {
    yaml += fmt::format("cuda_graph_config:\n  enable_padding: true\n  max_batch_size: {}\n",
                        pool.cuda_graph_max_batch);
  }
  return yaml + TrtllmSpeculativeYaml(in, pool);
}

std::string TrtllmWeightNote(const LaunchInputs& in) {
  std::string notes = CheckpointNote(in);
  if (QuantizedByFlag(in.weight_dtype)) {
    notes +=
        "# fp8 weights: serve an fp8 checkpoint (e.g. one quantised with NVIDIA ModelOpt); "
        "TensorRT-LLM reads the quantisation from it.\n";
  }
  return notes;
}

StatusOr<LaunchConfig> WriteConfig(Engine engine, const LaunchInputs& in,
                                   const ConfigWriters& writers) {
  const std::vector<std::string> names = LaunchFileNames(engine, in.Disaggregated());
  switch (engine) {
    case Engine::kVllm:
      return writers.vllm(in, names);
    case Engine::kSglang:
      return writers.sglang(in, names);
    case Engine::kTrtllm:
      return writers.trtllm(in, names);
    case Engine::kDynamo:
      return writers.dynamo(in, names);
    case Engine::kDynamoK8s:
    case Engine::kLlmD:
      break;  // manifests, not scripts: ManifestConfig
  }
  return Error(fmt::format("{} writes a manifest, not launch scripts", EngineName(engine)));
}

}  // namespace shardwise::emit::internal
