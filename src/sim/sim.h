// The serving simulator's discrete-event engine (sim/simulator.cc: the event loop, routing and
// the measured window's figures; sim/sim_iteration.cc: admission and each replica's
// iterations). Internal to sim/; Simulation and Simulate (shardwise/sim/simulator.h) are its
// public face.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "event_queue.h"
#include "shardwise/model/accounting.h"
#include "shardwise/sim/front_end.h"
#include "shardwise/sim/simulator.h"
#include "sim_state.h"
#include "thinned_series.h"

namespace shardwise::sim_state {

class Sim {
 public:
  Sim(const ModelSpec& model, RequestSource& source, const SimConfig& c);

  // Runs on until the `count` requests from `from` on (in arrival order) have finished; `from`
  // must not have arrived yet when the simulation has started (a later window of the same run).
  StatusOr<SimResult> Measure(int64_t from, int64_t count);

  int64_t Arrived() const { return static_cast<int64_t>(requests_.size()); }

 private:
  void Push(double t, EventKind kind, int64_t index) { events_.Push(t, kind, index); }

  // An open loop's next request, sent at its arrival time.
  void PullArrival();

  // A client of the closed loop sends its next request now, as its previous one completes: the
  // replica that completed it plans its next iteration before the request can reach it.
  void PullClosedLoop();

  // Queues every request reaching its scheduler at `first`'s time, then starts the idle
  // replicas, so requests arriving together share an iteration.
  void EnqueueVisible(const Event& first);

  void AdvanceClock(double t);

  static double KvUsed(const Replica& r);

  // KV a request reserves at admission under the policy; a prefill pool holds the prompt only.
  static double Reservation(const SimPool& p, const Request& r);

  // KV in use over KV capacity, across the replicas that HoldsKv.
  double Occupancy() const { return kv_used_total_ / kv_capacity_total_; }
  // Whether replica `r` counts toward the KV occupancy: a disaggregated deployment's decode
  // pool holds each sequence for its life; its prefill pool a prompt's only while it prefills.
  bool HoldsKv(const Replica& r) const {
    return !c_.disaggregated() || r.pool == &engine_pools_.back();
  }

  // Counts replica `r`'s KV in use into the total after its state changed (only its own
  // iterations change it: StartStep and FinishStep, which ends in StartStep).
  void Touch(Replica& r);

  // The replica of [first, last) a new request goes to under the router.
  size_t PickReplica(size_t first, size_t last, int64_t& next_rr);

  // Queues request `id` on replica `index` and starts it if idle.
  void Enqueue(size_t index, int64_t id);

  Status Route(const TraceRequest& t);

  // A prefilled request whose KV has arrived queues at a decode replica; its first token leaves
  // when that replica admits it.
  void ToDecodePool(int64_t id);

  // Frees the most recently admitted decoding sequence back to the queue's front (recompute).
  bool Preempt(Replica& rep);

  // Admits request `id` against the replica's KV and batch limits; false when it must wait.
  bool Admit(Replica& rep, Request& r);

  // A decode replica admits transferred requests queued by `cutoff_s` straight into its decode
  // set, in order (a preempted one at the front is prefilled again like any other).
  void AdmitTransferred(Replica& rep, double cutoff_s);

  // The latest queueing time of a request the replica's next iteration may take (an overlap
  // scheduler plans one iteration ahead).
  double PlanCutoff(const Replica& rep) const;

  void JoinDecode(Replica& rep, int64_t id);

  // Request `r` at the head of the queue may prefill: it holds KV for its prompt, admitted now
  // if not yet; false when it must wait.
  bool ReadyToPrefill(Replica& rep, Request& r);

  void StartStep(int64_t index);

  // Each sequence's gap since its previous token, for the decode iteration ending at `done_s`.
  void RecordInterTokenGaps(Replica& rep, double done_s);

  // Request `id` leaves replica `rep`: it releases what admission reserved there.
  void Leave(Replica& rep, const Request& r);

  void FinishRequest(Replica& rep, int64_t id);

  void FinishStep(int64_t index);

  void SampleOccupancy();

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

  SimResult Finish();

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
  double kv_used_total_ = 0;      // sum of the kv_used of the replicas that HoldsKv
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
