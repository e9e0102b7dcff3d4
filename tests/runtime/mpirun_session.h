// A session directory of its own for each mpirun a test starts. Open MPI 4.1 creates its
// per-user session directory under TMPDIR (/tmp/ompi.<host>.<uid>) with a mkdir that fails when
// another mpirun creates it at the same instant ("File exists", then orte_init aborts), which
// CTest's parallel runs hit now and then; with its own TMPDIR each job has its own directory.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace shardwise::testing {

class MpirunSession {
 public:
  MpirunSession() {
    char dir[] = "/tmp/shardwise-mpirun-XXXXXX";
    if (mkdtemp(dir) != nullptr) dir_ = dir;
  }
  ~MpirunSession() {
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  MpirunSession(const MpirunSession&) = delete;
  MpirunSession& operator=(const MpirunSession&) = delete;

  // "mpirun ..." for a shell command (popen, system), as root, with this session's TMPDIR.
  std::string Command() const {
    return (dir_.empty() ? std::string() : "TMPDIR=" + dir_ + " ") +
           "mpirun --allow-run-as-root --oversubscribe";
  }
  // For a forked child about to exec mpirun itself.
  void SetEnvironment() const {
    if (!dir_.empty()) setenv("TMPDIR", dir_.c_str(), 1);
  }

 private:
  std::string dir_;
};

}  // namespace shardwise::testing
