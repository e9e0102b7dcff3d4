#include "shardwise/model/weight_format.h"

#include <fmt/format.h>

#include <map>
#include <vector>

namespace shardwise {

WeightFormat WeightFormat::Of(Dtype dtype) { return {dtype, BytesPerElement(dtype)}; }

WeightFormat WeightFormat::Int4Group(int64_t group) {
  return {Dtype::kInt4, 0.5 + 2.0 / static_cast<double>(group)};
}

std::string WeightFormat::Name() const {
  if (*this == Of(dtype)) return std::string(DtypeName(dtype));
  if (dtype == Dtype::kInt4) {
    return fmt::format("int4/g{:.0f}", 2.0 / (bytes_per_param - 0.5));
  }
  return fmt::format("{} ({:.4g} B/param)", DtypeName(dtype), bytes_per_param);
}

WeightFormats WeightFormats::Uniform(Dtype dtype) {
  const WeightFormat f = WeightFormat::Of(dtype);
  return {f, f, f, f, f, f, f, f};
}

WeightFormat& WeightFormats::For(WeightModule module) {
  switch (module) {
    case WeightModule::kEmbedding:
      return embedding;
    case WeightModule::kMixer:
      return mixer;
    case WeightModule::kDenseFfn:
      return dense_ffn;
    case WeightModule::kRoutedExperts:
      return routed_experts;
    case WeightModule::kSharedExperts:
      return shared_experts;
    case WeightModule::kRouter:
      return router;
    case WeightModule::kLmHead:
      return lm_head;
    case WeightModule::kNorm:
      return norm;
  }
  return norm;
}

const WeightFormat& WeightFormats::For(WeightModule module) const {
  return const_cast<WeightFormats*>(this)->For(module);
}

std::string WeightFormats::Describe() const {
  // The most common format among the big modules is "rest"; the others are named.
  const std::vector<std::pair<const char*, const WeightFormat*>> big = {
      {"attention", &mixer},        {"dense FFN", &dense_ffn},
      {"experts", &routed_experts}, {"shared experts", &shared_experts},
      {"embedding", &embedding},    {"LM head", &lm_head}};
  std::map<std::string, int> votes;
  for (const auto& [name, f] : big) votes[f->Name()] += 1;
  std::string rest;
  int most = 0;
  for (const auto& [format, count] : votes) {
    if (count > most) most = count, rest = format;
  }
  std::string out;
  for (const auto& [name, f] : big) {
    if (f->Name() != rest) out += fmt::format("{} {}, ", name, f->Name());
  }
  return out.empty() ? rest : out + "rest " + rest;
}

}  // namespace shardwise
