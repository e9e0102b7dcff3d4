// shardwise: decide how to split an LLM across GPUs, predict its cost, and run it to check.
#include <cstdio>

#include "app.h"

int main(int argc, char** argv) {
  const shardwise::cli::CommandLineOutcome outcome = shardwise::cli::RunCommandLine(argc, argv);
  if (!outcome.error.empty()) {
    std::fprintf(stderr, "shardwise: %s: %s\n", outcome.internal ? "internal error" : "error",
                 outcome.error.c_str());
  }
  return outcome.exit_code;
}
