// Benchmark commands, as each tool documents its options:
// - AIPerf 0.3 (ai-dynamo/aiperf, "aiperf profile" CLI options): --synthetic-input-tokens-mean/
//   -stddev and --output-tokens-mean/-stddev draw normal lengths; --concurrency or
//   --request-rate; --request-count and --warmup-request-count; --extra-inputs for request
//   fields (ignore_eos).
// - vLLM 0.10.1 "vllm bench serve": the random dataset draws each length uniformly in
//   [L (1 - r), L (1 + r)] for --random-range-ratio r (both lengths alike); --max-concurrency,
//   --request-rate and --burstiness (gamma gaps, 1 = Poisson); --ignore-eos; --save-result. No
//   warm-up option: a first, unsaved run warms the server.
// - SGLang 0.5.0 "python -m sglang.bench_serving": the random dataset draws each length uniformly
//   in [rho L, L] for --random-range-ratio rho; --max-concurrency, --request-rate,
//   --warmup-requests; EOS ignored unless --disable-ignore-eos.
#include "shardwise/emit/benchmark.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

#include "engine_args.h"
#include "shardwise/common/format.h"
#include "shardwise/common/suggest.h"

namespace shardwise::emit {
namespace {

struct ToolInfo {
  BenchmarkTool tool;
  std::string_view name;
  std::string_view version;
};

constexpr std::array<ToolInfo, 3> kTools = {{
    {BenchmarkTool::kAiperf, "aiperf", "AIPerf 0.3 ('aiperf profile')"},
    {BenchmarkTool::kVllm, "vllm", "vLLM 0.10.1 ('vllm bench serve')"},
    {BenchmarkTool::kSglang, "sglang", "SGLang 0.5.0 ('python -m sglang.bench_serving')"},
}};

const ToolInfo& Info(BenchmarkTool tool) {
  for (const ToolInfo& t : kTools) {
    if (t.tool == tool) return t;
  }
  return kTools[0];
}

// A uniform length of CV c spans mean x (1 +- sqrt(3) c): a standard deviation of
// width / sqrt(12).
const double kSqrt3 = std::sqrt(3.0);

// The one uniform spread a tool draws both lengths with: the prompt's, else the output's.
const BenchmarkLength& Spread(const BenchmarkInputs& in) {
  return in.input.distribution != "fixed" ? in.input : in.output;
}

// What the tool cannot draw as the simulation did, as comments.
std::string LengthNotes(BenchmarkTool tool, const BenchmarkInputs& in) {
  std::string notes;
  const auto shape = [&](const BenchmarkLength& l, const char* which) {
    if (l.distribution == "fixed") return;
    const bool tool_uniform = tool != BenchmarkTool::kAiperf;
    if (tool_uniform && l.distribution == "uniform") return;
    notes += fmt::format(
        "# The simulation drew {} lengths {} (CV {:g}); {} draws them {} with the same mean and "
        "spread.\n",
        which, l.distribution, l.cv, Info(tool).name, tool_uniform ? "uniformly" : "normally");
  };
  shape(in.input, "prompt");
  shape(in.output, "output");
  if (tool != BenchmarkTool::kAiperf &&
      (in.input.distribution != in.output.distribution || in.input.cv != in.output.cv)) {
    notes += fmt::format(
        "# {} spreads prompt and output lengths alike; the {}'s spread is used for both.\n",
        Info(tool).name, in.input.distribution != "fixed" ? "prompt" : "output");
  }
  if (!in.concurrency && in.burstiness != 1 && tool != BenchmarkTool::kVllm) {
    notes += fmt::format("# The simulation's arrivals were bursty (CV {:g}); {} sends Poisson.\n",
                         in.burstiness, Info(tool).name);
  }
  return notes;
}

std::string Rate(double rate_per_s) {
  return std::isinf(rate_per_s) ? "inf" : fmt::format("{:g}", rate_per_s);
}

std::vector<std::string> Aiperf(const BenchmarkInputs& in) {
  const auto stddev = [](const BenchmarkLength& l) {
    return l.distribution == "fixed" ? 0.0 : l.cv * static_cast<double>(l.mean);
  };
  std::vector<std::string> a = {
      "--model " + in.model,
      fmt::format("--url http://{}:{}", in.host, in.port),
      "--endpoint-type completions",
      "--streaming",
      fmt::format("--synthetic-input-tokens-mean {}", in.input.mean),
      fmt::format("--synthetic-input-tokens-stddev {:g}", std::round(stddev(in.input))),
      fmt::format("--output-tokens-mean {}", in.output.mean),
      fmt::format("--output-tokens-stddev {:g}", std::round(stddev(in.output))),
      "--extra-inputs ignore_eos:true"};
  // Offline: every request in flight at once.
  if (in.concurrency || std::isinf(in.rate_per_s)) {
    a.push_back(fmt::format("--concurrency {}", in.concurrency.value_or(in.requests)));
  } else {
    a.push_back("--request-rate " + Rate(in.rate_per_s));
  }
  a.push_back(fmt::format("--request-count {}", in.requests));
  if (in.warmup_requests > 0) {
    a.push_back(fmt::format("--warmup-request-count {}", in.warmup_requests));
  }
  a.push_back(fmt::format("--random-seed {}", in.seed));
  return a;
}

// `seed` draws the prompts: the warm-up's must differ from the measured run's, or vLLM's
// prefix cache (on by default) serves the measured run's first prompts from the warm-up's.
std::vector<std::string> Vllm(const BenchmarkInputs& in, int64_t prompts, bool save,
                              uint64_t seed) {
  const BenchmarkLength& spread = Spread(in);
  const double ratio = spread.distribution == "fixed" ? 0.0 : kSqrt3 * spread.cv;
  std::vector<std::string> a = {"--backend vllm",
                                fmt::format("--base-url http://{}:{}", in.host, in.port),
                                "--endpoint /v1/completions",
                                "--model " + in.model,
                                "--dataset-name random",
                                fmt::format("--random-input-len {}", in.input.mean),
                                fmt::format("--random-output-len {}", in.output.mean),
                                fmt::format("--random-range-ratio {:.4g}", ratio),
                                fmt::format("--num-prompts {}", prompts),
                                "--ignore-eos"};
  if (in.concurrency) {
    a.push_back(fmt::format("--max-concurrency {}", *in.concurrency));
  } else {
    a.push_back("--request-rate " + Rate(in.rate_per_s));
    if (in.burstiness != 1)
      a.push_back(fmt::format("--burstiness {:g}", 1 / (in.burstiness * in.burstiness)));
  }
  a.push_back(fmt::format("--seed {}", seed));
  if (save) {
    a.push_back("--percentile-metrics ttft,tpot,itl,e2el");
    a.push_back("--metric-percentiles 50,90,99");
    a.push_back("--save-result");
    a.push_back("--result-filename shardwise_vllm_bench.json");
  }
  return a;
}

std::vector<std::string> Sglang(const BenchmarkInputs& in) {
  // Uniform in [rho L', L'] with mean L and CV c: rho = (1 - sqrt(3) c) / (1 + sqrt(3) c),
  // L' = 2 L / (1 + rho).
  const BenchmarkLength& spread = Spread(in);
  const double s = spread.distribution == "fixed" ? 0.0 : kSqrt3 * spread.cv;
  const double rho = (1 - s) / (1 + s);
  const auto top = [&](int64_t mean) {
    return static_cast<int64_t>(std::llround(2.0 * static_cast<double>(mean) / (1 + rho)));
  };
  std::vector<std::string> a = {"--backend sglang-oai",
                                "--host " + in.host,
                                fmt::format("--port {}", in.port),
                                "--model " + in.model,
                                "--dataset-name random",
                                fmt::format("--random-input-len {}", top(in.input.mean)),
                                fmt::format("--random-output-len {}", top(in.output.mean)),
                                fmt::format("--random-range-ratio {:.4g}", rho),
                                fmt::format("--num-prompts {}", in.requests)};
  if (in.concurrency) a.push_back(fmt::format("--max-concurrency {}", *in.concurrency));
  if (!in.concurrency) a.push_back("--request-rate " + Rate(in.rate_per_s));
  if (in.warmup_requests > 0) a.push_back(fmt::format("--warmup-requests {}", in.warmup_requests));
  a.push_back(fmt::format("--seed {}", in.seed));
  a.push_back("--output-file shardwise_sglang_bench.jsonl");
  return a;
}

Status Check(BenchmarkTool tool, const BenchmarkInputs& in) {
  if (in.requests < 1 || in.warmup_requests < 0) {
    return Error("a benchmark needs at least one measured request");
  }
  if (in.input.mean < 1 || in.output.mean < 1) {
    return Error("a benchmark needs prompts and outputs of at least one token");
  }
  if (in.concurrency && *in.concurrency < 1)
    return Error("a closed loop needs at least one client");
  // A uniform length reaches CV 1/sqrt(3) only from zero; the tools need positive lengths.
  if (tool != BenchmarkTool::kAiperf && kSqrt3 * Spread(in).cv >= 1 &&
      Spread(in).distribution != "fixed") {
    return FieldError("length_cv", fmt::format("{} draws uniform lengths, whose `length_cv` stays "
                                               "below {:.3f}; use aiperf or a smaller spread",
                                               Info(tool).name, 1 / kSqrt3));
  }
  return Status();
}

// The steady state's figures beside the run's: the measured requests start from an idle server
// (the warm-up finishes first), so a closed loop's first burst of clients is measured too.
std::string SteadyStateLine(const BenchmarkInputs& in) {
  const std::string_view state = in.steady_state_settled
                                     ? "at the steady state the answer states"
                                     : "the answer states, over a window that had not settled";
  if (in.too_large_to_simulate) {
    return fmt::format(
        "# These are {} figures: a run of this many requests is too large to simulate whole, "
        "so what\n# the tool measures from an idle server{} is not in them.\n",
        in.steady_state_settled ? "the steady state's" : "the unsettled window's",
        in.concurrency ? " (the clients' first burst)" : "");
  }
  if (!in.steady_state) return "";
  const BenchmarkPrediction& s = *in.steady_state;
  return fmt::format(
      "# The measured requests start from an idle server{}; {}:\n# TTFT "
      "p50 {:.1f} ms, p99 {:.1f} ms; TPOT p50 {:.2f} ms, p99 {:.2f} ms.\n",
      in.concurrency ? ", the clients' first burst included" : "", state, s.ttft_p50_ms,
      s.ttft_p99_ms, s.tpot_p50_ms, s.tpot_p99_ms);
}

std::string Header(BenchmarkTool tool, const BenchmarkInputs& in) {
  const BenchmarkPrediction& p = in.predicted;
  const std::string load =
      in.concurrency ? "a closed loop of " + Counted(*in.concurrency, "client", "clients")
      : std::isinf(in.rate_per_s)
          ? std::string("every request at once (offline)")
          : fmt::format(
                "{:g} requests/s{}", in.rate_per_s,
                in.burstiness == 1 ? " (Poisson)" : fmt::format(" (gap CV {:g})", in.burstiness));
  return fmt::format(
      "#!/usr/bin/env bash\n"
      "# Written by 'shardwise --emit-benchmark {}': {} for {}, against the server at {}:{}.\n"
      "# Workload: prompts of {} tokens ({}), outputs of {} ({}), {}; {} warm-up requests, then "
      "{} measured.\n"
      "# shardwise predicts over the measured requests: TTFT p50 {:.1f} ms, p99 {:.1f} ms; TPOT "
      "p50 {:.2f} ms, p99 {:.2f} ms;\n# {:.2f} requests/s, {:.0f} output tokens/s.\n{}"
      "set -euo pipefail\n",
      Info(tool).name, Info(tool).version, in.model, in.host, in.port, in.input.mean,
      in.input.distribution, in.output.mean, in.output.distribution, load, in.warmup_requests,
      in.requests, p.ttft_p50_ms, p.ttft_p99_ms, p.tpot_p50_ms, p.tpot_p99_ms, p.requests_per_s,
      p.output_tokens_per_s, SteadyStateLine(in));
}

}  // namespace

StatusOr<BenchmarkTool> ParseBenchmarkTool(std::string_view name) {
  std::vector<std::string> names;
  for (const ToolInfo& t : kTools) {
    if (t.name == name) return t.tool;
    names.emplace_back(t.name);
  }
  return Error(UnknownNameMessage("benchmark tool", name, names, "use aiperf, vllm or sglang"));
}

std::string_view BenchmarkToolName(BenchmarkTool tool) { return Info(tool).name; }
std::string_view BenchmarkToolVersion(BenchmarkTool tool) { return Info(tool).version; }
std::string BenchmarkFileName(BenchmarkTool tool) {
  return fmt::format("bench_{}.sh", Info(tool).name);
}

StatusOr<LaunchFile> MakeBenchmark(BenchmarkTool tool, const BenchmarkInputs& in) {
  SW_RETURN_IF_ERROR(Check(tool, in));
  std::string text = Header(tool, in) + LengthNotes(tool, in);
  switch (tool) {
    case BenchmarkTool::kAiperf:
      text += internal::Command("aiperf profile", Aiperf(in));
      break;
    case BenchmarkTool::kVllm:
      if (in.warmup_requests > 0) {
        text +=
            "# Warm-up (not saved): the server's caches and graphs settle, on prompts of another "
            "seed than the measured run's.\n";
        text +=
            internal::Command("vllm bench serve", Vllm(in, in.warmup_requests, false, in.seed + 1));
      }
      text += internal::Command("vllm bench serve", Vllm(in, in.requests, true, in.seed));
      break;
    case BenchmarkTool::kSglang:
      text += internal::Command("python -m sglang.bench_serving", Sglang(in));
      break;
  }
  return LaunchFile{BenchmarkFileName(tool), text};
}

}  // namespace shardwise::emit
