// `simulate`'s text: the run's header, latency table, throughput, goodput, utilisation, cost,
// energy, the steady state and what a closed loop depends on (text/text.h).
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <variant>

#include "cost_text.h"
#include "shardwise/common/format.h"
#include "shardwise/report/table.h"
#include "shardwise/text/text.h"

namespace shardwise::text {
namespace {

std::string Arrivals(const api::ServingReport& rep, const api::SimulateRequest& r) {
  if (const auto* closed = std::get_if<ClosedLoop>(&rep.scenario.load)) {
    return "closed loop, " + Counted(closed->clients, "client", "clients");
  }
  if (!r.workload.trace.empty()) return "trace " + r.workload.trace;
  const OpenLoop& open = std::get<OpenLoop>(rep.scenario.load);
  if (std::isinf(open.rate_per_s)) return "offline (all at t = 0)";
  return fmt::format("{} {:g} req/s",
                     open.burstiness_cv == 1.0
                         ? std::string("Poisson")
                         : fmt::format("bursty (CV {:g})", open.burstiness_cv),
                     open.rate_per_s);
}

std::string Shape(const Deployment& d) {
  auto plural = [](int64_t n, const char* what) {
    return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
  };
  const Pool& p = d.prefill();
  if (!d.disaggregated()) {
    return fmt::format("{} of {}", plural(p.Replicas(), "replica"),
                       plural(p.layout.InstanceGpus(), "GPU"));
  }
  const Pool& q = d.decode();
  if (d.same_cluster()) return fmt::format("{} prefill + {} decode GPUs", p.Gpus(), q.Gpus());
  return fmt::format("{} prefill GPUs on {}, {} decode GPUs on {}", p.Gpus(), p.cluster.name,
                     q.Gpus(), q.cluster.name);
}

std::string Latencies(const api::ServingReport& rep) {
  const SimResult& r = rep.run.result;
  Table table({"latency", "p50", "p90", "p99", "mean", "band"});
  auto row = [&](const char* name, const Samples& h, const BandSpec& spec) {
    std::string text = spec.relative > 0 ? fmt::format("±{:.0f}%", 100 * spec.relative) : "";
    if (spec.other_mean || spec.measured) {
      const Band b = LatencyBand(h.Mean(), spec);
      text = fmt::format("{} to {}", FormatSeconds(b.low), FormatSeconds(b.high));
    }
    // No sample (every request of one output token has no TPOT or ITL): nothing to show.
    if (h.Count() == 0) {
      table.AddRow({name, "-", "-", "-", "-", "(no request has a second token)"});
      return;
    }
    table.AddRow({name, FormatSeconds(h.Percentile(50)), FormatSeconds(h.Percentile(90)),
                  FormatSeconds(h.Percentile(99)), FormatSeconds(h.Mean()), text});
  };
  row("TTFT", r.ttft_s, rep.bands.ttft);
  row("TPOT", r.tpot_s, rep.bands.tpot);
  row("ITL", r.itl_s, BandSpec{});
  row("end-to-end", r.e2e_s, BandSpec{});
  return table.Render();
}

std::string Goodput(const api::ServingReport& rep) {
  const ServingRun& run = rep.run;
  if (!run.slo.Given()) return "not measured: no SLO given (`max_ttft_ms`, `max_tpot_ms`)";
  return fmt::format(
      "{:.1f}% of requests meet the SLOs ({:.0f} output tokens/s); at {} TTFT {} and TPOT {}: "
      "{}",
      100.0 * rep.GoodputRequestFraction(), rep.GoodputOutputTokensPerS(), run.slo.PercentileName(),
      FormatSeconds(run.TtftAtSlo()), FormatSeconds(run.TpotAtSlo()),
      run.MeetsSlo() ? "within the SLOs" : "the SLOs are missed");
}

// What a closed loop's numbers depend on beyond the step times (docs/commands/simulate.md).
std::string ClosedLoopNotes(const api::ServingReport& rep) {
  std::string out;
  if (const int64_t waiting = rep.ClientsBeyondBatchSlots(); waiting > 0) {
    out += fmt::format(
        "queue        {} clients for at most {} batch slots (`max_batch` per attention rank; the "
        "KV cache may hold fewer): the other {} wait, and their wait is in the TTFT\n",
        rep.BatchSlots() + waiting, rep.BatchSlots(), waiting);
  }
  if (const auto& phase = rep.run.out_of_phase) {
    out += fmt::format(
        "lockstep     fixed output lengths keep the clients in step, prefilled in waves, as\n"
        "             SGLang's measured loops run; out of phase, as vLLM's and TensorRT-LLM's "
        "drift\n"
        "             (`osl_dist` uniform `length_cv` {:g}): TTFT {}, TPOT {}; the band covers "
        "both\n",
        kOutOfPhaseOutputCv, FormatSeconds(phase->ttft_s), FormatSeconds(phase->tpot_s));
  }
  if (rep.run.steady.sized) {
    out +=
        "benchmarks   aiperf, vllm bench serve and SGLang's bench_serving measure from an idle "
        "server,\n"
        "             the clients' first burst included: `requests` N (their count) simulates "
        "that run\n";
  }
  return out;
}

std::string SteadyStateText(const SteadyState& s) {
  if (!s.sized) {
    if (s.in_system_grew) {
      return fmt::format(
          "steady state not sized: the requests given are all measured; {} were in the system at "
          "the middle arrival and {} at the last: its queue grows\n",
          s.in_system_at_middle, s.in_system_at_last);
    }
    if (!s.halves_compared) return "steady state not sized: the requests given are all measured\n";
    // The drift is against the halves' mean; the later half's mean over the earlier's reads
    // plainer (above 5/3 for TTFT, an open loop is overloaded).
    const auto ratio = [](double drift) { return (1 + drift / 2) / (1 - drift / 2); };
    return fmt::format(
        "steady state not sized: the requests given are all measured; the later half of them (in "
        "arrival order) had {:.2f}x the earlier half's mean TTFT and {:.2f}x its TPOT\n",
        ratio(s.ttft_drift), ratio(s.tpot_drift));
  }
  std::string out = fmt::format(
      "steady state {} warm-up requests excluded, {} measured; the window's halves differ by "
      "{:+.1f}% in mean TTFT and {:+.1f}% in TPOT{}\n",
      s.warmup_requests, s.measured_requests, 100 * s.ttft_drift, 100 * s.tpot_drift,
      s.converged ? "" : " (not settled: the queue still moves)");
  if (s.simulated_replicas < s.replicas) {
    out += fmt::format(
        "             {} of {} identical replicas simulated at their share of the load, rates "
        "scaled to all\n",
        s.simulated_replicas, s.replicas);
  }
  return out;
}

}  // namespace

std::string SimulateText(const api::ServingReport& rep, const api::SimulateRequest& r) {
  std::string out;
  const ServingRun& run = rep.run;
  const SimResult& res = run.result;
  const Workload one = ScenarioLengths(rep.scenario);
  out += fmt::format(
      "simulate: {} on {} ({}), {} {} ({}), {}, {}, ISL {} / OSL {}{}\n"
      "{} request{} simulated over {} ({} measured; {} iteration{}, {} preemption{}) in {} "
      "wall\n\n",
      rep.model.name, rep.cluster.name, Counted(rep.deployment.gpus(), "GPU", "GPUs"),
      rep.deployment.disaggregated() ? "deployment" : "layout", rep.deployment.ToString(),
      Shape(rep.deployment), rep.deployment.decode().perf.engine.name, Arrivals(rep, r),
      one.prompt_tokens, one.output_tokens,
      r.workload.trace.empty() ? LengthSpreadSuffix(SpreadOf(rep.scenario)) : std::string(),
      res.arrived, res.arrived == 1 ? "" : "s", FormatSeconds(res.makespan_s), res.requests,
      res.steps, res.steps == 1 ? "" : "s", res.preemptions, res.preemptions == 1 ? "" : "s",
      FormatSeconds(rep.wall_s));
  out += Latencies(rep);
  out += fmt::format(
      "\nthroughput   {:.0f} input and {:.0f} output tokens/s ({:.1f} per GPU, {:.1f} per user)\n"
      "goodput      {}\n"
      "utilization  {:.1f}% busy, MFU {:.1f}%, KV cache {:.1f}% full on average ({:.1f}% at most)\n"
      "cost         ${:.3f} per million output tokens at {}\n"
      "energy       {}\n",
      run.InputTokensPerS(), run.OutputTokensPerS(), rep.OutputTokensPerSPerGpu(),
      res.tpot_s.Mean() > 0 ? 1.0 / res.tpot_s.Mean() : 0.0, Goodput(rep), 100 * res.utilization,
      100 * res.mfu, 100 * res.kv_occupancy_mean, 100 * res.kv_occupancy_max,
      res.usd_per_mtok_output, HourlyPrice(rep.deployment),
      FormatEnergy(rep.deployment.BoardPowerW(), rep.JoulesPerOutputToken()));
  if (rep.deployment.disaggregated()) {
    out += fmt::format("KV transfer  {} per request on average over {} ({}, {})\n",
                       FormatSeconds(res.kv_transfer_s_mean), run.setup.estimate.link.name,
                       KvTransferModeName(rep.deployment.transfer()), "prefill to decode pool");
  }
  if (run.overloaded) {
    out += fmt::format(
        "overloaded   {:.3g} requests/s offered, {:.3g} served: the latencies above grow with "
        "the run's length\n",
        run.offered_requests_per_s, run.RequestsPerS());
  }
  out += SteadyStateText(run.steady);
  if (std::holds_alternative<ClosedLoop>(rep.scenario.load)) out += ClosedLoopNotes(rep);
  if (rep.bands.measured) {
    out +=
        MeasuredSpreadText(rep.deployment.decode().perf.engine, rep.cluster.gpu.name, "the bands");
  }
  return out;
}

}  // namespace shardwise::text
