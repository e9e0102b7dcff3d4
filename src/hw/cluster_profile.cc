// Measured level profiles: serialisation and application to a cluster.
#include <fmt/format.h>

#include "shardwise/common/json_fields.h"
#include "shardwise/hw/cluster.h"

namespace shardwise {

nlohmann::json ProfileToJson(const LevelProfile& p) {
  return {{"cluster", p.cluster},
          {"level", p.level},
          {"efficiency", p.efficiency},
          {"hop_latency_s", p.hop_latency_s},
          {"ramp_bytes", p.ramp_bytes},
          {"ramp_exponent", p.ramp_exponent},
          {"source", p.source}};
}

StatusOr<LevelProfile> ParseProfile(const nlohmann::json& json, const std::string& source) {
  if (!json.is_object()) return Error(fmt::format("{}: expected a JSON object", source));
  const JsonObject o{json, source};
  LevelProfile p;
  SW_ASSIGN_OR_RETURN(p.cluster, o.String("cluster"));
  SW_ASSIGN_OR_RETURN(p.level, o.String("level"));
  SW_ASSIGN_OR_RETURN(p.efficiency, o.Number("efficiency"));
  SW_ASSIGN_OR_RETURN(p.hop_latency_s, o.NumberOr("hop_latency_s", 0.0));
  SW_ASSIGN_OR_RETURN(p.ramp_bytes, o.NumberOr("ramp_bytes", 0.0));
  SW_ASSIGN_OR_RETURN(p.ramp_exponent, o.Number("ramp_exponent"));
  SW_ASSIGN_OR_RETURN(p.source, o.String("source"));
  if (p.efficiency > 1) return Error(fmt::format("{}: efficiency must be at most 1", source));
  return p;
}

StatusOr<LevelProfile> LoadProfile(const std::string& path) {
  SW_ASSIGN_OR_RETURN(nlohmann::json json, ReadJsonFile(path, kProfileInput));
  return ParseProfile(json, path);
}

StatusOr<ClusterSpec> ApplyProfile(ClusterSpec cluster, const LevelProfile& p) {
  for (TopologyLevel& level : cluster.levels) {
    if (level.name != p.level) continue;
    level.efficiency = p.efficiency;
    level.hop_latency_s = p.hop_latency_s;
    level.ramp_bytes = p.ramp_bytes;
    level.ramp_exponent = p.ramp_exponent;
    for (const char* key : {"efficiency", "hop_latency_s", "ramp_bytes"}) {
      level.sources[key] = "profile: " + p.source;
    }
    return cluster;
  }
  return Error(fmt::format("profile for level '{}' does not match any level of cluster '{}'",
                           p.level, cluster.name));
}

}  // namespace shardwise
