// Checks a run makes on this machine before any rank starts: that it is not running as many
// copies under mpirun without the MPI backend, that this machine's memory holds the run, and
// which host profile the prediction uses (a user's file is only read; the measured one is cached
// in the cache folder). They read the environment and /proc, so they live beside api/run.h, not
// in the runtime library.
#pragma once

#include <string>

#include "shardwise/common/status.h"
#include "shardwise/runtime/host_profile.h"
#include "shardwise/runtime/runner.h"

namespace shardwise::api {

// Under mpirun (OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_SIZE above 1) only --backend mpi makes
// sense: every process would otherwise run the whole job.
Status CheckLauncher(const std::string& backend);

// Refuses a run whose estimated peak memory exceeds what this machine has available, with the
// figures and what to change.
Status CheckRunFitsHost(const RunConfig& config, const std::string& backend, bool with_reference);

// The host profile for the prediction: `user_path` if given (read only; an error if it is not a
// host profile), else the cached one, measured and cached when missing. `used_path` receives
// the file's path.
StatusOr<HostProfile> ResolveHostProfile(const std::string& user_path, std::string& used_path);

}  // namespace shardwise::api
