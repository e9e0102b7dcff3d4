#include "shardwise/train/flops.h"

#include <algorithm>

#include "shardwise/model/accounting.h"

namespace shardwise::train {
namespace {

// Attention score and value FLOPs of one query over `seq_len` keys, all layers, uncausal.
double AttentionFlopsPerToken(const ModelSpec& m, int64_t seq_len) {
  double keys = 0;
  for (const LayerSpec& layer : m.layers) {
    keys += static_cast<double>(layer.sliding_window > 0 ? std::min(seq_len, layer.sliding_window)
                                                         : seq_len);
  }
  const double qk = m.mla ? static_cast<double>(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim)
                          : static_cast<double>(m.head_dim);
  const double v = m.mla ? static_cast<double>(m.mla->v_head_dim) : static_cast<double>(m.head_dim);
  return 2.0 * static_cast<double>(m.num_heads) * (qk + v) * keys;
}

}  // namespace

double ForwardFlopsPerToken(const ModelSpec& m, int64_t seq_len) {
  return 2.0 * static_cast<double>(CountParams(m).active_matmul) +
         AttentionFlopsPerToken(m, seq_len);
}

IterationFlops CountIterationFlops(const ModelSpec& m, const TrainConfig& c) {
  IterationFlops f;
  const double tokens = static_cast<double>(c.TokensPerIteration());
  f.forward = tokens * ForwardFlopsPerToken(m, c.seq_len);
  f.attention_forward = tokens * AttentionFlopsPerToken(m, c.seq_len);
  // The LM head is not recomputed: Megatron-LM counts it three times (its V / 16lh term).
  const double head = tokens * 2.0 * static_cast<double>(m.vocab_size * m.hidden_size);
  f.megatron = 4 * f.forward - head;
  f.model = 3 * f.forward;
  switch (c.recompute) {
    case Recompute::kNone:
      f.hardware = f.model;
      break;
    case Recompute::kSelective:
      f.hardware = f.model + f.attention_forward;
      break;
    case Recompute::kFull:
      f.hardware = f.megatron;  // the recomputed forward of every layer
      break;
  }
  return f;
}

}  // namespace shardwise::train
