#include "shardwise/sim/policy.h"

#include "shardwise/common/suggest.h"

namespace shardwise {

StatusOr<Admission> ParseAdmission(const std::string& text) {
  if (text == "no-evict") return Admission::kNoEvict;
  if (text == "max-utilization") return Admission::kMaxUtilization;
  return Error(UnknownNameMessage("admission policy", text, {"no-evict", "max-utilization"},
                                  "use no-evict or max-utilization"));
}

std::string AdmissionName(Admission admission) {
  return admission == Admission::kNoEvict ? "no-evict" : "max-utilization";
}

StatusOr<RouterPolicy> ParseRouter(const std::string& text) {
  if (text == "round-robin") return RouterPolicy{RoundRobinRouter{}};
  if (text == "least-loaded") return RouterPolicy{LeastLoadedRouter{}};
  return Error(UnknownNameMessage("router", text, {"round-robin", "least-loaded"},
                                  "use round-robin or least-loaded"));
}

std::string RouterName(const RouterPolicy& router) {
  return std::holds_alternative<RoundRobinRouter>(router) ? "round-robin" : "least-loaded";
}

}  // namespace shardwise
