// Numeric formats for weights, KV cache and compute, with their storage cost.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "shardwise/common/status.h"

namespace shardwise {

enum class Dtype { kFp32, kTf32, kBf16, kFp16, kFp8, kInt4, kMxfp4, kFp4 };

// Storage bytes per element, block scales included where the format defines them:
//   int4:  4 bits + one bf16 scale per group of 128 (AWQ/GPTQ style)   = 0.515625 B
//   mxfp4: 4 bits + one 8-bit shared exponent per block of 32 (OCP MX) = 0.53125 B
//   fp4:   NVFP4, 4 bits + one fp8 scale per block of 16               = 0.5625 B
// fp8 per-block scales (DeepSeek-V3: one fp32 per 128x128) add < 0.03% and are not counted.
double BytesPerElement(Dtype dtype);
// Bits of one value, its block scales left out (fp4 and mxfp4: 4; tf32 as stored, 32).
int ValueBits(Dtype dtype);

std::string_view DtypeName(Dtype dtype);

// Parses "bf16", "fp8", "int4", "mxfp4", ... (the weight/KV formats a user may ask for).
StatusOr<Dtype> ParseDtype(std::string_view text);

// The names ParseDtype accepts, for --help and errors.
std::vector<std::string> DtypeNames();

}  // namespace shardwise
