// AddSymbolicGradients with respect to a resource variable: the handle (a DT_RESOURCE tensor)
// gets the summed gradient of every ReadVariableOp of it, as a float tensor of the variable's
// shape; a single read gets only its own. Values checked by running the graph.
#include <vector>

#include "gtest/gtest.h"
#include "tensorflux/gradients/gradients.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {
namespace {

GradOutput Add(Graph* g, const std::string& op, std::vector<GradOutput> in, GradAttrs attrs = {}) {
  auto n = AddNodeFromInputs(g, "", op, std::move(in), std::move(attrs));
  EXPECT_TRUE(n.ok()) << n.status();
  return n.ok() ? GradOutput{*n, 0} : GradOutput{};
}

TEST(VariableGradTest, GradientWithRespectToHandleSumsEveryRead) {
  Graph g;
  const std::vector<float> v0 = {1.0f, -2.0f, 0.5f};
  GradOutput h = Add(&g, "VarHandleOp", {},
                     {{"dtype", MakeAttr(DT_FLOAT)}, {"shape", MakeAttr(TensorShape({3}))}});
  GradOutput value = Add(&g, "Const", {},
                         {{"dtype", MakeAttr(DT_FLOAT)},
                          {"value", MakeAttr(Tensor::FromVector<float>(v0, TensorShape({3})))}});
  Node* init = Add(&g, "AssignVariableOp", {h, value}).node;
  GradOutput r1 = Add(&g, "ReadVariableOp", {h}, {{"dtype", MakeAttr(DT_FLOAT)}});
  GradOutput r2 = Add(&g, "ReadVariableOp", {h}, {{"dtype", MakeAttr(DT_FLOAT)}});
  GradOutput three =
      Add(&g, "Const", {},
          {{"dtype", MakeAttr(DT_FLOAT)}, {"value", MakeAttr(Tensor::Scalar<float>(3.0f))}});
  // y = sum(r1 * r2 + r1 * 3): dy/dv = 2 v + 3; dy/dr1 = r2 + 3.
  GradOutput prod = Add(&g, "Mul", {r1, r2});
  GradOutput lin = Add(&g, "Mul", {r1, three});
  GradOutput axis =
      Add(&g, "Const", {},
          {{"dtype", MakeAttr(DT_INT32)}, {"value", MakeAttr(Tensor::Scalar<int32_t>(0))}});
  GradOutput y = Add(&g, "Sum", {Add(&g, "AddV2", {prod, lin}), axis});
  std::vector<GradOutput> grads;
  Status st = AddSymbolicGradients(&g, {y}, {h, r1}, {}, &grads);
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_TRUE(grads[0].valid() && grads[1].valid());
  EXPECT_EQ(grads[0].dtype(), DT_FLOAT);

  GraphDef gdef;
  g.ToGraphDef(&gdef);
  auto session = NewSession(SessionOptions());
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Create(gdef).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({}, {}, {init->name()}, &out).ok());
  st = (*session)->Run({}, {grads[0].name(), grads[1].name()}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  for (int i = 0; i < 3; ++i) {
    EXPECT_FLOAT_EQ(out[0].data<float>()[i], 2 * v0[i] + 3) << i;
    EXPECT_FLOAT_EQ(out[1].data<float>()[i], v0[i] + 3) << i;
  }
}

}  // namespace
}  // namespace tensorflux
