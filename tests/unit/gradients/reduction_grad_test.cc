// Numeric gradient checks of the reductions (gradients/reduction_grad.cc): Sum and Mean over
// single, multiple, negative and empty axes with and without keep_dims, axes fed at run time
// (the dynamic keep-dims shape path), and Max/Min (which need the Equal op; skipped until it is
// registered). Random inputs make ties in Max/Min vanishingly unlikely.
#include <cstdint>
#include <vector>

#include "gradient_checker.h"

namespace tensorflux::gradient_check {
namespace {

Tensor Axes(std::vector<int32_t> a) {
  return Tensor::FromVector<int32_t>(absl::Span<const int32_t>(a),
                                     TensorShape({static_cast<int64_t>(a.size())}));
}

GradCheckRow Row(const char* op, const char* label, TensorShape shape, Tensor axes,
                 bool keep_dims = false) {
  GradCheckRow r;
  r.op = op;
  r.label = label;
  r.shapes = {shape};
  r.consts = {{1, axes}};
  r.attrs = {{"keep_dims", MakeAttr(keep_dims)}};
  return r;
}

// Sum over axes computed in-graph (Range over Rank), so the gradient cannot see constant axes.
GradCheckRow DynamicAxesRow(const char* op) {
  GradCheckRow r;
  r.op = op;
  r.label = "dynamic_axes";
  r.shapes = {TensorShape({2, 3})};
  r.build = [op](Graph* g, const std::vector<GradOutput>& xs)
      -> StatusOr<std::vector<GradOutput>> {
    TX_ASSIGN_OR_RETURN(Node * shape, AddNodeFromInputs(g, "", "Shape", {xs[0]}));
    TX_ASSIGN_OR_RETURN(Node * size, AddNodeFromInputs(g, "", "Size", {GradOutput{shape, 0}}));
    Tensor one = Tensor::Scalar<int32_t>(1);
    auto konst = [&](const Tensor& t, const char* name) -> StatusOr<Node*> {
      NodeDef def;
      def.set_name(name);
      def.set_op("Const");
      AddNodeAttr("value", t, &def);
      AddNodeAttr("dtype", t.dtype(), &def);
      return g->AddNode(def);
    };
    TX_ASSIGN_OR_RETURN(Node * start, konst(one, "start"));
    TX_ASSIGN_OR_RETURN(Node * delta, konst(one, "delta"));
    // axes = range(1, rank): reduces every dim but the first.
    TX_ASSIGN_OR_RETURN(Node * axes, AddNodeFromInputs(g, "", "Range",
                                                       {GradOutput{start, 0}, GradOutput{size, 0},
                                                        GradOutput{delta, 0}}));
    TX_ASSIGN_OR_RETURN(Node * y, AddNodeFromInputs(g, "", op, {xs[0], GradOutput{axes, 0}}));
    return std::vector<GradOutput>{GradOutput{y, 0}};
  };
  return r;
}

const std::vector<GradCheckRow>& ReductionRows() {
  static const auto* rows = new std::vector<GradCheckRow>{
      Row("Sum", "axis1", TensorShape({2, 3}), Axes({1})),
      Row("Sum", "axes_0_2_keep", TensorShape({2, 3, 4}), Axes({0, 2}), true),
      Row("Sum", "neg_axis", TensorShape({2, 3, 4}), Axes({-2})),
      Row("Sum", "all", TensorShape({3, 4}), Axes({0, 1})),
      Row("Sum", "no_axes", TensorShape({3, 2}), Axes({})),
      Row("Sum", "scalar_axis", TensorShape({3, 2}), Tensor::Scalar<int32_t>(0)),
      Row("Mean", "axis0", TensorShape({3, 4}), Axes({0})),
      Row("Mean", "axes_1_2_keep", TensorShape({2, 3, 4}), Axes({1, -1}), true),
      Row("Mean", "all", TensorShape({2, 5}), Axes({0, 1})),
      Row("Max", "axis1", TensorShape({3, 4}), Axes({1})),
      Row("Max", "axes_0_2", TensorShape({2, 3, 4}), Axes({0, 2})),
      Row("Min", "axis0_keep", TensorShape({3, 4}), Axes({0}), true),
      DynamicAxesRow("Sum"),
      DynamicAxesRow("Mean"),
  };
  return *rows;
}
TX_GRAD_CHECK_ROWS(Reduction, ReductionRows());

}  // namespace
}  // namespace tensorflux::gradient_check
