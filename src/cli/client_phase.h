// A closed loop at fixed lengths runs its clients in lockstep: requests admitted in one iteration
// finish in one iteration, and their clients' next requests arrive together. Measured closed
// loops differ by engine (docs/validation.md, "What the measurements say about their own closed
// loops"): SGLang's run in step, vLLM's and TensorRT-LLM's drift out of phase. The inputs do not
// say which a deployment will do, so simulate runs the loop both ways and its band covers both.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "shardwise/common/status.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/uncertainty.h"
#include "shardwise/sim/simulator.h"
#include "shardwise/sim/workload.h"

namespace shardwise::cli {

// The mean TTFT and TPOT of one closed loop in lockstep and out of phase.
struct ClientPhase {
  double lockstep_ttft_s = 0;
  double lockstep_tpot_s = 0;
  double out_of_phase_ttft_s = 0;
  double out_of_phase_tpot_s = 0;
};

// `lockstep` is the loop already simulated at fixed lengths; the same loop (same clients,
// requests and seed) is simulated again with output lengths spread by kOutOfPhaseOutputCv.
StatusOr<ClientPhase> SimulateOutOfPhase(const ModelSpec& model, const StepTable& table,
                                         SimConfig config, const SimResult& lockstep,
                                         LengthSpec input, double output_tokens, int64_t requests,
                                         uint64_t seed);

// {"lockstep": {"ttft_s", "tpot_s"}, "out_of_phase": {...}, "output_length_cv"}, or null.
nlohmann::json ClientPhaseJson(const std::optional<ClientPhase>& phase);

// The model's band (relative half-width `relative`) around `mean` and, where given, around the
// other phase's mean too: the lowest low and the highest high.
Band PhaseBand(double mean, double relative, std::optional<double> other_phase_mean);

// `latency` (an object with a "mean") with "low" and "high" from PhaseBand.
nlohmann::json WithPhaseBand(nlohmann::json latency, double relative,
                             std::optional<double> other_phase_mean);

}  // namespace shardwise::cli
