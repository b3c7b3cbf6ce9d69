// Runs on any machine: every op the GPU kernels port has a registered OpDef and a GPU kernel
// (catches a misspelt op name in a registration table, which no GPU run would report). The
// kernels live in the CUDA module, loaded here even without a driver.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensorflux/devices/cuda_api.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace {

const std::vector<std::string> kGpuOps = {
    // elementwise
    "Neg", "Square", "Sqrt", "Exp", "Log", "Abs", "Sign", "Reciprocal", "Rsqrt", "Log1p", "Tanh",
    "Sigmoid", "Erf", "Cos", "Sin", "Relu", "Relu6", "LeakyRelu", "Elu", "Selu", "Softplus",
    "LogicalNot", "Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow",
    "SquaredDifference", "FloorDiv", "FloorMod", "Less", "LessEqual", "Greater", "GreaterEqual",
    "Equal", "NotEqual", "LogicalAnd", "LogicalOr", "ReluGrad", "Relu6Grad", "LeakyReluGrad",
    "SoftplusGrad", "EluGrad", "SeluGrad", "TanhGrad", "SigmoidGrad", "RsqrtGrad", "SqrtGrad",
    "ReciprocalGrad", "AddN",
    // matmul, reductions, nn
    "MatMul", "BatchMatMulV2", "Sum", "Mean", "Prod", "Max", "Min", "BiasAdd", "BiasAddGrad",
    "Softmax", "LogSoftmax", "SoftmaxCrossEntropyWithLogits",
    "SparseSoftmaxCrossEntropyWithLogits",
    // conv, pooling, batch norm
    "Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool", "AvgPool", "MaxPoolGrad",
    "AvgPoolGrad", "FusedBatchNormV3", "FusedBatchNormGradV3",
    // optimizers and variables
    "ResourceApplyGradientDescent", "ResourceApplyMomentum", "ResourceApplyAdam",
    "ResourceApplyRMSProp", "ResourceApplyCenteredRMSProp", "ResourceApplyAdagrad", "Const",
    "Identity", "VarHandleOp", "ReadVariableOp", "AssignVariableOp", "VarIsInitializedOp",
    "DestroyResourceOp",
    // transfers
    "_Send", "_Recv", "_HostSend", "_HostRecv",
};

TEST(GpuKernelRegistryTest, EveryPortedOpHasAnOpDefAndAGpuKernel) {
  Status loaded = LoadCudaModuleForTesting("");
  ASSERT_TRUE(loaded.ok()) << loaded;
  for (const std::string& op : kGpuOps) {
    EXPECT_TRUE(OpRegistry::Global()->LookUpOpDef(op).ok()) << op << " has no OpDef";
    bool gpu = false;
    for (const std::string& line : KernelRegistry::Global()->ListKernels(op)) {
      gpu |= line.find("device='GPU'") != std::string::npos;
    }
    EXPECT_TRUE(gpu) << op << " has no GPU kernel";
  }
}

}  // namespace
}  // namespace tensorflux
