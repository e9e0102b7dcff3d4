// Under mpirun: the differential check of every layout (the `run` command compares against
// the unsharded reference itself), and a killed rank ending the run within the timeout.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "../cli/run_binary.h"
#include "mpirun_session.h"
#include "shardwise/model/catalog.h"
#include "test_layouts.h"

namespace shardwise {
namespace {

struct Case {
  std::string model;
  Layout layout;
};

std::vector<Case> Cases() {
  std::vector<Case> out;
  for (const char* model : {"tiny-dense", "tiny-moe"}) {
    const ModelSpec m = LoadModel(model).value();
    for (const Layout& l : testing::DifferentialLayouts(m)) out.push_back({model, l});
  }
  // Context parallelism (ring prefill, merged decode) across processes, with each kind of
  // attention and with EP spanning the CP ranks.
  for (const auto& [model, layout] :
       std::vector<std::pair<std::string, std::string>>{{"tiny-dense", "tp2cp2"},
                                                        {"tiny-dense", "cp4"},
                                                        {"tiny-moe", "cp2pp2ep2"},
                                                        {"tiny-mla", "cp2ep2"},
                                                        {"tiny-gptoss", "tp2cp2"}}) {
    out.push_back({model, ParseLayout(layout).value()});
  }
  return out;
}

class MpiDifferential : public ::testing::TestWithParam<Case> {};

TEST_P(MpiDifferential, MatchesTheUnshardedReference) {
  const Case& c = GetParam();
  const testing::MpirunSession session;
  const std::string cmd = fmt::format(
      "{} -np {} {} run --backend mpi --model {} --layout {} --batch 4 --prompt-len 16 --gen 6 "
      "--seed 5 --json 2>&1",
      session.Command(), c.layout.gpus(), SHARDWISE_BINARY, c.model, c.layout.ToString());
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int status = pclose(pipe);
  ASSERT_EQ(WEXITSTATUS(status), 0) << out;
  const auto j = nlohmann::json::parse(out.substr(out.find('{')));
  EXPECT_LE(j["reference"]["max_relative_error"].get<double>(), 1e-4);
  EXPECT_TRUE(j["reference"]["tokens_match"].get<bool>());
  EXPECT_EQ(j["ranks"], c.layout.gpus());
}

INSTANTIATE_TEST_SUITE_P(Layouts, MpiDifferential, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.model + "_" + info.param.layout.ToString();
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

TEST(MpiTimeout, KilledRankEndsTheRunInTime) {
  // A long generation on 4 ranks; SIGKILL one rank; the job must end non-zero well within the
  // run's 10 s collective timeout (Open MPI tears the job down, or the survivors time out).
  const std::string binary = SHARDWISE_BINARY;
  const testing::MpirunSession session;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    session.SetEnvironment();
    std::freopen("/tmp/shardwise_kill_test.log", "w", stdout);
    std::freopen("/tmp/shardwise_kill_test.err", "w", stderr);
    execlp("mpirun", "mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "4", binary.c_str(),
           "run", "--backend", "mpi", "--model", "tiny-dense", "--layout", "tp2pp2", "--batch", "4",
           "--prompt-len", "32", "--gen", "2016", "--timeout-s", "10", "--no-check", "--seed",
           "770077", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  const auto t0 = std::chrono::steady_clock::now();
  // The unusual seed marks this job's ranks, so tests running beside it are left alone.
  ASSERT_EQ(std::system(("pkill -9 -n -f '^" + binary + " run.*--seed 770077'").c_str()), 0)
      << "no rank found";
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
  // Nothing is left running: no rank of this job survives the teardown.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_NE(std::system(("pgrep -f '^" + binary + " run.*--seed 770077' >/dev/null").c_str()), 0)
      << "a rank of the killed job is still running";
}

}  // namespace
}  // namespace shardwise
