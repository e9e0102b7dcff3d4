// Training engine profiles: every number sourced, per-GPU rates (and GPUs "like" another), the
// FP8 recipes a GPU lacks, and the one-line errors of a malformed profile.
#include "shardwise/train/engine.h"

#include <gtest/gtest.h>

#include <functional>

#include "shardwise/catalog/embedded.h"
#include "shardwise/hw/gpu.h"
#include "shardwise/model/catalog.h"
#include "shardwise/train/step.h"

namespace shardwise::train {
namespace {

TEST(TrainEngine, BuiltinsParseWithEverySource) {
  for (const std::string& name : BuiltinTrainEngineNames()) {
    auto e = LoadTrainEngine(name);
    ASSERT_TRUE(e.ok()) << name << ": " << e.status().message();
    EXPECT_FALSE(e->provenance.empty()) << name;
    for (const auto& [key, provenance] : e->provenance) {
      EXPECT_FALSE(e->sources.at(key).empty()) << name << " " << key;
    }
  }
}

TEST(TrainEngine, GpuLikeAnotherSharesItsRates) {
  const TrainEngine e = LoadTrainEngine("megatron-core").value();
  const TrainGpuRates h100 = e.RatesOn(LoadGpu("h100-sxm").value());
  const TrainGpuRates h200 = e.RatesOn(LoadGpu("h200").value());
  EXPECT_EQ(h200.gemm_fraction, h100.gemm_fraction);
  EXPECT_EQ(h200.attention_forward_fraction, h100.attention_forward_fraction);
  // A GPU without an entry takes the GPU catalog's bf16 fraction and the default entry's
  // attention as a share of it.
  const GpuSpec a100 = LoadGpu("a100-80g").value();
  const TrainGpuRates rates = e.RatesOn(a100);
  EXPECT_DOUBLE_EQ(rates.gemm_fraction.at("bf16"), a100.gemm_fraction.at(Dtype::kBf16));
  EXPECT_FALSE(rates.gemm_fraction.contains("fp8-tensor"));  // A100 has no FP8 tensor cores
}

TEST(TrainEngine, RecipeKeys) {
  TrainConfig c;
  EXPECT_EQ(GemmRateKey(c), "bf16");
  c.dtype = Dtype::kFp8;
  c.fp8_recipe = Fp8Recipe::kDelayed;
  EXPECT_EQ(GemmRateKey(c), "fp8-tensor");
  c.fp8_recipe = Fp8Recipe::kCurrent;
  EXPECT_EQ(GemmRateKey(c), "fp8-tensor");
  c.fp8_recipe = Fp8Recipe::kBlockwise;
  EXPECT_EQ(GemmRateKey(c), "fp8-block");
  c.fp8_recipe = Fp8Recipe::kMxfp8;
  EXPECT_EQ(GemmRateKey(c), "mxfp8");
  EXPECT_EQ(c.PrecisionName(), "fp8-mxfp8");
  EXPECT_FALSE(ParseFp8Recipe("nvfp4").ok());
}

TEST(TrainEngine, RecipeTheGpuLacksIsAnError) {
  // MXFP8 needs Blackwell's block-scaled tensor cores; Hopper has none.
  const ModelSpec m = LoadModel("llama-3.1-8b").value();
  const ClusterSpec c = LoadCluster("dgx-h100").value();
  const TrainEngine e = LoadTrainEngine("megatron-core").value();
  auto model = TrainModel::Create(m, c, ParseLayout("dp8").value(), e);
  ASSERT_TRUE(model.ok());
  TrainConfig cfg;
  cfg.global_batch = 64;
  cfg.dtype = Dtype::kFp8;
  cfg.fp8_recipe = Fp8Recipe::kMxfp8;
  auto est = model->Estimate(cfg);
  ASSERT_FALSE(est.ok());
  EXPECT_NE(est.status().message().find(
                "states no FP8 mxfp8 GEMM rate for h100-sxm (only for b200, gb200, gb300)"),
            std::string::npos)
      << est.status().message();
  cfg.fp8_recipe = Fp8Recipe::kBlockwise;
  EXPECT_TRUE(model->Estimate(cfg).ok());
}

nlohmann::json Minimal() {
  nlohmann::json j = nlohmann::json::parse(
      R"({"name": "x", "schedules": ["1f1b"], "zero_stages": [0], "fields": {}, "gpus": {}})");
  const nlohmann::json core =
      nlohmann::json::parse(catalog::ReadEmbedded("training/megatron-core.json").value());
  j["fields"] = core["fields"];
  j["gpus"] = core["gpus"];
  return j;
}

void ExpectError(const nlohmann::json& j, const std::string& text) {
  auto e = ParseTrainEngine(j, "test.json");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find(text), std::string::npos) << e.status().message();
  EXPECT_EQ(e.status().message().find('\n'), std::string::npos);
}

TEST(TrainEngine, MalformedProfiles) {
  ASSERT_TRUE(ParseTrainEngine(Minimal(), "test.json").ok());
  nlohmann::json j = Minimal();
  j["fields"].erase("host_sync_s");
  ExpectError(j, "lacks 'host_sync_s'");
  j = Minimal();
  j["fields"]["hidden_tensors"]["provenance"] = "guessed";
  ExpectError(j, "'hidden_tensors'");
  j = Minimal();
  j["fields"]["usable_hbm_fraction"]["value"] = 2;
  ExpectError(j, "'usable_hbm_fraction' must be a number in [0.01, 1]");
  j = Minimal();
  j["gpus"]["h200"] = {{"like", "mi300x"}, {"source", "no"}};
  ExpectError(j, "like 'mi300x', which has no entry");
  j = Minimal();
  j["gpus"].erase("default");
  ExpectError(j, "\"default\" entry");
  j = Minimal();
  j["gpus"]["b200"].erase("gemm_fraction_bf16");
  ExpectError(j, "gemm_fraction_bf16");
  // A misspelt field had been ignored, its default used.
  j = Minimal();
  j["fields"]["host_sync_seconds"] = j["fields"]["host_sync_s"];
  ExpectError(j, "unknown training engine field 'host_sync_seconds'");
}

TEST(TrainEngine, FormatsAndParallelismsItOffers) {
  // Unstated: bf16 and fp8, and every parallelism (megatron-core's profile states none).
  const TrainEngine all = ParseTrainEngine(Minimal(), "test.json").value();
  EXPECT_TRUE(all.OffersDtype(Dtype::kFp8));
  EXPECT_TRUE(all.context_parallel);
  EXPECT_TRUE(all.expert_parallel);
  // Megatron-LM of SC21: 16-bit training with data, tensor and pipeline parallelism only.
  const TrainEngine sc21 = LoadTrainEngine("megatron-lm-sc21").value();
  EXPECT_TRUE(sc21.OffersDtype(Dtype::kBf16));
  EXPECT_FALSE(sc21.OffersDtype(Dtype::kFp8));
  EXPECT_FALSE(sc21.context_parallel);
  EXPECT_FALSE(sc21.expert_parallel);
  nlohmann::json j = Minimal();
  j["dtypes"] = {"bf16", "fp4"};
  ExpectError(j, "unknown dtype fp4 in 'dtypes'; use bf16 and/or fp8");
  j = Minimal();
  j["dtypes"] = nlohmann::json::array();
  ExpectError(j, "'dtypes' must list the formats it trains in");
  j = Minimal();
  j["parallelisms"] = {"tp", "pp"};
  ExpectError(j, "'parallelisms' must include dp, tp and pp");
  j = Minimal();
  j["parallelisms"] = {"dp", "tp", "pp", "sp"};
  ExpectError(j, "unknown parallelism sp in 'parallelisms'");
  // Unprintable or huge names are shown escaped and cut, on one line.
  j = Minimal();
  j["dtypes"] = {"bf\n16"};
  ExpectError(j, "in 'dtypes'");
  j = Minimal();
  j["parallelisms"] = {"dp", "tp", "pp", std::string(5000, 'x')};
  ExpectError(j, "in 'parallelisms'");
  EXPECT_LT(ParseTrainEngine(j, "test.json").status().message().size(), 300u);
}

TEST(TrainEngine, PublishedRunsSpreadAllOrNone) {
  // data/training/megatron-core.json states 0.79-1.12x over four GPUs' runs.
  const auto core = ParseTrainEngine(Minimal(), "test.json").value();
  ASSERT_TRUE(core.measured.has_value());
  EXPECT_EQ(core.measured->ratio_p10, 0.79);
  EXPECT_EQ(core.measured->ratio_p90, 1.12);
  EXPECT_EQ(core.measured->gpus, (std::vector<std::string>{"h100-sxm", "b200", "gb200", "gb300"}));
  // A profile no published run checks states none of the fields, and no spread.
  nlohmann::json j = Minimal();
  for (const char* key : {"measured_ratio_p10", "measured_ratio_p90", "measured_on",
                          "measured_gpus", "measured_by_model"}) {
    j["fields"].erase(key);
  }
  const auto none = ParseTrainEngine(j, "test.json");
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_FALSE(none->measured.has_value());
  // Some but not all: refused, not half read.
  j = Minimal();
  j["fields"].erase("measured_ratio_p10");
  ExpectError(j,
              "state all of measured_ratio_p10, measured_ratio_p90, measured_on and "
              "measured_gpus, or none");
  j = Minimal();
  j["fields"]["measured_ratio_p10"]["value"] = 1.2;
  ExpectError(j, "'measured_ratio_p10' must not exceed 'measured_ratio_p90'");
}

TEST(TrainEngine, PublishedRunsPerModelAndGpu) {
  // Two models' runs on the spread's GPUs: m1 on h100-sxm (2 runs) and b200, m2 on h100-sxm.
  nlohmann::json j = Minimal();
  j["fields"]["measured_by_model"] = {
      {"value",
       {{"m1",
         {{"h100-sxm", {{"low", 0.6}, {"high", 0.7}, {"rows", 2}, {"runs", "BF16, FP8-CS"}}},
          {"b200", {{"low", 0.9}, {"high", 0.9}, {"rows", 1}, {"runs", "BF16"}}}}},
        {"m2", {{"h100-sxm", {{"low", 1.1}, {"high", 1.2}, {"rows", 3}, {"runs", "FP8-CS"}}}}}}},
      {"provenance", "fitted"},
      {"source", "by hand"}};
  const auto e = ParseTrainEngine(j, "test.json");
  ASSERT_TRUE(e.ok()) << e.status().message();
  const auto& by_model = e->measured->by_model;
  ASSERT_EQ(by_model.size(), 3u);
  // nlohmann::json orders keys: m1's b200 before its h100-sxm.
  EXPECT_EQ(by_model[1].model, "m1");
  EXPECT_EQ(by_model[1].gpu, "h100-sxm");
  EXPECT_EQ(by_model[1].ratio_low, 0.6);
  EXPECT_EQ(by_model[1].ratio_high, 0.7);
  EXPECT_EQ(by_model[1].rows, 2);
  EXPECT_EQ(by_model[1].runs, "BF16, FP8-CS");
  EXPECT_EQ(by_model[2].model, "m2");
  EXPECT_EQ(by_model[2].rows, 3);
  // Each range is low <= high over a whole number of runs on a GPU of the spread, said what
  // they were, with nothing else.
  const auto bad = [&](const std::function<void(nlohmann::json&)>& change,
                       const std::string& fragment) {
    nlohmann::json k = j;
    change(k["fields"]["measured_by_model"]["value"]);
    ExpectError(k, fragment);
  };
  bad([](auto& v) { v["m1"]["h100-sxm"]["low"] = 0.8; }, "m1 on h100-sxm: 'low' must not exceed");
  bad([](auto& v) { v["m1"]["h100-sxm"]["rows"] = 1.5; }, "'rows' must be a whole number");
  bad([](auto& v) { v["m1"]["h100-sxm"].erase("high"); }, "m1 on h100-sxm: needs 'high'");
  bad([](auto& v) { v["m1"]["h100-sxm"].erase("runs"); }, "needs 'runs'");
  bad([](auto& v) { v["m1"]["h100-sxm"]["rowz"] = 2; }, "unknown field 'rowz'");
  bad([](auto& v) { v["m2"] = 1; }, "'m2' must be an object of GPUs");
  // A GPU the spread's runs did not use (a misspelling) is named, with the nearest.
  bad([](auto& v) { v["m2"]["h100"] = v["m2"]["h100-sxm"]; }, "did you mean 'h100-sxm'");
  // Without the spread it belongs to, refused.
  nlohmann::json alone = j;
  for (const char* key :
       {"measured_ratio_p10", "measured_ratio_p90", "measured_on", "measured_gpus"}) {
    alone["fields"].erase(key);
  }
  ExpectError(alone, "measured_by_model needs all four");
  // An MoE model's runs keyed by routing: the model and its routing apart; nothing else.
  nlohmann::json routed = j;
  routed["fields"]["measured_by_model"]["value"]["m3 token-drop"] =
      routed["fields"]["measured_by_model"]["value"]["m2"];
  const auto r = ParseTrainEngine(routed, "test.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->measured->by_model.back().model, "m3");
  EXPECT_EQ(r->measured->by_model.back().moe_routing, "token-drop");
  EXPECT_EQ(r->measured->by_model.front().moe_routing, "");
  bad([](auto& v) { v["m3 sometimes"] = v["m2"]; },
      "'m3 sometimes' qualifies a model's runs by routing: MODEL dropless or MODEL token-drop");
  // Checked per key, not per GPU entry: a bad key with no GPUs is refused too; so is no model.
  bad([](auto& v) { v["m3 sometimes"] = nlohmann::json::object(); }, "'m3 sometimes' qualifies");
  bad([](auto& v) { v[" dropless"] = v["m2"]; }, "' dropless' qualifies");
  // One model's runs on one GPU for every routing and per routing at once would hide one.
  bad([](auto& v) { v["m2 dropless"] = v["m2"]; },
      "m2 on h100-sxm is stated both without a routing and as 'm2 dropless'");
  // An unprintable key is shown escaped, on one line.
  bad([](auto& v) { v["m2 drop\nless"] = v["m2"]; }, "qualifies");
}

}  // namespace
}  // namespace shardwise::train
