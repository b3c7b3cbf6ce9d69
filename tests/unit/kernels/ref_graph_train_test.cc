// A TF 1.x training graph runs through reference variables: rust_regression_checkpoint
// (tests/data/tf-graphs, its README): VariableV2 + Assign initializers, Identity reads, and a
// gradient-descent step through ApplyGradientDescent. After `init` and 201 `train` steps on
// y = 0.1 x + 0.3 it has learned w and b (README: |w - 0.1| < 1e-3, |b - 0.3| < 1e-3).
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tensorflux/graph/graph_def_io.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {
namespace {

TEST(RefGraphTrainTest, RustRegressionCheckpointLearnsTheLine) {
  auto g = ReadGraphDefFile(std::string(TX_TEST_DATA_DIR) +
                            "/tf-graphs/rust_regression_checkpoint/model.pb");
  ASSERT_TRUE(g.ok()) << g.status();
  auto session = NewSession(SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  Session* s = session->get();
  ASSERT_TRUE(s->Create(*g).ok());
  std::vector<Tensor> out;
  // Before init the variables are uninitialized (TF's error text).
  Status st = s->Run({}, {"w:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_NE(st.message().find("Attempting to use uninitialized value w"), std::string::npos)
      << st;
  ASSERT_TRUE(s->Run({}, {}, {"init"}, &out).ok());

  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  constexpr int kPoints = 100;
  Tensor x(DT_FLOAT, TensorShape({kPoints})), y(DT_FLOAT, TensorShape({kPoints}));
  for (int i = 0; i < kPoints; ++i) {
    x.data<float>()[i] = u(rng);
    y.data<float>()[i] = 0.1f * x.data<float>()[i] + 0.3f;
  }
  for (int step = 0; step < 201; ++step) {
    st = s->Run({{"x", x}, {"y", y}}, {}, {"train"}, &out);
    ASSERT_TRUE(st.ok()) << "step " << step << ": " << st;
  }
  ASSERT_TRUE(s->Run({}, {"w:0", "b:0"}, {}, &out).ok());
  EXPECT_NEAR(out[0].scalar<float>(), 0.1f, 1e-3);
  EXPECT_NEAR(out[1].scalar<float>(), 0.3f, 1e-3);
}

}  // namespace
}  // namespace tensorflux
