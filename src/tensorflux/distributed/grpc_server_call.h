// The reactor of one unary call of the callback-API services (grpc_master_service.h,
// grpc_worker_service.h): it holds the parsed request and the call's CallOptions, deletes
// itself when gRPC is done with it, and turns the client's cancellation (or its passed deadline)
// into CallOptions::StartCancel, which cancels the work the call started.
//
// Its reactions run inline, on the gRPC thread that completes the call, as gRPC's own trivial
// reactors do (InternalInlineable): OnDone only deletes the object and OnCancel only starts a
// cancellation (neither blocks). Without it gRPC hands each OnDone to its executor thread: one
// more thread wake per call (measured: about 1 context switch per RunStep, docs/PERFORMANCE.md).
#pragma once

#include <grpcpp/support/server_callback.h>

#include "tensorflux/distributed/worker_interface.h"

namespace tensorflux {

template <typename Req>
class ServerCall : public grpc::ServerUnaryReactor {
 public:
  Req request;
  CallOptions opts;

  void OnCancel() override { opts.StartCancel(); }
  void OnDone() override { delete this; }
  bool InternalInlineable() override { return true; }
};

}  // namespace tensorflux
