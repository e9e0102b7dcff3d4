// safetensors round trip: a checkpoint written from the generated weights, loaded shard by
// shard under a sharded layout, gives the generated run's logits; broken checkpoints fail
// with one clear error.
#include "shardwise/runtime/checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "shardwise/model/catalog.h"
#include "shardwise/runtime/comm/thread_comm.h"
#include "shardwise/runtime/runner.h"
#include "shardwise/runtime/weights.h"

namespace shardwise {
namespace {

StatusOr<RunResult> RunOn(const RunConfig& c) {
  RunResult out;
  const Status s = RunOnThreads(static_cast<int>(c.layout.gpus()), 30, [&](Communicator& w) -> Status {
    SW_ASSIGN_OR_RETURN(RunResult r, RunRank(c, w));
    if (w.rank() == 0) out = std::move(r);
    return Status();
  });
  if (!s.ok()) return s;
  return out;
}

RunConfig Config(const std::string& model, const std::string& layout) {
  RunConfig c;
  c.model = LoadModel(model).value();
  c.layout = ParseLayout(layout).value();
  c.batch = 2;
  c.prompt_tokens = 8;
  c.generate_tokens = 4;
  c.seed = 3;
  return c;
}

std::string TempDir(const std::string& name) {
  const std::string dir = (std::filesystem::temp_directory_path() / ("shardwise_" + name)).string();
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(Checkpoint, RoundTripSingleFileAndShardedIndex) {
  for (const auto& [model, layout] : {std::pair{"tiny-dense", "tp2pp2"}, std::pair{"tiny-moe", "tp2ep2"}}) {
    RunConfig generated = Config(model, layout);
    const RunResult expect = RunOn(generated).value();
    for (int shards : {1, 3}) {
      const std::string dir = TempDir(std::string(model) + std::to_string(shards));
      ASSERT_TRUE(WriteGeneratedCheckpoint(generated.model, generated.seed, dir, shards).ok());
      RunConfig loaded = generated;
      loaded.weights_dir = dir;
      auto got = RunOn(loaded);
      ASSERT_TRUE(got.ok()) << got.status().message();
      EXPECT_EQ(got->logits, expect.logits) << model << " shards " << shards;  // bit-identical
      EXPECT_EQ(got->tokens, expect.tokens);
    }
  }
}

TEST(Checkpoint, MissingDirectory) {
  RunConfig c = Config("tiny-dense", "tp2");
  c.weights_dir = "/nonexistent/weights";
  auto r = RunOn(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no model.safetensors or model.safetensors.index.json"),
            std::string::npos)
      << r.status().message();
}

TEST(Checkpoint, TruncatedFile) {
  RunConfig c = Config("tiny-dense", "tp1");
  const std::string dir = TempDir("truncated");
  ASSERT_TRUE(WriteGeneratedCheckpoint(c.model, c.seed, dir, 1).ok());
  const std::string file = dir + "/model.safetensors";
  std::filesystem::resize_file(file, std::filesystem::file_size(file) / 2);
  c.weights_dir = dir;
  auto r = RunOn(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("truncated"), std::string::npos) << r.status().message();
}

TEST(Checkpoint, ConfigThatDisagreesWithTheWeights) {
  RunConfig c = Config("tiny-dense", "tp1");
  const std::string dir = TempDir("mismatch");
  ASSERT_TRUE(WriteGeneratedCheckpoint(c.model, c.seed, dir, 1).ok());
  c.model.intermediate_size = 512;  // the checkpoint has 768
  c.weights_dir = dir;
  auto r = RunOn(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("the config and the weights disagree"), std::string::npos)
      << r.status().message();
}

TEST(Safetensors, Bf16AndF16Decode) {
  // bf16 0x3FC0 = 1.5; fp16 0x3E00 = 1.5 and 0xC000 = -2.0: written by hand as raw bytes.
  const std::string dir = TempDir("halves");
  std::filesystem::create_directories(dir);
  const std::string header =
      R"({"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"b":{"dtype":"F16","shape":[2],"data_offsets":[4,8]}})";
  std::ofstream out(dir + "/model.safetensors", std::ios::binary);
  const uint64_t len = header.size();
  out.write(reinterpret_cast<const char*>(&len), 8);
  out << header;
  const uint16_t data[4] = {0x3FC0, 0x3FC0, 0x3E00, 0xC000};
  out.write(reinterpret_cast<const char*>(data), 8);
  out.close();
  auto src = OpenSafetensors(dir);
  ASSERT_TRUE(src.ok()) << src.status().message();
  EXPECT_EQ((*src)->Read("a", 1, 2, {0, 1}, {0, 2}).value(), (std::vector<float>{1.5f, 1.5f}));
  EXPECT_EQ((*src)->Read("b", 1, 2, {0, 1}, {0, 2}).value(), (std::vector<float>{1.5f, -2.0f}));
}

}  // namespace
}  // namespace shardwise
