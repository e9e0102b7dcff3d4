#include "shardwise/emit/launch_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "shardwise/common/suggest.h"

namespace shardwise::emit {
namespace {

struct EngineInfo {
  Engine engine;
  std::string_view name;
  std::string_view version;  // the documentation the flags follow
};

constexpr std::array<EngineInfo, 4> kEngines = {{
    {Engine::kVllm, "vllm", "vLLM 0.10.1 ('vllm serve' engine arguments)"},
    {Engine::kSglang, "sglang", "SGLang 0.5.0 ('python -m sglang.launch_server' server arguments)"},
    {Engine::kTrtllm, "trtllm", "TensorRT-LLM 1.0 ('trtllm-serve', PyTorch backend, LLM API YAML)"},
    {Engine::kDynamo, "dynamo", "NVIDIA Dynamo 0.4.0 (dynamo.frontend and dynamo.vllm workers)"},
}};

const EngineInfo& Info(Engine e) {
  for (const EngineInfo& info : kEngines) {
    if (info.engine == e) return info;
  }
  return kEngines[0];
}

// A shell line continued over several lines, one flag per line.
std::string Command(const std::string& head, const std::vector<std::string>& args) {
  std::string out = head;
  for (const std::string& a : args) out += " \\\n    " + a;
  return out + "\n";
}

std::string Header(Engine engine, const LaunchInputs& in) {
  return fmt::format(
      "#!/usr/bin/env bash\n# Written by 'shardwise plan --emit {}' for layout {} of {}.\n"
      "# Flags as documented for {}.\n# {} GPU(s) per engine instance, {} replica(s).\n"
      "set -euo pipefail\n",
      EngineName(engine), in.layout.ToString(), in.model, EngineVersion(engine),
      in.layout.InstanceGpus(), in.layout.Replicas());
}

bool QuantizedByFlag(Dtype d) { return d == Dtype::kFp8; }
bool NeedsQuantizedCheckpoint(Dtype d) {
  return d == Dtype::kInt4 || d == Dtype::kMxfp4 || d == Dtype::kFp4;
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

// vLLM engine arguments, shared by 'vllm serve' and Dynamo's vLLM workers.
std::vector<std::string> VllmArgs(const LaunchInputs& in, std::string& notes) {
  const Layout& l = in.layout;
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
  a.push_back(fmt::format("--max-num-seqs {}", in.max_num_seqs));
  a.push_back(fmt::format("--max-num-batched-tokens {}", in.max_batched_tokens));
  a.push_back("--enable-chunked-prefill");
  a.push_back(fmt::format("--max-model-len {}", in.max_model_len));
  if (in.kv_dtype == Dtype::kFp8) a.push_back("--kv-cache-dtype fp8");
  if (QuantizedByFlag(in.weight_dtype)) a.push_back("--quantization fp8");
  a.push_back(fmt::format("--gpu-memory-utilization {:g}", in.gpu_memory_utilization));
  return a;
}

StatusOr<LaunchConfig> Vllm(const LaunchInputs& in) {
  SW_RETURN_IF_ERROR(NoContextParallel(Engine::kVllm, in.layout));
  std::string notes = CheckpointNote(in);
  const std::vector<std::string> args = VllmArgs(in, notes);
  LaunchConfig c;
  c.engine = Engine::kVllm;
  c.files.push_back({LaunchFileNames(Engine::kVllm)[0],
                     Header(Engine::kVllm, in) + notes + Command("vllm serve " + in.model, args)});
  return c;
}

StatusOr<LaunchConfig> Sglang(const LaunchInputs& in) {
  const Layout& l = in.layout;
  SW_RETURN_IF_ERROR(NoContextParallel(Engine::kSglang, l));
  std::string notes = CheckpointNote(in);
  const int64_t adp = l.AttentionDp();
  // With DP attention SGLang's --tp-size counts every GPU of the instance and --dp-size the
  // attention-DP groups among them.
  std::vector<std::string> a = {fmt::format("--model-path {}", in.model),
                                fmt::format("--tp-size {}", l.tp * adp)};
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
  a.push_back(fmt::format("--max-running-requests {}", in.max_num_seqs));
  a.push_back(fmt::format("--chunked-prefill-size {}", in.max_batched_tokens));
  a.push_back(fmt::format("--context-length {}", in.max_model_len));
  if (in.kv_dtype == Dtype::kFp8) a.push_back("--kv-cache-dtype fp8_e4m3");
  if (QuantizedByFlag(in.weight_dtype)) a.push_back("--quantization fp8");
  a.push_back(fmt::format("--mem-fraction-static {:g}", in.gpu_memory_utilization));
  LaunchConfig c;
  c.engine = Engine::kSglang;
  c.files.push_back(
      {LaunchFileNames(Engine::kSglang)[0],
       Header(Engine::kSglang, in) + notes + Command("python -m sglang.launch_server", a)});
  return c;
}

StatusOr<LaunchConfig> Trtllm(const LaunchInputs& in) {
  const Layout& l = in.layout;
  SW_RETURN_IF_ERROR(NoContextParallel(Engine::kTrtllm, l));
  std::string notes = CheckpointNote(in);
  if (QuantizedByFlag(in.weight_dtype)) {
    notes +=
        "# fp8 weights: serve an fp8 checkpoint (e.g. one quantised with NVIDIA ModelOpt); "
        "TensorRT-LLM reads the quantisation from it.\n";
  }
  const int64_t adp = l.AttentionDp();
  if (l.Replicas() > 1) {
    notes += fmt::format("# Start {} of these servers (one per replica) behind a router.\n",
                         l.Replicas());
  }
  // trtllm-serve's --tp_size counts every GPU of a pipeline stage; attention DP is a YAML switch.
  std::vector<std::string> a = {"--backend pytorch", fmt::format("--tp_size {}", l.tp * adp)};
  if (l.pp > 1) a.push_back(fmt::format("--pp_size {}", l.pp));
  if (in.moe && l.ep > 1) a.push_back(fmt::format("--ep_size {}", l.ep));
  a.push_back(fmt::format("--max_batch_size {}", in.max_num_seqs));
  a.push_back(fmt::format("--max_num_tokens {}", in.max_batched_tokens));
  a.push_back(fmt::format("--max_seq_len {}", in.max_model_len));
  a.push_back(fmt::format("--kv_cache_free_gpu_memory_fraction {:.2f}", in.kv_free_fraction));
  a.push_back("--extra_llm_api_options trtllm_extra.yaml");
  std::string yaml = fmt::format("# Written by shardwise: LLM API options for {} ({}).\n",
                                 l.ToString(), EngineVersion(Engine::kTrtllm));
  yaml += fmt::format("enable_attention_dp: {}\n", adp > 1 ? "true" : "false");
  yaml += "enable_chunked_prefill: true\n";
  if (in.kv_dtype == Dtype::kFp8) yaml += "kv_cache_config:\n  dtype: fp8\n";
  LaunchConfig c;
  c.engine = Engine::kTrtllm;
  c.files.push_back({LaunchFileNames(Engine::kTrtllm)[0],
                     Header(Engine::kTrtllm, in) + notes + Command("trtllm-serve " + in.model, a)});
  c.files.push_back({LaunchFileNames(Engine::kTrtllm)[1], yaml});
  return c;
}

StatusOr<LaunchConfig> Dynamo(const LaunchInputs& in) {
  SW_RETURN_IF_ERROR(NoContextParallel(Engine::kDynamo, in.layout));
  std::string notes = CheckpointNote(in);
  std::vector<std::string> worker = {fmt::format("--model {}", in.model)};
  for (std::string& a : VllmArgs(in, notes)) worker.push_back(std::move(a));
  std::string workers = Command("python -m dynamo.vllm", worker);
  if (in.prefill_layout) {
    // Disaggregated: decode workers in the background, prefill workers (--is-prefill-worker)
    // hand their KV cache over to them.
    SW_RETURN_IF_ERROR(NoContextParallel(Engine::kDynamo, *in.prefill_layout));
    LaunchInputs prefill = in;
    prefill.layout = *in.prefill_layout;
    prefill.max_num_seqs = in.prefill_max_num_seqs;
    std::vector<std::string> args = {fmt::format("--model {}", in.model)};
    std::string prefill_notes;
    for (std::string& a : VllmArgs(prefill, prefill_notes)) args.push_back(std::move(a));
    args.push_back("--is-prefill-worker");
    workers.pop_back();  // the newline: run the decode worker in the background
    workers = fmt::format(
        "# Decode worker: {} ({} GPUs).\n{} &\n# Prefill worker: {} ({} GPUs). Start as many "
        "of each as the load needs; their ratio is not planned here.\n{}",
        in.layout.ToString(), in.layout.gpus(), workers, prefill.layout.ToString(),
        prefill.layout.gpus(), Command("python -m dynamo.vllm", args));
    notes += prefill_notes;
  }
  LaunchConfig c;
  c.engine = Engine::kDynamo;
  c.files.push_back({LaunchFileNames(Engine::kDynamo)[0],
                     Header(Engine::kDynamo, in) + notes +
                         "# Needs etcd and NATS running (Dynamo's discovery and messaging).\n" +
                         "python -m dynamo.frontend --http-port 8000 &\n" + workers});
  return c;
}

}  // namespace

StatusOr<Engine> ParseEngine(std::string_view name) {
  std::vector<std::string> names;
  for (const EngineInfo& info : kEngines) {
    if (info.name == name) return info.engine;
    names.emplace_back(info.name);
  }
  return Error(UnknownNameMessage("engine", name, names, "use vllm, sglang, trtllm or dynamo"));
}

std::string_view EngineName(Engine engine) { return Info(engine).name; }

std::vector<std::string> LaunchFileNames(Engine engine) {
  std::vector<std::string> names = {fmt::format("launch_{}.sh", EngineName(engine))};
  if (engine == Engine::kTrtllm) names.push_back("trtllm_extra.yaml");
  return names;
}
std::string_view EngineVersion(Engine engine) { return Info(engine).version; }

StatusOr<LaunchConfig> MakeLaunchConfig(Engine engine, const LaunchInputs& in) {
  switch (engine) {
    case Engine::kVllm:
      return Vllm(in);
    case Engine::kSglang:
      return Sglang(in);
    case Engine::kTrtllm:
      return Trtllm(in);
    case Engine::kDynamo:
      return Dynamo(in);
  }
  return Error("unknown engine");
}

std::string HuggingFaceRepo(std::string_view name) {
  // data/models/SOURCES.md: the repository each catalog config.json was copied from.
  static const std::array<std::pair<std::string_view, std::string_view>, 14> kRepos = {{
      {"llama-2-7b", "meta-llama/Llama-2-7b-hf"},
      {"llama-2-70b", "meta-llama/Llama-2-70b-hf"},
      {"llama-3.1-8b", "meta-llama/Llama-3.1-8B"},
      {"llama-3.1-70b", "meta-llama/Llama-3.1-70B"},
      {"llama-3.1-405b", "meta-llama/Llama-3.1-405B"},
      {"llama-3.3-70b", "meta-llama/Llama-3.3-70B-Instruct"},
      {"mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1"},
      {"mixtral-8x22b", "mistralai/Mixtral-8x22B-v0.1"},
      {"qwen2.5-72b", "Qwen/Qwen2.5-72B"},
      {"qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B"},
      {"qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B"},
      {"deepseek-v3", "deepseek-ai/DeepSeek-V3"},
      {"gpt-oss-20b", "openai/gpt-oss-20b"},
      {"gpt-oss-120b", "openai/gpt-oss-120b"},
  }};
  for (const auto& [catalog, repo] : kRepos) {
    if (catalog == name) return std::string(repo);
  }
  return "";
}

}  // namespace shardwise::emit
