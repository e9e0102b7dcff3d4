// libFuzzer harness (tests/fuzz/README.md): any input must give a value or an error Status,
// never a crash, an exception, undefined behaviour, a leak or a hang. Target: saved plans read by
// 'run --plan' (plan/saved_plan.cc) and the layout they name.
#include <cstddef>
#include <cstdint>
#include <string>

#include "shardwise/common/json_fields.h"
#include "shardwise/layout/layout.h"
#include "shardwise/plan/saved_plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto json = shardwise::ParseJsonText(text, "fuzz/plan.json");
  if (!json.ok()) return 0;
  const auto choice = shardwise::ParseSavedPlan(*json, "fuzz/plan.json");
  if (choice.ok()) (void)shardwise::ParseLayout(choice->layout);
  return 0;
}
