#include "shardwise/hw/gpu_match.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <string>

namespace shardwise {
namespace {

std::set<std::string> Words(std::string_view text) {
  std::set<std::string> out;
  std::string word;
  for (const char ch : text) {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      word += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    } else if (!word.empty()) {
      out.insert(word);
      word.clear();
    }
  }
  if (!word.empty()) out.insert(word);
  return out;
}

bool IsModelWord(const std::string& w) {
  const bool digit = std::any_of(
      w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  const bool size = w.size() > 2 && w.ends_with("GB");
  return digit && !size;
}

}  // namespace

StatusOr<GpuSpec> MatchDriverGpuName(std::string_view driver_name,
                                     const std::vector<GpuSpec>& gpus) {
  const std::set<std::string> words = Words(driver_name);
  int best_score = 0;
  std::vector<const GpuSpec*> best;
  for (const GpuSpec& g : gpus) {
    const std::set<std::string> desc = Words(g.description);
    bool all_models = true, any_model = false;
    int score = 0;
    for (const std::string& w : words) {
      if (desc.contains(w)) {
        ++score;
        any_model = any_model || IsModelWord(w);
      } else if (IsModelWord(w)) {
        all_models = false;
      }
    }
    if (!all_models || !any_model) continue;
    if (score > best_score) {
      best_score = score;
      best.clear();
    }
    if (score == best_score) best.push_back(&g);
  }
  if (best.size() == 1) return *best[0];
  if (best.empty()) {
    return Error(fmt::format(
        "GPU '{}' is not in the catalog (see 'shardwise gpus'; add one with a GPU file)",
        driver_name));
  }
  std::string names;
  for (const GpuSpec* g : best) names += (names.empty() ? "" : ", ") + g->name;
  return Error(
      fmt::format("GPU '{}' matches several catalog GPUs equally ({})", driver_name, names));
}

StatusOr<ClusterSpec> SingleNodeClusterOf(const GpuSpec& gpu, int64_t gpus) {
  std::optional<ClusterSpec> best;
  for (const std::string& name : BuiltinClusterNames()) {
    auto cluster = LoadCluster(name);
    if (!cluster.ok() || cluster->gpu.name != gpu.name || cluster->GpusPerNode() < gpus) continue;
    auto sized = WithGpus(*cluster, gpus);
    if (sized.ok() && (!best || cluster->GpusPerNode() < best->GpusPerNode())) best = *sized;
  }
  if (!best)
    return Error(
        fmt::format("no built-in cluster of {} holds {} GPUs in one node", gpu.name, gpus));
  return *best;
}

}  // namespace shardwise
