#include "shardwise/model/model_spec.h"

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

int64_t ModelSpec::num_moe_layers() const {
  return std::count_if(layers.begin(), layers.end(), [](const LayerSpec& l) { return l.moe; });
}

int64_t ModelSpec::num_sliding_layers() const {
  return std::count_if(layers.begin(), layers.end(),
                       [](const LayerSpec& l) { return l.sliding_window > 0; });
}

}  // namespace shardwise
