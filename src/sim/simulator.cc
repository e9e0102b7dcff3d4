#include "shardwise/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "shardwise/price/price.h"
#include "sim.h"

namespace shardwise::sim_state {

Sim::Sim(const ModelSpec& model, RequestSource& source, const SimConfig& c)
    : model_(model), source_(source), c_(c), attention_flops_(model) {
  matmul_flops_per_token_ = 2.0 * static_cast<double>(CountParams(model).active_matmul);
  engine_pools_.reserve(c.pools.size());
  for (const SimPool& pool : c.pools) {
    if (&pool == &c.pools.back() && c.disaggregated()) {
      decode_first_ = static_cast<int64_t>(replicas_.size());
    }
    // A pipeline's replica is `stages` virtual engines, each with its share of the KV cache.
    const int64_t stages = std::max<int64_t>(1, pool.pipeline_stages);
    SimPool& engine = engine_pools_.emplace_back(pool);
    engine.kv_capacity_tokens = pool.kv_capacity_tokens / static_cast<double>(stages);
    for (int64_t r = 0; r < pool.replicas; ++r) {
      stage_free_s_.emplace_back(static_cast<size_t>(stages), 0.0);
      for (int64_t v = 0; v < stages; ++v) {
        Replica& rep = replicas_.emplace_back();
        rep.pool = &engine;
        rep.group = stage_free_s_.size() - 1;
      }
    }
  }
  if (!c.disaggregated()) decode_first_ = static_cast<int64_t>(replicas_.size());
  // An API server per physical replica, each its own engine (requests enter the first pool).
  front_ends_.assign(stage_free_s_.size(), FrontEnd(c.request_path_s, c.tokenize_s_per_token));
  events_ = EventQueue(front_ends_.size());
  for (const Replica& r : replicas_) {
    if (HoldsKv(r)) kv_capacity_total_ += r.pool->kv_capacity_tokens;
  }
}

// Runs on until the `count` requests from `from` on (in arrival order) have finished; `from`
// must not have arrived yet when the simulation has started (a later window of the same run).
StatusOr<SimResult> Sim::Measure(int64_t from, int64_t count) {
  measure_from_ = from;
  measure_count_ = count;
  transfer_s_ = 0;  // the window's own KV transfers
  transfers_ = 0;
  window_start_.reset();
  window_end_.reset();
  if (!started_) {
    started_ = true;
    if (c_.concurrency > 0) {
      for (int64_t i = 0; i < c_.concurrency; ++i) PullClosedLoop();
      SW_RETURN_IF_ERROR(closed_loop_status_);
    } else {
      PullArrival();
    }
  }
  while (!events_.Empty()) {
    const Event e = events_.Top();
    events_.Pop();
    AdvanceClock(e.time_s);
    if (e.kind == EventKind::kArrival) {
      SW_RETURN_IF_ERROR(Route(pending_.front()));
      pending_.pop_front();
      PullArrival();
    } else if (e.kind == EventKind::kVisible) {
      EnqueueVisible(e);
    } else if (e.kind == EventKind::kTransferDone) {
      ToDecodePool(e.index);
    } else {
      FinishStep(e.index);
      SW_RETURN_IF_ERROR(closed_loop_status_);
    }
    if (measure_count_ >= 0 && result_.requests >= measure_count_) break;
  }
  return Finish();
}

// An open loop's next request, sent at its arrival time.
void Sim::PullArrival() {
  if (auto r = source_.Next()) {
    pending_.push_back(*r);
    Push(r->arrival_s, EventKind::kArrival, 0);
  }
}

// A client of the closed loop sends its next request now, as its previous one completes: the
// replica that completed it plans its next iteration before the request can reach it.
void Sim::PullClosedLoop() {
  if (now_ >= c_.stop_after_s) return;
  if (auto r = source_.Next()) {
    r->arrival_s = now_;
    if (closed_loop_status_.ok()) closed_loop_status_ = Route(*r);
  }
}

// Queues every request reaching its scheduler at `first`'s time, then starts the idle
// replicas, so requests arriving together share an iteration.
void Sim::EnqueueVisible(const Event& first) {
  defer_start_ = true;
  for (Event e = first;;) {
    Enqueue(requests_[e.index].replica, e.index);
    if (events_.Empty() || events_.Top().kind != EventKind::kVisible ||
        events_.Top().time_s != first.time_s) {
      break;
    }
    e = events_.Top();
    events_.Pop();
  }
  defer_start_ = false;
  for (size_t i : deferred_) {
    if (!replicas_[i].busy) StartStep(static_cast<int64_t>(i));
  }
  deferred_.clear();
}

void Sim::AdvanceClock(double t) {
  // Time-weighted KV occupancy, across replicas.
  if (t > now_) {
    const double occ = Occupancy();
    kv_weighted_ += occ * (t - now_);
    // Every state the mean integrates counts toward the maximum, so mean <= max.
    result_.kv_occupancy_max = std::max(result_.kv_occupancy_max, occ);
    now_ = t;
  }
}

// Counts replica `r`'s KV in use into the total after its state changed (only its own
// iterations change it: StartStep and FinishStep, which ends in StartStep).
void Sim::Touch(Replica& r) {
  const double used = KvUsed(r);
  if (HoldsKv(r)) kv_used_total_ += used - r.kv_used;
  r.kv_used = used;
}

// The replica of [first, last) a new request goes to under the router.
size_t Sim::PickReplica(size_t first, size_t last, int64_t& next_rr) {
  if (std::holds_alternative<RoundRobinRouter>(c_.router)) {
    return first + static_cast<size_t>(next_rr++ % static_cast<int64_t>(last - first));
  }
  size_t target = first;
  for (size_t i = first + 1; i < last; ++i) {
    if (replicas_[i].in_flight < replicas_[target].in_flight) target = i;
  }
  return target;
}

// Queues request `id` on replica `index` and starts it if idle.
void Sim::Enqueue(size_t index, int64_t id) {
  Replica& rep = replicas_[index];
  rep.waiting.push_back(id);
  requests_[id].queued_s = now_;
  if (rep.busy) return;
  if (defer_start_) {
    deferred_.push_back(index);
  } else {
    StartStep(static_cast<int64_t>(index));
  }
}

Status Sim::Route(const TraceRequest& t) {
  SW_RETURN_IF_ERROR(CheckRequestFits(engine_pools_, t));
  const int64_t id = static_cast<int64_t>(requests_.size());
  if (id == 0 && measure_count_ < 0) window_start_ = Snap();
  if (measure_count_ >= 0 && id == measure_from_) window_start_ = Snap();
  if (measure_count_ >= 0 && id == measure_from_ + measure_count_ && !c_.window_until_drained) {
    window_end_ = Snap();
  }
  if (Measured(id)) {
    result_.input_tokens += static_cast<double>(t.input_tokens);
    result_.output_tokens_asked += static_cast<double>(t.output_tokens);
    ++result_.window_arrivals;
    if (measure_count_ > 0) {
      // This request and the measured ones before it not yet finished.
      const int64_t in_system = id - measure_from_ + 1 - result_.requests;
      if (id == measure_from_) result_.first_arrival_s = t.arrival_s;
      if (id == measure_from_ + measure_count_ / 2) {
        result_.in_system_at_middle = in_system;
        result_.middle_arrival_s = t.arrival_s;
      }
      if (id == measure_from_ + measure_count_ - 1) {
        result_.in_system_at_last = in_system;
        result_.last_arrival_s = t.arrival_s;
      }
    }
  }
  Request r;
  r.arrival_s = t.arrival_s;
  r.prompt = t.input_tokens;
  r.output = r.total_output = t.output_tokens;
  // Cached prefix tokens need no prefill (at least the last token is computed).
  r.prefilled = std::min<int64_t>(
      std::max<int64_t>(0, r.prompt - 1),
      static_cast<int64_t>(std::llround(static_cast<double>(r.prompt) * c_.prefix_hit_rate)));
  r.replica = PickReplica(0, static_cast<size_t>(decode_first_), next_rr_);
  ++replicas_[r.replica].in_flight;
  // It reaches the scheduler through the replica's front end.
  const size_t group = replicas_[r.replica].group;
  events_.PushVisible(group, front_ends_[group].Visible(r.arrival_s, r.prompt), id);
  requests_.push_back(r);
  return Status();
}

// A prefilled request whose KV has arrived queues at a decode replica; its first token leaves
// when that replica admits it.
void Sim::ToDecodePool(int64_t id) {
  Request& r = requests_[id];
  transfer_s_ += now_ - r.prefill_done_s;
  ++transfers_;
  r.replica = PickReplica(static_cast<size_t>(decode_first_), replicas_.size(), next_decode_rr_);
  ++replicas_[r.replica].in_flight;
  Enqueue(r.replica, id);
}

void Sim::SampleOccupancy() {
  const double occ = Occupancy();
  result_.kv_occupancy_max = std::max(result_.kv_occupancy_max, occ);
  occupancy_series_.Offer(now_, occ, result_.kv_occupancy);
}

SimResult Sim::Finish() {
  const double first = requests_.empty() ? 0 : requests_.front().arrival_s;
  result_.makespan_s = now_ - first;
  result_.arrived = static_cast<int64_t>(requests_.size());
  const Snapshot start = window_start_.value_or(Snapshot{first, 0, 0, 0, 0});
  const Snapshot end = window_end_.value_or(Snap());
  result_.window_s = end.time_s - start.time_s;
  result_.output_tokens = end.tokens - start.tokens;
  // GPUs, peak FLOP/s and dollars per hour of every pool.
  double gpus = 0, peak = 0, usd_per_hour = 0;
  for (const SimPool& p : c_.pools) {
    const double pool_gpus = static_cast<double>(p.replicas * p.gpus_per_replica);
    gpus += pool_gpus;
    peak += p.peak_flops_per_s * pool_gpus;
    usd_per_hour += p.usd_per_gpu_hour * pool_gpus;
  }
  if (transfers_ > 0) result_.kv_transfer_s_mean = transfer_s_ / static_cast<double>(transfers_);
  if (result_.window_s > 0) {
    // An iteration counts when it starts, so a window ending during one holds all of it: at
    // most one iteration per replica beyond the window, never more than every GPU busy.
    result_.utilization =
        std::min(1.0, (end.busy_gpu_s - start.busy_gpu_s) / (gpus * result_.window_s));
    result_.mfu = (end.flops - start.flops) / (peak * result_.window_s);
    result_.kv_occupancy_mean = (end.kv_weighted - start.kv_weighted) / result_.window_s;
  }
  result_.usd_per_mtok_output = UsdPerMtok(usd_per_hour, result_.OutputTokensPerS());
  // The window's figures leave with the result; the run's own counts carry on into the next.
  SimResult out;
  std::swap(out, result_);
  result_.preemptions = out.preemptions;
  result_.steps = out.steps;
  result_.kv_occupancy_max = out.kv_occupancy_max;
  result_.kv_occupancy = out.kv_occupancy;
  return out;
}

}  // namespace shardwise::sim_state

namespace shardwise {

Simulation::Simulation(const ModelSpec& model, RequestSource& source, const SimConfig& config)
    : config_status_(CheckSimConfig(config)) {
  if (config_status_.ok()) sim_ = std::make_unique<sim_state::Sim>(model, source, config);
}

Simulation::~Simulation() = default;

StatusOr<SimResult> Simulation::Measure(int64_t from, int64_t count) {
  SW_RETURN_IF_ERROR(config_status_);
  if (count >= 0 && from < sim_->Arrived()) {
    return Error("internal: a later window must start at a request not yet arrived");
  }
  return sim_->Measure(from, count);
}

int64_t Simulation::Arrived() const { return sim_ ? sim_->Arrived() : 0; }

StatusOr<SimResult> Simulate(const ModelSpec& model, RequestSource& source,
                             const SimConfig& config) {
  SW_RETURN_IF_ERROR(CheckSimConfig(config));
  sim_state::Sim sim(model, source, config);
  return sim.Measure(config.measure_from, config.measure_count);
}

}  // namespace shardwise
