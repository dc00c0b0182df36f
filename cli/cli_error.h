// User mistakes end a command with one clear line on stderr and exit status 2.
#pragma once

#include <string>

namespace autotune::cli {

inline constexpr int kExitUsage = 2;

// Thrown by command code for a user error; main() prints "autotune: <message>" and exits with 2.
struct UserError {
  std::string message;
};

}  // namespace autotune::cli
