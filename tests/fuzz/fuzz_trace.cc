// libFuzzer harness (tests/fuzz/README.md): any input must give a value or an error Status,
// never a crash, an exception, undefined behaviour, a leak or a hang. Target: request traces read
// by 'simulate --trace' (sim/workload.cc).
#include <cstddef>
#include <cstdint>
#include <string>

#include "shardwise/sim/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)shardwise::ParseTrace(text, "fuzz/trace.csv");
  return 0;
}
