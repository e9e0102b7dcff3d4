// End-to-end: --prefix-hit-rate on explain, simulate and price, and its bad input.
#include <gtest/gtest.h>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

TEST(PrefixCacheCli, CachedPromptsPrefillFaster) {
  const std::string base = " --model llama-3.1-8b --gpus 1 --layout tp1 --json";
  const RunResult plain = RunShardwise("explain --context 4096" + base);
  const RunResult cached = RunShardwise("explain --context 4096 --prefix-hit-rate 0.56" + base);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(cached.exit_code, 0) << cached.err;
  EXPECT_EQ(cached.Json()["prefix_hit_rate"].get<double>(), 0.56);
  EXPECT_LT(cached.Json()["unloaded_ttft_s"].get<double>(),
            plain.Json()["unloaded_ttft_s"].get<double>());
  const std::string sim = "simulate --requests 200 --rate 4 --isl 4096 --osl 64" + base;
  const RunResult s0 = RunShardwise(sim);
  const RunResult s1 = RunShardwise(sim + " --prefix-hit-rate 0.56");
  ASSERT_EQ(s1.exit_code, 0) << s1.err;
  EXPECT_LT(s1.Json()["ttft_s"]["mean"].get<double>(), s0.Json()["ttft_s"]["mean"].get<double>());
  const RunResult p0 = RunShardwise("price --isl 4096 --osl 64" + base);
  const RunResult p1 = RunShardwise("price --isl 4096 --osl 64 --prefix-hit-rate 0.56" + base);
  ASSERT_EQ(p1.exit_code, 0) << p1.err;
  EXPECT_LT(p1.Json()["full_load"]["usd_per_mtok_input_share"].get<double>(),
            p0.Json()["full_load"]["usd_per_mtok_input_share"].get<double>());
  EXPECT_LT(p1.Json()["usd_per_mtok_output"].get<double>(),
            p0.Json()["usd_per_mtok_output"].get<double>());
}

TEST(PrefixCacheCliErrors, BadInput) {
  for (const char* r : {"-0.1", "1.5", "nan"}) {
    ExpectOneLineError(RunShardwise(std::string("explain --prefix-hit-rate ") + r),
                       "--prefix-hit-rate");
  }
}

}  // namespace
}  // namespace shardwise::testing
