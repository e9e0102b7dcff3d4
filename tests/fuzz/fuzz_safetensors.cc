// libFuzzer harness (tests/fuzz/README.md): any input must give a value or an error Status,
// never a crash, an exception, undefined behaviour, a leak or a hang. Target: safetensors files
// (runtime/safetensors_format.cc): header length, JSON header, tensor shapes and offsets.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "shardwise/runtime/safetensors_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)shardwise::CheckSafetensorsBytes(bytes, "fuzz/model.safetensors");
  return 0;
}
