// Workers served over loopback gRPC in the test process: TestCluster starts N tasks of job
// "worker" on ports the OS picks, connects each worker to the others through a GrpcWorkerCache,
// and gives the test a gRPC client (GrpcRemoteWorker) for each task. Shared by the worker tests
// and the RecvTensor benchmark. Also: text-graph node helpers, rendezvous keys of the client,
// float values of a TensorProto, a raw-bytes call.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "tensorflux/distributed/grpc_remote_worker.h"
#include "tensorflux/distributed/grpc_worker_service.h"
#include "tensorflux/distributed/worker.h"
#include "tensorflux/graph/graph_def_io.h"
#include "tensorflux/passes/graph_partition.h"

namespace tensorflux::testing {

inline std::string WorkerDevice(int task) {
  return absl::StrCat("/job:worker/replica:0/task:", task, "/device:CPU:0");
}
inline constexpr char kClientDevice[] = "/job:client/replica:0/task:0/device:CPU:0";

// A _Send (`input` -> key tensor_name) or _Recv node in text form.
inline std::string SendRecvAttrs(const std::string& tensor_name, const std::string& send_device,
                                 uint64_t incarnation, const std::string& recv_device) {
  return absl::StrCat("attr { key: 'tensor_name' value { s: '", tensor_name, "' } } ",
                      "attr { key: 'send_device' value { s: '", send_device, "' } } ",
                      "attr { key: 'send_device_incarnation' value { i: ",
                      static_cast<int64_t>(incarnation), " } } ",
                      "attr { key: 'recv_device' value { s: '", recv_device, "' } } ",
                      "attr { key: 'client_terminated' value { b: true } } ");
}
inline std::string SendNode(const std::string& name, const std::string& input,
                            const std::string& device, const std::string& tensor_name,
                            const std::string& recv_device = kClientDevice,
                            uint64_t incarnation = 1, const std::string& dtype = "DT_FLOAT") {
  return absl::StrCat("node { name: '", name, "' op: '_Send' input: '", input, "' device: '",
                      device, "' attr { key: 'T' value { type: ", dtype, " } } ",
                      SendRecvAttrs(tensor_name, device, incarnation, recv_device), "} ");
}
inline std::string RecvNode(const std::string& name, const std::string& device,
                            const std::string& tensor_name,
                            const std::string& send_device = kClientDevice,
                            uint64_t incarnation = 1) {
  return absl::StrCat("node { name: '", name, "' op: '_Recv' device: '", device,
                      "' attr { key: 'tensor_type' value { type: DT_FLOAT } } ",
                      SendRecvAttrs(tensor_name, send_device, incarnation, device), "} ");
}

inline std::string FloatConst(const std::string& name, const std::string& device,
                       const std::vector<float>& v, const std::vector<int>& dims) {
  std::string t = "tensor { dtype: DT_FLOAT tensor_shape { ";
  for (int d : dims) t += absl::StrCat("dim { size: ", d, " } ");
  t += "} ";
  for (float f : v) t += absl::StrCat("float_val: ", f, " ");
  t += "}";
  return absl::StrCat("node { name: '", name, "' op: 'Const' device: '", device,
                      "' attr { key: 'dtype' value { type: DT_FLOAT } } ",
                      "attr { key: 'value' value { ", t, " } } } ");
}

inline std::string BinaryNode(const std::string& name, const std::string& op, const std::string& a,
                       const std::string& b, const std::string& device) {
  return absl::StrCat("node { name: '", name, "' op: '", op, "' input: '", a, "' input: '", b,
                      "' device: '", device, "' attr { key: 'T' value { type: DT_FLOAT } } } ");
}

inline std::string ClientKey(const std::string& send_device, const std::string& recv_device,
                      const std::string& name, uint64_t incarnation = 1) {
  return Rendezvous::CreateKey(send_device, incarnation, recv_device, name, FrameAndIter());
}

// One call of `method` with raw request bytes, as a client that does not speak protobuf.
// `method`: a WorkerService method ("RunGraph") or a full path ("/tensorflux.MasterService/...").
inline grpc::Status RawCall(std::shared_ptr<grpc::Channel> channel, const std::string& method,
                     const std::string& bytes, const std::string& token = "",
                     int64_t deadline_ms = 10000) {
  PinGrpcCallbackThreads();  // a callback-API call (grpc_channel.h)
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  if (!token.empty()) ctx.AddMetadata("authorization", BearerAuthorization(token));
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms));
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1), response;
  absl::Notification finished;
  grpc::Status result;
  const std::string path =
      method.rfind('/', 0) == 0 ? method : "/tensorflux.WorkerService/" + method;
  stub.UnaryCall(&ctx, path, grpc::StubOptions(), &request,
                 &response, [&](grpc::Status s) {
                   result = s;
                   finished.Notify();
                 });
  finished.WaitForNotification();
  return result;
}

// The float values of a TensorProto; empty when it does not decode (so a comparison fails).
inline std::vector<float> Values(const TensorProto& p) {
  auto t = Tensor::FromProto(p);
  if (!t.ok() || t->dtype() != DT_FLOAT) return {};
  return std::vector<float>(t->flat<float>().begin(), t->flat<float>().end());
}

class TestCluster {
 public:
  struct Task {
    std::unique_ptr<Worker> worker;
    std::unique_ptr<GrpcWorkerService> service;
    std::unique_ptr<grpc::Server> server;
    int port = 0;
  };

  // Starts `n` tasks; a task whose index is in `down` is given a port with no server (it is
  // started and shut down again, so nothing listens there).
  // `server_credentials`: insecure when null.
  explicit TestCluster(int n, const std::vector<int>& down = {},
                       GrpcWorkerServiceOptions service_options = GrpcWorkerServiceOptions(),
                       GrpcChannelOptions channel_options = GrpcChannelOptions(),
                       std::shared_ptr<grpc::ServerCredentials> server_credentials = nullptr) {
    if (server_credentials == nullptr) server_credentials = grpc::InsecureServerCredentials();
    std::vector<std::string> addresses;
    for (int i = 0; i < n; ++i) {
      tasks_.push_back(Start(i, service_options, server_credentials));
      addresses.push_back(absl::StrCat("127.0.0.1:", tasks_.back().port));
    }
    for (int i : down) {
      tasks_[i].server->Shutdown();
      tasks_[i].server.reset();
    }
    auto spec = ClusterSpec::FromFlag(absl::StrCat("worker=", absl::StrJoin(addresses, ",")));
    channels_ = std::shared_ptr<GrpcChannelCache>(
        GrpcChannelCache::Create(*spec, channel_options).value().release());
    for (int i = 0; i < n; ++i) {
      tasks_[i].worker->set_worker_cache(std::make_shared<GrpcWorkerCache>(
          channels_, tasks_[i].worker->task_name(), tasks_[i].worker.get()));
    }
    clients_ = std::make_shared<GrpcWorkerCache>(channels_, "", nullptr);
  }

  // A client of task i with other channel options (no caching).
  std::shared_ptr<WorkerInterface> client_with(int i, const GrpcChannelOptions& options) {
    const std::string address = absl::StrCat("127.0.0.1:", tasks_[i].port);
    auto channel = NewGrpcChannel(address, options);
    if (!channel.ok()) return nullptr;
    return std::make_shared<GrpcRemoteWorker>(*channel, options, WorkerDevice(i), address);
  }

  ~TestCluster() {
    for (Task& t : tasks_) {
      if (t.server != nullptr) t.server->Shutdown();
    }
  }

  Worker* worker(int i) { return tasks_[i].worker.get(); }
  // A gRPC client of task i.
  std::shared_ptr<WorkerInterface> client(int i) {
    return clients_->GetOrCreateWorker(WorkerDevice(i)).value();
  }
  // Stops task i's server at once (calls in flight are cancelled), as a killed task would.
  void Kill(int i) {
    tasks_[i].server->Shutdown(std::chrono::system_clock::now());
    tasks_[i].server.reset();
  }
  std::shared_ptr<grpc::Channel> channel(int i) {
    return channels_->FindChannel(WorkerDevice(i)).value();
  }
  uint64_t incarnation(int i) {
    return tasks_[i].worker->device_mgr()->HostCPU()->attributes().incarnation();
  }

  // Partitions a placed text graph (every node with a full device of this cluster) by device,
  // with the real incarnations, and registers each task's part through gRPC. Returns the graph
  // handle of each task (by task index; "" for a task with no part).
  StatusOr<std::vector<std::string>> RegisterPartitioned(const std::string& text) {
    GraphDef gdef;
    if (!google::protobuf::TextFormat::ParseFromString(text, &gdef)) {
      return errors::InvalidArgument("bad text graph");
    }
    TX_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, GraphFromGraphDef(gdef));
    for (Node* n : g->nodes()) n->set_assigned_device_name(n->def().device());
    PartitionOptions popts;
    popts.get_incarnation = [this](const std::string& device) -> uint64_t {
      for (size_t i = 0; i < tasks_.size(); ++i) {
        if (device == WorkerDevice(static_cast<int>(i))) return incarnation(static_cast<int>(i));
      }
      return 1;
    };
    std::map<std::string, GraphDef> parts;
    TX_RETURN_IF_ERROR(Partition(popts, *g, &parts));
    std::vector<std::string> handles(tasks_.size());
    for (auto& [device, part] : parts) {
      for (size_t i = 0; i < tasks_.size(); ++i) {
        if (device != WorkerDevice(static_cast<int>(i))) continue;
        RegisterGraphRequest req;
        *req.mutable_graph_def() = part;
        RegisterGraphResponse resp;
        TX_RETURN_IF_ERROR(client(static_cast<int>(i))->RegisterGraph(req, &resp));
        handles[i] = resp.graph_handle();
      }
    }
    return handles;
  }

  // Runs RunGraph on every task with a handle at once (step `step_id`), over gRPC, and waits.
  std::vector<Status> RunStep(const std::vector<std::string>& handles, int64_t step_id,
                              std::vector<RunGraphRequest> requests,
                              std::vector<RunGraphResponse>* responses, int64_t timeout_ms = 0) {
    const size_t n = handles.size();
    responses->assign(n, RunGraphResponse());
    requests.resize(n);
    std::vector<Status> statuses(n);
    std::vector<std::unique_ptr<CallOptions>> opts(n);
    std::mutex mu;
    std::condition_variable cv;
    size_t remaining = 0;
    for (size_t i = 0; i < n; ++i) {
      if (handles[i].empty()) continue;
      requests[i].set_graph_handle(handles[i]);
      requests[i].set_step_id(step_id);
      opts[i] = std::make_unique<CallOptions>();
      opts[i]->SetTimeout(timeout_ms);
      ++remaining;
    }
    for (size_t i = 0; i < n; ++i) {
      if (handles[i].empty()) continue;
      client(static_cast<int>(i))
          ->RunGraphAsync(opts[i].get(), &requests[i], &(*responses)[i], [&, i](const Status& s) {
            std::lock_guard<std::mutex> l(mu);
            statuses[i] = s;
            if (--remaining == 0) cv.notify_all();
          });
    }
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return remaining == 0; });
    return statuses;
  }

  Status CleanupStep(int64_t step_id) {
    for (size_t i = 0; i < tasks_.size(); ++i) {
      if (tasks_[i].server == nullptr) continue;
      CleanupGraphRequest req;
      req.set_step_id(step_id);
      CleanupGraphResponse resp;
      TX_RETURN_IF_ERROR(client(static_cast<int>(i))->CleanupGraph(req, &resp));
    }
    return OkStatus();
  }

 private:
  static Task Start(int index, const GrpcWorkerServiceOptions& service_options,
                    const std::shared_ptr<grpc::ServerCredentials>& credentials) {
    Task t;
    WorkerOptions o;
    o.job_name = "worker";
    o.task_index = index;
    o.config.set_inter_op_parallelism_threads(2);
    o.config.set_intra_op_parallelism_threads(1);
    t.worker = Worker::Create(o).value();
    t.service = std::make_unique<GrpcWorkerService>(t.worker.get(), service_options);
    grpc::ServerBuilder b;
    b.AddListeningPort("127.0.0.1:0", credentials, &t.port);
    b.RegisterService(t.service->service());
    b.SetMaxReceiveMessageSize(-1);
    b.SetMaxSendMessageSize(-1);
    t.server = b.BuildAndStart();
    return t;
  }

  std::vector<Task> tasks_;
  std::shared_ptr<GrpcChannelCache> channels_;
  std::shared_ptr<GrpcWorkerCache> clients_;
};

}  // namespace tensorflux::testing
