// OpRegistry: registration through REGISTER_OP, look-ups, duplicates, listing, and registrations
// with bad specs that are reported instead of aborting.
#include <algorithm>
#include <string>

#include "gtest/gtest.h"
#include "tensorflux/framework/op.h"

namespace tensorflux {
namespace {

REGISTER_OP("TxTestRegistryOp")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {float, double}")
    .SetShapeFn(shape_inference::UnchangedShape)
    .Doc("Test op.");

// A broken registration: printed to stderr at start-up and left out, never an abort.
REGISTER_OP("TxTestRegistryBroken").Input("x: Undeclared");

TEST(OpRegistryTest, LookUpRegisteredOp) {
  StatusOr<const OpRegistrationData*> data = OpRegistry::Global()->LookUp("TxTestRegistryOp");
  ASSERT_TRUE(data.ok()) << data.status();
  const OpDef& op = (*data)->op_def;
  EXPECT_EQ(op.name(), "TxTestRegistryOp");
  ASSERT_EQ(op.input_arg_size(), 1);
  EXPECT_EQ(op.input_arg(0).type_attr(), "T");
  EXPECT_EQ(op.summary(), "Test op.");

  StatusOr<const OpDef*> def = OpRegistry::Global()->LookUpOpDef("TxTestRegistryOp");
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(*def, &op);

  // The registered shape function runs: UnchangedShape copies input 0.
  NodeDef n;
  n.set_name("n");
  n.set_op("TxTestRegistryOp");
  InferenceContext c(n, op, {PartialTensorShape({2, -1})}, {nullptr}, 1);
  ASSERT_TRUE((*data)->shape_fn(&c).ok());
  EXPECT_EQ(c.output(0), PartialTensorShape({2, -1}));
}

TEST(OpRegistryTest, UnknownOpIsNotFound) {
  StatusOr<const OpRegistrationData*> data = OpRegistry::Global()->LookUp("TxTestNoSuchOp");
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(data.status().message(), "Op type not registered 'TxTestNoSuchOp'");
  EXPECT_EQ(OpRegistry::Global()->LookUpOpDef("TxTestNoSuchOp").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(OpRegistryTest, BrokenRegistrationIsLeftOut) {
  EXPECT_EQ(OpRegistry::Global()->LookUp("TxTestRegistryBroken").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(OpRegistryTest, DuplicateIsAlreadyExists) {
  Status s = OpRegistry::Global()->Register(OpDefBuilder("TxTestRegistryOp").Input("x: float"));
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(std::string(s.message()).find("TxTestRegistryOp"), std::string::npos);
  // The original registration is untouched.
  EXPECT_EQ((*OpRegistry::Global()->LookUpOpDef("TxTestRegistryOp"))->input_arg(0).type_attr(), "T");
}

TEST(OpRegistryTest, RegisterReturnsParseErrors) {
  Status s = OpRegistry::Global()->Register(OpDefBuilder("TxTestRegistryBad").Attr("a: nope"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(OpRegistry::Global()->LookUp("TxTestRegistryBad").ok());
}

TEST(OpRegistryTest, ListOpsIsSortedAndToOpListMatches) {
  ASSERT_TRUE(OpRegistry::Global()->Register(OpDefBuilder("TxTestRegistryZ")).ok());
  ASSERT_TRUE(OpRegistry::Global()->Register(OpDefBuilder("TxTestRegistryA")).ok());
  std::vector<const OpRegistrationData*> ops = OpRegistry::Global()->ListOps();
  std::vector<std::string> names;
  for (const auto* d : ops) names.push_back(d->op_def.name());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  auto pos = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
  ASSERT_LT(pos("TxTestRegistryA"), (long)names.size());
  ASSERT_LT(pos("TxTestRegistryZ"), (long)names.size());
  EXPECT_LT(pos("TxTestRegistryA"), pos("TxTestRegistryOp"));
  EXPECT_LT(pos("TxTestRegistryOp"), pos("TxTestRegistryZ"));

  OpList list = OpRegistry::Global()->ToOpList();
  ASSERT_EQ(list.op_size(), (int)names.size());
  for (int i = 0; i < list.op_size(); ++i) EXPECT_EQ(list.op(i).name(), names[i]);
}

}  // namespace
}  // namespace tensorflux
