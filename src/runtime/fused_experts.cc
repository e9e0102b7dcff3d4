#include "fused_experts.h"

#include <algorithm>
#include <cmath>

namespace shardwise {

StatusOr<ExpertShard> ReadFusedExpert(WeightSource& w, const std::string& prefix, int64_t e,
                                      int64_t experts, int64_t h, int64_t inter, Slice part,
                                      bool down_bias, bool down_row_abs_max) {
  const int64_t n = part.size();
  const Slice pairs{2 * part.begin, 2 * part.end};
  SW_ASSIGN_OR_RETURN(std::vector<float> gu, w.Read(prefix + "gate_up_proj", experts * h, 2 * inter,
                                                    {e * h, (e + 1) * h}, pairs));
  SW_ASSIGN_OR_RETURN(std::vector<float> gub,
                      w.Read(prefix + "gate_up_proj_bias", experts, 2 * inter, {e, e + 1}, pairs));
  SW_ASSIGN_OR_RETURN(std::vector<float> dn,
                      w.Read(prefix + "down_proj", experts * inter, h,
                             {e * inter + part.begin, e * inter + part.end}, {0, h}));
  ExpertShard s;
  s.gate.resize(static_cast<size_t>(n * h));
  s.up.resize(static_cast<size_t>(n * h));
  s.down.resize(static_cast<size_t>(h * n));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < h; ++k) {
      s.gate[i * h + k] = gu[k * 2 * n + 2 * i];
      s.up[i * h + k] = gu[k * 2 * n + 2 * i + 1];
      s.down[k * n + i] = dn[i * h + k];
    }
    s.gate_bias.push_back(gub[2 * i]);
    s.up_bias.push_back(gub[2 * i + 1]);
  }
  if (down_bias) {
    SW_ASSIGN_OR_RETURN(s.down_bias,
                        w.Read(prefix + "down_proj_bias", experts, h, {e, e + 1}, {0, h}));
  }
  if (down_row_abs_max) {
    SW_ASSIGN_OR_RETURN(std::vector<float> all, w.Read(prefix + "down_proj", experts * inter, h,
                                                       {e * inter, (e + 1) * inter}, {0, h}));
    s.down_row_abs_max.assign(static_cast<size_t>(h), 0.0f);
    for (int64_t i = 0; i < inter; ++i) {
      for (int64_t k = 0; k < h; ++k) {
        s.down_row_abs_max[k] = std::max(s.down_row_abs_max[k], std::fabs(all[i * h + k]));
      }
    }
  }
  return s;
}

}  // namespace shardwise
