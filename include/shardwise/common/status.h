// Status and StatusOr: errors as values at the library boundary.
//
// Parsers and validators of user input (model configs, GPU and topology files, layouts, CLI
// values) return StatusOr<T>. An error carries one line that names what is wrong and how to fix
// it, e.g. "config.json: num_key_value_heads (6) must divide num_attention_heads (32)". No
// exception crosses the library API; the CLI prints the line and exits with code 2.
// Value types; thread-compatible.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "shardwise/common/check.h"

namespace shardwise {

class Status {
 public:
  // Bad input (exit code 2) or a failure while running (a timeout, a dead rank: exit code 3).
  enum class Kind { kOk, kInvalidInput, kRuntime };

  Status() = default;  // OK
  static Status Error(std::string message) {
    return Status(Kind::kInvalidInput, std::move(message));
  }
  static Status RuntimeFailure(std::string message) {
    return Status(Kind::kRuntime, std::move(message));
  }

  bool ok() const { return kind_ == Kind::kOk; }
  Kind kind() const { return kind_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is prefixed with `context` ("file.json: ...").
  Status WithContext(const std::string& context) const {
    return ok() ? *this : Status(kind_, context + ": " + message_);
  }

 private:
  Status(Kind kind, std::string message) : kind_(kind), message_(std::move(message)) {}
  Kind kind_ = Kind::kOk;
  std::string message_;
};

inline Status Error(std::string message) { return Status::Error(std::move(message)); }
inline Status RuntimeFailure(std::string message) {
  return Status::RuntimeFailure(std::move(message));
}

template <typename T>
class StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
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
#define SW_RETURN_IF_ERROR(expr)                                        \
  do {                                                                  \
    const auto& sw_result_ = (expr);                                    \
    if (!sw_result_.ok()) return ::shardwise::ToStatus(sw_result_);     \
  } while (0)

// `SW_ASSIGN_OR_RETURN(auto x, F());` declares x from a StatusOr or returns its error.
#define SW_ASSIGN_OR_RETURN(lhs, expr) SW_ASSIGN_OR_RETURN_IMPL(SW_CONCAT(sw_or_, __LINE__), lhs, expr)
#define SW_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
