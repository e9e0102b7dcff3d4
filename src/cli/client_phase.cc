#include "client_phase.h"

#include <algorithm>

namespace shardwise::cli {

StatusOr<ClientPhase> SimulateOutOfPhase(const ModelSpec& model, const StepTable& table,
                                         SimConfig config, const SimResult& lockstep,
                                         LengthSpec input, double output_tokens, int64_t requests,
                                         uint64_t seed) {
  config.progress = nullptr;  // the first run showed the progress
  RequestSource spread({}, input,
                       {LengthDistribution::kUniform, output_tokens, kOutOfPhaseOutputCv}, requests,
                       seed);
  SW_ASSIGN_OR_RETURN(SimResult drift, Simulate(model, table, spread, config));
  return ClientPhase{lockstep.ttft_s.Mean(), lockstep.tpot_s.Mean(), drift.ttft_s.Mean(),
                     drift.tpot_s.Mean()};
}

nlohmann::json ClientPhaseJson(const std::optional<ClientPhase>& phase) {
  if (!phase) return nullptr;
  return {{"lockstep", {{"ttft_s", phase->lockstep_ttft_s}, {"tpot_s", phase->lockstep_tpot_s}}},
          {"out_of_phase",
           {{"ttft_s", phase->out_of_phase_ttft_s}, {"tpot_s", phase->out_of_phase_tpot_s}}},
          {"output_length_cv", kOutOfPhaseOutputCv}};
}

Band PhaseBand(double mean, double relative, std::optional<double> other_phase_mean) {
  Band band = Widen(mean, relative);
  if (other_phase_mean) {
    const Band other = Widen(*other_phase_mean, relative);
    band.low = std::min(band.low, other.low);
    band.high = std::max(band.high, other.high);
  }
  return band;
}

nlohmann::json WithPhaseBand(nlohmann::json latency, double relative,
                             std::optional<double> other_phase_mean) {
  const Band band = PhaseBand(latency["mean"].get<double>(), relative, other_phase_mean);
  latency["low"] = band.low;
  latency["high"] = band.high;
  return latency;
}

}  // namespace shardwise::cli
