#include "cli/secret_files.h"

#include <fmt/format.h>

#include <utility>

#include "cli/cli_error.h"
#include "support/input_file.h"

namespace autotune::cli {

namespace {

std::string ReadWhole(const std::string& path, const std::string& what) {
  // Tokens and PEM files are a few kilobytes.
  auto text = ReadInputFile(path, kMiB);
  if (!text) throw UserError{fmt::format("cannot read the {} '{}': {}", what, path, text.error().message)};
  return std::move(*text);
}

std::string ReadPem(const std::string& path, const std::string& what) {
  std::string text = ReadWhole(path, what);
  // gRPC would only say that the handshake failed; a file of the wrong kind is named here instead.
  if (text.find("-----BEGIN ") == std::string::npos) {
    throw UserError{fmt::format("the {} '{}' holds no PEM block (-----BEGIN ...)", what, path)};
  }
  return text;
}

}  // namespace

std::string ReadTokenFile(const std::string& path) {
  const std::string text = ReadWhole(path, "token file");
  // A trailing newline (echo > file) is not part of the token.
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) throw UserError{fmt::format("the token file '{}' is empty", path)};
  const size_t end = text.find_last_not_of(" \t\r\n");
  std::string token = text.substr(begin, end - begin + 1);
  if (token.find_first_of("\r\n") != std::string::npos) {
    throw UserError{fmt::format("the token file '{}' holds more than one line", path)};
  }
  return token;
}

std::optional<measure::remote::TlsPem> ReadTlsFiles(const std::string& cert, const std::string& key,
                                                    const std::string& peer_ca, const std::string& flags) {
  const int given = !cert.empty() + !key.empty() + !peer_ca.empty();
  if (given == 0) return std::nullopt;
  if (given != 3) throw UserError{fmt::format("TLS needs all of {}", flags)};
  measure::remote::TlsPem pem;
  pem.certificate_chain = ReadPem(cert, "certificate file");
  pem.private_key = ReadPem(key, "key file");
  pem.peer_ca = ReadPem(peer_ca, "CA file");
  return pem;
}

}  // namespace autotune::cli
