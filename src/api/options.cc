#include "shardwise/api/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <tuple>

#include "shardwise/common/decimal.h"
#include "shardwise/common/format.h"
#include "shardwise/model/accounting.h"
#include "shardwise/perf/expert_loads.h"
#include "shardwise/perf/moe.h"
#include "shardwise/perf/speculative.h"

namespace shardwise::api {
namespace {

constexpr int64_t kMaxDraftTokens = 16;
constexpr int64_t kMaxTokens = 10'000'000;

StatusOr<std::vector<double>> ParseAcceptance(const std::string& text) {
  std::vector<double> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const double a = ParseDecimal(item).value_or(0);
    if (!(a > 0 && a <= 1)) {
      return FieldError("acceptance",
                        fmt::format("`acceptance` '{}': each value is the chance a draft token is "
                                    "accepted, in (0, 1]",
                                    text));
    }
    out.push_back(a);
  }
  if (out.empty()) {
    return FieldError("acceptance", "`acceptance` needs a value in (0, 1] or a comma list of them");
  }
  return out;
}

StatusOr<SpeculativeOptions> Speculative(const Catalog& catalog, const ModelSpec& target,
                                         const ServingOverrides& o) {
  SpeculativeOptions s;
  const std::string& method = o.speculative;
  const size_t colon = method.find(':');
  const std::string name = method.substr(0, colon);
  StatusOr<SpeculativeMethod> parsed = ParseSpeculativeMethod(name);
  if (!parsed.ok()) return parsed.status().WithField("speculative");
  s.method = *parsed;
  if (s.method == SpeculativeMethod::kMtp && target.mtp_modules == 0) {
    return FieldError("speculative",
                      fmt::format("`speculative` mtp drafts with the model's own multi-token-"
                                  "prediction layers and {} has none; use eagle or draft:MODEL",
                                  target.name));
  }
  if (s.method == SpeculativeMethod::kNone) {
    if (o.spec_tokens != 0 || !o.acceptance.empty()) {
      return FieldError("speculative",
                        "`spec_tokens` and `acceptance` need `speculative` mtp|eagle|draft:MODEL");
    }
    return s;
  }
  if (o.acceptance.empty()) {
    return FieldError("acceptance",
                      fmt::format("`speculative` {} needs `acceptance` (the chance a draft token "
                                  "is accepted, in (0, 1])",
                                  method));
  }
  SW_ASSIGN_OR_RETURN(std::vector<double> a, ParseAcceptance(o.acceptance));
  if (o.spec_tokens < 0 || o.spec_tokens > kMaxDraftTokens) {
    return FieldError("spec_tokens", fmt::format("`spec_tokens` must be between 1 and {}, got {}",
                                                 kMaxDraftTokens, o.spec_tokens));
  }
  const int64_t k = o.spec_tokens > 0 ? o.spec_tokens : static_cast<int64_t>(a.size());
  if (a.size() == 1) {
    a.assign(static_cast<size_t>(k), a[0]);
  } else if (static_cast<int64_t>(a.size()) != k) {
    return FieldError("acceptance",
                      fmt::format("`acceptance` lists {} positions but `spec_tokens` is {}; give "
                                  "one value per draft token or a single value",
                                  a.size(), k));
  }
  if (k > kMaxDraftTokens) {
    return FieldError("acceptance",
                      fmt::format("`acceptance` lists {} positions; at most {} draft tokens", k,
                                  kMaxDraftTokens));
  }
  s.acceptance = std::move(a);
  if (s.method == SpeculativeMethod::kDraftModel) {
    if (colon == std::string::npos || colon + 1 == method.size()) {
      return FieldError("speculative",
                        "`speculative` draft needs the draft model: draft:MODEL (e.g. "
                        "draft:llama-3.1-8b)");
    }
    SW_ASSIGN_OR_RETURN(ModelSpec draft, catalog.Model(method.substr(colon + 1)));
    if (draft.vocab_size != target.vocab_size) {
      return FieldError(
          "speculative",
          fmt::format("draft model {} has a vocabulary of {} tokens, {} has {}; a draft must "
                      "share the target's tokenizer",
                      draft.name, draft.vocab_size, target.name, target.vocab_size));
    }
    // A draft earns its keep by costing less per token than the target: compare the parameters
    // one token multiplies with (an MoE target's active ones, not its total).
    const int64_t draft_params = CountParams(draft).active_matmul;
    const int64_t target_params = CountParams(target).active_matmul;
    if (draft_params >= target_params) {
      return FieldError(
          "speculative",
          fmt::format("draft model {} multiplies {} parameters per token, not fewer than {}'s {}; "
                      "a draft must be a smaller model (e.g. draft:llama-3.1-8b for "
                      "llama-3.1-70b)",
                      draft.name, FormatCount(static_cast<double>(draft_params)), target.name,
                      FormatCount(static_cast<double>(target_params))));
    }
    s.draft_model = std::make_shared<const ModelSpec>(std::move(draft));
  } else if (colon != std::string::npos) {
    return FieldError(
        "speculative",
        fmt::format("`speculative` '{}': only draft takes a model (draft:MODEL)", method));
  }
  return s;
}

// Expert loads, capacity, the EP exchange and overlap, into `p`.
Status MoeOptions(const ModelSpec& model, const ServingOverrides& o, PerfOptions& p) {
  if (o.expert_imbalance != 0 && !(o.expert_imbalance >= 1 && o.expert_imbalance <= 100)) {
    return FieldError(
        "expert_imbalance",
        fmt::format("`expert_imbalance` must be between 1 and 100, got {:g}", o.expert_imbalance));
  }
  if (o.expert_imbalance != 0 && !model.is_moe()) return NeedsMoe(model, "expert_imbalance");
  p.expert_imbalance = o.expert_imbalance;
  if (o.redundant_experts < 0 || o.redundant_experts > 1'000'000) {
    return FieldError("redundant_experts",
                      fmt::format("`redundant_experts` must be between 0 and 1,000,000, got {}",
                                  o.redundant_experts));
  }
  if (o.redundant_experts > 0 && !model.is_moe()) return NeedsMoe(model, "redundant_experts");
  p.redundant_experts = o.redundant_experts;
  if (o.expert_skew && !(*o.expert_skew >= 0 && *o.expert_skew <= 10)) {
    return FieldError("expert_skew",
                      fmt::format("`expert_skew` is a Zipf exponent between 0 (uniform) and 10, "
                                  "got {:g}",
                                  *o.expert_skew));
  }
  if (o.expert_skew && !model.is_moe()) return NeedsMoe(model, "expert_skew");
  p.expert_skew = o.expert_skew;
  if (!o.expert_load.empty()) {
    if (o.expert_skew) {
      return FieldError("expert_load", "give `expert_skew` or `expert_load`, not both");
    }
    if (!model.is_moe()) return NeedsMoe(model, "expert_load");
    SW_ASSIGN_OR_RETURN(p.expert_loads, LoadExpertLoads(o.expert_load, model.moe.num_experts));
  }
  if (o.capacity_factor) {
    if (!(*o.capacity_factor >= 1 && *o.capacity_factor <= 1000)) {
      return FieldError("capacity_factor",
                        fmt::format("`capacity_factor` must be between 1 (every expert at most "
                                    "its mean share) and 1000, got {:g}",
                                    *o.capacity_factor));
    }
    if (!model.is_moe()) return NeedsMoe(model, "capacity_factor");
    p.capacity_factor = o.capacity_factor;
  }
  if (o.shared_experts != "replicated" && o.shared_experts != "routed") {
    return FieldError(
        "shared_experts",
        fmt::format("`shared_experts` must be replicated or routed, got '{}'", o.shared_experts));
  }
  p.shared_experts_routed = o.shared_experts == "routed";
  if (p.shared_experts_routed) SW_RETURN_IF_ERROR(SharedExpertsAsRouted(model).status());
  StatusOr<EpAlgorithm> algorithm =
      ParseEpAlgorithm(o.ep_algorithm.empty() ? "flat" : o.ep_algorithm);
  if (!algorithm.ok()) return algorithm.status().WithField("ep_algorithm");
  p.ep.algorithm = *algorithm;
  p.ep.dispatch_dtype = p.activation_dtype;
  if (!o.ep_dispatch_dtype.empty()) {
    StatusOr<Dtype> d = ParseDtype(o.ep_dispatch_dtype);
    if (!d.ok() || (*d != Dtype::kFp8 && *d != Dtype::kBf16)) {
      return FieldError(
          "ep_dispatch_dtype",
          fmt::format("`ep_dispatch_dtype` must be fp8 or bf16, got '{}'", o.ep_dispatch_dtype));
    }
    p.ep.dispatch_dtype = *d;
  }
  if (!o.overlap.empty() && o.overlap != "tbo" && o.overlap != "none") {
    return FieldError("overlap", fmt::format("`overlap` must be tbo or none, got '{}'", o.overlap));
  }
  p.ep.two_batch_overlap = o.overlap == "tbo";
  return Status();
}

// The weight and KV formats: the checkpoint's own unless given.
Status Formats(const ModelSpec& model, const ServingOverrides& o, PerfOptions& p) {
  if (o.dtype.empty()) {
    // GEMMs run in the format most weights are in; each module's bytes are its own.
    p.weight_dtype = model.native_dtype;
    p.weight_formats = model.native_formats;
  } else {
    StatusOr<Dtype> d = ParseDtype(o.dtype);
    if (!d.ok()) return d.status().WithField("dtype");
    p.weight_dtype = *d;
  }
  if (o.kv_dtype.empty()) {
    p.kv_dtype = p.weight_dtype == Dtype::kFp8 ? Dtype::kFp8 : Dtype::kBf16;
  } else {
    StatusOr<Dtype> d = ParseDtype(o.kv_dtype);
    if (!d.ok()) return d.status().WithField("kv_dtype");
    p.kv_dtype = *d;
  }
  return Status();
}

}  // namespace

Status NeedsMoe(const ModelSpec& model, const std::string& field) {
  return FieldError(
      field, fmt::format("`{}` needs a mixture-of-experts model; {} is dense", field, model.name));
}

Pool ServingOptions::PoolFor(PoolRole role, const Layout& layout, int64_t workers,
                             const ClusterSpec& cluster) const {
  Pool p = EnginePool(role, layout, workers, cluster, perf, max_batch);
  if (admission) p.admission = *admission;
  return p;
}

StatusOr<Slo> ResolveSlo(const SloRequest& r) {
  Slo slo;
  for (const auto& [value, field] :
       {std::pair{r.max_ttft_ms, "max_ttft_ms"}, std::pair{r.max_tpot_ms, "max_tpot_ms"}}) {
    if (value && !(*value > 0 && std::isfinite(*value))) {
      return FieldError(field, fmt::format("`{}` must be a positive number of milliseconds, got "
                                           "{:g}",
                                           field, *value));
    }
  }
  if (r.max_ttft_ms) slo.max_ttft_s = *r.max_ttft_ms * 1e-3;
  if (r.max_tpot_ms) slo.max_tpot_s = *r.max_tpot_ms * 1e-3;
  SW_ASSIGN_OR_RETURN(slo.percentile, ParseSloPercentile(r.percentile));
  return slo;
}

StatusOr<LengthSpread> ResolveLengthSpread(const LengthSpreadRequest& r) {
  LengthSpread spread;
  for (const auto& [text, field, into] : {std::tuple{&r.isl_dist, "isl_dist", &spread.input},
                                          std::tuple{&r.osl_dist, "osl_dist", &spread.output}}) {
    StatusOr<LengthDistribution> d = ParseLengthDistribution(*text);
    if (!d.ok()) return d.status().WithField(field);
    *into = *d;
  }
  if (spread.Fixed() && r.length_cv) {
    return FieldError("length_cv",
                      "`length_cv` spreads uniform or lognormal lengths: set "
                      "`osl_dist` (or `isl_dist`) uniform|lognormal, or drop it");
  }
  spread.cv = r.length_cv.value_or(kDefaultLengthCv);
  if (!(spread.cv >= 0 && spread.cv <= 10)) {
    return FieldError("length_cv", "`length_cv` must be in [0, 10]");
  }
  // A uniform length spans mean x (1 +- sqrt(3) CV): past 1/sqrt(3) it would start below zero,
  // and the lengths clipped to one token would raise the mean asked for.
  const bool uniform =
      spread.input == LengthDistribution::kUniform || spread.output == LengthDistribution::kUniform;
  if (uniform && spread.cv > 1 / std::sqrt(3.0)) {
    return FieldError("length_cv", fmt::format("`length_cv` {:g} is beyond a uniform length's "
                                               "largest, 0.577 (from zero to twice the mean); "
                                               "use lognormal for a wider spread",
                                               spread.cv));
  }
  return spread;
}

RequestLengths DrawnLengths(int64_t isl, int64_t osl, const LengthSpread& spread) {
  Scenario s;
  s.input = {spread.input, static_cast<double>(isl), spread.cv};
  s.output = {spread.output, static_cast<double>(osl), spread.cv};
  return RequestLengths{isl,
                        osl,
                        LongestRequest(s),
                        "isl",
                        spread.Fixed() ? LongestFrom::kMeans : LongestFrom::kSpread,
                        LongestPrompt(s)};
}

Status CheckRate(double rate_per_s, const char* field) {
  if (rate_per_s >= kMinRatePerS && rate_per_s <= kMaxRatePerS) return Status();
  return FieldError(field, fmt::format("`{}` must be requests per second between {:g} and {:g}, "
                                       "got {:g}",
                                       field, kMinRatePerS, kMaxRatePerS, rate_per_s));
}

Status CheckGpuPrice(std::optional<double> usd_per_gpu_hour) {
  if (!usd_per_gpu_hour || (*usd_per_gpu_hour > 0 && *usd_per_gpu_hour < kMaxUsdPerGpuHour)) {
    return Status();
  }
  return FieldError("usd_per_gpu_hour",
                    fmt::format("`usd_per_gpu_hour` must be a positive price below ${:g}, got {:g}",
                                kMaxUsdPerGpuHour, *usd_per_gpu_hour));
}

Status CheckClients(int64_t clients, int64_t gpus) {
  if (clients <= kMaxClientsPerGpu * std::max<int64_t>(1, gpus)) return Status();
  return FieldError(
      "concurrency",
      fmt::format("`concurrency` {} is over {} clients per GPU on {} GPU{}: at most {} are "
                  "simulated (no engine runs more than a few thousand sequences per GPU at once, "
                  "so the rest only queue): lower it or add GPUs (`nodes`)",
                  clients, kMaxClientsPerGpu, gpus, gpus == 1 ? "" : "s",
                  kMaxClientsPerGpu * gpus));
}

Status CheckLengths(const ModelSpec& model, const RequestLengths& l) {
  const std::string prompt = l.prompt_field;
  if (l.prompt_tokens < 1 || l.prompt_tokens > kMaxTokens) {
    return FieldError(prompt, fmt::format("`{}` must be between 1 and 10,000,000, got {}", prompt,
                                          l.prompt_tokens));
  }
  if (l.output_tokens < 1 || l.output_tokens > kMaxTokens) {
    return FieldError(
        "osl", fmt::format("`osl` must be between 1 and 10,000,000, got {}", l.output_tokens));
  }
  const int64_t context = model.max_position_embeddings;
  if (context > 0 && l.Longest() > context) {
    const std::string fix = l.longest_from == LongestFrom::kTrace
                                ? "shorten or drop the trace's longest requests"
                            : l.longest_from == LongestFrom::kSpread
                                ? fmt::format(
                                      "the lengths' spread draws them up to its cap; use a smaller "
                                      "`length_cv`, fixed lengths, or a shorter `{}` or `osl`",
                                      prompt)
                                : fmt::format("use a shorter `{}` or `osl`", prompt);
    return FailedPrecondition(
        fmt::format("requests of up to {} tokens (prompt and output) exceed {}'s context of {} "
                    "tokens (max_position_embeddings); {}, or a model with a longer context",
                    l.Longest(), model.name, context, fix),
        prompt);
  }
  return Status();
}

std::string DefaultEpExchangeNote(const Deployment& d, const ServingOverrides& overrides) {
  if (overrides.ChoseEpExchange()) return "";
  for (const Pool& pool : d.pools()) {
    // Expert-TP layouts gather tokens rather than exchange them; a saved deployment states its
    // own exchange (plan's pick), which is not the default.
    const EpSetting& ep = pool.perf.ep;
    if (pool.layout.ep > 1 && !pool.layout.GathersTokensForExperts() &&
        ep.algorithm == EpAlgorithm::kFlat && ep.dispatch_dtype == Dtype::kBf16 &&
        !ep.two_batch_overlap) {
      return "EP exchange flat (NCCL all-to-all) with bf16 dispatch, the engines' default; plan "
             "and recommend also try DeepEP's node-dedup and low-latency kernels and fp8 dispatch "
             "(their why lines name the pick): give --ep-algorithm and --ep-dispatch-dtype, or "
             "their --json with --deployment, to run what they ranked";
    }
  }
  return "";
}

StatusOr<ServingOptions> ResolveServingOptions(const Catalog& catalog, const ModelSpec& model,
                                               const ServingOverrides& o,
                                               const RequestLengths& lengths) {
  SW_RETURN_IF_ERROR(CheckLengths(model, lengths));
  ServingOptions s;
  PerfOptions& p = s.perf;
  SW_RETURN_IF_ERROR(Formats(model, o, p));
  if (o.engine_profile) {
    p.engine = *o.engine_profile;
  } else {
    SW_ASSIGN_OR_RETURN(p.engine, catalog.Engine(o.engine));
  }
  if (o.gpu_memory_utilization &&
      !(*o.gpu_memory_utilization > 0 && *o.gpu_memory_utilization <= 1)) {
    return FieldError("gpu_memory_utilization",
                      fmt::format("`gpu_memory_utilization` must be in (0, 1], got {:g}",
                                  *o.gpu_memory_utilization));
  }
  p.gpu_memory_utilization = o.gpu_memory_utilization.value_or(p.engine.memory_fraction);
  SW_RETURN_IF_ERROR(MoeOptions(model, o, p));
  SW_ASSIGN_OR_RETURN(p.speculative, Speculative(catalog, model, o));
  if (!(o.prefix_hit_rate >= 0 && o.prefix_hit_rate <= 1)) {
    return FieldError("prefix_hit_rate",
                      fmt::format("`prefix_hit_rate` is the fraction of prompt tokens found in the "
                                  "prefix cache, in [0, 1]; got {:g}",
                                  o.prefix_hit_rate));
  }
  p.prefix_hit_rate = o.prefix_hit_rate;
  if (o.max_batched_tokens) {
    if (*o.max_batched_tokens < 1 || *o.max_batched_tokens > kMaxTokens) {
      return FieldError("max_batched_tokens",
                        "`max_batched_tokens` must be between 1 and 10,000,000");
    }
    p.max_batched_tokens = *o.max_batched_tokens;
  } else {
    p.max_batched_tokens =
        EngineTokenBudget(p.engine, lengths.prompt_tokens, lengths.LongestPrompt());
  }
  s.max_batch = o.max_batch.value_or(static_cast<int64_t>(p.engine.max_num_seqs));
  if (s.max_batch < 1 || s.max_batch > kMaxTokens) {
    return FieldError("max_batch", fmt::format("`max_batch` must be between 1 and 10,000,000, "
                                               "got {}",
                                               s.max_batch));
  }
  if (!o.admission.empty()) {
    SW_ASSIGN_OR_RETURN(AdmissionPolicy admission, ParseAdmission(o.admission));
    s.admission = admission;
  }
  s.search_ep = !o.ChoseEpExchange();
  return s;
}

}  // namespace shardwise::api
