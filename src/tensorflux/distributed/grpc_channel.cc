#include "tensorflux/distributed/grpc_channel.h"

#include <chrono>
#include <cstdlib>
#include <malloc.h>

#include <limits>
#include <mutex>

#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"

namespace tensorflux {

Status ValidateChannelOptions(const GrpcChannelOptions& o) {
  if (o.client_cert_pem.empty() != o.client_key_pem.empty()) {
    return errors::InvalidArgument(
        "TLS client authentication needs both a client certificate and its key");
  }
  if (!o.use_tls && (!o.ca_cert_pem.empty() || !o.client_cert_pem.empty() ||
                     !o.ssl_target_name_override.empty())) {
    return errors::InvalidArgument("TLS certificates or a target name override were given "
                                   "without enabling TLS (use_tls)");
  }
  for (char c : o.auth_token) {
    if (c < 0x20 || c > 0x7e) {
      return errors::InvalidArgument(
          "The auth token must be printable ASCII (it is sent as gRPC metadata)");
    }
  }
  if (o.max_message_size == 0 || o.max_message_size < -1 ||
      o.max_message_size > std::numeric_limits<int32_t>::max()) {
    return errors::InvalidArgument("max_message_size must be -1 (gRPC's limit, 2^31-1 bytes) or "
                                   "1 to 2147483647 bytes, got ", o.max_message_size);
  }
  if (o.recv_stream_min_bytes < -1) {
    return errors::InvalidArgument("recv_stream_min_bytes must be -1 (never stream) or >= 0, got ",
                                   o.recv_stream_min_bytes);
  }
  if (o.recv_chunk_bytes < 0 || o.recv_chunk_bytes > (int64_t{1} << 30)) {
    return errors::InvalidArgument("recv_chunk_bytes must be 0 (the server's default) to 2^30, "
                                   "got ", o.recv_chunk_bytes);
  }
  return OkStatus();
}

grpc::ChannelArguments ChannelArgumentsFor(const GrpcChannelOptions& o) {
  grpc::ChannelArguments args;
  const int size = static_cast<int>(o.max_message_size);
  args.SetMaxReceiveMessageSize(size);
  args.SetMaxSendMessageSize(size);
  if (!o.ssl_target_name_override.empty()) {
    args.SetSslTargetNameOverride(o.ssl_target_name_override);
  }
  for (const auto& [name, value] : LargeMessageArgs()) args.SetInt(name, value);
  // One channel per task, not shared with other caches in the process through gRPC's global
  // subchannel pool: a cache's channels come and go with it.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return args;
}

std::vector<std::pair<const char*, int>> LargeMessageArgs() {
  return {
      // Large tensors: an HTTP/2 window of 64 MiB and 16 MiB frames, so a transfer is not paced
      // by window updates (each a wakeup of the receiving thread: on a loaded machine a default
      // 64 KiB window made 1 MiB take 16 round trips).
      {GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 64 << 20},
      {GRPC_ARG_HTTP2_MAX_FRAME_SIZE, (16 << 20) - 1},
      // Read the socket in chunks of up to 4 MiB, not gRPC's adaptive 8 KiB start: each chunk is
      // handed between threads, which on a loaded machine costs a scheduling delay per chunk.
      {GRPC_ARG_TCP_READ_CHUNK_SIZE, 4 << 20},
      {GRPC_ARG_TCP_MIN_READ_CHUNK_SIZE, 256 << 10},
      {GRPC_ARG_TCP_MAX_READ_CHUNK_SIZE, 16 << 20},
  };
}

void PinGrpcCallbackThreads() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Everything here is leaked on purpose: the channel must outlive every other gRPC user.
    // The call goes nowhere (a closed local port) and fails at once; the channel keeps the
    // callback thread pool it used.
    struct Pin {
      std::shared_ptr<grpc::Channel> channel =
          grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials());
      grpc::GenericStub stub{channel};
      grpc::ClientContext ctx;
      grpc::ByteBuffer request, response;
    };
    auto* pin = new Pin;
    grpc::Slice empty("", 0);
    pin->request = grpc::ByteBuffer(&empty, 1);
    pin->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
    pin->stub.UnaryCall(&pin->ctx, "/tensorflux.Pin/Pin", grpc::StubOptions(), &pin->request,
                        &pin->response, [](grpc::Status) {});
  });
}

bool TuneMallocForLargeTransfers() {
  const char* off = std::getenv("TX_NO_MALLOC_TUNING");
  if (off != nullptr && std::string_view(off) == "1") return true;  // glibc's defaults kept
  const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, 64 << 20) == 1;
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1;
  const bool arena_ok = mallopt(M_ARENA_MAX, 1) == 1;
  return mmap_ok && trim_ok && arena_ok;
}

StatusOr<std::shared_ptr<grpc::Channel>> NewGrpcChannel(const std::string& address,
                                                        const GrpcChannelOptions& options) {
  TX_RETURN_IF_ERROR(ValidateChannelOptions(options));
  TX_RETURN_IF_ERROR(ValidateAddress(address));
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (options.use_tls) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options.ca_cert_pem;
    ssl.pem_cert_chain = options.client_cert_pem;
    ssl.pem_private_key = options.client_key_pem;
    creds = grpc::SslCredentials(ssl);
  } else {
    creds = grpc::InsecureChannelCredentials();
  }
  return grpc::CreateCustomChannel(address, creds, ChannelArgumentsFor(options));
}

std::string BearerAuthorization(std::string_view token) {
  return absl::StrCat("Bearer ", absl::string_view(token.data(), token.size()));
}

void PrepareClientContext(const GrpcChannelOptions& options, int64_t timeout_ms,
                          grpc::ClientContext* ctx) {
  if (!options.auth_token.empty()) {
    ctx->AddMetadata("authorization", BearerAuthorization(options.auth_token));
  }
  if (timeout_ms > 0) {
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
  }
}

Status FromGrpcStatus(const grpc::Status& s) {
  if (s.ok()) return OkStatus();
  return Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

grpc::Status ToGrpcStatus(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

StatusOr<std::unique_ptr<GrpcChannelCache>> GrpcChannelCache::Create(ClusterSpec cluster,
                                                                     GrpcChannelOptions options) {
  TX_RETURN_IF_ERROR(ValidateChannelOptions(options));
  return std::unique_ptr<GrpcChannelCache>(
      new GrpcChannelCache(std::move(cluster), std::move(options)));
}

StatusOr<std::string> GrpcChannelCache::TargetAddress(std::string_view task_or_device) const {
  return cluster_.AddressOf(task_or_device);
}

StatusOr<std::shared_ptr<grpc::Channel>> GrpcChannelCache::FindChannel(
    std::string_view task_or_device) {
  TX_ASSIGN_OR_RETURN(std::string task, ClusterSpec::TaskNameOf(task_or_device));
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = channels_.find(task);
    if (it != channels_.end()) return it->second;
  }
  TX_ASSIGN_OR_RETURN(std::string address, cluster_.AddressOf(task));
  TX_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel, NewGrpcChannel(address, options_));
  std::lock_guard<std::mutex> l(mu_);
  auto [it, inserted] = channels_.emplace(task, std::move(channel));
  return it->second;
}

}  // namespace tensorflux
