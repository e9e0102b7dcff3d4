// Deterministic generated weights: a counter-based hash of (seed, name, row, column).
#include <cmath>

#include "shardwise/runtime/weights.h"

namespace shardwise {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t HashName(const std::string& name) {  // FNV-1a
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

class Generated final : public WeightSource {
 public:
  explicit Generated(uint64_t seed) : seed_(seed) {}

  StatusOr<std::vector<float>> Read(const std::string& name, int64_t shape_rows,
                                    int64_t shape_cols, Slice rows, Slice cols) override {
    const uint64_t base = SplitMix64(seed_ ^ HashName(name));
    const bool norm = name.find("norm") != std::string::npos;
    const bool bias = name.ends_with(".bias");
    // Matrices: uniform in +-1/sqrt(fan-in) (activations keep their scale); biases small;
    // norm weights near 1; the shared-expert gate and embeddings like matrices.
    const float scale = norm ? 0.1f : bias ? 0.02f : 1.0f / std::sqrt(static_cast<float>(shape_cols));
    const float offset = norm ? 1.0f : 0.0f;
    std::vector<float> out;
    out.reserve(static_cast<size_t>(rows.size() * cols.size()));
    for (int64_t i = rows.begin; i < rows.end; ++i) {
      for (int64_t j = cols.begin; j < cols.end; ++j) {
        const uint64_t bits = SplitMix64(base + static_cast<uint64_t>(i * shape_cols + j));
        const double u = static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
        out.push_back(offset + scale * static_cast<float>(2.0 * u - 1.0));
      }
    }
    (void)shape_rows;
    return out;
  }

 private:
  uint64_t seed_;
};

}  // namespace

std::unique_ptr<WeightSource> GeneratedWeights(uint64_t seed) {
  return std::make_unique<Generated>(seed);
}

}  // namespace shardwise
