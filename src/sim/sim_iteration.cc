// The simulator's admission and iterations: what each replica admits, preempts, prefills and
// decodes in one iteration, and what finishes when it ends.
#include <algorithm>
#include <cmath>

#include "shardwise/deploy/policy.h"
#include "shardwise/perf/attention.h"
#include "sim.h"

namespace shardwise::sim_state {

double Sim::KvUsed(const Replica& r) {
  const SimPool& p = *r.pool;
  const double block = static_cast<double>(p.batch.block_tokens);
  return r.DecodeContextSum() + static_cast<double>(r.decoding) * block + r.prefill_reserved +
         static_cast<double>(r.decoding + r.admitted_prefilling) * p.state_tokens_per_sequence;
}

// KV a request reserves at admission under the policy; a prefill pool holds the prompt only.
double Sim::Reservation(const SimPool& p, const Request& r) {
  const double block = static_cast<double>(p.batch.block_tokens);
  const bool whole_life = ReservesOutput(p.batch.admission) && p.role != PoolRole::kPrefill;
  return p.state_tokens_per_sequence + (whole_life
                                            ? static_cast<double>(r.prompt + r.output) + block
                                            : static_cast<double>(r.prompt) + block);
}

// Frees the most recently admitted decoding sequence back to the queue's front (recompute).
bool Sim::Preempt(Replica& rep) {
  while (!rep.decode_lifo.empty()) {
    const int64_t id = rep.decode_lifo.back();
    rep.decode_lifo.pop_back();
    Request& r = requests_[id];
    if (r.done || !r.admitted) continue;
    const int64_t generated = 1 + (rep.decode_steps - r.join_step);
    if (r.join_step == rep.decode_steps && !rep.joined_s.empty()) rep.joined_s.pop_back();
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
bool Sim::Admit(Replica& rep, Request& r) {
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

// A decode replica admits transferred requests queued by `cutoff_s` straight into its decode
// set, in order (a preempted one at the front is prefilled again like any other).
void Sim::AdmitTransferred(Replica& rep, double cutoff_s) {
  while (!rep.waiting.empty()) {
    const int64_t id = rep.waiting.front();
    Request& r = requests_[id];
    if (r.queued_s > cutoff_s || r.prefilled < r.prompt || !Admit(rep, r)) break;
    rep.waiting.pop_front();
    if (r.first_token_s < 0) r.first_token_s = now_;
    tokens_emitted_ += 1;
    JoinDecode(rep, id);
  }
}

void Sim::JoinDecode(Replica& rep, int64_t id) {
  Request& r = requests_[id];
  r.join_step = rep.decode_steps;
  rep.joined_s.push_back(now_);  // its first token: the next decode iteration's gap starts here
  ++rep.decoding;
  rep.sum_base += static_cast<double>(r.prompt + 1 - r.join_step);
  rep.decode_lifo.push_back(id);
  rep.finishes[r.join_step + r.output - 1].push_back(id);
}

// Request `r` at the head of the queue may prefill: it holds KV for its prompt, admitted now
// if not yet; false when it must wait.
bool Sim::ReadyToPrefill(Replica& rep, Request& r) {
  if (r.admitted) return true;
  if (!Admit(rep, r)) return false;
  rep.prefill_reserved += static_cast<double>(r.prompt + rep.pool->batch.block_tokens);
  ++rep.admitted_prefilling;
  return true;
}

// The latest queueing time of a request this iteration may take. An overlap scheduler
// composed it as the previous iteration started, when the replica runs back to back; if that
// plan holds nothing, its loop plans again at once.
double Sim::PlanCutoff(const Replica& rep) const {
  if (!rep.pool->batch.plans_ahead || !rep.busy) return now_;
  const bool empty_plan =
      rep.decoding == 0 &&
      (rep.waiting.empty() || requests_[rep.waiting.front()].queued_s > rep.step_start_s);
  return empty_plan ? now_ : rep.step_start_s;
}

void Sim::StartStep(int64_t index) {
  Replica& rep = replicas_[index];
  const SimPool& p = *rep.pool;
  const double cutoff_s = PlanCutoff(rep);
  if (p.role == PoolRole::kDecode) AdmitTransferred(rep, cutoff_s);
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
                             requests_[rep.waiting.front()].queued_s <= cutoff_s &&
                             ReadyToPrefill(rep, requests_[rep.waiting.front()]);
  rep.step_decode = prefill_first ? 0.0 : static_cast<double>(rep.decoding);
  int64_t budget = p.batch.max_batched_tokens - static_cast<int64_t>(rep.step_decode);
  // A prompt's chunk runs on one attention-DP rank, within that rank's share of the budget.
  const int64_t rank_budget = std::max<int64_t>(1, p.batch.max_batched_tokens / p.attention_dp);
  for (int64_t id : rep.waiting) {
    if (budget <= 0) break;
    Request& r = requests_[id];
    // First come, first served: no overtaking.
    if (r.queued_s > cutoff_s || !ReadyToPrefill(rep, r)) break;
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
  rep.step_start_s = now_;
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
  if (rep.step_decode > 0) RecordInterTokenGaps(rep, done_s);
  Push(done_s, EventKind::kStepDone, index);
  Touch(rep);
}

// The gap each sequence of the decode iteration ending at `done_s` sees since its previous
// token: from the end of the last iteration that carried decodes for those that were in it,
// from their first token for those that joined since. Iterations without decodes in between
// (a prefill-first engine's prompt iterations) stall them, and the gap counts the stall.
void Sim::RecordInterTokenGaps(Replica& rep, double done_s) {
  const double joined = static_cast<double>(rep.joined_s.size());
  if (InWindow()) {
    const double continuing = rep.step_decode - joined;
    if (continuing > 0) result_.itl_s.Add(done_s - rep.last_decode_done_s, continuing);
    for (const double first_token_s : rep.joined_s) result_.itl_s.Add(done_s - first_token_s, 1);
  }
  rep.joined_s.clear();
  rep.last_decode_done_s = done_s;
}

// Request `id` leaves replica `rep`: it releases what admission reserved there.
void Sim::Leave(Replica& rep, const Request& r) {
  const SimPool& p = *rep.pool;
  if (ReservesOutput(p.batch.admission)) rep.guaranteed -= Reservation(p, r);
  --rep.in_flight;
}

void Sim::FinishRequest(Replica& rep, int64_t id) {
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
  // By arrival time where the run is cut off after a duration (its count is not known before),
  // else by count; every request in the first half when all are measured and neither is known.
  const bool second = std::isfinite(c_.halves_split_s)
                          ? r.arrival_s >= c_.halves_split_s
                          : measure_count_ >= 0 && id - measure_from_ >= measure_count_ / 2;
  SimResult::Half& half = result_.halves[second ? 1 : 0];
  half.ttft_sum_s += ttft;
  half.decode_sum_s += e2e - ttft;
  ++half.requests;
  if (r.total_output > 1) {
    half.tpot_sum_s += tpot;
    ++half.tpot_requests;
  }
  result_.measured_output_tokens += static_cast<double>(r.total_output);
  if (ttft <= c_.max_ttft_s && tpot <= c_.max_tpot_s) {
    result_.goodput_requests += 1;
    result_.goodput_output_tokens += static_cast<double>(r.total_output);
  }
  if (c_.progress && (result_.requests & 0xFFFF) == 0) c_.progress(result_.requests, now_);
}

void Sim::FinishStep(int64_t index) {
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
      if (r.done || !r.admitted || r.join_step < 0 || r.join_step + r.output - 1 != step) continue;
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

}  // namespace shardwise::sim_state
