// The round trip of a RunStep between two processes, as a deployment runs it and as gloo's
// ping-pong is measured (../shared/PEERS.md: about 96 us): a tensorflux-server child process
// (master + worker of a one-task cluster on 127.0.0.1) and this process as a plain client
// (GrpcSession: sync calls only, so no gRPC callback threads here, grpc_channel.h). Issue 7's
// goal: an empty RunStep under 100 us. runstep_bench runs client and server in one process.
//
//   BM_ClientEmptyRunStep: fetch of a scalar Const.
//   BM_ClientFeedFetchRunStep/bytes: a float tensor of `bytes` fed and fetched back through an
//     Identity (master_coding.h: sent from its buffer, one copy on arrival, each way).
// Counters: us (median call), us_p10 and us_p90 (10th and 90th percentiles), cpu_us and switches (this client
// process, per call), server_switches and server_cpu_us (the server process's context switches
// and CPU per call, from /proc). The process tunes malloc as a server would (TX_NO_MALLOC_TUNING=1: glibc's defaults).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench_util.h"
#include "distributed/server_process.h"
#include "tensorflux/distributed/grpc_channel.h"
#include "tensorflux/distributed/grpc_session.h"

namespace tensorflux::bench {
namespace {

// Voluntary + involuntary context switches of every thread of `pid` so far.
int64_t ProcessSwitches(pid_t pid) {
  int64_t n = 0;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(dir, ec)) {
    std::ifstream status(task.path() / "status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.find("ctxt_switches:") != std::string::npos) {
        n += std::atoll(line.substr(line.find(':') + 1).c_str());
      }
    }
  }
  return n;
}

// User + system CPU of every thread of `pid` so far, in microseconds (clock-tick resolution).
double ProcessCpuMicros(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i >= 14) ticks += std::atof(field.c_str());
  }
  return ticks * 1e6 / static_cast<double>(sysconf(_SC_CLK_TCK));
}

void Measure(benchmark::State& state, const GraphDef& graph,
             const std::vector<std::pair<std::string, Tensor>>& feeds, const std::string& fetch) {
  const int port = server_test::FreePort();
  server_test::ServerProcess server;
  server.Start({"--cluster", "worker=127.0.0.1:" + std::to_string(port), "--job", "worker",
                "--task", "0"});
  if (!server.WaitListening()) {
    state.SkipWithError(("tensorflux-server did not start: " + server.log()).c_str());
    return;
  }
  SessionOptions opts;
  opts.target = "grpc://127.0.0.1:" + std::to_string(port);
  auto created = NewGrpcSession(opts);  // named, so the library that serves grpc:// is linked
  std::vector<Tensor> out;
  Status s = created.ok() ? (*created)->Create(graph) : created.status();
  if (s.ok()) s = (*created)->Run(feeds, {fetch}, {}, &out);  // compiles the step
  if (!s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  std::unique_ptr<Session> session = *std::move(created);
  CallTimes times;
  rusage before, after;
  const int64_t server_before = ProcessSwitches(server.pid());
  const double server_cpu_before = ProcessCpuMicros(server.pid());
  getrusage(RUSAGE_SELF, &before);
  if (!TimeInterleaved(state, session.get(), feeds, fetch, &times, {})) return;
  getrusage(RUSAGE_SELF, &after);
  state.counters["us"] = times.MedianSeconds() * 1e6;
  state.counters["us_p10"] = times.PercentileSeconds(0.1) * 1e6;
  state.counters["us_p90"] = times.PercentileSeconds(0.9) * 1e6;
  SetProcessCounters(state, before, after);
  state.counters["server_switches"] =
      static_cast<double>(ProcessSwitches(server.pid()) - server_before) /
      static_cast<double>(state.iterations());
  state.counters["server_cpu_us"] = (ProcessCpuMicros(server.pid()) - server_cpu_before) /
                                    static_cast<double>(state.iterations());
  session->Close().IgnoreError();
}

void BM_ClientEmptyRunStep(benchmark::State& state) {
  GraphDef g;
  AddConst(&g, "c", Tensor::Scalar<float>(1.0f));
  Measure(state, g, {}, "c");
}
BENCHMARK(BM_ClientEmptyRunStep)->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(1.0);

void BM_ClientFeedFetchRunStep(benchmark::State& state) {
  GraphDef g;
  AddPlaceholder(&g, "x", TensorShape({state.range(0) / 4}));
  NodeDef* y = AddNode(&g, "y", "Identity", {"x"});
  AddNodeAttr("T", DT_FLOAT, y);
  Measure(state, g, {{"x", RandomFloats(TensorShape({state.range(0) / 4}), 1)}}, "y");
}
BENCHMARK(BM_ClientFeedFetchRunStep)->Arg(4)->Arg(1 << 20)->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

class Reporter : public SummaryReporter {
 public:
  void PrintSummary() const override {
    std::printf("\nRunStep round trip, client process -> tensorflux-server process (loopback)\n");
    std::printf("%-32s %9s %9s %9s %9s %9s %9s %9s\n", "step", "median us", "p10 us", "p90 us",
                "cpu_us", "switches", "server sw", "server us");
    for (const char* k : {"BM_ClientEmptyRunStep", "BM_ClientFeedFetchRunStep/4",
                          "BM_ClientFeedFetchRunStep/1048576"}) {
      std::printf("%-32s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", k, Get(k, "us"),
                  Get(k, "us_p10"), Get(k, "us_p90"), Get(k, "cpu_us"), Get(k, "switches"),
                  Get(k, "server_switches"), Get(k, "server_cpu_us"));
    }
  }
};

}  // namespace
}  // namespace tensorflux::bench

int main(int argc, char** argv) {
  // As tensorflux-server and runstep_bench do (grpc_channel.h); TX_NO_MALLOC_TUNING=1 leaves
  // glibc's defaults, as a client that does not call it (the Python module) runs.
  tensorflux::TuneMallocForLargeTransfers();
  tensorflux::bench::Reporter reporter;
  return tensorflux::bench::RunBenchmarks(argc, argv, &reporter);
}
