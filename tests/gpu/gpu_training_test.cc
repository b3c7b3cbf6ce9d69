// GPU optimizer kernels (ResourceApply*) and the GPU variable kernels: the same variables,
// gradients and scalars updated by the CPU and the GPU kernels for several steps must agree
// (float32 relative error < 1e-5, float64 < 1e-12); copy-on-write keeps an earlier GPU read
// unchanged; shape errors are the CPU kernels' errors.
#include <string>

#include "gpu_test_util.h"

namespace tensorflux {
namespace {

using test::KernelRunner;
using test::RandomTensor;

struct Optimizer {
  std::string op;
  int vars;
  std::vector<std::string> scalar_names;  // "grad" marks the gradient's position
  std::vector<double> scalars;            // values of the other inputs, in order
};

const std::vector<Optimizer>& Optimizers() {
  static const auto* v = new std::vector<Optimizer>{
      {"ResourceApplyGradientDescent", 1, {"alpha", "grad"}, {0.1}},
      {"ResourceApplyMomentum", 2, {"lr", "grad", "momentum"}, {0.05, 0.9}},
      {"ResourceApplyAdam", 3,
       {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"},
       {0.9, 0.999, 0.01, 0.9, 0.999, 1e-7}},
      {"ResourceApplyRMSProp", 3, {"lr", "rho", "momentum", "epsilon", "grad"},
       {0.01, 0.9, 0.5, 1e-6}},
      {"ResourceApplyCenteredRMSProp", 4, {"lr", "rho", "momentum", "epsilon", "grad"},
       {0.01, 0.9, 0.5, 1e-6}},
      {"ResourceApplyAdagrad", 2, {"lr", "grad"}, {0.1}},
  };
  return *v;
}

// Runs `r` on `device` and returns its outputs.
std::vector<Tensor> Run(KernelRunner& r, DeviceBase* device) {
  r.OnDevice(device);
  auto out = r.Run();
  EXPECT_TRUE(out.ok()) << r.def().op() << ": " << out.status();
  return out.ok() ? *std::move(out) : std::vector<Tensor>();
}

// One device's copy of the variables of one optimizer test.
class Vars {
 public:
  Vars(DeviceBase* device, bool gpu, DataType dt, const std::string& prefix)
      : device_(device), gpu_(gpu), dt_(dt), prefix_(prefix) {}

  Tensor Place(const Tensor& host) const { return gpu_ ? test::ToGpu(host) : host; }
  Tensor Fetch(const Tensor& t) const { return gpu_ ? test::ToHost(t) : t; }

  Tensor Handle(int k) {
    KernelRunner r("VarHandleOp");
    r.Attr("dtype", dt_).Attr("shape", PartialTensorShape::UnknownRank())
        .Attr("shared_name", prefix_ + std::to_string(k));
    return Run(r, device_).at(0);
  }
  void Assign(int k, const Tensor& host_value) {
    KernelRunner r("AssignVariableOp");
    r.Input(Handle(k)).Input(Place(host_value));
    Run(r, device_);
  }
  Tensor Read(int k) {
    KernelRunner r("ReadVariableOp");
    r.Input(Handle(k)).Attr("dtype", dt_);
    return Run(r, device_).at(0);
  }
  Status Apply(const Optimizer& o, const Tensor& grad, bool nesterov) {
    KernelRunner r(o.op);
    for (int k = 0; k < o.vars; ++k) r.Input(Handle(k));
    size_t s = 0;
    for (const std::string& name : o.scalar_names) {
      r.Input(name == "grad" ? Place(grad)
                             : Place(test::FromDoubles(dt_, TensorShape(), {o.scalars[s++]})));
    }
    r.Attr("T", dt_);
    if (o.op == "ResourceApplyMomentum" || o.op == "ResourceApplyAdam") {
      r.Attr("use_nesterov", nesterov);
    }
    r.OnDevice(device_);
    Status st = r.Run().status();
    if (gpu_ && st.ok()) st = test::SyncGpu();
    return st;
  }

 private:
  DeviceBase* device_;
  bool gpu_;
  DataType dt_;
  std::string prefix_;
};

class GpuTrainingTest : public test::GpuTest, public ::testing::WithParamInterface<DataType> {};

TEST_P(GpuTrainingTest, EveryOptimizerMatchesCpuOverSteps) {
  const DataType dt = GetParam();
  const double tol = dt == DT_FLOAT ? 1e-5 : 1e-12;
  const TensorShape shape({37, 29});
  int id = 0;
  for (const Optimizer& o : Optimizers()) {
    for (bool nesterov : {false, true}) {
      if (nesterov && o.op != "ResourceApplyMomentum" && o.op != "ResourceApplyAdam") continue;
      SCOPED_TRACE(o.op + (nesterov ? " nesterov" : ""));
      test::CpuWithResources cpu_device;
      const std::string prefix = "opt" + std::to_string(id++) + DataTypeString(dt) + "_";
      Vars cpu(&cpu_device, false, dt, prefix), gpu(test::TestGpu(), true, dt, prefix);
      for (int k = 0; k < o.vars; ++k) {
        // Slots start positive (RMSProp's ms, Adagrad's accum are square sums).
        const Tensor init = RandomTensor(dt, shape, 100 + k, k == 0 ? -1 : 0.1, 1);
        cpu.Assign(k, init);
        gpu.Assign(k, init);
      }
      for (int step = 0; step < 3; ++step) {
        const Tensor grad = RandomTensor(dt, shape, 200 + step);
        ASSERT_TRUE(cpu.Apply(o, grad, nesterov).ok());
        Status s = gpu.Apply(o, grad, nesterov);
        ASSERT_TRUE(s.ok()) << s;
      }
      for (int k = 0; k < o.vars; ++k) {
        EXPECT_LT(test::RelativeError(gpu.Fetch(gpu.Read(k)), cpu.Read(k)), tol) << "var " << k;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, GpuTrainingTest, ::testing::Values(DT_FLOAT, DT_DOUBLE));

class GpuVariableTest : public test::GpuTest {};

TEST_F(GpuVariableTest, HeldReadIsASnapshotAcrossAnUpdate) {
  Vars gpu(test::TestGpu(), true, DT_FLOAT, "snapshot_");
  const Tensor init = test::AsTensor<float>({1, 2, 3}, {3});
  gpu.Assign(0, init);
  const Tensor held = gpu.Read(0);  // shares the variable's buffer until the update copies it
  const Optimizer sgd{"ResourceApplyGradientDescent", 1, {"alpha", "grad"}, {0.5}};  // exact
  ASSERT_TRUE(gpu.Apply(sgd, test::AsTensor<float>({2, 2, 2}, {3}), false).ok());
  EXPECT_EQ(test::ToDoubles(gpu.Fetch(held)), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(test::ToDoubles(gpu.Fetch(gpu.Read(0))), (std::vector<double>{0, 1, 2}));
}

TEST_F(GpuVariableTest, UninitializedAndMismatchedShapesAreTheCpuErrors) {
  Vars gpu(test::TestGpu(), true, DT_FLOAT, "errors_");
  const Optimizer& momentum = Optimizers()[1];
  // accum (variable 1) never assigned.
  gpu.Assign(0, test::AsTensor<float>({1, 2}, {2}));
  Status s = gpu.Apply(momentum, test::AsTensor<float>({1, 1}, {2}), false);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  gpu.Assign(1, test::AsTensor<float>({1, 2, 3}, {3}));
  s = gpu.Apply(momentum, test::AsTensor<float>({1, 1}, {2}), false);
  test::ExpectInvalid(s, "do not have the same shape");
  gpu.Assign(1, test::AsTensor<float>({0, 0}, {2}));
  s = gpu.Apply(momentum, test::AsTensor<float>({1, 1, 1}, {3}), false);
  test::ExpectInvalid(s, "var and grad do not have the same shape");
}

TEST_F(GpuVariableTest, ConstAndIdentityStayOnTheGpu) {
  const Tensor value = RandomTensor(DT_FLOAT, TensorShape({4, 5}), 3);
  KernelRunner c("Const");
  c.Attr("dtype", DT_FLOAT).Attr("value", value).OnDevice(test::TestGpu());
  auto out = c.RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  KernelRunner id("Identity");
  id.Input(*out).OnDevice(test::TestGpu());
  auto same = id.RunOne();
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->SharesBufferWith(*out));  // Identity forwards the Const's buffer
  EXPECT_EQ(test::ToDoubles(test::ToHost(*same)), test::ToDoubles(value));
}

}  // namespace
}  // namespace tensorflux
