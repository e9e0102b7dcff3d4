// Rotary position embedding frequencies, with the rope_scaling variants of Hugging Face
// config.json files:
//   linear  ("Extending Context Window of Large Language Models via Positional Interpolation",
//            Chen et al. 2023): every frequency divided by `factor`.
//   dynamic (dynamic NTK-aware scaling, as Hugging Face transformers implements it): once a
//            forward pass reaches seq_len > the trained context L, the base grows to
//            base * (factor * seq_len / L - (factor - 1)) ^ (dim / (dim - 2)).
//   yarn    ("YaRN: Efficient Context Window Extension of Large Language Models", Peng et al.
//            2023): dims with fewer than beta_slow rotations over L interpolate (divide by
//            factor), dims with more than beta_fast extrapolate (unchanged), a linear ramp in
//            between; cos and sin are scaled by the attention factor 0.1 ln(factor) + 1 (or
//            DeepSeek's mscale / mscale_all_dim ratio).
//   llama3  (Llama 3.1): wavelengths above L / low_freq_factor are divided by `factor`, below
//            L / high_freq_factor kept, smoothly blended in between.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "shardwise/common/status.h"
#include "shardwise/model/model_spec.h"

namespace shardwise {

struct RopeFrequencies {
  std::vector<double> inv_freq;   // radians per position, one per rotated pair (dim / 2)
  double attention_factor = 1.0;  // multiplies cos and sin
};

// An error naming the type when the runtime does not implement a model's rope_scaling.
Status CheckRopeScaling(const ModelSpec& model);

// Frequencies of a `dim`-wide rotary embedding for a forward pass whose sequences reach
// `seq_len` tokens (only 'dynamic' depends on it).
RopeFrequencies ComputeRopeFrequencies(const ModelSpec& model, int64_t dim, int64_t seq_len);

// The YaRN magnitude correction 0.1 * mscale * ln(factor) + 1 (1 when factor <= 1).
double YarnMscale(double factor, double mscale);

}  // namespace shardwise
