// Accounting of the recurrent token mixers (Gated DeltaNet, Mamba-2): parameters, state per
// sequence and FLOPs per token. Their cost per token does not depend on the context length.
#include <fmt/format.h>

#include "shardwise/model/accounting.h"

namespace shardwise {
namespace {

const RecurrentSpec& Shape(const ModelSpec& s) {
  SW_CHECK(s.recurrent.has_value(), "recurrent accounting of a model without recurrent layers");
  return *s.recurrent;
}

bool IsMamba2(const ModelSpec& s) {
  for (const LayerSpec& layer : s.layers) {
    if (layer.mixer == MixerKind::kMamba2) return true;
  }
  return false;
}

// Multiply-adds on each state matrix element per token, x 2 FLOPs:
//   Gated DeltaNet (Yang et al., "Gated Delta Networks"): decay S (1 FLOP), read-out S^T k for
//     the delta rule (2), rank-1 write k (v - S^T k)^T (2), output S^T q (2)      = 7
//   Mamba-2 (Dao and Gu, "Transformers are SSMs"): decay h (1), write dt x B^T (2), output h C
//     (2)                                                                           = 5
double StateFlopsPerElement(const ModelSpec& s) { return IsMamba2(s) ? 5.0 : 7.0; }

}  // namespace

int64_t RecurrentConvChannels(const ModelSpec& s) {
  const RecurrentSpec& r = Shape(s);
  return 2 * r.num_key_heads * r.key_dim + r.num_heads * r.head_dim;
}

int64_t RecurrentParamsPerLayer(const ModelSpec& s) {
  const RecurrentSpec& r = Shape(s);
  const bool mamba = IsMamba2(s);
  const int64_t h = s.hidden_size;
  const int64_t value_width = r.num_heads * r.head_dim;
  const int64_t conv = RecurrentConvChannels(s);
  // Input projection: Q/K (DeltaNet) or B/C (Mamba-2) of 2 x key heads x key_dim, V/x and the
  // output gate z of 2 x value width, and per head beta and alpha (DeltaNet) or dt (Mamba-2).
  const int64_t in_proj =
      h * (2 * r.num_key_heads * r.key_dim + 2 * value_width + (mamba ? 1 : 2) * r.num_heads);
  const int64_t conv_params = conv * r.conv_kernel + (r.conv_bias ? conv : 0);
  // Per head: A_log and dt_bias, and Mamba-2's skip D.
  const int64_t per_head = (mamba ? 3 : 2) * r.num_heads;
  // Gated RMSNorm on the output: one head_dim vector shared by the heads (DeltaNet) or the
  // whole width (Mamba-2).
  const int64_t norm = mamba ? value_width : r.head_dim;
  const int64_t out_proj = value_width * h;
  return in_proj + conv_params + per_head + norm + out_proj;
}

double StateBytesPerSequencePerLayer(const ModelSpec& s) {
  const RecurrentSpec& r = Shape(s);
  const double state =
      static_cast<double>(r.num_heads * r.key_dim * r.head_dim) * BytesPerElement(r.state_dtype);
  // The causal convolution keeps its last conv_kernel - 1 inputs, in the activation format.
  const double conv = static_cast<double>(RecurrentConvChannels(s) * (r.conv_kernel - 1)) *
                      BytesPerElement(Dtype::kBf16);
  return state + conv;
}

double StateBytesPerSequence(const ModelSpec& s) {
  const int64_t layers = s.num_recurrent_layers();
  return layers == 0 ? 0.0 : static_cast<double>(layers) * StateBytesPerSequencePerLayer(s);
}

double RecurrentDecodeFlopsPerToken(const ModelSpec& s) {
  const RecurrentSpec& r = Shape(s);
  const double state = static_cast<double>(r.num_heads * r.key_dim * r.head_dim);
  const double conv = 2.0 * static_cast<double>(RecurrentConvChannels(s) * r.conv_kernel);
  return StateFlopsPerElement(s) * state + conv;
}

double RecurrentPrefillFlopsPerToken(const ModelSpec& s) {
  const RecurrentSpec& r = Shape(s);
  // Chunked form: the state work of decode, plus causal attention inside each chunk of C
  // tokens: on average (C + 1) / 2 keys per token, 2 (key_dim + head_dim) FLOPs per key and head.
  const double intra_chunk = static_cast<double>(r.num_heads) *
                             static_cast<double>(r.chunk_size + 1) *
                             static_cast<double>(r.key_dim + r.head_dim);
  return RecurrentDecodeFlopsPerToken(s) + intra_chunk;
}

}  // namespace shardwise
