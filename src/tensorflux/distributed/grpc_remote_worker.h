// GrpcRemoteWorker: WorkerInterface over gRPC to one task's WorkerService (TF's
// GrpcRemoteWorker), and GrpcWorkerCache, the WorkerCacheInterface over a GrpcChannelCache.
//
// Every call carries the channel options' token (PrepareClientContext) and a deadline: the
// CallOptions' timeout, else kDefaultRpcTimeoutMs (60 s). CallOptions::StartCancel cancels the
// call in flight. A failed call keeps gRPC's code (UNAVAILABLE when the task cannot be reached,
// DEADLINE_EXCEEDED, or the worker's own status) and its message ends with the method and the
// task: "... (RecvTensor on /job:worker/replica:0/task:1 at 127.0.0.1:2223)".
// RecvTensor's response is decoded from gRPC's buffers into one tensor allocation
// (distributed/tensor_coding.h). A key whose last tensor had at least the options'
// recv_stream_min_bytes (2 MiB by default) is received over RecvTensorStream instead, which
// copies each piece into the tensor while the next ones are in flight
// (distributed/recv_tensor_stream.h); its errors name the key. Calls complete on gRPC's threads.
//
// GrpcWorkerCache returns the in-process worker for its own task (no RPC to itself) and one
// GrpcRemoteWorker per other task, made on first use.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "grpcpp/generic/generic_stub.h"
#include "tensorflux/distributed/grpc_channel.h"
#include "tensorflux/distributed/worker_interface.h"

namespace tensorflux {

inline constexpr int64_t kDefaultRpcTimeoutMs = 60000;

class GrpcRemoteWorker : public WorkerInterface {
 public:
  // `task_name` and `address` are for error messages.
  GrpcRemoteWorker(std::shared_ptr<grpc::Channel> channel, GrpcChannelOptions options,
                   std::string task_name, std::string address);

  void GetStatusAsync(CallOptions* opts, const GetStatusRequest* request,
                      GetStatusResponse* response, StatusCallback done) override;
  void CreateWorkerSessionAsync(CallOptions* opts, const CreateWorkerSessionRequest* request,
                                CreateWorkerSessionResponse* response,
                                StatusCallback done) override;
  void DeleteWorkerSessionAsync(CallOptions* opts, const DeleteWorkerSessionRequest* request,
                                DeleteWorkerSessionResponse* response,
                                StatusCallback done) override;
  void RegisterGraphAsync(CallOptions* opts, const RegisterGraphRequest* request,
                          RegisterGraphResponse* response, StatusCallback done) override;
  void DeregisterGraphAsync(CallOptions* opts, const DeregisterGraphRequest* request,
                            DeregisterGraphResponse* response, StatusCallback done) override;
  void RunGraphAsync(CallOptions* opts, const RunGraphRequest* request,
                     RunGraphResponse* response, StatusCallback done) override;
  void RunGraphWithTensorsAsync(CallOptions* opts, const RunGraphRequest* request,
                                const NamedTensors* sends, RunGraphResponse* response,
                                NamedTensors* recvs, StatusCallback done) override;
  void CleanupGraphAsync(CallOptions* opts, const CleanupGraphRequest* request,
                         CleanupGraphResponse* response, StatusCallback done) override;
  void CleanupAllAsync(CallOptions* opts, const CleanupAllRequest* request,
                       CleanupAllResponse* response, StatusCallback done) override;
  void RecvTensorAsync(CallOptions* opts, const RecvTensorRequest* request,
                       TensorResponse* response, StatusCallback done) override;

  const std::string& task_name() const { return task_name_; }
  // How many RecvTensor calls went over RecvTensorStream (for tests and diagnostics).
  int64_t recv_streams() const { return recv_streams_.load(std::memory_order_relaxed); }

 private:
  // Issues one call of `method` whose request is `request` and whose response bytes are
  // handed to `parse`.
  template <typename Req>
  void Call(const char* method, CallOptions* opts, const Req& request,
            std::function<Status(const grpc::ByteBuffer&)> parse, StatusCallback done);
  // RecvTensor over RecvTensorStream.
  void RecvTensorStreamAsync(CallOptions* opts, const RecvTensorRequest* request,
                             TensorResponse* response, StatusCallback done);
  // The size of each key's last received tensor, which decides whether its next RecvTensor
  // takes the stream. Shared with calls in flight, which record their size when they end.
  struct RecvSizes {
    std::mutex mu;
    absl::flat_hash_map<std::string, uint64_t> bytes;  // by rendezvous key
  };
  bool UseRecvStream(const std::string& key);

  // The same with the request already encoded.
  void CallBytes(const char* method, CallOptions* opts, grpc::ByteBuffer request,
                 std::function<Status(const grpc::ByteBuffer&)> parse, StatusCallback done);

  std::shared_ptr<grpc::Channel> channel_;
  grpc::GenericStub stub_;
  const GrpcChannelOptions options_;
  const std::string task_name_;
  const std::string address_;
  std::atomic<int64_t> recv_streams_{0};
  const std::shared_ptr<RecvSizes> recv_sizes_ = std::make_shared<RecvSizes>();
};

class GrpcWorkerCache : public WorkerCacheInterface {
 public:
  // `local_worker` (may be null) serves `local_task`; it is not owned and must outlive the
  // cache's users.
  GrpcWorkerCache(std::shared_ptr<GrpcChannelCache> channels, std::string local_task,
                  WorkerInterface* local_worker);

  std::vector<std::string> ListWorkers() const override { return channels_->ListWorkers(); }
  StatusOr<std::shared_ptr<WorkerInterface>> GetOrCreateWorker(
      const std::string& task_or_device) override;

 private:
  std::shared_ptr<GrpcChannelCache> channels_;
  const std::string local_task_;
  WorkerInterface* local_worker_;
  std::mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<WorkerInterface>> workers_;
};

}  // namespace tensorflux
