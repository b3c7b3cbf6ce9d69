// GPU kernels' throughput on the GPU (needs an NVIDIA GPU; every benchmark is skipped without
// one, so the binary also runs on CPU-only machines):
//   BM_GpuMatMul/N      float32 MatMul N x N x N through the GPU kernel (cuBLAS, FP32 math),
//                       GFLOP/s = 2 N^3 / median call time
//   BM_GpuConv2D/case   float32 Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter (case =
//                       3 * shape + direction) on ResNet-like NHWC shapes (cuDNN, FMA math),
//                       GFLOP/s from the geometry's flops
// Each call is the kernel's Compute plus a wait for the GPU (SynchronizeCudaDevice), timed by
// the host clock: for these sizes (0.1-20 ms) the launch and wait cost (~10-20 us) is small.
// The summary prints GFLOP/s per benchmark. Run by scripts/gpu-check.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"
#include "tensorflux/devices/cuda_api.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/ops/conv_geometry.h"

namespace tensorflux::bench {
namespace {

DeviceBase* Gpu() {
  static DeviceBase* gpu = []() -> DeviceBase* {
    if (CudaDeviceCount() == 0) return nullptr;
    auto d = NewCudaDevice("/job:localhost/replica:0/task:0/device:GPU:0", 0);
    return d.ok() ? d->release() : nullptr;
  }();
  return gpu;
}

Tensor OnGpu(const Tensor& host) {
  Tensor t;
  Status s = CopyHostToCudaDevice(Gpu(), host, &t);
  return s.ok() ? t : Tensor();
}

// One kernel on the GPU with fixed inputs (device tensors, or host tensors for HostMemory args).
class GpuKernel {
 public:
  GpuKernel(const NodeDef& def, std::vector<Tensor> inputs) : inputs_(std::move(inputs)) {
    status_ = CreateOpKernel(Gpu(), def, &kernel_);
  }
  const Status& status() const { return status_; }
  // Compute once and wait for the GPU.
  Status Run() {
    std::vector<Tensor> in = inputs_;
    OpKernelContext::Params p;
    p.op_kernel = kernel_.get();
    p.device = Gpu();
    p.inputs = in.data();
    p.num_inputs = static_cast<int>(in.size());
    OpKernelContext ctx(&p);
    kernel_->Compute(&ctx);
    TX_RETURN_IF_ERROR(ctx.status());
    return SynchronizeCudaDevice(Gpu());
  }

 private:
  std::vector<Tensor> inputs_;
  std::unique_ptr<OpKernel> kernel_;
  Status status_;
};

// Times `k` call by call; GFLOP/s from the median.
void TimeKernel(benchmark::State& state, GpuKernel& k, double flops) {
  if (!k.status().ok()) {
    state.SkipWithError(k.status().ToString().c_str());
    return;
  }
  Status s = k.Run();  // warm-up: cuBLAS/cuDNN setup, algorithm choice, allocator cache
  CallTimes times;
  for (auto _ : state) {
    if (!s.ok()) break;
    times.Time([&] { s = k.Run(); });
  }
  if (!s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  state.counters["GFLOP/s"] = times.GigaPerSecond(flops);
  state.counters["ms"] = times.MedianSeconds() * 1e3;
}

void BM_GpuMatMul(benchmark::State& state) {
  if (Gpu() == nullptr) {
    state.SkipWithError("no GPU");
    return;
  }
  const int64_t n = state.range(0);
  NodeDef def;
  def.set_name("matmul");
  def.set_op("MatMul");
  def.add_input("a");
  def.add_input("b");
  AddNodeAttr("T", DT_FLOAT, &def);
  GpuKernel k(def, {OnGpu(RandomFloats(TensorShape({n, n}), 1)),
                    OnGpu(RandomFloats(TensorShape({n, n}), 2))});
  TimeKernel(state, k, 2.0 * n * n * n);
}
BENCHMARK(BM_GpuMatMul)->Arg(1024)->Arg(2048)->Arg(4096)->Arg(8192)->UseRealTime();

struct ConvShape {
  int64_t batch, size, in, out, k, stride;
};
// ResNet-50-like layers at batch 64.
const ConvShape kConvShapes[] = {
    {64, 56, 64, 64, 3, 1},
    {64, 28, 128, 128, 3, 1},
    {64, 14, 256, 256, 3, 1},
    {64, 56, 64, 256, 1, 1},
    {64, 112, 64, 64, 3, 2},
};

void BM_GpuConv2D(benchmark::State& state) {
  if (Gpu() == nullptr) {
    state.SkipWithError("no GPU");
    return;
  }
  const ConvShape& c = kConvShapes[state.range(0) / 3];
  const int dir = static_cast<int>(state.range(0) % 3);  // forward, backprop input, filter
  state.SetLabel(std::to_string(c.batch) + "x" + std::to_string(c.size) + "x" +
                 std::to_string(c.size) + "x" + std::to_string(c.in) + " k" + std::to_string(c.k) +
                 " s" + std::to_string(c.stride) + " -> " + std::to_string(c.out) + " " +
                 (dir == 0 ? "forward" : dir == 1 ? "backprop input" : "backprop filter"));
  const TensorShape input({c.batch, c.size, c.size, c.in});
  const TensorShape filter({c.k, c.k, c.in, c.out});
  NodeDef def;
  def.set_name("conv");
  def.set_op(dir == 0 ? "Conv2D" : dir == 1 ? "Conv2DBackpropInput" : "Conv2DBackpropFilter");
  for (const char* in : {"a", "b", "c"}) {
    if (dir != 0 || std::string(in) != "c") def.add_input(in);
  }
  AddNodeAttr("T", DT_FLOAT, &def);
  AddNodeAttr("strides", std::vector<int32_t>{1, static_cast<int32_t>(c.stride),
                                              static_cast<int32_t>(c.stride), 1}, &def);
  AddNodeAttr("padding", std::string("SAME"), &def);
  auto attrs = conv::ConvAttrs::FromNodeDef(def);
  auto g = attrs.ok() ? conv::ComputeConvGeometry(*attrs, input, filter, false)
                      : StatusOr<conv::ConvGeometry>(attrs.status());
  if (!g.ok()) {
    state.SkipWithError(g.status().ToString().c_str());
    return;
  }
  const Tensor x = OnGpu(RandomFloats(input, 1));
  const Tensor w = OnGpu(RandomFloats(filter, 2));
  const Tensor dy = OnGpu(RandomFloats(g->OutputShape(), 3));
  auto sizes = [](const TensorShape& s) {
    Tensor t(DT_INT32, TensorShape({4}));
    for (int d = 0; d < 4; ++d) t.data<int32_t>()[d] = static_cast<int32_t>(s.dim_size(d));
    return t;
  };
  std::vector<Tensor> inputs;
  if (dir == 0) inputs = {x, w};
  if (dir == 1) inputs = {sizes(input), w, dy};
  if (dir == 2) inputs = {x, sizes(filter), dy};
  GpuKernel k(def, inputs);
  TimeKernel(state, k, g->Flops());
}
BENCHMARK(BM_GpuConv2D)->DenseRange(0, 3 * 5 - 1)->UseRealTime();

class GpuSummary : public SummaryReporter {
 public:
  void PrintSummary() const override {
    std::printf("\nGPU summary (%s): GFLOP/s, float32 FP32 math (no TF32)\n",
                Gpu() == nullptr ? "no GPU" : CudaDeviceDescription(0).c_str());
    for (const std::string& key : Keys()) {
      std::printf("  %-32s %10.1f GFLOP/s %9.3f ms\n", key.c_str(), Get(key, "GFLOP/s"),
                  Get(key, "ms"));
    }
  }
};

}  // namespace
}  // namespace tensorflux::bench

int main(int argc, char** argv) {
  tensorflux::bench::GpuSummary reporter;
  return tensorflux::bench::RunBenchmarks(argc, argv, &reporter);
}
