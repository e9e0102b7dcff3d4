// Numbers as users write them: the one reading of a decimal number every parser of user text
// shares, so "0x10" is not 16 in one option and refused in the next. Pure; thread-safe.
#pragma once

#include <optional>
#include <string_view>

namespace shardwise {

// The whole of `text` as a finite decimal number: an optional sign, digits with an optional
// point, an optional exponent ("2", "-0.5", ".5", "1e3", "2.5E-3"). Hexadecimal ("0x10"),
// spaces, "inf", "nan" and a value beyond double's range at either end ("1e400", "1e-400") are
// not one: nullopt.
std::optional<double> ParseDecimal(std::string_view text);

}  // namespace shardwise
