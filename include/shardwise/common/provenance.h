// Provenance: where a catalog number comes from. Measured (a published or our own
// measurement), fitted (a physical quantity fitted to a named subset of measurements and checked
// on the rest), or assumed (reasoned from documentation, not measured). Assumed and fitted inputs
// widen a prediction's stated band (perf/uncertainty.h). Plain enum and pure functions.
#pragma once

#include <string>

#include "shardwise/common/status.h"

namespace shardwise {

enum class Provenance { kMeasured, kFitted, kAssumed };

StatusOr<Provenance> ParseProvenance(const std::string& text);
std::string ProvenanceName(Provenance p);

}  // namespace shardwise
