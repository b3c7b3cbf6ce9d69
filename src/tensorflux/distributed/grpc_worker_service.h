// GrpcWorkerService: serves a Worker (distributed/worker.h) as the gRPC WorkerService
// (proto/tensorflux/worker_service.proto), for a server to add to its grpc::ServerBuilder:
//
//   GrpcWorkerService service(worker.get(), options);
//   builder.RegisterService(service.service());
//
// Every method is a callback-API handler over raw bytes: requests are parsed here (a malformed
// one is INVALID_ARGUMENT naming the method), and no gRPC thread waits for a step: RunGraph and
// RecvTensor finish when the worker calls back. RecvTensor's response is written from the
// tensor's buffer (distributed/tensor_coding.h; a tensor too large for options.max_message_size
// or for gRPC's 2^31-1 bytes is RESOURCE_EXHAUSTED). RecvTensorStream answers the same request
// with a header and the tensor in pieces, each written from its buffer as the previous one was
// handed to gRPC (distributed/recv_tensor_stream.h). The client's deadline becomes the call's
// timeout (a step's RecvTensor calls to other tasks get what remains of it), and a client that
// cancels or whose deadline passes cancels the call on the worker.
//
// options.auth_token, when set, must arrive as the metadata "authorization: Bearer <token>"
// on every call; otherwise UNAUTHENTICATED (compared in constant time).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "grpcpp/impl/service_type.h"

namespace tensorflux {

class Worker;

struct GrpcWorkerServiceOptions {
  std::string auth_token;
  // The largest response (RecvTensor) the service writes; -1: gRPC's limit (2^31-1 bytes).
  int64_t max_message_size = -1;
};

class GrpcWorkerService {
 public:
  // `worker` is not owned and must outlive the service and the server it is added to.
  explicit GrpcWorkerService(Worker* worker,
                             GrpcWorkerServiceOptions options = GrpcWorkerServiceOptions());
  ~GrpcWorkerService();
  GrpcWorkerService(const GrpcWorkerService&) = delete;
  GrpcWorkerService& operator=(const GrpcWorkerService&) = delete;

  grpc::Service* service();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// True when `metadata_value` is "Bearer <token>" (constant-time in the token's length).
bool BearerTokenMatches(std::string_view metadata_value, std::string_view token);

}  // namespace tensorflux
