// CheckNumerics (TF's message texts, every float dtype, the input forwarded) and the session
// option ConfigProto.check_numerics (fails at the first node with a non-finite output, naming
// it; feeds are not checked; nothing changes without the option).
#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "kernel_test_util.h"
#include "tensorflux/runtime/local_session.h"
#include "variable_test_util.h"

namespace tensorflux {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(CheckNumericsTest, MessagesForEveryFloatType) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
    auto run = [&](std::vector<double> v) {
      return test::KernelRunner("CheckNumerics")
          .Input(test::FromDoubles(dt, TensorShape({static_cast<int64_t>(v.size())}), v))
          .Attr("message", std::string("in x"))
          .Run();
    };
    auto ok = run({1.0, -2.5, 0.0});
    ASSERT_TRUE(ok.ok()) << ok.status();
    EXPECT_EQ(test::ToDoubles((*ok)[0]), (std::vector<double>{1.0, -2.5, 0.0}));
    test::ExpectInvalid(run({1.0, kNaN}), "in x : Tensor had NaN values");
    test::ExpectInvalid(run({-kInf, 1.0}), "in x : Tensor had Inf values");
    test::ExpectInvalid(run({kInf, kNaN}), "in x : Tensor had NaN and Inf values");
  }
}

// x (fed) -> a = Log(x) -> b = Mul(a, a).
GraphDef NumericsGraph() {
  GraphDef g;
  NodeDef* x = var_test::AddOp(&g, "x", "Placeholder");
  AddNodeAttr("dtype", DT_FLOAT, x);
  AddNodeAttr("T", DT_FLOAT, var_test::AddOp(&g, "a", "Log", {"x"}));
  AddNodeAttr("T", DT_FLOAT, var_test::AddOp(&g, "b", "Mul", {"a", "a"}));
  return g;
}

TEST(CheckNumericsTest, SessionOptionFailsAtTheFirstBadNode) {
  SessionOptions opts;
  opts.config.set_check_numerics(true);
  LocalSession checked(opts);
  ASSERT_TRUE(checked.Create(NumericsGraph()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(checked.Run({{"x", var_test::Vec({1.0f, 2.0f})}}, {"b:0"}, {}, &out).ok());
  // Log(0) = -Inf at `a`; `b` never runs. A fed Inf is not checked, Log(Inf) is.
  Status st = checked.Run({{"x", var_test::Vec({0.0f, 2.0f})}}, {"b:0"}, {}, &out);
  test::ExpectInvalid(st, "{{node a}} (op Log): output 0 has Inf values");
  st = checked.Run({{"x", var_test::Vec({-1.0f, 2.0f})}}, {"b:0"}, {}, &out);
  test::ExpectInvalid(st, "{{node a}} (op Log): output 0 has NaN values");
  st = checked.Run({{"x", var_test::Vec({std::numeric_limits<float>::infinity(), 2.0f})}}, {"b:0"},
                   {}, &out);
  test::ExpectInvalid(st, "{{node a}}");

  LocalSession unchecked{SessionOptions()};
  ASSERT_TRUE(unchecked.Create(NumericsGraph()).ok());
  ASSERT_TRUE(unchecked.Run({{"x", var_test::Vec({0.0f, 2.0f})}}, {"b:0"}, {}, &out).ok());
  EXPECT_TRUE(std::isinf(out[0].data<float>()[0]));
}

// A reference and a resource variable, each assigned [1, 2] by `init_*` and updated by
// gradient descent with learning rate 3e38 and gradient [1, 1] (w - 3e38 is finite for float,
// the second step overflows to -Inf), or assigned [Inf, 0] by `assign_*`.
GraphDef UpdateGraph() {
  GraphDef g;
  var_test::AddConstNode(&g, "init", var_test::Vec({1.0f, 2.0f}));
  AddNodeAttr("dtype", DT_FLOAT, var_test::AddOp(&g, "bad", "Placeholder"));  // fed: unchecked
  var_test::AddConstNode(&g, "lr", Tensor::FromVector<float>({3e38f}, TensorShape({})));
  var_test::AddConstNode(&g, "grad", var_test::Vec({1.0f, 1.0f}));
  NodeDef* w = var_test::AddOp(&g, "w", "VariableV2");
  AddNodeAttr("dtype", DT_FLOAT, w);
  AddNodeAttr("shape", TensorShape({2}), w);
  AddNodeAttr("T", DT_FLOAT, var_test::AddOp(&g, "init_w", "Assign", {"w", "init"}));
  AddNodeAttr("T", DT_FLOAT, var_test::AddOp(&g, "assign_w", "Assign", {"w", "bad"}));
  AddNodeAttr("T", DT_FLOAT, var_test::AddOp(&g, "step_w", "ApplyGradientDescent",
                                             {"w", "lr", "grad"}));
  NodeDef* r = var_test::AddOp(&g, "r", "VarHandleOp");
  AddNodeAttr("dtype", DT_FLOAT, r);
  AddNodeAttr("shape", TensorShape({2}), r);
  AddNodeAttr("dtype", DT_FLOAT, var_test::AddOp(&g, "init_r", "AssignVariableOp", {"r", "init"}));
  AddNodeAttr("dtype", DT_FLOAT, var_test::AddOp(&g, "assign_r", "AssignVariableOp", {"r", "bad"}));
  AddNodeAttr("T", DT_FLOAT, var_test::AddOp(&g, "step_r", "ResourceApplyGradientDescent",
                                             {"r", "lr", "grad"}));
  return g;
}

TEST(CheckNumericsTest, SessionOptionChecksVariablesUpdatedInPlace) {
  SessionOptions opts;
  opts.config.set_check_numerics(true);
  for (const char* v : {"w", "r"}) {
    const std::string var(v);
    LocalSession checked(opts);
    ASSERT_TRUE(checked.Create(UpdateGraph()).ok());
    std::vector<Tensor> out;
    ASSERT_TRUE(checked.Run({}, {}, {"init_" + var}, &out).ok());
    Status st = checked.Run({}, {}, {"step_" + var}, &out);
    ASSERT_TRUE(st.ok()) << st;  // [1 - 3e38, 2 - 3e38]: finite
    st = checked.Run({}, {}, {"step_" + var}, &out);  // -6e38 overflows float
    const std::string op = var == "w" ? "ApplyGradientDescent" : "ResourceApplyGradientDescent";
    test::ExpectInvalid(st, "{{node step_" + var + "}} (op " + op + "): updated variable " + var +
                                " (input 0) has Inf values");
    st = checked.Run({{"bad", var_test::Vec({std::numeric_limits<float>::infinity(), 0.0f})}}, {},
                     {"assign_" + var}, &out);
    const std::string assign = var == "w" ? "Assign" : "AssignVariableOp";
    test::ExpectInvalid(st, "{{node assign_" + var + "}} (op " + assign + "): updated variable " +
                                var + " (input 0) has Inf values");

    LocalSession unchecked{SessionOptions()};
    ASSERT_TRUE(unchecked.Create(UpdateGraph()).ok());
    ASSERT_TRUE(unchecked.Run({}, {}, {"init_" + var}, &out).ok());
    ASSERT_TRUE(unchecked.Run({}, {}, {"step_" + var}, &out).ok());
    ASSERT_TRUE(unchecked.Run({}, {}, {"step_" + var}, &out).ok());
  }
}

}  // namespace
}  // namespace tensorflux
