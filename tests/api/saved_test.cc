// Saved results read back: a sparse "deployment.saved" takes every default it leaves out, and a
// seed of any unsigned 64-bit value comes back as it was saved.
#include "shardwise/api/saved.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace shardwise::api {
namespace {

TEST(SavedDeployment, ASparseFileTakesTheDefaults) {
  // No serving object and empty load and slo objects: each read falls back to its default (a
  // reader once pointed at a destroyed empty object for them).
  const nlohmann::json result = nlohmann::json::parse(
      R"({"schema_version":4,"command":"plan","deployment":{"saved":{"command":"plan",)"
      R"("model":"llama-3.1-8b","cluster":{"name":"dgx-h100"},"spec":{"layout":"tp1"},)"
      R"("workload":{"isl":2048,"osl":128},"load":{},"slo":{}}}})");
  const StatusOr<SavedDeployment> s = SavedDeploymentFromJson(result, "sparse.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->model, "llama-3.1-8b");
  EXPECT_EQ(s->deployment.layout, "tp1");
  EXPECT_EQ(s->isl, 2048);
  const SavedDeployment defaults;
  EXPECT_EQ(s->seed, defaults.seed);
  EXPECT_EQ(s->router, defaults.router);
}

TEST(SavedDeployment, AFileOfAnotherVersionCommandOrWithoutItsWorkloadIsRefused) {
  // Each was accepted: a missing workload ran 1,024/256 tokens, and a version 3 file or a
  // train result's deployment were read as if they were this version's plan.
  const nlohmann::json good = nlohmann::json::parse(
      R"({"schema_version":4,"command":"simulate","deployment":{"saved":{"command":"simulate",)"
      R"("model":"llama-3.1-8b","cluster":{"name":"dgx-h100"},"spec":{"layout":"tp1"},)"
      R"("workload":{"isl":2048,"osl":128},"load":{"rate":5},"slo":{}}}})");
  ASSERT_TRUE(SavedDeploymentFromJson(good, "good.json").ok());
  const auto refused = [&](nlohmann::json edited, const std::string& why) {
    const StatusOr<SavedDeployment> s = SavedDeploymentFromJson(edited, "edited.json");
    ASSERT_FALSE(s.ok()) << why;
    EXPECT_NE(s.status().message().find(why), std::string::npos) << s.status().message();
  };
  nlohmann::json v3 = good;
  v3["schema_version"] = 3;
  refused(v3, "schema_version 3");
  nlohmann::json train = good;
  train["deployment"]["saved"]["command"] = "train";
  refused(train, "got 'train'");
  nlohmann::json other = good;
  other["command"] = "plan";  // the file's command and its saved question's disagree
  refused(other, "deployment.saved.command");
  nlohmann::json no_workload = good;
  no_workload["deployment"]["saved"].erase("workload");
  refused(no_workload, "workload.isl is missing");
  // A missing load ran the default 10 requests/s, a missing slo dropped the SLOs; a negative
  // in_flight explained batch 1.
  nlohmann::json no_load = good;
  no_load["deployment"]["saved"].erase("load");
  refused(no_load, "saved.load is missing");
  nlohmann::json no_slo = good;
  no_slo["deployment"]["saved"].erase("slo");
  refused(no_slo, "saved.slo is missing");
  nlohmann::json negative = good;
  negative["deployment"]["saved"]["load"]["in_flight"] = -5;
  refused(negative, "in_flight");
}

TEST(SavedDeployment, TheLargestSeedComesBack) {
  SavedDeployment saved;
  saved.model = "llama-3.1-8b";
  saved.deployment = DeploymentSpec::Aggregated("tp1");
  saved.seed = std::numeric_limits<uint64_t>::max();
  saved.command = "simulate";
  const nlohmann::json result = {
      {"schema_version", 4}, {"command", "simulate"}, {"deployment", {{"saved", ToJson(saved)}}}};
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
