// The serving simulator's state (sim/sim.h): a request as the simulation tracks it, a
// replica's queues and decode set, and the events of the discrete-event loop. Internal to sim/.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <queue>
#include <utility>
#include <vector>

#include "shardwise/sim/simulator.h"

namespace shardwise::sim_state {

struct Request {
  double arrival_s = 0;
  double first_token_s = -1;
  int64_t prompt = 0;  // tokens to prefill (grows on preemption: recompute)
  int64_t output = 0;  // tokens still to generate, counting the first
  int64_t total_output = 0;
  int64_t prefilled = 0;
  double prefill_done_s = 0;  // disaggregated: when its prompt finished in the prefill pool
  double queued_s = 0;        // when it last reached its replica's queue
  int64_t join_step = 0;      // replica decode step at which it joined the decode set
  size_t replica = 0;         // where the router sent it
  bool admitted = false;      // holds KV for its prompt
  bool done = false;
};

// Request ids by the decode step their last output token comes out of (entries of preempted
// requests go stale and are skipped). A batch of thousands finishes in a few hundred distinct
// steps, so a map of steps costs less than a heap of every sequence.
using FinishSteps = std::map<int64_t, std::vector<int64_t>>;

struct Replica {
  const SimPool* pool = nullptr;
  size_t group = 0;                  // the physical replica whose pipeline stages it shares
  std::deque<int64_t> waiting;       // FCFS; the head may be part-way through prefill
  std::vector<int64_t> decode_lifo;  // decode set in admission order (finished ones skipped)
  FinishSteps finishes;
  int64_t decoding = 0;         // sequences in the decode set
  double sum_base = 0;          // sum over the decode set of (prompt + 1 - join_step)
  double prefill_reserved = 0;  // KV tokens held by admitted, still-prefilling requests
  double guaranteed = 0;        // no-evict: KV reserved for admitted requests' whole life
  int64_t admitted_prefilling = 0;
  int64_t decode_steps = 0;
  int64_t in_flight = 0;  // routed, not finished
  bool busy = false;
  double step_start_s = 0;  // when the iteration in progress (or the last one) started
  double kv_used = 0;       // KV tokens in use when last counted into the total (Sim::Touch)
  // Inter-token gaps: when the last iteration that carried decodes ends, and the first-token
  // times of the sequences that joined the decode set since (their gap runs from there).
  double last_decode_done_s = 0;
  std::vector<double> joined_s;
  // The iteration in progress.
  double step_decode = 0;
  std::vector<std::pair<int64_t, int64_t>> step_prefill;  // (request, tokens) this iteration

  double DecodeContextSum() const {
    return sum_base + static_cast<double>(decoding) * static_cast<double>(decode_steps);
  }
};

// kArrival: an open loop's request is sent; kVisible: a routed request reaches its replica's
// scheduler.
enum class EventKind { kArrival, kVisible, kStepDone, kTransferDone };

struct Event {
  double time_s;
  int64_t order;  // tie-break: insertion order, for determinism
  EventKind kind;
  int64_t index;  // replica for kStepDone, request for kVisible and kTransferDone
  bool operator>(const Event& o) const {
    return time_s != o.time_s ? time_s > o.time_s : order > o.order;
  }
};

}  // namespace shardwise::sim_state
