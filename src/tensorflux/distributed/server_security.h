// Security of a tensorflux-server (distributed/grpc_server.h): transport credentials, the shared
// token checked on every call, the message size limit, and the rule for non-loopback binds.
//
// - TLS: a PEM certificate chain and private key make the server speak TLS (gRPC's
//   SslServerCredentials); a PEM CA bundle in addition makes it require and verify a client
//   certificate signed by that CA (mutual TLS). A certificate without a key (or the reverse), a
//   CA without a certificate, or an unreadable file is INVALID_ARGUMENT naming the flag.
// - Token: the first line of --token_file (surrounding whitespace dropped; an empty token is
//   INVALID_ARGUMENT). Every call must carry the metadata "authorization: Bearer <token>";
//   a call without it, or with another token, fails with UNAUTHENTICATED before any work is
//   done. The comparison takes the same time whatever the bytes.
// - Message size: requests and responses above max_message_bytes (default and maximum
//   2^31 - 1, gRPC's limit) are refused by gRPC with RESOURCE_EXHAUSTED ("Received message
//   larger than max (N vs. M)").
// - Bind: a non-loopback address (not 127.x.x.x, ::1 or "localhost") needs TLS and a token, or
//   `insecure`: otherwise FAILED_PRECONDITION saying so. A token without TLS over a non-loopback
//   address would travel in clear text; it is allowed only with `insecure`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_context.h>

#include "tensorflux/core/status.h"
#include "tensorflux/distributed/grpc_channel.h"

namespace tensorflux {

struct ServerSecurityOptions {
  std::string tls_cert_file;  // PEM certificate chain of the server
  std::string tls_key_file;   // PEM private key of the server
  std::string tls_ca_file;    // PEM CA bundle: require client certificates signed by it
  std::string token_file;     // shared token (first line)
  bool insecure = false;      // allow a non-loopback bind without TLS and token
  int64_t max_message_bytes = 0;  // 0: 2^31 - 1
};

// What a server is started with, from ServerSecurityOptions.
struct ServerSecurity {
  std::shared_ptr<grpc::ServerCredentials> credentials;
  std::string token;  // empty: calls are not checked
  int max_message_bytes = 0;
  bool tls = false;
};

// Reads the files and checks the bind rule for `bind_host`. Errors as above.
StatusOr<ServerSecurity> MakeServerSecurity(const ServerSecurityOptions& options,
                                            const std::string& bind_host);

// OK when `token` is empty or the call carries "authorization: Bearer <token>";
// UNAUTHENTICATED otherwise (the message does not echo what was sent).
grpc::Status CheckCallToken(const grpc::ServerContextBase& context, const std::string& token);

// True for 127.0.0.0/8, ::1, [::1] and "localhost".
bool IsLoopbackHost(const std::string& host);

// The client side: the files a client (or a server calling the other tasks) opens its channels
// with, turned into grpc_channel.h's GrpcChannelOptions.
struct ClientSecurityFiles {
  std::string tls_ca_file;    // PEM CA that signed the servers' certificates: use TLS
  std::string tls_cert_file;  // PEM client certificate (mutual TLS), with its key
  std::string tls_key_file;
  std::string tls_target_name;  // the name the servers' certificates are for, when not the host
  std::string token_file;       // sent as "authorization: Bearer <token>" on every call
  int64_t max_message_bytes = 0;  // 0: 2^31 - 1
};

// INVALID_ARGUMENT for an unreadable file, a certificate without its key, or a certificate
// without a CA.
StatusOr<GrpcChannelOptions> MakeClientChannelOptions(const ClientSecurityFiles& files);

// The client files from the environment, for tx.Session("grpc://...") and NewSession:
// TENSORFLUX_TLS_CA, TENSORFLUX_TLS_CERT, TENSORFLUX_TLS_KEY, TENSORFLUX_TLS_TARGET_NAME,
// TENSORFLUX_TOKEN_FILE (unset: not used).
ClientSecurityFiles ClientSecurityFilesFromEnvironment();

// Reads a whole file; INVALID_ARGUMENT naming `what` and the path when it cannot.
StatusOr<std::string> ReadSecurityFile(const std::string& path, const char* what);

// Reads a token file (first line, trimmed); INVALID_ARGUMENT when unreadable or empty.
StatusOr<std::string> ReadTokenFile(const std::string& path);

}  // namespace tensorflux
