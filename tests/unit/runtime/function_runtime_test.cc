// FunctionRuntime: FunctionDefs in TF's body format instantiated and run, against values
// worked by hand.
#include "tensorflux/runtime/function_runtime.h"

#include "gtest/gtest.h"
#include "tensorflux/framework/node_def_util.h"
#include "../kernels/kernel_test_util.h"
#include "function_def_test_util.h"

namespace tensorflux {
namespace {

using test::AddFunctionArg;

NodeDef* AddNode(FunctionDef* f, const std::string& name, const std::string& op,
                 std::vector<std::string> inputs) {
  NodeDef* n = test::AddFunctionNode(f, name, op, inputs);
  AddNodeAttr("T", DT_FLOAT, n);
  return n;
}

// f(x, y) = (x + y) * x, with the sum also returned.
FunctionDef AddMul() {
  FunctionDef f;
  f.mutable_signature()->set_name("add_mul");
  AddFunctionArg(f.mutable_signature()->mutable_input_arg(), "x", DT_FLOAT);
  AddFunctionArg(f.mutable_signature()->mutable_input_arg(), "y", DT_FLOAT);
  AddFunctionArg(f.mutable_signature()->mutable_output_arg(), "prod", DT_FLOAT);
  AddFunctionArg(f.mutable_signature()->mutable_output_arg(), "sum", DT_FLOAT);
  AddNode(&f, "add", "AddV2", {"x", "y"});
  AddNode(&f, "mul", "Mul", {"add:z:0", "x"});
  (*f.mutable_ret())["prod"] = "mul:z:0";
  (*f.mutable_ret())["sum"] = "add:z:0";
  return f;
}

TEST(FunctionRuntimeTest, RunsABodyWithArgsAndTwoReturns) {
  test::TestCpuDevice device;
  FunctionRuntime rt(&device);
  FunctionDefLibrary lib;
  *lib.add_function() = AddMul();
  rt.AddLibrary(lib);
  auto h = rt.Instantiate("add_mul");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(*rt.Instantiate("add_mul"), *h);  // cached
  std::vector<Tensor> rets;
  Status s = rt.Run(*h,
                    {test::FromDoubles(DT_FLOAT, TensorShape({3}), {1, 2, 3}),
                     test::FromDoubles(DT_FLOAT, TensorShape({3}), {10, 20, 30})},
                    &rets);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(rets.size(), 2u);
  EXPECT_EQ(test::ToDoubles(rets[0]), (std::vector<double>{11, 44, 99}));
  EXPECT_EQ(test::ToDoubles(rets[1]), (std::vector<double>{11, 22, 33}));
  // Wrong argument count and dtype.
  EXPECT_EQ(rt.Run(*h, {Tensor::Scalar(1.0f)}, &rets).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(rt.Run(*h, {Tensor::Scalar(1.0), Tensor::Scalar(1.0)}, &rets).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(rt.Instantiate("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST(FunctionRuntimeTest, BodyErrorsNameTheNode) {
  test::TestCpuDevice device;
  FunctionRuntime rt(&device);
  FunctionDef f = AddMul();
  f.mutable_signature()->set_name("bad");
  FunctionDefLibrary lib;
  *lib.add_function() = f;
  rt.AddLibrary(lib);
  auto h = rt.Instantiate("bad");
  ASSERT_TRUE(h.ok());
  std::vector<Tensor> rets;
  // Shapes [2] and [3] do not broadcast: the error comes from node "add".
  Status s = rt.Run(*h,
                    {test::FromDoubles(DT_FLOAT, TensorShape({2}), {1, 2}),
                     test::FromDoubles(DT_FLOAT, TensorShape({3}), {1, 2, 3})},
                    &rets);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("{{node add}}"), std::string::npos) << s;
  // A body input that names no output.
  FunctionDef broken = AddMul();
  broken.mutable_signature()->set_name("broken");
  broken.mutable_node_def(1)->set_input(0, "add:out:0");
  FunctionDefLibrary lib2;
  *lib2.add_function() = broken;
  rt.AddLibrary(lib2);
  auto b = rt.Instantiate("broken");
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(b.status().message()).find("broken"), std::string::npos);
}

}  // namespace
}  // namespace tensorflux
