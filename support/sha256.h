// SHA-256 (OpenSSL's libcrypto) as lowercase hex: cache keys of built kernels must be strong hashes.
#pragma once

#include <string>
#include <string_view>

namespace autotune {

std::string Sha256Hex(std::string_view data);

}  // namespace autotune
