// Transfers between host memory and a device with its own memory, tested without a GPU: a
// test-only device type (TXDEVMEM) whose allocator stands for device memory. It stores every
// tensor's bytes XOR 0x5A, so host code that read its tensors without a copy would see wrong
// values, and its copy functions (Device::CopyCPUTensorToDevice / CopyDeviceTensorToCPU) really
// copy, re-encode and count. Checks: the rendezvous's transfer rule (runtime/rendezvous.h) for
// every pair of sides; a graph split between CPU and TXDEVMEM (PartitionedExecutor) gives the
// right values with one copy per crossing tensor; HostMemory args travel as _HostSend /
// _HostRecv without a copy; a same-device edge from device memory into a HostMemory input gets
// a same-device pair with one copy.
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensorflux/devices/device.h"
#include "tensorflux/framework/call_frame.h"
#include "tensorflux/framework/memory_types.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/graph/graph_def_io.h"
#include "tensorflux/kernels/shared/sendrecv_kernels.h"
#include "tensorflux/runtime/partitioned_executor.h"
#include "tensorflux/runtime/rendezvous.h"

namespace tensorflux {
namespace {

constexpr char kDevType[] = "TXDEVMEM";
constexpr uint8_t kMask = 0x5A;

// Copies n bytes with every byte XOR kMask (encode and decode are the same).
void XorCopy(const void* src, void* dst, size_t n) {
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  for (size_t i = 0; i < n; ++i) d[i] = s[i] ^ kMask;
}

class DevMemAllocator : public Allocator {
 public:
  std::string Name() const override { return "txdevmem"; }
  void* AllocateRaw(size_t alignment, size_t n) override {
    return cpu_allocator()->AllocateRaw(alignment, n);
  }
  void DeallocateRaw(void* p, size_t n) override { cpu_allocator()->DeallocateRaw(p, n); }
};

class DevMemDevice : public Device {
 public:
  explicit DevMemDevice(int id)
      : Device("/job:localhost/replica:0/task:0/device:TXDEVMEM:" + std::to_string(id),
               int64_t{1} << 30, "test device memory (bytes XOR 0x5A)") {}

  Allocator* GetAllocator() override { return &allocator_; }
  bool tensors_in_host_memory() const override { return false; }
  Status CopyCPUTensorToDevice(const Tensor& cpu, Tensor* out) override {
    TX_ASSIGN_OR_RETURN(Tensor t, Copy(cpu, &allocator_));
    ++h2d;
    *out = std::move(t);
    return OkStatus();
  }
  Status CopyDeviceTensorToCPU(const Tensor& dev, Tensor* out) override {
    TX_ASSIGN_OR_RETURN(Tensor t, Copy(dev, cpu_allocator()));
    ++d2h;
    *out = std::move(t);
    return OkStatus();
  }

  std::atomic<int> h2d{0}, d2h{0};

 private:
  static StatusOr<Tensor> Copy(const Tensor& in, Allocator* a) {
    if (in.dtype() == DT_STRING || in.dtype() == DT_RESOURCE) {
      return errors::InvalidArgument("a ", DataTypeString(in.dtype()),
                                     " tensor cannot be held in device memory");
    }
    TX_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(in.dtype(), in.shape(), a));
    XorCopy(in.raw_data(), t.raw_data(), in.TotalBytes());
    return t;
  }

  DevMemAllocator allocator_;
};

// A DeviceBase that is not a Device, of type CPU: host memory.
class PlainCpu : public DeviceBase {
 public:
  const std::string& name() const override { return name_; }
  const std::string& device_type() const override { return type_; }
  Allocator* GetAllocator() override { return cpu_allocator(); }

 private:
  std::string name_ = "/job:localhost/replica:0/task:0/device:CPU:0";
  std::string type_ = DEVICE_CPU;
};

// ---------------------------------------------------------------- test ops and kernels
// TxDevMemSquare(x: float) -> x * x; TxDevMemReshape(tensor: float, shape: int32) -> tensor
// reshaped; TxDevMemShape(x: float) -> int32 shape; TxDevMemIntId(x: int32) -> x. CPU kernels
// compute on host values; TXDEVMEM kernels decode and encode device bytes, keep `shape`
// (Reshape's input) and `shape` (Shape's output) in host memory, and IntId's in device memory.

REGISTER_OP("TxDevMemSquare").Input("x: float").Output("y: float");
REGISTER_OP("TxDevMemReshape").Input("tensor: float").Input("shape: int32").Output("y: float");
REGISTER_OP("TxDevMemShape").Input("x: float").Output("shape: int32");
REGISTER_OP("TxDevMemIntId").Input("x: int32").Output("y: int32");
REGISTER_OP("TxDevMemBadHost").Input("x: float").Output("y: float");  // kernel: HostMemory("z")

bool OnDev(OpKernelContext* ctx) { return ctx->device()->device_type() == kDevType; }

// The float values of a tensor of the kernel's device (decoded on TXDEVMEM).
std::vector<float> Values(OpKernelContext* ctx, const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.NumElements()));
  if (OnDev(ctx)) {
    XorCopy(t.raw_data(), v.data(), t.TotalBytes());
  } else {
    std::memcpy(v.data(), t.raw_data(), t.TotalBytes());
  }
  return v;
}

class SquareOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    std::vector<float> v = Values(ctx, ctx->input(0));
    for (float& x : v) x *= x;
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, ctx->input(0).shape(), &out));
    if (OnDev(ctx)) {
      XorCopy(v.data(), out->raw_data(), out->TotalBytes());
    } else {
      std::memcpy(out->raw_data(), v.data(), out->TotalBytes());
    }
  }
};

// Reads `shape` as host int32 values on every device (a HostMemory input on TXDEVMEM): a shape
// left in device memory would decode to garbage and fail the element count check.
class ReshapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& shape = ctx->input(1);
    TensorShape s;
    for (int32_t d : shape.flat<int32_t>()) {
      OP_REQUIRES(ctx, d >= 0 && d < 1000, errors::InvalidArgument("bad dim ", d));
      s.AddDim(d);
    }
    OP_REQUIRES(ctx, s.num_elements() == ctx->input(0).NumElements(),
                errors::InvalidArgument("shape does not match"));
    Tensor out;
    OP_REQUIRES(ctx, out.CopyFrom(ctx->input(0), s), errors::Internal("CopyFrom"));
    ctx->set_output(0, out);
  }
};

// The shape as a host tensor on every device (a HostMemory output on TXDEVMEM).
class ShapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    std::vector<int32_t> dims;
    for (int i = 0; i < ctx->input(0).shape().dims(); ++i) {
      dims.push_back(static_cast<int32_t>(ctx->input(0).shape().dim_size(i)));
    }
    ctx->set_output(0, Tensor::FromVector<int32_t>(dims, TensorShape({(int64_t)dims.size()})));
  }
};

// Passes its int32 input on (in device memory on TXDEVMEM).
class IntIdOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};

[[maybe_unused]] const bool kRegistered = [] {
  KernelRegistry* r = KernelRegistry::Global();
  for (const char* type : {DEVICE_CPU, kDevType}) {
    const bool dev = std::string(type) == kDevType;
    r->Register(KernelDefBuilder("TxDevMemSquare").Device(type),
                [](OpKernelConstruction* c) -> OpKernel* { return new SquareOp(c); });
    KernelDefBuilder reshape("TxDevMemReshape"), shape("TxDevMemShape");
    if (dev) {
      reshape.HostMemory("shape");
      shape.HostMemory("shape");
    }
    r->Register(reshape.Device(type),
                [](OpKernelConstruction* c) -> OpKernel* { return new ReshapeOp(c); });
    r->Register(shape.Device(type),
                [](OpKernelConstruction* c) -> OpKernel* { return new ShapeOp(c); });
    r->Register(KernelDefBuilder("TxDevMemIntId").Device(type),
                [](OpKernelConstruction* c) -> OpKernel* { return new IntIdOp(c); });
  }
  r->Register(KernelDefBuilder("TxDevMemBadHost").Device(kDevType).HostMemory("z"),
              [](OpKernelConstruction* c) -> OpKernel* { return new IntIdOp(c); });
  RegisterSendRecvKernels(kDevType);
  return true;
}();

// ---------------------------------------------------------------- memory types

NodeDef TestNode(const std::string& op, int inputs) {
  NodeDef n;
  n.set_name("n");
  n.set_op(op);
  for (int i = 0; i < inputs; ++i) n.add_input("in" + std::to_string(i));
  return n;
}

TEST(MemoryTypesTest, HostMemoryArgsAndHostDtypesOnADeviceAllHostOnCpu) {
  using MT = MemoryType;
  MemoryTypeVector in, out;
  ASSERT_TRUE(MemoryTypesForNode(TestNode("TxDevMemReshape", 2), kDevType, &in, &out).ok());
  EXPECT_EQ(in, (MemoryTypeVector{MT::kDevice, MT::kHost}));
  EXPECT_EQ(out, (MemoryTypeVector{MT::kDevice}));
  ASSERT_TRUE(MemoryTypesForNode(TestNode("TxDevMemShape", 1), kDevType, &in, &out).ok());
  EXPECT_EQ(out, (MemoryTypeVector{MT::kHost}));
  ASSERT_TRUE(MemoryTypesForNode(TestNode("TxDevMemReshape", 2), DEVICE_CPU, &in, &out).ok());
  EXPECT_EQ(in, (MemoryTypeVector{MT::kHost, MT::kHost}));
  // No kernel on the device: the dtype rule (a resource handle stays on the host).
  NodeDef read = TestNode("ReadVariableOp", 1);
  AddNodeAttr("dtype", DT_FLOAT, &read);
  ASSERT_TRUE(MemoryTypesForNode(read, kDevType, &in, &out).ok());
  EXPECT_EQ(in, (MemoryTypeVector{MT::kHost}));
  EXPECT_EQ(out, (MemoryTypeVector{MT::kDevice}));
  // A registration whose HostMemory names no arg of the op.
  Status s = MemoryTypesForNode(TestNode("TxDevMemBadHost", 1), kDevType, &in, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
  EXPECT_NE(std::string(s.message()).find("HostMemory(\"z\")"), std::string::npos) << s;
}

// ---------------------------------------------------------------- the transfer rule

Tensor Floats(std::vector<float> v, const TensorShape& shape) {
  return Tensor::FromVector<float>(v, shape);
}

std::vector<float> HostValues(const Tensor& t) {
  const auto f = t.flat<float>();
  return std::vector<float>(f.begin(), f.end());
}

Rendezvous::Args Side(DeviceBase* d, bool on_host = false) {
  Rendezvous::Args a;
  a.device = d;
  a.on_host = on_host;
  return a;
}

TEST(DeviceCopyTest, HostToHostSharesTheBuffer) {
  PlainCpu cpu;
  DevMemDevice dev(0);
  Tensor in = Floats({1, 2, 3}, TensorShape({3})), out;
  // CPU <-> CPU, client <-> CPU, and a _HostSend -> _HostRecv pair of the device.
  for (auto [s, r] : {std::pair{Side(&cpu), Side(&cpu)}, std::pair{Side(nullptr), Side(&cpu)},
                      std::pair{Side(&dev, true), Side(&cpu)},
                      std::pair{Side(&cpu), Side(&dev, true)}}) {
    ASSERT_TRUE(TransferInProcess(s, r, in, &out).ok());
    EXPECT_EQ(out.raw_data(), in.raw_data());
  }
  EXPECT_EQ(dev.h2d + dev.d2h, 0);
}

TEST(DeviceCopyTest, HostToDeviceAndBackCopyOnce) {
  PlainCpu cpu;
  DevMemDevice dev(0);
  Tensor host = Floats({1.5f, -2, 3}, TensorShape({3})), on_dev, back;
  ASSERT_TRUE(TransferInProcess(Side(&cpu), Side(&dev), host, &on_dev).ok());
  EXPECT_EQ(dev.h2d, 1);
  EXPECT_NE(on_dev.raw_data(), host.raw_data());
  EXPECT_EQ(on_dev.shape(), host.shape());
  EXPECT_NE(HostValues(on_dev), HostValues(host));  // encoded: not readable as host values
  ASSERT_TRUE(TransferInProcess(Side(&dev), Side(nullptr), on_dev, &back).ok());
  EXPECT_EQ(dev.d2h, 1);
  EXPECT_EQ(HostValues(back), (std::vector<float>{1.5f, -2, 3}));
}

TEST(DeviceCopyTest, DeviceToDeviceSharesOnOneDeviceAndStagesBetweenTwo) {
  PlainCpu cpu;
  DevMemDevice a(0), b(1);
  Tensor host = Floats({4, 5}, TensorShape({2})), on_a, same, on_b, back;
  ASSERT_TRUE(TransferInProcess(Side(&cpu), Side(&a), host, &on_a).ok());
  ASSERT_TRUE(TransferInProcess(Side(&a), Side(&a), on_a, &same).ok());
  EXPECT_EQ(same.raw_data(), on_a.raw_data());
  ASSERT_TRUE(TransferInProcess(Side(&a), Side(&b), on_a, &on_b).ok());
  EXPECT_EQ(a.d2h, 1);  // staged through host memory
  EXPECT_EQ(b.h2d, 1);
  ASSERT_TRUE(TransferInProcess(Side(&b), Side(&cpu), on_b, &back).ok());
  EXPECT_EQ(HostValues(back), (std::vector<float>{4, 5}));
}

TEST(DeviceCopyTest, CopyErrorsNameTheTensorAndBothSides) {
  PlainCpu cpu;
  DevMemDevice dev(0);
  Tensor out;
  Status s = TransferInProcess(Side(&cpu), Side(&dev), Tensor::Scalar<std::string>("x"), &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find("string [] tensor from " + cpu.name() + " to " +
                                          dev.name()),
            std::string::npos)
      << s;
}

// ---------------------------------------------------------------- a graph split CPU <-> TXDEVMEM

const std::string kCpu = "/job:localhost/replica:0/task:0/device:CPU:0";
const std::string kDev = "/job:localhost/replica:0/task:0/device:TXDEVMEM:0";

NodeDef* Add(GraphDef* g, const std::string& name, const std::string& op,
             const std::string& device, std::vector<std::string> inputs = {}) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  n->set_device(device);
  for (auto& in : inputs) n->add_input(in);
  return n;
}

void AddConst(GraphDef* g, const std::string& name, const Tensor& value) {
  NodeDef* n = Add(g, name, "Const", kCpu);
  AddNodeAttr("dtype", value.dtype(), n);
  AddNodeAttr("value", value, n);
}

void AddRetval(GraphDef* g, const std::string& name, const std::string& input, DataType dt,
               int index) {
  NodeDef* n = Add(g, name, "_Retval", kCpu, {input});
  AddNodeAttr("T", dt, n);
  AddNodeAttr("index", static_cast<int64_t>(index), n);
}

struct StepResult {
  std::vector<Tensor> retvals;
  std::map<std::string, int> ops;  // op -> count over every partition
};

// Places each node on its NodeDef.device, partitions over {cpu, dev} and runs one step.
StepResult RunSplit(const GraphDef& gdef, int num_retvals, DeviceBase* cpu, DeviceBase* dev) {
  StepResult r;
  auto g = GraphFromGraphDef(gdef);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return r;
  for (Node* n : (*g)->nodes()) n->set_assigned_device_name(n->def().device());
  auto ex = PartitionedExecutor::Create(ExecutorParams(), {cpu, dev}, PartitionOptions(),
                                        *std::move(g));
  EXPECT_TRUE(ex.ok()) << ex.status();
  if (!ex.ok()) return r;
  for (int i = 0; i < (*ex)->num_partitions(); ++i) {
    for (const Node* n : (*ex)->partition_graph(i).nodes()) ++r.ops[n->type_string()];
  }
  SimpleCallFrame frame({}, num_retvals);
  Executor::Args args;
  args.call_frame = &frame;
  Status s = (*ex)->Run(args);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(frame.ConsumeRetvals(&r.retvals).ok());
  return r;
}

// x (CPU) -> Square (dev) -> Reshape(shape from CPU) (dev) -> fetched on CPU, and its Shape
// (dev, host-memory output) fetched too.
TEST(DeviceCopyTest, GraphSplitBetweenCpuAndDeviceCopiesOncePerCrossing) {
  GraphDef g;
  AddConst(&g, "x", Floats({1, 2, 3, 4, 5, 6}, TensorShape({2, 3})));
  AddConst(&g, "shape", Tensor::FromVector<int32_t>({3, 2}, TensorShape({2})));
  Add(&g, "sq", "TxDevMemSquare", kDev, {"x"});
  Add(&g, "r", "TxDevMemReshape", kDev, {"sq", "shape"});
  Add(&g, "sh", "TxDevMemShape", kDev, {"r"});
  AddRetval(&g, "out_r", "r", DT_FLOAT, 0);
  AddRetval(&g, "out_sh", "sh", DT_INT32, 1);
  PlainCpu cpu;
  DevMemDevice dev(0);
  StepResult r = RunSplit(g, 2, &cpu, &dev);
  ASSERT_EQ(r.retvals.size(), 2u);
  EXPECT_EQ(r.retvals[0].shape(), TensorShape({3, 2}));
  EXPECT_EQ(HostValues(r.retvals[0]), (std::vector<float>{1, 4, 9, 16, 25, 36}));
  EXPECT_EQ(r.retvals[1].flat<int32_t>()[0], 3);
  EXPECT_EQ(r.retvals[1].flat<int32_t>()[1], 2);
  // x in and r out are copied; the shape goes in and Shape's result out in host memory.
  EXPECT_EQ(dev.h2d, 1);
  EXPECT_EQ(dev.d2h, 1);
  EXPECT_EQ(r.ops["_HostRecv"], 1);  // shape, into Reshape's HostMemory input
  EXPECT_EQ(r.ops["_HostSend"], 1);  // Shape's HostMemory output
  EXPECT_EQ(r.ops["_Send"], 3);      // x and shape (CPU: always _Send), r (dev)
  EXPECT_EQ(r.ops["_Recv"], 3);      // x (dev), r and Shape's output (CPU: always _Recv)
  // A second step copies again (nothing is cached across steps).
  StepResult again = RunSplit(g, 2, &cpu, &dev);
  EXPECT_EQ(HostValues(again.retvals.at(0)), (std::vector<float>{1, 4, 9, 16, 25, 36}));
  EXPECT_EQ(dev.h2d, 2);
  EXPECT_EQ(dev.d2h, 2);
}

// An int32 made in device memory (IntId) feeding Reshape's HostMemory shape on the same device
// goes through a same-device _Send/_HostRecv pair: one device -> host copy.
TEST(DeviceCopyTest, SameDeviceEdgeIntoAHostMemoryInputIsCopiedToTheHost) {
  GraphDef g;
  AddConst(&g, "x", Floats({1, 2, 3, 4}, TensorShape({4})));
  AddConst(&g, "shape", Tensor::FromVector<int32_t>({2, 2}, TensorShape({2})));
  Add(&g, "id", "TxDevMemIntId", kDev, {"shape"});
  Add(&g, "r", "TxDevMemReshape", kDev, {"x", "id"});
  AddRetval(&g, "out", "r", DT_FLOAT, 0);
  PlainCpu cpu;
  DevMemDevice dev(0);
  StepResult r = RunSplit(g, 1, &cpu, &dev);
  ASSERT_EQ(r.retvals.size(), 1u);
  EXPECT_EQ(r.retvals[0].shape(), TensorShape({2, 2}));
  EXPECT_EQ(HostValues(r.retvals[0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(dev.h2d, 2);  // x, shape
  EXPECT_EQ(dev.d2h, 2);  // id -> Reshape's shape (same device), r -> CPU
  EXPECT_EQ(r.ops["_HostRecv"], 1);
}

}  // namespace
}  // namespace tensorflux
