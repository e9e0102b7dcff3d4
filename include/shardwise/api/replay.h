// Replay: a saved result's question (api/saved.h) as a new request, with the fields the caller
// set itself kept: `simulate --deployment FILE --isl 1024` keeps the saved OSL, SLOs and load and
// changes the prompt only. The saved model, cluster, serving options and deployment always come
// from the file (naming them too is the caller's error to report). Pure.
#pragma once

#include "shardwise/api/explain.h"
#include "shardwise/api/price.h"
#include "shardwise/api/saved.h"
#include "shardwise/api/simulate.h"

namespace shardwise::api {

// The request fields a caller set itself; every other replayable one comes from the file.
struct GivenFields {
  bool isl = false, osl = false;
  bool max_ttft = false, max_tpot = false, percentile = false;
  bool load = false;  // a rate or a concurrency
  bool burstiness = false;
  bool isl_dist = false, osl_dist = false, length_cv = false;
  bool seed = false, router = false;
  bool batch = false;  // explain
};

void Replay(const SavedDeployment& saved, const GivenFields& given, SimulateRequest& request);
// A saved load is priced unless the caller gives a load or SLOs (then the SLOs' operating point).
void Replay(const SavedDeployment& saved, const GivenFields& given, PriceRequest& request);
// isl is explain's context; a saved closed loop sets the batch: its clients per replica
// (aggregated) or per decode worker (disaggregated).
Status Replay(const SavedDeployment& saved, const GivenFields& given, ExplainRequest& request);

}  // namespace shardwise::api
