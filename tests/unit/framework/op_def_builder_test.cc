// OpDefBuilder: every spec form parses to the OpDef fields TF gives it (compared with OpDefs
// written by hand in text format), and bad specs are INVALID_ARGUMENT naming the op and spec.
#include <string>

#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tensorflux/framework/op.h"

namespace tensorflux {
namespace {

OpDef Parse(const OpDefBuilder& b) {
  OpRegistrationData data;
  Status s = b.Finalize(&data);
  EXPECT_TRUE(s.ok()) << s;
  return data.op_def;
}

OpDef FromText(const std::string& text) {
  OpDef op;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &op)) << text;
  return op;
}

void ExpectOpDef(const OpDefBuilder& b, const std::string& text) {
  OpDef got = Parse(b);
  OpDef want = FromText(text);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(got, want))
      << "got:\n" << got.DebugString() << "want:\n" << want.DebugString();
}

Status FinalizeStatus(const OpDefBuilder& b) {
  OpRegistrationData data;
  return b.Finalize(&data);
}

TEST(OpDefBuilderTest, TypeAttrArgs) {
  ExpectOpDef(OpDefBuilder("TxTestAdd").Input("x: T").Input("y: T").Output("z: T").Attr("T: type"),
              R"pb(name: "TxTestAdd"
                   input_arg { name: "x" type_attr: "T" }
                   input_arg { name: "y" type_attr: "T" }
                   output_arg { name: "z" type_attr: "T" }
                   attr { name: "T" type: "type" })pb");
}

TEST(OpDefBuilderTest, FixedTypeArgs) {
  ExpectOpDef(OpDefBuilder("TxTestFixed").Input("a: float").Input("b: int64").Output("c: DT_BOOL"),
              R"pb(name: "TxTestFixed"
                   input_arg { name: "a" type: DT_FLOAT }
                   input_arg { name: "b" type: DT_INT64 }
                   output_arg { name: "c" type: DT_BOOL })pb");
}

TEST(OpDefBuilderTest, NumberAttrArg) {
  ExpectOpDef(OpDefBuilder("TxTestPack")
                  .Input("values: N * T")
                  .Input("more: K * int32")
                  .Output("out: T")
                  .Attr("N: int >= 2")
                  .Attr("K: int >= 0")
                  .Attr("T: type"),
              R"pb(name: "TxTestPack"
                   input_arg { name: "values" type_attr: "T" number_attr: "N" }
                   input_arg { name: "more" type: DT_INT32 number_attr: "K" }
                   output_arg { name: "out" type_attr: "T" }
                   attr { name: "N" type: "int" has_minimum: true minimum: 2 }
                   attr { name: "K" type: "int" has_minimum: true minimum: 0 }
                   attr { name: "T" type: "type" })pb");
}

TEST(OpDefBuilderTest, TypeListArgAndRef) {
  ExpectOpDef(OpDefBuilder("TxTestList")
                  .Input("args: Tin")
                  .Input("ref: Ref(T)")
                  .Output("outs: Tout")
                  .Attr("Tin: list(type) >= 0")
                  .Attr("Tout: list(type)")
                  .Attr("T: type"),
              R"pb(name: "TxTestList"
                   input_arg { name: "args" type_list_attr: "Tin" }
                   input_arg { name: "ref" type_attr: "T" is_ref: true }
                   output_arg { name: "outs" type_list_attr: "Tout" }
                   attr { name: "Tin" type: "list(type)" has_minimum: true minimum: 0 }
                   attr { name: "Tout" type: "list(type)" }
                   attr { name: "T" type: "type" })pb");
}

TEST(OpDefBuilderTest, AllowedTypesAndTypeDefaults) {
  ExpectOpDef(OpDefBuilder("TxTestAllowed")
                  .Attr("T: {float, int32}")
                  .Attr("Tidx: {int32, int64} = DT_INT32")
                  .Attr("out_type: type = int64")
                  .Attr("Ts: list({half, bfloat16})"),
              R"pb(name: "TxTestAllowed"
                   attr {
                     name: "T"
                     type: "type"
                     allowed_values { list { type: [ DT_FLOAT, DT_INT32 ] } }
                   }
                   attr {
                     name: "Tidx"
                     type: "type"
                     default_value { type: DT_INT32 }
                     allowed_values { list { type: [ DT_INT32, DT_INT64 ] } }
                   }
                   attr { name: "out_type" type: "type" default_value { type: DT_INT64 } }
                   attr {
                     name: "Ts"
                     type: "list(type)"
                     allowed_values { list { type: [ DT_HALF, DT_BFLOAT16 ] } }
                   })pb");
}

TEST(OpDefBuilderTest, ScalarDefaults) {
  ExpectOpDef(OpDefBuilder("TxTestScalars")
                  .Attr("padding: {'SAME', 'VALID'} = 'SAME'")
                  .Attr("label: string = ''")
                  .Attr("name2: string = \"a'b\"")
                  .Attr("flag: bool = false")
                  .Attr("on: bool = true")
                  .Attr("alpha: float = 0.5")
                  .Attr("eps: float = -1e-3")
                  .Attr("axis: int = -1"),
              R"pb(name: "TxTestScalars"
                   attr {
                     name: "padding"
                     type: "string"
                     default_value { s: "SAME" }
                     allowed_values { list { s: [ "SAME", "VALID" ] } }
                   }
                   attr { name: "label" type: "string" default_value { s: "" } }
                   attr { name: "name2" type: "string" default_value { s: "a'b" } }
                   attr { name: "flag" type: "bool" default_value { b: false } }
                   attr { name: "on" type: "bool" default_value { b: true } }
                   attr { name: "alpha" type: "float" default_value { f: 0.5 } }
                   attr { name: "eps" type: "float" default_value { f: -0.001 } }
                   attr { name: "axis" type: "int" default_value { i: -1 } })pb");
}

TEST(OpDefBuilderTest, ListDefaults) {
  ExpectOpDef(OpDefBuilder("TxTestLists")
                  .Attr("ksize: list(int) >= 1 = [1,1]")
                  .Attr("names: list(string) = ['a', 'b,c']")
                  .Attr("empty: list(float) = []")
                  .Attr("types: list(type) = [float, DT_INT32]")
                  .Attr("shapes: list(shape) = [[2,3], []]"),
              R"pb(name: "TxTestLists"
                   attr {
                     name: "ksize"
                     type: "list(int)"
                     default_value { list { i: [ 1, 1 ] } }
                     has_minimum: true
                     minimum: 1
                   }
                   attr { name: "names" type: "list(string)" default_value { list { s: [ "a", "b,c" ] } } }
                   attr { name: "empty" type: "list(float)" default_value { list {} } }
                   attr {
                     name: "types"
                     type: "list(type)"
                     default_value { list { type: [ DT_FLOAT, DT_INT32 ] } }
                   }
                   attr {
                     name: "shapes"
                     type: "list(shape)"
                     default_value {
                       list {
                         shape { dim { size: 2 } dim { size: 3 } }
                         shape {}
                       }
                     }
                   })pb");
}

TEST(OpDefBuilderTest, ShapeDefaults) {
  ExpectOpDef(OpDefBuilder("TxTestShapes")
                  .Attr("a: shape = { unknown_rank: true }")
                  .Attr("b: shape = [2,3]")
                  .Attr("c: shape = [-1, 3]")
                  .Attr("d: shape = []"),
              R"pb(name: "TxTestShapes"
                   attr { name: "a" type: "shape" default_value { shape { unknown_rank: true } } }
                   attr {
                     name: "b"
                     type: "shape"
                     default_value { shape { dim { size: 2 } dim { size: 3 } } }
                   }
                   attr {
                     name: "c"
                     type: "shape"
                     default_value { shape { dim { size: -1 } dim { size: 3 } } }
                   }
                   attr { name: "d" type: "shape" default_value { shape {} } })pb");
}

TEST(OpDefBuilderTest, OtherAttrTypes) {
  ExpectOpDef(OpDefBuilder("TxTestOthers")
                  .Attr("value: tensor")
                  .Attr("f: func")
                  .Attr("types: list(type) >= 0")
                  .Attr("shapes: list(shape)")
                  .Attr("names: list(string)")
                  .Attr("t0: tensor = { dtype: DT_FLOAT tensor_shape {} float_val: 0.5 }"),
              R"pb(name: "TxTestOthers"
                   attr { name: "value" type: "tensor" }
                   attr { name: "f" type: "func" }
                   attr { name: "types" type: "list(type)" has_minimum: true minimum: 0 }
                   attr { name: "shapes" type: "list(shape)" }
                   attr { name: "names" type: "list(string)" }
                   attr {
                     name: "t0"
                     type: "tensor"
                     default_value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0.5 } }
                   })pb");
}

TEST(OpDefBuilderTest, FlagsAndDoc) {
  ExpectOpDef(OpDefBuilder("TxTestFlags")
                  .SetIsStateful()
                  .SetIsCommutative()
                  .SetIsAggregate()
                  .SetAllowsUninitializedInput()
                  .Doc("Adds things.\n\nLonger text\nover lines."),
              R"pb(name: "TxTestFlags"
                   is_stateful: true
                   is_commutative: true
                   is_aggregate: true
                   allows_uninitialized_input: true
                   summary: "Adds things."
                   description: "Longer text\nover lines.")pb");
}

TEST(OpDefBuilderTest, DefaultShapeFnIsUnknownShape) {
  OpRegistrationData data;
  ASSERT_TRUE(OpDefBuilder("TxTestNoShapeFn").Output("a: float").Output("b: float").Finalize(&data).ok());
  ASSERT_TRUE(static_cast<bool>(data.shape_fn));
  NodeDef n;
  n.set_name("n");
  n.set_op("TxTestNoShapeFn");
  InferenceContext c(n, data.op_def, {}, {}, 2);
  c.set_output(0, PartialTensorShape({2}));
  ASSERT_TRUE(data.shape_fn(&c).ok());
  EXPECT_TRUE(c.output(0).unknown_rank());
  EXPECT_TRUE(c.output(1).unknown_rank());
}

TEST(OpDefBuilderTest, CustomShapeFnIsKept) {
  OpRegistrationData data;
  ASSERT_TRUE(OpDefBuilder("TxTestShapeFn")
                  .Output("a: float")
                  .SetShapeFn(shape_inference::ScalarShape)
                  .Finalize(&data)
                  .ok());
  NodeDef n;
  InferenceContext c(n, data.op_def, {}, {}, 1);
  ASSERT_TRUE(data.shape_fn(&c).ok());
  EXPECT_EQ(c.output(0), PartialTensorShape::Scalar());
}

struct BadSpec {
  const char* what;
  OpDefBuilder builder;
  const char* bad_spec;  // the message must quote this spec
  const char* detail;    // and contain this
};

TEST(OpDefBuilderTest, BadSpecsAreInvalidArgument) {
  std::vector<BadSpec> cases = {
      {"no colon", OpDefBuilder("TxTestBad").Input("x T"), "x T", "name: type"},
      {"undeclared type attr", OpDefBuilder("TxTestBad").Input("x: T"), "x: T", "'T'"},
      {"number attr not int", OpDefBuilder("TxTestBad").Input("x: N * T").Attr("N: type").Attr("T: type"),
       "x: N * T", "expected int"},
      {"undeclared number attr", OpDefBuilder("TxTestBad").Input("x: N * T").Attr("T: type"),
       "x: N * T", "'N'"},
      {"type attr of wrong kind", OpDefBuilder("TxTestBad").Input("x: T").Attr("T: int"), "x: T",
       "has type int"},
      {"list attr used with N", OpDefBuilder("TxTestBad").Input("x: N * L").Attr("N: int").Attr("L: list(type)"),
       "x: N * L", "list(type)"},
      {"list(int) as type list", OpDefBuilder("TxTestBad").Output("y: L").Attr("L: list(int)"),
       "y: L", "list(int)"},
      {"unterminated Ref", OpDefBuilder("TxTestBad").Input("x: Ref(T").Attr("T: type"), "x: Ref(T",
       "Ref("},
      {"bad arg name", OpDefBuilder("TxTestBad").Input("9x: float"), "9x: float", "bad arg name"},
      {"duplicate input", OpDefBuilder("TxTestBad").Input("x: float").Input("x: int32"), "x: int32",
       "duplicate"},
      {"unknown attr type", OpDefBuilder("TxTestBad").Attr("a: foo"), "a: foo", "unknown attr type"},
      {"unknown allowed type", OpDefBuilder("TxTestBad").Attr("T: {float, flot}"), "T: {float, flot}",
       "flot"},
      {"unterminated braces", OpDefBuilder("TxTestBad").Attr("T: {float, int32"), "T: {float, int32",
       "'{'"},
      {"bad int default", OpDefBuilder("TxTestBad").Attr("a: int = abc"), "a: int = abc", "abc"},
      {"bad bool default", OpDefBuilder("TxTestBad").Attr("a: bool = yes"), "a: bool = yes", "yes"},
      {"unquoted string default", OpDefBuilder("TxTestBad").Attr("a: string = SAME"),
       "a: string = SAME", "quoted"},
      {"default not allowed", OpDefBuilder("TxTestBad").Attr("p: {'SAME', 'VALID'} = 'FULL'"),
       "p: {'SAME', 'VALID'} = 'FULL'", "FULL"},
      {"type default not allowed", OpDefBuilder("TxTestBad").Attr("T: {float} = DT_INT32"),
       "T: {float} = DT_INT32", "DT_INT32"},
      {"default below minimum", OpDefBuilder("TxTestBad").Attr("a: int >= 2 = 1"), "a: int >= 2 = 1",
       "minimum"},
      {"list default too short", OpDefBuilder("TxTestBad").Attr("a: list(int) >= 2 = [1]"),
       "a: list(int) >= 2 = [1]", "minimum"},
      {"minimum on float", OpDefBuilder("TxTestBad").Attr("a: float >= 1"), "a: float >= 1",
       "minimum"},
      {"list default not a list", OpDefBuilder("TxTestBad").Attr("a: list(int) = 3"),
       "a: list(int) = 3", "list"},
      {"bad shape dim", OpDefBuilder("TxTestBad").Attr("s: shape = [2,x]"), "s: shape = [2,x]", "'x'"},
      {"shape dim below -1", OpDefBuilder("TxTestBad").Attr("s: shape = [-2]"), "s: shape = [-2]",
       "-2"},
      {"trailing junk", OpDefBuilder("TxTestBad").Attr("a: int junk"), "a: int junk", "junk"},
      {"duplicate attr", OpDefBuilder("TxTestBad").Attr("a: int").Attr("a: float"), "a: float",
       "duplicate"},
      {"unknown list element type", OpDefBuilder("TxTestBad").Attr("a: list(foo)"), "a: list(foo)",
       "foo"},
  };
  for (const BadSpec& c : cases) {
    Status s = FinalizeStatus(c.builder);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.what << ": " << s;
    std::string msg(s.message());
    EXPECT_NE(msg.find("TxTestBad"), std::string::npos) << c.what << ": " << msg;
    EXPECT_NE(msg.find(std::string("'") + c.bad_spec + "'"), std::string::npos)
        << c.what << ": " << msg;
    EXPECT_NE(msg.find(c.detail), std::string::npos) << c.what << ": " << msg;
  }
}

TEST(OpDefBuilderTest, BadOpName) {
  Status s = FinalizeStatus(OpDefBuilder("Bad Name"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("Bad Name"), std::string::npos);
}

}  // namespace
}  // namespace tensorflux
