#include "shardwise/sim/step_table.h"

#include <algorithm>
#include <cmath>

namespace shardwise {
namespace {

std::vector<double> PowersOfTwo(double from, double to) {
  std::vector<double> out;
  for (double v = from; v < to; v *= 2) out.push_back(v);
  out.push_back(std::max(from, to));
  return out;
}

// Index i and weight t with grid[i] <= x <= grid[i + 1] (clamped at the ends).
void Locate(const std::vector<double>& grid, double x, size_t& i, double& t) {
  if (grid.size() == 1 || x <= grid.front()) {
    i = 0;
    t = grid.size() == 1 ? 0.0 : (x - grid[0]) / (grid[1] - grid[0]);  // linear below the grid
    return;
  }
  if (x >= grid.back()) {
    i = grid.size() - 2;
    t = (x - grid[i]) / (grid[i + 1] - grid[i]);  // linear beyond the grid
    return;
  }
  i = static_cast<size_t>(std::upper_bound(grid.begin(), grid.end(), x) - grid.begin()) - 1;
  t = (x - grid[i]) / (grid[i + 1] - grid[i]);
}

// Bilinear interpolation in a [a][b] table.
double Bilinear(const std::vector<double>& grid_a, const std::vector<double>& grid_b,
                const std::vector<double>& values, double a, double b) {
  size_t i, j;
  double ta, tb;
  Locate(grid_a, a, i, ta);
  Locate(grid_b, b, j, tb);
  const size_t nb = grid_b.size();
  auto at = [&](size_t ai, size_t bi) {
    return values[std::min(ai, grid_a.size() - 1) * nb + std::min(bi, nb - 1)];
  };
  const double low = at(i, j) + tb * (at(i, j + 1) - at(i, j));
  const double high = at(i + 1, j) + tb * (at(i + 1, j + 1) - at(i + 1, j));
  return std::max(0.0, low + ta * (high - low));
}

}  // namespace

StatusOr<StepTable> StepTable::Build(const StepModel& model, int64_t max_batch, int64_t max_context,
                                     int64_t max_chunk) {
  StepTable t;
  t.batches_ = PowersOfTwo(1, static_cast<double>(std::max<int64_t>(1, max_batch)));
  t.contexts_ = PowersOfTwo(16, static_cast<double>(std::max<int64_t>(16, max_context)));
  t.chunks_ = PowersOfTwo(16, static_cast<double>(std::max<int64_t>(16, max_chunk)));
  // A query attends to at least itself and at most the longest context.
  t.keys_ = PowersOfTwo(1, static_cast<double>(std::max<int64_t>(1, max_context)));
  for (double b : t.batches_) {
    for (double c : t.contexts_) t.decode_s_.push_back(model.VirtualDecodeS(b, c));
  }
  for (double p : t.chunks_) {
    for (double k : t.keys_) t.prefill_s_.push_back(model.VirtualPrefillS(p, k));
  }
  t.weight_read_s_ = t.decode_s_.front();
  t.prompt_floor_s_ = model.PromptIterationFloorS();
  t.prompt_graph_tokens_ = model.PromptGraphTokens();
  t.attention_dp_ = static_cast<double>(model.layout().AttentionDp());
  return t;
}

double StepTable::DecodeSeconds(double batch, double context) const {
  return Bilinear(batches_, contexts_, decode_s_, batch, context);
}

double StepTable::PrefillSeconds(double tokens, double keys_per_token) const {
  return Bilinear(chunks_, keys_, prefill_s_, tokens, keys_per_token);
}

double StepTable::StepSeconds(double decode, double context, double prefill,
                              double keys_per_token) const {
  const double d = decode > 0 ? DecodeSeconds(decode, context) : 0.0;
  if (prefill <= 0) return d;
  const double p = PrefillSeconds(prefill, keys_per_token);
  const double gpu_s = d > 0 ? d + p - std::min({weight_read_s_, d, p}) : p;
  // An iteration carrying prompt tokens runs outside CUDA graphs, decodes included (unless the
  // engine replays graphs of its size): it takes at least the host's time to issue it.
  if (decode / attention_dp_ + prefill <= prompt_graph_tokens_) return gpu_s;
  return std::max(gpu_s, prompt_floor_s_);
}

}  // namespace shardwise
