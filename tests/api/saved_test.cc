// Saved results read back: a sparse "deployment.saved" takes every default it leaves out, and a
// seed of any unsigned 64-bit value comes back as it was saved.
#include "shardwise/api/saved.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace shardwise::api {
namespace {

TEST(SavedDeployment, ASparseFileTakesTheDefaults) {
  // No serving, workload, load or slo objects: each read falls back to its default (a reader
  // once pointed at a destroyed empty object for them).
  const nlohmann::json result = nlohmann::json::parse(
      R"({"deployment":{"saved":{"model":"llama-3.1-8b","cluster":{"name":"dgx-h100"},)"
      R"("spec":{"layout":"tp1"}}}})");
  const StatusOr<SavedDeployment> s = SavedDeploymentFromJson(result, "sparse.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->model, "llama-3.1-8b");
  EXPECT_EQ(s->deployment.layout, "tp1");
  const SavedDeployment defaults;
  EXPECT_EQ(s->isl, defaults.isl);
  EXPECT_EQ(s->seed, defaults.seed);
  EXPECT_EQ(s->router, defaults.router);
}

TEST(SavedDeployment, TheLargestSeedComesBack) {
  SavedDeployment saved;
  saved.model = "llama-3.1-8b";
  saved.deployment = DeploymentSpec::Aggregated("tp1");
  saved.seed = std::numeric_limits<uint64_t>::max();
  const nlohmann::json result = {{"deployment", {{"saved", ToJson(saved)}}}};
  const StatusOr<SavedDeployment> back = SavedDeploymentFromJson(result, "seed.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->seed, std::numeric_limits<uint64_t>::max());
  // A negative seed is refused by field.
  nlohmann::json negative = result;
  negative["deployment"]["saved"]["load"]["seed"] = -1;
  const StatusOr<SavedDeployment> bad = SavedDeploymentFromJson(negative, "seed.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("seed"), std::string::npos);
}

}  // namespace
}  // namespace shardwise::api
