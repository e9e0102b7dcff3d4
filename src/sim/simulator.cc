#include "shardwise/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <optional>
#include <queue>

#include "event_queue.h"
#include "shardwise/model/accounting.h"
#include "shardwise/perf/attention.h"
#include "shardwise/price/price.h"
#include "shardwise/sim/front_end.h"
#include "sim_state.h"
#include "thinned_series.h"

namespace shardwise::sim_state {

class Sim {
 public:
  Sim(const ModelSpec& model, RequestSource& source, const SimConfig& c)
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
    for (const Replica& r : replicas_) kv_capacity_total_ += r.pool->kv_capacity_tokens;
  }

  // Runs on until the `count` requests from `from` on (in arrival order) have finished; `from`
  // must not have arrived yet when the simulation has started (a later window of the same run).
  StatusOr<SimResult> Measure(int64_t from, int64_t count) {
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

  int64_t Arrived() const { return static_cast<int64_t>(requests_.size()); }

 private:
  void Push(double t, EventKind kind, int64_t index) { events_.Push(t, kind, index); }

  // An open loop's next request, sent at its arrival time.
  void PullArrival() {
    if (auto r = source_.Next()) {
      pending_.push_back(*r);
      Push(r->arrival_s, EventKind::kArrival, 0);
    }
  }

  // A client of the closed loop sends its next request now, as its previous one completes: the
  // replica that completed it plans its next iteration before the request can reach it.
  void PullClosedLoop() {
    if (now_ >= c_.stop_after_s) return;
    if (auto r = source_.Next()) {
      r->arrival_s = now_;
      if (closed_loop_status_.ok()) closed_loop_status_ = Route(*r);
    }
  }

  // Queues every request reaching its scheduler at `first`'s time, then starts the idle
  // replicas, so requests arriving together share an iteration.
  void EnqueueVisible(const Event& first) {
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

  void AdvanceClock(double t) {
    // Time-weighted KV occupancy, across replicas.
    if (t > now_) {
      const double occ = Occupancy();
      kv_weighted_ += occ * (t - now_);
      // Every state the mean integrates counts toward the maximum, so mean <= max.
      result_.kv_occupancy_max = std::max(result_.kv_occupancy_max, occ);
      now_ = t;
    }
  }

  static double KvUsed(const Replica& r) {
    const SimPool& p = *r.pool;
    const double block = static_cast<double>(p.batch.block_tokens);
    return r.DecodeContextSum() + static_cast<double>(r.decoding) * block + r.prefill_reserved +
           static_cast<double>(r.decoding + r.admitted_prefilling) * p.state_tokens_per_sequence;
  }

  // KV a request reserves at admission under the policy; a prefill pool holds the prompt only.
  static double Reservation(const SimPool& p, const Request& r) {
    const double block = static_cast<double>(p.batch.block_tokens);
    const bool whole_life = ReservesOutput(p.batch.admission) && p.role != PoolRole::kPrefill;
    return p.state_tokens_per_sequence + (whole_life
                                              ? static_cast<double>(r.prompt + r.output) + block
                                              : static_cast<double>(r.prompt) + block);
  }

  // KV in use over KV capacity, across every replica of every pool.
  double Occupancy() const { return kv_used_total_ / kv_capacity_total_; }

  // Counts replica `r`'s KV in use into the total after its state changed (only its own
  // iterations change it: StartStep and FinishStep, which ends in StartStep).
  void Touch(Replica& r) {
    const double used = KvUsed(r);
    kv_used_total_ += used - r.kv_used;
    r.kv_used = used;
  }

  // The replica of [first, last) a new request goes to under the router.
  size_t PickReplica(size_t first, size_t last, int64_t& next_rr) {
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
  void Enqueue(size_t index, int64_t id) {
    Replica& rep = replicas_[index];
    rep.waiting.push_back(id);
    if (rep.busy) return;
    if (defer_start_) {
      deferred_.push_back(index);
    } else {
      StartStep(static_cast<int64_t>(index));
    }
  }

  Status Route(const TraceRequest& t) {
    SW_RETURN_IF_ERROR(CheckRequestFits(engine_pools_, t));
    const int64_t id = static_cast<int64_t>(requests_.size());
    if (id == 0 && measure_count_ < 0) window_start_ = Snap();
    if (measure_count_ >= 0 && id == measure_from_) window_start_ = Snap();
    if (measure_count_ >= 0 && id == measure_from_ + measure_count_) window_end_ = Snap();
    if (Measured(id)) {
      result_.input_tokens += static_cast<double>(t.input_tokens);
      result_.output_tokens_asked += static_cast<double>(t.output_tokens);
      ++result_.window_arrivals;
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
  void ToDecodePool(int64_t id) {
    Request& r = requests_[id];
    transfer_s_ += now_ - r.prefill_done_s;
    ++transfers_;
    r.replica = PickReplica(static_cast<size_t>(decode_first_), replicas_.size(), next_decode_rr_);
    ++replicas_[r.replica].in_flight;
    Enqueue(r.replica, id);
  }

  // Frees the most recently admitted decoding sequence back to the queue's front (recompute).
  bool Preempt(Replica& rep) {
    while (!rep.decode_lifo.empty()) {
      const int64_t id = rep.decode_lifo.back();
      rep.decode_lifo.pop_back();
      Request& r = requests_[id];
      if (r.done || !r.admitted) continue;
      const int64_t generated = 1 + (rep.decode_steps - r.join_step);
      rep.sum_base -= static_cast<double>(r.prompt + 1 - r.join_step);
      --rep.decoding;
      r.prompt += generated;  // the tokens so far are prefilled again
      r.output -= generated;
      r.prefilled = 0;
      r.admitted = false;
      r.join_step = -1;  // its entry in the finish heap is now stale
      rep.waiting.push_front(id);
      ++result_.preemptions;
      return true;
    }
    return false;
  }

  // Admits request `id` against the replica's KV and batch limits; false when it must wait.
  bool Admit(Replica& rep, Request& r) {
    const SimPool& p = *rep.pool;
    const bool no_evict = ReservesOutput(p.batch.admission);
    const double committed = no_evict ? rep.guaranteed : KvUsed(rep);
    const bool room = rep.decoding + rep.admitted_prefilling < p.batch.max_batch &&
                      committed + Reservation(p, r) <= p.kv_capacity_tokens;
    if (!room) return false;
    r.admitted = true;
    if (no_evict) rep.guaranteed += Reservation(p, r);
    return true;
  }

  // A decode replica admits transferred requests straight into its decode set, in order (a
  // preempted one at the front is prefilled again like any other).
  void AdmitTransferred(Replica& rep) {
    while (!rep.waiting.empty()) {
      const int64_t id = rep.waiting.front();
      Request& r = requests_[id];
      if (r.prefilled < r.prompt || !Admit(rep, r)) break;
      rep.waiting.pop_front();
      if (r.first_token_s < 0) r.first_token_s = now_;
      tokens_emitted_ += 1;
      JoinDecode(rep, id);
    }
  }

  void JoinDecode(Replica& rep, int64_t id) {
    Request& r = requests_[id];
    r.join_step = rep.decode_steps;
    ++rep.decoding;
    rep.sum_base += static_cast<double>(r.prompt + 1 - r.join_step);
    rep.decode_lifo.push_back(id);
    rep.finishes[r.join_step + r.output - 1].push_back(id);
  }

  // Request `r` at the head of the queue may prefill: it holds KV for its prompt, admitted now
  // if not yet; false when it must wait.
  bool ReadyToPrefill(Replica& rep, Request& r) {
    if (r.admitted) return true;
    if (!Admit(rep, r)) return false;
    rep.prefill_reserved += static_cast<double>(r.prompt + rep.pool->batch.block_tokens);
    ++rep.admitted_prefilling;
    return true;
  }

  void StartStep(int64_t index) {
    Replica& rep = replicas_[index];
    const SimPool& p = *rep.pool;
    if (p.role == PoolRole::kDecode) AdmitTransferred(rep);
    // Every decoding sequence grows by one token: make room, preempting if the cache is full
    // (never needed under no-evict, whose reservations cover the growth).
    while (rep.decoding > 0 &&
           KvUsed(rep) + static_cast<double>(rep.decoding) > p.kv_capacity_tokens) {
      if (!Preempt(rep)) break;
    }
    rep.step_prefill.clear();
    const bool chunked = ChunksPrompts(p.batch.schedule);
    const bool prefill_first = !DecodesBesidePrefill(p.batch.schedule) &&
                               p.role != PoolRole::kDecode && !rep.waiting.empty() &&
                               ReadyToPrefill(rep, requests_[rep.waiting.front()]);
    rep.step_decode = prefill_first ? 0.0 : static_cast<double>(rep.decoding);
    int64_t budget = p.batch.max_batched_tokens - static_cast<int64_t>(rep.step_decode);
    // A prompt's chunk runs on one attention-DP rank, within that rank's share of the budget.
    const int64_t rank_budget = std::max<int64_t>(1, p.batch.max_batched_tokens / p.attention_dp);
    for (int64_t id : rep.waiting) {
      if (budget <= 0) break;
      Request& r = requests_[id];
      if (!ReadyToPrefill(rep, r)) break;  // first come, first served: no overtaking
      const int64_t rest = r.prompt - r.prefilled;
      // Without chunking a prompt runs whole: it waits for an iteration with room for it (one
      // longer than the whole budget runs as the iteration's only prompt).
      if (!chunked && rest > std::min(budget, rank_budget) &&
          (rest <= rank_budget || !rep.step_prefill.empty())) {
        break;
      }
      const int64_t chunk = chunked ? std::min({budget, rank_budget, rest}) : rest;
      rep.step_prefill.emplace_back(id, chunk);
      budget -= chunk;
    }
    // Each chunk attends to its prompt's prefix already in the cache and to its own earlier
    // tokens; a chunk sits on one attention-DP rank, the rest spread evenly.
    double prefill_tokens = 0;
    double pairs = 0;
    double largest_chunk = 0;
    for (const auto& [id, tokens] : rep.step_prefill) {
      const double chunk = static_cast<double>(tokens);
      prefill_tokens += chunk;
      pairs += ChunkPairs(static_cast<double>(requests_[id].prefilled), chunk, 0);
      largest_chunk = std::max(largest_chunk, chunk);
    }
    if (rep.step_decode == 0 && prefill_tokens == 0) {
      rep.busy = false;
      Touch(rep);
      return;
    }
    const double context = rep.step_decode > 0 ? rep.DecodeContextSum() / rep.step_decode : 0.0;
    const double rank_tokens =
        std::max(prefill_tokens / static_cast<double>(p.attention_dp), largest_chunk);
    const double keys_per_token = prefill_tokens > 0 ? pairs / prefill_tokens : 0.0;
    const double seconds =
        p.table->StepSeconds(rep.step_decode, context, rank_tokens, keys_per_token);
    // Model FLOPs of the iteration, for MFU.
    if (rep.step_decode > 0) {
      flops_ += rep.step_decode *
                (matmul_flops_per_token_ + attention_flops_(static_cast<int64_t>(context)));
    }
    for (const auto& [id, tokens] : rep.step_prefill) {
      const Request& r = requests_[id];
      flops_ += static_cast<double>(tokens) *
                (matmul_flops_per_token_ + attention_flops_(r.prefilled + tokens / 2));
    }
    rep.busy = true;
    // A pipeline's stages each hold 1/stages of the replica's GPUs for 1/stages of the
    // iteration, after whatever iteration of another virtual engine holds them.
    const double stages = static_cast<double>(std::max<int64_t>(1, p.pipeline_stages));
    busy_gpu_s_ += seconds / stages * static_cast<double>(p.gpus_per_replica);
    double done_s = now_;
    for (double& free_s : stage_free_s_[rep.group]) {
      done_s = std::max(done_s, free_s) + seconds / stages;
      free_s = done_s;
    }
    ++result_.steps;
    if (rep.step_decode > 0 && InWindow()) result_.itl_s.Add(done_s - now_, rep.step_decode);
    Push(done_s, EventKind::kStepDone, index);
    Touch(rep);
  }

  // Request `id` leaves replica `rep`: it releases what admission reserved there.
  void Leave(Replica& rep, const Request& r) {
    const SimPool& p = *rep.pool;
    if (ReservesOutput(p.batch.admission)) rep.guaranteed -= Reservation(p, r);
    --rep.in_flight;
  }

  void FinishRequest(Replica& rep, int64_t id) {
    Request& r = requests_[id];
    r.done = true;
    Leave(rep, r);
    if (c_.concurrency > 0) ++sends_;  // its client's next request, once the iteration is done
    if (!Measured(id)) return;
    ++result_.requests;
    const double ttft = r.first_token_s - r.arrival_s;
    const double e2e = now_ - r.arrival_s;
    result_.ttft_s.Add(ttft);
    result_.e2e_s.Add(e2e);
    double tpot = 0;
    if (r.total_output > 1) {
      tpot = (now_ - r.first_token_s) / static_cast<double>(r.total_output - 1);
      result_.tpot_s.Add(tpot);
    }
    // Every request in the first half when all are measured (the run's length is not known).
    const bool second = measure_count_ >= 0 && id - measure_from_ >= measure_count_ / 2;
    SimResult::Half& half = result_.halves[second ? 1 : 0];
    half.ttft_sum_s += ttft;
    ++half.requests;
    if (r.total_output > 1) {
      half.tpot_sum_s += tpot;
      ++half.tpot_requests;
    }
    if (ttft <= c_.max_ttft_s && tpot <= c_.max_tpot_s) {
      result_.goodput_requests += 1;
      result_.goodput_output_tokens += static_cast<double>(r.total_output);
    }
    if (c_.progress && (result_.requests & 0xFFFF) == 0) c_.progress(result_.requests, now_);
  }

  void FinishStep(int64_t index) {
    Replica& rep = replicas_[index];
    if (rep.step_decode > 0) ++rep.decode_steps;
    tokens_emitted_ += rep.step_decode;
    // Sequences whose last output token came out of this iteration.
    while (!rep.finishes.empty() && rep.finishes.begin()->first <= rep.decode_steps) {
      auto due = rep.finishes.extract(rep.finishes.begin());
      const int64_t step = due.key();
      std::vector<int64_t>& ids = due.mapped();
      std::sort(ids.begin(), ids.end());  // one step's finish in request order
      for (const int64_t id : ids) {
        Request& r = requests_[id];
        if (r.done || !r.admitted || r.join_step < 0 || r.join_step + r.output - 1 != step)
          continue;
        rep.sum_base -= static_cast<double>(r.prompt + 1 - r.join_step);
        --rep.decoding;
        FinishRequest(rep, id);
      }
    }
    // Prefill progress; a completed prompt emits its first token now and starts decoding.
    for (const auto& [id, tokens] : rep.step_prefill) {
      Request& r = requests_[id];
      r.prefilled += tokens;
      if (r.prefilled < r.prompt) continue;
      rep.waiting.erase(std::find(rep.waiting.begin(), rep.waiting.end(), id));
      rep.prefill_reserved -= static_cast<double>(r.prompt + rep.pool->batch.block_tokens);
      --rep.admitted_prefilling;
      if (r.output <= 1) {
        if (r.first_token_s < 0) r.first_token_s = now_;
        tokens_emitted_ += 1;
        FinishRequest(rep, id);
        continue;
      }
      if (rep.pool->role == PoolRole::kPrefill) {
        // The prompt's KV leaves for the decode pool; the prefill replica frees it.
        Leave(rep, r);
        r.admitted = false;
        r.prefill_done_s = now_;
        Push(now_ + c_.transfer_latency_s + c_.transfer_s_per_token * static_cast<double>(r.prompt),
             EventKind::kTransferDone, id);
        continue;
      }
      if (r.first_token_s < 0) r.first_token_s = now_;
      tokens_emitted_ += 1;
      JoinDecode(rep, id);
    }
    SampleOccupancy();
    for (; sends_ > 0; --sends_) PullClosedLoop();
    StartStep(index);
  }

  void SampleOccupancy() {
    const double occ = Occupancy();
    result_.kv_occupancy_max = std::max(result_.kv_occupancy_max, occ);
    occupancy_series_.Offer(now_, occ, result_.kv_occupancy);
  }

  // Running totals the window's rates are differences of.
  struct Snapshot {
    double time_s = 0;
    double busy_gpu_s = 0;
    double flops = 0;
    double tokens = 0;
    double kv_weighted = 0;
  };
  Snapshot Snap() const { return {now_, busy_gpu_s_, flops_, tokens_emitted_, kv_weighted_}; }

  bool Measured(int64_t id) const {
    return measure_count_ < 0 || (id >= measure_from_ && id < measure_from_ + measure_count_);
  }
  // Whether now lies in the measured window.
  bool InWindow() const { return window_start_.has_value() && !window_end_.has_value(); }

  SimResult Finish() {
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
      result_.utilization = (end.busy_gpu_s - start.busy_gpu_s) / (gpus * result_.window_s);
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

  const ModelSpec& model_;
  RequestSource& source_;
  const SimConfig& c_;
  std::vector<SimPool> engine_pools_;  // the config's pools, as each virtual engine runs them
  std::vector<Replica> replicas_;      // pool 0's, then from decode_first_ pool 1's
  std::vector<std::vector<double>> stage_free_s_;  // per physical replica: when each stage frees
  int64_t decode_first_ = 0;
  double transfer_s_ = 0;  // summed over the transfers
  int64_t transfers_ = 0;
  int64_t next_decode_rr_ = 0;
  std::vector<Request> requests_;
  EventQueue events_;
  std::deque<TraceRequest> pending_;  // open loop: the next request to send
  std::vector<FrontEnd> front_ends_;  // per physical replica of the first pool
  Status closed_loop_status_;         // the first failure to route a closed loop's request
  int64_t sends_ = 0;                 // closed-loop requests completed in this iteration
  bool defer_start_ = false;
  std::vector<size_t> deferred_;  // replicas given requests while starts were deferred
  double kv_used_total_ = 0;      // sum of the replicas' kv_used
  double kv_capacity_total_ = 0;
  int64_t next_rr_ = 0;
  double now_ = 0;
  double kv_weighted_ = 0;
  double flops_ = 0;
  double busy_gpu_s_ = 0;      // GPU-seconds of the iterations started
  double tokens_emitted_ = 0;  // output tokens, first tokens included
  std::optional<Snapshot> window_start_, window_end_;
  int64_t measure_from_ = 0;    // the window measured: [measure_from_, measure_from_ + count)
  int64_t measure_count_ = -1;  // < 0: every request, and the run drains
  bool started_ = false;
  double matmul_flops_per_token_ = 0;
  AttentionFlopsCurve attention_flops_;
  ThinnedSeries occupancy_series_;
  SimResult result_;
};

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
