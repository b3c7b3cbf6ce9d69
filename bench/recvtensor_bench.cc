// RecvTensor throughput over loopback gRPC, with a memcpy of the same bytes as the reference.
//
//   BM_RecvTensor/bytes/stream: a Worker served over gRPC on 127.0.0.1 holds a float variable
//     of `bytes`; each iteration runs a step on it (in process, untimed) whose _Send offers the
//     variable's value under a key for another task, then times one RecvTensor call from a
//     GrpcRemoteWorker client: the request, the response written from the tensor's buffer, and
//     its decoding into one fresh tensor allocation on the client. stream 1: the client's
//     default options (RecvTensorStream for tensors of 2 MiB and more, after the first transfer
//     of the key); stream 0: always the unary RecvTensor (recv_stream_min_bytes -1), the A/B
//     reference; stream N > 1: the stream in pieces of N KiB (at 64 MiB, 1 and 16 MiB: around
//     the default 4 MiB, to tune it on an idle machine). bytes_per_second is the throughput
//     (GB/s = 1e9 bytes/s); cpu_us, switches and faults are the process's CPU time, context
//     switches and page faults per iteration (both sides of the transfer, and the untimed
//     step); best_GBps is the fastest single transfer's throughput.
//   BM_Memcpy/bytes: a memcpy into a fresh allocation of the same size, in the same process:
//     the one-process bound a copying transfer is compared with.
//   BM_TcpLoopback/bytes/conns: the same bytes from one buffer into another over `conns`
//     loopback TCP connections (each its own sending and receiving thread, an equal share of
//     the bytes, blocking send/recv): the kernel's two copies and nothing else, the bound of a
//     transfer over that many connections on this machine, taken in the same run as RecvTensor
//     so that their ratio holds under load.
//
//   BM_EmptyRunGraph: the round trip of one RunGraph call over gRPC for a graph of one NoOp.
//
// Sizes 4 KiB, 1 MiB, 64 MiB, 256 MiB. Issue 7's goal: >= 3 GB/s at 64 MiB. The process tunes
// malloc as a server would (TuneMallocForLargeTransfers), and each size is warmed up first.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "distributed/worker_test_util.h"

namespace tensorflux::bench {
namespace {

using testing::TestCluster;
using testing::WorkerDevice;

struct Fixture {
  Fixture(int64_t bytes, GrpcChannelOptions options = GrpcChannelOptions())
      : cluster(1, {}, GrpcWorkerServiceOptions(), options) {
    const std::string dev = WorkerDevice(0);
    const std::string var = absl::StrCat(
        "node { name: 'v' op: 'VarHandleOp' device: '", dev,
        "' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' value { shape { "
        "dim { size: ", bytes / 4, " } } } } attr { key: 'shared_name' value { s: 'v' } } } ");
    const std::string init = absl::StrCat(
        var, "node { name: 'dims' op: 'Const' device: '", dev,
        "' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor { "
        "dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: ", bytes / 4, " } } } } ",
        "node { name: 'one' op: 'Const' device: '", dev,
        "' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor { "
        "dtype: DT_FLOAT tensor_shape { } float_val: 1.5 } } } } ",
        "node { name: 'fill' op: 'Fill' input: 'dims' input: 'one' device: '", dev,
        "' attr { key: 'T' value { type: DT_FLOAT } } } ",
        "node { name: 'assign' op: 'AssignVariableOp' input: 'v' input: 'fill' device: '", dev,
        "' attr { key: 'dtype' value { type: DT_FLOAT } } } ");
    const std::string step = absl::StrCat(
        var, "node { name: 'read' op: 'ReadVariableOp' input: 'v' device: '", dev,
        "' attr { key: 'dtype' value { type: DT_FLOAT } } } ",
        testing::SendNode("send", "read", dev, "out", WorkerDevice(1), cluster.incarnation(0)));
    auto init_handle = cluster.RegisterPartitioned(init);
    auto step_handle = cluster.RegisterPartitioned(step);
    if (!init_handle.ok() || !step_handle.ok()) {
      status = !init_handle.ok() ? init_handle.status() : step_handle.status();
      return;
    }
    handle = (*step_handle)[0];
    status = Run((*init_handle)[0], 1);
    key = Rendezvous::CreateKey(dev, cluster.incarnation(0), WorkerDevice(1), "out", {});
  }

  Status Run(const std::string& graph, int64_t step_id) {
    RunGraphRequest req;
    req.set_graph_handle(graph);
    req.set_step_id(step_id);
    RunGraphResponse resp;
    return cluster.worker(0)->RunGraph(req, &resp);
  }

  TestCluster cluster;
  Status status;
  std::string handle;
  std::string key;
};

void BM_RecvTensor(benchmark::State& state) {
  const int64_t bytes = state.range(0);
  GrpcChannelOptions options;
  if (state.range(1) == 0) options.recv_stream_min_bytes = -1;
  if (state.range(1) > 1) options.recv_chunk_bytes = state.range(1) << 10;
  Fixture f(bytes, options);
  if (!f.status.ok()) {
    state.SkipWithError(std::string(f.status.message()).c_str());
    return;
  }
  auto client = f.cluster.client(0);
  int64_t step = 100;
  // One transfer: a step offers the tensor, RecvTensor takes it (timed), the step is cleaned up.
  auto transfer = [&](double* secs) -> Status {
    ++step;
    TX_RETURN_IF_ERROR(f.Run(f.handle, step));
    RecvTensorRequest req;
    req.set_step_id(step);
    req.set_rendezvous_key(f.key);
    TensorResponse got;
    const auto start = std::chrono::steady_clock::now();
    Status s = client->RecvTensor(req, &got);
    *secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s.ok() && (got.tensor.TotalBytes() != static_cast<size_t>(bytes) ||
                   got.tensor.data<float>()[bytes / 4 - 1] != 1.5f)) {
      s = errors::Internal("wrong tensor received");
    }
    got = TensorResponse();
    CleanupGraphRequest cleanup;
    cleanup.set_step_id(step);
    CleanupGraphResponse cleaned;
    f.cluster.worker(0)->CleanupGraph(cleanup, &cleaned).IgnoreError();
    return s;
  };
  // Warm-up, untimed: the first transfers of a size take fresh pages (page faults cost tens of
  // microseconds each on a loaded VM) in the allocator's cache, gRPC's buffers and malloc.
  double secs = 0;
  for (int i = 0; i < 3; ++i) {
    Status s = transfer(&secs);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  double best = 1e9;
  for (auto _ : state) {
    Status s = transfer(&secs);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
    state.SetIterationTime(secs);
    best = std::min(best, secs);
  }
  getrusage(RUSAGE_SELF, &after);
  SetProcessCounters(state, before, after);
  // The fastest transfer, in GB/s: on a shared machine, the one the other processes disturbed
  // least.
  state.counters["best_GBps"] = static_cast<double>(bytes) / best / 1e9;
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_RecvTensor)
    ->ArgNames({"bytes", "stream"})
    ->ArgsProduct({{4 << 10, 1 << 20, 64 << 20, 256 << 20}, {0, 1}})
    ->ArgsProduct({{64 << 20}, {1024, 16384}})
    ->UseManualTime()->Unit(benchmark::kMicrosecond);

// The round trip of RunGraph over gRPC for a graph of one NoOp: what a distributed step costs
// on one worker besides its kernels (request, session and graph lookup, the step's rendezvous,
// the executor, the response). CleanupGraph runs untimed after each step.
void BM_EmptyRunGraph(benchmark::State& state) {
  TestCluster cluster(1);
  auto handles = cluster.RegisterPartitioned(absl::StrCat(
      "node { name: 'noop' op: 'NoOp' device: '", WorkerDevice(0), "' }"));
  if (!handles.ok()) {
    state.SkipWithError(std::string(handles.status().message()).c_str());
    return;
  }
  auto client = cluster.client(0);
  int64_t step = 0;
  for (auto _ : state) {
    RunGraphRequest req;
    req.set_graph_handle((*handles)[0]);
    req.set_step_id(++step);
    RunGraphResponse resp;
    const auto start = std::chrono::steady_clock::now();
    Status s = client->RunGraph(req, &resp);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
    state.SetIterationTime(secs);
    CleanupGraphRequest cleanup;
    cleanup.set_step_id(step);
    CleanupGraphResponse cleaned;
    cluster.worker(0)->CleanupGraph(cleanup, &cleaned).IgnoreError();
  }
}
BENCHMARK(BM_EmptyRunGraph)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_Memcpy(benchmark::State& state) {
  const int64_t bytes = state.range(0);
  const Tensor src = RandomFloats(TensorShape({bytes / 4}), 1);
  for (auto _ : state) {
    Tensor dst(DT_FLOAT, src.shape());
    std::memcpy(dst.raw_data(), src.raw_data(), bytes);
    benchmark::DoNotOptimize(dst.raw_data());
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_Memcpy)
    ->Arg(4 << 10)->Arg(1 << 20)->Arg(64 << 20)->Arg(256 << 20)
    ->Unit(benchmark::kMicrosecond);

// `conns` connected loopback TCP socket pairs (sender fd, receiver fd); empty on failure.
std::vector<std::pair<int, int>> LoopbackPairs(int conns) {
  std::vector<std::pair<int, int>> pairs;
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listener, conns) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (listener >= 0) close(listener);
    return pairs;
  }
  for (int i = 0; i < conns; ++i) {
    const int out = socket(AF_INET, SOCK_STREAM, 0);
    if (out < 0 || connect(out, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) break;
    pairs.emplace_back(out, accept(listener, nullptr, nullptr));
  }
  close(listener);
  return pairs;
}

void BM_TcpLoopback(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  const int conns = static_cast<int>(state.range(1));
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  const std::vector<std::pair<int, int>> pairs = LoopbackPairs(conns);
  if (static_cast<int>(pairs.size()) != conns) {
    state.SkipWithError("cannot connect over loopback");
    return;
  }
  const size_t share = bytes / conns;
  bool failed = false;
  auto transfer = [&] {
    std::vector<std::thread> threads;
    for (int i = 0; i < conns; ++i) {
      char* out = src.data() + i * share;
      char* in = dst.data() + i * share;
      threads.emplace_back([&failed, fd = pairs[i].first, out, share] {
        for (size_t done = 0; done < share;) {
          const ssize_t n = send(fd, out + done, share - done, 0);
          if (n <= 0) return void(failed = true);
          done += static_cast<size_t>(n);
        }
      });
      threads.emplace_back([&failed, fd = pairs[i].second, in, share] {
        for (size_t done = 0; done < share;) {
          const ssize_t n = recv(fd, in + done, share - done, 0);
          if (n <= 0) return void(failed = true);
          done += static_cast<size_t>(n);
        }
      });
    }
    for (std::thread& t : threads) t.join();
  };
  // Warm-up, untimed, as BM_RecvTensor's: the buffers' pages and the sockets' buffers.
  for (int i = 0; i < 3 && !failed; ++i) transfer();
  for (auto _ : state) transfer();
  for (const auto& [out, in] : pairs) {
    close(out);
    close(in);
  }
  if (failed) state.SkipWithError("loopback send/recv failed");
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(share * conns));
}
BENCHMARK(BM_TcpLoopback)
    ->ArgNames({"bytes", "conns"})
    ->ArgsProduct({{64 << 20, 256 << 20}, {1, 2}})
    ->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tensorflux::bench

int main(int argc, char** argv) {
  // As a server would (distributed/grpc_channel.h): reuse gRPC's receive buffers' pages.
  tensorflux::TuneMallocForLargeTransfers();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
