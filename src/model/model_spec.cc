#include "shardwise/model/model_spec.h"

#include <fmt/format.h>

#include <algorithm>

namespace shardwise {

std::string_view AttentionKindName(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::kMha:
      return "MHA";
    case AttentionKind::kGqa:
      return "GQA";
    case AttentionKind::kMqa:
      return "MQA";
    case AttentionKind::kMla:
      return "MLA";
  }
  return "?";
}

std::string_view MixerKindName(MixerKind kind) {
  switch (kind) {
    case MixerKind::kAttention:
      return "attention";
    case MixerKind::kLinearAttention:
      return "gated-deltanet";
    case MixerKind::kMamba2:
      return "mamba2";
    case MixerKind::kNone:
      return "none";
  }
  return "?";
}

std::vector<std::string> ModelSpec::AllNotes() const {
  std::vector<std::string> out = notes;
  if (mtp_modules > 0) out.push_back(fmt::format("{} MTP layer(s) not counted", mtp_modules));
  return out;
}

int64_t ModelSpec::num_moe_layers() const {
  return std::count_if(layers.begin(), layers.end(), [](const LayerSpec& l) { return l.moe(); });
}

int64_t ModelSpec::num_attention_layers() const {
  return std::count_if(layers.begin(), layers.end(),
                       [](const LayerSpec& l) { return l.attention(); });
}

int64_t ModelSpec::num_recurrent_layers() const {
  return std::count_if(layers.begin(), layers.end(),
                       [](const LayerSpec& l) { return l.recurrent(); });
}

int64_t ModelSpec::num_sliding_layers() const {
  return std::count_if(layers.begin(), layers.end(),
                       [](const LayerSpec& l) { return l.attention() && l.sliding_window > 0; });
}

}  // namespace shardwise
