// MasterSession over in-process Workers reached through an emulated network link (LinkedTask):
// what the cluster tests see only by chance on a loaded machine, here on purpose. A step that
// fails at its deadline answers only once the tasks that answer have dropped it, so a stopped
// task that resumes afterwards (and runs the step's RunGraph it had queued, with the time left
// starting again, as gRPC sends it) cannot complete the step on the ps: the failed step applies
// no update.
#include "tensorflux/distributed/master_session.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cluster_test_util.h"
#include "gtest/gtest.h"
#include "tensorflux/distributed/worker.h"

namespace tensorflux {
namespace {

using cluster_test::Floats;
using cluster_test::kTrainGraph;
using cluster_test::ParseGraph;
using cluster_test::Values;

// A Worker as a remote task: a call's deadline and cancellation end it at the caller at once,
// as gRPC's client does, whatever the worker does; the worker's own deadline for the call is
// `deadline_slack_ms` later (gRPC sends the time left, which starts again when the call
// arrives), and cancellations and CleanupGraph reach it `control_latency_ms` late. While
// stopped, calls and cancellations are held (calls are answered at the caller's deadline) and
// reach the worker on Resume in their order, the calls with their whole time left, as the
// queued messages of a SIGSTOPped process do after SIGCONT.
class LinkedTask : public WorkerInterface {
 public:
  LinkedTask(Worker* worker, int64_t deadline_slack_ms, int64_t control_latency_ms)
      : worker_(worker), slack_ms_(deadline_slack_ms), latency_ms_(control_latency_ms) {}
  ~LinkedTask() override {
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> l(mu_);
      threads.swap(threads_);
    }
    for (std::thread& t : threads) t.join();
  }

  void Stop() {
    std::lock_guard<std::mutex> l(mu_);
    stopped_ = true;
  }
  void Resume() {
    std::vector<std::pair<int64_t, std::function<void()>>> held;
    {
      std::lock_guard<std::mutex> l(mu_);
      stopped_ = false;
      held.swap(held_);
    }
    for (auto& [delay_ms, deliver] : held) Deliver(delay_ms, std::move(deliver));
  }

  void GetStatusAsync(CallOptions* o, const GetStatusRequest* r, GetStatusResponse* p,
                      StatusCallback d) override {
    worker_->GetStatusAsync(o, r, p, std::move(d));
  }
  void CreateWorkerSessionAsync(CallOptions* o, const CreateWorkerSessionRequest* r,
                                CreateWorkerSessionResponse* p, StatusCallback d) override {
    worker_->CreateWorkerSessionAsync(o, r, p, std::move(d));
  }
  void DeleteWorkerSessionAsync(CallOptions* o, const DeleteWorkerSessionRequest* r,
                                DeleteWorkerSessionResponse* p, StatusCallback d) override {
    worker_->DeleteWorkerSessionAsync(o, r, p, std::move(d));
  }
  void RegisterGraphAsync(CallOptions* o, const RegisterGraphRequest* r, RegisterGraphResponse* p,
                          StatusCallback d) override {
    worker_->RegisterGraphAsync(o, r, p, std::move(d));
  }
  void DeregisterGraphAsync(CallOptions* o, const DeregisterGraphRequest* r,
                            DeregisterGraphResponse* p, StatusCallback d) override {
    worker_->DeregisterGraphAsync(o, r, p, std::move(d));
  }
  void CleanupAllAsync(CallOptions* o, const CleanupAllRequest* r, CleanupAllResponse* p,
                       StatusCallback d) override {
    worker_->CleanupAllAsync(o, r, p, std::move(d));
  }
  void RunGraphAsync(CallOptions*, const RunGraphRequest*, RunGraphResponse*,
                     StatusCallback d) override {
    d(errors::Unimplemented("LinkedTask: RunGraph without tensors"));
  }
  void RunGraphWithTensorsAsync(CallOptions* opts, const RunGraphRequest* request,
                                const NamedTensors* sends, RunGraphResponse* response,
                                NamedTensors* recvs, StatusCallback done) override {
    struct Server {
      RunGraphRequest req;
      NamedTensors sends, recvs;
      RunGraphResponse resp;
    };
    auto server = std::make_shared<Server>();
    server->req = *request;
    server->sends = *sends;
    Link(opts, std::move(done), /*delay_ms=*/0,
         [this, server](CallOptions* o, StatusCallback d) {
           worker_->RunGraphWithTensorsAsync(o, &server->req, &server->sends, &server->resp,
                                             &server->recvs, std::move(d));
         },
         [server, response, recvs] {
           *response = server->resp;
           *recvs = server->recvs;
         });
  }
  void CleanupGraphAsync(CallOptions* opts, const CleanupGraphRequest* request,
                         CleanupGraphResponse*, StatusCallback done) override {
    auto req = std::make_shared<CleanupGraphRequest>(*request);
    auto resp = std::make_shared<CleanupGraphResponse>();
    Link(opts, std::move(done), latency_ms_,
         [this, req, resp](CallOptions* o, StatusCallback d) {
           worker_->CleanupGraphAsync(o, req.get(), resp.get(), std::move(d));
         },
         [] {});
  }
  void RecvTensorAsync(CallOptions* opts, const RecvTensorRequest* request,
                       TensorResponse* response, StatusCallback done) override {
    auto req = std::make_shared<RecvTensorRequest>(*request);
    auto resp = std::make_shared<TensorResponse>();
    Link(opts, std::move(done), 0,
         [this, req, resp](CallOptions* o, StatusCallback d) {
           worker_->RecvTensorAsync(o, req.get(), resp.get(), std::move(d));
         },
         [resp, response] { *response = *resp; });
  }

 private:
  // One call: answered once, by the worker (`copy_back` then takes its response) or at the
  // caller's deadline or cancellation.
  struct Call {
    std::mutex mu;
    std::condition_variable cv;
    bool answered = false;
    CallOptions* client = nullptr;
    StatusCallback done;
    std::function<void()> copy_back;
    CallOptions server;  // the worker's side of the call

    void Answer(const Status& s, bool from_worker) {
      StatusCallback d;
      {
        std::lock_guard<std::mutex> l(mu);
        if (answered) return;
        answered = true;
        if (from_worker && s.ok()) copy_back();
        client->ClearCancelCallback();
        d = std::move(done);
      }
      cv.notify_all();
      d(s);
    }
  };

  // Runs `fn` on a thread of its own `delay_ms` from now, or holds it while stopped.
  void Deliver(int64_t delay_ms, std::function<void()> fn) {
    std::lock_guard<std::mutex> l(mu_);
    if (stopped_) {
      held_.emplace_back(delay_ms, std::move(fn));
      return;
    }
    threads_.emplace_back([delay_ms, fn = std::move(fn)] {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      fn();
    });
  }

  void Link(CallOptions* opts, StatusCallback done, int64_t delay_ms,
            std::function<void(CallOptions*, StatusCallback)> serve,
            std::function<void()> copy_back) {
    auto call = std::make_shared<Call>();
    call->client = opts;
    call->done = std::move(done);
    call->copy_back = std::move(copy_back);
    const int64_t timeout = opts->GetTimeout() > 0 ? opts->GetTimeout() : 60000;
    call->server.SetTimeout(timeout + slack_ms_);
    {  // the caller's deadline
      std::lock_guard<std::mutex> l(mu_);
      threads_.emplace_back([call, timeout] {
        std::unique_lock<std::mutex> l(call->mu);
        if (call->cv.wait_for(l, std::chrono::milliseconds(timeout),
                              [&] { return call->answered; })) {
          return;
        }
        l.unlock();
        call->Answer(errors::DeadlineExceeded("Deadline Exceeded (LinkedTask)"), false);
      });
    }
    opts->SetCancelCallback([this, call] {
      call->Answer(errors::Cancelled("Cancelled (LinkedTask)"), false);
      Deliver(latency_ms_, [call] { call->server.StartCancel(); });
    });
    Deliver(delay_ms, [call, serve = std::move(serve)] {
      serve(&call->server, [call](const Status& s) { call->Answer(s, true); });
    });
  }

  Worker* const worker_;
  const int64_t slack_ms_, latency_ms_;
  std::mutex mu_;
  bool stopped_ = false;
  std::vector<std::pair<int64_t, std::function<void()>>> held_;  // (delay, delivery)
  std::vector<std::thread> threads_;
};

// Every task of the cluster: `self`'s own task is its Worker, the others their LinkedTask.
class LinkedCache : public WorkerCacheInterface {
 public:
  LinkedCache(std::map<std::string, Worker*> workers,
              std::map<std::string, std::shared_ptr<LinkedTask>> links, std::string self)
      : workers_(std::move(workers)), links_(std::move(links)), self_(std::move(self)) {}
  std::vector<std::string> ListWorkers() const override {
    std::vector<std::string> tasks;
    for (const auto& [task, w] : workers_) tasks.push_back(task);
    return tasks;
  }
  StatusOr<std::shared_ptr<WorkerInterface>> GetOrCreateWorker(const std::string& name) override {
    for (const auto& [task, w] : workers_) {
      if (name.compare(0, task.size(), task) != 0) continue;
      if (task == self_) return std::shared_ptr<WorkerInterface>(w, [](WorkerInterface*) {});
      return std::shared_ptr<WorkerInterface>(links_.at(task));
    }
    return errors::NotFound("no task ", name);
  }

 private:
  std::map<std::string, Worker*> workers_;
  std::map<std::string, std::shared_ptr<LinkedTask>> links_;
  std::string self_;
};

Status TrainStep(MasterSession* session, int64_t timeout_ms) {
  RunStepRequest req;
  req.add_target("train");
  req.mutable_options()->set_timeout_in_ms(timeout_ms);
  NamedTensors feeds = {{"x0", Floats({1, 0.5f, -1})}, {"x1", Floats({2, 1, 0.25f})}};
  RunStepResponse resp;
  NamedTensors fetched;
  return session->Run(req, feeds, &resp, &fetched);
}

StatusOr<std::vector<float>> ReadW(MasterSession* session) {
  RunStepRequest req;
  req.add_fetch("w_read");
  RunStepResponse resp;
  NamedTensors fetched;
  TX_RETURN_IF_ERROR(session->Run(req, {}, &resp, &fetched));
  return Values(fetched[0].second);
}

// The cluster test's AStoppedTaskFailsCallsAtTheirDeadline with its race made certain: worker 1
// is stopped, the ps's own deadline for the step is far later than the master's and the
// master's cancellation and CleanupGraph reach the ps 300 ms late; worker 1 resumes as soon as
// the step has failed. Before a failed step waited for its tasks' CleanupGraph, the resumed
// worker fed the ps, which applied the failed step's update.
TEST(MasterSessionTest, AFailedStepAppliesNothingWhenAStoppedTaskResumes) {
  const std::string kPs = "/job:ps/replica:0/task:0";
  const std::string kW0 = "/job:worker/replica:0/task:0";
  const std::string kW1 = "/job:worker/replica:0/task:1";
  std::map<std::string, std::unique_ptr<Worker>> owned;
  std::map<std::string, Worker*> workers;
  for (const auto& [job, task] : std::vector<std::pair<std::string, int>>{
           {"ps", 0}, {"worker", 0}, {"worker", 1}}) {
    WorkerOptions o;
    o.job_name = job;
    o.task_index = task;
    auto w = Worker::Create(o);
    ASSERT_TRUE(w.ok()) << w.status();
    workers[(*w)->task_name()] = w->get();
    owned[(*w)->task_name()] = *std::move(w);
  }
  std::map<std::string, std::shared_ptr<LinkedTask>> links;
  links[kPs] = std::make_shared<LinkedTask>(workers[kPs], /*slack=*/20000, /*latency=*/300);
  links[kW0] = std::make_shared<LinkedTask>(workers[kW0], 0, 300);
  links[kW1] = std::make_shared<LinkedTask>(workers[kW1], 0, 300);
  std::map<std::string, std::shared_ptr<LinkedCache>> caches;
  for (const auto& [task, w] : workers) {
    caches[task] = std::make_shared<LinkedCache>(workers, links, task);
    w->set_worker_cache(caches[task]);
  }
  MasterEnv env;  // the master of worker 0
  env.local_task = kW0;
  env.local_devices = workers[kW0]->device_mgr();
  env.worker_cache = caches[kW0].get();
  {
    auto created = MasterSession::Create(&env, NewSessionHandle(), ConfigProto());
    ASSERT_TRUE(created.ok()) << created.status();
    std::unique_ptr<MasterSession> session = *std::move(created);
    ASSERT_TRUE(session->CreateGraph(ParseGraph(kTrainGraph)).ok());
    RunStepRequest init;
    init.add_target("w_init");
    RunStepResponse resp;
    NamedTensors fetched;
    ASSERT_TRUE(session->Run(init, {}, &resp, &fetched).ok());
    Status s = TrainStep(session.get(), 60000);  // registers every partition
    ASSERT_TRUE(s.ok()) << s;

    links[kW1]->Stop();
    s = TrainStep(session.get(), 200);
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    links[kW1]->Resume();  // its RunGraph of the failed step runs now

    // Every task has dropped the failed step (the ps's late cancellation has arrived, too).
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    for (const auto& [task, w] : workers) EXPECT_EQ(w->num_steps(), 0) << task;
    StatusOr<std::vector<float>> w = ReadW(session.get());
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(*w, std::vector<float>({1 * 0.625f, 2 * 0.8125f, 3 * 1.09375f}))
        << "the failed step applied its update";
    ASSERT_TRUE(session->Close().ok());
  }
  // The links' threads (joined when the links go) may still call the workers.
  for (const auto& [task, w] : workers) w->set_worker_cache(nullptr);
  caches.clear();
  links.clear();
}

}  // namespace
}  // namespace tensorflux
