// libFuzzer harness (tests/fuzz/README.md): any input must give a value or an error Status,
// never a crash, an exception, undefined behaviour, a leak or a hang. Target: cluster files
// (hw/cluster.cc), scaled with --nodes and --gpus as the CLI does.
#include <cstddef>
#include <cstdint>
#include <string>

#include "shardwise/common/json_fields.h"
#include "shardwise/hw/cluster.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto json = shardwise::ParseJsonText(text, "fuzz/cluster.json");
  if (!json.ok()) return 0;
  const auto cluster = shardwise::ParseClusterSpec(*json, "fuzz/cluster.json");
  if (!cluster.ok()) return 0;
  for (int64_t nodes : {int64_t{2}, int64_t{1000}, int64_t{100000}}) {
    const auto scaled = shardwise::WithNodes(*cluster, nodes);
    if (scaled.ok()) (void)shardwise::WithGpus(*scaled, 8);
  }
  return 0;
}
