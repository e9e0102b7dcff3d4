// A catalog model for the step-model tests. One definition for every test file (they share a
// unity build batch).
#pragma once

#include <string>

#include "shardwise/model/catalog.h"

namespace shardwise::testing {

inline ModelSpec Model(const std::string& name) { return LoadModel(name).value(); }

}  // namespace shardwise::testing
