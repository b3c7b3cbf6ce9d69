// GraphDef import/export, tensor-name parsing and graph-file reading.
#include "tensorflux/graph/graph_def_io.h"

#include <filesystem>
#include <fstream>

#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "graph_test_util.h"
#include "tensorflux/framework/node_def_util.h"

namespace tensorflux {
namespace {

using ::tensorflux::testing::InputOf;
using ::tensorflux::testing::NodeNames;
using ::tensorflux::testing::TextGraph;

// ---------------------------------------------------------------- tensor names

TEST(ParseTensorNameTest, ValidNames) {
  auto a = ParseTensorName("x");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->node, "x");
  EXPECT_EQ(a->index, 0);
  EXPECT_FALSE(a->IsControl());

  auto b = ParseTensorName("scope/x_1:12");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->node, "scope/x_1");
  EXPECT_EQ(b->index, 12);
  EXPECT_EQ(b->ToString(), "scope/x_1:12");

  auto c = ParseTensorName("^init");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->node, "init");
  EXPECT_TRUE(c->IsControl());
  EXPECT_EQ(c->ToString(), "^init");

  EXPECT_EQ(ParseTensorName("x")->ToString(), "x:0");
  EXPECT_TRUE(*ParseTensorName("x") == *ParseTensorName("x:0"));
}

TEST(ParseTensorNameTest, MalformedNames) {
  for (const char* bad : {"", "x:-1", "x:a", "x:", ":1", "^", "^x:0", "x:1a", "x:99999999999"}) {
    auto r = ParseTensorName(bad);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << "'" << bad << "'";
  }
}

// ---------------------------------------------------------------- import / export

constexpr char kRoundTrip[] = R"pb(
  node { name: "k" op: "TxGraphTestSink" input: "b" input: "^t" input: "^s" }
  node { name: "s" op: "TxGraphTestSource" attr { key: "value" value { i: 3 } } }
  node { name: "sp" op: "TxGraphTestSplit" input: "s" device: "/device:CPU:0" }
  node {
    name: "b"
    op: "TxGraphTestBinary"
    input: "sp:1"
    input: "t"
    attr { key: "T" value { type: DT_FLOAT } }
    attr { key: "_class" value { list { s: "loc:@sp" } } }
  }
  node { name: "t" op: "TxGraphTestSource" attr { key: "value" value { i: 7 } } }
  node {
    name: "n"
    op: "TxGraphTestN"
    input: "sp"
    input: "sp:1"
    input: "t"
    attr { key: "N" value { i: 3 } }
    attr { key: "T" value { type: DT_FLOAT } }
  }
  versions { producer: 27 min_consumer: 12 }
  library { function { signature { name: "f" } } }
)pb";

TEST(ImportGraphDefTest, RoundTrip) {
  const GraphDef in = TextGraph(kRoundTrip);
  auto g = GraphFromGraphDef(in);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->num_nodes(), 6);
  // 1 (sp) + 2 (b) + 1 + 2 control (k) + 3 (n)
  EXPECT_EQ((*g)->num_edges(), 9);
  EXPECT_EQ(NodeNames(**g), std::vector<std::string>({"k", "s", "sp", "b", "t", "n"}));
  EXPECT_EQ(InputOf((*g)->FindNode("b"), 0), "sp:1");
  EXPECT_EQ((*g)->FindNode("sp")->requested_device(), "/device:CPU:0");
  GraphDef out;
  (*g)->ToGraphDef(&out);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(in, out))
      << in.DebugString() << "\nvs\n" << out.DebugString();

  // And once more through the exported GraphDef.
  auto g2 = GraphFromGraphDef(out);
  ASSERT_TRUE(g2.ok()) << g2.status();
  GraphDef out2;
  (*g2)->ToGraphDef(&out2);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(in, out2));
}

TEST(ImportGraphDefTest, FillsDefaults) {
  auto g = GraphFromGraphDef(TextGraph(R"pb(node { name: "s" op: "TxGraphTestSource" })pb"));
  ASSERT_TRUE(g.ok()) << g.status();
  GraphDef out;
  (*g)->ToGraphDef(&out);
  EXPECT_EQ(out.node(0).attr().at("value").i(), 7);
}

// Imports `text`; expects `code` and every piece of `parts` in the message.
void ExpectImportError(const std::string& text, absl::StatusCode code,
                       const std::vector<std::string>& parts) {
  auto g = GraphFromGraphDef(TextGraph(text));
  ASSERT_FALSE(g.ok()) << text;
  EXPECT_EQ(g.status().code(), code) << g.status();
  for (const std::string& p : parts) {
    EXPECT_NE(g.status().message().find(p), std::string::npos)
        << "'" << p << "' not in: " << g.status().message();
  }
}

TEST(ImportGraphDefTest, UnknownOp) {
  ExpectImportError(R"pb(node { name: "n" op: "TxGraphTestUnknown" })pb",
                    absl::StatusCode::kNotFound,
                    {"Op type not registered 'TxGraphTestUnknown' in node 'n'"});
}

TEST(ImportGraphDefTest, MissingAttr) {
  ExpectImportError(R"pb(node { name: "s" op: "TxGraphTestSource" }
                         node { name: "b" op: "TxGraphTestBinary" input: "s" input: "s" })pb",
                    absl::StatusCode::kInvalidArgument, {"'b'", "'T'"});
}

TEST(ImportGraphDefTest, IllTypedAttr) {
  ExpectImportError(R"pb(node {
                           name: "s"
                           op: "TxGraphTestSource"
                           attr { key: "value" value { s: "seven" } }
                         })pb",
                    absl::StatusCode::kInvalidArgument, {"'s'", "value"});
  ExpectImportError(R"pb(node {
                           name: "n"
                           op: "TxGraphTestN"
                           attr { key: "N" value { i: 0 } }
                           attr { key: "T" value { type: DT_FLOAT } }
                         })pb",
                    absl::StatusCode::kInvalidArgument, {"'n'", "N"});
}

TEST(ImportGraphDefTest, MissingInputNode) {
  ExpectImportError(R"pb(node { name: "y" op: "TxGraphTestSink" input: "x" })pb",
                    absl::StatusCode::kInvalidArgument, {"Node 'y': Unknown input node 'x'"});
  ExpectImportError(R"pb(node { name: "s" op: "TxGraphTestSource" }
                         node { name: "y" op: "TxGraphTestSink" input: "s" input: "^x" })pb",
                    absl::StatusCode::kInvalidArgument, {"'y'", "'^x'"});
}

TEST(ImportGraphDefTest, BadOutputIndex) {
  ExpectImportError(R"pb(node { name: "x" op: "TxGraphTestSource" }
                         node { name: "y" op: "TxGraphTestSink" input: "x:7" })pb",
                    absl::StatusCode::kInvalidArgument, {"'y'", "7", "x"});
  ExpectImportError(R"pb(node { name: "x" op: "TxGraphTestSource" }
                         node { name: "y" op: "TxGraphTestSink" input: "x:-1" })pb",
                    absl::StatusCode::kInvalidArgument, {"'y'", "x:-1"});
}

TEST(ImportGraphDefTest, ControlInputBeforeDataInput) {
  ExpectImportError(R"pb(node { name: "x" op: "TxGraphTestSource" }
                         node { name: "c" op: "TxGraphTestNoOp" }
                         node { name: "y" op: "TxGraphTestSink" input: "^c" input: "x" })pb",
                    absl::StatusCode::kInvalidArgument, {"'y'", "Control dependencies"});
}

TEST(ImportGraphDefTest, WrongInputCount) {
  ExpectImportError(R"pb(node { name: "x" op: "TxGraphTestSource" }
                         node {
                           name: "b"
                           op: "TxGraphTestBinary"
                           input: "x"
                           attr { key: "T" value { type: DT_FLOAT } }
                         })pb",
                    absl::StatusCode::kInvalidArgument,
                    {"'b'", "TxGraphTestBinary", "expects 2 data inputs but has 1"});
  ExpectImportError(R"pb(node { name: "x" op: "TxGraphTestSource" }
                         node {
                           name: "n"
                           op: "TxGraphTestN"
                           input: "x"
                           input: "x"
                           input: "^x"
                           attr { key: "N" value { i: 3 } }
                           attr { key: "T" value { type: DT_FLOAT } }
                         })pb",
                    absl::StatusCode::kInvalidArgument,
                    {"'n'", "TxGraphTestN", "expects 3 data inputs but has 2"});
}

TEST(ImportGraphDefTest, EdgeTypeMismatch) {
  ExpectImportError(R"pb(node { name: "i" op: "TxGraphTestIntSource" }
                         node { name: "y" op: "TxGraphTestSink" input: "i" })pb",
                    absl::StatusCode::kInvalidArgument, {"'y'", "int32", "float"});
}

TEST(ImportGraphDefTest, DuplicateNodeName) {
  ExpectImportError(R"pb(node { name: "x" op: "TxGraphTestSource" }
                         node { name: "x" op: "TxGraphTestNoOp" })pb",
                    absl::StatusCode::kInvalidArgument, {"'x'", "Duplicate"});
}

TEST(ImportGraphDefTest, Cycle) {
  ExpectImportError(R"pb(node { name: "s" op: "TxGraphTestSource" }
                         node { name: "a" op: "TxGraphTestSplit" input: "b:1" }
                         node { name: "b" op: "TxGraphTestSplit" input: "a" }
                         node { name: "z" op: "TxGraphTestSink" input: "b" })pb",
                    absl::StatusCode::kInvalidArgument, {"cycle", "a -> b -> a", "3 nodes"});
  // A control edge closes a cycle too.
  ExpectImportError(R"pb(node { name: "a" op: "TxGraphTestNoOp" input: "^b" }
                         node { name: "b" op: "TxGraphTestNoOp" input: "^a" })pb",
                    absl::StatusCode::kInvalidArgument, {"a -> b -> a"});
}

TEST(ImportGraphDefTest, NonTopologicalOrder) {
  auto g = GraphFromGraphDef(TextGraph(R"pb(node { name: "y" op: "TxGraphTestSink" input: "x" }
                                            node { name: "x" op: "TxGraphTestSource" })pb"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(InputOf((*g)->FindNode("y"), 0), "x:0");
}

TEST(ImportGraphDefTest, FailedImportLeavesGraphUnchanged) {
  Graph g;
  ASSERT_TRUE(ImportGraphDef({}, TextGraph(R"pb(node { name: "x" op: "TxGraphTestSource" })pb"),
                             &g)
                  .ok());
  Status s = ImportGraphDef({}, TextGraph(R"pb(node { name: "y" op: "TxGraphTestSink" input: "x" }
                                            node { name: "z" op: "TxGraphTestSink" input: "q" })pb"),
                            &g);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(NodeNames(g), std::vector<std::string>({"x"}));
  EXPECT_EQ(g.num_edges(), 0);
  EXPECT_TRUE(g.FindNode("x")->out_edges().empty());
}

TEST(ImportGraphDefTest, PrefixAndExistingInputs) {
  Graph g;
  ASSERT_TRUE(ImportGraphDef({}, TextGraph(R"pb(node { name: "x" op: "TxGraphTestSource" })pb"),
                             &g)
                  .ok());
  ImportGraphDefOptions opts;
  opts.prefix = "imp";
  // "x" names the imported imp/x (imported names win); "x:0" of the existing graph is not reachable
  // by that name, but "s" only exists outside.
  Status s = ImportGraphDef(opts, TextGraph(R"pb(
    node { name: "x" op: "TxGraphTestSource" }
    node {
      name: "b"
      op: "TxGraphTestBinary"
      input: "x"
      input: "s"
      attr { key: "T" value { type: DT_FLOAT } }
    })pb"), &g);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);  // no "s" anywhere
  ASSERT_TRUE(ImportGraphDef({}, TextGraph(R"pb(node { name: "s" op: "TxGraphTestSource" })pb"),
                             &g)
                  .ok());
  s = ImportGraphDef(opts, TextGraph(R"pb(
    node { name: "x" op: "TxGraphTestSource" }
    node {
      name: "b"
      op: "TxGraphTestBinary"
      input: "x"
      input: "s"
      input: "^x"
      attr { key: "T" value { type: DT_FLOAT } }
    })pb"), &g);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(NodeNames(g), std::vector<std::string>({"x", "s", "imp/x", "imp/b"}));
  Node* b = g.FindNode("imp/b");
  EXPECT_EQ(InputOf(b, 0), "imp/x:0");
  EXPECT_EQ(InputOf(b, 1), "s:0");
  EXPECT_EQ(b->in_edges().size(), 3u);

  opts.allow_existing_inputs = false;
  opts.prefix = "imp2";
  s = ImportGraphDef(opts, TextGraph(R"pb(node { name: "y" op: "TxGraphTestSink" input: "s" })pb"),
                     &g);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.num_nodes(), 4);
}

// The legacy Placeholder rule, through the real Placeholder op when it is registered.
TEST(ImportGraphDefTest, LegacyPlaceholderScalarShape) {
  if (!OpRegistry::Global()->LookUp("Placeholder").ok()) {
    GTEST_SKIP() << "Placeholder is not registered in this build";
  }
  auto shape_of = [](const std::string& versions) -> TensorShapeProto {
    auto g = GraphFromGraphDef(TextGraph(R"pb(
      node {
        name: "p"
        op: "Placeholder"
        attr { key: "dtype" value { type: DT_FLOAT } }
        attr { key: "shape" value { shape {} } }
      })pb" + versions));
    EXPECT_TRUE(g.ok()) << g.status();
    if (!g.ok()) return TensorShapeProto();
    return (*g)->FindNode("p")->attr("shape")->shape();
  };
  EXPECT_TRUE(shape_of("versions { producer: 21 }").unknown_rank());
  EXPECT_TRUE(shape_of("").unknown_rank());  // no versions: producer 0
  const TensorShapeProto scalar = shape_of("versions { producer: 22 }");
  EXPECT_FALSE(scalar.unknown_rank());
  EXPECT_EQ(scalar.dim_size(), 0);
  // A shape with dims is kept as written.
  auto g = GraphFromGraphDef(TextGraph(R"pb(
    node {
      name: "p"
      op: "Placeholder"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: 2 } } } }
    }
    versions { producer: 9 })pb"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindNode("p")->attr("shape")->shape().dim_size(), 1);
}

// ---------------------------------------------------------------- files

class ReadGraphDefFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("tx_graph_io_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string p = (dir_ / name).string();
    std::ofstream f(p, std::ios::binary);
    f << bytes;
    return p;
  }
  std::filesystem::path dir_;
};

constexpr char kSmallGraph[] = R"pb(
  node { name: "s" op: "TxGraphTestSource" }
  node { name: "y" op: "TxGraphTestSink" input: "s" }
  versions { producer: 27 }
)pb";

TEST_F(ReadGraphDefFileTest, TextAndBinary) {
  const GraphDef want = TextGraph(kSmallGraph);
  std::string binary;
  ASSERT_TRUE(want.SerializeToString(&binary));
  for (const std::string& path : {Write("g.pbtxt", kSmallGraph), Write("g.txt", kSmallGraph),
                                  Write("g.pb", binary), Write("text_named.pb", kSmallGraph),
                                  Write("noext", binary)}) {
    auto got = ReadGraphDefFile(path);
    ASSERT_TRUE(got.ok()) << path << ": " << got.status();
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(want, *got)) << path;
  }
}

TEST_F(ReadGraphDefFileTest, Errors) {
  auto missing = ReadGraphDefFile((dir_ / "nope.pb").string());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope.pb"), std::string::npos);

  auto dir = ReadGraphDefFile(dir_.string());
  EXPECT_EQ(dir.status().code(), absl::StatusCode::kInvalidArgument);

  auto garbage = ReadGraphDefFile(Write("garbage.pb", "this is not a graph {{{"));
  ASSERT_FALSE(garbage.ok());
  EXPECT_TRUE(garbage.status().code() == absl::StatusCode::kDataLoss ||
              garbage.status().code() == absl::StatusCode::kInvalidArgument)
      << garbage.status();
  EXPECT_NE(garbage.status().message().find("garbage.pb"), std::string::npos);

  auto bad_text = ReadGraphDefFile(Write("bad.pbtxt", "node { name: \"s\"\n  op: 3 }\n"));
  EXPECT_EQ(bad_text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad_text.status().message().find("line 2"), std::string::npos) << bad_text.status();

  // A truncated binary GraphDef.
  std::string binary;
  ASSERT_TRUE(TextGraph(kSmallGraph).SerializeToString(&binary));
  auto cut = ReadGraphDefFile(Write("cut.pb", binary.substr(0, binary.size() - 5)));
  EXPECT_FALSE(cut.ok());
}

}  // namespace
}  // namespace tensorflux
