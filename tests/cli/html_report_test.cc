// End-to-end: the HTML report as a user opens it. Each command writes --json and --html from
// one run; headless Chromium (Debian's chromium, installed by scripts/install-deps.sh) loads the
// page from disk with the network off, must log no console error, takes a screenshot, and dumps
// the DOM, in which every expected plot must have both axes, their labels and as many data
// marks as the JSON result has points (counted here from the JSON, not from the page).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "run_binary.h"

namespace shardwise::testing {
namespace {

constexpr const char* kChromium = "/usr/bin/chromium";

std::string TempDir() {
  char name[] = "/tmp/shardwise_html_XXXXXX";
  return mkdtemp(name) ? name : "/tmp";
}

struct Browser {
  std::string dom;
  std::string log;  // Chromium's stderr, with the page's console messages
  bool screenshot_ok = false;
};

// Loads `page` in headless Chromium: the DOM after rendering, the console log and (when
// `screenshot` is set) a PNG of the page.
Browser Open(const std::string& page, const std::string& screenshot = "") {
  const std::string dir = TempDir();
  const std::string flags =
      "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
      "--disable-background-networking --disable-component-update --disable-sync "
      "--hide-scrollbars --enable-logging=stderr --v=0 --user-data-dir=" +
      dir + "/profile ";
  Browser b;
  std::system(("timeout 90 " + std::string(kChromium) + " " + flags + "--dump-dom file://" + page +
               " >" + dir + "/dom.html 2>" + dir + "/log.txt")
                  .c_str());
  b.dom = Slurp(dir + "/dom.html");
  b.log = Slurp(dir + "/log.txt");
  if (!screenshot.empty()) {
    std::system(("timeout 90 " + std::string(kChromium) + " " + flags +
                 "--window-size=1000,3000 --screenshot=" + screenshot + " file://" + page +
                 " >/dev/null 2>>" + dir + "/log.txt")
                    .c_str());
    b.log = Slurp(dir + "/log.txt");
    struct stat st {};
    b.screenshot_ok = stat(screenshot.c_str(), &st) == 0 && st.st_size > 20'000;
  }
  return b;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// What is wrong with plot `name` in `dom` ("" when it is complete): present, both axes, two
// non-empty axis labels, `marks` data marks, and (when `curve_points` >= 0) a curve of that
// many points.
std::string CheckPlot(const std::string& dom, const std::string& name, size_t marks,
                      long curve_points = -1) {
  const size_t at = dom.find("data-plot=\"" + name + "\"");
  if (at == std::string::npos) return "plot '" + name + "' is missing";
  const std::string svg = dom.substr(at, dom.find("</svg>", at) - at);
  if (Count(svg, "class=\"axis x\"") != 1 || Count(svg, "class=\"axis y\"") != 1) {
    return "plot '" + name + "' lacks an axis";
  }
  size_t labels = 0;
  for (size_t p = svg.find("class=\"axis-label\""); p != std::string::npos;
       p = svg.find("class=\"axis-label\"", p + 1)) {
    const size_t open = svg.find('>', p), close = svg.find("</text>", p);
    labels += close > open + 1;  // non-empty text
  }
  if (labels != 2) return "plot '" + name + "' has " + std::to_string(labels) + " axis labels";
  const size_t found = Count(svg, "class=\"mark\"");
  if (found == 0) return "plot '" + name + "' is empty";
  if (found != marks) {
    return "plot '" + name + "' has " + std::to_string(found) + " marks, expected " +
           std::to_string(marks);
  }
  if (curve_points >= 0 &&
      svg.find("data-points=\"" + std::to_string(curve_points) + "\"") == std::string::npos) {
    return "plot '" + name + "' lacks its curve of " + std::to_string(curve_points) + " points";
  }
  return "";
}

// The cell of answer-table row `field` ("" when the row is missing).
std::string AnswerCell(const std::string& dom, const std::string& field) {
  const size_t table = dom.find("<table class=\"answer\">");
  if (table == std::string::npos) return "";
  const size_t row = dom.find("data-field=\"" + field + "\"", table);
  if (row == std::string::npos || row > dom.find("</table>", table)) return "";
  const size_t second = dom.find("<td>", dom.find("</td>", row));
  return dom.substr(second + 4, dom.find("</td>", second) - second - 4);
}

// What is wrong with the page's answer table ("" when complete): it comes before every plot,
// has each row, and states the operating point's TTFT and TPOT at the SLOs' percentile (in
// milliseconds to 0.1, from the JSON's "at_slo"), its verdict against each limit given, and
// its tokens per GPU, per user, $/Mtok and joules per token.
std::string CheckAnswer(const std::string& dom, const nlohmann::json& point,
                        const nlohmann::json& slo) {
  const size_t table = dom.find("<table class=\"answer\">");
  if (table == std::string::npos) return "the page has no answer table";
  if (dom.find("data-plot=") < table) return "a plot comes before the answer";
  for (const char* field : {"deployment", "why", "load", "ttft", "tpot", "tokens_per_gpu",
                            "tokens_per_user", "usd_per_mtok", "joules_per_token"}) {
    const std::string cell = AnswerCell(dom, field);
    if (cell.empty() || cell == "-") return std::string("answer row '") + field + "' is empty";
  }
  for (const auto& [field, key, limit] :
       {std::tuple{"ttft", "ttft_s", "max_ttft_s"}, std::tuple{"tpot", "tpot_s", "max_tpot_s"}}) {
    const double at_slo_s = point[key]["at_slo"].get<double>();
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f ms", 1e3 * at_slo_s);
    const std::string cell = AnswerCell(dom, field);
    if (cell.rfind(ms, 0) != 0) return std::string(field) + " reads '" + cell + "', not " + ms;
    if (slo[limit].is_number()) {
      const bool meets = at_slo_s <= slo[limit].get<double>();
      if ((cell.find("meets") != std::string::npos) != meets) {
        return std::string(field) + "'s verdict is wrong: " + cell;
      }
    }
  }
  return "";
}

// Whether the chosen ring of plot `name` sits on one of its data marks.
bool ChosenOnAMark(const std::string& dom, const std::string& name) {
  const size_t at = dom.find("data-plot=\"" + name + "\"");
  const std::string svg = dom.substr(at, dom.find("</svg>", at) - at);
  const size_t ring = svg.find("<g class=\"chosen\"><circle ");
  if (ring == std::string::npos) return false;
  const size_t begin = svg.find("cx=", ring);
  const std::string position = svg.substr(begin, svg.find(" r=", begin) - begin);
  return svg.find("class=\"mark\" " + position) != std::string::npos;
}

// Runs `args --json --html PAGE`, and opens the page; the JSON is returned in `json`.
Browser RenderCommand(const std::string& args, nlohmann::json& json,
                      const std::string& screenshot = "") {
  const std::string page = TempDir() + "/page.html";
  const RunResult r = RunShardwise(args + " --json --html " + page);
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
  json = r.exit_code == 0 ? r.Json() : nlohmann::json::object();
  return Open(page, screenshot);
}

void ExpectCleanConsole(const Browser& b) {
  EXPECT_EQ(b.log.find("CONSOLE"), std::string::npos) << b.log;
  EXPECT_EQ(b.log.find("Uncaught"), std::string::npos) << b.log;
  EXPECT_NE(b.dom.find("</html>"), std::string::npos) << "page did not render";
}

class HtmlReport : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kChromium)) {
      FAIL() << "headless Chromium is needed: run scripts/install-deps.sh (Debian 'chromium')";
    }
  }
};

TEST(HtmlReportChecker, FailsWhenAPlotIsMissingOrEmpty) {
  const std::string plot =
      "<svg data-plot=\"p\"><g class=\"axis x\"><text class=\"axis-label\">x</text></g>"
      "<g class=\"axis y\"><text class=\"axis-label\">y</text></g>"
      "<circle class=\"mark\"/><circle class=\"mark\"/></svg>";
  EXPECT_EQ(CheckPlot(plot, "p", 2), "");
  EXPECT_NE(CheckPlot(plot, "q", 2), "");  // missing
  EXPECT_NE(CheckPlot(plot, "p", 3), "");  // a point short
  std::string empty = plot;
  while (empty.find("<circle class=\"mark\"/>") != std::string::npos) {
    empty.erase(empty.find("<circle class=\"mark\"/>"), 22);
  }
  EXPECT_NE(CheckPlot(empty, "p", 2).find("empty"), std::string::npos);
  std::string unlabelled = plot;
  unlabelled.replace(unlabelled.find(">x<"), 3, "><");
  EXPECT_NE(CheckPlot(unlabelled, "p", 2), "");
}

TEST_F(HtmlReport, PlanPageHasEveryPlot) {
  nlohmann::json j;
  const std::string png = TempDir() + "/plan.png";
  const Browser b = RenderCommand("plan --nodes 2 --max-tpot-ms 50", j, png);
  ExpectCleanConsole(b);
  EXPECT_TRUE(b.screenshot_ok) << png;
  const nlohmann::json& layouts = j["layouts"];
  const size_t top = std::min<size_t>(5, layouts.size());
  // The answer is the verdict's: the disaggregated split when it wins, else the top layout.
  const bool split = j["verdict"]["winner"] == "disaggregated";
  EXPECT_EQ(CheckAnswer(b.dom, split ? j["disaggregated"]["at_load"] : layouts[0], j["slo"]), "");
  EXPECT_NE(AnswerCell(b.dom, "deployment").find(j["deployment"]["name"].get<std::string>()),
            std::string::npos);
  // The front, and each ranked layout where it was simulated; the ring on the chosen one.
  EXPECT_EQ(CheckPlot(b.dom, "pareto", j["pareto"].size() + layouts.size() + (split ? 1 : 0)), "");
  EXPECT_TRUE(ChosenOnAMark(b.dom, "pareto"));
  EXPECT_EQ(CheckPlot(b.dom, "phases-prefill", top), "");
  EXPECT_EQ(CheckPlot(b.dom, "phases-decode", top), "");
  EXPECT_EQ(CheckPlot(b.dom, "roofline", top, static_cast<long>(j["roofline"]["points"].size())),
            "");
  // The pipeline figure draws the first layout that pipelines: stages x micro-batches boxes for
  // each of two decode steps.
  nlohmann::json piped = layouts[0];
  for (const auto& l : layouts) {
    if (l["pp"].get<int>() > 1) {
      piped = l;
      break;
    }
  }
  const size_t boxes = 2 * piped["pipeline"]["stages"].get<size_t>() *
                       piped["pipeline"]["micro_batches"].get<size_t>();
  EXPECT_EQ(CheckPlot(b.dom, "pipeline", boxes), "");
  // Four rows (TP, CP, DP, PP) for each of the top layout's 16 GPUs.
  EXPECT_EQ(CheckPlot(b.dom, "cluster", 4 * 16), "");
  EXPECT_EQ(CheckPlot(b.dom, "cost", 10), "");  // 10% to 100% utilisation
  // The TPOT SLO of 50 ms is drawn at 20 tokens/s per user.
  EXPECT_NE(b.dom.find("TPOT SLO 50 ms"), std::string::npos);
}

TEST_F(HtmlReport, ExplainPage) {
  nlohmann::json j;
  const Browser b = RenderCommand("explain --nodes 2 --layout tp4pp4 --batch 64", j);
  ExpectCleanConsole(b);
  EXPECT_EQ(CheckPlot(b.dom, "phases-prefill", 1), "");
  EXPECT_EQ(CheckPlot(b.dom, "roofline", 1), "");
  // tp4pp4 at batch 64: 64 sequences per replica cut into min(4, 64) = 4 micro-batches.
  EXPECT_EQ(j["pipeline"]["micro_batches"], 4);
  EXPECT_EQ(CheckPlot(b.dom, "pipeline", 2 * 4 * 4), "");
  EXPECT_EQ(CheckPlot(b.dom, "cluster", 4 * 16), "");
}

TEST_F(HtmlReport, SimulatePageAndReportCommand) {
  nlohmann::json j;
  const std::string png = TempDir() + "/simulate.png";
  const Browser b =
      RenderCommand("simulate --requests 300 --rate 20 --max-ttft-ms 900 --max-tpot-ms 40", j, png);
  ExpectCleanConsole(b);
  EXPECT_TRUE(b.screenshot_ok);
  EXPECT_EQ(CheckAnswer(b.dom, j, j["slo"]), "");
  // Both distributions draw their SLO.
  EXPECT_NE(b.dom.find("SLO 900 ms"), std::string::npos);
  EXPECT_NE(b.dom.find("SLO 40 ms"), std::string::npos);
  EXPECT_EQ(CheckPlot(b.dom, "ttft", 3, static_cast<long>(j["ttft_s"]["cdf"].size())), "");
  EXPECT_EQ(CheckPlot(b.dom, "tpot", 3), "");
  const long series = static_cast<long>(j["kv_occupancy"]["series"].size());
  ASSERT_GT(series, 1);
  const std::string kv = b.dom.substr(b.dom.find("data-plot=\"kv\""));
  EXPECT_NE(kv.find("data-points=\"" + std::to_string(series) + "\""), std::string::npos);

  // `shardwise report` draws the same page from the saved JSON.
  const std::string dir = TempDir();
  std::ofstream(dir + "/sim.json") << j.dump();
  const RunResult r = RunShardwise("report " + dir + "/sim.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Browser again = Open(dir + "/sim.html");
  ExpectCleanConsole(again);
  EXPECT_EQ(CheckPlot(again.dom, "ttft", 3), "");
}

TEST_F(HtmlReport, PricePageShowsTheBreakEven) {
  nlohmann::json j;
  const Browser b = RenderCommand(
      "price --layout tp4 --duty-cycle 0.4 --api-usd-per-mtok-output 5 "
      "--max-ttft-ms 1000 --max-tpot-ms 40",
      j);
  ExpectCleanConsole(b);
  EXPECT_EQ(CheckAnswer(b.dom, j["operating_point"]["point"], j["slo"]), "");
  EXPECT_EQ(CheckPlot(b.dom, "cost", 10), "");
  EXPECT_NE(b.dom.find("API $5/Mtok output"), std::string::npos);
}

TEST_F(HtmlReport, RecommendPageOpensWithTheAnswer) {
  nlohmann::json j;
  const Browser b = RenderCommand(
      "recommend --model llama-3.1-8b --rate 10 --max-ttft-ms 500 --max-tpot-ms 30", j);
  ExpectCleanConsole(b);
  EXPECT_EQ(CheckAnswer(b.dom, j["recommendation"]["at_load"], j["slo"]), "");
}

// A saved train result's page had tables only: no answer and no figure. It now opens with the
// answer (wall clock, cost) and draws the step, the memory per GPU and the cluster sizes tried.
TEST_F(HtmlReport, TrainPageOpensWithTheAnswerAndDrawsTheStepMemoryAndSizes) {
  const std::string dir = TempDir();
  const RunResult r = RunShardwise("train --model llama-3.1-70b --nodes 8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ofstream(dir + "/train.json") << r.out;
  ASSERT_EQ(RunShardwise("report " + dir + "/train.json --html " + dir + "/train.html").exit_code,
            0);
  const Browser b = Open(dir + "/train.html");
  ExpectCleanConsole(b);
  const nlohmann::json j = r.Json();
  // One bar each: the step's parts add up to the step; the memory's to the memory per GPU.
  EXPECT_EQ(CheckPlot(b.dom, "step", 1), "");
  double parts = 0;
  for (const auto& p : j["step_parts"]) parts += p["time_s"].get<double>();
  EXPECT_NEAR(parts, j["step_s"].get<double>(), 1e-6 * parts);
  EXPECT_NE(b.dom.find(fmt::format("data-total=\"{:g}\"", parts)), std::string::npos);
  EXPECT_EQ(CheckPlot(b.dom, "memory", 1), "");
  const auto& m = j["memory"];
  const double gb = (m["weights_bytes"].get<double>() + m["grads_bytes"].get<double>() +
                     m["optimizer_bytes"].get<double>() + m["activations_bytes"].get<double>() +
                     m["buffers_bytes"].get<double>()) /
                    1e9;
  EXPECT_NEAR(gb, j["memory_per_gpu_bytes"].get<double>() / 1e9, 0.01);
  EXPECT_NE(b.dom.find(fmt::format("data-total=\"{:g}\"", gb)), std::string::npos);
  EXPECT_EQ(CheckPlot(b.dom, "sizes", j["sizes"].size()), "");
  // The answer comes first; its wall clock in days by hand.
  EXPECT_LT(b.dom.find("<table class=\"answer\">"), b.dom.find("data-plot="));
  EXPECT_EQ(
      AnswerCell(b.dom, "wall_clock")
          .find(fmt::format("{:.1f} d for 300.00B tokens", j["time_s"].get<double>() / 86400)),
      0u)
      << AnswerCell(b.dom, "wall_clock");
  EXPECT_NE(AnswerCell(b.dom, "layout").find(j["layout"].get<std::string>()), std::string::npos);
  // train --html writes the same page itself.
  const RunResult direct =
      RunShardwise("train --model llama-3.1-70b --nodes 8 --html " + dir + "/direct.html");
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  const std::string page = Slurp(dir + "/direct.html");
  for (const char* plot : {"step", "memory", "sizes"}) {
    EXPECT_NE(page.find(std::string("data-plot=\"") + plot + "\""), std::string::npos) << plot;
  }
}

TEST(HtmlReportChecker, FailsWhenTheAnswerIsMissingOrWrong) {
  const nlohmann::json slo = {{"max_ttft_s", 0.5}, {"max_tpot_s", nullptr}};
  const nlohmann::json point = {{"ttft_s", {{"at_slo", 0.25}}}, {"tpot_s", {{"at_slo", 0.02}}}};
  std::string rows;
  for (const char* f : {"deployment", "why", "load", "tokens_per_gpu", "tokens_per_user",
                        "usd_per_mtok", "joules_per_token"}) {
    rows += std::string("<tr data-field=\"") + f + "\"><td>n</td><td>1</td></tr>";
  }
  const std::string good = "<table class=\"answer\">" + rows +
                           "<tr data-field=\"ttft\"><td>n</td><td>250.0 ms (meets)</td></tr>"
                           "<tr data-field=\"tpot\"><td>n</td><td>20.0 ms</td></tr></table>";
  EXPECT_EQ(CheckAnswer(good, point, slo), "");
  EXPECT_NE(CheckAnswer("<p>no table</p>", point, slo), "");
  std::string wrong = good;
  wrong.replace(wrong.find("250.0"), 5, "251.0");
  EXPECT_NE(CheckAnswer(wrong, point, slo), "");
  std::string verdict = good;
  verdict.replace(verdict.find("(meets)"), 7, "(misses)");
  EXPECT_NE(CheckAnswer(verdict, point, slo), "");
  EXPECT_NE(CheckAnswer("<svg data-plot=\"x\"></svg>" + good, point, slo), "");
}

// The rows of the table that follows `heading` in `page`.
size_t TableRows(const std::string& page, const std::string& heading) {
  const size_t begin = page.find(heading);
  if (begin == std::string::npos) return 0;
  const std::string table = page.substr(begin, page.find("</table>", begin) - begin);
  size_t rows = 0;
  for (size_t at = table.find("<tr"); at != std::string::npos; at = table.find("<tr", at + 1)) {
    ++rows;
  }
  return rows;
}

TEST(HtmlReportFiles, PlanPageLeadsWithTheAnswerAndTheRanking) {
  // The page opened with a raw key/value dump; it now opens with the verdict's deployment and
  // why, then the ranked layouts, and keeps the settings in a collapsed section below.
  const std::string dir = TempDir();
  const RunResult j = RunShardwise("plan --top 3 --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  ASSERT_EQ(RunShardwise("plan --top 3 --html " + dir + "/plan.html").exit_code, 0);
  const std::string page = Slurp(dir + "/plan.html");
  const size_t answer = page.find("<h2>Answer</h2>");
  ASSERT_NE(answer, std::string::npos);
  EXPECT_NE(AnswerCell(page, "deployment")
                .find("<b>" + j.Json()["deployment"]["name"].get<std::string>() + "</b>"),
            std::string::npos);
  EXPECT_LT(answer, page.find("<h2>Inputs</h2>"));
  EXPECT_EQ(TableRows(page, "<h2>Ranked layouts</h2>"), j.Json()["layouts"].size() + 1);
}

TEST(HtmlReportFiles, RecommendPageLeadsWithTheAnswer) {
  // recommend --html was refused after the search ("cannot draw a 'recommend' result").
  const std::string dir = TempDir();
  const std::string question =
      "recommend --model llama-3.1-8b --rate 10 --max-ttft-ms 500 --max-tpot-ms 30";
  const RunResult j = RunShardwise(question + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const RunResult r = RunShardwise(question + " --html " + dir + "/rec.html");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string page = Slurp(dir + "/rec.html");
  const std::string answer = j.Json()["recommendation"]["layout"];
  EXPECT_NE(page.find("<h2>Answer</h2>"), std::string::npos);
  EXPECT_EQ(AnswerCell(page, "deployment").find("<b>" + answer + "</b>"), 0u) << answer;
  // The candidates' table: one row per candidate, plus the header.
  EXPECT_EQ(TableRows(page, "<h2>Candidates simulated</h2>"), j.Json()["candidates"].size() + 1);
}

TEST(HtmlReportFiles, SimulatePagesWithoutAnSloDraw) {
  // simulate with no SLO writes "meets_slo": null; the page read it as a boolean and every such
  // run (the default, a closed loop, a trace, a split) was refused as malformed.
  const std::string dir = TempDir();
  for (const std::string& question :
       {std::string("simulate --requests 200"),
        std::string("simulate --concurrency 8 --requests 80"),
        std::string("simulate --model llama-3.1-70b --nodes 2 --prefill-layout tp4 --decode-layout "
                    "tp8 --requests 100")}) {
    const RunResult j = RunShardwise(question + " --json");
    ASSERT_EQ(j.exit_code, 0) << j.err;
    ASSERT_TRUE(j.Json()["meets_slo"].is_null()) << question;
    const RunResult r = RunShardwise(question + " --html " + dir + "/s.html --force");
    ASSERT_EQ(r.exit_code, 0) << question << ": " << r.err;
    const std::string page = Slurp(dir + "/s.html");
    EXPECT_NE(page.find("<h2>Answer</h2>"), std::string::npos) << question;
    EXPECT_NE(AnswerCell(page, "why").find("simulated over the requests given"), std::string::npos)
        << question;
  }
}

// A train result edited by hand to a throughput no run has is refused, not drawn.
TEST(HtmlReportFiles, AnEditedTrainResultIsRefused) {
  const std::string dir = TempDir();
  nlohmann::json j = RunShardwise("train --no-sizes --json").Json();
  j["tokens_per_s_per_gpu"] = -5;
  std::ofstream(dir + "/edited.json") << j.dump();
  ExpectOneLineError(RunShardwise("report " + dir + "/edited.json --html " + dir + "/e.html"),
                     "\"tokens_per_s_per_gpu\" is -5, not a positive number");
  EXPECT_FALSE(std::ifstream(dir + "/e.html").good());
}

TEST(HtmlReportFiles, NeverOverwritesAForeignFile) {
  const std::string dir = TempDir();
  std::ofstream(dir + "/notes.html") << "<html>my notes</html>";
  ExpectOneLineError(RunShardwise("plan --top 1 --html " + dir + "/notes.html"), "--force");
  EXPECT_EQ(Slurp(dir + "/notes.html"), "<html>my notes</html>");
  // Its own page may be replaced; --force replaces anything.
  EXPECT_EQ(RunShardwise("plan --top 1 --html " + dir + "/plan.html").exit_code, 0);
  EXPECT_EQ(RunShardwise("plan --top 1 --html " + dir + "/plan.html").exit_code, 0);
  EXPECT_EQ(RunShardwise("plan --top 1 --html " + dir + "/notes.html --force").exit_code, 0);
  ExpectOneLineError(RunShardwise("report " + dir + "/missing.json"), "missing.json");
  std::ofstream(dir + "/other.json") << "{\"a\": 1}";
  ExpectOneLineError(RunShardwise("report " + dir + "/other.json"), "not a shardwise result");
  // A result cut short or edited by hand: one line, exit 2 (was "internal error", exit 3).
  std::ofstream(dir + "/cut.json") << R"({"command": "plan", "layouts": [{"layout": 1}]})";
  ExpectOneLineError(RunShardwise("report " + dir + "/cut.json"), "incomplete or malformed");
  std::ofstream(dir + "/empty.json") << R"({"command": "simulate"})";
  ExpectOneLineError(RunShardwise("report " + dir + "/empty.json"), "no ttft_s");
}

}  // namespace
}  // namespace shardwise::testing
