// Price: what a million tokens of a deployment cost at an operating point it can hold, and how
// that moves with utilisation, a duty cycle, an API's prices and a sustained demand (price/). The
// operating point is the load asked for; else, with SLOs, the most load (closed-loop clients)
// within them at their percentile; else the deployment's best batch, as plan ranks it. It is
// served by the one serving evaluation, so the $ per million output tokens (the whole bill over
// the output tokens, price::UsdPerMtok) is the one plan and simulate give for the same
// deployment and load. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardwise/api/catalog.h"
#include "shardwise/api/deployment_spec.h"
#include "shardwise/api/options.h"
#include "shardwise/api/saved.h"
#include "shardwise/api/simulate.h"
#include "shardwise/deploy/estimate.h"
#include "shardwise/plan/load.h"
#include "shardwise/price/price.h"

namespace shardwise::api {

struct PriceRequest {
  std::string model = "llama-3.1-70b";
  ClusterRef cluster;
  ServingOverrides serving;
  DeploymentSpec deployment;  // empty: the planner's best layout
  int64_t isl = 1024;
  int64_t osl = 256;
  SloRequest slo;                      // given: price the most load within them
  std::optional<double> rate;          // or price at this open loop
  std::optional<int64_t> concurrency;  // or this closed loop
  double duty_cycle = 1.0;
  std::optional<double> api_usd_per_mtok_input;
  std::optional<double> api_usd_per_mtok_output;
  double target_utilization = 0.8;
  std::optional<double> demand_tokens_per_s;
  std::optional<double> usd_per_kwh;  // electricity; unset: no electricity figure
  int64_t requests = 0;               // per simulation; 0: the steady state's
  uint64_t seed = 1;
  // How each simulation draws its requests: fixed lengths and Poisson arrivals unless a saved
  // simulate's generator is replayed (`isl`/`osl` above are then the means).
  RequestGenerator generator;
};

enum class PricedAt { kLoad, kMostWithinSlo, kBestBatch };
std::string_view PricedAtName(PricedAt at);

struct PriceReport {
  ModelSpec model;
  ClusterSpec cluster;
  ServingOptions options;
  Deployment deployment;
  DeploymentEstimate estimate;  // its analytic estimate at the request's lengths
  bool layout_chosen = false;   // the planner picked it
  PricedAt priced_at = PricedAt::kBestBatch;
  PlanLoad load;  // the operating point's load (offline: `offline_clients` clients)
  double offline_clients = 0;
  Slo slo;
  OperatingPoint point;
  double usd_per_hour = 0;         // the deployment's bill
  double usd_per_mtok_output = 0;  // at the operating point, always busy
  PriceInputs inputs;              // the deployment as one unit at the operating point
  // Energy at the operating point, always busy (price/energy.h): its GPUs at rated power.
  double board_power_w = 0;
  double joules_per_output_token = 0;
  std::optional<double> usd_per_kwh;
  std::optional<double> electricity_usd_per_mtok_output;  // at usd_per_kwh
  double duty_cycle = 1;
  std::vector<PricePoint> curve;  // 10% .. 100% utilisation, at the duty cycle
  BreakEven break_even;
  std::optional<double> api_usd_per_mtok_input, api_usd_per_mtok_output;
  std::optional<DemandSizing> sizing;
  std::vector<std::string> notes;
  SavedDeployment saved;
};

StatusOr<PriceReport> Price(const Catalog& catalog, const PriceRequest& request);

}  // namespace shardwise::api
