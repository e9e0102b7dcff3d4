#include "shardwise/sim/bands.h"

#include <algorithm>

namespace shardwise {

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
                  AssumedInputs(ttft, tpot),
                  measured};
  if (phase) bands.assumed_inputs.push_back("closed_loop.client_phase");
  if (measured && engine.ClosedLoopSpreadAssumed()) {
    bands.assumed_inputs.push_back("engine.closed_loop_ttft_ratio");
  } else if (measured && gpu != engine.closed_loop_measured_on) {
    bands.assumed_inputs.push_back("engine.closed_loop_measured_on");
  }
  return bands;
}

LoadBands DeploymentBands(const Deployment& d, const DeploymentEstimate& est,
                          const std::optional<OutOfPhase>& phase, bool closed_loop) {
  const Pool& prefill = d.prefill();
  const Pool& decode = d.decode();
  return BandsAtLoad(PhaseBand(est.prefill().one.prefill, prefill.cluster.gpu, prefill.perf.engine,
                               prefill.perf.weight_dtype),
                     PhaseBand(est.decode().one.decode, decode.cluster.gpu, decode.perf.engine,
                               decode.perf.weight_dtype),
                     phase, decode.perf.engine, decode.cluster.gpu.name,
                     closed_loop && !d.disaggregated());
}

}  // namespace shardwise
