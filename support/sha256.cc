#include "support/sha256.h"

#include <openssl/evp.h>

#include "support/check.h"

namespace autotune {

std::string Sha256Hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  AUTOTUNE_CHECK(EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) == 1, "SHA-256 failed");
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

}  // namespace autotune
