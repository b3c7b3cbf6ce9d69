// Attr getters and setters, defaults, NodeDef validation, type flattening and summaries.
#include <string>

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/framework/op.h"

namespace tensorflux {
namespace {

OpDef MakeOpDef(const OpDefBuilder& b) {
  OpRegistrationData data;
  Status s = b.Finalize(&data);
  EXPECT_TRUE(s.ok()) << s;
  return data.op_def;
}

NodeDef FromText(const std::string& text) {
  NodeDef n;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &n)) << text;
  return n;
}

bool Contains(const Status& s, const std::string& part) {
  return std::string(s.message()).find(part) != std::string::npos;
}

// ---------------------------------------------------------------- getters

TEST(NodeDefUtilTest, GettersReadEveryType) {
  NodeDef n = FromText(R"pb(
    name: "n"
    op: "X"
    attr { key: "s" value { s: "SAME" } }
    attr { key: "i" value { i: -7 } }
    attr { key: "f" value { f: 0.25 } }
    attr { key: "b" value { b: true } }
    attr { key: "t" value { type: DT_INT64 } }
    attr { key: "shape" value { shape { dim { size: 2 } dim { size: 3 } } } }
    attr { key: "pshape" value { shape { dim { size: -1 } dim { size: 3 } } } }
    attr { key: "fn" value { func { name: "f1" } } }
    attr { key: "li" value { list { i: [ 1, 2, 3 ] } } }
    attr { key: "lf" value { list { f: [ 0.5, 1.5 ] } } }
    attr { key: "lb" value { list { b: [ true, false ] } } }
    attr { key: "ls" value { list { s: [ "a", "b" ] } } }
    attr { key: "lt" value { list { type: [ DT_FLOAT, DT_BOOL ] } } }
    attr { key: "lshape" value { list { shape { dim { size: 4 } } shape { unknown_rank: true } } } }
  )pb");
  std::string s;
  int64_t i64;
  int32_t i32;
  float f;
  bool b;
  DataType t;
  TensorShape shape;
  PartialTensorShape pshape;
  NameAttrList fn;
  ASSERT_TRUE(GetNodeAttr(n, "s", &s).ok());
  EXPECT_EQ(s, "SAME");
  ASSERT_TRUE(GetNodeAttr(n, "i", &i64).ok());
  EXPECT_EQ(i64, -7);
  ASSERT_TRUE(GetNodeAttr(n, "i", &i32).ok());
  EXPECT_EQ(i32, -7);
  ASSERT_TRUE(GetNodeAttr(n, "f", &f).ok());
  EXPECT_EQ(f, 0.25f);
  ASSERT_TRUE(GetNodeAttr(n, "b", &b).ok());
  EXPECT_TRUE(b);
  ASSERT_TRUE(GetNodeAttr(n, "t", &t).ok());
  EXPECT_EQ(t, DT_INT64);
  ASSERT_TRUE(GetNodeAttr(n, "shape", &shape).ok());
  EXPECT_EQ(shape, TensorShape({2, 3}));
  ASSERT_TRUE(GetNodeAttr(n, "pshape", &pshape).ok());
  EXPECT_EQ(pshape, PartialTensorShape({-1, 3}));
  ASSERT_TRUE(GetNodeAttr(n, "fn", &fn).ok());
  EXPECT_EQ(fn.name(), "f1");

  std::vector<int64_t> li;
  std::vector<int32_t> li32;
  std::vector<float> lf;
  std::vector<bool> lb;
  std::vector<std::string> ls;
  std::vector<DataType> lt;
  DataTypeVector ltv;
  std::vector<PartialTensorShape> lps;
  ASSERT_TRUE(GetNodeAttr(n, "li", &li).ok());
  EXPECT_EQ(li, (std::vector<int64_t>{1, 2, 3}));
  ASSERT_TRUE(GetNodeAttr(n, "li", &li32).ok());
  EXPECT_EQ(li32, (std::vector<int32_t>{1, 2, 3}));
  ASSERT_TRUE(GetNodeAttr(n, "lf", &lf).ok());
  EXPECT_EQ(lf, (std::vector<float>{0.5f, 1.5f}));
  ASSERT_TRUE(GetNodeAttr(n, "lb", &lb).ok());
  EXPECT_EQ(lb, (std::vector<bool>{true, false}));
  ASSERT_TRUE(GetNodeAttr(n, "ls", &ls).ok());
  EXPECT_EQ(ls, (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(GetNodeAttr(n, "lt", &lt).ok());
  EXPECT_EQ(lt, (std::vector<DataType>{DT_FLOAT, DT_BOOL}));
  ASSERT_TRUE(GetNodeAttr(n, "lt", &ltv).ok());
  EXPECT_EQ(ltv, (DataTypeVector{DT_FLOAT, DT_BOOL}));
  ASSERT_TRUE(GetNodeAttr(n, "lshape", &lps).ok());
  ASSERT_EQ(lps.size(), 2u);
  EXPECT_EQ(lps[0], PartialTensorShape({4}));
  EXPECT_TRUE(lps[1].unknown_rank());

  // A list(shape) with an unknown dim cannot be read as fully known shapes.
  std::vector<TensorShape> ls_known;
  EXPECT_EQ(GetNodeAttr(n, "lshape", &ls_known).code(), absl::StatusCode::kInvalidArgument);
  // Nor can a partial shape.
  EXPECT_EQ(GetNodeAttr(n, "pshape", &shape).code(), absl::StatusCode::kInvalidArgument);
}

TEST(NodeDefUtilTest, MissingAttrIsNotFound) {
  NodeDef n = FromText(R"pb(name: "mynode" op: "X")pb");
  int64_t v;
  Status s = GetNodeAttr(n, "axis", &v);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "No attr named 'axis' in NodeDef of node 'mynode'");
  EXPECT_EQ(FindAttr(n, "axis"), nullptr);
}

TEST(NodeDefUtilTest, WrongTypeIsInvalidArgument) {
  NodeDef n = FromText(R"pb(
    name: "mynode"
    op: "X"
    attr { key: "i" value { i: 3 } }
    attr { key: "li" value { list { i: [ 1 ] } } }
    attr { key: "big" value { i: 5000000000 } }
    attr { key: "empty" value { list {} } }
  )pb");
  std::string s;
  Status st = GetNodeAttr(n, "i", &s);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "Attr 'i' of node 'mynode' has type int, expected string");
  std::vector<float> lf;
  st = GetNodeAttr(n, "li", &lf);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(st, "has type list(int), expected list(float)")) << st;
  int64_t i;
  EXPECT_EQ(GetNodeAttr(n, "li", &i).code(), absl::StatusCode::kInvalidArgument);
  // int32 getters are range-checked.
  int32_t i32;
  st = GetNodeAttr(n, "big", &i32);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(st, "5000000000")) << st;
  ASSERT_TRUE(GetNodeAttr(n, "big", &i).ok());
  EXPECT_EQ(i, 5000000000LL);
  // An empty list reads as any list type.
  std::vector<std::string> ls = {"stale"};
  ASSERT_TRUE(GetNodeAttr(n, "empty", &ls).ok());
  EXPECT_TRUE(ls.empty());
  DataTypeVector lt;
  ASSERT_TRUE(GetNodeAttr(n, "empty", &lt).ok());
  EXPECT_TRUE(lt.empty());
}

// ---------------------------------------------------------------- setters

TEST(NodeDefUtilTest, SettersRoundTrip) {
  NodeDef n;
  n.set_name("n");
  AddNodeAttr("s", std::string("abc"), &n);
  AddNodeAttr("c", "lit", &n);
  AddNodeAttr("i", int64_t{9}, &n);
  AddNodeAttr("i32", int32_t{-4}, &n);
  AddNodeAttr("f", 1.5f, &n);
  AddNodeAttr("b", true, &n);
  AddNodeAttr("t", DT_HALF, &n);
  AddNodeAttr("shape", TensorShape({3, 1}), &n);
  AddNodeAttr("unknown", PartialTensorShape(), &n);
  AddNodeAttr("partial", PartialTensorShape({-1, 2}), &n);
  AddNodeAttr("li", std::vector<int64_t>{1, 2}, &n);
  AddNodeAttr("li32", std::vector<int32_t>{3, 4}, &n);
  AddNodeAttr("lf", std::vector<float>{0.5f}, &n);
  AddNodeAttr("lt", std::vector<DataType>{DT_INT32, DT_FLOAT}, &n);
  AddNodeAttr("ls", std::vector<std::string>{"x", "y"}, &n);
  AddNodeAttr("lshape", std::vector<PartialTensorShape>{PartialTensorShape({1}), PartialTensorShape()},
              &n);

  EXPECT_EQ(FindAttr(n, "s")->s(), "abc");
  EXPECT_EQ(FindAttr(n, "c")->s(), "lit");
  EXPECT_EQ(FindAttr(n, "i")->i(), 9);
  EXPECT_EQ(FindAttr(n, "i32")->i(), -4);
  EXPECT_EQ(FindAttr(n, "f")->f(), 1.5f);
  EXPECT_TRUE(FindAttr(n, "b")->b());
  EXPECT_EQ(FindAttr(n, "t")->type(), DT_HALF);
  EXPECT_EQ(SummarizeAttrValue(*FindAttr(n, "shape")), "[3,1]");
  EXPECT_TRUE(FindAttr(n, "unknown")->shape().unknown_rank());
  EXPECT_EQ(FindAttr(n, "unknown")->shape().dim_size(), 0);
  EXPECT_EQ(SummarizeAttrValue(*FindAttr(n, "partial")), "[?,2]");
  EXPECT_EQ(SummarizeAttrValue(*FindAttr(n, "li")), "[1, 2]");
  EXPECT_EQ(SummarizeAttrValue(*FindAttr(n, "li32")), "[3, 4]");
  EXPECT_EQ(SummarizeAttrValue(*FindAttr(n, "lf")), "[0.5]");
  EXPECT_EQ(SummarizeAttrValue(*FindAttr(n, "lt")), "[DT_INT32, DT_FLOAT]");
  EXPECT_EQ(SummarizeAttrValue(*FindAttr(n, "ls")), "[\"x\", \"y\"]");
  EXPECT_EQ(SummarizeAttrValue(*FindAttr(n, "lshape")), "[[1], <unknown>]");

  // An empty list is still a list.
  AddNodeAttr("empty", std::vector<int64_t>{}, &n);
  EXPECT_EQ(FindAttr(n, "empty")->value_case(), AttrValue::kList);
}

TEST(NodeDefUtilTest, TensorAttrUsesTensorContent) {
  Tensor t = Tensor::FromVector<float>({1.f, 2.f, 3.f, 4.f}, TensorShape({2, 2}));
  AttrValue v;
  SetAttrValue(t, &v);
  ASSERT_EQ(v.value_case(), AttrValue::kTensor);
  EXPECT_EQ(v.tensor().dtype(), DT_FLOAT);
  EXPECT_EQ(v.tensor().tensor_content().size(), 16u);
  EXPECT_EQ(v.tensor().float_val_size(), 0);
  NodeDef n;
  n.set_name("c");
  (*n.mutable_attr())["value"] = v;
  Tensor back;
  ASSERT_TRUE(GetNodeAttr(n, "value", &back).ok());
  ASSERT_EQ(back.shape(), TensorShape({2, 2}));
  EXPECT_EQ(back.data<float>()[3], 4.f);
}

// ---------------------------------------------------------------- defaults and validation

OpDef TestOp() {
  return MakeOpDef(OpDefBuilder("TxTestConv")
                       .Input("input: T")
                       .Input("filter: T")
                       .Output("output: T")
                       .Attr("T: {half, float, double}")
                       .Attr("strides: list(int) >= 2")
                       .Attr("padding: {'SAME', 'VALID'} = 'SAME'")
                       .Attr("use_cudnn: bool = true")
                       .Attr("groups: int >= 1 = 1"));
}

NodeDef GoodConv() {
  return FromText(R"pb(
    name: "conv"
    op: "TxTestConv"
    input: "x"
    input: "w:1"
    input: "^init"
    attr { key: "T" value { type: DT_FLOAT } }
    attr { key: "strides" value { list { i: [ 1, 1 ] } } }
  )pb");
}

TEST(NodeDefUtilTest, AddDefaultsFillsOnlyMissing) {
  OpDef op = TestOp();
  NodeDef n = GoodConv();
  (*n.mutable_attr())["padding"].set_s("VALID");
  AddDefaultsToNodeDef(op, &n);
  EXPECT_EQ(FindAttr(n, "padding")->s(), "VALID");  // kept
  EXPECT_TRUE(FindAttr(n, "use_cudnn")->b());       // filled
  EXPECT_EQ(FindAttr(n, "groups")->i(), 1);
  EXPECT_EQ(FindAttr(n, "T")->type(), DT_FLOAT);
  EXPECT_EQ(n.attr_size(), 5);
}

TEST(NodeDefUtilTest, ValidNodeDefPasses) {
  OpDef op = TestOp();
  NodeDef n = GoodConv();
  AddDefaultsToNodeDef(op, &n);
  (*n.mutable_attr())["_class"].mutable_list()->add_s("loc:@x");  // internal attrs are allowed
  Status s = ValidateNodeDef(n, op);
  EXPECT_TRUE(s.ok()) << s;
}

struct Breakage {
  const char* what;
  std::function<void(NodeDef*)> mutate;
  const char* expect;
};

TEST(NodeDefUtilTest, ValidationFailures) {
  OpDef op = TestOp();
  std::vector<Breakage> cases = {
      {"missing attr", [](NodeDef* n) { n->mutable_attr()->erase("strides"); }, "missing attr 'strides'"},
      {"wrong attr type", [](NodeDef* n) { (*n->mutable_attr())["T"].set_i(1); },
       "has type int, expected type"},
      {"type not allowed", [](NodeDef* n) { (*n->mutable_attr())["T"].set_type(DT_INT32); },
       "DT_INT32 not in the allowed list"},
      {"string not allowed", [](NodeDef* n) { (*n->mutable_attr())["padding"].set_s("FULL"); },
       "\"FULL\" not in the allowed list"},
      {"int below minimum", [](NodeDef* n) { (*n->mutable_attr())["groups"].set_i(0); },
       "less than the minimum 1"},
      {"list too short", [](NodeDef* n) { (*n->mutable_attr())["strides"].mutable_list()->clear_i(); },
       "length 0 less than the minimum 2"},
      {"unknown attr", [](NodeDef* n) { (*n->mutable_attr())["bogus"].set_i(1); }, "'bogus'"},
      {"too few inputs", [](NodeDef* n) { n->mutable_input()->erase(n->mutable_input()->begin()); },
       "has 1 data inputs, but the op expects 2"},
      {"too many inputs", [](NodeDef* n) { n->add_input("^late"); n->mutable_input(2)->assign("z"); },
       "has 3 data inputs, but the op expects 2"},
      {"control before data",
       [](NodeDef* n) {
         n->clear_input();
         n->add_input("x");
         n->add_input("^init");
         n->add_input("w");
       },
       "control inputs must follow"},
      {"empty input", [](NodeDef* n) { n->set_input(1, ""); }, "empty input"},
      {"wrong op", [](NodeDef* n) { n->set_op("TxTestOther"); }, "TxTestOther"},
  };
  for (const Breakage& c : cases) {
    NodeDef n = GoodConv();
    AddDefaultsToNodeDef(op, &n);
    c.mutate(&n);
    Status s = ValidateNodeDef(n, op);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.what << ": " << s;
    EXPECT_TRUE(Contains(s, c.expect)) << c.what << ": " << s;
    EXPECT_TRUE(Contains(s, "conv")) << c.what << " does not name the node: " << s;
  }
}

// ---------------------------------------------------------------- flattening

TEST(NodeDefUtilTest, NumberAttrAndTypeListFlattening) {
  OpDef op = MakeOpDef(OpDefBuilder("TxTestFlatten")
                           .Input("a: N * T")
                           .Input("b: Tlist")
                           .Input("c: int32")
                           .Output("ref: Ref(T)")
                           .Output("outs: M * float")
                           .Attr("N: int >= 1")
                           .Attr("M: int >= 0")
                           .Attr("T: type")
                           .Attr("Tlist: list(type) >= 0"));
  NodeDef n = FromText(R"pb(
    name: "f"
    op: "TxTestFlatten"
    input: "p:0"
    input: "p:1"
    input: "p:2"
    input: "q"
    input: "r"
    input: "s"
    attr { key: "N" value { i: 3 } }
    attr { key: "M" value { i: 2 } }
    attr { key: "T" value { type: DT_DOUBLE } }
    attr { key: "Tlist" value { list { type: [ DT_STRING, DT_BOOL ] } } }
  )pb");
  EXPECT_TRUE(ValidateNodeDef(n, op).ok()) << ValidateNodeDef(n, op);

  DataTypeVector in, out;
  ASSERT_TRUE(InOutTypesForNode(n, op, &in, &out).ok());
  EXPECT_EQ(in, (DataTypeVector{DT_DOUBLE, DT_DOUBLE, DT_DOUBLE, DT_STRING, DT_BOOL, DT_INT32}));
  EXPECT_EQ(out, (DataTypeVector{DT_DOUBLE_REF, DT_FLOAT, DT_FLOAT}));

  NameRangeMap in_ranges, out_ranges;
  ASSERT_TRUE(NameRangesForNode(n, op, &in_ranges, &out_ranges).ok());
  EXPECT_EQ(in_ranges["a"], std::make_pair(0, 3));
  EXPECT_EQ(in_ranges["b"], std::make_pair(3, 5));
  EXPECT_EQ(in_ranges["c"], std::make_pair(5, 6));
  EXPECT_EQ(out_ranges["ref"], std::make_pair(0, 1));
  EXPECT_EQ(out_ranges["outs"], std::make_pair(1, 3));

  // With N = 2 the same six inputs are one too many.
  (*n.mutable_attr())["N"].set_i(2);
  Status s = ValidateNodeDef(n, op);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s, "has 6 data inputs, but the op expects 5")) << s;

  // Missing type attr: InOutTypesForNode reports it.
  n.mutable_attr()->erase("T");
  s = InOutTypesForNode(n, op, &in, &out);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s, "'T'")) << s;
}

// ---------------------------------------------------------------- summaries

TEST(NodeDefUtilTest, SummarizeNodeDef) {
  NodeDef n = FromText(R"pb(
    name: "m"
    op: "MatMul"
    input: "a"
    input: "b:1"
    input: "^c"
    attr { key: "transpose_b" value { b: false } }
    attr { key: "T" value { type: DT_FLOAT } }
    attr { key: "transpose_a" value { b: true } }
  )pb");
  EXPECT_EQ(SummarizeNodeDef(n),
            "{{node m}} = MatMul[T=DT_FLOAT, transpose_a=true, transpose_b=false](a, b:1, ^c)");
  n.clear_attr();
  n.clear_input();
  n.set_device("/device:CPU:0");
  EXPECT_EQ(SummarizeNodeDef(n), "{{node m}} = MatMul[_device=\"/device:CPU:0\"]()");
}

TEST(NodeDefUtilTest, SummarizeAttrValues) {
  AttrValue v;
  v.set_s("a\"b");
  EXPECT_EQ(SummarizeAttrValue(v), "\"a\\\"b\"");
  v.set_f(0.25f);
  EXPECT_EQ(SummarizeAttrValue(v), "0.25");
  v.set_i(-3);
  EXPECT_EQ(SummarizeAttrValue(v), "-3");
  v.mutable_shape()->set_unknown_rank(true);
  EXPECT_EQ(SummarizeAttrValue(v), "<unknown>");
  v.mutable_shape()->Clear();
  EXPECT_EQ(SummarizeAttrValue(v), "[]");
  v.mutable_func()->set_name("fn");
  (*v.mutable_func()->mutable_attr())["T"].set_type(DT_INT32);
  EXPECT_EQ(SummarizeAttrValue(v), "fn[T=DT_INT32]");
  v.mutable_list();
  EXPECT_EQ(SummarizeAttrValue(v), "[]");
}

}  // namespace
}  // namespace tensorflux
