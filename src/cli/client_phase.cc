#include "client_phase.h"

namespace shardwise::cli {

std::optional<ClientPhase> SimulateOutOfPhase(const ModelSpec& model, const StepTable& table,
                                              SimConfig config, const SimResult& lockstep,
                                              RequestSource& spread) {
  config.progress = nullptr;  // the first run showed the progress
  StatusOr<SimResult> drift = Simulate(model, table, spread, config);
  if (!drift.ok()) return std::nullopt;
  return ClientPhase{lockstep.ttft_s.Mean(), lockstep.tpot_s.Mean(), drift->ttft_s.Mean(),
                     drift->tpot_s.Mean()};
}

nlohmann::json ClientPhaseJson(const std::optional<ClientPhase>& phase) {
  if (!phase) return nullptr;
  return {{"lockstep", {{"ttft_s", phase->lockstep_ttft_s}, {"tpot_s", phase->lockstep_tpot_s}}},
          {"out_of_phase",
           {{"ttft_s", phase->out_of_phase_ttft_s}, {"tpot_s", phase->out_of_phase_tpot_s}}},
          {"output_length_cv", kOutOfPhaseOutputCv}};
}

}  // namespace shardwise::cli
