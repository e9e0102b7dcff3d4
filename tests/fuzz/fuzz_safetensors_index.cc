// libFuzzer harness (tests/fuzz/README.md): any input must give a value or an error Status,
// never a crash, an exception, undefined behaviour, a leak or a hang. Target:
// model.safetensors.index.json (runtime/safetensors_format.cc): shard names.
#include <cstddef>
#include <cstdint>
#include <string>

#include "shardwise/common/json_fields.h"
#include "shardwise/runtime/safetensors_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto json = shardwise::ParseJsonText(text, "fuzz/model.safetensors.index.json");
  if (json.ok()) (void)shardwise::SafetensorsIndexShards(*json, "fuzz/index.json");
  return 0;
}
