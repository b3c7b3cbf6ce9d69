// Send/Recv between two CPU devices, for a 4-byte and a 64 MiB float tensor.
//
//   BM_RendezvousSendRecv/bytes: one step's LocalRendezvous made, one Send and one RecvAsync
//     between CPU:0 and CPU:1 (the rendezvous alone; the key is parsed once, as kernels do).
//   BM_CrossDeviceStep/bytes: Session::Run of x (fed) -> Identity on CPU:0 -> Identity on CPU:1
//     in a session with device_count {"CPU": 2}, interleaved call by call with the same graph in a
//     one-device session. The difference of the two median
//     step times is what the cross-device edge costs in a step (the _Send/_Recv pair plus running
//     two partitions instead of one).
//   BM_Memcpy/bytes: a memcpy of the same bytes, what a copying transfer would cost.
//
// CPU<->CPU transfer is zero-copy, so both should cost the same for 4 B and 64 MiB, far below
// the memcpy of 64 MiB.
#include <cstring>

#include "bench_util.h"
#include "tensorflux/devices/cpu_device.h"
#include "tensorflux/runtime/rendezvous.h"

namespace tensorflux::bench {
namespace {

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

int64_t Elements(const benchmark::State& state) { return state.range(0) / 4; }

void BM_RendezvousSendRecv(benchmark::State& state) {
  CpuDevice d0(kCpu0, 1), d1(kCpu1, 1);
  Rendezvous::Args send_args, recv_args;
  send_args.device = &d0;
  recv_args.device = &d1;
  const Tensor value = RandomFloats(TensorShape({Elements(state)}), 1);
  auto key = Rendezvous::ParseKey(Rendezvous::CreateKey(kCpu0, 1, kCpu1, "edge_1_x", {}));
  Tensor got;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    LocalRendezvous r;
    Status s = r.Send(*key, send_args, value, false);
    r.RecvAsync(*key, recv_args,
                [&got](const Status&, const Rendezvous::Args&, const Rendezvous::Args&,
                       const Tensor& t, bool) { got = t; });
    if (!s.ok() || !got.SharesBufferWith(value)) {
      state.SkipWithError("transfer failed or copied");
      return;
    }
    got = Tensor();
  }
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  state.counters["ns_per_transfer"] = ns / static_cast<double>(state.iterations());
}
BENCHMARK(BM_RendezvousSendRecv)->Arg(4)->Arg(64 << 20)->Unit(benchmark::kNanosecond);

GraphDef TwoIdentities(bool two_devices) {
  GraphDef g;
  NodeDef* x = AddNode(&g, "x", "Placeholder");
  AddNodeAttr("dtype", DT_FLOAT, x);
  NodeDef* a = AddNode(&g, "a", "Identity", {"x"});
  AddNodeAttr("T", DT_FLOAT, a);
  a->set_device(kCpu0);
  NodeDef* b = AddNode(&g, "b", "Identity", {"a"});
  AddNodeAttr("T", DT_FLOAT, b);
  b->set_device(two_devices ? kCpu1 : kCpu0);
  return g;
}

std::unique_ptr<Session> Warm(benchmark::State& state, int devices, const Tensor& x) {
  SessionOptions opts;
  (*opts.config.mutable_device_count())["CPU"] = devices;
  // The graph passes off: arithmetic simplification drops the unfetched Identity "a", and then
  // the fed tensor goes straight to CPU:1 with no _Send/_Recv left to measure.
  opts.config.mutable_graph_options()->mutable_optimizer_options()->set_opt_level(
      GraphOptions::OptimizerOptions::L0);
  auto session = NewSession(opts);
  Status s = session.ok() ? (*session)->Create(TwoIdentities(devices == 2)) : session.status();
  std::vector<Tensor> out;
  if (s.ok()) s = (*session)->Run({{"x", x}}, {"b"}, {}, &out);
  if (s.ok() && !out[0].SharesBufferWith(x)) s = errors::Internal("the fetch is a copy");
  if (!s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return nullptr;
  }
  return std::move(*session);
}

void BM_CrossDeviceStep(benchmark::State& state) {
  const Tensor x = RandomFloats(TensorShape({Elements(state)}), 2);
  auto two = Warm(state, 2, x);
  auto one = two != nullptr ? Warm(state, 1, x) : nullptr;
  if (one == nullptr) return;
  std::vector<Tensor> out;
  CallTimes two_times, one_times;
  const bool ok = TimeInterleaved(state, two.get(), {{"x", x}}, "b", &two_times,
                                  {{[&] {
                                      out.clear();
                                      one->Run({{"x", x}}, {"b"}, {}, &out).IgnoreError();
                                    },
                                    &one_times}});
  if (!ok) return;
  const double us2 = two_times.MedianSeconds() * 1e6, us1 = one_times.MedianSeconds() * 1e6;
  state.counters["us_two_devices"] = us2;
  state.counters["us_one_device"] = us1;
  state.counters["us_send_recv"] = us2 - us1;
}
BENCHMARK(BM_CrossDeviceStep)->Arg(4)->Arg(64 << 20)->Unit(benchmark::kMicrosecond)->UseRealTime();

// What a copying transfer would cost, in its own benchmark: interleaved with the steps, a
// 64 MiB memcpy evicts the caches and slows the steps that follow it.
void BM_Memcpy(benchmark::State& state) {
  const Tensor src = RandomFloats(TensorShape({Elements(state)}), 3);
  Tensor dst(DT_FLOAT, src.shape());
  CallTimes times;
  for (auto _ : state) {
    times.Time([&] { std::memcpy(dst.data<float>(), src.data<float>(), state.range(0)); });
  }
  state.counters["us_memcpy"] = times.MedianSeconds() * 1e6;
}
BENCHMARK(BM_Memcpy)->Arg(4)->Arg(64 << 20)->Unit(benchmark::kMicrosecond)->UseRealTime();

class Reporter : public SummaryReporter {
 public:
  void PrintSummary() const override {
    std::printf("\nSend/Recv between two CPU devices (median step times, us)\n");
    std::printf("%12s %14s %12s %12s %12s %14s\n", "bytes", "rendezvous_ns", "one_device",
                "two_devices", "send_recv", "memcpy_same");
    for (const char* arg : {"4", "67108864"}) {
      const std::string rk = std::string("BM_RendezvousSendRecv/") + arg;
      const std::string sk = std::string("BM_CrossDeviceStep/") + arg;
      std::printf("%12s %14.1f %12.2f %12.2f %12.2f %14.2f\n", arg, Get(rk, "ns_per_transfer"),
                  Get(sk, "us_one_device"), Get(sk, "us_two_devices"), Get(sk, "us_send_recv"),
                  Get(std::string("BM_Memcpy/") + arg, "us_memcpy"));
    }
  }
};

}  // namespace
}  // namespace tensorflux::bench

int main(int argc, char** argv) {
  tensorflux::bench::Reporter reporter;
  return tensorflux::bench::RunBenchmarks(argc, argv, &reporter);
}
