#include "tensorflux/distributed/server_security.h"

#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tensorflux/distributed/grpc_worker_service.h"

namespace tensorflux {
namespace {

constexpr int64_t kMaxMessageBytes = INT_MAX;

StatusOr<int> MessageLimit(int64_t requested) {
  if (requested < 0) {
    return errors::InvalidArgument("max message size must not be negative, got ", requested);
  }
  if (requested == 0 || requested > kMaxMessageBytes) return static_cast<int>(kMaxMessageBytes);
  return static_cast<int>(requested);
}

}  // namespace

StatusOr<std::string> ReadSecurityFile(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return errors::InvalidArgument(what, ": cannot read '", path, "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return errors::InvalidArgument(what, ": cannot read '", path, "'");
  return ss.str();
}

StatusOr<std::string> ReadTokenFile(const std::string& path) {
  TX_ASSIGN_OR_RETURN(std::string text, ReadSecurityFile(path, "--token_file"));
  std::string token(absl::StripAsciiWhitespace(text.substr(0, text.find('\n'))));
  if (token.empty()) {
    return errors::InvalidArgument("--token_file: '", path, "' holds an empty token");
  }
  return token;
}

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" ||
         absl::StartsWith(host, "127.");
}

StatusOr<ServerSecurity> MakeServerSecurity(const ServerSecurityOptions& options,
                                            const std::string& bind_host) {
  ServerSecurity sec;
  TX_ASSIGN_OR_RETURN(sec.max_message_bytes, MessageLimit(options.max_message_bytes));
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return errors::InvalidArgument(
        "--tls_cert and --tls_key go together: give both the server's certificate and its key");
  }
  if (!options.tls_ca_file.empty() && options.tls_cert_file.empty()) {
    return errors::InvalidArgument(
        "--tls_ca (client authentication) needs TLS: give --tls_cert and --tls_key too");
  }
  if (!options.token_file.empty()) {
    TX_ASSIGN_OR_RETURN(sec.token, ReadTokenFile(options.token_file));
  }
  sec.tls = !options.tls_cert_file.empty();
  if (!IsLoopbackHost(bind_host) && !options.insecure && !(sec.tls && !sec.token.empty())) {
    return errors::FailedPrecondition(
        "refusing to serve on non-loopback address '", bind_host,
        "' without TLS and a token (--tls_cert, --tls_key, --token_file): anyone who can reach "
        "it could run code in this process; pass --insecure to do it anyway");
  }
  if (sec.tls) {
    grpc::SslServerCredentialsOptions ssl(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
    TX_ASSIGN_OR_RETURN(pair.cert_chain, ReadSecurityFile(options.tls_cert_file, "--tls_cert"));
    TX_ASSIGN_OR_RETURN(pair.private_key, ReadSecurityFile(options.tls_key_file, "--tls_key"));
    ssl.pem_key_cert_pairs.push_back(std::move(pair));
    if (!options.tls_ca_file.empty()) {
      TX_ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadSecurityFile(options.tls_ca_file, "--tls_ca"));
      ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    }
    sec.credentials = grpc::SslServerCredentials(ssl);
  } else {
    sec.credentials = grpc::InsecureServerCredentials();
  }
  return sec;
}

grpc::Status CheckCallToken(const grpc::ServerContextBase& context, const std::string& token) {
  if (token.empty()) return grpc::Status::OK;
  const auto& md = context.client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "this server requires a token: the call carries no authorization "
                        "metadata (\"authorization: Bearer <token>\")");
  }
  if (!BearerTokenMatches(std::string_view(it->second.data(), it->second.size()), token)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "the call's authorization token does not match the server's");
  }
  return grpc::Status::OK;
}

StatusOr<GrpcChannelOptions> MakeClientChannelOptions(const ClientSecurityFiles& files) {
  GrpcChannelOptions opts;
  TX_ASSIGN_OR_RETURN(int limit, MessageLimit(files.max_message_bytes));
  opts.max_message_size = limit;
  if (!files.token_file.empty()) {
    TX_ASSIGN_OR_RETURN(opts.auth_token, ReadTokenFile(files.token_file));
  }
  if (files.tls_cert_file.empty() != files.tls_key_file.empty()) {
    return errors::InvalidArgument("a TLS client certificate and its key go together");
  }
  if (files.tls_ca_file.empty()) {
    if (!files.tls_cert_file.empty()) {
      return errors::InvalidArgument("a TLS client certificate needs TLS: give the CA too");
    }
    return opts;
  }
  opts.use_tls = true;
  opts.ssl_target_name_override = files.tls_target_name;
  TX_ASSIGN_OR_RETURN(opts.ca_cert_pem, ReadSecurityFile(files.tls_ca_file, "TLS CA"));
  if (!files.tls_cert_file.empty()) {
    TX_ASSIGN_OR_RETURN(opts.client_cert_pem,
                        ReadSecurityFile(files.tls_cert_file, "TLS client certificate"));
    TX_ASSIGN_OR_RETURN(opts.client_key_pem,
                        ReadSecurityFile(files.tls_key_file, "TLS client key"));
  }
  return opts;
}

ClientSecurityFiles ClientSecurityFilesFromEnvironment() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v == nullptr ? "" : v;
  };
  ClientSecurityFiles f;
  f.tls_ca_file = env("TENSORFLUX_TLS_CA");
  f.tls_cert_file = env("TENSORFLUX_TLS_CERT");
  f.tls_key_file = env("TENSORFLUX_TLS_KEY");
  f.tls_target_name = env("TENSORFLUX_TLS_TARGET_NAME");
  f.token_file = env("TENSORFLUX_TOKEN_FILE");
  return f;
}

}  // namespace tensorflux
