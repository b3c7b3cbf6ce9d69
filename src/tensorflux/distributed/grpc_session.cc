#include "tensorflux/distributed/grpc_session.h"

#include <functional>
#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tensorflux/distributed/cluster_spec.h"
#include "grpcpp/impl/client_unary_call.h"
#include "grpcpp/impl/rpc_method.h"
#include "tensorflux/distributed/grpc_channel.h"
#include "tensorflux/distributed/master_coding.h"
#include "tensorflux/distributed/server_security.h"
#include "tensorflux/master_service.grpc.pb.h"

namespace tensorflux {
namespace {

constexpr char kPrefix[] = "grpc://";
constexpr int64_t kDefaultCallTimeoutMs = 60000;
constexpr int64_t kDefaultStepTimeoutMs = 60000;
constexpr int64_t kTransportSlackMs = 10000;

class GrpcSession : public Session {
 public:
  GrpcSession(const SessionOptions& options, std::string address, GrpcChannelOptions channel_opts,
              std::shared_ptr<grpc::Channel> channel)
      : options_(options),
        address_(std::move(address)),
        channel_opts_(std::move(channel_opts)),
        channel_(channel),
        stub_(MasterService::NewStub(channel)),
        run_step_method_("/tensorflux.MasterService/RunStep", grpc::internal::RpcMethod::NORMAL_RPC,
                         channel) {}

  ~GrpcSession() override { Close().IgnoreError(); }

  Status Create(const GraphDef& graph) override {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return errors::Cancelled("Session has been closed.");
    if (!handle_.empty()) {
      return errors::FailedPrecondition(
          "Session::Create: this session already has a graph; use Extend to add nodes");
    }
    return CreateLocked(graph);
  }

  Status Extend(const GraphDef& graph) override {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return errors::Cancelled("Session has been closed.");
    // TF's GrpcSession creates the master session on the first Extend.
    if (handle_.empty()) return CreateLocked(graph);
    ExtendSessionRequest req;
    req.set_session_handle(handle_);
    *req.mutable_graph_def() = graph;
    req.set_current_graph_version(graph_version_);
    ExtendSessionResponse resp;
    TX_RETURN_IF_ERROR(Call(&MasterService::Stub::ExtendSession, req, &resp, CallTimeoutMs()));
    graph_version_ = resp.new_graph_version();
    return OkStatus();
  }

  using Session::Run;
  Status Run(const RunOptions& run_options,
             const std::vector<std::pair<std::string, Tensor>>& inputs,
             const std::vector<std::string>& output_tensor_names,
             const std::vector<std::string>& target_node_names, std::vector<Tensor>* outputs,
             RunMetadata* run_metadata) override {
    if (outputs == nullptr && !output_tensor_names.empty()) {
      return errors::InvalidArgument("Session::Run: outputs must not be null when fetching");
    }
    RunStepCall call;
    RunStepRequest& req = call.request;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (closed_) return errors::Cancelled("Session has been closed.");
      if (handle_.empty()) {
        return errors::FailedPrecondition("Session was not created with a graph before Run()");
      }
      req.set_session_handle(handle_);
    }
    for (const auto& [name, t] : inputs) {
      if (!t.IsInitialized()) {
        return errors::InvalidArgument("Feed for tensor '", name, "' is an uninitialized tensor");
      }
    }
    // The feeds go on the wire from their own buffers (master_coding.h).
    call.feeds.assign(inputs.begin(), inputs.end());
    for (const std::string& f : output_tensor_names) req.add_fetch(f);
    for (const std::string& t : target_node_names) req.add_target(t);
    *req.mutable_options() = run_options;
    int64_t step_ms = run_options.timeout_in_ms() > 0 ? run_options.timeout_in_ms()
                      : options_.config.operation_timeout_in_ms() > 0
                          ? options_.config.operation_timeout_in_ms()
                          : kDefaultStepTimeoutMs;
    RunStepReply reply;
    TX_RETURN_IF_ERROR(CallRunStep(call, &reply, step_ms + kTransportSlackMs));
    if (!reply.decode_status.ok()) {
      return Status(reply.decode_status.code(),
                    absl::StrCat(reply.decode_status.message(), " (from the master at ",
                                 address_, ")"));
    }
    if (reply.tensors.size() != output_tensor_names.size()) {
      return errors::Internal("the master returned ", reply.tensors.size(), " tensors for ",
                              output_tensor_names.size(), " fetches");
    }
    if (outputs != nullptr) {
      outputs->clear();
      outputs->reserve(reply.tensors.size());
      for (auto& [name, t] : reply.tensors) outputs->push_back(std::move(t));
    }
    if (run_metadata != nullptr) run_metadata->MergeFrom(reply.response.metadata());
    return OkStatus();
  }

  Status Close() override {
    std::string handle;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (closed_) return OkStatus();
      closed_ = true;
      handle.swap(handle_);
    }
    if (handle.empty()) return OkStatus();
    CloseSessionRequest req;
    req.set_session_handle(handle);
    CloseSessionResponse resp;
    return Call(&MasterService::Stub::CloseSession, req, &resp, CallTimeoutMs());
  }

  Status ListDevices(std::vector<DeviceAttributes>* response) override {
    ListDevicesRequest req;
    {
      std::lock_guard<std::mutex> l(mu_);
      req.set_session_handle(handle_);
    }
    ListDevicesResponse resp;
    TX_RETURN_IF_ERROR(Call(&MasterService::Stub::ListDevices, req, &resp, CallTimeoutMs()));
    response->clear();
    for (const DeviceAttributes& d : resp.local_device()) response->push_back(d);
    for (const DeviceAttributes& d : resp.remote_device()) response->push_back(d);
    return OkStatus();
  }

 private:
  // CreateSession with `graph`; mu_ held.
  Status CreateLocked(const GraphDef& graph) {
    CreateSessionRequest req;
    *req.mutable_graph_def() = graph;
    *req.mutable_config() = options_.config;
    req.set_target(options_.target);
    CreateSessionResponse resp;
    TX_RETURN_IF_ERROR(Call(&MasterService::Stub::CreateSession, req, &resp, CallTimeoutMs()));
    handle_ = resp.session_handle();
    graph_version_ = resp.graph_version();
    return OkStatus();
  }

  int64_t CallTimeoutMs() const {
    return options_.config.operation_timeout_in_ms() > 0 ? options_.config.operation_timeout_in_ms()
                                                         : kDefaultCallTimeoutMs;
  }

  template <typename Req, typename Resp>
  Status Call(grpc::Status (MasterService::Stub::*method)(grpc::ClientContext*, const Req&, Resp*),
              const Req& req, Resp* resp, int64_t timeout_ms) {
    return Call(timeout_ms, [&](grpc::ClientContext* ctx) { return ((*stub_).*method)(ctx, req, resp); });
  }

  // RunStep with the tensors in memory (master_coding.h's SerializationTraits).
  Status CallRunStep(const RunStepCall& call, RunStepReply* reply, int64_t timeout_ms) {
    return Call(timeout_ms, [&](grpc::ClientContext* ctx) {
      return grpc::internal::BlockingUnaryCall<RunStepCall, RunStepReply>(
          channel_.get(), run_step_method_, ctx, call, reply);
    });
  }

  // One call of `invoke` with the token and deadline; UNAVAILABLE names the master.
  Status Call(int64_t timeout_ms, const std::function<grpc::Status(grpc::ClientContext*)>& invoke) {
    grpc::ClientContext ctx;
    PrepareClientContext(channel_opts_, timeout_ms, &ctx);
    Status s = FromGrpcStatus(invoke(&ctx));
    if (s.code() == absl::StatusCode::kUnavailable) {
      return errors::Unavailable("master ", address_, " (", options_.target,
                                 ") is unavailable: ", s.message());
    }
    return s;
  }

  const SessionOptions options_;
  const std::string address_;
  const GrpcChannelOptions channel_opts_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<MasterService::Stub> stub_;
  const grpc::internal::RpcMethod run_step_method_;
  std::mutex mu_;  // guards handle_, graph_version_, closed_; orders Create/Extend
  std::string handle_;
  int64_t graph_version_ = 0;
  bool closed_ = false;
};

const bool kRegistered = [] {
  RegisterSessionFactory(kPrefix, NewGrpcSession);
  return true;
}();

}  // namespace

StatusOr<std::unique_ptr<Session>> NewGrpcSession(const SessionOptions& options) {
  if (!absl::StartsWith(options.target, kPrefix)) {
    return errors::InvalidArgument("target '", options.target, "' is not \"grpc://host:port\"");
  }
  std::string address = options.target.substr(sizeof(kPrefix) - 1);
  TX_RETURN_IF_ERROR(ValidateAddress(address));
  TX_ASSIGN_OR_RETURN(GrpcChannelOptions channel_opts,
                      MakeClientChannelOptions(ClientSecurityFilesFromEnvironment()));
  TX_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel,
                      NewGrpcChannel(address, channel_opts));
  return std::unique_ptr<Session>(
      new GrpcSession(options, std::move(address), std::move(channel_opts), std::move(channel)));
}

}  // namespace tensorflux
