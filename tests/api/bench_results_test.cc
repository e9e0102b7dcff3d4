// The benchmark result readers calibrate uses, on files written by hand in each tool's format:
// vLLM's --save-result JSON (benchmarks/serve.py field names), SGLang bench_serving's JSONL (the
// same names, Python's Infinity for an unpaced rate), AIPerf's profile export (metrics by tag
// with unit and avg; the load under input_config.loadgen). Expected means are the totals over
// `completed`, computed here by hand.
#include "shardwise/api/bench_results.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>

namespace shardwise::api::bench_results_test {
namespace {

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(BenchResults, VllmSaveResult) {
  const std::string path = Write("vllm.json", R"({
    "date": "20251126-101500", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-70B",
    "num_prompts": 640, "request_rate": "inf", "burstiness": 1.0, "max_concurrency": 64,
    "duration": 120.5, "completed": 640, "total_input_tokens": 1310720,
    "total_output_tokens": 163840, "request_throughput": 5.3, "output_throughput": 1359.7,
    "mean_ttft_ms": 412.5, "median_ttft_ms": 390.1, "p99_ttft_ms": 900.0,
    "mean_tpot_ms": 38.25, "median_tpot_ms": 38.0, "p99_tpot_ms": 45.0})");
  auto runs = ReadBenchmarkResults(path);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 1u);
  const BenchmarkRun& r = (*runs)[0];
  EXPECT_EQ(r.format, "vllm");
  EXPECT_EQ(r.model_id, "meta-llama/Llama-3.1-70B");
  EXPECT_EQ(r.concurrency, 64);
  EXPECT_FALSE(r.rate_per_s.has_value());
  EXPECT_DOUBLE_EQ(r.input_tokens, 2048);  // 1,310,720 / 640
  EXPECT_DOUBLE_EQ(r.output_tokens, 256);  // 163,840 / 640
  EXPECT_DOUBLE_EQ(r.mean_ttft_ms, 412.5);
  EXPECT_DOUBLE_EQ(r.mean_tpot_ms, 38.25);
  EXPECT_EQ(r.LoadName(), "concurrency 64");
}

TEST(BenchResults, SglangJsonlOneRunPerLine) {
  const std::string path = Write(
      "sglang.jsonl",
      R"({"backend": "sglang", "request_rate": Infinity, "max_concurrency": 16, "completed": 100, "total_input_tokens": 100000, "total_output_tokens": 50000, "mean_ttft_ms": 120.0, "mean_tpot_ms": 11.5, "output_throughput": NaN}
{"backend": "sglang", "request_rate": 4.5, "max_concurrency": null, "burstiness": 2.0, "completed": 200, "total_input_tokens": 200000, "total_output_tokens": 100000, "mean_ttft_ms": 80.0, "mean_tpot_ms": 9.0}
)");
  auto runs = ReadBenchmarkResults(path);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].format, "sglang");
  EXPECT_EQ((*runs)[0].concurrency, 16);
  EXPECT_DOUBLE_EQ((*runs)[0].output_tokens, 500);
  EXPECT_EQ((*runs)[0].output_tokens_per_s, 0);  // NaN: not recorded
  EXPECT_FALSE((*runs)[1].concurrency.has_value());
  EXPECT_DOUBLE_EQ(*(*runs)[1].rate_per_s, 4.5);
  EXPECT_DOUBLE_EQ((*runs)[1].burstiness, 2.0);
  EXPECT_NE((*runs)[1].file.find(":2"), std::string::npos);
}

TEST(BenchResults, AiperfProfileExport) {
  const std::string path = Write("aiperf.json", R"({
    "records": {
      "time_to_first_token": {"tag": "time_to_first_token", "unit": "ns", "avg": 250000000.0},
      "inter_token_latency": {"tag": "inter_token_latency", "unit": "ms", "avg": 21.5},
      "input_sequence_length": {"unit": "tokens", "avg": 1000.0},
      "output_sequence_length": {"unit": "tokens", "avg": 500.0},
      "request_count": {"unit": "requests", "avg": 320}
    },
    "input_config": {"endpoint": {"model_names": ["Qwen/Qwen3-32B"]},
                     "loadgen": {"concurrency": 32}}})");
  auto runs = ReadBenchmarkResults(path);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  const BenchmarkRun& r = (*runs)[0];
  EXPECT_EQ(r.format, "aiperf");
  EXPECT_EQ(r.model_id, "Qwen/Qwen3-32B");
  EXPECT_EQ(r.concurrency, 32);
  EXPECT_DOUBLE_EQ(r.mean_ttft_ms, 250);  // 250,000,000 ns
  EXPECT_DOUBLE_EQ(r.mean_tpot_ms, 21.5);
  EXPECT_DOUBLE_EQ(r.input_tokens, 1000);
  EXPECT_EQ(r.completed, 320);
}

void ExpectError(const std::string& name, const std::string& text, const std::string& what) {
  auto runs = ReadBenchmarkResults(Write(name, text));
  ASSERT_FALSE(runs.ok()) << name;
  EXPECT_NE(runs.status().message().find(what), std::string::npos) << runs.status().message();
  EXPECT_EQ(runs.status().message().find('\n'), std::string::npos);
}

TEST(BenchResults, BadFilesAreOneLine) {
  ExpectError("both.json",
              R"({"request_rate": 5, "max_concurrency": 8, "completed": 10,
                  "total_input_tokens": 10, "total_output_tokens": 10, "mean_ttft_ms": 1,
                  "mean_tpot_ms": 1})",
              "closed loops");
  ExpectError("no_tpot.json",
              R"({"request_rate": "inf", "max_concurrency": 8, "completed": 10,
                  "total_input_tokens": 10, "total_output_tokens": 10, "mean_ttft_ms": 1})",
              "mean_tpot_ms");
  ExpectError("config.json", R"({"hidden_size": 4096})", "not a benchmark result");
  // A pretty-printed JSON document of another kind was read as JSONL: "config.json:1: not valid
  // JSON". A NaN mean (Python's) read as "required key missing".
  ExpectError("pretty.json", "{\n  \"command\": \"recommend\"\n}\n", "not a benchmark result");
  ExpectError("nan.json",
              R"({"request_rate": "inf", "max_concurrency": 8, "completed": 10,
                  "total_input_tokens": 10, "total_output_tokens": 10, "mean_ttft_ms": 1,
                  "mean_tpot_ms": NaN})",
              "mean_tpot_ms is NaN");
  ExpectError("empty.jsonl", "\n\n", "holds no benchmark results");
  ExpectError("aiperf_noload.json",
              R"({"time_to_first_token": {"unit": "ms", "avg": 5},
                  "inter_token_latency": {"unit": "ms", "avg": 5},
                  "input_sequence_length": {"avg": 5}, "output_sequence_length": {"avg": 5}})",
              "neither a concurrency nor a request_rate");
  ExpectError("aiperf_unit.json",
              R"({"time_to_first_token": {"unit": "fortnights", "avg": 5},
                  "inter_token_latency": {"unit": "ms", "avg": 5},
                  "input_sequence_length": {"avg": 5}, "output_sequence_length": {"avg": 5},
                  "input_config": {"loadgen": {"concurrency": 4}}})",
              "fortnights");
  // A mean no run measures (1e308 ms between tokens; over an hour to the first token) is
  // refused, not fitted.
  ExpectError("huge.json",
              R"({"request_rate": "inf", "max_concurrency": 8, "completed": 10,
                  "total_input_tokens": 10, "total_output_tokens": 10, "mean_ttft_ms": 1,
                  "mean_tpot_ms": 1e308})",
              "a mean TPOT of 1e+308 ms is not a measured one");
  ExpectError(
      "hours.jsonl",
      R"({"request_rate": "inf", "max_concurrency": 8, "completed": 10, "total_input_tokens": 10, "total_output_tokens": 10, "mean_ttft_ms": 4e6, "mean_tpot_ms": 1})",
      "a mean TTFT of 4e+06 ms is not a measured one (it must be above 0 and at most "
      "3.6e+06 ms)");
}

}  // namespace
}  // namespace shardwise::api::bench_results_test
