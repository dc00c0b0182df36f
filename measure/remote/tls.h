// TLS for the worker protocol: the worker proves who it is with its certificate and accepts only
// jobs whose client certificate a given CA signed (mutual TLS); the job checks the worker's
// certificate against its CA. The PEM text is read by the caller (the CLI), so this only turns it
// into gRPC credentials.
#pragma once

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <optional>
#include <string>

namespace autotune::measure::remote {

struct TlsPem {
  std::string certificate_chain;  // this side's certificate (and intermediates)
  std::string private_key;        // its key
  std::string peer_ca;            // the CA that must have signed the other side's certificate
};

// Without TLS: plaintext (loopback, or a token over a trusted network). With it on the worker: its
// certificate, and every client must present a certificate `peer_ca` signed (or the handshake fails).
std::shared_ptr<grpc::ServerCredentials> MakeServerCredentials(const std::optional<TlsPem>& tls);

// Without TLS: plaintext. With it on the job: the worker's certificate must be signed by `peer_ca`
// and name the address dialled; the job presents its own certificate when one is given.
std::shared_ptr<grpc::ChannelCredentials> MakeChannelCredentials(const std::optional<TlsPem>& tls);

}  // namespace autotune::measure::remote
