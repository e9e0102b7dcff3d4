// The command line shows flags where the library names fields.
#include "flags.h"

#include <gtest/gtest.h>

namespace shardwise::cli {
namespace {

TEST(Flags, FieldsReadAsTheirFlags) {
  EXPECT_EQ(FlagOf("max_batch"), "--max-batch");
  EXPECT_EQ(FlagOf("prefill.workers"), "--prefill-workers");
  // The decode pool takes the plain flags of the options it shares with an aggregated layout.
  EXPECT_EQ(FlagOf("decode.redundant_experts"), "--redundant-experts");
  // A pool field with no flag of its own is the flag both pools share (there is no
  // --prefill-kv-dtype; plan's split of an fp4 KV cache on Hopper advised it).
  EXPECT_EQ(FlagOf("prefill.kv_dtype"), "--kv-dtype");
  EXPECT_EQ(FlagOf("decode.dtype"), "--dtype");
  EXPECT_EQ(FlagOf("prefill.shared_experts"), "--prefill-shared-experts");
}

TEST(Flags, BacktickedNamesTakeTheErrorsPool) {
  const Status s(StatusCode::kInvalidArgument,
                 "the decode pool: `workers` must be between 1 and 10, got 0; see `max_batch`",
                 "decode.workers");
  EXPECT_EQ(CliMessage(s),
            "the decode pool: --decode-workers must be between 1 and 10, got 0; see --max-batch");
  // No field, no backticks: the message as it is.
  EXPECT_EQ(CliMessage(Error("plain")), "plain");
  // An unmatched backtick is kept.
  EXPECT_EQ(CliMessage(Error("a ` b")), "a ` b");
}

}  // namespace
}  // namespace shardwise::cli
