// The options every serving command shares, as a caller states them (ServingOverrides: empty or
// unset means "the default"), and the one resolver that turns them into what the models run with
// (ServingOptions): the checkpoint's own weight formats, the KV format, the engine profile with
// its memory fraction, batch limits and token budget, the MoE and speculative settings. The
// command line, the Python package and the tests all resolve through ResolveServingOptions, so
// they get the same defaults; its errors name the field (Status::field()). Plain value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "shardwise/api/catalog.h"
#include "shardwise/common/status.h"
#include "shardwise/deploy/deployment.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/perf/options.h"
#include "shardwise/sim/serving.h"

namespace shardwise::api {

struct ServingOverrides {
  std::string engine = "trtllm";  // a profile name (trtllm, vllm-0.12, ...) or a profile file
  // Set: this profile as a value (calibrate's candidates), and `engine` only names it.
  std::optional<EngineProfile> engine_profile;
  std::string dtype;     // weights, every module: empty for the checkpoint's own formats
  std::string kv_dtype;  // empty: fp8 with fp8 weights, else bf16
  std::optional<double> gpu_memory_utilization;  // unset: the engine's
  std::optional<int64_t> max_batched_tokens;     // per attention rank; unset: the engine's rule
  std::optional<int64_t> max_batch;              // per attention rank; unset: max_num_seqs
  std::string admission;                         // no-evict or max-utilization; empty: the engine's
  double expert_imbalance = 0;                   // 0: a statistical estimate
  int64_t redundant_experts = 0;
  std::optional<double> expert_skew;  // Zipf exponent
  std::string expert_load;            // a file of measured per-expert loads
  std::optional<double> capacity_factor;
  std::string shared_experts = "replicated";  // or routed
  // How EP layouts exchange tokens; empty: flat, and plan searches the DeepEP-class kernels.
  std::string ep_algorithm;
  std::string ep_dispatch_dtype;
  std::string overlap;  // tbo or none
  double prefix_hit_rate = 0;
  std::string speculative = "none";  // mtp, eagle, draft:MODEL
  int64_t spec_tokens = 0;           // 0: the count of `acceptance`
  std::string acceptance;            // "0.8" or "0.8,0.6"

  bool ChoseEpExchange() const {
    return !ep_algorithm.empty() || !ep_dispatch_dtype.empty() || !overlap.empty();
  }
};

struct ServingOptions {
  PerfOptions perf;
  int64_t max_batch = 0;                     // sequences per attention rank
  std::optional<AdmissionPolicy> admission;  // unset: the engine's
  bool search_ep = true;                     // no EP exchange given: plan searches them

  // A pool of `workers` x `layout` on `cluster` with these options.
  Pool PoolFor(PoolRole role, const Layout& layout, int64_t workers,
               const ClusterSpec& cluster) const;
};

// The requests' mean lengths and their longest (prompt + output), for the limits that depend on
// them (the model's context, the engine's token budget).
// What sets the longest request a command checks against the model's context.
enum class LongestFrom { kMeans, kSpread, kTrace };

struct RequestLengths {
  int64_t prompt_tokens = 1024;
  int64_t output_tokens = 256;
  int64_t longest_tokens = 0;        // 0: prompt + output
  const char* prompt_field = "isl";  // the request's field of the prompt length (explain: context)
  LongestFrom longest_from = LongestFrom::kMeans;
  int64_t longest_prompt_tokens = 0;  // 0: prompt_tokens
  int64_t Longest() const {
    return longest_tokens > 0 ? longest_tokens : prompt_tokens + output_tokens;
  }
  int64_t LongestPrompt() const {
    return longest_prompt_tokens > 0 ? longest_prompt_tokens : prompt_tokens;
  }
};

// How request lengths spread about their means (isl, osl) where a command simulates, as a caller
// states it: each fixed, uniform or lognormal, with one coefficient of variation.
struct LengthSpreadRequest {
  std::string isl_dist = "fixed";  // fixed, uniform or lognormal
  std::string osl_dist = "fixed";
  std::optional<double> length_cv;  // uniform and lognormal lengths; unset: kDefaultLengthCv
};
// Errors name the field: an unknown distribution, a CV outside [0, 10], or a CV with both
// lengths fixed (it would spread nothing).
StatusOr<LengthSpread> ResolveLengthSpread(const LengthSpreadRequest& request);
// Requests of `isl` and `osl` tokens (their means) spread as `spread` says: with the longest
// request the spread draws (sim/serving.h), for the limits that depend on it (the model's
// context, the KV a replica must hold).
RequestLengths DrawnLengths(int64_t isl, int64_t osl, const LengthSpread& spread);

// SLOs as a caller states them: 0 means none.
struct SloRequest {
  std::optional<double> max_ttft_ms;  // unset: no limit
  std::optional<double> max_tpot_ms;
  std::string percentile = "p99";  // p50, p90, p99, p99.9 or mean
};
StatusOr<Slo> ResolveSlo(const SloRequest& request);

// An open loop's arrival rate in requests per second, as every command takes it: finite and
// within [kMinRatePerS, kMaxRatePerS]. Below the floor a run of even a few requests spans years
// of simulated time and every request meets an idle server (that is --concurrency 1); above the
// ceiling no catalog cluster serves a single request per arrival. Errors name `field`.
inline constexpr double kMinRatePerS = 1e-6;  // one request in 11.6 days
inline constexpr double kMaxRatePerS = 1e7;
Status CheckRate(double rate_per_s, const char* field = "rate");

// A GPU price given in place of the catalog's: positive and below $10,000 an hour (a GPU rents for
// a few $ an hour), so a typo, NaN or infinity is caught, not priced. Errors name
// `usd_per_gpu_hour`.
inline constexpr double kMaxUsdPerGpuHour = 1e4;
Status CheckGpuPrice(std::optional<double> usd_per_gpu_hour);

// Closed-loop clients a simulation takes: at most kMaxClientsPerGpu per GPU of the deployment
// (or the planned cluster). That is 8x TensorRT-LLM's default max_batch of 2,048 sequences per
// attention rank, more than any engine runs at once, so further clients only wait in its queue;
// and a steady state of them takes minutes to simulate (a plan of 10 million clients on 8 GPUs
// did not finish in 60 s; 131,072 takes about 2 s). Errors name `concurrency`.
inline constexpr int64_t kMaxClientsPerGpu = 16'384;
Status CheckClients(int64_t clients, int64_t gpus);

// Checks lengths against the model: positive, and within its context (max_position_embeddings).
Status CheckLengths(const ModelSpec& model, const RequestLengths& lengths);

// The error for a mixture-of-experts option `field` given with a dense `model`.
Status NeedsMoe(const ModelSpec& model, const std::string& field);

// Where an EP layout runs the engines' default exchange because none was asked for: a note
// that plan and recommend rank with the exchange their search picks. Empty otherwise.
std::string DefaultEpExchangeNote(const Deployment& d, const ServingOverrides& overrides);

StatusOr<ServingOptions> ResolveServingOptions(const Catalog& catalog, const ModelSpec& model,
                                               const ServingOverrides& overrides,
                                               const RequestLengths& lengths);

}  // namespace shardwise::api
