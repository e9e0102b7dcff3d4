// End-to-end: `run --backend cuda|nccl` and `--device-compute` as a user runs them. On a machine
// without a GPU (or a build without CUDA) each must end with one line naming why and what to
// use instead, exit code 2; with a GPU, the run must match the reference and name the GPU.
#include <gtest/gtest.h>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

bool NoGpuError(const RunResult& r) {
  return r.exit_code == 2 &&
         (r.err.find("needs a GPU and this machine has none") != std::string::npos ||
          r.err.find("this build has no CUDA backend") != std::string::npos);
}

TEST(RunGpuCli, CudaBackendRunsOrSaysWhyNot) {
  const RunResult r = RunShardwise("run --backend cuda --layout tp2");
  if (NoGpuError(r)) {
    ExpectOneLineError(r, "use --backend threads");
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("check: matches the unsharded reference"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU"), std::string::npos) << r.out;
}

TEST(RunGpuCli, NcclBackendRunsOrSaysWhyNot) {
  const RunResult r = RunShardwise("run --backend nccl --layout tp1");
  if (NoGpuError(r)) {
    ExpectOneLineError(r, "use --backend threads");
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("check: matches the unsharded reference"), std::string::npos) << r.out;
}

TEST(RunGpuCli, DeviceComputeCudaWithThreadsRunsOrSaysWhyNot) {
  const RunResult r = RunShardwise("run --device-compute cuda --model tiny-moe --layout tp2ep2");
  if (NoGpuError(r)) {
    ExpectOneLineError(r, "--device-compute cpu");
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST(RunGpuCli, BadDeviceCompute) {
  ExpectOneLineError(RunShardwise("run --device-compute tpu"), "--device-compute");
}

}  // namespace
}  // namespace shardwise::testing
