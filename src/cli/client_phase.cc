#include "client_phase.h"

namespace shardwise::cli {

std::optional<OutOfPhase> SimulateOutOfPhase(const ModelSpec& model, const StepTable& table,
                                             SimConfig config, RequestSource& spread) {
  config.progress = nullptr;  // the first run showed the progress
  StatusOr<SimResult> drift = Simulate(model, table, spread, config);
  if (!drift.ok()) return std::nullopt;
  return OutOfPhase{drift->ttft_s.Mean(), drift->tpot_s.Mean()};
}

nlohmann::json ClientPhaseJson(double lockstep_ttft_s, double lockstep_tpot_s,
                               const std::optional<OutOfPhase>& phase) {
  if (!phase) return nullptr;
  return {{"lockstep", {{"ttft_s", lockstep_ttft_s}, {"tpot_s", lockstep_tpot_s}}},
          {"out_of_phase", {{"ttft_s", phase->ttft_s}, {"tpot_s", phase->tpot_s}}},
          {"output_length_cv", kOutOfPhaseOutputCv}};
}

}  // namespace shardwise::cli
