// libFuzzer harness (tests/fuzz/README.md): any input must give a value or an error Status,
// never a crash, an exception, undefined behaviour, a leak or a hang. Target: GPU catalog files
// (hw/gpu.cc).
#include <cstddef>
#include <cstdint>
#include <string>

#include "shardwise/common/json_fields.h"
#include "shardwise/hw/gpu.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto json = shardwise::ParseJsonText(text, "fuzz/gpu.json");
  if (json.ok()) (void)shardwise::ParseGpuSpec(*json, "fuzz/gpu.json");
  return 0;
}
