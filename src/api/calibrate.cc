#include "shardwise/api/calibrate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <future>

#include "shardwise/api/simulate.h"
#include "shardwise/emit/launch_config.h"

namespace shardwise::api {
namespace calibrate {

enum class Metric { kTtft, kTpot };

// A profile field calibrate may fit: the metric it drives, the value it is doubled from when it
// is zero (the smallest that matters), and the most it may take (the profile parser's range).
struct FitField {
  const char* name;
  Metric metric;
  double floor;
  double upper;
  double EngineProfile::*member;
  const char* where_it_shows;  // for the error when the runs cannot determine it
};

constexpr FitField kFields[] = {
    {"step_overhead_s", Metric::kTpot, 1e-4, 0.1, &EngineProfile::step_overhead_s,
     "small batches, where a step is short"},
    {"host_launch_s_per_kernel", Metric::kTpot, 1e-6, 1e-3,
     &EngineProfile::host_launch_s_per_kernel, "batches beyond the CUDA graphs"},
    {"request_path_s", Metric::kTtft, 1e-3, 1.0, &EngineProfile::request_path_s,
     "light loads with short prompts"},
    {"tokenize_s_per_token", Metric::kTtft, 1e-7, 1e-4, &EngineProfile::tokenize_s_per_token,
     "light loads with long prompts"},
};

constexpr double kMinSensitivity = 0.01;  // the metric moves 1% when the field doubles
constexpr double kSolvedLogError = 1e-3;
constexpr int kMaxSteps = 14;
constexpr int kRounds = 3;
constexpr double kLengthTolerance = 0.10;
constexpr size_t kMaxRuns = 64;

const char* MetricName(Metric m) { return m == Metric::kTtft ? "TTFT" : "TPOT"; }

double Of(const RunLatency& l, Metric m) { return m == Metric::kTtft ? l.ttft_ms : l.tpot_ms; }
double Of(const BenchmarkRun& r, Metric m) {
  return m == Metric::kTtft ? r.mean_ttft_ms : r.mean_tpot_ms;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The lower-case last path part of a model id, for comparing "meta-llama/Llama-3.1-8B-Instruct"
// with the catalog's "meta-llama/Llama-3.1-8B".
std::string Stem(std::string_view id) {
  std::string out(id.substr(id.find_last_of('/') + 1));
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

class Fitter {
 public:
  Fitter(const Catalog& catalog, const CalibrateRequest& request, std::vector<BenchmarkRun> runs)
      : catalog_(catalog), request_(request), runs_(std::move(runs)) {}

  const std::vector<BenchmarkRun>& runs() const { return runs_; }

  // Each of `which` runs predicted with `profile`, in parallel.
  StatusOr<std::vector<RunLatency>> Predict(const EngineProfile& profile,
                                            const std::vector<size_t>& which) const {
    std::vector<std::future<StatusOr<RunLatency>>> futures;
    for (size_t i : which) {
      futures.push_back(std::async(std::launch::async,
                                   [this, &profile, i] { return PredictOne(profile, runs_[i]); }));
    }
    std::vector<RunLatency> out;
    for (auto& f : futures) {
      StatusOr<RunLatency> l = f.get();
      if (!l.ok()) return l.status();
      out.push_back(*l);
    }
    return out;
  }

  // The mean log error of `field`'s metric over `which` with the field at `x`.
  StatusOr<double> LogError(EngineProfile profile, const FitField& field, double x,
                            const std::vector<size_t>& which) const {
    profile.*field.member = x;
    SW_ASSIGN_OR_RETURN(const std::vector<RunLatency> pred, Predict(profile, which));
    double sum = 0;
    for (size_t k = 0; k < which.size(); ++k) {
      sum += std::log(Of(pred[k], field.metric) / Of(runs_[which[k]], field.metric));
    }
    return sum / static_cast<double>(which.size());
  }

  // The median |log change| of `field`'s metric when it doubles from its value (or floor);
  // `at_value` are `profile`'s own predictions of `which`.
  StatusOr<double> Sensitivity(const EngineProfile& profile, const FitField& field,
                               const std::vector<size_t>& which,
                               const std::vector<RunLatency>& at_value) const {
    EngineProfile a = profile, b = profile;
    a.*field.member = std::max(profile.*field.member, field.floor);
    b.*field.member = 2 * a.*field.member;
    std::vector<RunLatency> pa = at_value;
    if (a.*field.member != profile.*field.member) {
      SW_ASSIGN_OR_RETURN(pa, Predict(a, which));
    }
    SW_ASSIGN_OR_RETURN(const std::vector<RunLatency> pb, Predict(b, which));
    std::vector<double> moves;
    for (size_t k = 0; k < which.size(); ++k) {
      moves.push_back(std::abs(std::log(Of(pb[k], field.metric) / Of(pa[k], field.metric))));
    }
    return Median(moves);
  }

  // `field` solved on `which` (mean log error zero), from its value in `profile`; `at_bound`
  // is set when the runs want it beyond [0, upper].
  StatusOr<double> Solve(const EngineProfile& profile, const FitField& field,
                         const std::vector<size_t>& which, bool& at_bound) const {
    at_bound = false;
    double a = std::clamp(profile.*field.member, field.floor, field.upper);
    SW_ASSIGN_OR_RETURN(double ga, LogError(profile, field, a, which));
    if (std::abs(ga) < kSolvedLogError) return a;
    // Bracket the root: double (or halve) until the error changes sign or a bound is reached.
    double b = a, gb = ga;
    for (int step = 0; step < kMaxSteps && (gb > 0) == (ga > 0); ++step) {
      a = b;
      ga = gb;
      if (ga < 0) {
        if (b >= field.upper) {
          at_bound = true;
          return field.upper;
        }
        b = std::min(2 * b, field.upper);
      } else {
        b = b <= field.floor / 4 ? 0 : b / 2;
      }
      SW_ASSIGN_OR_RETURN(gb, LogError(profile, field, b, which));
      if (b == 0 && gb > 0) {
        at_bound = true;
        return 0.0;
      }
    }
    if ((gb > 0) == (ga > 0)) return b;
    // Illinois regula falsi between a and b.
    for (int step = 0; step < kMaxSteps; ++step) {
      const double x = b - gb * (b - a) / (gb - ga);
      SW_ASSIGN_OR_RETURN(const double gx, LogError(profile, field, x, which));
      if (std::abs(gx) < kSolvedLogError || std::abs(b - a) < 1e-4 * std::max(a, b)) return x;
      if ((gx > 0) == (gb > 0)) {
        ga /= 2;
      } else {
        a = b;
        ga = gb;
      }
      b = x;
      gb = gx;
    }
    return b;
  }

  // The fields in turn until none moves by over 1%.
  StatusOr<EngineProfile> Fit(EngineProfile profile, const std::vector<const FitField*>& fields,
                              const std::vector<size_t>& which,
                              std::vector<CalibratedField>* report) const {
    for (int round = 0; round < kRounds; ++round) {
      bool moved = false;
      for (size_t f = 0; f < fields.size(); ++f) {
        const FitField& field = *fields[f];
        bool at_bound = false;
        const double before = profile.*field.member;
        SW_ASSIGN_OR_RETURN(const double x, Solve(profile, field, which, at_bound));
        profile.*field.member = x;
        if (report && at_bound && x >= field.upper) return BeyondTheBound(profile, field, which);
        moved = moved || std::abs(x - before) > 0.01 * std::max(before, field.floor);
        if (report) (*report)[f].at_bound = at_bound;
        if (report && request_.progress) {
          request_.progress(fmt::format(
              "round {}: {} = {:.4g} ({})", round + 1, field.name, x,
              at_bound ? fmt::format("at its bound: the mean {} error cannot reach zero",
                                     MetricName(field.metric))
                       : fmt::format("mean {} error solved to zero", MetricName(field.metric))));
        }
      }
      if (!moved) break;
    }
    return profile;
  }

  // The runs want `field` beyond the most a profile takes (`profile` holds it at that bound):
  // they are unexplained (a unit or an edit gone wrong, another engine or layout), and a profile
  // fitted to them would mislead every later command. The error names the run it misses most.
  Status BeyondTheBound(const EngineProfile& profile, const FitField& field,
                        const std::vector<size_t>& which) const {
    SW_ASSIGN_OR_RETURN(const std::vector<RunLatency> predicted, Predict(profile, which));
    size_t worst = 0;
    double worst_error = -1;
    for (size_t k = 0; k < which.size(); ++k) {
      const double error =
          std::abs(std::log(Of(predicted[k], field.metric) / Of(runs_[which[k]], field.metric)));
      if (error > worst_error) {
        worst_error = error;
        worst = k;
      }
    }
    const BenchmarkRun& run = runs_[which[worst]];
    return FailedPrecondition(
        fmt::format("the runs want {} above {:g}, the most a profile takes: there the model "
                    "still predicts a mean {} of {:.4g} ms for {} against {:.4g} ms measured; "
                    "check the results' units, lengths and concurrency and the layout and "
                    "engine they ran (no profile written)",
                    field.name, field.upper, MetricName(field.metric),
                    Of(predicted[worst], field.metric), run.file, Of(run, field.metric)),
        "results");
  }

 private:
  StatusOr<RunLatency> PredictOne(const EngineProfile& profile, const BenchmarkRun& run) const {
    SimulateRequest s;
    s.model = request_.model;
    s.cluster = request_.cluster;
    s.serving = request_.serving;
    s.serving.engine_profile = profile;
    s.deployment = DeploymentSpec::Aggregated(request_.layout);
    s.workload.isl = std::max<int64_t>(1, std::llround(run.input_tokens));
    s.workload.osl = std::max<int64_t>(1, std::llround(run.output_tokens));
    if (run.concurrency) {
      s.concurrency = run.concurrency;
    } else {
      s.rate = run.rate_per_s;
      if (std::isfinite(*run.rate_per_s)) s.burstiness = run.burstiness;
    }
    // The tools measure their requests from an idle server (each lets its warm-up finish
    // first): a closed loop's clients start in one burst, an open loop's arrivals on an empty
    // engine. So a run is simulated as it ran, its completed requests every one measured; a
    // file that does not say how many is taken at the steady state (offline: one request).
    const bool offline = !run.concurrency && !std::isfinite(*run.rate_per_s);
    if (run.completed > 0 || offline) {
      s.requests = std::clamp<int64_t>(run.completed, 1, kMaxRunRequests);
    }
    StatusOr<ServingReport> rep = Simulate(catalog_, s);
    if (!rep.ok()) return Error(fmt::format("{}: {}", run.file, rep.status().message()));
    const SimResult& r = rep->run.result;
    return RunLatency{r.ttft_s.Mean() * 1e3, r.tpot_s.Mean() * 1e3};
  }

  const Catalog& catalog_;
  const CalibrateRequest& request_;
  std::vector<BenchmarkRun> runs_;
};

StatusOr<std::vector<const FitField*>> FieldsOf(const CalibrateRequest& r) {
  std::vector<std::string> names = r.fit;
  if (names.empty()) names = {"step_overhead_s", "request_path_s"};
  std::vector<const FitField*> out;
  for (const FitField& f : kFields) {
    if (std::find(names.begin(), names.end(), f.name) == names.end()) continue;
    for (const FitField* other : out) {
      if (other->metric == f.metric) {
        return FieldError("fit", fmt::format("`fit` names {} and {}, which both move {}: the "
                                             "runs cannot tell them apart; fit one of them",
                                             other->name, f.name, MetricName(f.metric)));
      }
    }
    out.push_back(&f);
  }
  for (const std::string& n : names) {
    if (std::none_of(out.begin(), out.end(), [&](const FitField* f) { return f->name == n; })) {
      return FieldError("fit", fmt::format("`fit`: '{}' is not a calibratable field; use {}", n,
                                           fmt::join(CalibratableFields(), ", ")));
    }
  }
  return out;
}

// The runs of every file, checked against the request's model and lengths.
StatusOr<std::vector<BenchmarkRun>> ReadRuns(const CalibrateRequest& r, const ModelSpec& model) {
  if (r.results.empty()) {
    return FieldError("results", "`results` names no file: give the benchmark result files");
  }
  const std::string expected = emit::HuggingFaceRepo(r.model);
  const std::string stem = Stem(expected.empty() ? model.name : expected);
  std::vector<BenchmarkRun> runs;
  std::vector<std::filesystem::path> seen;  // each file once: a file given twice is one run
  for (const std::string& path : r.results) {
    std::error_code ec;
    const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
    if (!ec && std::find(seen.begin(), seen.end(), canonical) != seen.end()) {
      return FieldError("results", fmt::format("`results` names {} twice; give each run's file "
                                               "once",
                                               path));
    }
    seen.push_back(canonical);
    StatusOr<std::vector<BenchmarkRun>> read = ReadBenchmarkResults(path);
    if (!read.ok()) return read.status().WithField("results");
    for (BenchmarkRun run : read.value()) {
      const std::string got = Stem(run.model_id);
      if (!run.model_id.empty() && !got.starts_with(stem) && !stem.starts_with(got)) {
        return FieldError("results", fmt::format("{}: measured model '{}', not {} ({}); give "
                                                 "the results of the model calibrated",
                                                 run.file, run.model_id, r.model, expected));
      }
      for (const auto& [asked, mean, field] :
           {std::tuple{r.isl, run.input_tokens, "isl"}, {r.osl, run.output_tokens, "osl"}}) {
        if (asked && std::abs(mean / static_cast<double>(*asked) - 1) > kLengthTolerance) {
          return FieldError("results", fmt::format("{}: its requests averaged {:.0f} {} tokens, "
                                                   "not the `{}` {} given: results of another "
                                                   "length",
                                                   run.file, mean, field, field, *asked));
        }
      }
      if (run.input_tokens + run.output_tokens >
          static_cast<double>(model.max_position_embeddings)) {
        return FieldError("results",
                          fmt::format("{}: {:.0f} + {:.0f} tokens per request exceed {}'s "
                                      "context of {}: results of another model",
                                      run.file, run.input_tokens, run.output_tokens, model.name,
                                      model.max_position_embeddings));
      }
      runs.push_back(std::move(run));
    }
  }
  if (runs.size() > kMaxRuns) {
    return FieldError("results", fmt::format("`results` hold {} runs; calibrate takes at most {}",
                                             runs.size(), kMaxRuns));
  }
  return runs;
}

std::vector<size_t> AllBut(size_t n, std::optional<size_t> skip) {
  std::vector<size_t> out;
  for (size_t i = 0; i < n; ++i) {
    if (i != skip) out.push_back(i);
  }
  return out;
}

// The fitted profile's file: the starting one with the fitted fields measured from the runs.
nlohmann::json ProfileFile(nlohmann::json base, const CalibrateReport& rep,
                           const std::vector<std::string>& files, double held_out_tpot,
                           double held_out_ttft) {
  base["name"] = rep.base + "-calibrated";
  base["description"] = fmt::format("{}; calibrated by shardwise calibrate on {}",
                                    base.value("description", ""), fmt::join(files, ", "));
  std::vector<std::string> loads;
  for (const CalibratedRun& r : rep.runs) loads.push_back(r.run.LoadName());
  for (const CalibratedField& f : rep.fields) {
    nlohmann::json& entry = base["fields"][f.name];
    entry["value"] = f.fitted;
    entry["provenance"] = "measured";
    entry["source"] = fmt::format(
        "shardwise calibrate: solved so that the mean {} of {} measured runs ({}) of {} of {} on "
        "{} is predicted {} (was {:g} in {}); leave-one-out median error TPOT {}, TTFT {}; "
        "results: {}",
        f.metric, rep.runs.size(), fmt::join(loads, ", "), rep.layout, rep.model, rep.gpu,
        f.bias != 0
            ? fmt::format("as closely as its lower bound allows, {:+.0f}% off", 100 * f.bias)
            : std::string("without bias"),
        f.shipped, rep.base,
        std::isnan(held_out_tpot) ? "n/a" : fmt::format("{:.1f}%", 100 * held_out_tpot),
        std::isnan(held_out_ttft) ? "n/a" : fmt::format("{:.1f}%", 100 * held_out_ttft),
        fmt::join(files, ", "));
  }
  return base;
}

}  // namespace calibrate

std::vector<std::string> CalibratableFields() {
  std::vector<std::string> names;
  for (const calibrate::FitField& f : calibrate::kFields) names.emplace_back(f.name);
  return names;
}

StatusOr<CalibrateReport> Calibrate(const Catalog& catalog, const CalibrateRequest& r) {
  using namespace calibrate;
  CalibrateReport rep;
  if (r.layout.empty()) {
    return FieldError("layout", "`layout` is required: the layout the benchmark ran");
  }
  SW_ASSIGN_OR_RETURN(const std::vector<const FitField*> candidates, FieldsOf(r));
  SW_ASSIGN_OR_RETURN(const ModelSpec model, catalog.Model(r.model));
  SW_ASSIGN_OR_RETURN(const ClusterSpec cluster, catalog.Cluster(r.cluster));
  std::string source;
  SW_ASSIGN_OR_RETURN(const nlohmann::json base_file, catalog.EngineFile(r.serving.engine, source));
  SW_ASSIGN_OR_RETURN(const EngineProfile base, ParseEngineProfile(base_file, source));
  SW_ASSIGN_OR_RETURN(std::vector<BenchmarkRun> runs, ReadRuns(r, model));
  rep.base = base.name;
  rep.model = model.name;
  rep.layout = r.layout;
  rep.gpu = cluster.gpu.name;
  const Fitter fitter(catalog, r, std::move(runs));
  const size_t n = fitter.runs().size();
  const std::vector<size_t> all = AllBut(n, std::nullopt);
  SW_ASSIGN_OR_RETURN(const std::vector<RunLatency> shipped, fitter.Predict(base, all));
  // A field the runs cannot determine is an error when the request named it; of the default
  // fields it keeps its shipped value, said in a note.
  std::vector<const FitField*> fields;
  std::string undetermined;  // why each default field was left out
  for (const FitField* f : candidates) {
    SW_ASSIGN_OR_RETURN(const double s, fitter.Sensitivity(base, *f, all, shipped));
    if (s >= kMinSensitivity) {
      fields.push_back(f);
      rep.fields.push_back({f->name, MetricName(f->metric), base.*f->member, 0, s, false});
      continue;
    }
    const std::string why = fmt::format(
        "the results cannot determine {}: doubling it moves the predicted mean {} of these runs "
        "by {:.2f}% (median); add runs at {}",
        f->name, MetricName(f->metric), 100 * s, f->where_it_shows);
    if (!r.fit.empty()) return FieldError("fit", why + ", or fit without it (`fit`)");
    rep.notes.push_back(fmt::format("{}; it keeps {}'s {:g}", why, base.name, base.*f->member));
    undetermined += fmt::format("{}{} ({}: {:g})", undetermined.empty() ? "" : "; ", why, base.name,
                                base.*f->member);
  }
  if (fields.empty()) {
    return FieldError(
        "fit", fmt::format("the results determine none of the fields to fit: {}", undetermined));
  }
  SW_ASSIGN_OR_RETURN(rep.fitted, fitter.Fit(base, fields, all, &rep.fields));
  for (size_t k = 0; k < fields.size(); ++k) rep.fields[k].fitted = rep.fitted.*fields[k]->member;
  SW_ASSIGN_OR_RETURN(const std::vector<RunLatency> fitted, fitter.Predict(rep.fitted, all));
  for (size_t i = 0; i < n; ++i) {
    rep.runs.push_back({fitter.runs()[i], shipped[i], fitted[i], std::nullopt});
  }
  // Fields held at their lower bound (the upper one is refused in Fit) may leave a bias in
  // their metric that no other field removed: said, per metric, with the fields that stopped.
  for (const Metric metric : {Metric::kTtft, Metric::kTpot}) {
    std::vector<size_t> held;
    for (size_t k = 0; k < fields.size(); ++k) {
      if (fields[k]->metric == metric && rep.fields[k].at_bound) held.push_back(k);
    }
    if (held.empty()) continue;
    double log_error = 0;  // the fit's own measure: the mean log of predicted / measured
    for (size_t i = 0; i < n; ++i) {
      const BenchmarkRun& run = fitter.runs()[i];
      log_error += metric == Metric::kTtft ? std::log(fitted[i].ttft_ms / run.mean_ttft_ms)
                                           : std::log(fitted[i].tpot_ms / run.mean_tpot_ms);
    }
    log_error /= static_cast<double>(n);
    if (std::abs(log_error) < kSolvedLogError) continue;
    std::vector<std::string> names;
    for (size_t k : held) {
      rep.fields[k].bias = std::exp(log_error) - 1;
      names.push_back(fmt::format("{} ({:g})", fields[k]->name, rep.fitted.*fields[k]->member));
    }
    rep.notes.push_back(fmt::format(
        "{} stopped at the lower bound: the fitted profile still predicts these runs' mean {} "
        "{:+.0f}% off (geometric mean); runs this much faster than the model allows usually ran "
        "another layout, weight format or engine than the one given",
        fmt::join(names, " and "), MetricName(metric), 100 * (std::exp(log_error) - 1)));
  }
  std::vector<double> held_tpot, held_ttft;
  for (size_t i = 0; n > 1 && i < n; ++i) {
    if (r.progress) r.progress(fmt::format("leave-one-out: {} of {}", i + 1, n));
    SW_ASSIGN_OR_RETURN(const EngineProfile others,
                        fitter.Fit(rep.fitted, fields, AllBut(n, i), nullptr));
    SW_ASSIGN_OR_RETURN(const std::vector<RunLatency> one, fitter.Predict(others, {i}));
    rep.runs[i].held_out = one[0];
    const BenchmarkRun& run = fitter.runs()[i];
    held_tpot.push_back(std::abs(one[0].tpot_ms / run.mean_tpot_ms - 1));
    held_ttft.push_back(std::abs(one[0].ttft_ms / run.mean_ttft_ms - 1));
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  rep.profile = ProfileFile(base_file, rep, r.results, n > 1 ? Median(held_tpot) : nan,
                            n > 1 ? Median(held_ttft) : nan);
  SW_ASSIGN_OR_RETURN(rep.fitted, ParseEngineProfile(rep.profile, rep.base + "-calibrated"));
  return rep;
}

nlohmann::json ToJson(const CalibrateReport& rep) {
  auto latency = [](const RunLatency& l) {
    return nlohmann::json{{"ttft_ms", l.ttft_ms}, {"tpot_ms", l.tpot_ms}};
  };
  nlohmann::json fields = nlohmann::json::array(), runs = nlohmann::json::array();
  for (const CalibratedField& f : rep.fields) {
    fields.push_back({{"name", f.name},
                      {"metric", f.metric},
                      {"shipped", f.shipped},
                      {"fitted", f.fitted},
                      {"sensitivity", f.sensitivity},
                      {"at_bound", f.at_bound}});
  }
  std::vector<double> errors[3][2];  // shipped, fitted, held out x TTFT, TPOT
  for (const CalibratedRun& r : rep.runs) {
    const BenchmarkRun& m = r.run;
    runs.push_back({{"file", m.file},
                    {"format", m.format},
                    {"load", m.LoadName()},
                    {"input_tokens", m.input_tokens},
                    {"output_tokens", m.output_tokens},
                    {"measured", latency({m.mean_ttft_ms, m.mean_tpot_ms})},
                    {"shipped", latency(r.shipped)},
                    {"fitted", latency(r.fitted)},
                    {"held_out", r.held_out ? latency(*r.held_out) : nlohmann::json()}});
    const RunLatency* predictions[3] = {&r.shipped, &r.fitted, r.held_out ? &*r.held_out : nullptr};
    for (int p = 0; p < 3; ++p) {
      if (!predictions[p]) continue;
      errors[p][0].push_back(std::abs(predictions[p]->ttft_ms / m.mean_ttft_ms - 1));
      errors[p][1].push_back(std::abs(predictions[p]->tpot_ms / m.mean_tpot_ms - 1));
    }
  }
  nlohmann::json medians;
  const char* names[3] = {"shipped", "fitted", "held_out"};
  for (int p = 0; p < 3; ++p) {
    medians[names[p]] = errors[p][0].empty()
                            ? nlohmann::json()
                            : nlohmann::json{{"ttft", calibrate::Median(errors[p][0])},
                                             {"tpot", calibrate::Median(errors[p][1])}};
  }
  return {{"command", "calibrate"},
          {"base_profile", rep.base},
          {"profile_name", rep.fitted.name},
          {"model", rep.model},
          {"layout", rep.layout},
          {"gpu", rep.gpu},
          {"fields", fields},
          {"runs", runs},
          {"median_abs_error", medians},
          {"notes", rep.notes},
          {"profile", rep.profile}};
}

}  // namespace shardwise::api
