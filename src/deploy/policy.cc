#include "shardwise/deploy/policy.h"

#include "shardwise/common/suggest.h"

namespace shardwise {

bool ReservesOutput(const AdmissionPolicy& admission) {
  return std::visit([](const auto& a) { return a.kReservesOutput; }, admission);
}

bool DecodesBesidePrefill(const SchedulePolicy& schedule) {
  return std::visit([](const auto& s) { return s.kDecodesBesidePrefill; }, schedule);
}

bool ChunksPrompts(const SchedulePolicy& schedule) {
  return std::visit([](const auto& s) { return s.kChunksPrompts; }, schedule);
}

StatusOr<AdmissionPolicy> ParseAdmission(std::string_view text) {
  if (text == "no-evict") return AdmissionPolicy{NoEvictAdmission{}};
  if (text == "max-utilization") return AdmissionPolicy{MaxUtilizationAdmission{}};
  return FieldError("admission",
                    UnknownNameMessage("admission policy", text, {"no-evict", "max-utilization"},
                                       "use no-evict or max-utilization"));
}

std::string AdmissionName(const AdmissionPolicy& admission) {
  return std::holds_alternative<NoEvictAdmission>(admission) ? "no-evict" : "max-utilization";
}

std::string ScheduleName(const SchedulePolicy& schedule) {
  if (std::holds_alternative<ChunkedMixedSchedule>(schedule)) return "chunked-mixed";
  if (std::holds_alternative<WholePromptMixedSchedule>(schedule)) return "whole-prompt-mixed";
  return "prefill-first";
}

StatusOr<RouterPolicy> ParseRouter(std::string_view text) {
  if (text == "round-robin") return RouterPolicy{RoundRobinRouter{}};
  if (text == "least-loaded") return RouterPolicy{LeastLoadedRouter{}};
  return FieldError("router", UnknownNameMessage("router", text, {"round-robin", "least-loaded"},
                                                 "use round-robin or least-loaded"));
}

std::string RouterName(const RouterPolicy& router) {
  return std::holds_alternative<RoundRobinRouter>(router) ? "round-robin" : "least-loaded";
}

}  // namespace shardwise
