#include "tensorflux/distributed/grpc_master_service.h"

#include <cstring>
#include <functional>

#include "grpcpp/impl/codegen/proto_utils.h"
#include "grpcpp/impl/rpc_service_method.h"
#include "grpcpp/support/method_handler.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "tensorflux/distributed/grpc_channel.h"
#include "tensorflux/distributed/master_coding.h"
#include "tensorflux/distributed/server_security.h"
#include "tensorflux/master.pb.h"

namespace tensorflux {

// master_service.proto's service, its methods added by hand so that RunStep's messages can be
// RunStepCall / RunStepReply (tensors in memory, master_coding.h) instead of the generated
// protobuf types; the others are the protobuf messages. Calls run on gRPC's sync-server threads.
class GrpcMasterService::Impl : public grpc::Service {
 public:
  Impl(Master* master, std::string token) : master_(master), token_(std::move(token)) {
    Add("/tensorflux.MasterService/CreateSession", &Master::CreateSession);
    Add("/tensorflux.MasterService/ExtendSession", &Master::ExtendSession);
    // Decoded in the handler, after the token check: a caller without the token gets
    // UNAUTHENTICATED before its feeds are decoded into tensors.
    Add<grpc::ByteBuffer, RunStepReply>(
        "/tensorflux.MasterService/RunStep",
        [this](const grpc::ByteBuffer& in, RunStepReply* reply) {
          RunStepCall call;
          TX_RETURN_IF_ERROR(FromGrpcStatus(DeserializeRunStepCall(in, &call)));
          return master_->RunStep(call.request, call.feeds, &reply->response, &reply->tensors);
        });
    Add("/tensorflux.MasterService/CloseSession", &Master::CloseSession);
    Add("/tensorflux.MasterService/ListDevices", &Master::ListDevices);
    Add("/tensorflux.MasterService/Reset", &Master::Reset);
  }

 private:
  // A protobuf-typed method. The request is parsed here, after the token check, so that bytes
  // that are not a Req are INVALID_ARGUMENT naming the method (gRPC's parser answers INTERNAL
  // with no message).
  template <typename Req, typename Resp>
  void Add(const char* method, Status (Master::*fn)(const Req&, Resp*)) {
    const char* name = std::strrchr(method, '/') + 1;
    Add<grpc::ByteBuffer, Resp>(method, [this, fn, name](const grpc::ByteBuffer& in, Resp* resp) {
      Req req;
      grpc::ByteBuffer bytes(in);  // shares the slices
      grpc::ProtoBufferReader reader(&bytes);
      if (!req.ParseFromZeroCopyStream(&reader)) {
        return errors::InvalidArgument("Malformed ", name, " request: not a ",
                                       Req::descriptor()->name());
      }
      return (master_->*fn)(req, resp);
    });
  }

  // `method` is a string literal (gRPC keeps the pointer).
  template <typename Req, typename Resp>
  void Add(const char* method, std::function<Status(const Req&, Resp*)> run) {
    auto handler = [run = std::move(run)](Impl* self, grpc::ServerContext* ctx, const Req* req,
                                          Resp* resp) {
      grpc::Status auth = CheckCallToken(*ctx, self->token_);
      if (!auth.ok()) return auth;
      return ToGrpcStatus(run(*req, resp));
    };
    AddMethod(new grpc::internal::RpcServiceMethod(
        method, grpc::internal::RpcMethod::NORMAL_RPC,
        new grpc::internal::RpcMethodHandler<Impl, Req, Resp>(std::move(handler), this)));
  }

  Master* const master_;
  const std::string token_;
};

GrpcMasterService::GrpcMasterService(Master* master, std::string token)
    : impl_(std::make_unique<Impl>(master, std::move(token))) {}
GrpcMasterService::~GrpcMasterService() = default;
grpc::Service* GrpcMasterService::service() { return impl_.get(); }

}  // namespace tensorflux
