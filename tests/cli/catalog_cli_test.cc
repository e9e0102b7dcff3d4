// End-to-end: `models`, `gpus` and `size` run as a user would, on defaults and on bad input.
#include <gtest/gtest.h>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

TEST(ModelsCli, TableOnDefaults) {
  const RunResult r = RunShardwise("models");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("deepseek-v3"), std::string::npos);
  EXPECT_NE(r.out.find("671.03B"), std::string::npos);  // DeepSeek-V3 README: 671B
}

TEST(ModelsCli, Json) {
  const RunResult r = RunShardwise("models --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  ASSERT_TRUE(j.is_array());
  bool found = false;
  for (const auto& m : j) {
    EXPECT_TRUE(m.contains("total_params") && m.contains("active_params") &&
                m.contains("kv_bytes_per_token"));
    if (m["name"] == "llama-3.1-70b") {
      found = true;
      EXPECT_EQ(m["kv_bytes_per_token"].get<double>(), 327'680.0);  // 2 x 80 x 8 x 128 x 2
    }
  }
  EXPECT_TRUE(found);
}

TEST(ModelsCli, UserConfigFile) {
  const RunResult r =
      RunShardwise("models --json --config " SHARDWISE_SOURCE_DIR "/data/models/llama-2-7b.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.Json()[0]["kv_bytes_per_token"].get<double>(), 524'288.0);  // 2 x 32 x 32 x 128 x 2
}

TEST(ModelsCli, MalformedConfig) {
  const std::string path = "/tmp/shardwise_bad_config.json";
  std::system(("printf '{\"architectures\": [\"LlamaForCausalLM\"], ' > " + path).c_str());
  ExpectOneLineError(RunShardwise("models --config " + path), path + ": not valid JSON");
}

TEST(ModelsCli, ConfigMissingKey) {
  const std::string path = "/tmp/shardwise_missing_key.json";
  std::system(("echo '{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64}' > " + path)
                  .c_str());
  ExpectOneLineError(RunShardwise("models --config " + path),
                     path + ": required key 'num_attention_heads' is missing");
}

TEST(GpusCli, TableAndJson) {
  const RunResult r = RunShardwise("gpus");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("h100-sxm"), std::string::npos);
  // The calibration column is each file's provenance of its GEMM fractions: cuBLAS measurements
  // for the H100 SXM (data/gpus/h100-sxm.json, "measured": true), borrowed for the B200; the
  // MI325X's fp8 fraction is fitted ("gemm_fraction.fp8"), its bf16 one assumed.
  const auto row = [&](const std::string& gpu) {
    const size_t at = r.out.find("\n" + gpu + " ");
    return at == std::string::npos ? std::string()
                                   : r.out.substr(at, r.out.find('\n', at + 1) - at);
  };
  EXPECT_TRUE(row("h100-sxm").ends_with(" measured")) << row("h100-sxm");
  EXPECT_TRUE(row("mi325x").ends_with(" assumed (fp8 fitted)")) << row("mi325x");
  // The B200's fp4 fraction is fitted (MLPerf v5.1 Llama2-70B Offline, data/gpus/b200.json)
  // and shown: 0.53; the GB200's assumed from it, as its other fractions are.
  EXPECT_TRUE(row("b200").ends_with(" assumed (fp4 fitted)")) << row("b200");
  EXPECT_NE(row("b200").find(" 0.53 "), std::string::npos) << row("b200");
  EXPECT_TRUE(row("gb200").ends_with(" assumed")) << row("gb200");
  const RunResult j = RunShardwise("gpus --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_GE(j.Json().size(), 10u);
  for (const auto& g : j.Json()) {
    EXPECT_TRUE(g["sources"].contains("hbm_bytes_per_s"));
    // The MI325X's kernel latency is fitted (data/gpus/mi325x.json's provenance), the H100's
    // HBM fraction measured (STREAM), the B200's borrowed.
    if (g["name"] == "mi325x") {
      EXPECT_EQ(g["provenance"]["kernel_latency_s"], "fitted");
      EXPECT_EQ(g["provenance"]["gemm_fraction.fp8"], "fitted");
      EXPECT_EQ(g["provenance"]["gemm_fraction.bf16"], "assumed");
    }
    if (g["name"] == "h100-sxm") EXPECT_EQ(g["provenance"]["hbm_fraction"], "measured");
    if (g["name"] == "b200") EXPECT_EQ(g["provenance"]["gemm_fraction.fp8"], "assumed");
  }
}

TEST(SizeCli, ParallelismGuideExample) {
  // The "Parallelism" web guide: DeepSeek in FP8 with a 1.8 KV allowance needs a full node of
  // 8 B200 (its rule counts all of each GPU's memory).
  const RunResult r = RunShardwise(
      "size --model deepseek-v3 --gpu b200 --dtype fp8 --kv-alloc 1.8 --usable-fraction 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  EXPECT_EQ(j["gpus"], 8);
  for (const char* key : {"required_bytes", "weight_bytes", "kv_bytes"})
    EXPECT_TRUE(j.contains(key));
}

TEST(SizeCli, DefaultsRun) {
  const RunResult r = RunShardwise("size");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("=> "), std::string::npos);
}

TEST(SizeCli, ExactContextMode) {
  const RunResult r =
      RunShardwise("size --model llama-3.1-70b --context 8192 --concurrency 32 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.Json()["kv_bytes"].get<double>(), 327'680.0 * 8192 * 32);
}

TEST(SizeCliErrors, UnknownModelSuggests) {
  ExpectOneLineError(RunShardwise("size --model llama-3.1-71b"), "did you mean 'llama-3.1-70b'");
}

TEST(SizeCliErrors, UnknownGpuSuggests) {
  ExpectOneLineError(RunShardwise("size --gpu h200x"), "unknown GPU 'h200x'; did you mean 'h200'");
}

TEST(SizeCliErrors, UnknownDtype) {
  ExpectOneLineError(RunShardwise("size --dtype fp7"), "unknown dtype 'fp7'");
}

TEST(SizeCliErrors, NonPositiveAndAbsurdNumbers) {
  ExpectOneLineError(RunShardwise("size --kv-alloc -1"), "--kv-alloc must be between 1");
  ExpectOneLineError(RunShardwise("size --kv-alloc 1e9"), "--kv-alloc must be between 1");
  ExpectOneLineError(RunShardwise("size --context 0 --concurrency 4"),
                     "--context and --concurrency");
  ExpectOneLineError(RunShardwise("size --context abc --concurrency 4"), "--context");
  // A zero given alone had read as not given: the model's full context was sized instead.
  ExpectOneLineError(RunShardwise("size --context 0"), "--context and --concurrency go together");
  ExpectOneLineError(RunShardwise("size --context 8192 --concurrency 0"),
                     "must be at least 1 (got 8192 and 0)");
  ExpectOneLineError(RunShardwise("size --context '' --concurrency 4"), "--context: is empty");
  ExpectOneLineError(RunShardwise("size --usable-fraction 1.5"), "--gpu-memory-utilization");
}

TEST(SizeCliErrors, ConflictingModes) {
  ExpectOneLineError(RunShardwise("size --kv-alloc 2 --context 10 --concurrency 1"), "not both");
}

TEST(Cli, UnknownOptionAndCommand) {
  ExpectOneLineError(RunShardwise("size --bogus"), "--bogus");
  ExpectOneLineError(RunShardwise("frobnicate"), "frobnicate");
  // A word spelling cannot reach: "--price" was offered '--profile', '--rate' or '--force'.
  ExpectOneLineError(RunShardwise("plan --price 2"), "did you mean '--usd-per-gpu-hour'");
  // ... but not over an option spelt like it with the word ("ouput" for "output").
  ExpectOneLineError(RunShardwise("price --api-usd-per-mtok-ouput 2"),
                     "did you mean '--api-usd-per-mtok-output'");
  // One dash on a long option read as stray arguments ("2.10 -usd-per-gpu-hour").
  ExpectOneLineError(RunShardwise("plan -usd-per-gpu-hour 2"),
                     "'-usd-per-gpu-hour' has one dash; long options take two: "
                     "'--usd-per-gpu-hour'");
  // A missing argument is named with what it is ("b is required" said neither).
  ExpectOneLineError(RunShardwise("compare plan"),
                     "shardwise compare needs its argument b (the second setup: a saved --json "
                     "result or a quoted command line)");
}

TEST(Cli, HelpTeaches) {
  const RunResult r = RunShardwise("size --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--kv-alloc"), std::string::npos);
  EXPECT_NE(r.out.find("Example"), std::string::npos);
}

}  // namespace
}  // namespace shardwise::testing
