// What workers and the jobs that use them trust each other with, read from files (never from the
// command line, where `ps` would show it): the shared token, and the PEM files of mutual TLS.
#pragma once

#include <optional>
#include <string>

#include "measure/remote/tls.h"

namespace autotune::cli {

// The token: the file's one line, surrounding blanks and the trailing newline dropped. UserError when
// the file cannot be read, is empty or holds more than one line.
std::string ReadTokenFile(const std::string& path);

// The three PEM files of one side of mutual TLS (`flags` names them in errors, e.g.
// "--tls-cert, --tls-key and --tls-client-ca"): nullopt when none is given; UserError when only some
// are, or one cannot be read or holds no PEM block.
std::optional<measure::remote::TlsPem> ReadTlsFiles(const std::string& cert, const std::string& key,
                                                    const std::string& peer_ca, const std::string& flags);

}  // namespace autotune::cli
