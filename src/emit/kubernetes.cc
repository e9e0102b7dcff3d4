// Kubernetes manifests of a deployment, its engine vLLM:
// - NVIDIA Dynamo 0.5's DynamoGraphDeployment (apiVersion nvidia.com/v1alpha1, the
//   components/backends/vllm/deploy agg.yaml and disagg.yaml examples): a Frontend service and
//   one worker service per pool (VllmDecodeWorker, VllmPrefillWorker with --is-prefill-worker),
//   each with its replicas, GPUs per pod (resources.limits.gpu) and, for a worker larger than a
//   host, multinode.nodeCount, where the operator starts the pods together and adds the
//   backend's multi-node arguments ("Multinode Deployments").
// - llm-d 0.2's llm-d-modelservice Helm values (modelArtifacts, routing, decode and prefill
//   each with replicas, parallelism and containers): vLLM with the NixlConnector for prefill/
//   decode, the routing sidecar in front of the decode pods; a worker larger than a host runs
//   as a LeaderWorkerSet (multinode: true) of vLLM's multi-node data-parallel ranks, its leader
//   at $LWS_LEADER_ADDRESS and its pods numbered by $LWS_WORKER_INDEX.
// Each container runs the same command line as the shell scripts under /bin/sh -c, so the
// flags and their quoting are the ones the launch tests check.
#include <fmt/format.h>

#include <cctype>

#include "engine_args.h"
#include "placement.h"

namespace shardwise::emit::internal {
namespace manifest {

constexpr std::string_view kDynamoImage = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.5.0";
constexpr std::string_view kLlmdImage = "ghcr.io/llm-d/llm-d:v0.2.0";

// A YAML double-quoted scalar (JSON's escapes are YAML's).
std::string Quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// A DNS-1123 name for the deployment: the model's last path part in lower case, other
// characters as '-', then "-agg" or "-disagg".
std::string ResourceName(const LaunchInputs& in) {
  const std::string_view model = in.model;
  const std::string_view base = model.substr(model.find_last_of('/') + 1);
  std::string name;
  for (char c : base.substr(0, 40)) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0;
    if (ok) name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!ok && !name.empty() && name.back() != '-') name += '-';
  }
  while (!name.empty() && name.back() == '-') name.pop_back();
  if (name.empty()) name = "model";
  return name + (in.Disaggregated() ? "-disagg" : "-agg");
}

// One pool as pods: `replicas` workers of `pool`'s layout, each of `nodes` pods of `gpus` GPUs.
struct Pods {
  PoolLaunch pool;
  int64_t replicas = 1;
  int64_t nodes = 1;
  int64_t gpus = 1;
};

// An aggregated layout's replicas become the service's replicas (one vLLM server each, its
// attention-DP ranks inside); a disaggregated pool's workers are its replicas.
StatusOr<Pods> PodsOf(const LaunchInputs& in, const PoolLaunch& pool, bool aggregated) {
  Pods p{pool, pool.workers};
  if (aggregated) {
    p.replicas = pool.layout.Replicas();
    p.pool.layout.dp = pool.layout.AttentionDp();
  }
  const int64_t gpus = p.pool.layout.gpus(), per_host = std::max<int64_t>(1, in.gpus_per_host);
  p.gpus = std::min(gpus, per_host);
  if (gpus > per_host) {
    // PlaceServer refuses a worker that cannot fill whole hosts, with the message the scripts give.
    SW_RETURN_IF_ERROR(PlaceServer(LaunchInputs{.pool = p.pool, .gpus_per_host = per_host}, gpus));
    p.nodes = gpus / per_host;
  }
  return p;
}

// "NAME=value " (VllmEnv's form) as a container's env entries, indented by `indent`.
std::string EnvEntries(const std::string& env, const std::string& indent) {
  std::string out;
  for (size_t start = 0; start < env.size();) {
    const size_t space = env.find(' ', start);
    const std::string pair = env.substr(start, space - start);
    const size_t eq = pair.find('=');
    if (eq != std::string::npos) {
      out += fmt::format("{}- name: {}\n{}  value: {}\n", indent, pair.substr(0, eq), indent,
                         Quoted(pair.substr(eq + 1)));
    }
    start = space == std::string::npos ? env.size() : space + 1;
  }
  return out;
}

// `program` with `args` on one line, as /bin/sh -c runs it.
std::string ShellLine(const std::string& program, const std::vector<std::string>& args) {
  std::string line = "exec " + program;
  for (const std::string& a : args) line += " " + a;
  return line;
}

// The header of a manifest: the launch script's, as YAML comments, then `notes`.
std::string ManifestHeader(Engine engine, const LaunchInputs& in, const std::string& notes) {
  std::string header = Header(engine, in);
  header = header.substr(header.find('\n') + 1);                  // no shebang
  header = header.substr(0, header.find("set -euo pipefail\n"));  // no shell options
  const std::string_view flags = "# Flags as";
  return header.replace(header.find(flags), flags.size(), "# Fields as") + notes;
}

std::string DynamoService(const std::string& name, const std::string& service, const Pods& p,
                          const std::string& line, const std::string& env) {
  std::string out = fmt::format(
      "    {}:\n      dynamoNamespace: {}\n      envFromSecret: hf-token-secret\n"
      "      componentType: worker\n      replicas: {}\n      resources:\n        limits:\n"
      "          gpu: \"{}\"\n",
      service, name, p.replicas, p.gpus);
  if (p.nodes > 1) out += fmt::format("      multinode:\n        nodeCount: {}\n", p.nodes);
  out += fmt::format(
      "      extraPodSpec:\n        mainContainer:\n          image: {}\n"
      "          workingDir: /workspace/components/backends/vllm\n",
      kDynamoImage);
  if (!env.empty()) out += "          env:\n" + EnvEntries(env, "            ");
  return out + fmt::format(
                   "          command:\n            - /bin/sh\n            - -c\n"
                   "          args:\n            - {}\n",
                   Quoted(line));
}

StatusOr<LaunchConfig> DynamoK8s(const LaunchInputs& in, const std::vector<std::string>& names) {
  const std::string name = ResourceName(in);
  std::string notes = CheckpointNote(in), services;
  bool spans = false;
  auto add = [&](const PoolLaunch& pool, bool prefill) -> Status {
    SW_ASSIGN_OR_RETURN(const Pods p, PodsOf(in, pool, !in.Disaggregated()));
    spans = spans || p.nodes > 1;
    std::vector<std::string> args = {fmt::format("--model {}", in.model)};
    for (std::string& a : VllmArgs(in, p.pool, notes)) args.push_back(std::move(a));
    if (prefill) args.push_back("--is-prefill-worker");
    const std::string env = VllmEnv(p.pool, notes);
    services += DynamoService(name, prefill ? "VllmPrefillWorker" : "VllmDecodeWorker", p,
                              ShellLine("python3 -m dynamo.vllm", args), env);
    return Status();
  };
  SW_RETURN_IF_ERROR(add(in.pool, false));
  if (in.prefill_pool) SW_RETURN_IF_ERROR(add(*in.prefill_pool, true));
  if (spans) {
    notes +=
        "# multinode: the operator starts a worker's pods together (Grove or LeaderWorkerSet) "
        "and adds vLLM's multi-node arguments.\n";
  }
  notes += "# hf-token-secret holds HF_TOKEN; the operator runs etcd and NATS for Dynamo.\n";
  const std::string yaml = fmt::format(
      "{}apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata:\n  name: {}\n"
      "spec:\n  services:\n    Frontend:\n      dynamoNamespace: {}\n"
      "      componentType: frontend\n      replicas: 1\n      extraPodSpec:\n"
      "        mainContainer:\n          image: {}\n{}",
      ManifestHeader(Engine::kDynamoK8s, in, notes), name, name, kDynamoImage, services);
  return LaunchConfig{Engine::kDynamoK8s, {{names[0], yaml}}};
}

// The vLLM data-parallel flags of a worker whose pods are `p.nodes` hosts of a LeaderWorkerSet:
// each pod runs its host's DP ranks, the leader the API server, the others headless.
StatusOr<std::string> LwsDataParallel(const Pods& p, std::vector<std::string>& args) {
  const Layout& l = p.pool.layout;
  const int64_t rank_gpus = l.tp * l.pp;
  if (l.dp <= 1 || p.gpus % rank_gpus != 0) {
    return Error(fmt::format(
        "llm-d cannot run {}: one data-parallel rank ({} GPUs) spans hosts of {} GPUs, which "
        "needs a Ray cluster the llm-d chart does not start; emit dynamo-k8s or a layout whose "
        "tp x pp fits a host",
        l.ToString(), rank_gpus, p.gpus));
  }
  const int64_t local = p.gpus / rank_gpus;
  args.push_back(fmt::format("--data-parallel-size-local {}", local));
  args.push_back("--data-parallel-start-rank $((LWS_WORKER_INDEX * " + std::to_string(local) +
                 "))");
  args.push_back("--data-parallel-address $LWS_LEADER_ADDRESS");
  args.push_back(fmt::format("--data-parallel-rpc-port {}", kVllmDpRpcPort));
  return std::string("if [ \"$LWS_WORKER_INDEX\" != 0 ]; then HEADLESS=--headless; fi; ");
}

StatusOr<std::string> LlmdRole(const LaunchInputs& in, const PoolLaunch& pool, bool prefill,
                               int64_t port, std::string& notes) {
  SW_ASSIGN_OR_RETURN(const Pods p, PodsOf(in, pool, !in.Disaggregated()));
  std::vector<std::string> args = {fmt::format("--port {}", port)};
  if (in.Disaggregated()) {
    args.push_back(
        R"(--kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}')");
  }
  for (std::string& a : VllmArgs(in, p.pool, notes)) args.push_back(std::move(a));
  std::string prelude;
  if (p.nodes > 1) {
    SW_ASSIGN_OR_RETURN(prelude, LwsDataParallel(p, args));
    args.push_back("${HEADLESS:-}");
  }
  const std::string env = VllmEnv(p.pool, notes);
  const Layout& l = p.pool.layout;
  std::string out = fmt::format(
      "{}:\n  create: true\n  replicas: {}\n  parallelism:\n    tensor: {}\n    data: {}\n"
      "    dataLocal: {}\n    workers: {}\n  containers:\n    - name: vllm\n      image: {}\n"
      "      modelCommand: custom\n      command:\n        - /bin/sh\n        - -c\n"
      "      args:\n        - {}\n",
      prefill ? "prefill" : "decode", p.replicas, l.tp, l.dp, l.dp / p.nodes, p.nodes, kLlmdImage,
      Quoted(prelude + ShellLine("vllm serve " + in.model, args)));
  std::string entries = EnvEntries(env, "        ");
  if (in.Disaggregated()) {
    entries +=
        "        - name: VLLM_NIXL_SIDE_CHANNEL_HOST\n          valueFrom:\n"
        "            fieldRef:\n              fieldPath: status.podIP\n";
  }
  if (!entries.empty()) out += "      env:\n" + entries;
  return out + fmt::format(
                   "      ports:\n        - containerPort: {}\n          protocol: TCP\n"
                   "      resources:\n        limits:\n          nvidia.com/gpu: \"{}\"\n"
                   "        requests:\n          nvidia.com/gpu: \"{}\"\n"
                   "      mountModelVolume: true\n",
                   port, p.gpus, p.gpus);
}

StatusOr<LaunchConfig> Llmd(const LaunchInputs& in, const std::vector<std::string>& names) {
  // The routing sidecar listens on the service port in each decode pod and forwards to vLLM
  // on the proxy's target port, after a prefill pod has prefilled the prompt.
  constexpr int64_t kServicePort = 8000, kDecodePort = 8200;
  const bool disagg = in.Disaggregated();
  std::string notes = CheckpointNote(in);
  SW_ASSIGN_OR_RETURN(const std::string decode,
                      LlmdRole(in, in.pool, false, disagg ? kDecodePort : kServicePort, notes));
  std::string prefill = "prefill:\n  create: false\n";
  if (disagg) {
    SW_ASSIGN_OR_RETURN(prefill, LlmdRole(in, *in.prefill_pool, true, kServicePort, notes));
  }
  const bool multinode = decode.find("LWS_WORKER_INDEX") != std::string::npos ||
                         prefill.find("LWS_WORKER_INDEX") != std::string::npos;
  if (multinode) {
    notes +=
        "# multinode: workers larger than a host run as LeaderWorkerSets, one pod per host "
        "(parallelism.workers).\n";
  }
  notes +=
      "# llm-d-hf-token holds HF_TOKEN; install with 'helm install NAME "
      "llm-d-modelservice/llm-d-modelservice -f THIS_FILE'.\n";
  const std::string yaml = fmt::format(
      "{}multinode: {}\nmodelArtifacts:\n  uri: {}\n  name: {}\n  authSecretName: llm-d-hf-token\n"
      "routing:\n  servicePort: {}\n  proxy:\n    enabled: {}\n    targetPort: {}\n{}{}",
      ManifestHeader(Engine::kLlmD, in, notes), multinode ? "true" : "false",
      Quoted("hf://" + in.model), Quoted(in.model), kServicePort, disagg ? "true" : "false",
      kDecodePort, decode, prefill);
  return LaunchConfig{Engine::kLlmD, {{names[0], yaml}}};
}

}  // namespace manifest

StatusOr<LaunchConfig> ManifestConfig(Engine engine, const LaunchInputs& in) {
  SW_RETURN_IF_ERROR(NoContextParallel(engine, in.pool.layout));
  if (in.prefill_pool) SW_RETURN_IF_ERROR(NoContextParallel(engine, in.prefill_pool->layout));
  const std::vector<std::string> names = LaunchFileNames(engine, in.Disaggregated());
  return engine == Engine::kLlmD ? manifest::Llmd(in, names) : manifest::DynamoK8s(in, names);
}

}  // namespace shardwise::emit::internal
