// What a deployment's GPUs cost, as the text views state it (simulate's and explain's cost lines).
#pragma once

#include <string>

#include "shardwise/deploy/deployment.h"

namespace shardwise::text {

// "$2.10 per GPU-hour", or each pool's GPUs and price where pools on other GPUs are priced apart:
// "$19.40 per hour (2 x b200 at $5.50, 4 x h100-sxm at $2.10 per GPU-hour)".
std::string HourlyPrice(const Deployment& d);

// The deployment's bill an hour and its $ per million output tokens at `output_tokens_per_s`.
std::string CostLine(const Deployment& d, double output_tokens_per_s);

}  // namespace shardwise::text
