#include "shardwise/train/memory.h"

namespace shardwise::train {
namespace {

constexpr double kMaskBytes = 1;  // dropout masks are stored as bytes
constexpr double kFp8Bytes = 1;
constexpr double kAdamStateBytes = 12;  // fp32 master weight, m and v
constexpr double kLseBytes = 4;         // FlashAttention keeps one fp32 log-sum-exp per head

}  // namespace

ModelStates ModelStateBytes(double params, double replicas, int zero, double weight_bytes_per_param,
                            double grad_bytes_per_param) {
  ModelStates s;
  s.weight_bytes = params * weight_bytes_per_param / (zero >= 3 ? replicas : 1.0);
  s.grad_bytes = params * grad_bytes_per_param / (zero >= 2 ? replicas : 1.0);
  s.optimizer_bytes = params * kAdamStateBytes / (zero >= 1 ? replicas : 1.0);
  return s;
}

double WeightBytesPerParam(const TrainEngine& e, const TrainConfig& c) {
  if (c.dtype != Dtype::kFp8) return kBf16Bytes;
  return e.fp8_param_gather ? kFp8Bytes : kBf16Bytes + kFp8Bytes;
}

double ActivationBytesPerToken(const ModelSpec& m, const ModelShard& s, const TrainEngine& e,
                               Recompute recompute, bool moe, double keys, bool fp8_inputs) {
  const double h = static_cast<double>(m.hidden_size);
  const double tp = static_cast<double>(s.layout.tp);
  // GEMM inputs kept for the weight gradient: bf16, or the FP8 copy under FP8 recipes.
  const double input_bytes = fp8_inputs ? kFp8Bytes : kBf16Bytes;
  // Tensors TP leaves whole on every rank unless sequence parallelism splits them: the two norm
  // inputs, the QKV and first-FFN inputs (4 hidden tensors), and the two dropout masks.
  const double replicated_split = e.sequence_parallel ? tp : 1.0;
  const double masks = e.dropout ? 2 * h * kMaskBytes : 0.0;
  if (recompute == Recompute::kFull) return h * kBf16Bytes / replicated_split;
  const double replicated = 2 * h * kBf16Bytes + 2 * h * input_bytes + masks;
  // Split by TP: Q and K (for the scores), V, and the output projection's input.
  const double head_width =
      m.mla ? static_cast<double>(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim)
            : static_cast<double>(m.head_dim);
  const double v_width = m.mla ? static_cast<double>(m.mla->v_head_dim) : head_width;
  const double kv_heads = m.mla ? s.heads : s.kv_bytes_per_token / (2 * head_width * kBf16Bytes);
  const double attention = (s.heads * head_width + kv_heads * (head_width + v_width)) * kBf16Bytes +
                           s.heads * v_width * input_bytes;
  // FFN: the activation's inputs (gate and up, or the pre-GELU tensor) and the down input.
  const double act_inputs = m.gated_ffn || moe ? 2.0 : 1.0;
  double ffn = (act_inputs * kBf16Bytes + input_bytes) * s.ffn_width;
  if (moe) {
    // Each of the k routed copies keeps the first expert GEMM's input for its weight gradient and
    // the expert's bf16 output, which the weighted combine needs for the routing probabilities'
    // gradient; plus the router's fp32 probabilities.
    ffn += static_cast<double>(m.moe.experts_per_token) * h * (input_bytes + kBf16Bytes) / tp +
           static_cast<double>(m.moe.num_experts) * 4.0;
  }
  // Scores: softmax output (2 B), dropout mask (1 B) and dropout output (2 B) per head and key,
  // unless FlashAttention keeps them on chip or selective recompute drops them.
  double scores = 0;
  if (recompute == Recompute::kNone && !e.flash_attention) {
    scores = s.heads * keys * (kBf16Bytes + (e.dropout ? kMaskBytes + kBf16Bytes : 0.0));
  } else if (e.flash_attention) {
    scores = s.heads * kLseBytes;
  }
  return replicated / replicated_split + attention + ffn + scores;
}

}  // namespace shardwise::train
