// libFuzzer harness (tests/fuzz/README.md): any input must give a value or an error Status,
// never a crash, an exception, undefined behaviour, a leak or a hang. Target: level profiles
// (hw/cluster_profile.cc) and host profiles (runtime/host_profile.cc).
#include <cstddef>
#include <cstdint>
#include <string>

#include "shardwise/common/json_fields.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/runtime/host_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto json = shardwise::ParseJsonText(text, "fuzz/profile.json");
  if (!json.ok()) return 0;
  (void)shardwise::ParseProfile(*json, "fuzz/profile.json");
  (void)shardwise::ParseHostProfile(*json, "fuzz/profile.json");
  return 0;
}
