// Every input under tests/data/fuzz/ (minimized fuzzer findings and variants, one folder per
// class of failure) gets one line on stderr and exit code 2 from the command that reads it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kFuzzData = fs::path(SHARDWISE_SOURCE_DIR) / "tests/data/fuzz";

// The command line a user would type to feed `file` to shardwise (tests/data/fuzz/README.md).
std::string CommandFor(const fs::path& file) {
  const std::string name = file.filename().string();
  const std::string path = file.string();
  const std::string dir = file.parent_path().string();
  if (file.extension() == ".log") {
    return "collectives --cluster dgx-h100 --nodes 2 --import " + path;
  }
  if (file.extension() == ".csv") return "simulate --trace " + path;
  if (file.extension() == ".txt") {
    std::string layout = Slurp(file);
    layout.erase(std::remove(layout.begin(), layout.end(), '\n'), layout.end());
    return "plan --layout " + layout;
  }
  if (name == "model.safetensors" || name == "model.safetensors.index.json") {
    return "run --model tiny-dense --layout tp1 --no-check --weights " + dir;
  }
  if (name.starts_with("plan-")) return "run --no-check --plan " + path;
  if (name.starts_with("host-profile-") || name.starts_with("hp-")) {
    return "run --no-check --host-profile " + path;
  }
  if (name == "cluster-nodes.json") return "plan --nodes 2 --cluster " + path;
  if (name.starts_with("cluster-")) return "plan --cluster " + path;
  if (name.starts_with("gpu-")) return "size --gpu " + path;
  return "models --config " + path;
}

void ExpectEveryInputRefused(const std::string& folder) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(kFuzzData / folder)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty()) << folder;
  for (const fs::path& file : files) {
    const std::string command = CommandFor(file);
    SCOPED_TRACE(command);
    const RunResult r = RunShardwise(command);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(LineCount(r.err), 1) << r.err;
    EXPECT_TRUE(r.err.starts_with("shardwise: error: ")) << r.err;
    EXPECT_LT(r.err.size(), 600u) << r.err;
  }
}

TEST(FuzzInputs, F01JsonNumberOverflow) { ExpectEveryInputRefused("F01-json-number-overflow"); }
TEST(FuzzInputs, F02JsonDeepNesting) { ExpectEveryInputRefused("F02-json-deep-nesting"); }
TEST(FuzzInputs, F03UncaughtTypeErrors) { ExpectEveryInputRefused("F03-uncaught-type-errors"); }
TEST(FuzzInputs, F04IntOrFloatCast) { ExpectEveryInputRefused("F04-intor-float-cast"); }
TEST(FuzzInputs, F05TraceFloatCast) { ExpectEveryInputRefused("F05-trace-float-cast"); }
TEST(FuzzInputs, F06DimensionOverflow) { ExpectEveryInputRefused("F06-dimension-overflow"); }
TEST(FuzzInputs, F07LayoutOverflow) { ExpectEveryInputRefused("F07-layout-overflow"); }
TEST(FuzzInputs, F08ClusterCapacityOverflow) {
  ExpectEveryInputRefused("F08-cluster-capacity-overflow");
}
TEST(FuzzInputs, F09NodesCapBypassHang) { ExpectEveryInputRefused("F09-nodes-cap-bypass-hang"); }
TEST(FuzzInputs, F10UnboundedInput) { ExpectEveryInputRefused("F10-unbounded-input"); }
TEST(FuzzInputs, F11SafetensorsValidation) {
  ExpectEveryInputRefused("F11-safetensors-validation");
}
TEST(FuzzInputs, F13HostProfileCores) { ExpectEveryInputRefused("F13-hostprofile-cores"); }
TEST(FuzzInputs, F14NcclNonPositiveSizes) { ExpectEveryInputRefused("F14-nccl-nonpositive-sizes"); }
TEST(FuzzInputs, F15FilesystemErrorLongName) {
  ExpectEveryInputRefused("F15-filesystem-error-long-name");
}

// F12: an absurd rank count must not start that many threads.
TEST(FuzzInputs, F12RunThreadExhaustion) {
  ExpectOneLineError(RunShardwise("run --model tiny-dense --layout dp4096 --batch 4096"),
                     "at most 256 ranks");
}

}  // namespace
}  // namespace shardwise::testing
