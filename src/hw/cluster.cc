#include "shardwise/hw/cluster.h"

#include <fmt/format.h>

#include <algorithm>

#include "shardwise/catalog/embedded.h"
#include "shardwise/common/checked_math.h"
#include "shardwise/common/json_fields.h"

namespace shardwise {

int64_t ClusterSpec::GpusPerUnit(int level) const {
  int64_t n = 1;
  for (int l = 0; l <= level && l < static_cast<int>(levels.size()); ++l) n *= levels[l].fan_out;
  return n;
}

double ClusterSpec::PerGpuEgressBytesPerS(int level) const {
  const TopologyLevel& l = levels.at(level);
  if (l.switch_bytes_per_s <= 0) return l.egress_bytes_per_s;
  const double gpus = static_cast<double>(GpusPerUnit(level));
  return std::min(l.egress_bytes_per_s, l.switch_bytes_per_s / gpus);
}

namespace {

constexpr int64_t kMaxFanOut = 1'000'000;
constexpr int64_t kMaxGpus = 1'000'000;

// The GPUs of the whole cluster (the product of the fan-outs), refused above kMaxGpus before
// anything can overflow.
Status CheckCapacity(const std::vector<TopologyLevel>& levels, const std::string& name) {
  int64_t gpus = 1;
  for (const TopologyLevel& l : levels) {
    const std::optional<int64_t> next = CheckedMul(gpus, l.fan_out);
    if (!next || *next > kMaxGpus) {
      return Error(
          fmt::format("{}: the levels' fan-outs multiply to more than {} GPUs; check "
                      "the fan_out values (and --nodes)",
                      name, kMaxGpus));
    }
    gpus = *next;
  }
  return Status();
}

std::map<std::string, std::string> ReadSources(const nlohmann::json& json) {
  std::map<std::string, std::string> out;
  if (json.contains("sources") && json.at("sources").is_object()) {
    for (const auto& [key, value] : json.at("sources").items()) {
      if (value.is_string()) out[key] = value.get<std::string>();
    }
  }
  return out;
}

Status NeedSource(const std::map<std::string, std::string>& sources, const std::string& key,
                  const std::string& where) {
  if (sources.contains(key) && !sources.at(key).empty()) return Status();
  return Error(
      fmt::format("{}: '{}' has no entry in \"sources\"; every catalog number needs its "
                  "source",
                  where, key));
}

StatusOr<TopologyLevel> ParseLevel(const nlohmann::json& json, const std::string& where,
                                   const GpuSpec& gpu, bool innermost) {
  if (!json.is_object()) return Error(fmt::format("{}: each level must be an object", where));
  const JsonObject o{json, where};
  TopologyLevel l;
  SW_ASSIGN_OR_RETURN(l.name, o.String("name"));
  const std::string at = fmt::format("{} level '{}'", where, l.name);
  const JsonObject lo{json, at};
  l.sources = ReadSources(json);
  SW_ASSIGN_OR_RETURN(l.fan_out, lo.Int("fan_out"));
  if (l.fan_out > kMaxFanOut) return Error(fmt::format("{}: fan_out is implausibly large", at));
  if (lo.Has("egress_bytes_per_s")) {
    SW_ASSIGN_OR_RETURN(l.egress_bytes_per_s, lo.Number("egress_bytes_per_s"));
    SW_RETURN_IF_ERROR(NeedSource(l.sources, "egress_bytes_per_s", at));
  } else {
    // Default: the scale-up link inside the innermost level, the NIC above it.
    l.egress_bytes_per_s = innermost ? gpu.scale_up_bytes_per_s : gpu.nic_bytes_per_s;
    l.sources["egress_bytes_per_s"] = fmt::format(
        "GPU catalog ({}): {}", gpu.name, innermost ? "scale_up_bytes_per_s" : "nic_bytes_per_s");
  }
  SW_ASSIGN_OR_RETURN(l.switch_bytes_per_s, lo.NumberOr("switch_bytes_per_s", 0.0));
  if (l.switch_bytes_per_s > 0) SW_RETURN_IF_ERROR(NeedSource(l.sources, "switch_bytes_per_s", at));
  SW_ASSIGN_OR_RETURN(l.mesh, lo.BoolOr("mesh", false));
  SW_ASSIGN_OR_RETURN(l.efficiency, lo.Number("efficiency"));
  SW_ASSIGN_OR_RETURN(l.hop_latency_s, lo.NumberOr("hop_latency_s", 0.0));
  SW_ASSIGN_OR_RETURN(l.ramp_bytes, lo.NumberOr("ramp_bytes", 0.0));
  SW_ASSIGN_OR_RETURN(l.ramp_exponent, lo.NumberOr("ramp_exponent", 1.0));
  SW_ASSIGN_OR_RETURN(l.in_network_reduction, lo.BoolOr("in_network_reduction", false));
  SW_ASSIGN_OR_RETURN(l.in_network_fraction, lo.NumberOr("in_network_fraction", 0.0));
  if (l.efficiency > 1 || l.in_network_fraction > 1) {
    return Error(fmt::format("{}: efficiency and in_network_fraction must be at most 1", at));
  }
  if (l.ramp_exponent <= 0 || l.ramp_exponent > 10) {
    return Error(fmt::format("{}: ramp_exponent must be in (0, 10]", at));
  }
  if (l.in_network_reduction && l.in_network_fraction <= 0) {
    return Error(fmt::format("{}: in_network_reduction needs a positive in_network_fraction", at));
  }
  for (const char* key : {"efficiency", "hop_latency_s", "ramp_bytes"}) {
    SW_RETURN_IF_ERROR(NeedSource(l.sources, key, at));
  }
  if (l.in_network_reduction) SW_RETURN_IF_ERROR(NeedSource(l.sources, "in_network_fraction", at));
  return l;
}

}  // namespace

StatusOr<ClusterSpec> ParseClusterSpec(const nlohmann::json& json, const std::string& source) {
  if (!json.is_object()) return Error(fmt::format("{}: expected a JSON object", source));
  const JsonObject o{json, source};
  ClusterSpec c;
  SW_ASSIGN_OR_RETURN(c.name, o.String("name"));
  if (o.Has("description")) {
    SW_ASSIGN_OR_RETURN(c.description, o.String("description"));
  }
  if (!o.Has("gpu")) return o.MissingKey("gpu");
  if (json.at("gpu").is_string()) {
    SW_ASSIGN_OR_RETURN(c.gpu, LoadGpu(json.at("gpu").get<std::string>()));
  } else {
    SW_ASSIGN_OR_RETURN(c.gpu, ParseGpuSpec(json.at("gpu"), source + ": gpu"));
  }
  c.sources = ReadSources(json);
  SW_ASSIGN_OR_RETURN(c.launch_latency_s, o.NumberOr("launch_latency_s", 0.0));
  SW_RETURN_IF_ERROR(NeedSource(c.sources, "launch_latency_s", source));
  if (!o.Has("levels") || !json.at("levels").is_array() || json.at("levels").empty()) {
    return Error(fmt::format("{}: 'levels' must be a non-empty list, innermost first", source));
  }
  for (const auto& level : json.at("levels")) {
    SW_ASSIGN_OR_RETURN(TopologyLevel l, ParseLevel(level, source, c.gpu, c.levels.empty()));
    c.levels.push_back(std::move(l));
  }
  if (o.Has("nodes_level")) {
    SW_ASSIGN_OR_RETURN(std::string nodes_level, o.String("nodes_level"));
    for (size_t i = 0; i < c.levels.size(); ++i) {
      if (c.levels[i].name == nodes_level) c.nodes_level = static_cast<int>(i);
    }
    if (c.nodes_level < 1) {
      return Error(fmt::format("{}: nodes_level '{}' must name a level above the first", source,
                               nodes_level));
    }
  }
  if (o.Has("gpus_per_host")) {
    SW_ASSIGN_OR_RETURN(c.gpus_per_host, o.Int("gpus_per_host"));
    if (c.gpus_per_host < 1 || c.GpusPerNode() % c.gpus_per_host != 0) {
      return Error(fmt::format("{}: gpus_per_host {} must divide the {} GPUs of level '{}'", source,
                               c.gpus_per_host, c.GpusPerNode(), c.levels[0].name));
    }
    SW_RETURN_IF_ERROR(NeedSource(c.sources, "gpus_per_host", source));
  }
  SW_RETURN_IF_ERROR(CheckCapacity(c.levels, source));
  c.num_gpus = c.Capacity();
  return c;
}

nlohmann::json ClusterToJson(const ClusterSpec& c) {
  nlohmann::json levels = nlohmann::json::array();
  for (const TopologyLevel& l : c.levels) {
    nlohmann::json j = {{"name", l.name},
                        {"fan_out", l.fan_out},
                        {"egress_bytes_per_s", l.egress_bytes_per_s},
                        {"efficiency", l.efficiency},
                        {"hop_latency_s", l.hop_latency_s},
                        {"ramp_bytes", l.ramp_bytes},
                        {"ramp_exponent", l.ramp_exponent},
                        {"sources", l.sources}};
    if (l.switch_bytes_per_s > 0) j["switch_bytes_per_s"] = l.switch_bytes_per_s;
    if (l.mesh) j["mesh"] = true;
    if (l.in_network_reduction) {
      j["in_network_reduction"] = true;
      j["in_network_fraction"] = l.in_network_fraction;
    }
    levels.push_back(j);
  }
  nlohmann::json out = {{"name", c.name},    {"description", c.description},
                        {"gpu", c.gpu.name}, {"launch_latency_s", c.launch_latency_s},
                        {"levels", levels},  {"sources", c.sources}};
  if (c.nodes_level >= 0) out["nodes_level"] = c.levels[c.nodes_level].name;
  if (c.gpus_per_host > 0) out["gpus_per_host"] = c.gpus_per_host;
  return out;
}

std::vector<std::string> BuiltinClusterNames() { return catalog::NamesIn("clusters"); }

StatusOr<ClusterSpec> LoadCluster(std::string_view name_or_path) {
  std::string source;
  SW_ASSIGN_OR_RETURN(
      nlohmann::json json,
      catalog::LoadEntry("clusters", name_or_path, "cluster",
                         "see 'shardwise clusters', or pass a path to a cluster file", source));
  return ParseClusterSpec(json, source);
}

StatusOr<ClusterSpec> WithNodes(ClusterSpec c, int64_t nodes) {
  if (nodes <= 0 || nodes > 100'000) {
    return Error(fmt::format("--nodes must be between 1 and 100000, got {}", nodes));
  }
  if (c.nodes_level < 0) {
    return Error(
        fmt::format("cluster '{}' has a fixed size ({} GPUs); use --gpus N to take part "
                    "of it",
                    c.name, c.Capacity()));
  }
  c.levels[c.nodes_level].fan_out = nodes;
  SW_RETURN_IF_ERROR(
      CheckCapacity(c.levels, fmt::format("cluster '{}' with --nodes {}", c.name, nodes)));
  c.num_gpus = c.Capacity();
  return c;
}

StatusOr<ClusterSpec> WithGpus(ClusterSpec c, int64_t gpus) {
  if (gpus <= 0) return Error(fmt::format("--gpus must be positive, got {}", gpus));
  if (gpus > c.Capacity()) {
    return Error(
        fmt::format("--gpus {} is more than cluster '{}' has ({}); use --nodes to add "
                    "nodes, or a larger cluster",
                    gpus, c.name, c.Capacity()));
  }
  c.num_gpus = gpus;
  return c;
}

}  // namespace shardwise
