// The report module without a browser: SVG escaping and axes, the page's refusal of unknown
// results, and the side-by-side comparison on hand-written results.
#include <gtest/gtest.h>

#include <algorithm>

#include "shardwise/report/compare.h"
#include "shardwise/report/html_page.h"
#include "shardwise/report/schema.h"
#include "shardwise/report/svg.h"

namespace shardwise::report {
namespace {

TEST(Svg, EscapesMarkup) {
  EXPECT_EQ(Escape("a<b & \"c\">'"), "a&lt;b &amp; &quot;c&quot;&gt;&#39;");
}

TEST(Svg, LogAxisCoversWholeDecades) {
  const Axis a = FitAxis("x", {3.0, 250.0}, true, false);
  EXPECT_DOUBLE_EQ(a.min, 1.0);
  EXPECT_DOUBLE_EQ(a.max, 1000.0);
  const Axis lin = FitAxis("y", {2.0, 10.0}, false, true);
  EXPECT_DOUBLE_EQ(lin.min, 0.0);
  EXPECT_GE(lin.max, 10.0);
}

TEST(Svg, OneMarkPerPoint) {
  XyPlot plot("p", "title", Axis{"x", 0, 10}, Axis{"y", 0, 10});
  plot.AddPoints("s", {{1, 1}, {2, 2}, {3, 3}}, "#000");
  const std::string svg = plot.Render();
  size_t marks = 0;
  for (size_t at = svg.find("class=\"mark\""); at != std::string::npos;
       at = svg.find("class=\"mark\"", at + 1)) {
    ++marks;
  }
  EXPECT_EQ(marks, 3u);
  EXPECT_NE(svg.find("data-plot=\"p\""), std::string::npos);
}

TEST(HtmlPage, RefusesWhatItCannotDraw) {
  EXPECT_FALSE(RenderHtmlPage(nlohmann::json{{"a", 1}}).ok());
  EXPECT_FALSE(RenderHtmlPage(nlohmann::json{{"command", "size"}}).ok());
  auto page = RenderHtmlPage(nlohmann::json{{"command", "price"},
                                            {"full_load", {{"usd_per_mtok_output", 1.0}}},
                                            {"duty_cycle", {{"fraction", 0.5}}},
                                            {"break_even", nlohmann::json::object()}});
  ASSERT_TRUE(page.ok()) << page.status().message();
  EXPECT_NE(page.value().find(kGeneratorMeta), std::string::npos);
  EXPECT_EQ(page.value().find("<script"), std::string::npos);  // readable without JavaScript
  EXPECT_EQ(page.value().find("http://"), page.value().find("http://www.w3.org/2000/svg"));
}

nlohmann::json PlanResult(const std::string& cluster, double per_gpu, double tpot_s) {
  return {{"command", "plan"},
          {"schema_version", kSchemaVersion},
          {"model", "m"},
          {"cluster", cluster},
          {"gpus", 8},
          {"layouts",
           {{{"layout", "tp8"},
             {"output_tokens_per_s_per_gpu", per_gpu},
             {"tpot_s", {{"mean", tpot_s}, {"p50", tpot_s}, {"p99", tpot_s}}},
             {"bound", "HBM bandwidth"},
             {"why", "tp8: because"}}}}};
}

TEST(Compare, RatiosDifferencesAndVerdict) {
  // B makes 1,500 / 1,000 = 1.5x the tokens per GPU at 20 / 40 = 0.5x the TPOT.
  auto c = CompareResults(PlanResult("a", 1000, 0.040), PlanResult("b", 1500, 0.020));
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c.value().inputs.size(), 1u);
  EXPECT_EQ(c.value().inputs[0].metric, "cluster");
  EXPECT_DOUBLE_EQ(*c.value().metrics[0].ratio, 1.5);
  bool tpot = false;
  for (const auto& m : c.value().metrics) {
    if (m.metric == "TPOT at the load, mean (s)") {
      tpot = true;
      EXPECT_DOUBLE_EQ(*m.ratio, 0.5);
      EXPECT_FALSE(m.higher_is_better);
    }
  }
  EXPECT_TRUE(tpot);
  EXPECT_EQ(c.value().verdict, "B is better on output tokens/s per GPU: 1.50x");
  EXPECT_EQ(c.value().reasons.front(), "A: tp8: because");
}

TEST(Compare, ALevelFirstMetricLetsTheNextDecideButNotAWindowsThroughput) {
  // Two simulations keeping up with one rate bill the same tokens; their measured windows
  // differ by sampling noise (1,421 against 1,361 tokens/s), which once decided "A is better on
  // output tokens/s: 1.04x". The TTFT p50, 0.2 s against 0.1 s, decides instead.
  auto simulate = [](double measured, double ttft_s) {
    return nlohmann::json{
        {"schema_version", kSchemaVersion},
        {"command", "simulate"},
        {"throughput", {{"billed_output_tokens_per_s", 1280.0}, {"output_tokens_per_s", measured}}},
        {"ttft_s", {{"p50", ttft_s}}}};
  };
  auto c = CompareResults(simulate(1421, 0.2), simulate(1361, 0.1));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c.value().verdict,
            "A and B are level on output tokens/s billed (offered when kept up); B is better on "
            "TTFT p50 (s): 2.00x");
}

TEST(Compare, ALevelFirstMetricNamesTheWidestDifferenceEachWay) {
  // Level on the billed tokens; B's TTFT p50 is 1.04x worse (0.104 s against 0.100 s) and its
  // TPOT p99 1.25x better (0.040 s against 0.050 s), its TTFT p99 1.10x better (0.9 s against
  // 1.0 s). The verdict had named the first that differed (A's TTFT p50); it names B's widest
  // gain and A's widest, by hand from those ratios.
  auto simulate = [](double ttft_p50_s, double ttft_p99_s, double tpot_p99_s) {
    return nlohmann::json{
        {"schema_version", kSchemaVersion},
        {"command", "simulate"},
        {"throughput", {{"billed_output_tokens_per_s", 1280.0}, {"output_tokens_per_s", 1280.0}}},
        {"ttft_s", {{"p50", ttft_p50_s}, {"p99", ttft_p99_s}}},
        {"tpot_s", {{"p99", tpot_p99_s}}}};
  };
  auto c = CompareResults(simulate(0.100, 1.0, 0.050), simulate(0.104, 0.9, 0.040));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c.value().verdict,
            "A and B are level on output tokens/s billed (offered when kept up); B is better on "
            "TPOT p99 (s): 1.25x; A is better on TTFT p50 (s): 1.04x");
}

TEST(Compare, APlanThatChoseASplitIsComparedOnTheSplit) {
  // Plan A's verdict chose its disaggregated split (2,000 tokens/s per GPU, 6 GPUs) over its
  // ranked aggregated first (1,000): the split's figures are A's.
  nlohmann::json a = PlanResult("c", 1000, 0.040);
  a["verdict"] = {{"winner", "disaggregated"}, {"why", "the split wins"}};
  a["disaggregated"] = {{"name", "2P x tp2 + 1D x tp2"},
                        {"at_load", {{"output_tokens_per_s_per_gpu", 2000.0}}}};
  a["deployment"] = {{"name", "2P x tp2 + 1D x tp2"}, {"gpus", 6}};
  nlohmann::json b = PlanResult("c", 1000, 0.040);
  b["deployment"] = {{"name", "tp8"}, {"gpus", 8}};
  const auto c = CompareResults(a, b);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_DOUBLE_EQ(*c.value().metrics[0].ratio, 1000.0 / 2000.0);
  EXPECT_EQ(c.value().inputs[0].metric, "deployment");
  EXPECT_EQ(c.value().inputs[0].a, "2P x tp2 + 1D x tp2");
  EXPECT_EQ(c.value().reasons.front(), "A: the split wins");
  bool gpus = false;
  for (const auto& m : c.value().metrics) {
    if (m.metric == "GPUs deployed") gpus = m.a == "6" && m.b == "8";
  }
  EXPECT_TRUE(gpus);
}

TEST(Compare, AcrossGpuTypesCostDecides) {
  // B makes 2x the tokens per GPU on a GPU that costs 3x as much an hour: its tokens cost 1.5x
  // A's, and that decides.
  nlohmann::json a = PlanResult("c", 1000, 0.040), b = PlanResult("c", 2000, 0.040);
  a["gpu"] = "h100-sxm";
  b["gpu"] = "b200";
  a["layouts"][0]["usd_per_mtok_output"] = 1.0;
  b["layouts"][0]["usd_per_mtok_output"] = 1.5;
  const auto c = CompareResults(a, b);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c.value().metrics[0].metric, "$ per million output tokens");
  EXPECT_EQ(c.value().verdict,
            "A is better on $ per million output tokens: 1.50x (the GPUs or their prices differ, "
            "so cost decides)");
  // One GPU type at one price: tokens per GPU decide, as before, whether or not the price was
  // typed (a saved deployment records a typed one, and null otherwise).
  b["gpu"] = "h100-sxm";
  a["usd_per_gpu_hour"] = b["usd_per_gpu_hour"] = 3.0;
  a["deployment"]["saved"]["cluster"]["usd_per_gpu_hour"] = 3.0;
  EXPECT_EQ(CompareResults(a, b).value().verdict, "B is better on output tokens/s per GPU: 2.00x");
  // Results without a cost across GPU types say so instead of judging per GPU alone.
  a["gpu"] = "b200";
  a["layouts"][0].erase("usd_per_mtok_output");
  b["layouts"][0].erase("usd_per_mtok_output");
  EXPECT_EQ(CompareResults(a, b).value().verdict,
            "B is better on output tokens/s per GPU: 2.00x (the GPUs or their prices differ and "
            "these results state no cost: weigh it apart)");
}

TEST(Compare, ATrainResultsModelRunsAreAReason) {
  // A train result whose model's published runs on its GPU sat at 0.64x the predictions.
  const nlohmann::json train = {{"command", "train"},
                                {"schema_version", kSchemaVersion},
                                {"tokens_per_s_per_gpu", 100.0},
                                {"step_s", 1.0},
                                {"time_s", 3600.0},
                                {"gpus", 8},
                                {"step_parts", nlohmann::json::array()},
                                {"measured",
                                 {{"ratio", {{"p10", 0.75}, {"p90", 1.06}}},
                                  {"on_this_gpu", true},
                                  {"this_model",
                                   {{{"gpu", "b200"},
                                     {"rows", 1},
                                     {"runs", "BF16"},
                                     {"ratio", {{"low", 0.64}, {"high", 0.64}}}}}}}}};
  const auto c = CompareResults(train, train);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const auto& reasons = c.value().reasons;
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "A: its model's runs on b200: 0.64x (BF16)"),
            reasons.end());
  // The report's "How far to trust it" says the same.
  const auto page = RenderHtmlPage(train);
  ASSERT_TRUE(page.ok()) << page.status().message();
  EXPECT_NE(page.value().find("this model's runs on b200: 0.64x (1 run, BF16)"), std::string::npos);
}

TEST(Compare, RefusesDifferentCommands) {
  nlohmann::json price = {{"command", "price"}};
  EXPECT_FALSE(CompareResults(PlanResult("a", 1, 1), price).ok());
  EXPECT_FALSE(CompareResults(nlohmann::json::object(), price).ok());
}

TEST(Compare, RefusesAnotherSchema) {
  // A plan saved before schema 3 had flat TTFT and TPOT keys: its metrics would not be found.
  nlohmann::json old = PlanResult("a", 1000, 0.040);
  old["schema_version"] = 2;
  const auto c = CompareResults(old, PlanResult("b", 1500, 0.020));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("result A has schema_version 2"), std::string::npos)
      << c.status().message();
}

}  // namespace
}  // namespace shardwise::report
