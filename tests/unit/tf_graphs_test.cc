// Graph files made by TensorFlow (tests/data/tf-graphs, see its README) give exactly the values
// TensorFlow gives, through Session. The same checks through the CLI are in tools/cli_test.cc.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tensorflux/graph/graph_def_io.h"
#include "tensorflux/graph/saved_model.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {
namespace {

const std::string kDir = std::string(TX_TEST_DATA_DIR) + "/tf-graphs/";

std::unique_ptr<Session> SessionFor(const GraphDef& g) {
  auto s = NewSession(SessionOptions());
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return nullptr;
  Status c = (*s)->Create(g);
  EXPECT_TRUE(c.ok()) << c;
  return std::move(*s);
}

template <typename T>
Tensor Make(std::vector<T> v, TensorShape shape) {
  return Tensor::FromVector<T>(absl::MakeConstSpan(v), shape);
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

TEST(TfGraphsTest, ServingMatrixHalfPlusTwo) {
  auto mg = LoadSavedModelMetaGraph(kDir + "serving_matrix_half_plus_two");
  ASSERT_TRUE(mg.ok()) << mg.status();
  auto session = SessionFor(mg->graph_def());
  ASSERT_NE(session, nullptr);
  std::vector<Tensor> out;
  Tensor x = Make<float>({0, 1, 2, 3, 4, 5, 6, 7, 8}, TensorShape({1, 3, 3}));
  Status s = session->Run({{"x:0", x}}, {"y:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype(), DT_FLOAT);
  EXPECT_EQ(out[0].shape(), TensorShape({1, 3, 3}));
  EXPECT_EQ(Values<float>(out[0]),
            (std::vector<float>{2, 2.5f, 3, 3.5f, 4, 4.5f, 5, 5.5f, 6}));

  // The signature names the same tensors; a batch of 2 works as x is [-1,3,3].
  const SignatureDef& sig = mg->signature_def().at("serving_default");
  Tensor x2 = Make<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, -2, -2, -2, 0, 0, 0, 2, 2, 2},
                          TensorShape({2, 3, 3}));
  s = session->Run({{*SignatureTensorName(sig, "x", true), x2}},
                   {*SignatureTensorName(sig, "y", false)}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].shape(), TensorShape({2, 3, 3}));
  EXPECT_EQ(Values<float>(out[0])[9], 1.f);
  EXPECT_EQ(Values<float>(out[0])[17], 3.f);

  // A feed that contradicts the declared [-1,3,3] shape is rejected.
  s = session->Run({{"x:0", Make<float>({1, 2, 3}, TensorShape({3}))}}, {"y:0"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(TfGraphsTest, RustAddition) {
  auto g = ReadGraphDefFile(kDir + "rust_addition/model.pb");
  ASSERT_TRUE(g.ok()) << g.status();
  auto session = SessionFor(*g);
  ASSERT_NE(session, nullptr);
  std::vector<Tensor> out;
  // x and y are declared scalars; like TF's C API, shape-[1] feeds are accepted.
  Status s = session->Run({{"x", Make<int32_t>({2}, TensorShape({1}))},
                           {"y", Make<int32_t>({40}, TensorShape({1}))}},
                          {"z"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].dtype(), DT_INT32);
  EXPECT_EQ(out[0].shape(), TensorShape({1}));
  EXPECT_EQ(Values<int32_t>(out[0]), (std::vector<int32_t>{42}));
  // Scalars too.
  s = session->Run({{"x:0", Tensor::Scalar<int32_t>(2)}, {"y:0", Tensor::Scalar<int32_t>(40)}},
                   {"z:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].dims(), 0);
  EXPECT_EQ(out[0].scalar<int32_t>(), 42);
}

TEST(TfGraphsTest, RustMultiplicationLegacyUnknownShapes) {
  auto g = ReadGraphDefFile(kDir + "rust_multiplication/multiplication.pb");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->versions().producer(), 9);
  auto session = SessionFor(*g);
  ASSERT_NE(session, nullptr);
  std::vector<Tensor> out;
  // `shape {}` with producer 9 means unknown shape, so vectors are fine.
  Status s = session->Run({{"a", Make<float>({1, 2, 3}, TensorShape({3}))},
                           {"b", Make<float>({4, 5, 6}, TensorShape({3}))}},
                          {"c"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].shape(), TensorShape({3}));
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{4, 10, 18}));
}

}  // namespace
}  // namespace tensorflux
