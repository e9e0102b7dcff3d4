// Softmax attention computed block by block over keys that may live on other ranks (context
// parallelism). A partial result keeps, per query row and head, the running maximum score m,
// the sum of exp(score - m) and the unnormalised output sum exp(score - m) v; two partials over
// disjoint key sets combine exactly by the log-sum-exp merge (the online softmax of "Online
// normalizer calculation for softmax", Milakov & Gimelshein 2018, as FlashAttention and ring
// attention use it). Prefill under CP passes key blocks round the CP ring ("Ring Attention with
// Blockwise Transformers", Liu et al. 2023); decode merges every CP rank's partial over its own
// shard of the KV cache. Masks use each key's and query's absolute position, so the chunks a CP
// rank holds need not be contiguous. Thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/runtime/comm/communicator.h"
#include "shardwise/runtime/thread_pool.h"

namespace shardwise {

// Queries of `rows` rows x `heads` heads of width `dim`, head h reading key head kv_head[h].
struct QueryBlock {
  const float* q = nullptr;
  int64_t rows = 0, heads = 0, dim = 0;
  const int64_t* positions = nullptr;  // [rows]
  const int64_t* kv_head = nullptr;    // [heads]
};

// n keys and values: head g of key j at keys[j * key_stride + g * dim] (the query's width),
// values likewise at values[j * value_stride + g * value_dim].
struct KeyBlock {
  const float* keys = nullptr;
  const float* values = nullptr;
  int64_t key_stride = 0, value_stride = 0, value_dim = 0;
  const int64_t* positions = nullptr;  // [n]
  int64_t n = 0;
};

// A partial result of `rows` x `heads` cells in caller memory: max [rows x heads], sum
// [rows x heads], out [rows x heads x value_dim].
struct PartialView {
  float* max = nullptr;
  float* sum = nullptr;
  float* out = nullptr;
  int64_t rows = 0, heads = 0, value_dim = 0;
  // The cells of rows [first, first + count).
  PartialView Rows(int64_t first, int64_t count) const;
  // max = -inf, sum = 0, out = 0: no key seen yet.
  void Reset() const;
};
// Floats of a partial result of rows x heads cells laid out in one buffer, max then sum then
// out, so it travels in one collective.
int64_t PartialFloats(int64_t rows, int64_t heads, int64_t value_dim);
// The view of such a buffer.
PartialView PartialOf(float* data, int64_t rows, int64_t heads, int64_t value_dim);

// Adds the keys of `block` that each query may see (position <= the query's, and inside the
// last `window` positions when window > 0) to `state`, scores scaled by `scale`; the heads are
// split over `pool`'s threads when there is one.
void AccumulateAttention(const QueryBlock& q, const KeyBlock& block, int64_t window, float scale,
                         const PartialView& state, ThreadPool* pool = nullptr);
// state = state (+) other over disjoint keys (log-sum-exp merge).
void MergeAttention(const PartialView& state, const PartialView& other);
// out[rows x heads x value_dim] = the normalised attention; `sinks` (per head logits, or null)
// join each softmax's denominator without a value (gpt-oss's attention sinks).
void FinishAttention(const PartialView& state, const float* sinks, float* out);

// Runs `attend` on this rank's packed key block and then on every other CP rank's, passed
// round the ring (cp.size() - 1 hops). Blocks are equal-sized on every rank.
Status RingPass(Communicator& cp, std::vector<float> block,
                const std::function<void(const std::vector<float>&)>& attend);
// Gathers every CP rank's partial over its own keys (`data` as PartialOf lays it out) and
// merges them (in rank order, so every rank ends with bit-identical results).
Status MergeAcrossRanks(Communicator& cp, std::span<float> data, int64_t rows, int64_t heads,
                        int64_t value_dim);

}  // namespace shardwise
