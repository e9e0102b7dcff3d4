#include "shardwise/price/energy.h"

namespace shardwise {
namespace {
constexpr double kJoulesPerKwh = 3.6e6;
constexpr double kTokensPerMtok = 1e6;
}  // namespace

double JoulesPerToken(double board_power_w, double output_tokens_per_s) {
  if (!(board_power_w > 0 && output_tokens_per_s > 0)) return 0.0;
  return board_power_w / output_tokens_per_s;
}

double ElectricityUsdPerMtok(double joules_per_token, double usd_per_kwh) {
  return joules_per_token * kTokensPerMtok / kJoulesPerKwh * usd_per_kwh;
}

}  // namespace shardwise
