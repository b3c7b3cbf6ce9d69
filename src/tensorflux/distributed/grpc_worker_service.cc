#include "tensorflux/distributed/grpc_worker_service.h"

#include <chrono>
#include <functional>

#include "grpcpp/impl/codegen/proto_utils.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "grpcpp/support/proto_buffer_writer.h"
#include "tensorflux/distributed/grpc_channel.h"
#include "tensorflux/distributed/grpc_server_call.h"
#include "tensorflux/distributed/recv_tensor_stream.h"
#include "tensorflux/distributed/tensor_coding.h"
#include "tensorflux/distributed/worker.h"
#include "tensorflux/worker_service.grpc.pb.h"

namespace tensorflux {

bool BearerTokenMatches(std::string_view value, std::string_view token) {
  constexpr std::string_view kPrefix = "Bearer ";
  if (value.size() != kPrefix.size() + token.size() || value.substr(0, kPrefix.size()) != kPrefix) {
    return false;
  }
  unsigned char diff = 0;
  for (size_t i = 0; i < token.size(); ++i) {
    diff |= static_cast<unsigned char>(value[kPrefix.size() + i] ^ token[i]);
  }
  return diff == 0;
}

namespace {

// All ten methods as raw-bytes callback handlers.
using RawService = WorkerService::WithRawCallbackMethod_RecvTensorStream<
    WorkerService::WithRawCallbackMethod_GetStatus<
    WorkerService::WithRawCallbackMethod_CreateWorkerSession<
        WorkerService::WithRawCallbackMethod_DeleteWorkerSession<
            WorkerService::WithRawCallbackMethod_RegisterGraph<
                WorkerService::WithRawCallbackMethod_DeregisterGraph<
                    WorkerService::WithRawCallbackMethod_RunGraph<
                        WorkerService::WithRawCallbackMethod_CleanupGraph<
                            WorkerService::WithRawCallbackMethod_CleanupAll<
                                WorkerService::WithRawCallbackMethod_RecvTensor<
                                    WorkerService::Service>>>>>>>>>>;

// One call in flight: its request, response and options (grpc_server_call.h).
template <typename Req, typename Resp>
class Call : public ServerCall<Req> {
 public:
  Resp response;
};

// Milliseconds left before the client's deadline; 0 when it set none.
int64_t RemainingMs(const grpc::CallbackServerContext* ctx) {
  const auto deadline = ctx->deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return 0;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::system_clock::now())
                        .count();
  return left > 0 ? left : 1;
}

// Writes a response: protobuf messages the usual way, RecvTensor's from the tensor's buffer.
template <typename Resp>
Status WriteResponse(const Resp& response, int64_t /*limit*/, grpc::ByteBuffer* out) {
  bool own = false;
  grpc::Status s = grpc::SerializationTraits<Resp>::Serialize(response, out, &own);
  return s.ok() ? OkStatus() : errors::Internal("Cannot serialize the response: ",
                                                s.error_message());
}

Status WriteResponse(const TensorResponse& response, int64_t limit, grpc::ByteBuffer* out) {
  return EncodeRecvTensorResponse(response, limit, out);
}

// One RecvTensorStream call (recv_tensor_stream.h): waits for the tensor like RecvTensor, then
// writes the header and the pieces one after the other (gRPC's callback API allows one write
// in flight; the next starts when the previous one was handed to the transport), the last
// together with the status. A cancelled call (client gone, deadline) cancels the wait; a failed
// write ends the call.
class RecvTensorStreamCall : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  explicit RecvTensorStreamCall(int64_t limit) : limit_(limit) {}

  RecvTensorStreamRequest request;
  TensorResponse response;
  CallOptions opts;

  // After RecvTensorAsync's done: the stream's first message.
  void Start(const Status& result) {
    Status s = result;
    if (s.ok()) s = EncodeRecvTensorHeader(response, limit_, &message_, &content_bytes_);
    if (!s.ok()) return Finish(ToGrpcStatus(s));
    chunk_bytes_ = request.chunk_bytes() > 0 ? static_cast<uint64_t>(request.chunk_bytes())
                                             : DefaultRecvChunkBytes(content_bytes_);
    Write();
  }
  void Fail(const Status& s) { Finish(ToGrpcStatus(s)); }

  void OnWriteDone(bool ok) override {
    if (!ok) return Finish(grpc::Status(grpc::StatusCode::CANCELLED, "RecvTensorStream: the "
                                        "client went away during the transfer"));
    const uint64_t n = std::min(chunk_bytes_, content_bytes_ - offset_);
    message_ = EncodeRecvTensorPiece(response.tensor, offset_, n);
    offset_ += n;
    Write();
  }
  void OnCancel() override { opts.StartCancel(); }
  void OnDone() override { delete this; }
  // OnDone and OnCancel inline, as ServerCall's (grpc_server_call.h); gRPC never inlines the
  // write completions.
  bool InternalInlineable() override { return true; }

 private:
  // Writes message_: with the status when it is the last one.
  void Write() {
    if (offset_ == content_bytes_) {
      StartWriteAndFinish(&message_, grpc::WriteOptions(), grpc::Status::OK);
    } else {
      StartWrite(&message_);
    }
  }

  const int64_t limit_;
  grpc::ByteBuffer message_;
  uint64_t content_bytes_ = 0, chunk_bytes_ = 0, offset_ = 0;
};

}  // namespace

class GrpcWorkerService::Impl : public RawService {
 public:
  Impl(Worker* worker, GrpcWorkerServiceOptions options)
      : worker_(worker), options_(std::move(options)) {}

  using Ctx = grpc::CallbackServerContext;
  using Buf = grpc::ByteBuffer;

  grpc::ServerUnaryReactor* GetStatus(Ctx* c, const Buf* in, Buf* out) override {
    return Serve<GetStatusRequest, GetStatusResponse>("GetStatus", c, in, out,
                                                      &Worker::GetStatusAsync);
  }
  grpc::ServerUnaryReactor* CreateWorkerSession(Ctx* c, const Buf* in, Buf* out) override {
    return Serve<CreateWorkerSessionRequest, CreateWorkerSessionResponse>(
        "CreateWorkerSession", c, in, out, &Worker::CreateWorkerSessionAsync);
  }
  grpc::ServerUnaryReactor* DeleteWorkerSession(Ctx* c, const Buf* in, Buf* out) override {
    return Serve<DeleteWorkerSessionRequest, DeleteWorkerSessionResponse>(
        "DeleteWorkerSession", c, in, out, &Worker::DeleteWorkerSessionAsync);
  }
  grpc::ServerUnaryReactor* RegisterGraph(Ctx* c, const Buf* in, Buf* out) override {
    return Serve<RegisterGraphRequest, RegisterGraphResponse>("RegisterGraph", c, in, out,
                                                              &Worker::RegisterGraphAsync);
  }
  grpc::ServerUnaryReactor* DeregisterGraph(Ctx* c, const Buf* in, Buf* out) override {
    return Serve<DeregisterGraphRequest, DeregisterGraphResponse>("DeregisterGraph", c, in, out,
                                                                  &Worker::DeregisterGraphAsync);
  }
  // The sends decoded into tensors and the received tensors written from their buffers
  // (tensor_coding.h; RunGraphRequest.send = 3, RunGraphResponse.recv = 1).
  grpc::ServerUnaryReactor* RunGraph(Ctx* ctx, const Buf* in, Buf* out) override {
    struct RunGraphCall : Call<RunGraphRequest, RunGraphResponse> {
      NamedTensors sends, recvs;
    };
    auto* call = new RunGraphCall();
    Status s = Authenticate(ctx);
    if (s.ok()) {
      s = DecodeWithNamedTensors(*in, 3, nullptr, "RunGraph request", &call->request,
                                 &call->sends);
      if (s.code() == absl::StatusCode::kDataLoss) s = errors::InvalidArgument(s.message());
    }
    if (!s.ok()) {
      call->Finish(ToGrpcStatus(s));
      return call;
    }
    call->opts.SetTimeout(RemainingMs(ctx));
    worker_->RunGraphWithTensorsAsync(
        &call->opts, &call->request, &call->sends, &call->response, &call->recvs,
        [call, out, limit = options_.max_message_size](const Status& result) {
          Status st = result.ok() ? EncodeWithNamedTensors(call->response, 1, call->recvs, limit,
                                                           "RunGraph response", out)
                                  : result;
          call->Finish(ToGrpcStatus(st));
        });
    return call;
  }
  grpc::ServerUnaryReactor* CleanupGraph(Ctx* c, const Buf* in, Buf* out) override {
    return Serve<CleanupGraphRequest, CleanupGraphResponse>("CleanupGraph", c, in, out,
                                                            &Worker::CleanupGraphAsync);
  }
  grpc::ServerUnaryReactor* CleanupAll(Ctx* c, const Buf* in, Buf* out) override {
    return Serve<CleanupAllRequest, CleanupAllResponse>("CleanupAll", c, in, out,
                                                        &Worker::CleanupAllAsync);
  }
  grpc::ServerUnaryReactor* RecvTensor(Ctx* c, const Buf* in, Buf* out) override {
    return Serve<RecvTensorRequest, TensorResponse>("RecvTensor", c, in, out,
                                                    &Worker::RecvTensorAsync);
  }
  grpc::ServerWriteReactor<Buf>* RecvTensorStream(Ctx* ctx, const Buf* in) override {
    auto* call = new RecvTensorStreamCall(options_.max_message_size);
    Status s = Authenticate(ctx);
    if (s.ok()) s = Parse("RecvTensorStream", in, &call->request);
    if (s.ok() && (call->request.chunk_bytes() < 0 ||
                   call->request.chunk_bytes() > kMaxRecvChunkBytes)) {
      s = errors::InvalidArgument("RecvTensorStream: chunk_bytes must be 0 to ",
                                  kMaxRecvChunkBytes, ", got ", call->request.chunk_bytes());
    }
    if (!s.ok()) {
      call->Fail(s);
      return call;
    }
    call->opts.SetTimeout(RemainingMs(ctx));
    worker_->RecvTensorAsync(&call->opts, &call->request.request(), &call->response,
                             [call](const Status& result) { call->Start(result); });
    return call;
  }

 private:
  Status Authenticate(const Ctx* ctx) const {
    if (options_.auth_token.empty()) return OkStatus();
    const auto& md = ctx->client_metadata();
    auto it = md.find("authorization");
    if (it == md.end() ||
        !BearerTokenMatches(std::string_view(it->second.data(), it->second.size()),
                            options_.auth_token)) {
      return errors::Unauthenticated("Missing or wrong auth token");
    }
    return OkStatus();
  }

  // INVALID_ARGUMENT naming `method` for bytes that are not a Req.
  template <typename Req>
  static Status Parse(const char* method, const Buf* in, Req* request) {
    Buf copy(*in);  // shares the slices
    grpc::ProtoBufferReader reader(&copy);
    if (!request->ParseFromZeroCopyStream(&reader)) {
      return errors::InvalidArgument("Malformed ", method, " request: not a ",
                                     Req::descriptor()->name());
    }
    return OkStatus();
  }

  template <typename Req, typename Resp>
  grpc::ServerUnaryReactor* Serve(
      const char* method, Ctx* ctx, const Buf* in, Buf* out,
      void (Worker::*fn)(CallOptions*, const Req*, Resp*, StatusCallback)) {
    auto* call = new Call<Req, Resp>();
    Status s = Authenticate(ctx);
    if (s.ok()) s = Parse(method, in, &call->request);
    if (!s.ok()) {
      call->Finish(ToGrpcStatus(s));
      return call;
    }
    call->opts.SetTimeout(RemainingMs(ctx));
    (worker_->*fn)(&call->opts, &call->request, &call->response,
                   [call, out, limit = options_.max_message_size](const Status& result) {
                     Status st = result.ok() ? WriteResponse(call->response, limit, out) : result;
                     call->Finish(ToGrpcStatus(st));
                   });
    return call;
  }

  Worker* const worker_;
  const GrpcWorkerServiceOptions options_;
};

GrpcWorkerService::GrpcWorkerService(Worker* worker, GrpcWorkerServiceOptions options)
    : impl_(std::make_unique<Impl>(worker, std::move(options))) {
  PinGrpcCallbackThreads();
}

GrpcWorkerService::~GrpcWorkerService() = default;

grpc::Service* GrpcWorkerService::service() { return impl_.get(); }

}  // namespace tensorflux
