#include "engine_args.h"

#include <fmt/format.h>

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

}  // namespace

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
    shape = fmt::format("# {} GPU(s) per engine instance, {} replica(s).", p.layout.InstanceGpus(),
                        p.layout.Replicas());
  }
  return fmt::format(
      "#!/usr/bin/env bash\n# Written by 'shardwise --emit {}' for {} of {}.\n"
      "# Flags as documented for {}.\n{}\nset -euo pipefail\n",
      EngineName(engine), what, in.model, EngineVersion(engine), shape);
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
  if (in.moe && l.ep > 1) {
    a.push_back("--enable-expert-parallel");
    const int64_t vllm_ep = l.tp * (l.AttentionDp() > 1 ? l.dp : 1);
    if (vllm_ep != l.ep) {
      notes += fmt::format("# vLLM spreads experts over TP x DP = {} ranks; the plan used EP {}.\n",
                           vllm_ep, l.ep);
    }
  }
  if (l.gpus() > in.gpus_per_node) {
    notes +=
        "# Spans nodes: start Ray on every node first (vLLM's multi-node serving), or use "
        "--data-parallel-size-local and --data-parallel-address per node for DP.\n";
  }
  a.push_back(fmt::format("--max-num-seqs {}", SeqsPerAttentionRank(pool)));
  a.push_back(fmt::format("--max-num-batched-tokens {}", pool.max_batched_tokens));
  a.push_back("--enable-chunked-prefill");
  a.push_back(fmt::format("--max-model-len {}", in.max_model_len));
  if (in.kv_dtype == Dtype::kFp8) a.push_back("--kv-cache-dtype fp8");
  if (QuantizedByFlag(in.weight_dtype)) a.push_back("--quantization fp8");
  a.push_back(fmt::format("--gpu-memory-utilization {:g}", in.gpu_memory_utilization));
  return a;
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
  if (l.gpus() > in.gpus_per_node) {
    notes += "# Spans nodes: add --nnodes N --node-rank R --dist-init-addr HOST:PORT per node.\n";
  }
  // Under DP attention SGLang divides both limits by --dp-size among the attention ranks
  // (SGLang 0.5.0 server arguments), so they are given for the whole instance.
  a.push_back(fmt::format("--max-running-requests {}", pool.max_num_seqs));
  a.push_back(fmt::format("--chunked-prefill-size {}", pool.max_batched_tokens * adp));
  a.push_back(fmt::format("--context-length {}", in.max_model_len));
  if (in.kv_dtype == Dtype::kFp8) a.push_back("--kv-cache-dtype fp8_e4m3");
  if (QuantizedByFlag(in.weight_dtype)) a.push_back("--quantization fp8");
  a.push_back(fmt::format("--mem-fraction-static {:g}", in.gpu_memory_utilization));
  return a;
}

std::vector<std::string> TrtllmArgs(const LaunchInputs& in, const PoolLaunch& pool,
                                    std::string& notes) {
  const Layout& l = pool.layout;
  if (l.Replicas() > 1) {
    notes += fmt::format("# Start {} of these servers (one per replica) behind a router.\n",
                         l.Replicas());
  }
  // trtllm-serve's --tp_size counts every GPU of a pipeline stage; attention DP is a YAML switch.
  std::vector<std::string> a = {"--backend pytorch",
                                fmt::format("--tp_size {}", l.tp * l.AttentionDp())};
  if (l.pp > 1) a.push_back(fmt::format("--pp_size {}", l.pp));
  if (in.moe && l.ep > 1) a.push_back(fmt::format("--ep_size {}", l.ep));
  a.push_back(fmt::format("--max_batch_size {}", SeqsPerAttentionRank(pool)));
  a.push_back(fmt::format("--max_num_tokens {}", pool.max_batched_tokens));
  a.push_back(fmt::format("--max_seq_len {}", in.max_model_len));
  a.push_back(fmt::format("--kv_cache_free_gpu_memory_fraction {:.2f}", pool.kv_free_fraction));
  return a;
}

std::string TrtllmYaml(const LaunchInputs& in, const PoolLaunch& pool) {
  std::string yaml = fmt::format("# Written by shardwise: LLM API options for {} ({}).\n",
                                 pool.layout.ToString(), EngineVersion(Engine::kTrtllm));
  yaml +=
      fmt::format("enable_attention_dp: {}\n", pool.layout.AttentionDp() > 1 ? "true" : "false");
  yaml += fmt::format("enable_chunked_prefill: {}\n", pool.chunked_prefill ? "true" : "false");
  if (in.kv_dtype == Dtype::kFp8) yaml += "kv_cache_config:\n  dtype: fp8\n";
  return yaml;
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
  }
  return Error("unknown engine");
}

}  // namespace shardwise::emit::internal
