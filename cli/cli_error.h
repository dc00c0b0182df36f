// User mistakes end a command with one clear line on stderr and exit status 2.
#pragma once

#include <string>

#include "support/result.h"

namespace autotune::cli {

inline constexpr int kExitUsage = 2;

// Thrown by command code for a user error; main() prints "autotune: <message>" and exits with 2.
struct UserError {
  std::string message;
};

// The value of `r`, or its error as a UserError.
template <class T>
T Check(Result<T> r) {
  if (!r) throw UserError{r.error().message};
  return std::move(r).value();
}
inline void Check(Result<void> r) {
  if (!r) throw UserError{r.error().message};
}

}  // namespace autotune::cli
