// Energy in explain, plan, simulate and price (price/energy.h): the deployment's GPU boards at
// their datasheet power, over the same output tokens the $/Mtok figure is spread over. Board
// powers are the datasheets' (NVIDIA H100 SXM5 up to 700 W, A100 SXM4 400 W, B200 1,000 W).
#include <gtest/gtest.h>

#include <string>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

constexpr double kH100W = 700, kA100W = 400, kB200W = 1000;
constexpr double kJoulesPerKwh = 3.6e6;

TEST(EnergyCli, PriceAtTheOperatingPointWithElectricity) {
  const RunResult r = RunShardwise(
      "price --model llama-3.1-70b --cluster dgx-h100 --layout tp4 --usd-per-kwh 0.12 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  const auto& e = j["energy"];
  EXPECT_DOUBLE_EQ(e["board_power_w"].get<double>(), 4 * kH100W);
  const double tokens_per_s = j["billed"]["output_tokens_per_s"].get<double>();
  ASSERT_GT(tokens_per_s, 0);
  const double joules = e["joules_per_output_token"].get<double>();
  EXPECT_NEAR(joules, 4 * kH100W / tokens_per_s, 1e-9 * joules);
  // The bill and the energy over the same tokens: $/Mtok = $/h / 3600 / tok/s x 1e6, so
  // J/token = $/Mtok x W x 3600 / ($/h x 1e6).
  const double usd_per_mtok = j["usd_per_mtok_output"].get<double>();
  const double usd_per_hour = j["usd_per_hour"].get<double>();
  EXPECT_NEAR(joules, usd_per_mtok * 4 * kH100W * 3600 / (usd_per_hour * 1e6), 1e-6 * joules);
  EXPECT_NEAR(e["electricity_usd_per_mtok_output"].get<double>(),
              joules * 1e6 / kJoulesPerKwh * 0.12, 1e-12);
  EXPECT_NE(r.out.find("upper bound"), std::string::npos);  // the basis is stated
}

TEST(EnergyCli, ExplainAddsEachPoolsBoards) {
  // 4 A100 (prefill) + 4 H100 (decode): 1,600 + 2,800 = 4,400 W.
  const RunResult r = RunShardwise(
      "explain --model llama-3.1-70b --cluster dgx-h100 --prefill-cluster dgx-a100 "
      "--prefill-layout tp4 --decode-layout tp4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = r.Json();
  EXPECT_DOUBLE_EQ(j["energy"]["board_power_w"].get<double>(), 4 * kA100W + 4 * kH100W);
  EXPECT_NEAR(j["energy"]["joules_per_output_token"].get<double>(),
              (4 * kA100W + 4 * kH100W) / j["output_tokens_per_s"].get<double>(), 1e-9);
  const RunResult text =
      RunShardwise("explain --model llama-3.1-8b --cluster dgx-b200 --layout tp1");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("energy      1.0 kW of GPU boards"), std::string::npos) << text.out;
}

TEST(EnergyCli, SimulateAndPlanSpreadThePowerOverTheBilledTokens) {
  const RunResult sim = RunShardwise(
      "simulate --model llama-3.1-8b --cluster dgx-b200 --layout dp8 --concurrency 64 "
      "--requests 400 --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const auto s = sim.Json();
  EXPECT_DOUBLE_EQ(s["energy"]["board_power_w"].get<double>(), 8 * kB200W);
  // Both figures over one token count: J/token / ($/Mtok) = W x 3600 / ($/h x 1e6).
  EXPECT_NEAR(s["energy"]["joules_per_output_token"].get<double>() /
                  s["cost"]["usd_per_mtok_output"].get<double>(),
              8 * kB200W * 3600 / (s["cost"]["usd_per_hour"].get<double>() * 1e6), 1e-9);

  const RunResult plan = RunShardwise("plan --model llama-3.1-8b --cluster dgx-h100 --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const auto p = plan.Json();
  ASSERT_FALSE(p["layouts"].empty());
  const RunResult gpus = RunShardwise("gpus --json");
  double usd_per_gpu_hour = 0;
  for (const auto& g : gpus.Json()) {
    if (g["name"] == "h100-sxm") usd_per_gpu_hour = g["usd_per_gpu_hour"].get<double>();
  }
  ASSERT_GT(usd_per_gpu_hour, 0);
  for (const auto& entry : p["layouts"]) {
    // Per GPU: J/token / ($/Mtok) = 700 W x 3600 / ($/GPU-h x 1e6), whatever the layout.
    EXPECT_NEAR(
        entry["joules_per_output_token"].get<double>() / entry["usd_per_mtok_output"].get<double>(),
        kH100W * 3600 / (usd_per_gpu_hour * 1e6), 1e-9)
        << entry["layout"];
  }
}

TEST(EnergyCli, BadElectricityPriceIsOneLine) {
  for (const char* price : {"0", "-1", "nan", "inf", "11"}) {
    ExpectOneLineError(RunShardwise(std::string("price --usd-per-kwh ") + price),
                       "--usd-per-kwh must be an electricity price");
  }
}

}  // namespace
}  // namespace shardwise::testing
