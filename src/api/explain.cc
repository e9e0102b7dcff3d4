#include "shardwise/api/explain.h"

#include <fmt/format.h>

#include <algorithm>

namespace shardwise::api {

double Explanation::ServedRequestsPerS() const { return estimate.capacity_requests_per_s; }

double Explanation::OutputTokensPerS() const {
  const double osl = static_cast<double>(workload.output_tokens);
  if (!deployment.disaggregated()) {
    return std::min(Step().output_tokens_per_s, estimate.front_end_requests_per_s * osl);
  }
  return ServedRequestsPerS() * osl;
}

bool Explanation::FrontEndBinds() const {
  return estimate.capacity_requests_per_s == estimate.front_end_requests_per_s;
}

namespace {

// A spread of lengths (a replayed run's) is explained at its means: the note says so, and the
// saved answer keeps the spread for the commands that simulate it.
Status KeepLengthSpread(const ExplainRequest& r, Explanation& e) {
  SW_ASSIGN_OR_RETURN(const LengthSpread spread, ResolveLengthSpread(r.lengths));
  if (spread.Fixed() || spread.cv == 0) return Status();  // a spread of CV 0 is fixed lengths
  e.saved.lengths = r.lengths;
  e.notes.push_back(fmt::format(
      "the lengths are spread (prompts {}, outputs {}, CV {:g}); explain prices requests of the "
      "mean lengths, {} + {} tokens: simulate --deployment runs the spread",
      LengthDistributionName(spread.input), LengthDistributionName(spread.output), spread.cv,
      r.context, r.osl));
  return Status();
}

}  // namespace

StatusOr<Explanation> Explain(const Catalog& catalog, const ExplainRequest& r) {
  if (r.batch < 1 || r.batch > 1'000'000) {
    return FieldError("batch", "`batch` must be between 1 and 1,000,000");
  }
  if (r.context < 1 || r.context > 10'000'000) {
    return FieldError("context", "`context` must be between 1 and 10,000,000");
  }
  Explanation e;
  SW_ASSIGN_OR_RETURN(e.model, catalog.Model(r.model));
  std::string profile_note;
  SW_ASSIGN_OR_RETURN(e.cluster, catalog.Cluster(r.cluster, &profile_note));
  if (!profile_note.empty()) e.notes.push_back(profile_note);
  RequestLengths lengths{r.context, r.osl, r.context + r.osl, "context"};
  StatusOr<ServingOptions> options = ResolveServingOptions(catalog, e.model, r.serving, lengths);
  if (!options.ok()) {
    // explain's prompt is its `context`: name that field.
    const Status s = options.status();
    return s.field() == "isl" ? Status(s.code(), s.message(), "context") : s;
  }
  e.options = std::move(options).value();
  SW_ASSIGN_OR_RETURN(e.deployment,
                      ResolveDeployment(catalog, e.model, e.cluster, e.options, r.deployment));
  e.saved = Save("explain", r.model, r.cluster, r.serving, e.deployment, r.context, r.osl);
  SW_RETURN_IF_ERROR(KeepLengthSpread(r, e));
  // The batch explained, as the closed loop that keeps it: `batch` sequences on each replica
  // (or decode worker), which a replay of the file explains, simulates and prices again.
  const Pool& holders = e.deployment.decode();
  e.saved.concurrency =
      r.batch * (e.deployment.disaggregated() ? holders.workers : holders.layout.Replicas());
  e.workload.batch = r.batch;
  e.workload.prompt_tokens = r.context;
  e.workload.output_tokens = r.osl;
  e.workload.decode_context_tokens = r.context;
  SW_ASSIGN_OR_RETURN(e.estimate, EstimateDeployment(e.model, e.deployment, e.workload, r.batch));
  const Pool& prefill = e.deployment.prefill();
  const Pool& decode = e.deployment.decode();
  // The prefill's relative band stands for the whole TTFT, the KV transfer included.
  e.ttft_band = PhaseBand(e.estimate.prefill().one.prefill, prefill.cluster.gpu,
                          prefill.perf.engine, prefill.perf.weight_dtype);
  e.tpot_band =
      PhaseBand(e.Step().decode, decode.cluster.gpu, decode.perf.engine, decode.perf.weight_dtype);
  const StepModel& step = *e.estimate.decode().step;
  e.tp_link = step.TpLink();
  e.ep_link = step.EpLink();
  e.experts_per_gpu = step.shard().experts_per_gpu;
  e.expert_placement_imbalance = step.shard().expert_placement_imbalance;
  AddDeploymentNotes(e.deployment, e.notes);
  return e;
}

}  // namespace shardwise::api
