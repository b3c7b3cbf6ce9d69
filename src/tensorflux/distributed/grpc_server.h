// GrpcServer: one task of a cluster (TF's GrpcServer / tf.train.Server): this task's devices, a
// Worker serving them (WorkerService) and a Master (MasterService) whose sessions run over every
// task, on one gRPC port.
//
// The task is server_def.job_name / task_index of server_def.cluster; it listens on
// bind_host (default 127.0.0.1) at the port of its cluster address, or server_def.port when set.
// Security (server_security.h): TLS, client certificates, a token checked on every call of both
// services, the message size limit, and the refusal of a non-loopback bind without TLS and a
// token unless `insecure`. The master's calls to the other tasks use the same files (the CA, the
// server's certificate as client certificate, the token; tls_target_name when the
// certificates name a host other than the addresses').
//
// Errors of Create: INVALID_ARGUMENT for a task not in the cluster or bad security files,
// FAILED_PRECONDITION for a refused bind, UNAVAILABLE when the port cannot be bound.
// Stop() aborts the worker's steps with UNAVAILABLE ("Task ... is shutting down": the calls
// waiting on them, other tasks' RecvTensor included, and later ones fail with it), stops
// accepting calls, cancels those still in flight (after a short grace period) and closes every
// session; Join() waits for Stop. The destructor stops.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "tensorflux/cluster.pb.h"
#include "tensorflux/core/status.h"
#include "tensorflux/distributed/server_security.h"

namespace grpc {
class Server;
}

namespace tensorflux {

class Master;
class GrpcMasterService;
class Worker;

struct GrpcServerOptions {
  ServerDef server_def;
  std::string bind_host = "127.0.0.1";
  ServerSecurityOptions security;
  std::string tls_target_name;  // for the master's outgoing calls (see above)
};

class GrpcServer {
 public:
  static StatusOr<std::unique_ptr<GrpcServer>> Create(const GrpcServerOptions& options);
  ~GrpcServer();

  // Stops (see above); idempotent.
  void Stop();
  // Blocks until Stop() has finished.
  void Join();

  // "grpc://<bind host>:<bound port>", what a client passes to NewSession.
  std::string target() const;
  int bound_port() const { return bound_port_; }
  // "/job:worker/replica:0/task:0".
  const std::string& task_name() const { return task_name_; }
  Master* master() { return master_.get(); }
  Worker* worker() { return worker_.get(); }

  struct Impl;  // the worker service and the worker cache

 private:
  GrpcServer() = default;
  Status Init(const GrpcServerOptions& options);

  std::string bind_host_;
  int bound_port_ = 0;
  std::string task_name_;
  std::unique_ptr<Worker> worker_;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<Master> master_;
  std::unique_ptr<GrpcMasterService> master_service_;
  std::unique_ptr<grpc::Server> server_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
};

}  // namespace tensorflux
