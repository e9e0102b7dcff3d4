// The CPU backend of the kernel interface (private to the runtime; made through the backend
// registry): tensors are host vectors (fp32, or a WeightMatrix in the run's weight storage),
// ops are the SIMD kernels of kernels.h and the blockwise attention of partial_attention.h, the
// products split over the rank's thread pool. Every op computes what the CPU RankModel computed
// before the forward pass moved to runtime/forward/, in the same order, so results are unchanged
// bit for bit. One rank, one thread (plus its pool).
#pragma once

#include <memory>
#include <vector>

#include "shardwise/runtime/backend/kernels.h"
#include "shardwise/runtime/thread_pool.h"

namespace shardwise {

class CpuTensor final : public Tensor {
 public:
  CpuTensor(TensorKind kind, int64_t rows, int64_t cols)
      : Tensor(kind, rows, cols), data(static_cast<size_t>(rows * cols), 0.0f) {}
  CpuTensor(int64_t rows, int64_t cols, std::vector<float> values)
      : Tensor(TensorKind::kFloat, rows, cols), data(std::move(values)) {}
  explicit CpuTensor(WeightMatrix w)
      : Tensor(TensorKind::kWeight, w.rows(), w.cols()), weights(std::move(w)) {}
  std::vector<float> data;  // every kind but kWeight
  WeightMatrix weights;     // kWeight
};

class CpuKernels final : public Kernels {
 public:
  explicit CpuKernels(int threads) : pool_(threads) {}
  std::string_view name() const override { return "cpu"; }

  StatusOr<TensorPtr> Alloc(TensorKind kind, int64_t rows, int64_t cols) override;
  StatusOr<TensorPtr> Weights(WeightMatrix matrix) override;
  StatusOr<TensorPtr> Floats(std::vector<float> values, int64_t rows, int64_t cols) override;
  StatusOr<TensorPtr> RandomWeights(int64_t rows, int64_t cols, uint64_t seed, float scale,
                                    float offset) override;
  Status Upload(std::span<const float> host, Tensor& t, int64_t offset) override;
  Status Download(const Tensor& t, std::span<float> host, int64_t offset) override;
  float* HostData(const Tensor& t) override;
  Status BeginStep(const StepRows& step) override;

  Status Embed(const Tensor& table, std::span<const int64_t> tokens, Tensor& out) override;
  Status RmsNorm(const Tensor& x, const Tensor& w, Tensor& out, int64_t rows, double eps) override;
  Status Add(Tensor& x, const Tensor& y, int64_t n) override;
  Status Copy(const Tensor& in, Tensor& out, int64_t n) override;
  Status Zero(Tensor& t, int64_t n) override;
  Status Gemm(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y,
              int64_t rows) override;
  Status FloatGemm(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y,
                   int64_t rows) override;
  Status SwiGlu(const Tensor& gate_up, Tensor& act, int64_t rows, int64_t inter,
                float limit) override;

  Status PrepareGqa(const Tensor& qkv, const GqaShape& shape, const Tensor* q_norm,
                    const Tensor* k_norm, double eps, Tensor& q_out, Tensor& k_cache,
                    Tensor& v_cache, int64_t capacity) override;
  Status PrepareMla(Tensor& q, const Tensor& kv, const Tensor& kv_norm, double eps,
                    const MlaShape& shape, Tensor& cache, int64_t capacity) override;
  Status MlaAbsorbQuery(const Tensor& q, const Tensor& kv_b, const MlaShape& shape, Tensor& qa,
                        int64_t rows) override;
  Status MlaLiftOutput(const Tensor& o_latent, const Tensor& kv_b, const MlaShape& shape,
                       Tensor& out, int64_t rows) override;
  Status MlaExpand(const Tensor& source, bool by_sequence, int64_t capacity, int64_t sequences,
                   int64_t n, const Tensor& kv_b, const MlaShape& shape, Tensor& keys,
                   Tensor& values) override;
  Status Attend(const AttentionQueries& q, const AttentionKeys& keys, Tensor& partial,
                bool fresh) override;
  Status FinishAttention(const Tensor& partial, const Tensor* sinks, int64_t rows, int64_t heads,
                         int64_t value_dim, Tensor& out) override;

  Status GatherRows(const Tensor& in, std::span<const int32_t> index, Tensor& out,
                    int64_t width) override;
  Status ScatterAddRows(const Tensor& in, std::span<const int32_t> index,
                        std::span<const float> weight, Tensor& out, int64_t width) override;
  Status AddGatedRows(Tensor& y, const Tensor& s, const Tensor& x, const Tensor* gate, int64_t rows,
                      int64_t width) override;
  Status LogitStats(const Tensor& logits, int64_t rows, int64_t width, int64_t valid,
                    std::span<LogitStat> out) override;
  StatusOr<std::optional<std::pair<int64_t, float>>> FirstNonFinite(const Tensor& x,
                                                                    int64_t n) override;

 private:
  ThreadPool pool_;
  StepRows step_;
};

// The tensor's host floats (every kind but kWeight) or its weight matrix.
const std::vector<float>& Data(const Tensor& t);
std::vector<float>& Data(Tensor& t);
const WeightMatrix& Matrix(const Tensor& t);

}  // namespace shardwise
