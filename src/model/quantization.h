// The checkpoint's quantization, read into per-module weight formats (private to src/model).
#pragma once

#include <nlohmann/json.hpp>

#include "shardwise/common/json_fields.h"
#include "shardwise/model/weight_format.h"

namespace shardwise::model_internal {

// Formats per module from config.json's quantization_config, or from ModelOpt's
// hf_quant_config.json when `hf_quant_config` is given (NVFP4 exports keep it beside
// config.json); every module is `unquantised` when neither is present. Embeddings and norms
// are never quantised by these methods. An unknown method is an error naming the known ones.
StatusOr<WeightFormats> ReadQuantization(const JsonObject& config, Dtype unquantised,
                                         const nlohmann::json* hf_quant_config);

}  // namespace shardwise::model_internal
