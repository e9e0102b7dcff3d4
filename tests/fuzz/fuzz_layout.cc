// libFuzzer harness (tests/fuzz/README.md): any input must give a value or an error Status,
// never a crash, an exception, undefined behaviour, a leak or a hang. Target: layout strings
// (layout/layout.cc), validated against a dense and a MoE model.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "shardwise/layout/layout.h"
#include "shardwise/model/catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const shardwise::ModelSpec dense = shardwise::LoadModel("llama-3.1-70b").value();
  static const shardwise::ModelSpec moe = shardwise::LoadModel("deepseek-v3").value();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto layout = shardwise::ParseLayout(text);
  if (!layout.ok()) return 0;
  (void)layout->ToString();
  (void)shardwise::ValidateLayout(*layout, dense);
  (void)shardwise::ValidateLayout(*layout, moe);
  return 0;
}
