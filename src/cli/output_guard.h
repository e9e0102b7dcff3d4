// Where the CLI writes files: only to the path the user named, and never over an existing file
// that is not of the kind being written (a logits .npy, a level profile) unless --force is
// given, so a typo cannot destroy a cluster file or a checkpoint.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "shardwise/common/status.h"

namespace shardwise::cli {

// OK when `path` does not exist, or is a regular file whose content `is_ours` recognises, or
// `force` is set. `what` names the kind in the error ("logits .npy file").
Status CheckOutputPath(const std::string& path, bool force, std::string_view what,
                       const std::function<bool(const std::string& content)>& is_ours);

}  // namespace shardwise::cli
