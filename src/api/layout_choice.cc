#include "layout_choice.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <optional>

#include "shardwise/api/deployment_spec.h"
#include "shardwise/api/plan.h"

namespace shardwise::api {
namespace {

// Lengths spread wider than the few tokens that only put a closed loop's clients out of phase
// (the spread simulate's own out-of-phase run and its note's command use, which must keep the
// layout of the run at fixed lengths).
bool Spread(const LengthSpec& l) {
  return l.distribution != LengthDistribution::kFixed && l.cv > kOutOfPhaseOutputCv;
}

// Output tokens/s within the SLOs: the served ones where no SLO is given.
double GoodTokensPerS(const ServingRun& run) {
  return run.slo.Given() ? run.GoodputOutputTokensPerS() : run.OutputTokensPerS();
}

// Whether a run met its SLOs and kept up with its arrivals: not overloaded, and in an open loop
// its later arrivals waited no longer for their first token than kGrowingQueueDrift allows. The
// run's own overload test compares its halves only when they are long against the requests in
// flight, and its capacity is the step model's at fixed lengths, so a pipeline falling behind
// on spread lengths can pass it (tp4pp4 at 0.4 of a trace's 1.5 requests/s); a short or bursty
// trace can fail this one while keeping up, which the margin in ChooseLayout absorbs.
bool Answers(const ServingRun& run, bool open_loop) {
  const bool kept_up = !open_loop || TtftDrift(run.result) <= kGrowingQueueDrift;
  return !run.overloaded && kept_up && run.MeetsSlo();
}

}  // namespace

bool LengthsVary(const Scenario& s) {
  if (s.trace.empty()) return Spread(s.input) || Spread(s.output);
  for (const TraceRequest& t : s.trace) {
    if (t.input_tokens != s.trace.front().input_tokens ||
        t.output_tokens != s.trace.front().output_tokens) {
      return true;
    }
  }
  return false;
}

bool AllAtOnce(const Scenario& s) {
  if (s.trace.empty()) {
    const auto* open = std::get_if<OpenLoop>(&s.load);
    return open && std::isinf(open->rate_per_s);
  }
  for (const TraceRequest& t : s.trace) {
    if (t.arrival_s != s.trace.front().arrival_s) return false;
  }
  return true;
}

StatusOr<LayoutChoice> ChooseLayout(const Catalog& catalog, const ServingReport& rep,
                                    const Workload& one, const RequestLengths& lengths,
                                    std::vector<std::string>& notes) {
  const Scenario& scenario = rep.scenario;
  const bool compare = LengthsVary(scenario);
  SW_ASSIGN_OR_RETURN(const std::vector<Layout> layouts,
                      PlannersLayouts(rep.model, rep.cluster, rep.options, one, SpreadOf(scenario),
                                      scenario.slo, compare ? kLayoutsCompared : 1));
  if (layouts.size() == 1) return LayoutChoice{layouts.front().ToString(), std::nullopt};
  const bool closed = std::holds_alternative<ClosedLoop>(scenario.load);
  // A run with arrivals to keep up with, or SLOs to meet, has a first layout that answers it.
  const bool first_that_answers = !AllAtOnce(scenario) && (!closed || scenario.slo.Given());
  std::vector<std::string> served;
  std::optional<size_t> best;
  double best_tokens_per_s = -1;
  std::optional<double> first_tokens_per_s;  // plan's first, where it ran
  std::optional<ServingRun> first_run, best_run;
  bool answered = false;
  for (size_t i = 0; i < layouts.size() && !answered; ++i) {
    DeploymentSpec spec;
    spec.layout = layouts[i].ToString();
    StatusOr<ServingRun> run = [&]() -> StatusOr<ServingRun> {
      SW_ASSIGN_OR_RETURN(const Deployment deployment,
                          ResolveDeployment(catalog, rep.model, rep.cluster, rep.options, spec));
      SW_ASSIGN_OR_RETURN(
          const ServingSetup setup,
          PrepareServing(rep.model, deployment, one, lengths.Longest(), Offered(scenario)));
      return Serve(rep.model, setup, scenario);
    }();
    if (!run.ok() || run->result.requests == 0) {
      served.push_back(fmt::format("{} failed: {}", spec.layout,
                                   run.ok() ? "no request finished" : run.status().message()));
      continue;
    }
    const double tokens_per_s = first_that_answers ? GoodTokensPerS(*run) : run->OutputTokensPerS();
    answered = first_that_answers && Answers(*run, !closed);
    served.push_back(fmt::format("{} {:.0f}", spec.layout, tokens_per_s));
    if (i == 0) first_tokens_per_s = tokens_per_s;
    if (answered || tokens_per_s > best_tokens_per_s) {
      // Plan's first is kept aside, not copied, for the margin below.
      if (best == 0) first_run = std::move(best_run);
      best = i;
      best_tokens_per_s = tokens_per_s;
      best_run = std::move(run).value();
    }
  }
  // Serving within kServedShareOfOffered of plan's first counts as serving as much: plan's
  // first stays (a window's tokens/s also count when its last requests drained).
  if (best && !answered && first_tokens_per_s &&
      best_tokens_per_s * kServedShareOfOffered <= *first_tokens_per_s) {
    best = 0;
    best_run = std::move(first_run);
  }
  if (!best) return LayoutChoice{layouts.front().ToString(), std::nullopt};
  if (*best == 0) return LayoutChoice{layouts.front().ToString(), std::move(best_run)};
  const std::string within = first_that_answers && scenario.slo.Given() ? " within the SLOs" : "";
  const std::string rule =
      answered
          ? (closed ? std::string("the first that meets the SLOs is kept")
                    : fmt::format("the first that keeps up with the arrivals{} is kept", within))
          : fmt::format("the one that served the most output tokens/s{} is kept", within);
  notes.push_back(fmt::format(
      "layout {}: plan's first for these lengths is {}, ranked offline; {} were tried on these "
      "requests of differing lengths and {} (output tokens/s{}: {})",
      layouts[*best].ToString(), layouts.front().ToString(),
      served.size() == layouts.size()
          ? fmt::format("its leading {}", layouts.size())
          : fmt::format("{} of its leading {}", served.size(), layouts.size()),
      rule, within, fmt::join(served, ", ")));
  return LayoutChoice{layouts[*best].ToString(), std::move(best_run)};
}

}  // namespace shardwise::api
