#include "tensorflux/distributed/grpc_master_service.h"

#include "tensorflux/distributed/grpc_channel.h"
#include "tensorflux/distributed/server_security.h"
#include "tensorflux/master_service.grpc.pb.h"

namespace tensorflux {

class GrpcMasterService::Impl : public MasterService::Service {
 public:
  Impl(Master* master, std::string token) : master_(master), token_(std::move(token)) {}

  template <typename Req, typename Resp>
  grpc::Status Call(grpc::ServerContext* ctx, const Req* req, Resp* resp,
                    Status (Master::*method)(const Req&, Resp*)) {
    grpc::Status auth = CheckCallToken(*ctx, token_);
    if (!auth.ok()) return auth;
    return ToGrpcStatus((master_->*method)(*req, resp));
  }

  grpc::Status CreateSession(grpc::ServerContext* ctx, const CreateSessionRequest* req,
                             CreateSessionResponse* resp) override {
    return Call(ctx, req, resp, &Master::CreateSession);
  }
  grpc::Status ExtendSession(grpc::ServerContext* ctx, const ExtendSessionRequest* req,
                             ExtendSessionResponse* resp) override {
    return Call(ctx, req, resp, &Master::ExtendSession);
  }
  grpc::Status RunStep(grpc::ServerContext* ctx, const RunStepRequest* req,
                       RunStepResponse* resp) override {
    return Call(ctx, req, resp, &Master::RunStep);
  }
  grpc::Status CloseSession(grpc::ServerContext* ctx, const CloseSessionRequest* req,
                            CloseSessionResponse* resp) override {
    return Call(ctx, req, resp, &Master::CloseSession);
  }
  grpc::Status ListDevices(grpc::ServerContext* ctx, const ListDevicesRequest* req,
                           ListDevicesResponse* resp) override {
    return Call(ctx, req, resp, &Master::ListDevices);
  }
  grpc::Status Reset(grpc::ServerContext* ctx, const ResetRequest* req,
                     ResetResponse* resp) override {
    return Call(ctx, req, resp, &Master::Reset);
  }

 private:
  Master* const master_;
  const std::string token_;
};

GrpcMasterService::GrpcMasterService(Master* master, std::string token)
    : impl_(std::make_unique<Impl>(master, std::move(token))) {}
GrpcMasterService::~GrpcMasterService() = default;
grpc::Service* GrpcMasterService::service() { return impl_.get(); }

}  // namespace tensorflux
