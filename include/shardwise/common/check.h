// SW_CHECK: internal invariants, checked in every build type (unlike assert). A failed check is
// a bug in shardwise, never bad user input (that is a Status): it prints file, line and message
// to stderr and aborts.
#pragma once

#include <string_view>

namespace shardwise::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* expr, std::string_view msg);
}  // namespace shardwise::internal

#define SW_CHECK(cond, msg)                                                     \
  do {                                                                          \
    if (!(cond)) ::shardwise::internal::CheckFailed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)
