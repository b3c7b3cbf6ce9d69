#include "tensorflux/distributed/grpc_server.h"

#include <chrono>

#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tensorflux/distributed/cluster_spec.h"
#include "tensorflux/distributed/grpc_channel.h"
#include "tensorflux/distributed/grpc_master_service.h"
#include "tensorflux/distributed/grpc_remote_worker.h"
#include "tensorflux/distributed/grpc_worker_service.h"
#include "tensorflux/distributed/master.h"
#include "tensorflux/distributed/worker.h"

namespace tensorflux {
namespace {

// The options of this server's calls to the other tasks: its own security files.
StatusOr<GrpcChannelOptions> OutgoingChannelOptions(const GrpcServerOptions& o,
                                                    const ServerSecurity& sec) {
  GrpcChannelOptions c;
  c.auth_token = sec.token;
  c.max_message_size = sec.max_message_bytes;
  if (sec.tls) {
    c.use_tls = true;
    c.ssl_target_name_override = o.tls_target_name;
    if (!o.security.tls_ca_file.empty()) {
      TX_ASSIGN_OR_RETURN(c.ca_cert_pem, ReadSecurityFile(o.security.tls_ca_file, "--tls_ca"));
      // The other tasks ask for client certificates signed by this CA: present ours.
      TX_ASSIGN_OR_RETURN(c.client_cert_pem,
                          ReadSecurityFile(o.security.tls_cert_file, "--tls_cert"));
      TX_ASSIGN_OR_RETURN(c.client_key_pem, ReadSecurityFile(o.security.tls_key_file, "--tls_key"));
    }
  }
  return c;
}

StatusOr<int> PortOf(const std::string& address) {
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port)) {
    return errors::InvalidArgument("address '", address, "' has no port");
  }
  return port;
}

}  // namespace

struct GrpcServer::Impl {
  std::shared_ptr<GrpcWorkerCache> cache;
  std::unique_ptr<GrpcWorkerService> worker_service;
};

StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Create(const GrpcServerOptions& options) {
  std::unique_ptr<GrpcServer> server(new GrpcServer);
  TX_RETURN_IF_ERROR(server->Init(options));
  return server;
}

Status GrpcServer::Init(const GrpcServerOptions& options) {
  const ServerDef& def = options.server_def;
  if (!def.protocol().empty() && def.protocol() != "grpc") {
    return errors::InvalidArgument("protocol '", def.protocol(), "' is not supported (\"grpc\")");
  }
  TX_ASSIGN_OR_RETURN(ClusterSpec cluster, ClusterSpec::FromClusterDef(def.cluster()));
  TX_ASSIGN_OR_RETURN(std::string address, cluster.TaskAddress(def.job_name(), def.task_index()));
  int port = def.port();
  if (port == 0) {
    TX_ASSIGN_OR_RETURN(port, PortOf(address));
  }
  bind_host_ = options.bind_host.empty() ? "127.0.0.1" : options.bind_host;
  TX_ASSIGN_OR_RETURN(ServerSecurity sec, MakeServerSecurity(options.security, bind_host_));

  WorkerOptions wopts;
  wopts.job_name = def.job_name();
  wopts.task_index = def.task_index();
  wopts.config = def.default_session_config();
  TX_ASSIGN_OR_RETURN(worker_, Worker::Create(wopts));
  task_name_ = worker_->task_name();

  TX_ASSIGN_OR_RETURN(GrpcChannelOptions channel_opts, OutgoingChannelOptions(options, sec));
  TX_ASSIGN_OR_RETURN(std::unique_ptr<GrpcChannelCache> channels,
                      GrpcChannelCache::Create(cluster, channel_opts));
  impl_ = std::make_unique<Impl>();
  // This task's worker in process, the others over gRPC.
  impl_->cache = std::make_shared<GrpcWorkerCache>(std::shared_ptr<GrpcChannelCache>(std::move(channels)),
                                                   task_name_, worker_.get());
  worker_->set_worker_cache(impl_->cache);
  GrpcWorkerServiceOptions wsopts;
  wsopts.auth_token = sec.token;
  wsopts.max_message_size = sec.max_message_bytes;
  impl_->worker_service = std::make_unique<GrpcWorkerService>(worker_.get(), wsopts);

  MasterEnv env;
  env.local_task = task_name_;
  env.local_devices = worker_->device_mgr();
  env.worker_cache = impl_->cache.get();
  env.server_def = def;
  master_ = std::make_unique<Master>(std::move(env));
  master_service_ = std::make_unique<GrpcMasterService>(master_.get(), sec.token);

  const std::string host = bind_host_.find(':') != std::string::npos && bind_host_[0] != '['
                               ? absl::StrCat("[", bind_host_, "]")
                               : bind_host_;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat(host, ":", port), sec.credentials, &bound_port_);
  builder.SetMaxReceiveMessageSize(sec.max_message_bytes);
  builder.SetMaxSendMessageSize(sec.max_message_bytes);
  for (const auto& [name, value] : LargeMessageArgs()) builder.AddChannelArgument(name, value);
  builder.RegisterService(master_service_->service());
  builder.RegisterService(impl_->worker_service->service());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || bound_port_ == 0) {
    return errors::Unavailable("cannot listen on ", host, ":", port,
                               " (address in use, or not an address of this machine)");
  }
  return OkStatus();
}

GrpcServer::~GrpcServer() {
  Stop();
  server_.reset();
  master_service_.reset();
  master_.reset();
  if (impl_ != nullptr) impl_->worker_service.reset();
  worker_.reset();
  impl_.reset();
}

void GrpcServer::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopped_) return;
  }
  // The steps waiting here, and calls for steps that arrive from now on, fail with UNAVAILABLE
  // naming this task (gRPC's shutdown would cancel their calls: CANCELLED, which callers do not
  // take for a lost task).
  if (worker_ != nullptr) {
    worker_->StartShutdown(errors::Unavailable("Task ", task_name_, " is shutting down"));
  }
  if (server_ != nullptr) {
    // Calls in flight get a moment to finish, then are cancelled.
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  }
  if (master_ != nullptr) master_->CloseAll();
  std::lock_guard<std::mutex> l(mu_);
  stopped_ = true;
  cv_.notify_all();
}

void GrpcServer::Join() {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [this] { return stopped_; });
}

std::string GrpcServer::target() const {
  const bool v6 = bind_host_.find(':') != std::string::npos && bind_host_[0] != '[';
  return absl::StrCat("grpc://", v6 ? "[" : "", bind_host_, v6 ? "]" : "", ":", bound_port_);
}

}  // namespace tensorflux
