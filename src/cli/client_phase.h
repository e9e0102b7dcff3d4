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
#include "shardwise/plan/load.h"
#include "shardwise/sim/simulator.h"
#include "shardwise/sim/workload.h"

namespace shardwise::cli {

// `spread` is the stream of the loop already simulated in lockstep (clients, requests, seed,
// arrivals, cutoff) with output lengths spread by kOutOfPhaseOutputCv: the loop out of phase.
// nullopt where the spread loop cannot run (a longer request than the KV cache holds): the
// lockstep loop ran, so the out-of-phase one never fails the command.
std::optional<OutOfPhase> SimulateOutOfPhase(const ModelSpec& model, const StepTable& table,
                                             SimConfig config, RequestSource& spread);

// {"lockstep": {"ttft_s", "tpot_s"}, "out_of_phase": {...}, "output_length_cv"}, or null
// without an out-of-phase run.
nlohmann::json ClientPhaseJson(double lockstep_ttft_s, double lockstep_tpot_s,
                               const std::optional<OutOfPhase>& phase);

}  // namespace shardwise::cli
