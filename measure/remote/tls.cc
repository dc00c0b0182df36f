#include "measure/remote/tls.h"

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>

namespace autotune::measure::remote {

std::shared_ptr<grpc::ServerCredentials> MakeServerCredentials(const std::optional<TlsPem>& tls) {
  if (!tls) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = tls->peer_ca;
  options.pem_key_cert_pairs.push_back({tls->private_key, tls->certificate_chain});
  return grpc::SslServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> MakeChannelCredentials(const std::optional<TlsPem>& tls) {
  if (!tls) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = tls->peer_ca;
  options.pem_private_key = tls->private_key;
  options.pem_cert_chain = tls->certificate_chain;
  return grpc::SslCredentials(options);
}

}  // namespace autotune::measure::remote
