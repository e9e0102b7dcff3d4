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

IterationFlops CountIterationFlops(const ModelSpec& m, const TrainConfig& c,
                                   double recomputed_fraction, bool scores_materialised) {
  IterationFlops f;
  const double tokens = static_cast<double>(c.TokensPerIteration());
  const double head = tokens * 2.0 * static_cast<double>(m.vocab_size * m.hidden_size);
  const double layers = static_cast<double>(m.num_layers());
  const double attention = AttentionFlopsPerToken(m, c.seq_len);
  f.forward = tokens * ForwardFlopsPerToken(m, c.seq_len);
  f.attention_forward = tokens * attention;
  // Each MTP module: a layer (of the mean layer's size), the projection of [embedding; hidden]
  // (2h x h) and a second pass through the LM head.
  const double mtp = static_cast<double>(c.mtp_layers);
  const double h = static_cast<double>(m.hidden_size);
  f.forward += mtp * ((f.forward - head) / layers + tokens * 4 * h * h + head);
  f.attention_forward += mtp * tokens * attention / layers;
  // The LM head is not recomputed: Megatron-LM counts it three times (its V / 16lh term).
  f.megatron = 4 * f.forward - head * (1 + mtp);
  f.model = 3 * f.forward;
  switch (c.recompute) {
    case Recompute::kNone:
      f.hardware = f.model;
      break;
    case Recompute::kSelective:
      f.hardware = f.model + (scores_materialised ? f.attention_forward : 0.0);
      break;
    case Recompute::kFull:
      // the recomputed forward of every (or every recomputed) layer
      f.hardware = f.model + recomputed_fraction * (f.megatron - f.model);
      break;
  }
  return f;
}

}  // namespace shardwise::train
