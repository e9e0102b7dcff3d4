#include "shardwise/runtime/finite_check.h"

#include <fmt/format.h>

#include <cmath>

namespace shardwise {
namespace {

class FiniteSource final : public WeightSource {
 public:
  explicit FiniteSource(std::unique_ptr<WeightSource> inner) : inner_(std::move(inner)) {}

  StatusOr<std::vector<float>> Read(const std::string& name, int64_t shape_rows, int64_t shape_cols,
                                    Slice rows, Slice cols) override {
    SW_ASSIGN_OR_RETURN(std::vector<float> data,
                        inner_->Read(name, shape_rows, shape_cols, rows, cols));
    SW_RETURN_IF_ERROR(CheckFinite(data, fmt::format("weight tensor '{}'", name)));
    return data;
  }

 private:
  std::unique_ptr<WeightSource> inner_;
};

}  // namespace

Status CheckFinite(std::span<const float> values, std::string_view what) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      return Error(
          fmt::format("{} holds a non-finite value ({}) at element {}; check "
                      "the checkpoint",
                      what, values[i], i));
    }
  }
  return Status();
}

std::unique_ptr<WeightSource> FiniteWeights(std::unique_ptr<WeightSource> source) {
  return std::make_unique<FiniteSource>(std::move(source));
}

}  // namespace shardwise
