// The round trip of a RunStep: a client session on a tensorflux server's master over gRPC
// (loopback TCP; the server is a GrpcServer in this process, so only the network path differs
// from a separate server process), fetching a scalar Const; interleaved call by call with the
// same fetch from a LocalSession. The goal is an empty step under 100 us (gloo's 4-byte
// ping-pong on loopback: about 96 us, ../shared/PEERS.md).
//
//   BM_EmptyRunStep: us_grpc (median remote step), us_local (median in-process step) and their
//     difference (what the RPC, the master and the worker's RunGraph add).
//   BM_FeedFetchRunStep/bytes: the same with a fed float tensor of `bytes` fetched back through
//     an Identity (the tensor crosses the wire twice as TensorProto content).
#include <sys/resource.h>

#include <cstdlib>

#include "bench_util.h"
#include "distributed/server_process.h"
#include "tensorflux/distributed/grpc_channel.h"
#include "tensorflux/distributed/grpc_server.h"

namespace tensorflux::bench {
namespace {

std::unique_ptr<GrpcServer> StartServer(benchmark::State& state) {
  GrpcServerOptions opts;
  auto* job = opts.server_def.mutable_cluster()->add_job();
  job->set_name("worker");
  (*job->mutable_tasks())[0] = "127.0.0.1:" + std::to_string(server_test::FreePort());
  opts.server_def.set_job_name("worker");
  auto server = GrpcServer::Create(opts);
  if (!server.ok()) {
    state.SkipWithError(server.status().ToString().c_str());
    return nullptr;
  }
  return std::move(*server);
}

std::unique_ptr<Session> Open(benchmark::State& state, const std::string& target,
                              const GraphDef& graph,
                              const std::vector<std::pair<std::string, Tensor>>& feeds,
                              const std::string& fetch) {
  SessionOptions opts;
  opts.target = target;
  return WarmSession(state, graph, feeds, fetch, opts);
}

void Measure(benchmark::State& state, const GraphDef& graph,
             const std::vector<std::pair<std::string, Tensor>>& feeds, const std::string& fetch) {
  auto server = StartServer(state);
  if (server == nullptr) return;
  auto remote = Open(state, server->target(), graph, feeds, fetch);
  auto local = remote != nullptr ? Open(state, "", graph, feeds, fetch) : nullptr;
  if (local == nullptr) return;
  std::vector<Tensor> out;
  CallTimes remote_times, local_times;
  rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  if (!TimeInterleaved(state, remote.get(), feeds, fetch, &remote_times,
                       {{[&] {
                           out.clear();
                           local->Run(feeds, {fetch}, {}, &out).IgnoreError();
                         },
                         &local_times}})) {
    return;
  }
  getrusage(RUSAGE_SELF, &after);
  // The whole process: client, master, worker and gRPC's threads, and the interleaved
  // in-process step (us_local).
  SetProcessCounters(state, before, after);
  const double us_remote = remote_times.MedianSeconds() * 1e6;
  const double us_local = local_times.MedianSeconds() * 1e6;
  state.counters["us_grpc"] = us_remote;
  state.counters["us_local"] = us_local;
  state.counters["us_added"] = us_remote - us_local;
}

void BM_EmptyRunStep(benchmark::State& state) {
  GraphDef g;
  Tensor one(DT_FLOAT, TensorShape({}));
  one.scalar<float>() = 1;
  AddConst(&g, "c", one);
  Measure(state, g, {}, "c");
}
BENCHMARK(BM_EmptyRunStep)->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(1.0);

void BM_FeedFetchRunStep(benchmark::State& state) {
  GraphDef g;
  AddPlaceholder(&g, "x", TensorShape({state.range(0) / 4}));
  NodeDef* y = AddNode(&g, "y", "Identity", {"x"});
  AddNodeAttr("T", DT_FLOAT, y);
  const Tensor x = RandomFloats(TensorShape({state.range(0) / 4}), 1);
  Measure(state, g, {{"x", x}}, "y");
}
BENCHMARK(BM_FeedFetchRunStep)->Arg(4)->Arg(1 << 20)->Unit(benchmark::kMicrosecond)->UseRealTime();

class Reporter : public SummaryReporter {
 public:
  void PrintSummary() const override {
    std::printf("\nRunStep round trip over loopback gRPC vs LocalSession::Run (median us)\n");
    std::printf("%-28s %10s %10s %10s %12s %10s\n", "step", "grpc", "local", "added",
                "cpu_us/step", "switches");
    for (const char* k : {"BM_EmptyRunStep", "BM_FeedFetchRunStep/4", "BM_FeedFetchRunStep/1048576"}) {
      std::printf("%-28s %10.1f %10.1f %10.1f %12.1f %10.1f\n", k, Get(k, "us_grpc"),
                  Get(k, "us_local"), Get(k, "us_added"), Get(k, "cpu_us"), Get(k, "switches"));
    }
  }
};

}  // namespace
}  // namespace tensorflux::bench

int main(int argc, char** argv) {
  // As tensorflux-server does (grpc_channel.h); TX_NO_MALLOC_TUNING=1 leaves glibc's defaults,
  // to measure what the tuning costs or saves.
  tensorflux::TuneMallocForLargeTransfers();
  tensorflux::bench::Reporter reporter;
  return tensorflux::bench::RunBenchmarks(argc, argv, &reporter);
}
