#include "metric_json.h"

#include <algorithm>

namespace shardwise::cli {
namespace {

nlohmann::json Summary(const LogHistogram& h) {
  return {{"p50", h.Percentile(50)},
          {"p90", h.Percentile(90)},
          {"p99", h.Percentile(99)},
          {"mean", h.Mean()},
          {"count", h.Count()}};
}

}  // namespace

nlohmann::json LatencyJson(const LatencySummary& s) {
  return {{"mean", s.mean_s}, {"p50", s.p50_s}, {"p99", s.p99_s}};
}

nlohmann::json DistributionJson(const LogHistogram& h) {
  nlohmann::json cdf = nlohmann::json::array();
  for (double q : {1.0,  5.0,  10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0, 50.0,
                   55.0, 60.0, 65.0, 70.0, 75.0, 80.0, 85.0, 90.0, 95.0, 99.0}) {
    cdf.push_back({{"percentile", q}, {"value_s", h.Percentile(q)}});
  }
  nlohmann::json j = Summary(h);
  j["cdf"] = cdf;
  return j;
}

nlohmann::json PercentileJson(const LogHistogram& h, double percentile) {
  nlohmann::json j = Summary(h);
  j["at_percentile"] = h.Percentile(percentile);
  return j;
}

Band LatencyBand(double mean, const BandSpec& spec) {
  Band band = Widen(mean, spec.relative);
  const auto cover = [&band](const Band& other) {
    band.low = std::min(band.low, other.low);
    band.high = std::max(band.high, other.high);
  };
  if (spec.other_mean) cover(Widen(*spec.other_mean, spec.relative));
  if (spec.measured) cover(MeasuredSpread(mean, *spec.measured));
  return band;
}

LoadBands BandsAtLoad(const PhaseUncertainty& ttft, const PhaseUncertainty& tpot,
                      const std::optional<OutOfPhase>& phase, const EngineProfile& engine,
                      const std::string& gpu, bool measured) {
  const auto spread = [measured](const MeasuredRatios& r) {
    return measured ? std::optional<MeasuredRatios>(r) : std::nullopt;
  };
  LoadBands bands{{ttft.relative, phase ? std::optional<double>(phase->ttft_s) : std::nullopt,
                   spread(engine.closed_loop_ttft)},
                  {tpot.relative, phase ? std::optional<double>(phase->tpot_s) : std::nullopt,
                   spread(engine.closed_loop_tpot)},
                  AssumedInputs(ttft, tpot)};
  if (phase) bands.assumed_inputs.push_back("closed_loop.client_phase");
  if (measured && gpu != engine.closed_loop_measured_on) {
    bands.assumed_inputs.push_back("engine.closed_loop_measured_on");
  }
  return bands;
}

nlohmann::json WithBand(nlohmann::json latency, const BandSpec& spec) {
  const Band band = LatencyBand(latency["mean"].get<double>(), spec);
  latency["low"] = band.low;
  latency["high"] = band.high;
  return latency;
}

}  // namespace shardwise::cli
