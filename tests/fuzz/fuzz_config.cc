// libFuzzer harness (tests/fuzz/README.md): any input must give a value or an error Status,
// never a crash, an exception, undefined behaviour, a leak or a hang. Target: config.json
// (model/config_parser.cc) and the sizes derived from a parsed model.
#include <cstddef>
#include <cstdint>
#include <string>

#include "shardwise/model/accounting.h"
#include "shardwise/model/config_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto spec = shardwise::ParseHfConfigText(text, "fuzz/config.json", "fuzz");
  if (spec.ok()) {  // what every command computes next must not overflow either
    (void)shardwise::CountParams(*spec);
    (void)shardwise::KvBytesPerToken(*spec, shardwise::Dtype::kBf16);
    (void)shardwise::DecodeFlopsPerToken(*spec, 4096);
  }
  return 0;
}
