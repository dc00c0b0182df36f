// Error values for expected failures (illegal schedule steps, bad user input). Cheap to make: the
// search sees thousands of them.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace autotune {

struct Error {
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error e) : v_(std::move(e)) {}      // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error e) : err_(std::move(e)), ok_(false) {}  // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return err_; }

 private:
  Error err_;
  bool ok_ = true;
};

inline Error MakeError(std::string msg) { return Error{std::move(msg)}; }

}  // namespace autotune

// Unwraps a Result inside a function that returns a Result: `AT_TRY(x, f())` declares x as f()'s
// value or returns f()'s error; `AT_TRY_VOID(g())` returns g()'s error if there is one.
#define AT_TRY(var, expr)                 \
  auto var##_result_ = (expr);            \
  if (!var##_result_) return var##_result_.error(); \
  auto var = std::move(var##_result_).value()
#define AT_TRY_VOID(expr)                 \
  do {                                    \
    auto at_try_result_ = (expr);         \
    if (!at_try_result_) return at_try_result_.error(); \
  } while (0)
