// `shardwise price` as text: the operating point, the price per million tokens at each
// utilisation, break-even against an API and the sizing for a demand (text/text.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "shardwise/common/format.h"
#include "shardwise/report/table.h"
#include "shardwise/text/text.h"

namespace shardwise::text {
namespace {

std::string PointLine(const api::PriceReport& rep) {
  const OperatingPoint& p = rep.point;
  std::string how;
  switch (rep.priced_at) {
    case api::PricedAt::kLoad:
      how = "at the load given";
      // SLOs given beside the load (or saved with a replayed deployment) are judged, not priced
      // past in silence.
      if (std::isfinite(rep.slo.max_ttft_s) || std::isfinite(rep.slo.max_tpot_s)) {
        how += p.meets_slo ? " (within the SLOs)" : " (where it misses the SLOs)";
      }
      break;
    case api::PricedAt::kMostWithinSlo: {
      // The limits given (an SLO not given is no limit, not "<= inf s").
      std::string limits;
      for (const auto& [name, limit] :
           {std::pair{"TTFT", rep.slo.max_ttft_s}, std::pair{"TPOT", rep.slo.max_tpot_s}}) {
        if (!std::isfinite(limit)) continue;
        limits += fmt::format("{}{} {} <= {}", limits.empty() ? "" : ", ", rep.slo.PercentileName(),
                              name, FormatSeconds(limit));
      }
      how = fmt::format(
          "the most closed-loop clients within the SLOs ({}; requests arriving at random at the "
          "same rate queue longer: price --rate R, or recommend, weighs Poisson arrivals)",
          limits);
      break;
    }
    case api::PricedAt::kBestBatch:
      how = "its best batch, as plan ranks it (give SLOs or a load to price another point)";
      break;
  }
  // The bill is spread over the tokens billed: the load offered where the deployment keeps up,
  // whose simulated window served a little more or less by its arrivals' chance.
  const std::string billed =
      std::abs(p.billed_output_tokens_per_s - p.output_tokens_per_s) >
              1e-9 * std::max(1.0, p.output_tokens_per_s)
          ? fmt::format(" billed (the load offered; the simulated window served {:.0f})",
                        p.output_tokens_per_s)
          : "";
  return fmt::format(
      "operating point: {:.0f} requests in flight, {}; {} TTFT {}, TPOT {} ({:.1f} tokens/s per "
      "user), {:.0f} output tokens/s{}\n",
      p.concurrency, how, rep.slo.PercentileName(), FormatSeconds(p.ttft.at_slo_s),
      FormatSeconds(p.tpot.at_slo_s), p.output_tokens_per_s_per_user, p.billed_output_tokens_per_s,
      billed);
}

std::string BreakEvenLines(const api::PriceReport& rep) {
  std::string out;
  const BreakEven& b = rep.break_even;
  auto verdict = [&](const std::string& what, double u) {
    return u <= 1.0 ? fmt::format("break-even {}: {:.1f}% utilisation of the busy hours\n", what,
                                  100 * u)
                    : fmt::format(
                          "break-even {}: never (needs {:.0f}% utilisation); the API is "
                          "cheaper\n",
                          what, 100 * u);
  };
  if (b.input) {
    out += verdict(
        fmt::format("against ${:g}/Mtok input (its input split)", *rep.api_usd_per_mtok_input),
        *b.input);
  }
  if (b.output) {
    out += verdict(
        fmt::format("against ${:g}/Mtok output (its output split)", *rep.api_usd_per_mtok_output),
        *b.output);
  }
  if (b.bill) {
    out += verdict("of the whole bill against the API's charge for the same tokens", *b.bill);
  }
  return out;
}

}  // namespace

std::string PriceText(const api::PriceReport& rep) {
  const Deployment& d = rep.deployment;
  std::string out;
  out +=
      fmt::format("price: {} on {}, {} ({}), ISL {} / OSL {}{}, ${:.2f} per hour\n", rep.model.name,
                  rep.cluster.name, d.ToString(), Counted(d.gpus(), "GPU", "GPUs"), rep.saved.isl,
                  rep.saved.osl, LengthSpreadSuffix(rep.load.lengths), rep.usd_per_hour);
  out += PointLine(rep);
  out += fmt::format(
      "=> ${:.4f} per million output tokens (the whole bill over the output tokens, always "
      "busy); {:.0f}% of the GPU time is prefill\n",
      rep.usd_per_mtok_output, 100 * rep.inputs.input_time_share);
  out += "energy: " + FormatEnergy(rep.board_power_w, rep.joules_per_output_token);
  if (rep.electricity_usd_per_mtok_output) {
    out += fmt::format("; ${:.4f} of electricity per million output tokens at ${:g}/kWh",
                       *rep.electricity_usd_per_mtok_output, *rep.usd_per_kwh);
  }
  out += "\n\n";
  out += fmt::format(
      "cost per million tokens at a {:.0f}% duty cycle (paid for every hour, busy {:.0f}% of "
      "them: x{:.2f} the full-load price)\n",
      100 * rep.duty_cycle, 100 * rep.duty_cycle, DutyCycleMultiplier(rep.duty_cycle));
  out += fmt::format(
      "($/Mtok output bills every GPU-hour to the output tokens; the split columns divide the "
      "bill by GPU time, {:.0f}% to the input tokens and the rest to the output tokens, each in $ "
      "per million of its own tokens; utilization is the share of the operating point's tokens "
      "served, 100% being the point above, not the GPUs' busy time)\n",
      100 * rep.inputs.input_time_share);
  Table table({"utilization", "$/Mtok output", "$/Mtok input, split", "$/Mtok output, split"});
  for (const PricePoint& p : rep.curve) {
    table.AddRow({fmt::format("{:.0f}%", 100 * p.utilization),
                  fmt::format("{:.4f}", p.usd_per_mtok_output),
                  fmt::format("{:.4f}", p.usd_per_mtok_input_share),
                  fmt::format("{:.4f}", p.usd_per_mtok_output_share)});
  }
  out += table.Render();
  out += BreakEvenLines(rep);
  if (rep.sizing) {
    const DemandSizing& s = *rep.sizing;
    out += fmt::format(
        "demand of {:g} output tokens/s: {} like this = {}, running {:.1f}% "
        "utilised (at most {:.0f}% allowed by `target_utilization`)\n",
        s.demand_output_tokens_per_s, Counted(s.replicas, "deployment", "deployments"),
        Counted(s.gpus, "GPU", "GPUs"), 100 * s.utilization, 100 * s.target_utilization);
  }
  return out;
}

}  // namespace shardwise::text
