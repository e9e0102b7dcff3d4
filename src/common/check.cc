#include "shardwise/common/check.h"

#include <cstdio>
#include <cstdlib>

namespace shardwise::internal {

void CheckFailed(const char* file, int line, const char* expr, std::string_view msg) {
  std::fprintf(stderr, "shardwise: internal error at %s:%d: check '%s' failed: %.*s\n", file, line,
               expr, static_cast<int>(msg.size()), msg.data());
  std::abort();
}

}  // namespace shardwise::internal
