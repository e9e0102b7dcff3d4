// A catalog model for the model tests: a model that does not load fails the test with the
// loader's message. One definition for every test file (they share a unity build batch).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "shardwise/model/catalog.h"

namespace shardwise::testing {

inline ModelSpec Load(const std::string& name) {
  auto m = LoadModel(name);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.value();
}

}  // namespace shardwise::testing
