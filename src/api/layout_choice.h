// The layout simulate runs when none is given. Plan ranks layouts at fixed lengths (the
// requests' means) and its own batch; where the requests' lengths differ (a trace, or spread
// length distributions), plan's leading layouts are served on the run's own requests and the
// one that answers the run's question best is kept. Internal to the api module.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shardwise/api/catalog.h"
#include "shardwise/api/plan.h"
#include "shardwise/api/simulate.h"

namespace shardwise::api {

// Plan's leading layouts served on spread lengths: as many as plan shows by default (--top).
inline const int kLayoutsCompared = PlanRequest{}.top;

// Whether a scenario's requests differ in length: a trace's own, or distributions spread wider
// than kOutOfPhaseOutputCv.
bool LengthsVary(const Scenario& s);

// Whether every request is there at the start (offline): a rate of infinity, or a trace whose
// arrivals are all at one time.
bool AllAtOnce(const Scenario& s);

// The layout for `rep`'s model, cluster, options and scenario: plan's first at `one`'s lengths;
// where the lengths vary, of plan's leading kLayoutsCompared served in plan's order,
//  - with arrivals to keep up with (an open loop) or SLOs to meet (a closed loop with SLOs): the
//    first that keeps up (not overloaded, no queue growing, kGrowingQueueDrift) within the SLOs,
//    else the one with the most output tokens/s within the SLOs (goodput; without SLOs, output
//    tokens/s);
//  - offline, or a closed loop without SLOs: the one that serves the most output tokens/s;
// where none keeps up, plan's first stays unless that one serves more than 1 /
// kServedShareOfOffered of it. Where the pick is not plan's first, a note in `notes` says what
// each served and why any failed.
// The layout kept, and its run where it was served on the scenario (a comparison ran): the run
// simulate reports, not served again.
struct LayoutChoice {
  std::string layout;
  std::optional<ServingRun> run;
};
StatusOr<LayoutChoice> ChooseLayout(const Catalog& catalog, const ServingReport& rep,
                                    const Workload& one, const RequestLengths& lengths,
                                    std::vector<std::string>& notes);

}  // namespace shardwise::api
