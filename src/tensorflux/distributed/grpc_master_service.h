// The MasterService over gRPC (proto/tensorflux/master_service.proto): each call checks the
// server's token (server_security.h: UNAUTHENTICATED without it), then runs the Master's method
// (distributed/master.h) and answers with its status (same canonical code and message).
// Callback API only: RunStep is served on the gRPC thread that read it (an empty step answers
// from there, no thread hop); the calls that may block run on threads of their own
// (Master::SchedClosure). A client's cancellation (or passed deadline) cancels its step.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/impl/service_type.h>

#include "tensorflux/distributed/master.h"

namespace tensorflux {

class GrpcMasterService {
 public:
  // `master` must outlive the service. `token`: "" = calls are not checked.
  GrpcMasterService(Master* master, std::string token);
  ~GrpcMasterService();
  // To add to a grpc::ServerBuilder.
  grpc::Service* service();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tensorflux
