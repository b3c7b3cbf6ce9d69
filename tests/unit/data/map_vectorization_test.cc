// Map vectorization: CheckMapVectorizable's rules on hand-built FunctionDefs, and BatchDatasetV2
// over MapDataset calling the function once per batch (calls counted by a wrapper around the
// session's FunctionRuntime) with the values of the per-element map, bit for bit.
#include "tensorflux/data/map_vectorization.h"

#include <cstring>
#include <mutex>

#include "gtest/gtest.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/runtime/function_runtime.h"
#include "../kernels/kernel_test_util.h"
#include "../runtime/function_def_test_util.h"
#include "dataset_test_util.h"

namespace tensorflux {
namespace {

// ---------------------------------------------------------------- FunctionDefs

using test::AddFunctionArg;
using test::AddFunctionNode;

NodeDef* AddConst(FunctionDef* f, const std::string& name, const Tensor& value) {
  NodeDef* c = AddFunctionNode(f, name, "Const", {});
  AddNodeAttr("dtype", value.dtype(), c);
  AddNodeAttr("value", value, c);
  return c;
}

// normalize(x: uint8) = Cast(x, float) / 255, with the nodes listed out of order (the division
// first) as a FunctionDef may list them.
FunctionDef Normalize() {
  FunctionDef f;
  f.mutable_signature()->set_name("normalize");
  AddFunctionArg(f.mutable_signature()->mutable_input_arg(), "x", DT_UINT8);
  AddFunctionArg(f.mutable_signature()->mutable_output_arg(), "y", DT_FLOAT);
  AddNodeAttr("T", DT_FLOAT, AddFunctionNode(&f, "div", "RealDiv", {"cast:y:0", "c:output:0"}));
  NodeDef* cast = AddFunctionNode(&f, "cast", "Cast", {"x"});
  AddNodeAttr("SrcT", DT_UINT8, cast);
  AddNodeAttr("DstT", DT_FLOAT, cast);
  AddConst(&f, "c", Tensor::Scalar(255.0f));
  (*f.mutable_ret())["y"] = "div:z:0";
  return f;
}

// squash(x: float) = Tanh(x): not exactly rounded, so never vectorized.
FunctionDef Squash() {
  FunctionDef f;
  f.mutable_signature()->set_name("squash");
  AddFunctionArg(f.mutable_signature()->mutable_input_arg(), "x", DT_FLOAT);
  AddFunctionArg(f.mutable_signature()->mutable_output_arg(), "y", DT_FLOAT);
  AddNodeAttr("T", DT_FLOAT, AddFunctionNode(&f, "t", "Tanh", {"x"}));
  (*f.mutable_ret())["y"] = "t:y:0";
  return f;
}

std::string WhyNot(const FunctionDef& f, std::vector<PartialTensorShape> shapes,
                   std::vector<Tensor> captured = {}) {
  Status s = CheckMapVectorizable(f, shapes, captured);
  if (s.ok()) return "ok";
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  return std::string(s.message());
}

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(MapVectorizationTest, RulesOfCheckMapVectorizable) {
  const PartialTensorShape image({28, 28});
  EXPECT_EQ(WhyNot(Normalize(), {image}), "ok");
  EXPECT_EQ(WhyNot(Normalize(), {PartialTensorShape::Scalar()}), "ok");
  EXPECT_TRUE(Has(WhyNot(Squash(), {image}), "node t runs Tanh"));
  EXPECT_TRUE(Has(WhyNot(Normalize(), {PartialTensorShape({28, -1})}), "not fully defined"));
  EXPECT_TRUE(Has(WhyNot(Normalize(), {PartialTensorShape()}), "not fully defined"));
  // Wrong arg count (a second component the function does not take).
  EXPECT_TRUE(Has(WhyNot(Normalize(), {image, image}), "args"));

  // A constant of rank 3 against a rank-2 element; rank 2 is fine.
  FunctionDef big = Normalize();
  AddConst(&big, "c", Tensor(DT_FLOAT, TensorShape({1, 1, 1})));
  big.mutable_node_def()->erase(big.mutable_node_def()->end() - 2);  // the scalar "c"
  EXPECT_TRUE(Has(WhyNot(big, {image}), "constant c has a rank above the element's 2"));
  EXPECT_EQ(WhyNot(big, {PartialTensorShape({2, 3, 4})}), "ok");

  // A control input.
  FunctionDef ctrl = Normalize();
  ctrl.mutable_node_def(0)->add_input("^cast");
  EXPECT_TRUE(Has(WhyNot(ctrl, {image}), "node div has a control input"));

  // An output made of constants only.
  FunctionDef konst = Normalize();
  AddFunctionArg(konst.mutable_signature()->mutable_output_arg(), "k", DT_FLOAT);
  (*konst.mutable_ret())["k"] = "c:output:0";
  EXPECT_TRUE(Has(WhyNot(konst, {image}), "output k does not depend on the element"));

  // Two components: same shapes are fine, different ones are not.
  FunctionDef two;
  two.mutable_signature()->set_name("two");
  AddFunctionArg(two.mutable_signature()->mutable_input_arg(), "a", DT_FLOAT);
  AddFunctionArg(two.mutable_signature()->mutable_input_arg(), "b", DT_FLOAT);
  AddFunctionArg(two.mutable_signature()->mutable_input_arg(), "scale", DT_FLOAT);
  AddFunctionArg(two.mutable_signature()->mutable_output_arg(), "y", DT_FLOAT);
  AddNodeAttr("T", DT_FLOAT, AddFunctionNode(&two, "sum", "AddV2", {"a", "b"}));
  AddNodeAttr("T", DT_FLOAT, AddFunctionNode(&two, "mul", "Mul", {"sum:z:0", "scale"}));
  (*two.mutable_ret())["y"] = "mul:z:0";
  const Tensor row(DT_FLOAT, TensorShape({3}));
  EXPECT_EQ(WhyNot(two, {PartialTensorShape({3}), PartialTensorShape({3})}, {row}), "ok");
  EXPECT_TRUE(Has(WhyNot(two, {PartialTensorShape({3}), PartialTensorShape({})}, {row}),
                  "different shapes"));
  // A captured tensor of a rank above the element's.
  EXPECT_TRUE(Has(WhyNot(two, {PartialTensorShape({}), PartialTensorShape({})}, {row}),
                  "captured argument scale"));
  // Polymorphic signatures are not inspected.
  FunctionDef poly = Normalize();
  poly.mutable_signature()->add_attr()->set_name("T");
  EXPECT_TRUE(Has(WhyNot(poly, {image}), "attrs"));
}

// ---------------------------------------------------------------- pipelines

// The session's runtime, with Run calls counted and the shape of each call's first arg kept.
class CountingRuntime : public FunctionLibraryRuntime {
 public:
  explicit CountingRuntime(const FunctionDefLibrary& lib) : rt_(&device_) { rt_.AddLibrary(lib); }
  StatusOr<Handle> Instantiate(const std::string& name) override { return rt_.Instantiate(name); }
  const DataTypeVector& ArgTypes(Handle h) const override { return rt_.ArgTypes(h); }
  const DataTypeVector& RetTypes(Handle h) const override { return rt_.RetTypes(h); }
  Status Run(Handle h, std::vector<Tensor> args, std::vector<Tensor>* rets) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      arg_shapes.push_back(args[0].shape().DebugString());
    }
    return rt_.Run(h, std::move(args), rets);
  }
  Status GetFunctionDef(const std::string& name, FunctionDef* fdef) const override {
    return rt_.GetFunctionDef(name, fdef);
  }
  std::vector<std::string> arg_shapes;

 private:
  test::TestCpuDevice device_;
  FunctionRuntime rt_;
  std::mutex mu_;
};

using Shapes = std::vector<PartialTensorShape>;
using Types = std::vector<DataType>;

StatusOr<Tensor> Transform(const std::string& op, const Tensor& input, std::vector<Tensor> args,
                           const Types& types, const Shapes& shapes,
                           const std::string& fn = "") {
  test::KernelRunner r(op);
  r.Input(input);
  for (Tensor& a : args) r.Input(std::move(a));
  r.Attr("output_types", absl::Span<const DataType>(types));
  r.Attr("output_shapes", absl::Span<const PartialTensorShape>(shapes));
  if (!fn.empty()) {
    (*r.mutable_def()->mutable_attr())["f"].mutable_func()->set_name(fn);
    r.Attr("Targuments", absl::Span<const DataType>());
  }
  return r.RunOne();
}

// Component 0 of every element of `handle`, through an iterator whose context has `rt` as its
// function runtime and map_vectorization = `vectorize`.
StatusOr<std::vector<Tensor>> DrainBatches(const Tensor& handle, CountingRuntime* rt,
                                           bool vectorize) {
  TX_ASSIGN_OR_RETURN(DatasetPtr d, GetDatasetFromVariantTensor(handle));
  IteratorContext ctx;
  ctx.function_library = std::shared_ptr<FunctionLibraryRuntime>(rt, [](auto*) {});
  ctx.options.map_vectorization = vectorize;
  TX_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> it, d->MakeIterator(&ctx));
  TX_ASSIGN_OR_RETURN(auto elements, test::DrainIterator(it.get(), &ctx));
  std::vector<Tensor> out;
  for (auto& e : elements) out.push_back(std::move(e[0]));
  return out;
}

// Pixels 0..19 * 13 mod 256 as 10 uint8 [2] elements, mapped by `fn`, batched by 4.
StatusOr<Tensor> Pipeline(const std::string& fn, DataType in, DataType out, bool drop,
                          bool padded = false) {
  std::vector<double> pixels;
  for (int i = 0; i < 20; ++i) pixels.push_back((i * 13) % 256);
  const Shapes row = {PartialTensorShape({2})};
  test::KernelRunner slices("TensorSliceDataset");
  slices.Input(test::FromDoubles(in, TensorShape({10, 2}), pixels))
      .Attr("output_shapes", absl::Span<const PartialTensorShape>(row));
  TX_ASSIGN_OR_RETURN(Tensor src, slices.RunOne());
  TX_ASSIGN_OR_RETURN(Tensor mapped, Transform("MapDataset", src, {}, {out}, row, fn));
  const Shapes batched = {PartialTensorShape({drop ? 4 : -1, 2})};
  if (padded) {
    return test::KernelRunner("PaddedBatchDatasetV2")
        .Input(mapped)
        .Input(Tensor::Scalar<int64_t>(4))
        .Input(test::FromDoubles(DT_INT64, TensorShape({1}), {2}))
        .Input(Tensor::Scalar(0.0f))
        .Input(Tensor::Scalar(drop))
        .Attr("output_shapes", absl::Span<const PartialTensorShape>(batched))
        .RunOne();
  }
  return Transform("BatchDatasetV2", mapped, {Tensor::Scalar<int64_t>(4), Tensor::Scalar(drop)},
                   {out}, batched);
}

FunctionDefLibrary Library() {
  FunctionDefLibrary lib;
  *lib.add_function() = Normalize();
  *lib.add_function() = Squash();
  return lib;
}

void ExpectBitIdentical(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].shape(), b[i].shape()) << i;
    EXPECT_EQ(std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].TotalBytes()), 0) << i;
  }
}

TEST(MapVectorizationTest, BatchRunsAnElementwiseMapOncePerBatch) {
  for (bool drop : {false, true}) {
    auto h = Pipeline("normalize", DT_UINT8, DT_FLOAT, drop);
    ASSERT_TRUE(h.ok()) << h.status();
    CountingRuntime on(Library()), off(Library());
    auto batched = DrainBatches(*h, &on, true);
    auto each = DrainBatches(*h, &off, false);
    ASSERT_TRUE(batched.ok() && each.ok()) << batched.status() << each.status();
    std::vector<std::string> want = {"[4,2]", "[4,2]"};
    if (!drop) want.push_back("[2,2]");
    EXPECT_EQ(on.arg_shapes, want);
    EXPECT_EQ(off.arg_shapes.size(), 10u);  // the per-element map also maps the dropped two
    ExpectBitIdentical(*batched, *each);
    // Element k of the flattened batches is float((k * 13) % 256) / 255.
    std::vector<double> got;
    for (const Tensor& t : *batched)
      for (double v : test::ToDoubles(t)) got.push_back(v);
    ASSERT_EQ(got.size(), drop ? 16u : 20u);
    for (size_t k = 0; k < got.size(); ++k)
      EXPECT_EQ(got[k], static_cast<double>(static_cast<float>((k * 13) % 256) / 255.0f)) << k;
  }
}

TEST(MapVectorizationTest, OtherMapsAndPaddedBatchesRunPerElement) {
  // Tanh is not exactly rounded: one call per element even with the option on.
  auto tanh = Pipeline("squash", DT_FLOAT, DT_FLOAT, false);
  ASSERT_TRUE(tanh.ok()) << tanh.status();
  CountingRuntime rt(Library());
  ASSERT_TRUE(DrainBatches(*tanh, &rt, true).ok());
  EXPECT_EQ(rt.arg_shapes.size(), 10u);
  EXPECT_EQ(rt.arg_shapes[0], "[2]");
  // A padded batch never runs its map on padding.
  auto padded = Pipeline("normalize", DT_UINT8, DT_FLOAT, false, true);
  ASSERT_TRUE(padded.ok()) << padded.status();
  CountingRuntime rt2(Library());
  auto padded_out = DrainBatches(*padded, &rt2, true);
  ASSERT_TRUE(padded_out.ok()) << padded_out.status();
  EXPECT_EQ(rt2.arg_shapes.size(), 10u);
}

TEST(MapVectorizationTest, OptimizeDatasetV2SetsTheOptionBelowIt) {
  auto h = Pipeline("normalize", DT_UINT8, DT_FLOAT, false);
  ASSERT_TRUE(h.ok()) << h.status();
  const Types types = {DT_FLOAT};
  const Shapes shapes = {PartialTensorShape({-1, 2})};
  auto strings = [](std::vector<std::string> v) {
    Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(v.size())}));
    for (size_t i = 0; i < v.size(); ++i) t.flat<std::string>()[i] = v[i];
    return t;
  };
  // Disabled below an OptimizeDatasetV2, though the iterator's context has it on; and on when
  // it is only a default.
  for (bool disable : {true, false}) {
    std::vector<std::string> disabled;
    if (disable) disabled.push_back("map_vectorization");
    auto opt = Transform("OptimizeDatasetV2", *h,
                         {strings({}), strings(disabled),
                          strings({"map_vectorization", "some_rewrite_we_lack"})},
                         types, shapes);
    ASSERT_TRUE(opt.ok()) << opt.status();
    CountingRuntime rt(Library());
    auto out = DrainBatches(*opt, &rt, true);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->size(), 3u);
    EXPECT_EQ(rt.arg_shapes.size(), disable ? 10u : 3u);
  }
  // The lists must be string vectors.
  auto bad = Transform("OptimizeDatasetV2", *h,
                       {Tensor::Scalar(std::string("map_vectorization")), strings({}), strings({})},
                       types, shapes);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Has(std::string(bad.status().message()), "optimizations_enabled")) << bad.status();
}

}  // namespace
}  // namespace tensorflux
