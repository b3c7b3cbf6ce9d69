#include "tensorflux/distributed/grpc_master_service.h"

#include <cstring>
#include <functional>

#include "grpcpp/impl/codegen/proto_utils.h"
#include "grpcpp/impl/rpc_service_method.h"
#include "grpcpp/impl/codegen/server_callback_handlers.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "tensorflux/distributed/grpc_channel.h"
#include "tensorflux/distributed/grpc_server_call.h"
#include "tensorflux/distributed/master_coding.h"
#include "tensorflux/distributed/server_security.h"
#include "tensorflux/master.pb.h"

namespace tensorflux {
// master_service.proto's service, its methods added by hand as callback methods so that
// RunStep's messages can be RunStepCall / RunStepReply (tensors in memory, master_coding.h)
// instead of the generated protobuf types; the others are the protobuf messages.
//
// Threads: the service has no sync method, so gRPC starts no sync-server threads; a call arrives
// on the gRPC thread that read it. RunStep runs there (Master::RunStepAsync: an empty step is
// served and answered on that thread, no hand-off); the calls that may block (CreateSession,
// ExtendSession, CloseSession, ListDevices, Reset, and a RunStep that compiles a new
// signature) go to a thread of their own (Master::SchedClosure) and answer from it.
class GrpcMasterService::Impl : public grpc::Service {
 public:
  Impl(Master* master, std::string token) : master_(master), token_(std::move(token)) {
    AddBlocking("/tensorflux.MasterService/CreateSession", &Master::CreateSession);
    AddBlocking("/tensorflux.MasterService/ExtendSession", &Master::ExtendSession);
    // Decoded in the handler, after the token check: a caller without the token gets
    // UNAUTHENTICATED before its feeds are decoded into tensors.
    Add<RunStepReply>("/tensorflux.MasterService/RunStep",
                      [this](grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                             RunStepReply* reply) -> grpc::ServerUnaryReactor* {
                        auto* call = new ServerCall<RunStepCall>();
                        grpc::Status s = CheckCallToken(*ctx, token_);
                        if (s.ok()) s = DeserializeRunStepCall(*in, &call->request);
                        if (!s.ok()) {
                          call->Finish(s);
                          return call;
                        }
                        master_->RunStepAsync(&call->opts, call->request.request,
                                              call->request.feeds, &reply->response,
                                              &reply->tensors, [call](const Status& st) {
                                                call->Finish(ToGrpcStatus(st));
                                              });
                        return call;
                      });
    AddBlocking("/tensorflux.MasterService/CloseSession", &Master::CloseSession);
    AddBlocking("/tensorflux.MasterService/ListDevices", &Master::ListDevices);
    AddBlocking("/tensorflux.MasterService/Reset", &Master::Reset);
  }

 private:
  // A protobuf-typed method run on a thread of its own. The request is parsed here, after the
  // token check, so that bytes that are not a Req are INVALID_ARGUMENT naming the method
  // (gRPC's parser answers INTERNAL with no message).
  template <typename Req, typename Resp>
  void AddBlocking(const char* method, Status (Master::*fn)(const Req&, Resp*)) {
    const char* name = std::strrchr(method, '/') + 1;
    Add<Resp>(method, [this, fn, name](grpc::CallbackServerContext* ctx,
                                       const grpc::ByteBuffer* in,
                                       Resp* resp) -> grpc::ServerUnaryReactor* {
      auto* call = new ServerCall<Req>();
      grpc::Status s = CheckCallToken(*ctx, token_);
      if (s.ok()) {
        grpc::ByteBuffer bytes(*in);  // shares the slices
        grpc::ProtoBufferReader reader(&bytes);
        if (!call->request.ParseFromZeroCopyStream(&reader)) {
          s = ToGrpcStatus(errors::InvalidArgument("Malformed ", name, " request: not a ",
                                                   Req::descriptor()->name()));
        }
      }
      if (!s.ok()) {
        call->Finish(s);
        return call;
      }
      master_->SchedClosure([this, fn, call, resp] {
        call->Finish(ToGrpcStatus((master_->*fn)(call->request, resp)));
      });
      return call;
    });
  }

  // `method` is a string literal (gRPC keeps the pointer). The request arrives as bytes, the
  // response is written by grpc::SerializationTraits<Resp>.
  template <typename Resp>
  void Add(const char* method,
           std::function<grpc::ServerUnaryReactor*(grpc::CallbackServerContext*,
                                                   const grpc::ByteBuffer*, Resp*)>
               get_reactor) {
    AddMethod(new grpc::internal::RpcServiceMethod(method, grpc::internal::RpcMethod::NORMAL_RPC,
                                                   nullptr));
    MarkMethodCallback(num_methods_++,
                       new grpc::internal::CallbackUnaryHandler<grpc::ByteBuffer, Resp>(
                           std::move(get_reactor)));
  }

  Master* const master_;
  const std::string token_;
  int num_methods_ = 0;
};

GrpcMasterService::GrpcMasterService(Master* master, std::string token)
    : impl_(std::make_unique<Impl>(master, std::move(token))) {
  PinGrpcCallbackThreads();  // its calls are served on gRPC's callback threads
}
GrpcMasterService::~GrpcMasterService() = default;
grpc::Service* GrpcMasterService::service() { return impl_.get(); }

}  // namespace tensorflux
