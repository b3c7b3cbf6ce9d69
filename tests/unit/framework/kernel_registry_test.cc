// Kernel registry (selection by device, type constraints and priority), CreateOpKernel's errors,
// and OpKernelContext (outputs, dtype checks, forwarding, async kernels).
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace {

// ---------------------------------------------------------------- test ops and kernels

REGISTER_OP("TxTestKernelOp")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr("T: {float, double, int32, int64}")
    .Attr("fail: bool = false");

REGISTER_OP("TxTestListKernelOp").Input("xs: Tlist").Output("n: int32").Attr("Tlist: list(type) >= 0");
REGISTER_OP("TxTestNoKernelOp").Output("y: float");
REGISTER_OP("TxTestAsyncOp").Output("y: float");

// Each kernel reports which registration built it through `which()`.
class TaggedKernel : public OpKernel {
 public:
  TaggedKernel(OpKernelConstruction* c, std::string tag) : OpKernel(c), tag_(std::move(tag)) {
    bool fail = false;
    if (c->HasAttr("fail")) {
      Status s = c->GetAttr("fail", &fail);
      if (!s.ok()) c->SetStatus(s);
    }
    if (fail) c->SetStatus(errors::InvalidArgument("kernel refused attr fail=true"));
  }
  void Compute(OpKernelContext* ctx) override {}
  const std::string& which() const { return tag_; }

 private:
  std::string tag_;
};
struct FloatLow : TaggedKernel {
  explicit FloatLow(OpKernelConstruction* c) : TaggedKernel(c, "float-low") {}
};
struct FloatHigh : TaggedKernel {
  explicit FloatHigh(OpKernelConstruction* c) : TaggedKernel(c, "float-high") {}
};
struct IntKernel : TaggedKernel {
  explicit IntKernel(OpKernelConstruction* c) : TaggedKernel(c, "int") {}
};
struct GpuKernel : TaggedKernel {
  explicit GpuKernel(OpKernelConstruction* c) : TaggedKernel(c, "gpu") {}
};
struct ListKernel : TaggedKernel {
  explicit ListKernel(OpKernelConstruction* c) : TaggedKernel(c, "list") {}
};

REGISTER_KERNEL_BUILDER(Name("TxTestKernelOp").Device(DEVICE_CPU).TypeConstraint<float>("T"), FloatLow);
REGISTER_KERNEL_BUILDER(Name("TxTestKernelOp").Device(DEVICE_CPU).TypeConstraint<float>("T").Priority(5),
                        FloatHigh);
REGISTER_KERNEL_BUILDER(Name("TxTestKernelOp")
                            .Device(DEVICE_CPU)
                            .TypeConstraint("T", std::vector<DataType>{DT_INT32, DT_INT64}),
                        IntKernel);
REGISTER_KERNEL_BUILDER(Name("TxTestKernelOp").Device(DEVICE_GPU).TypeConstraint<float>("T"), GpuKernel);
REGISTER_KERNEL_BUILDER(Name("TxTestListKernelOp")
                            .Device(DEVICE_CPU)
                            .TypeConstraint("Tlist", std::vector<DataType>{DT_FLOAT, DT_INT32}),
                        ListKernel);

class AsyncKernel : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    // Finishes on another thread after a pause: Compute() must wait for it.
    std::thread([ctx, done] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ctx->set_output(0, Tensor::Scalar<float>(42.f));
      done();
    }).detach();
  }
};
REGISTER_KERNEL_BUILDER(Name("TxTestAsyncOp").Device(DEVICE_CPU), AsyncKernel);

class TestDevice : public DeviceBase {
 public:
  explicit TestDevice(std::string type, Allocator* a = nullptr) : type_(std::move(type)), alloc_(a) {}
  const std::string& name() const override { return name_; }
  const std::string& device_type() const override { return type_; }
  Allocator* GetAllocator() override { return alloc_ ? alloc_ : cpu_allocator(); }

 private:
  std::string name_ = "/job:localhost/replica:0/task:0/device:TEST:0";
  std::string type_;
  Allocator* alloc_;
};

// An allocator that is always out of memory.
class FullAllocator : public Allocator {
 public:
  std::string Name() const override { return "full"; }
  void* AllocateRaw(size_t, size_t) override { return nullptr; }
  void DeallocateRaw(void*, size_t) override {}
};

NodeDef KernelNode(DataType t, const std::string& name = "k") {
  NodeDef n;
  n.set_name(name);
  n.set_op("TxTestKernelOp");
  n.add_input("a");
  n.add_input("b");
  AddNodeAttr("T", t, &n);
  return n;
}

std::string Which(const std::unique_ptr<OpKernel>& k) {
  return static_cast<const TaggedKernel*>(k.get())->which();
}

bool Contains(const Status& s, const std::string& part) {
  return std::string(s.message()).find(part) != std::string::npos;
}

// ---------------------------------------------------------------- selection

TEST(KernelRegistryTest, PicksHighestPriorityMatchingKernel) {
  TestDevice cpu(DEVICE_CPU);
  std::unique_ptr<OpKernel> k;
  ASSERT_TRUE(CreateOpKernel(&cpu, KernelNode(DT_FLOAT), &k).ok());
  EXPECT_EQ(Which(k), "float-high");
  EXPECT_EQ(k->input_types(), (DataTypeVector{DT_FLOAT, DT_FLOAT}));
  EXPECT_EQ(k->output_types(), (DataTypeVector{DT_FLOAT}));
  EXPECT_EQ(k->name(), "k");
  EXPECT_EQ(k->type_string(), "TxTestKernelOp");
  // The kernel's def has the defaults filled in.
  ASSERT_NE(FindAttr(k->def(), "fail"), nullptr);
  EXPECT_TRUE(k->IsExpensive());
  EXPECT_FALSE(k->IsAsync());

  ASSERT_TRUE(CreateOpKernel(&cpu, KernelNode(DT_INT64), &k).ok());
  EXPECT_EQ(Which(k), "int");
  ASSERT_TRUE(CreateOpKernel(&cpu, KernelNode(DT_INT32), &k).ok());
  EXPECT_EQ(Which(k), "int");

  TestDevice gpu(DEVICE_GPU);
  ASSERT_TRUE(CreateOpKernel(&gpu, KernelNode(DT_FLOAT), &k).ok());
  EXPECT_EQ(Which(k), "gpu");
}

TEST(KernelRegistryTest, NoMatchingKernelIsNotFoundListingKernels) {
  TestDevice cpu(DEVICE_CPU);
  std::unique_ptr<OpKernel> k;
  Status s = CreateOpKernel(&cpu, KernelNode(DT_DOUBLE, "dbl"), &k);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(s, "No registered 'TxTestKernelOp' OpKernel for 'CPU' devices compatible "
                          "with node {{node dbl}} (T=double)"))
      << s;
  EXPECT_TRUE(Contains(s, "device='CPU'; T in [float]")) << s;
  EXPECT_TRUE(Contains(s, "device='CPU'; T in [int32, int64]")) << s;
  EXPECT_TRUE(Contains(s, "device='GPU'; T in [float]")) << s;
  EXPECT_TRUE(Contains(s, "priority=5")) << s;
  EXPECT_TRUE(Contains(s, "dbl")) << s;
  EXPECT_EQ(k, nullptr);

  StatusOr<const KernelRegistry::Entry*> e =
      KernelRegistry::Global()->FindKernel(KernelNode(DT_INT32), "TPU");
  EXPECT_EQ(e.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(e.status(), "for 'TPU' devices")) << e.status();

  NodeDef none;
  none.set_name("nk");
  none.set_op("TxTestNoKernelOp");
  s = CreateOpKernel(&cpu, none, &k);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(s, "<no registered kernels>")) << s;
}

TEST(KernelRegistryTest, ListTypeConstraintNeedsEveryElementAllowed) {
  NodeDef n;
  n.set_name("l");
  n.set_op("TxTestListKernelOp");
  n.add_input("a");
  n.add_input("b");
  AddNodeAttr("Tlist", std::vector<DataType>{DT_FLOAT, DT_INT32}, &n);
  TestDevice cpu(DEVICE_CPU);
  std::unique_ptr<OpKernel> k;
  ASSERT_TRUE(CreateOpKernel(&cpu, n, &k).ok());
  EXPECT_EQ(Which(k), "list");
  EXPECT_EQ(k->input_types(), (DataTypeVector{DT_FLOAT, DT_INT32}));

  AddNodeAttr("Tlist", std::vector<DataType>{DT_FLOAT, DT_DOUBLE}, &n);
  Status s = CreateOpKernel(&cpu, n, &k);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(s, "(Tlist=[float, double])")) << s;
}

TEST(KernelRegistryTest, SupportedDeviceTypesAndListKernels) {
  std::vector<std::string> devs = KernelRegistry::Global()->SupportedDeviceTypes(KernelNode(DT_FLOAT));
  EXPECT_EQ(devs, (std::vector<std::string>{"GPU", "CPU"}));
  devs = KernelRegistry::Global()->SupportedDeviceTypes(KernelNode(DT_INT32));
  EXPECT_EQ(devs, (std::vector<std::string>{"CPU"}));
  devs = KernelRegistry::Global()->SupportedDeviceTypes(KernelNode(DT_DOUBLE));
  EXPECT_TRUE(devs.empty());

  std::vector<std::string> lines = KernelRegistry::Global()->ListKernels("TxTestKernelOp");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "TxTestKernelOp: device='CPU'; T in [float]");
  EXPECT_EQ(lines[1], "TxTestKernelOp: device='CPU'; T in [float]; priority=5");
  EXPECT_TRUE(KernelRegistry::Global()->ListKernels("TxTestNoSuchOp").empty());
}

TEST(KernelRegistryTest, CreateOpKernelErrorsNameNodeAndOp) {
  TestDevice cpu(DEVICE_CPU);
  std::unique_ptr<OpKernel> k;

  NodeDef unknown;
  unknown.set_name("u1");
  unknown.set_op("TxTestNotAnOp");
  Status s = CreateOpKernel(&cpu, unknown, &k);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(s, "Op type not registered 'TxTestNotAnOp'")) << s;
  EXPECT_TRUE(Contains(s, "u1")) << s;

  NodeDef missing = KernelNode(DT_FLOAT, "m1");
  missing.mutable_attr()->erase("T");
  s = CreateOpKernel(&cpu, missing, &k);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s, "m1")) << s;
  EXPECT_TRUE(Contains(s, "'T'")) << s;

  NodeDef one_input = KernelNode(DT_FLOAT, "i1");
  one_input.mutable_input()->RemoveLast();
  s = CreateOpKernel(&cpu, one_input, &k);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s, "i1")) << s;

  // The kernel's constructor rejects its attrs: CreateOpKernel returns that status.
  NodeDef refuse = KernelNode(DT_FLOAT, "r1");
  AddNodeAttr("fail", true, &refuse);
  s = CreateOpKernel(&cpu, refuse, &k);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s, "kernel refused attr fail=true")) << s;
  EXPECT_TRUE(Contains(s, "r1")) << s;
  EXPECT_TRUE(Contains(s, "TxTestKernelOp")) << s;
  EXPECT_EQ(k, nullptr);

  s = CreateOpKernel(nullptr, KernelNode(DT_FLOAT), &k);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------- OpKernelContext

struct ContextFixture {
  TestDevice device{DEVICE_CPU};
  std::unique_ptr<OpKernel> kernel;
  Tensor inputs[2];
  OpKernelContext::Params params;

  explicit ContextFixture(DataType t = DT_FLOAT, Allocator* a = nullptr) : device(DEVICE_CPU, a) {
    Status s = CreateOpKernel(&device, KernelNode(t), &kernel);
    EXPECT_TRUE(s.ok()) << s;
    params.op_kernel = kernel.get();
    params.device = &device;
    params.inputs = inputs;
    params.num_inputs = 2;
  }
};

TEST(OpKernelContextTest, AllocateAndSetOutput) {
  ContextFixture f;
  OpKernelContext ctx(&f.params);
  EXPECT_EQ(ctx.num_outputs(), 1);
  EXPECT_EQ(ctx.num_inputs(), 2);
  EXPECT_EQ(ctx.expected_output_dtype(0), DT_FLOAT);
  EXPECT_EQ(ctx.allocator(), cpu_allocator());
  Tensor* out = nullptr;
  ASSERT_TRUE(ctx.allocate_output(0, TensorShape({2, 3}), &out).ok());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->dtype(), DT_FLOAT);
  EXPECT_EQ(out->shape(), TensorShape({2, 3}));
  EXPECT_EQ(out, ctx.mutable_output(0));
  EXPECT_EQ(ctx.allocate_output(1, TensorShape({1}), &out).code(), absl::StatusCode::kInvalidArgument);

  Tensor temp;
  ASSERT_TRUE(ctx.allocate_temp(DT_INT64, TensorShape({4}), &temp).ok());
  EXPECT_EQ(temp.dtype(), DT_INT64);
  EXPECT_EQ(temp.NumElements(), 4);

  ctx.set_output(0, Tensor::Scalar<float>(1.f));
  EXPECT_TRUE(ctx.status().ok());
  EXPECT_EQ(ctx.outputs()[0].scalar<float>(), 1.f);
  ctx.set_output(0, Tensor::Scalar<int32_t>(1));
  EXPECT_EQ(ctx.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(ctx.status(), "'k'")) << ctx.status();
  EXPECT_EQ(ctx.outputs()[0].dtype(), DT_FLOAT);  // unchanged
}

TEST(OpKernelContextTest, OutOfMemoryIsResourceExhausted) {
  FullAllocator full;
  ContextFixture f(DT_FLOAT, &full);
  OpKernelContext ctx(&f.params);
  EXPECT_EQ(ctx.allocator(), &full);
  Tensor* out = nullptr;
  Status s = ctx.allocate_output(0, TensorShape({1024}), &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_TRUE(Contains(s, "'k'")) << s;
  Tensor temp;
  EXPECT_EQ(ctx.allocate_temp(DT_FLOAT, TensorShape({1024}), &temp).code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(OpKernelContextTest, ForwardsExclusivelyHeldInputOnly) {
  ContextFixture f;
  // Input 0 is held only by the context; input 1 also by `shared`.
  f.inputs[0] = Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}));
  f.inputs[1] = Tensor::FromVector<float>({5, 6, 7, 8}, TensorShape({2, 2}));
  Tensor shared = f.inputs[1];
  ASSERT_TRUE(f.inputs[0].RefCountIsOne());
  ASSERT_FALSE(f.inputs[1].RefCountIsOne());

  {
    OpKernelContext ctx(&f.params);
    Tensor* out = nullptr;
    ASSERT_TRUE(ctx.forward_input_or_allocate_output({1, 0}, 0, TensorShape({4}), &out).ok());
    EXPECT_TRUE(out->SharesBufferWith(f.inputs[0]));
    EXPECT_FALSE(out->SharesBufferWith(f.inputs[1]));
    EXPECT_EQ(out->shape(), TensorShape({4}));  // reshaped view of the same buffer
    EXPECT_EQ(out->data<float>()[3], 4.f);
  }
  {
    // Only the shared input is a candidate: a fresh buffer.
    OpKernelContext ctx(&f.params);
    Tensor* out = nullptr;
    ASSERT_TRUE(ctx.forward_input_or_allocate_output({1}, 0, TensorShape({2, 2}), &out).ok());
    EXPECT_FALSE(out->SharesBufferWith(f.inputs[1]));
    EXPECT_EQ(out->dtype(), DT_FLOAT);
  }
  {
    // A different element count is not forwarded.
    f.inputs[0] = Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}));
    OpKernelContext ctx(&f.params);
    Tensor* out = nullptr;
    ASSERT_TRUE(ctx.forward_input_or_allocate_output({0}, 0, TensorShape({3}), &out).ok());
    EXPECT_FALSE(out->SharesBufferWith(f.inputs[0]));
    EXPECT_EQ(out->shape(), TensorShape({3}));
  }
  {
    // Nor is an input of another dtype, nor an index out of range.
    f.inputs[0] = Tensor::FromVector<int32_t>({1, 2, 3, 4}, TensorShape({2, 2}));
    OpKernelContext ctx(&f.params);
    Tensor* out = nullptr;
    ASSERT_TRUE(ctx.forward_input_or_allocate_output({0, 7}, 0, TensorShape({2, 2}), &out).ok());
    EXPECT_FALSE(out->SharesBufferWith(f.inputs[0]));
    EXPECT_EQ(out->dtype(), DT_FLOAT);
  }
  {
    // An empty input has no buffer to reuse.
    f.inputs[0] = Tensor(DT_FLOAT, TensorShape({0}));
    OpKernelContext ctx(&f.params);
    Tensor* out = nullptr;
    ASSERT_TRUE(ctx.forward_input_or_allocate_output({0}, 0, TensorShape({0, 5}), &out).ok());
    EXPECT_EQ(out->shape(), TensorShape({0, 5}));
  }
}

TEST(OpKernelContextTest, AsyncKernelComputeWaitsForDone) {
  TestDevice cpu(DEVICE_CPU);
  NodeDef n;
  n.set_name("async");
  n.set_op("TxTestAsyncOp");
  std::unique_ptr<OpKernel> k;
  ASSERT_TRUE(CreateOpKernel(&cpu, n, &k).ok());
  EXPECT_TRUE(k->IsAsync());
  OpKernelContext::Params params;
  params.op_kernel = k.get();
  params.device = &cpu;
  OpKernelContext ctx(&params);
  k->Compute(&ctx);
  ASSERT_TRUE(ctx.status().ok()) << ctx.status();
  ASSERT_EQ(ctx.outputs()[0].dtype(), DT_FLOAT);
  EXPECT_EQ(ctx.outputs()[0].scalar<float>(), 42.f);
}

}  // namespace
}  // namespace tensorflux
