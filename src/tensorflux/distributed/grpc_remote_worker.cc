#include "tensorflux/distributed/grpc_remote_worker.h"

#include "grpcpp/impl/codegen/proto_utils.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "grpcpp/support/proto_buffer_writer.h"
#include "tensorflux/distributed/recv_tensor_stream.h"
#include "tensorflux/distributed/tensor_coding.h"

namespace tensorflux {
namespace {

// Parses a protobuf response from gRPC's buffer.
template <typename Resp>
std::function<Status(const grpc::ByteBuffer&)> ParseInto(Resp* response) {
  return [response](const grpc::ByteBuffer& bytes) -> Status {
    grpc::ByteBuffer copy(bytes);  // shares the slices
    grpc::ProtoBufferReader reader(&copy);
    if (!response->ParseFromZeroCopyStream(&reader)) {
      return errors::DataLoss("Malformed ", Resp::descriptor()->name(), " from the worker");
    }
    return OkStatus();
  };
}

// The client side of one RecvTensorStream call: sends the request, then feeds every message
// to a RecvTensorAssembler as it arrives (each piece is copied into the tensor on arrival); a
// message the assembler refuses cancels the call and becomes its status. `done` runs once, in
// OnDone, after which the reactor deletes itself.
class RecvTensorStreamReactor : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  RecvTensorStreamReactor(grpc::ByteBuffer request, std::string key,
                          std::shared_ptr<grpc::ClientContext> ctx, CallOptions* opts,
                          TensorResponse* response, std::function<void(const Status&)> done)
      : ctx_(std::move(ctx)),
        opts_(opts),
        request_(std::move(request)),
        assembler_(cpu_allocator(), std::move(key)),
        response_(response),
        done_(std::move(done)) {}

  void Start(grpc::GenericStub* stub, const std::string& method) {
    stub->PrepareBidiStreamingCall(ctx_.get(), method, grpc::StubOptions(), this);
    StartWriteLast(&request_, grpc::WriteOptions());
    StartRead(&message_);
    StartCall();
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // the stream ended; OnDone has its status
    error_ = assembler_.Add(message_);
    message_.Clear();
    if (!error_.ok()) return ctx_->TryCancel();
    StartRead(&message_);
  }

  void OnDone(const grpc::Status& status) override {
    opts_->ClearCancelCallback();
    Status s = !error_.ok() ? error_ : FromGrpcStatus(status);
    if (s.ok()) s = assembler_.Finish(response_);
    done_(s);
    delete this;
  }

 private:
  std::shared_ptr<grpc::ClientContext> ctx_;  // shared with the cancel callback
  CallOptions* const opts_;
  grpc::ByteBuffer request_, message_;
  RecvTensorAssembler assembler_;
  TensorResponse* const response_;
  std::function<void(const Status&)> done_;
  Status error_;
};

}  // namespace

GrpcRemoteWorker::GrpcRemoteWorker(std::shared_ptr<grpc::Channel> channel,
                                   GrpcChannelOptions options, std::string task_name,
                                   std::string address)
    : channel_(channel),
      stub_(channel),
      options_(std::move(options)),
      task_name_(std::move(task_name)),
      address_(std::move(address)) {
  PinGrpcCallbackThreads();  // its calls use gRPC's callback API
}

template <typename Req>
void GrpcRemoteWorker::Call(const char* method, CallOptions* opts, const Req& request,
                            std::function<Status(const grpc::ByteBuffer&)> parse,
                            StatusCallback done) {
  grpc::ByteBuffer bytes;
  bool own = false;
  grpc::Status ser = grpc::SerializationTraits<Req>::Serialize(request, &bytes, &own);
  if (!ser.ok()) {
    return done(errors::Internal("Cannot serialize the request (", method, " on ", task_name_,
                                 " at ", address_, ")"));
  }
  CallBytes(method, opts, std::move(bytes), std::move(parse), std::move(done));
}

void GrpcRemoteWorker::CallBytes(const char* method, CallOptions* opts, grpc::ByteBuffer request,
                                 std::function<Status(const grpc::ByteBuffer&)> parse,
                                 StatusCallback done) {
  struct State {
    grpc::ClientContext ctx;
    grpc::ByteBuffer request, response;
  };
  auto st = std::make_shared<State>();
  st->request = std::move(request);
  const int64_t timeout = opts->GetTimeout() > 0 ? opts->GetTimeout() : kDefaultRpcTimeoutMs;
  PrepareClientContext(options_, timeout, &st->ctx);
  const std::string where = absl::StrCat(" (", method, " on ", task_name_, " at ", address_, ")");
  opts->SetCancelCallback([st] { st->ctx.TryCancel(); });
  stub_.UnaryCall(&st->ctx, absl::StrCat("/tensorflux.WorkerService/", method),
                  grpc::StubOptions(), &st->request, &st->response,
                  [st, opts, parse = std::move(parse), done = std::move(done),
                   where](grpc::Status gs) {
                    opts->ClearCancelCallback();
                    Status s = FromGrpcStatus(gs);
                    if (s.code() == absl::StatusCode::kCancelled && !opts->IsCancelled()) {
                      // Not cancelled here: the task cancelled it, as a server shutting down
                      // does with the calls it still holds. The task is going away.
                      s = errors::Unavailable("the task cancelled the call (",
                                              s.message(), "): it is shutting down");
                    }
                    if (s.ok()) s = parse(st->response);
                    if (!s.ok()) s = Status(s.code(), absl::StrCat(s.message(), where));
                    done(s);
                  });
}

void GrpcRemoteWorker::GetStatusAsync(CallOptions* opts, const GetStatusRequest* request,
                                      GetStatusResponse* response, StatusCallback done) {
  Call("GetStatus", opts, *request, ParseInto(response), std::move(done));
}

void GrpcRemoteWorker::CreateWorkerSessionAsync(CallOptions* opts,
                                                const CreateWorkerSessionRequest* request,
                                                CreateWorkerSessionResponse* response,
                                                StatusCallback done) {
  Call("CreateWorkerSession", opts, *request, ParseInto(response), std::move(done));
}

void GrpcRemoteWorker::DeleteWorkerSessionAsync(CallOptions* opts,
                                                const DeleteWorkerSessionRequest* request,
                                                DeleteWorkerSessionResponse* response,
                                                StatusCallback done) {
  Call("DeleteWorkerSession", opts, *request, ParseInto(response), std::move(done));
}

void GrpcRemoteWorker::RegisterGraphAsync(CallOptions* opts, const RegisterGraphRequest* request,
                                          RegisterGraphResponse* response, StatusCallback done) {
  Call("RegisterGraph", opts, *request, ParseInto(response), std::move(done));
}

void GrpcRemoteWorker::DeregisterGraphAsync(CallOptions* opts,
                                            const DeregisterGraphRequest* request,
                                            DeregisterGraphResponse* response,
                                            StatusCallback done) {
  Call("DeregisterGraph", opts, *request, ParseInto(response), std::move(done));
}

void GrpcRemoteWorker::RunGraphAsync(CallOptions* opts, const RunGraphRequest* request,
                                     RunGraphResponse* response, StatusCallback done) {
  Call("RunGraph", opts, *request, ParseInto(response), std::move(done));
}

void GrpcRemoteWorker::RunGraphWithTensorsAsync(CallOptions* opts, const RunGraphRequest* request,
                                                const NamedTensors* sends,
                                                RunGraphResponse* response, NamedTensors* recvs,
                                                StatusCallback done) {
  // The sends go out from their buffers, the received tensors are decoded into one allocation
  // each (tensor_coding.h); RunGraphRequest.send = 3, RunGraphResponse.recv = 1.
  grpc::ByteBuffer bytes;
  Status s = EncodeWithNamedTensors(*request, 3, *sends, options_.max_message_size,
                                    "RunGraph request", &bytes);
  if (!s.ok()) {
    return done(Status(s.code(), absl::StrCat(s.message(), " (RunGraph on ", task_name_, ")")));
  }
  CallBytes("RunGraph", opts, std::move(bytes),
            [response, recvs](const grpc::ByteBuffer& in) {
              return DecodeWithNamedTensors(in, 1, cpu_allocator(), "RunGraph response",
                                            response, recvs);
            },
            std::move(done));
}

void GrpcRemoteWorker::CleanupGraphAsync(CallOptions* opts, const CleanupGraphRequest* request,
                                         CleanupGraphResponse* response, StatusCallback done) {
  Call("CleanupGraph", opts, *request, ParseInto(response), std::move(done));
}

void GrpcRemoteWorker::CleanupAllAsync(CallOptions* opts, const CleanupAllRequest* request,
                                       CleanupAllResponse* response, StatusCallback done) {
  Call("CleanupAll", opts, *request, ParseInto(response), std::move(done));
}

bool GrpcRemoteWorker::UseRecvStream(const std::string& key) {
  const int64_t min = options_.recv_stream_min_bytes;
  if (min <= 0) return min == 0;
  std::lock_guard<std::mutex> l(recv_sizes_->mu);
  auto it = recv_sizes_->bytes.find(key);
  return it != recv_sizes_->bytes.end() && it->second >= static_cast<uint64_t>(min);
}

void GrpcRemoteWorker::RecvTensorAsync(CallOptions* opts, const RecvTensorRequest* request,
                                       TensorResponse* response, StatusCallback done) {
  const std::string& key = request->rendezvous_key();
  StatusCallback noted = std::move(done);
  if (options_.recv_stream_min_bytes > 0) {
    // Records the size when the call ends (it may end after this client is gone).
    noted = [sizes = recv_sizes_, key, response, done = std::move(noted)](const Status& s) {
      if (s.ok()) {
        std::lock_guard<std::mutex> l(sizes->mu);
        // Keys are graphs' edges; a process that registers graphs without end must not grow
        // this without end: forgetting a key only costs its next transfer the unary call.
        if (sizes->bytes.size() >= 65536) sizes->bytes.clear();
        sizes->bytes[key] = response->tensor.TotalBytes();
      }
      done(s);
    };
  }
  if (UseRecvStream(key)) return RecvTensorStreamAsync(opts, request, response, std::move(noted));
  Call("RecvTensor", opts, *request,
       [response](const grpc::ByteBuffer& bytes) {
         return DecodeRecvTensorResponse(bytes, cpu_allocator(), response);
       },
       std::move(noted));
}

void GrpcRemoteWorker::RecvTensorStreamAsync(CallOptions* opts, const RecvTensorRequest* request,
                                             TensorResponse* response, StatusCallback done) {
  recv_streams_.fetch_add(1, std::memory_order_relaxed);
  const std::string where =
      absl::StrCat(" (RecvTensorStream on ", task_name_, " at ", address_, ")");
  RecvTensorStreamRequest stream_request;
  *stream_request.mutable_request() = *request;
  stream_request.set_chunk_bytes(options_.recv_chunk_bytes);
  grpc::ByteBuffer bytes;
  bool own = false;
  if (!grpc::SerializationTraits<RecvTensorStreamRequest>::Serialize(stream_request, &bytes, &own)
           .ok()) {
    return done(errors::Internal("Cannot serialize the request", where));
  }
  auto ctx = std::make_shared<grpc::ClientContext>();
  const int64_t timeout = opts->GetTimeout() > 0 ? opts->GetTimeout() : kDefaultRpcTimeoutMs;
  PrepareClientContext(options_, timeout, ctx.get());
  opts->SetCancelCallback([ctx] { ctx->TryCancel(); });
  auto* reactor = new RecvTensorStreamReactor(
      std::move(bytes), request->rendezvous_key(), ctx, opts, response,
      [where, done = std::move(done)](const Status& s) {
        done(s.ok() ? s : Status(s.code(), absl::StrCat(s.message(), where)));
      });
  reactor->Start(&stub_, "/tensorflux.WorkerService/RecvTensorStream");
}

GrpcWorkerCache::GrpcWorkerCache(std::shared_ptr<GrpcChannelCache> channels,
                                 std::string local_task, WorkerInterface* local_worker)
    : channels_(std::move(channels)),
      local_task_(std::move(local_task)),
      local_worker_(local_worker) {}

StatusOr<std::shared_ptr<WorkerInterface>> GrpcWorkerCache::GetOrCreateWorker(
    const std::string& task_or_device) {
  TX_ASSIGN_OR_RETURN(std::string task, ClusterSpec::TaskNameOf(task_or_device));
  if (local_worker_ != nullptr && task == local_task_) {
    return std::shared_ptr<WorkerInterface>(local_worker_, [](WorkerInterface*) {});
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = workers_.find(task);
    if (it != workers_.end()) return it->second;
  }
  TX_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel, channels_->FindChannel(task));
  TX_ASSIGN_OR_RETURN(std::string address, channels_->TargetAddress(task));
  auto worker = std::make_shared<GrpcRemoteWorker>(channel, channels_->options(), task, address);
  std::lock_guard<std::mutex> l(mu_);
  auto [it, inserted] = workers_.emplace(task, std::move(worker));
  return it->second;
}

}  // namespace tensorflux
