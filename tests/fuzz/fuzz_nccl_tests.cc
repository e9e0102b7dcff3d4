// libFuzzer harness (tests/fuzz/README.md): any input must give a value or an error Status,
// never a crash, an exception, undefined behaviour, a leak or a hang. Target: nccl-tests logs read
// by 'collectives --import' (collective/nccl_tests.cc).
#include <cstddef>
#include <cstdint>
#include <string>

#include "shardwise/collective/nccl_tests.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)shardwise::ParseNcclTests(text, "fuzz/nccl.log");
  return 0;
}
