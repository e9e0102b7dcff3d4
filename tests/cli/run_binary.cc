#include "run_binary.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace shardwise::testing {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

namespace {

std::string TempPath(const char* tag) {
  char name[] = "/tmp/shardwise_test_XXXXXX";
  const int fd = mkstemp(name);
  if (fd >= 0) close(fd);
  return std::string(name) + tag;
}

}  // namespace

RunResult RunShardwise(const std::string& args) {
  const std::string out_path = TempPath(".out");
  const std::string err_path = TempPath(".err");
  const std::string cmd =
      std::string(SHARDWISE_BINARY) + " " + args + " >" + out_path + " 2>" + err_path;
  const int status = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = Slurp(out_path);
  r.err = Slurp(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return r;
}

int LineCount(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

void ExpectOneLineError(const RunResult& r, const std::string& fragment) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(LineCount(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

nlohmann::json PoolOf(const nlohmann::json& result, const std::string& role) {
  for (const nlohmann::json& pool : result.at("deployment").at("pools")) {
    if (pool.at("role") == role) return pool;
  }
  return nullptr;
}

}  // namespace shardwise::testing
