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

}  // namespace
}  // namespace tensorflux
