// The issue-16 cases end to end: numbers the conversion let through (0, NaN, inf, -1), files
// that are not files, binary garbage, user files the tool must not overwrite, and runs that
// cannot fit or would run for ever.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

namespace fs = std::filesystem;

const std::string kNcclLog = SHARDWISE_SOURCE_DIR "/tests/data/nccl-tests-2x8-h100-allreduce.log";

// A path in the temp folder private to this test process (two test runs at once must not collide).
std::string Temp(const std::string& name) {
  return (fs::temp_directory_path() / (std::to_string(getpid()) + "_" + name)).string();
}

TEST(ReliabilityCli, SloAndDurationMustBePositiveFinite) {
  for (const char* v : {"0", "nan", "inf"}) {
    ExpectOneLineError(RunShardwise(std::string("plan --max-tpot-ms ") + v),
                       "--max-tpot-ms: must be a positive finite number");
  }
  ExpectOneLineError(RunShardwise("plan --max-ttft-ms NaN"),
                     "--max-ttft-ms: must be a positive finite number, got 'NaN'");
  for (const char* v : {"0", "nan"}) {
    ExpectOneLineError(RunShardwise(std::string("simulate --duration ") + v),
                       "--duration: must be a positive finite number");
  }
}

TEST(ReliabilityCli, NegativeSeedDoesNotWrap) {
  ExpectOneLineError(RunShardwise("simulate --seed -1"), "--seed: must be a whole number");
  ExpectOneLineError(RunShardwise("run --seed -1"), "--seed: must be a whole number");
}

TEST(ReliabilityCli, ValuesThatWereSilentlyIgnoredOrClampedAreRefused) {
  // Each of these ran as if the value had not been given (or a seed was clamped to 2^64 - 1).
  ExpectOneLineError(RunShardwise("simulate --seed 99999999999999999999"),
                     "from 0 to 18446744073709551615");
  ExpectOneLineError(RunShardwise("simulate --prefill-workers 2 --requests 50"),
                     "--prefill-workers sets a disaggregated deployment's pools");
  ExpectOneLineError(RunShardwise("train --recompute full:999"),
                     "more layers than llama-3.1-8b has (32)");
  ExpectOneLineError(RunShardwise("train --fp8-recipe mxfp8"), "set --dtype fp8");
  ExpectOneLineError(
      RunShardwise("recommend --rate 5 --max-ttft-ms 1000 --max-tpot-ms 50 --requests 0"),
      "--requests");
  ExpectOneLineError(RunShardwise("price --target-utilization nan"), "--target-utilization");
  const std::string config = Temp("shardwise_no_context.json");
  std::ofstream(config) << R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 512,
    "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 1000,
    "intermediate_size": 1024, "max_position_embeddings": 0})";
  ExpectOneLineError(RunShardwise("explain --model " + config),
                     "'max_position_embeddings' must be positive");
  // CLI11's own words ("Could not convert: --nodes = 2.5", "--model: At Most 1 required but
  // received 2") read as what to fix.
  ExpectOneLineError(RunShardwise("plan --nodes 2.5"), "--nodes '2.5' is not a whole number");
  ExpectOneLineError(RunShardwise("price --duty-cycle q"), "--duty-cycle 'q' is not a number");
  ExpectOneLineError(RunShardwise("plan --model a --model b"), "--model is given more than once");
  // Runs that would exhaust the machine's memory for minutes: 100 million requests, or a cutoff
  // bringing 10^16 arrivals (by hand, 1e7/s x 1e9 s).
  ExpectOneLineError(RunShardwise("simulate --requests 100000000"), "between 1 and 2000000");
  ExpectOneLineError(RunShardwise("simulate --rate 1e7 --duration 1e9"), "brings 1e+16 requests");
  // `shardwise nosuch --help` printed the top-level help and exited 0.
  ExpectOneLineError(RunShardwise("nosuch --help"), "unknown command 'nosuch'");
}

TEST(ReliabilityCli, HugeLayoutDegreeIsTooLarge) {
  ExpectOneLineError(RunShardwise("plan --layout tp99999999999999999999"),
                     "the degree of 'tp' is too large");
}

TEST(ReliabilityCli, DirectoriesAndDevicesAreNotFiles) {
  ExpectOneLineError(RunShardwise("plan --model /tmp"), "/tmp: is a directory");
  ExpectOneLineError(RunShardwise("simulate --trace /tmp"), "/tmp: is a directory");
  ExpectOneLineError(RunShardwise("plan --model /dev/zero"), "/dev/zero: is not a regular file");
  ExpectOneLineError(RunShardwise("simulate --trace /dev/zero"),
                     "/dev/zero: is not a regular file");
  ExpectOneLineError(RunShardwise("plan --cluster /dev/zero"), "/dev/zero: is not a regular file");
}

TEST(ReliabilityCli, BinaryGarbageIsNotEchoed) {
  const std::string trace = Temp("shardwise_garbage.csv");
  std::ofstream(trace, std::ios::binary) << "0,1,1\n1,\x1b[31m\x01\xff\x07,2\n";
  const RunResult r = RunShardwise("simulate --trace " + trace);
  ExpectOneLineError(r,
                     "expected three numbers 'arrival_s,input_tokens,output_tokens', got "
                     "'1,?[31m???,2'");
  for (char c : r.err) EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << static_cast<int>(c);
}

TEST(ReliabilityCli, HostProfileFileIsOnlyRead) {
  // Before: `run --host-profile FILE` replaced any FILE that was not a host profile with a
  // freshly measured one.
  const std::string file = Temp("shardwise_not_a_profile.json");
  const std::string cluster = Slurp(SHARDWISE_SOURCE_DIR "/data/clusters/dgx-h100.json");
  std::ofstream(file) << cluster;
  ExpectOneLineError(RunShardwise("run --no-check --host-profile " + file),
                     "required key 'cores' is missing");
  EXPECT_EQ(Slurp(file), cluster);
  ExpectOneLineError(RunShardwise("run --no-check --host-profile " + Temp("shardwise_absent.json")),
                     "cannot open file");
  EXPECT_FALSE(fs::exists(Temp("shardwise_absent.json")));
}

TEST(ReliabilityCli, OutputsNeverReplaceOtherFiles) {
  const std::string file = Temp("shardwise_keep_me.json");
  std::ofstream(file) << "{\"precious\": true}\n";
  ExpectOneLineError(RunShardwise("run --dump-logits " + file),
                     "exists and is not a logits .npy file; refusing to overwrite it");
  ExpectOneLineError(RunShardwise("collectives --cluster hgx-h100-200g --nodes 2 --import " +
                                  kNcclLog + " --output " + file),
                     "exists and is not a level profile; refusing to overwrite it");
  EXPECT_EQ(Slurp(file), "{\"precious\": true}\n");
  // With --force the user says so: the .npy replaces it.
  const RunResult forced = RunShardwise("run --no-check --dump-logits " + file + " --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_TRUE(Slurp(file).starts_with("\x93NUMPY"));
  fs::remove(file);
}

TEST(ReliabilityCli, ImportWritesNoProfileUnlessAsked) {
  // The old default wrote <cluster>-<level>.profile.json into the current folder.
  const fs::path stray = fs::current_path() / "hgx-h100-200g-network.profile.json";
  fs::remove(stray);
  const RunResult r =
      RunShardwise("collectives --cluster hgx-h100-200g --nodes 2 --import " + kNcclLog);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("profile not saved; add --output FILE"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(stray));
}

TEST(ReliabilityCli, ImportRefusesALogOfTinyMessagesOnly) {
  // Keep the header and the rows below 1 MB of a real log.
  std::istringstream in(Slurp(kNcclLog));
  std::ofstream out(Temp("shardwise_tiny.log"));
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    double bytes = 0;
    if (line.starts_with("#") || !(words >> bytes) || bytes < (1 << 20)) out << line << "\n";
  }
  out.close();
  ExpectOneLineError(RunShardwise("collectives --cluster hgx-h100-200g --nodes 2 --import " +
                                  Temp("shardwise_tiny.log")),
                     "fitting needs messages of 1 MB or more");
}

TEST(ReliabilityCli, ProfileFromAnotherClusterWarns) {
  const std::string profile = Temp("shardwise_fitted_profile.json");
  fs::remove(profile);
  ASSERT_EQ(RunShardwise("collectives --cluster hgx-h100-200g --nodes 2 --import " + kNcclLog +
                         " --output " + profile)
                .exit_code,
            0);
  const RunResult same =
      RunShardwise("collectives --cluster hgx-h100-200g --nodes 2 --profile " + profile);
  EXPECT_EQ(same.err, "");
  const RunResult other =
      RunShardwise("collectives --cluster hgx-h100-roce --nodes 2 --profile " + profile);
  EXPECT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(other.err.find("warning: " + profile +
                           " was fitted on cluster 'hgx-h100-200g' and is applied to "
                           "'hgx-h100-roce'"),
            std::string::npos)
      << other.err;
}

TEST(ReliabilityCli, RunsThatCannotFitAreRefusedUpFront) {
  // llama-3.1-70b in fp32 is ~280 GB of weights: more than any CI machine has.
  const RunResult r = RunShardwise("run --model llama-3.1-70b --layout tp2");
  ExpectOneLineError(r, "needs about");
  EXPECT_NE(r.err.find("run fewer --layers"), std::string::npos);
  const std::string plan = Temp("shardwise_big_plan.json");
  std::ofstream(plan) << R"({"model": "llama-3.1-70b", "layouts": [{"layout": "tp8"}]})";
  ExpectOneLineError(RunShardwise("run --plan " + plan), "needs about");
  ExpectOneLineError(RunShardwise("run --batch 100000"), "--batch 100000 is more than a run takes");
  ExpectOneLineError(RunShardwise("run --gen 100000"), "exceeds tiny-dense's context of 2048");
  ExpectOneLineError(RunShardwise("run --prompt-len 5000"), "exceeds tiny-dense's context of 2048");
  ExpectOneLineError(RunShardwise("run --layers 99"), "--layers must be between 1 and");
}

TEST(ReliabilityCli, TinyTimeoutFires) {
  const RunResult r = RunShardwise("run --layout tp2 --timeout-s 0.000001 --no-check");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(LineCount(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("timed out"), std::string::npos) << r.err;
}

TEST(ReliabilityCli, MpirunWithoutTheMpiBackendStops) {
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  const RunResult r = RunShardwise("run --no-check");
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ExpectOneLineError(r,
                     "running under mpirun (2 processes, OMPI_COMM_WORLD_SIZE) with --backend "
                     "threads");
}

}  // namespace
}  // namespace shardwise::testing
