// PyFunc kernel through its C++ hook (kernels/cpu/py_func.h), with a C++ callback standing in
// for Python: inputs reach the callback, outputs are checked against Tout (count and dtype:
// INVALID_ARGUMENT), the callback's Status passes through, and no callback is
// FAILED_PRECONDITION. The Python side is tests/python/test_py_func.py.
#include "gtest/gtest.h"
#include "kernel_test_util.h"
#include "tensorflux/kernels/cpu/py_func.h"

namespace tensorflux {
namespace {

StatusOr<std::vector<Tensor>> RunPyFunc(const DataTypeVector& tout) {
  return test::KernelRunner("PyFunc")
      .Input(test::AsTensor<float>({1.5f, -2.0f}, TensorShape({2})))
      .Attr("token", std::string("pyfunc_7"))
      .Attr("Tout", tout)
      .Run();
}

TEST(PyFuncOpTest, CallbackResultsAreCheckedAgainstTout) {
  SetPyFuncCallback([](const std::string& token, const std::vector<Tensor>& in,
                       const DataTypeVector& tout, std::vector<Tensor>* out) -> Status {
    if (token != "pyfunc_7" || in.size() != 1) return errors::Internal("bad call");
    if (tout.size() == 2) return errors::Unknown("RuntimeError: two");  // passes through
    const auto v = test::ToDoubles(in[0]);
    out->push_back(test::AsTensor<double>({v[0] + v[1]}, TensorShape({})));
    return OkStatus();
  });
  auto ok = RunPyFunc({DT_DOUBLE});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(test::ToDoubles((*ok)[0]), std::vector<double>{-0.5});
  test::ExpectInvalid(RunPyFunc({DT_FLOAT}), "value 0 has dtype double, Tout says float");
  test::ExpectInvalid(RunPyFunc({}), "returned 1 values, Tout has 0");
  auto two = RunPyFunc({DT_DOUBLE, DT_DOUBLE});
  EXPECT_EQ(two.status().code(), absl::StatusCode::kUnknown);
  EXPECT_NE(two.status().message().find("RuntimeError: two"), std::string::npos);
  SetPyFuncCallback(nullptr);
  EXPECT_EQ(RunPyFunc({DT_DOUBLE}).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tensorflux
