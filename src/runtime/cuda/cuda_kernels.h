// The CUDA backend of the kernel interface (private to the runtime; made through the backend
// registry): tensors live in device memory (fp32, or bf16 for products' inputs, caches and
// weights), ops are the kernels of ops.h and attention_ops.h and cuBLAS products, enqueued on the
// rank's stream. A decode step's ops can be recorded as a CUDA graph and replayed (BeginGraph):
// every per-step value they read is in device memory, refreshed by BeginStep. One rank, one
// thread.
#pragma once

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "attention_ops.h"
#include "shardwise/runtime/backend/kernels.h"
#include "shardwise/runtime/cuda/device.h"

namespace shardwise::cuda {

// The CUDA backend's answer for an op (compute_registry.h).
Status SupportsOp(const OpNeed& op);

StatusOr<std::unique_ptr<Kernels>> MakeCudaKernels(int device);

class CudaTensor final : public Tensor {
 public:
  CudaTensor(TensorKind kind, int64_t rows, int64_t cols) : Tensor(kind, rows, cols) {}
  Elem elem() const { return kind() == TensorKind::kFloat ? Elem::kF32 : Elem::kBf16; }
  void* data() { return elem() == Elem::kF32 ? static_cast<void*>(f32.data()) : bf.data(); }
  const void* data() const {
    return elem() == Elem::kF32 ? static_cast<const void*>(f32.data()) : bf.data();
  }
  DeviceBuffer<float> f32;  // kFloat
  DeviceBuffer<bf16> bf;    // kGemmInput, kCache, kWeight
};

// A backend tensor's device memory.
inline CudaTensor& Dev(Tensor& t) { return static_cast<CudaTensor&>(t); }
inline const CudaTensor& Dev(const Tensor& t) { return static_cast<const CudaTensor&>(t); }
inline float* F32(Tensor& t) { return Dev(t).f32.data(); }
inline const float* F32(const Tensor& t) { return Dev(t).f32.data(); }
inline const float* F32(const Tensor* t) { return t != nullptr ? Dev(*t).f32.data() : nullptr; }
inline const bf16* Bf(const Tensor& t) { return Dev(t).bf.data(); }
inline bf16* Bf(Tensor& t) { return Dev(t).bf.data(); }

// A device copy of host values, uploaded again only when they change.
template <typename T>
struct Mirrored {
  std::vector<T> host;
  DeviceBuffer<T> device;
  // True when the device buffer was (re)allocated.
  StatusOr<bool> Set(std::span<const T> values, cudaStream_t s);
};

// An instantiated CUDA graph, destroyed with its owner.
class GraphExec {
 public:
  explicit GraphExec(cudaGraphExec_t exec) : exec_(exec) {}
  GraphExec(GraphExec&& o) noexcept : exec_(std::exchange(o.exec_, nullptr)) {}
  GraphExec& operator=(GraphExec&&) = delete;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  ~GraphExec() {
    if (exec_ != nullptr) (void)cudaGraphExecDestroy(exec_);
  }
  cudaGraphExec_t get() const { return exec_; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

class CudaKernels final : public Kernels {
 public:
  CudaKernels(int device, Stream stream, BlasHandles blas)
      : device_(device), stream_(std::move(stream)), blas_(std::move(blas)) {}
  ~CudaKernels() override;
  std::string_view name() const override { return "cuda"; }

  StatusOr<TensorPtr> Alloc(TensorKind kind, int64_t rows, int64_t cols) override;
  StatusOr<TensorPtr> Weights(WeightMatrix matrix) override;
  StatusOr<TensorPtr> Floats(std::vector<float> values, int64_t rows, int64_t cols) override;
  StatusOr<TensorPtr> RandomWeights(int64_t rows, int64_t cols, uint64_t seed, float scale,
                                    float offset) override;
  Status Upload(std::span<const float> host, Tensor& t, int64_t offset) override;
  Status Download(const Tensor& t, std::span<float> host, int64_t offset) override;
  float* HostData(const Tensor&) override { return nullptr; }
  Status BeginStep(const StepRows& step) override;

  Status Embed(const Tensor& table, std::span<const int64_t> tokens, Tensor& out) override;
  Status RmsNorm(const Tensor& x, const Tensor& w, Tensor& out, int64_t rows, double eps) override;
  Status AddRmsNorm(Tensor& x, const Tensor& y, const Tensor& w, Tensor& out, int64_t rows,
                    double eps) override;
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
  Status AttendAll(const AttentionQueries& q, const AttentionKeys& keys, Tensor& partial,
                   const Tensor* sinks, Tensor& out) override;

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
  StatusOr<bool> BeginGraph(int64_t key) override;
  Status EndGraph() override;

 private:
  cudaStream_t st() const { return stream_.get(); }
  // The arguments of one attention over `keys`, with its key positions on the device.
  StatusOr<AttendArgs> AttendArguments(const AttentionQueries& q, const AttentionKeys& keys);
  // `values` on the device in a buffer reused per call site (not during graph capture).
  template <typename T>
  StatusOr<T*> Staged(DeviceBuffer<T>& buffer, std::span<const T> values);
  // Grows `buffer` to n elements (waiting for the stream first: the old one may be in use).
  template <typename T>
  Status Ensure(DeviceBuffer<T>& buffer, size_t n);

  int device_;
  Stream stream_;
  BlasHandles blas_;
  // The current step (BeginStep), on the device.
  StepView step_;
  Mirrored<int32_t> seqs_;
  Mirrored<int64_t> positions_, slots_, key_positions_, key_count_, call_key_count_;
  Mirrored<double> rope_;
  Mirrored<int64_t> kv_heads_[2];  // the head maps of up to two attention shapes
  DeviceBuffer<int64_t> call_keys_;
  DeviceBuffer<int32_t> index_;
  DeviceBuffer<float> weights_, workspace_, expanded_;
  DeviceBuffer<bf16> latents_;
  DeviceBuffer<DeviceLogitStat> stats_;
  DeviceBuffer<unsigned long long> first_bad_;
  // CUDA graphs of decode steps, by the pass's key.
  std::map<int64_t, GraphExec> graphs_;
  int64_t capturing_ = -1, replaying_ = -1;
};

template <typename T>
inline Status CudaKernels::Ensure(DeviceBuffer<T>& b, size_t n) {
  if (b.size() >= n) return Status();
  SW_CHECK(capturing_ < 0, "a CUDA graph's ops may not allocate");
  SW_RETURN_IF_ERROR(stream_.Synchronize());
  SW_ASSIGN_OR_RETURN(b, DeviceBuffer<T>::Allocate(n));
  return Status();
}

template <typename T>
inline StatusOr<T*> CudaKernels::Staged(DeviceBuffer<T>& b, std::span<const T> values) {
  SW_CHECK(capturing_ < 0, "a CUDA graph's ops may not upload");
  SW_RETURN_IF_ERROR(Ensure(b, std::max<size_t>(1, values.size())));
  // From pageable memory: the call returns once the values are staged, so they may go.
  SW_RETURN_IF_ERROR(b.CopyFromHost(values, st()));
  return b.data();
}

}  // namespace shardwise::cuda
