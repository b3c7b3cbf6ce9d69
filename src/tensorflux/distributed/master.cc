#include "tensorflux/distributed/master.h"

#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "tensorflux/devices/device_name_utils.h"
#include "tensorflux/distributed/cluster_spec.h"

namespace tensorflux {

Master::Master(MasterEnv env) : env_(std::move(env)) {}

Master::~Master() {
  CloseAll();
  std::unique_lock<std::mutex> l(closures_mu_);
  closures_cv_.wait(l, [this] { return closures_running_ == 0; });
}

void Master::SchedClosure(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> l(closures_mu_);
    ++closures_running_;
  }
  std::thread([this, fn = std::move(fn)]() mutable {
    {
      std::function<void()> run = std::move(fn);
      run();
    }  // its captures are gone before the destructor may return
    std::lock_guard<std::mutex> l(closures_mu_);
    if (--closures_running_ == 0) closures_cv_.notify_all();
  }).detach();
}

StatusOr<std::shared_ptr<MasterSession>> Master::Find(const std::string& handle) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = sessions_.find(handle);
  if (it == sessions_.end()) {
    return errors::NotFound("Session ", handle, " is not found");
  }
  return it->second;
}

Status Master::CreateSession(const CreateSessionRequest& request,
                             CreateSessionResponse* response) {
  ConfigProto config = env_.server_def.default_session_config();
  config.MergeFrom(request.config());
  const std::string handle = NewSessionHandle();
  TX_ASSIGN_OR_RETURN(std::unique_ptr<MasterSession> session,
                      MasterSession::Create(&env_, handle, config));
  TX_RETURN_IF_ERROR(session->CreateGraph(request.graph_def()));
  response->set_session_handle(handle);
  response->set_graph_version(session->graph_version());
  std::lock_guard<std::mutex> l(mu_);
  sessions_.emplace(handle, std::move(session));
  return OkStatus();
}

Status Master::ExtendSession(const ExtendSessionRequest& request,
                             ExtendSessionResponse* response) {
  TX_ASSIGN_OR_RETURN(auto session, Find(request.session_handle()));
  return session->Extend(request, response);
}

namespace {

// The step's error in the response, when the request asks for that (TF's
// store_errors_in_response_body): the call itself is then OK.
Status StoreErrorInResponse(const RunStepRequest& request, Status s, RunStepResponse* response,
                            NamedTensors* fetched) {
  if (s.ok() || !request.store_errors_in_response_body()) return s;
  response->Clear();
  fetched->clear();
  response->set_status_code(static_cast<int>(s.code()));
  response->set_status_error_message(std::string(s.message()));
  return OkStatus();
}

}  // namespace

Status Master::RunStep(const RunStepRequest& request, const NamedTensors& feeds,
                       RunStepResponse* response, NamedTensors* fetched) {
  Status s;
  auto session = Find(request.session_handle());
  if (session.ok()) {
    s = (*session)->Run(request, feeds, response, fetched);
  } else {
    s = session.status();
  }
  return StoreErrorInResponse(request, s, response, fetched);
}

void Master::RunStepAsync(CallOptions* opts, const RunStepRequest& request,
                          const NamedTensors& feeds, RunStepResponse* response,
                          NamedTensors* fetched, StatusCallback done) {
  StatusOr<std::shared_ptr<MasterSession>> found = Find(request.session_handle());
  if (!found.ok()) return done(StoreErrorInResponse(request, found.status(), response, fetched));
  std::shared_ptr<MasterSession> session = *std::move(found);
  MasterSession* s = session.get();
  s->RunAsync(opts, request, feeds, response, fetched,
              [this](std::function<void()> fn) { SchedClosure(std::move(fn)); },
              [this, &request, response, fetched, done = std::move(done),
               session = std::move(session)](const Status& result) mutable {
                Status s = StoreErrorInResponse(request, result, response, fetched);
                // A session closed during the step may be released here for the last time: its
                // destructor waits for the step's CleanupGraph calls, which must not hold this
                // (possibly gRPC's) thread. Before `done`: once the call is answered, a server
                // shutting down may destroy this Master.
                if (session->closed()) SchedClosure([dropped = std::move(session)] {});
                done(s);
              });
}

Status Master::CloseSession(const CloseSessionRequest& request, CloseSessionResponse* response) {
  std::shared_ptr<MasterSession> session;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = sessions_.find(request.session_handle());
    if (it == sessions_.end()) {
      return errors::NotFound("Session ", request.session_handle(), " is not found");
    }
    session = std::move(it->second);
    sessions_.erase(it);
  }
  return session->Close();
}

Status Master::ListDevices(const ListDevicesRequest& request, ListDevicesResponse* response) {
  std::vector<DeviceAttributes> devices;
  if (!request.session_handle().empty()) {
    TX_ASSIGN_OR_RETURN(auto session, Find(request.session_handle()));
    devices = session->ListDevices();
  } else {
    // A throwaway view: list every task's devices the way a session would.
    const std::string handle = NewSessionHandle();
    TX_ASSIGN_OR_RETURN(auto session, MasterSession::Create(&env_, handle, ConfigProto()));
    devices = session->ListDevices();
    session->Close().IgnoreError();
  }
  for (const DeviceAttributes& d : devices) {
    auto task = ClusterSpec::TaskNameOf(d.name());
    const bool local = task.ok() && *task == env_.local_task;
    *(local ? response->add_local_device() : response->add_remote_device()) = d;
  }
  return OkStatus();
}

Status Master::Reset(const ResetRequest& request, ResetResponse* response) {
  CloseAll();
  std::vector<std::string> tasks;
  for (const std::string& task : env_.worker_cache->ListWorkers()) {
    bool match = request.device_filters().empty();
    for (const std::string& f : request.device_filters()) {
      // A filter names a task or a prefix of one ("/job:ps", "/job:worker/replica:0/task:1").
      if (absl::StartsWith(task, f)) match = true;
    }
    if (match) tasks.push_back(task);
  }
  std::vector<Status> results(tasks.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < tasks.size(); ++i) {
    threads.emplace_back([&, i] {
      auto w = env_.worker_cache->GetOrCreateWorker(tasks[i]);
      if (!w.ok()) {
        results[i] = w.status();
        return;
      }
      CleanupAllRequest req;
      *req.mutable_container() = request.container();
      CleanupAllResponse resp;
      results[i] = (*w)->CleanupAll(req, &resp, 10000);
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!results[i].ok()) {
      return Status(results[i].code(), absl::StrCat("Reset: CleanupAll on task ", tasks[i],
                                                    " failed: ", results[i].message()));
    }
  }
  return OkStatus();
}

void Master::CloseAll() {
  absl::flat_hash_map<std::string, std::shared_ptr<MasterSession>> sessions;
  {
    std::lock_guard<std::mutex> l(mu_);
    sessions.swap(sessions_);
  }
  for (auto& [handle, s] : sessions) s->Close().IgnoreError();
}

int Master::NumSessions() const {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<int>(sessions_.size());
}

}  // namespace tensorflux
