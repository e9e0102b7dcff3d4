// The library names the options its errors concern by field (`max_batch`, `prefill.workers`, in
// backticks inside the message, and Status::field()); the command line shows its flags instead.
// One table of the exceptions; every other field is its flag ("max_batch" -> "--max-batch").
#pragma once

#include <string>

#include "shardwise/common/status.h"

namespace shardwise::cli {

// The flag of a library field: "prefill.workers" -> "--prefill-workers".
std::string FlagOf(const std::string& field);

// `status`'s message with every backticked field name shown as its flag. A name that is the last
// part of the status's own field takes that field's pool ("`workers`" in an error about
// "decode.workers" reads --decode-workers).
std::string CliMessage(const Status& status);
// A library text for the user (a note) with its backticked field names shown as flags.
std::string CliText(const std::string& text);

}  // namespace shardwise::cli
