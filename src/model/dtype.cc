#include "shardwise/model/dtype.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <utility>

#include "shardwise/common/suggest.h"

namespace shardwise {
namespace {

struct DtypeInfo {
  Dtype dtype;
  std::string_view name;
  double bytes;  // stored per value, block scales included
  int value_bits;
};

constexpr std::array<DtypeInfo, 8> kDtypes = {{
    {Dtype::kFp32, "fp32", 4.0, 32},
    {Dtype::kTf32, "tf32", 4.0, 32},
    {Dtype::kBf16, "bf16", 2.0, 16},
    {Dtype::kFp16, "fp16", 2.0, 16},
    {Dtype::kFp8, "fp8", 1.0, 8},
    {Dtype::kInt4, "int4", 0.5 + 2.0 / 128.0, 4},
    {Dtype::kMxfp4, "mxfp4", 0.5 + 1.0 / 32.0, 4},
    {Dtype::kFp4, "fp4", 0.5 + 1.0 / 16.0, 4},
}};

const DtypeInfo& Info(Dtype dtype) {
  for (const DtypeInfo& info : kDtypes) {
    if (info.dtype == dtype) return info;
  }
  SW_CHECK(false, "dtype missing from kDtypes");
  return kDtypes[0];
}

}  // namespace

double BytesPerElement(Dtype dtype) { return Info(dtype).bytes; }

int ValueBits(Dtype dtype) { return Info(dtype).value_bits; }

std::string_view DtypeName(Dtype dtype) { return Info(dtype).name; }

std::vector<std::string> DtypeNames() {
  std::vector<std::string> names;
  for (const DtypeInfo& info : kDtypes) names.emplace_back(info.name);
  return names;
}

StatusOr<Dtype> ParseDtype(std::string_view raw) {
  // Case-insensitive, as layouts are: "FP8" and "BF16" are the names in most papers.
  std::string text(raw);
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const DtypeInfo& info : kDtypes) {
    if (info.name == text) return info.dtype;
  }
  if (text == "bfloat16") return Dtype::kBf16;
  if (text == "float16") return Dtype::kFp16;
  if (text == "float32") return Dtype::kFp32;
  return Error(UnknownNameMessage("dtype", raw, DtypeNames(),
                                  "use one of fp32, bf16, fp16, "
                                  "fp8, int4, mxfp4, fp4"));
}

}  // namespace shardwise
