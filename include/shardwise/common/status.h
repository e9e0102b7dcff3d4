// Status and StatusOr: errors as values at the library boundary.
//
// Parsers and validators of user input (model configs, GPU and topology files, layouts, option
// values) return StatusOr<T>. An error carries a code, one line that names what is wrong and how
// to fix it, e.g. "config.json: num_key_value_heads (6) must divide num_attention_heads (32)",
// and the option it concerns where there is one. No exception crosses the library API; the CLI
// prints the line (with the option's flag) and exits with code 2 (3 for kUnavailable).
// Value types; thread-compatible.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "shardwise/common/check.h"

namespace shardwise {

// What went wrong, in the spirit of abseil's canonical codes. Only the command line knows exit
// codes: every code but kUnavailable is the caller's input (exit 2); kUnavailable is a failure
// while running, such as a timeout or a dead rank (exit 3).
enum class StatusCode {
  kOk,
  kInvalidArgument,     // a value out of range or malformed
  kNotFound,            // a named entry (model, GPU, cluster, engine, file) does not exist
  kFailedPrecondition,  // valid on its own, but not for this model, layout or hardware
  kUnavailable,         // a failure while running: a timeout, a dead rank
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message, std::string field = {})
      : code_(code), message_(std::move(message)), field_(std::move(field)) {}
  static Status Error(std::string message) {
    return Status(StatusCode::kInvalidArgument, std::move(message));
  }
  static Status RuntimeFailure(std::string message) {
    return Status(StatusCode::kUnavailable, std::move(message));
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // The option the error concerns, as the library names it ("max_batch", "prefill.layout");
  // empty when none. The command line shows the flag instead (cli/flags).
  const std::string& field() const { return field_; }

  // Returns a copy whose message is prefixed with `context` ("file.json: ...").
  Status WithContext(const std::string& context) const {
    return ok() ? *this : Status(code_, context + ": " + message_, field_);
  }
  // Returns a copy that names `field`, unless it names one already.
  Status WithField(std::string field) const {
    return ok() || !field_.empty() ? *this : Status(code_, message_, std::move(field));
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string field_;
};

inline Status Error(std::string message) { return Status::Error(std::move(message)); }
// An invalid value of `field`: the message names it and the fix.
inline Status FieldError(std::string field, std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message), std::move(field));
}
inline Status NotFound(std::string message) {
  return Status(StatusCode::kNotFound, std::move(message));
}
inline Status FailedPrecondition(std::string message, std::string field = {}) {
  return Status(StatusCode::kFailedPrecondition, std::move(message), std::move(field));
}
inline Status RuntimeFailure(std::string message) {
  return Status::RuntimeFailure(std::move(message));
}

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}        // NOLINT: implicit by design
  StatusOr(Status status) : value_(std::move(status)) {  // NOLINT: implicit by design
    SW_CHECK(!std::get<Status>(value_).ok(), "StatusOr built from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(value_); }
  Status status() const { return ok() ? Status() : std::get<Status>(value_); }

  const T& value() const& {
    SW_CHECK(ok(), status().message());
    return std::get<T>(value_);
  }
  T& value() & {
    SW_CHECK(ok(), status().message());
    return std::get<T>(value_);
  }
  T&& value() && {
    SW_CHECK(ok(), status().message());
    return std::get<T>(std::move(value_));
  }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> value_;
};

inline const Status& ToStatus(const Status& s) { return s; }
template <typename T>
Status ToStatus(const StatusOr<T>& s) {
  return s.status();
}

}  // namespace shardwise

#define SW_CONCAT_INNER(a, b) a##b
#define SW_CONCAT(a, b) SW_CONCAT_INNER(a, b)

// Returns early with the error of a Status or StatusOr expression.
#define SW_RETURN_IF_ERROR(expr)                                    \
  do {                                                              \
    const auto& sw_result_ = (expr);                                \
    if (!sw_result_.ok()) return ::shardwise::ToStatus(sw_result_); \
  } while (0)

// `SW_ASSIGN_OR_RETURN(auto x, F());` declares x from a StatusOr or returns its error.
#define SW_ASSIGN_OR_RETURN(lhs, expr) \
  SW_ASSIGN_OR_RETURN_IMPL(SW_CONCAT(sw_or_, __LINE__), lhs, expr)
#define SW_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
