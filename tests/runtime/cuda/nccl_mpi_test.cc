// Under mpirun with --backend nccl (one process per GPU): a run matches the reference, and a
// killed rank ends the job with an error within the collective timeout (the survivors' NCCL
// calls are polled against the deadline and the communicator aborted). Needs two GPUs; skips
// with a message otherwise.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "../mpirun_session.h"
#include "gpu_test_util.h"

namespace shardwise {
namespace {

#define SW_SKIP_WITHOUT_TWO_GPUS()                              \
  do {                                                          \
    SW_SKIP_WITHOUT_GPU();                                      \
    if (::shardwise::cuda::FindGpus().count < 2)                \
      GTEST_SKIP() << "needs two GPUs (one NCCL rank per GPU)"; \
  } while (0)

TEST(NcclMpi, Tp2MatchesTheReference) {
  SW_SKIP_WITHOUT_TWO_GPUS();
  const testing::MpirunSession session;
  const std::string cmd = session.Command() + " -np 2 " + SHARDWISE_BINARY +
                          " run --backend nccl --model tiny-dense --layout tp2 --json";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) out.append(buf, n);
  EXPECT_EQ(pclose(pipe), 0) << out;
  EXPECT_NE(out.find("\"tokens_match\": true"), std::string::npos) << out;
}

TEST(NcclMpi, KilledRankEndsTheRunInTime) {
  SW_SKIP_WITHOUT_TWO_GPUS();
  const testing::MpirunSession session;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    session.SetEnvironment();
    std::freopen("/tmp/shardwise_nccl_kill_test.log", "w", stdout);
    std::freopen("/tmp/shardwise_nccl_kill_test.err", "w", stderr);
    execlp("mpirun", "mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2",
           SHARDWISE_BINARY, "run", "--backend", "nccl", "--model", "tiny-dense", "--layout", "pp2",
           "--batch", "2", "--prompt-len", "32", "--gen", "200000", "--timeout-s", "10",
           "--no-check", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::seconds(8));  // past NCCL's initialisation
  // Kill one rank of this job by its process id (a child of our mpirun).
  FILE* ranks = popen(("pgrep -P " + std::to_string(child)).c_str(), "r");
  ASSERT_NE(ranks, nullptr);
  long rank_pid = 0;
  ASSERT_EQ(fscanf(ranks, "%ld", &rank_pid), 1) << "no rank found";
  pclose(ranks);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(static_cast<pid_t>(rank_pid), SIGKILL), 0);
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(child, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (done == 0) kill(child, SIGKILL);
  ASSERT_EQ(done, child) << "the run did not end within 30 s";
  EXPECT_TRUE(!WIFEXITED(status) || WEXITSTATUS(status) != 0);
  EXPECT_LT(elapsed, 15.0);
}

}  // namespace
}  // namespace shardwise
