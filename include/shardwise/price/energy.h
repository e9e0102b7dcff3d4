// Energy of serving: the GPU boards' rated power (GpuSpec::board_power_w, the datasheet TDP)
// over the output tokens they produce, and what that electricity costs per million tokens.
// Rated power is what an operator provisions per rack and an upper bound on the draw while
// serving (a memory-bound decode step draws less); the figures say so wherever they are shown.
// Pure functions.
#pragma once

namespace shardwise {

// What the energy figures in --json rest on, stated beside them.
inline constexpr const char* kEnergyBasis =
    "GPU boards at rated power (datasheet TDP; gpus --json has each source): an upper bound on "
    "the draw, excluding hosts, network and cooling";

// Joules per output token of GPUs drawing `board_power_w` while producing
// `output_tokens_per_s`; 0 when either is unknown or zero.
double JoulesPerToken(double board_power_w, double output_tokens_per_s);

// Dollars per million output tokens of electricity at `usd_per_kwh`.
double ElectricityUsdPerMtok(double joules_per_token, double usd_per_kwh);

}  // namespace shardwise
