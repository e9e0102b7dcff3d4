#include "shardwise/runtime/rope.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace shardwise {
namespace {

// The dim index whose wavelength fits `rotations` times into `context` tokens (YaRN paper,
// eq. 19 solved for d).
double CorrectionDim(double rotations, double dim, double base, double context) {
  return dim * std::log(context / (rotations * 2 * std::numbers::pi)) / (2 * std::log(base));
}

}  // namespace

double YarnMscale(double factor, double mscale) {
  return factor <= 1 ? 1.0 : 0.1 * mscale * std::log(factor) + 1.0;
}

Status CheckRopeScaling(const ModelSpec& m) {
  const std::string& type = m.rope_scaling.type;
  if (type.empty() || type == "linear" || type == "dynamic" || type == "yarn" || type == "llama3") {
    return Status();
  }
  return Error(
      fmt::format("{}: rope_scaling type '{}' is not implemented by the runtime (it runs "
                  "linear, dynamic, yarn and llama3); running it would give wrong logits",
                  m.name, type));
}

RopeFrequencies ComputeRopeFrequencies(const ModelSpec& m, int64_t dim, int64_t seq_len) {
  const RopeScaling& s = m.rope_scaling;
  const double d = static_cast<double>(dim);
  const double context = static_cast<double>(s.original_max_position_embeddings > 0
                                                 ? s.original_max_position_embeddings
                                                 : m.max_position_embeddings);
  double base = m.rope_theta;
  if (s.type == "dynamic" && static_cast<double>(seq_len) > context && context > 0) {
    base *=
        std::pow(s.factor * static_cast<double>(seq_len) / context - (s.factor - 1), d / (d - 2));
  }
  RopeFrequencies f;
  f.inv_freq.resize(static_cast<size_t>(dim / 2));
  for (int64_t i = 0; i < dim / 2; ++i) {
    f.inv_freq[static_cast<size_t>(i)] = std::pow(base, -2.0 * static_cast<double>(i) / d);
  }
  if (s.type == "linear") {
    for (double& x : f.inv_freq) x /= s.factor;
  } else if (s.type == "llama3") {
    const double low_wavelen = context / s.low_freq_factor,
                 high_wavelen = context / s.high_freq_factor;
    for (double& x : f.inv_freq) {
      const double wavelen = 2 * std::numbers::pi / x;
      if (wavelen > low_wavelen) {
        x /= s.factor;
      } else if (wavelen >= high_wavelen) {
        const double smooth =
            (context / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        x = (1 - smooth) * x / s.factor + smooth * x;
      }
    }
  } else if (s.type == "yarn") {
    double low = CorrectionDim(s.beta_fast, d, m.rope_theta, context);
    double high = CorrectionDim(s.beta_slow, d, m.rope_theta, context);
    if (s.truncate) {
      low = std::floor(low);
      high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, d - 1);
    if (low == high) high += 0.001;  // avoid a zero-width ramp
    for (int64_t i = 0; i < dim / 2; ++i) {
      const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
      double& x = f.inv_freq[static_cast<size_t>(i)];
      x = x / s.factor * ramp + x * (1 - ramp);  // ramp 0: extrapolate, 1: interpolate
    }
    if (s.attention_factor > 0) {
      f.attention_factor = s.attention_factor;
    } else if (s.mscale > 0 && s.mscale_all_dim > 0) {
      f.attention_factor = YarnMscale(s.factor, s.mscale) / YarnMscale(s.factor, s.mscale_all_dim);
    } else {
      f.attention_factor = YarnMscale(s.factor, 1.0);
    }
  }
  return f;
}

}  // namespace shardwise
