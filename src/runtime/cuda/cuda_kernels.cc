// The CUDA backend's memory, step, element-wise ops, products, reductions and graphs (attention
// is in cuda_attention_kernels.cc).
#include "cuda_kernels.h"

#include <fmt/format.h>

#include <algorithm>

#include "shardwise/runtime/cuda/gemm.h"

namespace shardwise::cuda {
Status SupportsOp(const OpNeed& op) {
  if (op.kind == OpNeed::Kind::kGemm && op.storage == WeightStorage::kInt8) {
    return Error(
        "int8 weights run on the CPU kernels only (the CUDA backend computes in bf16); use "
        "`dtype` bf16 or `device_compute` cpu");
  }
  if (op.kind == OpNeed::Kind::kAttention &&
      std::max(op.key_dim, op.value_dim) > MaxAttentionHeadDim()) {
    return Error(fmt::format(
        "the CUDA attention kernel takes heads up to {} wide, this attention needs {}; use "
        "`device_compute` cpu",
        MaxAttentionHeadDim(), std::max(op.key_dim, op.value_dim)));
  }
  return Status();
}

StatusOr<std::unique_ptr<Kernels>> MakeCudaKernels(int device) {
  SW_RETURN_IF_ERROR(UseDevice(device));
  SW_ASSIGN_OR_RETURN(Stream stream, Stream::Create());
  SW_ASSIGN_OR_RETURN(BlasHandles blas, BlasHandles::Create(stream.get()));
  return std::unique_ptr<Kernels>(
      std::make_unique<CudaKernels>(device, std::move(stream), std::move(blas)));
}

template <typename T>
StatusOr<bool> Mirrored<T>::Set(std::span<const T> values, cudaStream_t s) {
  if (std::equal(values.begin(), values.end(), host.begin(), host.end())) return false;
  bool grown = false;
  if (device.size() < std::max<size_t>(1, values.size())) {
    SW_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(s), "cudaStreamSynchronize"));
    SW_ASSIGN_OR_RETURN(device, DeviceBuffer<T>::Allocate(std::max<size_t>(1, values.size() * 2)));
    grown = true;
  }
  host.assign(values.begin(), values.end());
  SW_RETURN_IF_ERROR(device.CopyFromHost(std::span<const T>(host), s));
  return grown;
}
template struct Mirrored<int32_t>;
template struct Mirrored<int64_t>;
template struct Mirrored<double>;

CudaKernels::~CudaKernels() {
  if (capturing_ >= 0) {  // an op failed while a graph was recorded
    cudaGraph_t graph = nullptr;
    (void)cudaStreamEndCapture(st(), &graph);
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
  }
  (void)cudaStreamSynchronize(st());
}

StatusOr<TensorPtr> CudaKernels::Alloc(TensorKind kind, int64_t rows, int64_t cols) {
  SW_CHECK(capturing_ < 0, "a CUDA graph's ops may not allocate");
  SW_RETURN_IF_ERROR(UseDevice(device_));
  auto t = std::make_unique<CudaTensor>(kind, rows, cols);
  const size_t n = static_cast<size_t>(rows * cols);
  if (t->elem() == Elem::kF32) {
    SW_ASSIGN_OR_RETURN(t->f32, DeviceBuffer<float>::Allocate(n));
  } else {
    SW_ASSIGN_OR_RETURN(t->bf, DeviceBuffer<bf16>::Allocate(n));
  }
  if (n > 0) {
    SW_RETURN_IF_ERROR(
        CudaStatus(cudaMemsetAsync(t->data(), 0, n * (t->elem() == Elem::kF32 ? 4 : 2), st()),
                   "cudaMemsetAsync"));
  }
  return TensorPtr(std::move(t));
}

StatusOr<TensorPtr> CudaKernels::Weights(WeightMatrix matrix) {
  if (matrix.format() == WeightStorage::kInt8) {
    return SupportsOp(OpNeed{OpNeed::Kind::kGemm, WeightStorage::kInt8});
  }
  SW_ASSIGN_OR_RETURN(TensorPtr t, Alloc(TensorKind::kWeight, matrix.rows(), matrix.cols()));
  const size_t n = static_cast<size_t>(matrix.rows() * matrix.cols());
  if (matrix.format() == WeightStorage::kBf16) {  // the same bits: kept exactly
    SW_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpyAsync(Bf(*t), matrix.bf16(), n * sizeof(uint16_t), cudaMemcpyHostToDevice, st()),
        "cudaMemcpyAsync (host to device)"));
  } else {
    std::vector<bf16> host(n);
    for (size_t i = 0; i < n; ++i) host[i] = __float2bfloat16(matrix.f32()[i]);
    SW_RETURN_IF_ERROR(Dev(*t).bf.CopyFromHost(std::span<const bf16>(host), st()));
  }
  SW_RETURN_IF_ERROR(stream_.Synchronize());  // the host values may go
  return t;
}

StatusOr<TensorPtr> CudaKernels::Floats(std::vector<float> values, int64_t rows, int64_t cols) {
  SW_ASSIGN_OR_RETURN(TensorPtr t, Alloc(TensorKind::kFloat, rows, cols));
  SW_RETURN_IF_ERROR(Upload(values, *t, 0));
  return t;
}

StatusOr<TensorPtr> CudaKernels::RandomWeights(int64_t rows, int64_t cols, uint64_t seed,
                                               float scale, float offset) {
  SW_ASSIGN_OR_RETURN(TensorPtr t, Alloc(TensorKind::kWeight, rows, cols));
  SW_RETURN_IF_ERROR(FillUniform(Bf(*t), rows * cols, seed, scale, offset, st()));
  return t;
}

Status CudaKernels::Upload(std::span<const float> host, Tensor& t, int64_t offset) {
  SW_CHECK(offset + static_cast<int64_t>(host.size()) <= t.size(), "Upload past the tensor's end");
  CudaTensor& d = Dev(t);
  if (d.elem() == Elem::kF32) {
    return CudaStatus(cudaMemcpyAsync(d.f32.data() + offset, host.data(), host.size_bytes(),
                                      cudaMemcpyHostToDevice, st()),
                      "cudaMemcpyAsync (host to device)");
  }
  std::vector<bf16> converted(host.size());
  for (size_t i = 0; i < host.size(); ++i) converted[i] = __float2bfloat16(host[i]);
  SW_RETURN_IF_ERROR(
      CudaStatus(cudaMemcpyAsync(d.bf.data() + offset, converted.data(),
                                 converted.size() * sizeof(bf16), cudaMemcpyHostToDevice, st()),
                 "cudaMemcpyAsync (host to device)"));
  return stream_.Synchronize();  // `converted` goes out of scope
}

Status CudaKernels::Download(const Tensor& t, std::span<float> host, int64_t offset) {
  SW_CHECK(offset + static_cast<int64_t>(host.size()) <= t.size(),
           "Download past the tensor's end");
  const CudaTensor& d = Dev(t);
  if (d.elem() == Elem::kF32) {
    SW_RETURN_IF_ERROR(CudaStatus(cudaMemcpyAsync(host.data(), d.f32.data() + offset,
                                                  host.size_bytes(), cudaMemcpyDeviceToHost, st()),
                                  "cudaMemcpyAsync (device to host)"));
    return stream_.Synchronize();
  }
  std::vector<bf16> raw(host.size());
  SW_RETURN_IF_ERROR(
      CudaStatus(cudaMemcpyAsync(raw.data(), d.bf.data() + offset, raw.size() * sizeof(bf16),
                                 cudaMemcpyDeviceToHost, st()),
                 "cudaMemcpyAsync (device to host)"));
  SW_RETURN_IF_ERROR(stream_.Synchronize());
  for (size_t i = 0; i < raw.size(); ++i) host[i] = __bfloat162float(raw[i]);
  return Status();
}

Status CudaKernels::BeginStep(const StepRows& step) {
  SW_RETURN_IF_ERROR(UseDevice(device_));
  std::vector<double> rope = {step.rope.attention_factor};
  rope.insert(rope.end(), step.rope.inv_freq.begin(), step.rope.inv_freq.end());
  const std::vector<int64_t> count = {static_cast<int64_t>(step.key_positions.size())};
  bool moved = false;
  SW_ASSIGN_OR_RETURN(bool a, seqs_.Set(std::span<const int32_t>(step.seqs), st()));
  SW_ASSIGN_OR_RETURN(bool b, positions_.Set(std::span<const int64_t>(step.positions), st()));
  SW_ASSIGN_OR_RETURN(bool c, slots_.Set(std::span<const int64_t>(step.store_slots), st()));
  SW_ASSIGN_OR_RETURN(bool d,
                      key_positions_.Set(std::span<const int64_t>(step.key_positions), st()));
  SW_ASSIGN_OR_RETURN(bool e, key_count_.Set(std::span<const int64_t>(count), st()));
  SW_ASSIGN_OR_RETURN(bool f, rope_.Set(std::span<const double>(rope), st()));
  moved = a || b || c || d || e || f;
  if (moved) graphs_.clear();  // recorded graphs read the old buffers
  step_ = {seqs_.device.data(),
           positions_.device.data(),
           slots_.device.data(),
           key_positions_.device.data(),
           key_count_.device.data(),
           rope_.device.data(),
           static_cast<int64_t>(step.seqs.size()),
           static_cast<int64_t>(step.positions.size())};
  return Status();
}

Status CudaKernels::Embed(const Tensor& table, std::span<const int64_t> tokens, Tensor& out) {
  const std::vector<int32_t> ids(tokens.begin(), tokens.end());
  SW_ASSIGN_OR_RETURN(int32_t * d, Staged(index_, std::span<const int32_t>(ids)));
  return cuda::Embed(Bf(table), d, F32(out), static_cast<int64_t>(ids.size()), table.cols(), st());
}

Status CudaKernels::RmsNorm(const Tensor& x, const Tensor& w, Tensor& out, int64_t rows,
                            double eps) {
  return cuda::RmsNorm(F32(x), F32(w), Dev(out).data(), Dev(out).elem(), rows, w.size(),
                       static_cast<float>(eps), st());
}

Status CudaKernels::AddRmsNorm(Tensor& x, const Tensor& y, const Tensor& w, Tensor& out,
                               int64_t rows, double eps) {
  return cuda::AddRmsNorm(F32(x), F32(y), F32(w), Dev(out).data(), Dev(out).elem(), rows, w.size(),
                          static_cast<float>(eps), st());
}

Status CudaKernels::Add(Tensor& x, const Tensor& y, int64_t n) {
  return cuda::Add(F32(x), F32(y), n, st());
}

Status CudaKernels::Copy(const Tensor& in, Tensor& out, int64_t n) {
  return Convert(Dev(in).data(), Dev(in).elem(), Dev(out).data(), Dev(out).elem(), n, st());
}

Status CudaKernels::Zero(Tensor& t, int64_t n) {
  return CudaStatus(
      cudaMemsetAsync(Dev(t).data(), 0,
                      static_cast<size_t>(n) * (Dev(t).elem() == Elem::kF32 ? 4 : 2), st()),
      "cudaMemsetAsync");
}

Status CudaKernels::Gemm(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y,
                         int64_t rows) {
  const int64_t n = w.rows(), k = w.cols();
  if (GemvFits(rows, k, Bf(x), Bf(w))) {
    return Gemv(Bf(x), Bf(w), F32(bias), F32(y), rows, n, k, st());
  }
  SW_RETURN_IF_ERROR(cuda::Gemm(blas_, Bf(x), Bf(w), F32(y), rows, n, k));
  if (bias == nullptr) return Status();
  return AddBias(F32(y), F32(*bias), rows, n, st());
}

Status CudaKernels::FloatGemm(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y,
                              int64_t rows) {
  SW_RETURN_IF_ERROR(GemmF32(blas_, F32(x), F32(w), F32(y), rows, w.rows(), w.cols()));
  if (bias == nullptr) return Status();
  return AddBias(F32(y), F32(*bias), rows, w.rows(), st());
}

Status CudaKernels::SwiGlu(const Tensor& gate_up, Tensor& act, int64_t rows, int64_t inter,
                           float limit) {
  return cuda::SwiGlu(F32(gate_up), Bf(act), rows, inter, limit, st());
}

Status CudaKernels::GatherRows(const Tensor& in, std::span<const int32_t> index, Tensor& out,
                               int64_t width) {
  SW_ASSIGN_OR_RETURN(int32_t * d, Staged(index_, index));
  return cuda::GatherRows(Dev(in).data(), Dev(in).elem(), d, Dev(out).data(),
                          static_cast<int64_t>(index.size()), width, st());
}

Status CudaKernels::ScatterAddRows(const Tensor& in, std::span<const int32_t> index,
                                   std::span<const float> weight, Tensor& out, int64_t width) {
  SW_ASSIGN_OR_RETURN(int32_t * d, Staged(index_, index));
  SW_ASSIGN_OR_RETURN(float* w, Staged(weights_, weight));
  return cuda::ScatterAddRows(F32(in), d, w, F32(out), static_cast<int64_t>(index.size()), width,
                              st());
}

Status CudaKernels::AddGatedRows(Tensor& y, const Tensor& s, const Tensor& x, const Tensor* gate,
                                 int64_t rows, int64_t width) {
  return cuda::AddGatedRows(F32(y), F32(s), F32(x), F32(gate), rows, width, st());
}

Status CudaKernels::LogitStats(const Tensor& logits, int64_t rows, int64_t width, int64_t valid,
                               std::span<LogitStat> out) {
  SW_RETURN_IF_ERROR(Ensure(stats_, static_cast<size_t>(std::max<int64_t>(1, rows))));
  SW_RETURN_IF_ERROR(cuda::LogitStats(F32(logits), rows, width, valid, stats_.data(), st()));
  std::vector<DeviceLogitStat> host(static_cast<size_t>(rows));
  SW_RETURN_IF_ERROR(stats_.CopyToHost(std::span<DeviceLogitStat>(host), st()));
  SW_RETURN_IF_ERROR(stream_.Synchronize());
  for (int64_t r = 0; r < rows; ++r) {
    const DeviceLogitStat& d = host[static_cast<size_t>(r)];
    out[static_cast<size_t>(r)] = {d.best_index, d.best, d.second, d.max_abs, d.non_finite};
  }
  return Status();
}

StatusOr<std::optional<std::pair<int64_t, float>>> CudaKernels::FirstNonFinite(const Tensor& x,
                                                                               int64_t n) {
  SW_RETURN_IF_ERROR(Ensure(first_bad_, 1));
  SW_RETURN_IF_ERROR(
      CudaStatus(cudaMemsetAsync(first_bad_.data(), 0xff, sizeof(unsigned long long), st()),
                 "cudaMemsetAsync"));
  SW_RETURN_IF_ERROR(cuda::FirstNonFinite(F32(x), n, first_bad_.data(), st()));
  unsigned long long first = 0;
  SW_RETURN_IF_ERROR(first_bad_.CopyToHost(std::span<unsigned long long>(&first, 1), st()));
  SW_RETURN_IF_ERROR(stream_.Synchronize());
  if (first == ~0ull) return std::optional<std::pair<int64_t, float>>();
  float value = 0;
  SW_RETURN_IF_ERROR(Download(x, std::span<float>(&value, 1), static_cast<int64_t>(first)));
  return std::optional(std::pair{static_cast<int64_t>(first), value});
}

StatusOr<bool> CudaKernels::BeginGraph(int64_t key) {
  if (graphs_.count(key) > 0) {
    replaying_ = key;
    return false;
  }
  SW_RETURN_IF_ERROR(CudaStatus(cudaStreamBeginCapture(st(), cudaStreamCaptureModeThreadLocal),
                                "cudaStreamBeginCapture"));
  capturing_ = key;
  return true;
}

Status CudaKernels::EndGraph() {
  if (capturing_ >= 0) {
    const int64_t key = capturing_;
    capturing_ = -1;
    cudaGraph_t graph = nullptr;
    SW_RETURN_IF_ERROR(CudaStatus(cudaStreamEndCapture(st(), &graph), "cudaStreamEndCapture"));
    cudaGraphExec_t exec = nullptr;
    const Status made = CudaStatus(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    (void)cudaGraphDestroy(graph);
    SW_RETURN_IF_ERROR(made);
    graphs_.emplace(key, GraphExec(exec));
    replaying_ = key;
  }
  const auto it = graphs_.find(replaying_);
  SW_CHECK(it != graphs_.end(), "EndGraph without a graph");
  replaying_ = -1;
  return CudaStatus(cudaGraphLaunch(it->second.get(), st()), "cudaGraphLaunch");
}

}  // namespace shardwise::cuda
