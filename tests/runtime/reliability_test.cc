// The runtime's guards: safetensors validation (aliasing, shapes, shard paths), non-finite
// weights and activations as errors naming the tensor, the memory estimate before a run, the
// collective timeout for tiny values, and the threads backend's rank limit.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "shardwise/model/accounting.h"
#include "shardwise/model/catalog.h"
#include "shardwise/runtime/checkpoint.h"
#include "shardwise/runtime/comm/registry.h"
#include "shardwise/runtime/comm/thread_comm.h"
#include "shardwise/runtime/finite_check.h"
#include "shardwise/runtime/run_budget.h"
#include "shardwise/runtime/runner.h"
#include "shardwise/runtime/safetensors_format.h"

namespace shardwise {
namespace {

// A safetensors file in memory: 8-byte length, the header, `data_bytes` zero bytes.
std::string File(const nlohmann::json& header, size_t data_bytes) {
  const std::string text = header.dump();
  const uint64_t len = text.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &len, 8);
  return out + text + std::string(data_bytes, '\0');
}

std::string ErrorOf(const std::string& bytes) {
  const Status s = CheckSafetensorsBytes(bytes, "m.safetensors");
  return s.ok() ? "" : s.message();
}

TEST(SafetensorsFormat, ValidFileAndEveryCorruption) {
  const nlohmann::json ok = {
      {"a", {{"dtype", "F32"}, {"shape", {2, 2}}, {"data_offsets", {0, 16}}}},
      {"b", {{"dtype", "BF16"}, {"shape", {4}}, {"data_offsets", {16, 24}}}}};
  EXPECT_EQ(ErrorOf(File(ok, 24)), "");
  // b's bytes 8..16 lie inside a's 0..16: aliasing.
  nlohmann::json alias = ok;
  alias["b"]["data_offsets"] = {8, 16};
  EXPECT_EQ(ErrorOf(File(alias, 24)),
            "m.safetensors: two tensors overlap at data bytes 8 to 16; the header is corrupt");
  nlohmann::json negative = ok;
  negative["a"]["shape"] = {-2, -2};
  EXPECT_EQ(ErrorOf(File(negative, 24)),
            "m.safetensors: tensor 'a': shape entries must be non-negative integers, got -2");
  nlohmann::json huge = ok;
  huge["a"]["shape"] = {int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_EQ(ErrorOf(File(huge, 24)), "m.safetensors: tensor 'a': the shape's byte size overflows");
  nlohmann::json beyond = ok;
  beyond["b"]["data_offsets"] = {16, 1000};
  EXPECT_NE(ErrorOf(File(beyond, 24)).find("ends at byte 1000 of the 24-byte data section"),
            std::string::npos);
  nlohmann::json wrong_type = ok;
  wrong_type["a"]["shape"] = "2x2";
  EXPECT_EQ(ErrorOf(File(wrong_type, 24)),
            "m.safetensors: tensor 'a': 'shape' must be a list of at most 8 dimensions");
  EXPECT_NE(ErrorOf(std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8)).find("corrupt"),
            std::string::npos);
}

TEST(SafetensorsFormat, IndexShardsStayInsideTheFolder) {
  for (const char* shard : {"../x.safetensors", "/etc/passwd", "sub/x.safetensors", ".."}) {
    const nlohmann::json index = {{"weight_map", {{"w", shard}}}};
    const StatusOr<std::vector<std::string>> r = SafetensorsIndexShards(index, "i.json");
    ASSERT_FALSE(r.ok()) << shard;
    EXPECT_NE(r.status().message().find("must be a file name inside the checkpoint folder"),
              std::string::npos);
  }
  const nlohmann::json not_string = {{"weight_map", {{"w", 5}}}};
  EXPECT_EQ(SafetensorsIndexShards(not_string, "i.json").status().message(),
            "i.json: weight_map['w'] must be a shard file name, got 5");
  const nlohmann::json ok = {{"weight_map", {{"w", "a.safetensors"}, {"v", "a.safetensors"}}}};
  EXPECT_EQ(SafetensorsIndexShards(ok, "i.json").value(),
            std::vector<std::string>{"a.safetensors"});
}

RunConfig TinyConfig(const std::string& layout) {
  RunConfig c;
  c.model = LoadModel("tiny-dense").value();
  c.layout = ParseLayout(layout).value();
  c.batch = 2;
  c.prompt_tokens = 8;
  c.generate_tokens = 4;
  return c;
}

TEST(NumericalSanity, NanWeightsAreAnErrorNamingTheTensor) {
  // A checkpoint whose layer-1 q_proj is all NaN (written from the generated weights, then
  // overwritten in place: F32 data of that one tensor).
  const std::string dir =
      (std::filesystem::temp_directory_path() / "shardwise_nan_checkpoint").string();
  std::filesystem::remove_all(dir);
  RunConfig c = TinyConfig("tp2");
  std::map<std::string, NamedTensor> tensors;
  const std::unique_ptr<WeightSource> gen = GeneratedWeights(c.seed);
  for (const auto& [name, shape] : CheckpointTensors(c.model)) {
    const int64_t rows = shape.size() == 2 ? shape[0] : 1, cols = shape.back();
    std::vector<float> data = gen->Read(name, rows, cols, {0, rows}, {0, cols}).value();
    if (name == "model.layers.1.self_attn.q_proj.weight") {
      std::fill(data.begin(), data.end(), std::numeric_limits<float>::quiet_NaN());
    }
    tensors[name] = NamedTensor{shape, std::move(data)};
  }
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteSafetensors(dir + "/model.safetensors", tensors).ok());
  c.weights_dir = dir;
  const Status s = RunOnThreads(2, 30, [&](Communicator& w) { return RunRank(c, w).status(); });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("weight tensor 'model.layers.1.self_attn.q_proj.weight' holds a "
                             "non-finite value (nan) at element 0"),
            std::string::npos)
      << s.message();
  std::filesystem::remove_all(dir);
}

TEST(NumericalSanity, CheckFiniteNamesTheFirstBadElement) {
  const std::vector<float> v = {1.0f, 2.0f, std::numeric_limits<float>::infinity()};
  EXPECT_EQ(CheckFinite(v, "x").message(),
            "x holds a non-finite value (inf) at element 2; check the checkpoint");
  EXPECT_TRUE(CheckFinite(std::vector<float>{1, 2}, "x").ok());
}

TEST(RunBudget, WeightsKvAndActivationsByHand) {
  const RunConfig c = TinyConfig("tp2");
  const ModelSpec& m = c.model;
  const ParamBreakdown p = CountParams(m);
  const RunMemory mem = EstimateRunMemory(c, 2, true);
  // Both TP ranks in this process: every layer weight once, the embedding on each of the 2
  // ranks (one stage is first and last) and the LM head split by vocabulary rows between them
  // (tiny-dense's vocabulary is even: no padding), 4 bytes each.
  ASSERT_EQ(m.vocab_size % 2, 0);
  const double table = static_cast<double>(m.vocab_size * m.hidden_size);
  const double body = static_cast<double>(p.total - p.embedding - p.lm_head);
  EXPECT_DOUBLE_EQ(mem.weight_bytes, 4.0 * (body + 2 * table + table));
  // K and V: 2 x layers x kv heads x head_dim x 2 sequences x (8 + 4) tokens x 4 bytes; 12 query
  // and 2 KV heads over tp 2 hold one KV head each.
  ASSERT_EQ(m.num_heads, 12);
  ASSERT_EQ(m.num_kv_heads, 2);
  const double kv_heads_stored = 2;
  EXPECT_DOUBLE_EQ(mem.kv_bytes, 2.0 * static_cast<double>(m.num_layers()) * kv_heads_stored *
                                     static_cast<double>(m.head_dim) * 2 * 12 * 4);
  EXPECT_GT(mem.activation_bytes, 0);
  // The reference holds the whole model once (plus a tied copy of the table).
  EXPECT_GE(mem.reference_bytes, 4.0 * static_cast<double>(p.total));
  // Half the ranks in this process (MPI): half the run's bytes.
  EXPECT_DOUBLE_EQ(EstimateRunMemory(c, 1, false).weight_bytes, mem.weight_bytes / 2);
}

TEST(RunBudget, ContextAndBatchAreChecked) {
  RunConfig c = TinyConfig("tp1");
  c.prompt_tokens = 5000;  // tiny-dense has 2048 positions
  EXPECT_EQ(CheckRunConfig(c).message(),
            "`prompt_len` 5000 plus `gen` 4 exceeds tiny-dense's context of 2048 tokens");
  c = TinyConfig("tp1");
  c.generate_tokens = 100000;
  EXPECT_FALSE(CheckRunConfig(c).ok());
  c = TinyConfig("tp1");
  c.batch = 100000;
  EXPECT_NE(CheckRunConfig(c).message().find("`batch` 100000 is more than a run takes (4096)"),
            std::string::npos);
}

TEST(Timeouts, FireForAnyPositiveValue) {
  // 1 us: every all-reduce between two threads takes longer than that.
  const Status s = RunOnThreads(2, 1e-6, [](Communicator& c) -> Status {
    std::vector<float> buf(1024, 1.0f);
    for (int i = 0; i < 100; ++i) SW_RETURN_IF_ERROR(c.AllReduceSum(buf));
    return Status();
  });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("timed out"), std::string::npos) << s.message();
}

TEST(Threads, AbsurdRankCountsStartNoThreads) {
  EXPECT_EQ(CheckRankCount("threads", 100000).message(),
            "the threads backend runs at most 256 ranks in one process, the layout needs 100000; "
            "use a smaller layout or `backend` mpi");
  int calls = 0;
  EXPECT_FALSE(LaunchRanks("threads", 100000, 10, [&](Communicator&) {
                 ++calls;
                 return Status();
               }).ok());
  EXPECT_EQ(calls, 0);
}

TEST(Faults, RankDyingMidDecodeEndsEveryRankWithinTheTimeout) {
  // tp2pp2: four busy ranks (TP all-reduces, PP hand-offs). World rank 0 dies at decode step
  // 20 of 2000 (its progress hook throws, as a crashing kernel would); the other three are in
  // the middle of their own collectives. Every rank must end, with rank 0's failure as the one
  // reported error, long before the 20 s timeout; RunOnThreads returns only after joining all
  // four threads, so nothing is left running.
  RunConfig c = TinyConfig("tp2pp2");
  c.batch = 4;
  c.prompt_tokens = 16;
  c.generate_tokens = 2000;
  c.on_step = [](int64_t step, int64_t) {
    if (step == 20) throw std::runtime_error("killed mid-decode");
  };
  const auto t0 = std::chrono::steady_clock::now();
  const Status s = RunOnThreads(4, 20, [&](Communicator& w) { return RunRank(c, w).status(); });
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "rank 0: killed mid-decode");
  EXPECT_EQ(s.message().find('\n'), std::string::npos);
  EXPECT_LT(elapsed_s, 10.0);
}

}  // namespace
}  // namespace shardwise
