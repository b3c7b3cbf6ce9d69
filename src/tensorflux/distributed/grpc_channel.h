// gRPC channels to the tasks of a cluster (TF's GrpcChannelCache), with the client side of the
// server's security options.
//
// GrpcChannelOptions:
//   TLS (use_tls): the server's certificate is checked against ca_cert_pem (empty: the system
//     roots); client_cert_pem + client_key_pem authenticate this client to servers that ask
//     for client certificates (both or neither). ssl_target_name_override names the host the
//     server's certificate must be for when it differs from the address (e.g. certificates
//     made for "localhost" used on 127.0.0.1).
//   auth_token: sent on every call as the metadata "authorization: Bearer <token>"
//     (PrepareClientContext does it; the server side compares it).
//   max_message_size: the largest message a channel receives or sends, in bytes; -1 (default)
//     is gRPC's limit, 2^31-1 bytes (so one tensor can be up to 2 GiB less the framing).
//   recv_stream_min_bytes: RecvTensor of a key whose last tensor had at least this many bytes
//     (default 2 MiB) goes over RecvTensorStream (distributed/recv_tensor_stream.h: the pieces
//     are copied into the tensor while the rest is in flight); smaller ones, and a key's first
//     transfer, over the unary RecvTensor. 0: always the stream; -1: never.
//   recv_chunk_bytes: the stream's piece size (1 to 2^30; 0: the server's default,
//     DefaultRecvChunkBytes in recv_tensor_stream.h: an eighth of the tensor within 512 KiB
//     to 4 MiB).
//
// GrpcChannelCache maps task names ("/job:worker/replica:0/task:1", or any device name within
// one) to one lazily created channel per task, shared by every caller. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/channel_arguments.h"
#include "tensorflux/core/status.h"
#include "tensorflux/distributed/cluster_spec.h"

namespace tensorflux {

struct GrpcChannelOptions {
  bool use_tls = false;
  std::string ca_cert_pem;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string ssl_target_name_override;
  std::string auth_token;
  int64_t max_message_size = -1;
  int64_t recv_stream_min_bytes = 2 << 20;
  int64_t recv_chunk_bytes = 0;
};

// INVALID_ARGUMENT for a client certificate without its key (or the reverse), TLS material
// given without use_tls, a token with characters not allowed in gRPC metadata (printable ASCII
// only), a max_message_size that is 0, below -1 or above 2^31-1, a recv_stream_min_bytes below
// -1 or a recv_chunk_bytes outside 0 to 2^30.
Status ValidateChannelOptions(const GrpcChannelOptions& options);

// The channel arguments the options ask for (message sizes, TLS target override).
grpc::ChannelArguments ChannelArgumentsFor(const GrpcChannelOptions& options);

// The HTTP/2 window, frame and socket read sizes for large messages (tensors), as gRPC channel
// arguments: for client channels (ChannelArgumentsFor) and for the server (GrpcServer), whose
// receive side takes RunStep feeds and RunGraph sends.
std::vector<std::pair<const char*, int>> LargeMessageArgs();

// A channel to "host:port" (ValidateChannelOptions's and ValidateAddress's errors).
StatusOr<std::shared_ptr<grpc::Channel>> NewGrpcChannel(const std::string& address,
                                                        const GrpcChannelOptions& options);

// Readies a call: the token metadata, and a deadline `timeout_ms` from now when > 0.
void PrepareClientContext(const GrpcChannelOptions& options, int64_t timeout_ms,
                          grpc::ClientContext* ctx);

// The "authorization" metadata value for a token: "Bearer <token>".
std::string BearerAuthorization(std::string_view token);

// gRPC 1.51 (Debian's) runs callback-API completions on a thread pool (its
// "CallbackAlternativeCQ") created when the first channel or server uses it and destroyed when
// the last one goes; destroying it while a completion still runs on it aborts the process
// (grpc_cq_internal_unref: "assertion failed: prior > 0"; grpc/grpc#32584). This keeps one
// user alive for the rest of the process (a channel that made one call), so the pool is never
// torn down. Idempotent and cheap after the first call; GrpcRemoteWorker and GrpcWorkerService
// call it, and so must anything else that uses gRPC's callback API. NewGrpcChannel does not: in
// a process that makes only sync calls (a client's GrpcSession) the pool's threads would poll
// the sockets too and hand each response over to the calling thread: about 3 more thread
// switches and 30 us more per call (two-process empty RunStep, load 6-7: 4.5 -> 1.45 switches
// per call in the client, 10th-percentile round trip 120-125 -> 88-93 us).
void PinGrpcCallbackThreads();

// Process-wide glibc malloc settings for processes that move large tensors over gRPC (servers,
// benchmarks; the library never calls it; call it first thing in main, before threads start):
// blocks up to 64 MiB come from the heap instead of fresh mmap()s, freed heap memory up to
// 1 GiB is kept instead of returned to the kernel, and all threads share one arena (gRPC frees
// receive buffers on other threads than it allocates them; per-thread arenas returned their
// pages). gRPC allocates new receive buffers for every message, so without this each large
// transfer touches fresh pages (a page fault per 4 KiB: ~2 us on an idle machine, ~50 us on a
// loaded VM). At load 12-13 on 2 cores, RecvTensor of 1 MiB went from 11 ms to 0.7 ms and of
// 64 MiB from ~1 s to ~70 ms. The cost: one malloc arena lock for all threads (the engine's
// tensors come from its own caching allocator). Returns false if glibc refused a setting.
// TX_NO_MALLOC_TUNING=1 in the environment leaves glibc's defaults (returns true): benchmarks use
// it to measure a process that does not tune, as the Python module does not.
bool TuneMallocForLargeTransfers();

// grpc::Status <-> Status, same canonical code and message.
Status FromGrpcStatus(const grpc::Status& s);
grpc::Status ToGrpcStatus(const Status& s);

class GrpcChannelCache {
 public:
  // ValidateChannelOptions's errors.
  static StatusOr<std::unique_ptr<GrpcChannelCache>> Create(ClusterSpec cluster,
                                                            GrpcChannelOptions options);

  // The channel of the task that `task_or_device` names (ClusterSpec::AddressOf's errors:
  // INVALID_ARGUMENT for a malformed name, NOT_FOUND for a task not in the cluster).
  StatusOr<std::shared_ptr<grpc::Channel>> FindChannel(std::string_view task_or_device);
  // "host:port" of that task (same errors).
  StatusOr<std::string> TargetAddress(std::string_view task_or_device) const;
  // Every task of the cluster ("/job:ps/replica:0/task:0", ...).
  std::vector<std::string> ListWorkers() const { return cluster_.TaskNames(); }

  const ClusterSpec& cluster() const { return cluster_; }
  const GrpcChannelOptions& options() const { return options_; }

 private:
  GrpcChannelCache(ClusterSpec cluster, GrpcChannelOptions options)
      : cluster_(std::move(cluster)), options_(std::move(options)) {}

  const ClusterSpec cluster_;
  const GrpcChannelOptions options_;
  std::mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<grpc::Channel>> channels_;  // by task name
};

}  // namespace tensorflux
