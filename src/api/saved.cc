#include "shardwise/api/saved.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <vector>

#include "shardwise/common/json_fields.h"
#include "shardwise/report/schema.h"

namespace shardwise::api {
namespace {

nlohmann::json Optional(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
nlohmann::json Optional(const std::optional<int64_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json EpJson(const std::optional<EpSetting>& ep) {
  if (!ep) return nullptr;
  return {{"algorithm", std::string(EpAlgorithmName(ep->algorithm))},
          {"dispatch_dtype", std::string(DtypeName(ep->dispatch_dtype))},
          {"two_batch_overlap", ep->two_batch_overlap}};
}

// More requests in flight than any saved run of this tool holds (16,384 clients per GPU).
constexpr double kMaxSavedInFlight = 1e9;

// Typed reads of a saved object: a missing or null key keeps the default; a key of another
// type is an error naming the file and the key.
struct Reader {
  const nlohmann::json& json;
  std::string source;

  Status TypeError(const std::string& key, const char* type) const {
    return Error(
        fmt::format("{}: deployment.saved.{} must be {}; save the result again with "
                    "this version's --json",
                    source, key, type));
  }
  bool Present(const std::string& key) const {
    return json.is_object() && json.contains(key) && !json.at(key).is_null();
  }
  Status Text(const std::string& key, std::string& into) const {
    if (!Present(key)) return Status();
    if (!json.at(key).is_string()) return TypeError(key, "a string");
    into = json.at(key).get<std::string>();
    return Status();
  }
  Status Number(const std::string& key, double& into) const {
    if (!Present(key)) return Status();
    const nlohmann::json& v = json.at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>())) return TypeError(key, "a number");
    into = v.get<double>();
    return Status();
  }
  Status Number(const std::string& key, std::optional<double>& into) const {
    if (!Present(key)) return Status();
    double v = 0;
    SW_RETURN_IF_ERROR(Number(key, v));
    into = v;
    return Status();
  }
  Status Bool(const std::string& key, bool& into) const {
    if (!Present(key)) return Status();
    if (!json.at(key).is_boolean()) return TypeError(key, "true or false");
    into = json.at(key).get<bool>();
    return Status();
  }
  Status Int(const std::string& key, int64_t& into) const {
    if (!Present(key)) return Status();
    const nlohmann::json& v = json.at(key);
    if (!v.is_number_integer()) return TypeError(key, "a whole number");
    into = v.get<int64_t>();
    return Status();
  }
  Status Int(const std::string& key, std::optional<int64_t>& into) const {
    if (!Present(key)) return Status();
    int64_t v = 0;
    SW_RETURN_IF_ERROR(Int(key, v));
    into = v;
    return Status();
  }
  StatusOr<Reader> Object(const std::string& key) const {
    // All defaults; the reader holds a reference, so to an object that outlives it.
    static const nlohmann::json kEmpty = nlohmann::json::object();
    if (!Present(key)) return Reader{kEmpty, source};
    if (!json.at(key).is_object()) return TypeError(key, "an object");
    return Reader{json.at(key), source};
  }
};

StatusOr<std::optional<EpSetting>> ReadEp(const Reader& spec, const std::string& key) {
  if (!spec.Present(key)) return std::optional<EpSetting>();
  SW_ASSIGN_OR_RETURN(const Reader r, spec.Object(key));
  std::string algorithm = "flat", dispatch = "bf16";
  SW_RETURN_IF_ERROR(r.Text("algorithm", algorithm));
  SW_RETURN_IF_ERROR(r.Text("dispatch_dtype", dispatch));
  EpSetting ep;
  SW_ASSIGN_OR_RETURN(ep.algorithm, ParseEpAlgorithm(algorithm));
  SW_ASSIGN_OR_RETURN(ep.dispatch_dtype, ParseDtype(dispatch));
  if (r.Present("two_batch_overlap")) {
    if (!r.json.at("two_batch_overlap").is_boolean()) {
      return r.TypeError(key + ".two_batch_overlap", "true or false");
    }
    ep.two_batch_overlap = r.json.at("two_batch_overlap").get<bool>();
  }
  return std::optional<EpSetting>(ep);
}

Status ReadServing(const Reader& r, ServingOverrides& s) {
  SW_RETURN_IF_ERROR(r.Text("engine", s.engine));
  SW_RETURN_IF_ERROR(r.Text("dtype", s.dtype));
  SW_RETURN_IF_ERROR(r.Text("kv_dtype", s.kv_dtype));
  SW_RETURN_IF_ERROR(r.Number("gpu_memory_utilization", s.gpu_memory_utilization));
  SW_RETURN_IF_ERROR(r.Int("max_batched_tokens", s.max_batched_tokens));
  SW_RETURN_IF_ERROR(r.Int("max_batch", s.max_batch));
  SW_RETURN_IF_ERROR(r.Text("admission", s.admission));
  SW_RETURN_IF_ERROR(r.Number("expert_imbalance", s.expert_imbalance));
  SW_RETURN_IF_ERROR(r.Int("redundant_experts", s.redundant_experts));
  SW_RETURN_IF_ERROR(r.Number("expert_skew", s.expert_skew));
  SW_RETURN_IF_ERROR(r.Text("expert_load", s.expert_load));
  SW_RETURN_IF_ERROR(r.Number("capacity_factor", s.capacity_factor));
  SW_RETURN_IF_ERROR(r.Text("shared_experts", s.shared_experts));
  SW_RETURN_IF_ERROR(r.Number("prefix_hit_rate", s.prefix_hit_rate));
  SW_RETURN_IF_ERROR(r.Text("speculative", s.speculative));
  SW_RETURN_IF_ERROR(r.Int("spec_tokens", s.spec_tokens));
  return r.Text("acceptance", s.acceptance);
}

Status ReadSpec(const Reader& r, DeploymentSpec& d) {
  SW_RETURN_IF_ERROR(r.Text("layout", d.layout));
  SW_RETURN_IF_ERROR(r.Text("prefill_layout", d.prefill_layout));
  SW_RETURN_IF_ERROR(r.Text("decode_layout", d.decode_layout));
  SW_RETURN_IF_ERROR(r.Int("prefill_workers", d.prefill_workers));
  SW_RETURN_IF_ERROR(r.Int("decode_workers", d.decode_workers));
  SW_RETURN_IF_ERROR(r.Text("prefill_cluster", d.prefill_cluster));
  SW_RETURN_IF_ERROR(r.Int("prefill_redundant_experts", d.prefill_redundant_experts));
  SW_RETURN_IF_ERROR(r.Text("prefill_shared_experts", d.prefill_shared_experts));
  SW_RETURN_IF_ERROR(r.Text("kv_transfer", d.kv_transfer));
  SW_ASSIGN_OR_RETURN(d.ep, ReadEp(r, "ep"));
  SW_ASSIGN_OR_RETURN(d.prefill_ep, ReadEp(r, "prefill_ep"));
  if (d.Empty()) {
    return Error(fmt::format("{}: deployment.saved.spec names no layout", r.source));
  }
  return Status();
}

}  // namespace

ClusterRef RefOf(const std::string& name, const ClusterSpec& sized) {
  ClusterRef ref;
  ref.name = name;
  const int64_t per_node = sized.GpusPerNode();
  if (sized.num_gpus % per_node == 0) {
    ref.nodes = sized.num_gpus / per_node;
  } else {
    ref.gpus = sized.num_gpus;
  }
  return ref;
}

SavedDeployment Save(std::string command, std::string model, ClusterRef cluster,
                     ServingOverrides serving, const Deployment& deployment, int64_t isl,
                     int64_t osl) {
  SavedDeployment s;
  s.command = std::move(command);
  s.model = std::move(model);
  s.cluster = std::move(cluster);
  s.serving = std::move(serving);
  // A bare engine name runs its newest profile: the record names the version that ran, so a
  // replay runs that one after a newer profile ships.
  const EngineProfile& ran = deployment.prefill().perf.engine;
  if (s.serving.engine == ran.engine && !ran.name.empty()) s.serving.engine = ran.name;
  s.deployment = SpecOf(deployment);
  s.isl = isl;
  s.osl = osl;
  return s;
}

nlohmann::json ToJson(const SavedDeployment& s) {
  const ServingOverrides& o = s.serving;
  const DeploymentSpec& d = s.deployment;
  return {{"command", s.command},
          {"model", s.model},
          {"cluster",
           {{"name", s.cluster.name},
            {"nodes", Optional(s.cluster.nodes)},
            {"gpus", Optional(s.cluster.gpus)},
            {"profile", s.cluster.profile},
            {"usd_per_gpu_hour", Optional(s.cluster.usd_per_gpu_hour)}}},
          {"serving",
           {{"engine", o.engine},
            {"dtype", o.dtype},
            {"kv_dtype", o.kv_dtype},
            {"gpu_memory_utilization", Optional(o.gpu_memory_utilization)},
            {"max_batched_tokens", Optional(o.max_batched_tokens)},
            {"max_batch", Optional(o.max_batch)},
            {"admission", o.admission},
            {"expert_imbalance", o.expert_imbalance},
            {"redundant_experts", o.redundant_experts},
            {"expert_skew", Optional(o.expert_skew)},
            {"expert_load", o.expert_load},
            {"capacity_factor", Optional(o.capacity_factor)},
            {"shared_experts", o.shared_experts},
            {"prefix_hit_rate", o.prefix_hit_rate},
            {"speculative", o.speculative},
            {"spec_tokens", o.spec_tokens},
            {"acceptance", o.acceptance}}},
          {"spec",
           {{"layout", d.layout},
            {"prefill_layout", d.prefill_layout},
            {"decode_layout", d.decode_layout},
            {"prefill_workers", d.prefill_workers},
            {"decode_workers", d.decode_workers},
            {"prefill_cluster", d.prefill_cluster},
            {"prefill_redundant_experts", Optional(d.prefill_redundant_experts)},
            {"prefill_shared_experts", d.prefill_shared_experts},
            {"kv_transfer", d.kv_transfer},
            {"ep", EpJson(d.ep)},
            {"prefill_ep", EpJson(d.prefill_ep)}}},
          {"workload",
           {{"isl", s.isl},
            {"osl", s.osl},
            {"trace", s.trace},
            {"isl_dist", s.lengths.isl_dist},
            {"osl_dist", s.lengths.osl_dist},
            {"length_cv", Optional(s.lengths.length_cv)}}},
          {"load",
           {{"rate", Optional(s.rate)},
            {"concurrency", Optional(s.concurrency)},
            {"in_flight", Optional(s.in_flight)},
            {"offline", s.offline},
            {"burstiness", Optional(s.burstiness)},
            {"seed", s.seed},
            {"router", s.router}}},
          {"slo",
           {{"max_ttft_ms", Optional(s.slo.max_ttft_ms)},
            {"max_tpot_ms", Optional(s.slo.max_tpot_ms)},
            {"percentile", s.slo.percentile}}}};
}

StatusOr<SavedDeployment> SavedDeploymentFromJson(const nlohmann::json& result,
                                                  const std::string& source) {
  if (!result.is_object() || !result.contains("deployment") ||
      !result.at("deployment").is_object() || !result.at("deployment").contains("saved") ||
      !result.at("deployment").at("saved").is_object()) {
    return Error(
        fmt::format("{}: not a saved deployment (a plan, recommend, explain, simulate or "
                    "price --json of this version has 'deployment.saved')",
                    source));
  }
  if (!result.contains("schema_version") || result.at("schema_version") != report::kSchemaVersion) {
    return Error(
        fmt::format("{}: written with schema_version {}, not this version's {}; re-run "
                    "the command that wrote it",
                    source,
                    result.contains("schema_version") ? result.at("schema_version").dump()
                                                      : std::string("(none)"),
                    report::kSchemaVersion));
  }
  const Reader saved{result.at("deployment").at("saved"), source};
  SavedDeployment s;
  SW_RETURN_IF_ERROR(saved.Text("command", s.command));
  static const std::vector<std::string> kDeciding = {"plan", "recommend", "explain", "simulate",
                                                     "price"};
  if (std::find(kDeciding.begin(), kDeciding.end(), s.command) == kDeciding.end() ||
      result.value("command", nlohmann::json()) != s.command) {
    return Error(
        fmt::format("{}: deployment.saved.command must be the plan, recommend, explain, "
                    "simulate or price that wrote the file, got '{}'",
                    source, s.command));
  }
  SW_RETURN_IF_ERROR(saved.Text("model", s.model));
  if (s.model.empty()) return Error(fmt::format("{}: deployment.saved names no model", source));
  SW_ASSIGN_OR_RETURN(const Reader cluster, saved.Object("cluster"));
  SW_RETURN_IF_ERROR(cluster.Text("name", s.cluster.name));
  SW_RETURN_IF_ERROR(cluster.Int("nodes", s.cluster.nodes));
  SW_RETURN_IF_ERROR(cluster.Int("gpus", s.cluster.gpus));
  SW_RETURN_IF_ERROR(cluster.Text("profile", s.cluster.profile));
  SW_RETURN_IF_ERROR(cluster.Number("usd_per_gpu_hour", s.cluster.usd_per_gpu_hour));
  SW_ASSIGN_OR_RETURN(const Reader serving, saved.Object("serving"));
  SW_RETURN_IF_ERROR(ReadServing(serving, s.serving));
  SW_ASSIGN_OR_RETURN(const Reader spec, saved.Object("spec"));
  SW_RETURN_IF_ERROR(ReadSpec(spec, s.deployment));
  SW_ASSIGN_OR_RETURN(const Reader workload, saved.Object("workload"));
  // What an older save lacks is refused, named, with what to do.
  const auto require = [&source](const Reader& in, const std::string& where,
                                 std::initializer_list<const char*> keys) -> Status {
    for (const char* key : keys) {
      if (!in.Present(key)) {
        return Error(
            fmt::format("{}: deployment.saved.{}{} is missing; save the result again "
                        "with this version's --json",
                        source, where, key));
      }
    }
    return Status();
  };
  SW_RETURN_IF_ERROR(require(saved, "", {"load", "slo"}));
  SW_RETURN_IF_ERROR(require(workload, "workload.", {"isl", "osl"}));
  SW_RETURN_IF_ERROR(workload.Int("isl", s.isl));
  SW_RETURN_IF_ERROR(workload.Int("osl", s.osl));
  SW_RETURN_IF_ERROR(workload.Text("trace", s.trace));
  SW_RETURN_IF_ERROR(workload.Text("isl_dist", s.lengths.isl_dist));
  SW_RETURN_IF_ERROR(workload.Text("osl_dist", s.lengths.osl_dist));
  SW_RETURN_IF_ERROR(workload.Number("length_cv", s.lengths.length_cv));
  SW_ASSIGN_OR_RETURN(const Reader load, saved.Object("load"));
  SW_RETURN_IF_ERROR(load.Number("rate", s.rate));
  SW_RETURN_IF_ERROR(load.Int("concurrency", s.concurrency));
  SW_RETURN_IF_ERROR(load.Number("in_flight", s.in_flight));
  if (s.in_flight && !(*s.in_flight > 0 && *s.in_flight <= kMaxSavedInFlight)) {
    return load.TypeError("in_flight", "a positive number of requests in flight (at most 1e9)");
  }
  SW_RETURN_IF_ERROR(load.Bool("offline", s.offline));
  SW_RETURN_IF_ERROR(load.Number("burstiness", s.burstiness));
  if (load.Present("seed")) {  // any unsigned 64-bit seed a run may have saved
    if (!load.json.at("seed").is_number_unsigned()) {
      return load.TypeError("seed", "a whole number from 0");
    }
    s.seed = load.json.at("seed").get<uint64_t>();
  }
  SW_RETURN_IF_ERROR(load.Text("router", s.router));
  SW_ASSIGN_OR_RETURN(const Reader slo, saved.Object("slo"));
  SW_RETURN_IF_ERROR(slo.Number("max_ttft_ms", s.slo.max_ttft_ms));
  SW_RETURN_IF_ERROR(slo.Number("max_tpot_ms", s.slo.max_tpot_ms));
  SW_RETURN_IF_ERROR(slo.Text("percentile", s.slo.percentile));
  return s;
}

StatusOr<SavedDeployment> LoadSavedDeployment(const std::string& path) {
  SW_ASSIGN_OR_RETURN(const nlohmann::json result, ReadJsonFile(path, kPlanInput));
  StatusOr<SavedDeployment> saved = SavedDeploymentFromJson(result, path);
  if (!saved.ok()) return saved.status().WithField("deployment");
  return saved;
}

}  // namespace shardwise::api
