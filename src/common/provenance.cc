#include "shardwise/common/provenance.h"

#include <fmt/format.h>

namespace shardwise {

StatusOr<Provenance> ParseProvenance(const std::string& text) {
  if (text == "measured") return Provenance::kMeasured;
  if (text == "fitted") return Provenance::kFitted;
  if (text == "assumed") return Provenance::kAssumed;
  return Error(fmt::format("provenance '{}' must be measured, fitted or assumed", text));
}

std::string ProvenanceName(Provenance p) {
  switch (p) {
    case Provenance::kMeasured:
      return "measured";
    case Provenance::kFitted:
      return "fitted";
    case Provenance::kAssumed:
      return "assumed";
  }
  return "assumed";
}

}  // namespace shardwise
