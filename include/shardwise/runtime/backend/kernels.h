// Kernels: the compute interface the sharded forward pass (runtime/forward/) runs on, one
// instance per rank, made by the backend registry (backend/registry.h): the CPU's SIMD kernels,
// or CUDA on a GPU. A backend owns the memory of its tensors (host memory on the CPU, device
// memory on CUDA) and the pass holds them through Tensor handles, so the parallel forward pass
// (TP, PP, EP dispatch and combine with redundant experts and capacity, the CP ring and
// sequence-sharded decode, MLA, sliding windows, sinks) is written once and a backend supplies
// only buffers and ops. Rows are tokens, sequence-major: row si x len + t is sequence si's row
// at the step's position t. Ops are issued in order; Download returns when the data is on the
// host. What a backend can compute is answered per op (backend/op_support.h), as ggml's backends
// answer supports_op. An instance belongs to one rank and one thread.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/runtime/rope.h"
#include "shardwise/runtime/weight_matrix.h"

namespace shardwise {

enum class TensorKind {
  kFloat,      // fp32: the residual stream, products' outputs, logits, partial attention, params
  kGemmInput,  // an activation read by a matrix product (fp32 on the CPU, bf16 on CUDA)
  kCache,      // KV caches and key blocks (fp32 on the CPU, bf16 on CUDA)
  kWeight,     // a projection [rows x cols] in the backend's weight storage
};

// A backend's buffer of size() elements; backends derive their own.
class Tensor {
 public:
  virtual ~Tensor() = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  TensorKind kind() const { return kind_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t size() const { return rows_ * cols_; }

 protected:
  Tensor(TensorKind kind, int64_t rows, int64_t cols) : kind_(kind), rows_(rows), cols_(cols) {}

 private:
  TensorKind kind_;
  int64_t rows_, cols_;
};
using TensorPtr = std::unique_ptr<Tensor>;

// Where one forward step's rows sit, shared by every layer of the step (Kernels::BeginStep).
struct StepRows {
  std::vector<int32_t> seqs;           // [sequences]: each sequence's block of the caches
  std::vector<int64_t> positions;      // [len]: absolute position of each sequence's rows
  std::vector<int64_t> store_slots;    // [len]: the cache slot a row's K/V go to, or -1
  std::vector<int64_t> key_positions;  // positions of the cache's slots, this step's included
  RopeFrequencies rope;                // for the step's context (rope.h)
  int64_t rows() const { return static_cast<int64_t>(seqs.size() * positions.size()); }
};

// GQA attention of one rank: its query heads, the KV heads they read, and their width.
struct GqaShape {
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  int64_t head_begin = 0, kv_begin = 0, group = 1;  // query head h reads (head_begin + h) / group
};

// Multi-head latent attention (DeepSeek-V2 paper §2.1, DeepSeek-V3 Technical Report §2.1.1) on
// this rank's heads: Q through an optional low-rank bottleneck, K and V compressed into one latent
// of kv_lora per token plus a shared rotary key of `rope`, both cached (forward/attention_block.cc
// has the two forms).
struct MlaShape {
  int64_t heads = 0, nope = 0, rope = 0, kv_lora = 0, value_dim = 0;
  int64_t qk() const { return nope + rope; }
  int64_t latent() const { return kv_lora + rope; }  // a cache entry: latent, rotary key
};

// Queries of an attention: the step's rows x heads of width dim; query head h reads key head
// kv_head[h] (empty: key head 0 for every head, MLA's shared latent).
struct AttentionQueries {
  const Tensor* q = nullptr;  // kFloat
  int64_t rows = 0;           // the step's rows
  int64_t heads = 0, dim = 0;
  std::span<const int64_t> kv_head;
};

// Keys and values of an attention. Sequence si of the step reads slots [0, n) of block
// b = (by_sequence ? step.seqs[si] : si) of `keys` and `values`, each block `capacity` slots
// of key_stride (values: value_stride) elements; key head g of slot j sits at
// b x capacity x stride + j x stride + g x dim (values: g x value_dim).
struct AttentionKeys {
  const Tensor* keys = nullptr;    // kCache
  const Tensor* values = nullptr;  // kCache; may be `keys` (MLA's latent cache)
  bool by_sequence = true;
  int64_t capacity = 0;
  int64_t key_stride = 0, value_stride = 0, value_dim = 0;
  // Absolute positions of the n slots (n = their count); empty: the step's key_positions.
  std::span<const int64_t> positions;
  int64_t window = 0;  // > 0: a query at p sees keys in (p - window, p]
  float scale = 1.0f;
};

// One row's logits, reduced: the first index of the largest value, the two largest values,
// the largest magnitude, and how many values are not finite (logit_stats on host combine them
// across vocabulary shards).
struct LogitStat {
  int64_t best_index = 0;
  float best = -INFINITY, second = -INFINITY, max_abs = 0;
  int64_t non_finite = 0;
  // Folds in the value at `index`, as TopTwoMargin (reference_check.h) scans a row: a larger value
  // takes the lead (the first index of the largest wins), a tie or a smaller one the second place.
  void Fold(float v, int64_t index) {
    if (v > best) {
      second = best;
      best = v;
      best_index = index;
    } else if (v > second) {
      second = v;
    }
  }
};

// An op whose support differs between backends, as a stage needs it (the registry's entry for
// a backend answers each; the other ops every backend has).
struct OpNeed {
  enum class Kind { kGemm, kAttention };
  Kind kind = Kind::kGemm;
  WeightStorage storage = WeightStorage::kFp32;  // kGemm: the weights' storage
  int64_t key_dim = 0, value_dim = 0;            // kAttention: one head's key and value widths
};

class Kernels {
 public:
  virtual ~Kernels() = default;
  virtual std::string_view name() const = 0;

  // Memory. Alloc'd tensors are zero-filled.
  virtual StatusOr<TensorPtr> Alloc(TensorKind kind, int64_t rows, int64_t cols) = 0;
  virtual StatusOr<TensorPtr> Weights(WeightMatrix matrix) = 0;  // kWeight
  // fp32 parameters [rows x cols] (norms, biases, sinks, routers) as a kFloat tensor.
  virtual StatusOr<TensorPtr> Floats(std::vector<float> values, int64_t rows, int64_t cols) = 0;
  // A kWeight [rows x cols] of offset + scale x U(-1, 1), made where it lives (benchmarks of
  // full-size shapes).
  virtual StatusOr<TensorPtr> RandomWeights(int64_t rows, int64_t cols, uint64_t seed, float scale,
                                            float offset) = 0;
  // Elements [offset, offset + host.size()) of t, converted from or to fp32.
  virtual Status Upload(std::span<const float> host, Tensor& t, int64_t offset = 0) = 0;
  virtual Status Download(const Tensor& t, std::span<float> host, int64_t offset = 0) = 0;
  // t's fp32 elements in host memory when that is where it lives (the CPU), else null: callers
  // then use Download and Upload.
  virtual float* HostData(const Tensor& t) = 0;

  // Makes `step` the current step of every op that follows.
  virtual Status BeginStep(const StepRows& step) = 0;

  // out[r] = embedding row tokens[r] of `table` (kWeight [vocab x n]).
  virtual Status Embed(const Tensor& table, std::span<const int64_t> tokens, Tensor& out) = 0;
  // out = x / rms(x) x w over rows of w.size() values.
  virtual Status RmsNorm(const Tensor& x, const Tensor& w, Tensor& out, int64_t rows,
                         double eps) = 0;
  // x += y, then out = RmsNorm(x): the residual add fused with the next norm.
  virtual Status AddRmsNorm(Tensor& x, const Tensor& y, const Tensor& w, Tensor& out, int64_t rows,
                            double eps);
  // x[i] += y[i] for i < n.
  virtual Status Add(Tensor& x, const Tensor& y, int64_t n) = 0;
  // out[i] = in[i] for i < n, converting kinds.
  virtual Status Copy(const Tensor& in, Tensor& out, int64_t n) = 0;
  virtual Status Zero(Tensor& t, int64_t n) = 0;
  // y[rows x w.rows()] = x . w^T (+ bias [w.rows()]), fp32 accumulation; x kGemmInput.
  virtual Status Gemm(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y,
                      int64_t rows) = 0;
  // The same with an fp32 input and fp32 weights (kFloat), exactly as the CPU computes it
  // (MoE routers: the choice of experts is discrete).
  virtual Status FloatGemm(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y,
                           int64_t rows) = 0;
  // act[r] = silu(g) x u over gate_up[r] = [g (inter) | u (inter)]; limit > 0: gpt-oss's clamped
  // SwiGLU (kernels.h).
  virtual Status SwiGlu(const Tensor& gate_up, Tensor& act, int64_t rows, int64_t inter,
                        float limit) = 0;

  // GQA before attention, from the fused projection qkv [rows x (q | k | v)]: per-head RMSNorm
  // of q and k (q_norm, k_norm, when set), RoPE at the step's positions, q into q_out, and k, v
  // of rows with a store slot into the caches (blocks of `capacity` slots by sequence).
  virtual Status PrepareGqa(const Tensor& qkv, const GqaShape& shape, const Tensor* q_norm,
                            const Tensor* k_norm, double eps, Tensor& q_out, Tensor& k_cache,
                            Tensor& v_cache, int64_t capacity) = 0;
  // MLA before attention: RoPE (interleaved) on q's rotary part in place, and for rows with a
  // store slot the cache entry [RmsNorm(kv's latent) x kv_norm | RoPE(kv's rotary key)].
  virtual Status PrepareMla(Tensor& q, const Tensor& kv, const Tensor& kv_norm, double eps,
                            const MlaShape& shape, Tensor& cache, int64_t capacity) = 0;
  // Absorbed MLA: qa[r][h] = [W_UK[h]^T q_nope[r][h] | q_rope[r][h]] with W_UK[h] the key rows
  // of head h of kv_b (kWeight [heads x (nope + value_dim) x kv_lora]).
  virtual Status MlaAbsorbQuery(const Tensor& q, const Tensor& kv_b, const MlaShape& shape,
                                Tensor& qa, int64_t rows) = 0;
  // Absorbed MLA: out[r][h] = W_UV[h] o_latent[r][h] (kGemmInput [rows x heads x value_dim]).
  virtual Status MlaLiftOutput(const Tensor& o_latent, const Tensor& kv_b, const MlaShape& shape,
                               Tensor& out, int64_t rows) = 0;
  // Expanded MLA: for each of `sequences` blocks of `source` (as AttentionKeys reads it, slots
  // [0, n) of blocks of `capacity` latent entries), each head's key [k_nope | rotary key] into
  // keys [sequences x n x heads x qk] and value into values [sequences x n x heads x value_dim].
  virtual Status MlaExpand(const Tensor& source, bool by_sequence, int64_t capacity,
                           int64_t sequences, int64_t n, const Tensor& kv_b, const MlaShape& shape,
                           Tensor& keys, Tensor& values) = 0;

  // Partial attention state of `rows` x `heads` (partial_attention.h: max, sum, then outputs of
  // value_dim) in a kFloat tensor. fresh: `partial` holds nothing yet; otherwise the keys are
  // merged into it (log-sum-exp).
  virtual Status Attend(const AttentionQueries& q, const AttentionKeys& keys, Tensor& partial,
                        bool fresh) = 0;
  // out [rows x heads x value_dim] (kGemmInput) = the normalised attention of `partial`;
  // `sinks` (kFloat [heads], or null) join each softmax's denominator.
  virtual Status FinishAttention(const Tensor& partial, const Tensor* sinks, int64_t rows,
                                 int64_t heads, int64_t value_dim, Tensor& out) = 0;
  // Attend(fresh) then FinishAttention, for keys that are all there is (no CP).
  virtual Status AttendAll(const AttentionQueries& q, const AttentionKeys& keys, Tensor& partial,
                           const Tensor* sinks, Tensor& out);

  // out[i] = in[index[i]] for rows of `width`.
  virtual Status GatherRows(const Tensor& in, std::span<const int32_t> index, Tensor& out,
                            int64_t width) = 0;
  // out[index[i]] += weight[i] x in[i] for rows of `width` (indices distinct within one call).
  virtual Status ScatterAddRows(const Tensor& in, std::span<const int32_t> index,
                                std::span<const float> weight, Tensor& out, int64_t width) = 0;
  // y[r] += g[r] x s[r] for rows of `width`, g[r] = sigmoid(x[r] . gate) (gate kFloat), or 1
  // without a gate (MoE shared experts).
  virtual Status AddGatedRows(Tensor& y, const Tensor& s, const Tensor& x, const Tensor* gate,
                              int64_t rows, int64_t width) = 0;

  // Per row of logits [rows x width], over its first `valid` columns.
  virtual Status LogitStats(const Tensor& logits, int64_t rows, int64_t width, int64_t valid,
                            std::span<LogitStat> out) = 0;
  // The first of x's first n elements that is not finite, with its value; none: nullopt.
  virtual StatusOr<std::optional<std::pair<int64_t, float>>> FirstNonFinite(const Tensor& x,
                                                                            int64_t n) = 0;

  // A decode step of ops that need no host round trip may be recorded once and replayed
  // (CUDA graphs). BeginGraph: true when the ops of graph `key` must be issued (the backend may
  // record them); false when a recorded graph exists and EndGraph alone replays it.
  virtual StatusOr<bool> BeginGraph(int64_t key);
  virtual Status EndGraph();
};

}  // namespace shardwise
