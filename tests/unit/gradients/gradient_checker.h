// Numeric gradient checking (the ggml test-backend-ops "grad" mode / TF's gradient_checker).
//
// For a function ys = f(xs) built into a Graph, the checker computes the full Jacobian twice, in
// float64:
//   - symbolically: AddSymbolicGradients(ys, xs, grad_ys) with grad_ys fed as placeholders; one
//     Session::Run per element of ys with grad_ys one-hot at that element gives one row;
//   - numerically: central differences (f(x + h e_m) - f(x - h e_m)) / 2h, two runs per element of
//     xs, h = delta * max(1, |x_m|);
// and reports the largest |symbolic - numeric| / max(1, |numeric|) over all entries. A null
// symbolic gradient (ys do not depend on x) counts as zeros. A symbolic gradient whose shape is not
// x's shape is an error.
//
// ADDING ROWS (every helper that adds a differentiable op):
//   Each op family keeps its rows in tests/unit/gradients/<family>_grad_test.cc:
//
//     #include "gradient_checker.h"
//     namespace tensorflux::gradient_check {
//     const std::vector<GradCheckRow>& NnRows() {
//       static const auto* rows = new std::vector<GradCheckRow>{
//           {.op = "Relu", .shapes = {{2, 3}}, .ranges = {{0.1, 2}}},  // away from the kink at 0
//           {.op = "BiasAdd", .shapes = {{2, 3}, {3}}},
//           {.op = "Sum", .label = "axis1", .shapes = {{2, 3}},
//            .consts = {{1, Tensor::Scalar<int32_t>(1)}}},               // input 1: axis, constant
//       };
//       return *rows;
//     }
//     TX_GRAD_CHECK_ROWS(Nn, NnRows());   // one gtest case per row: GradCheck/Nn.Check/Relu, ...
//     }
//
//   Fields: `op` builds one node of that op whose data inputs are, in order, the differentiated
//   float64 placeholders (one per entry of `shapes`) with the `consts` spliced in at their input
//   positions; `attrs` are set on it (type attrs like T are inferred). `build` replaces that with
//   your own graph (e.g. for ops taking a list, or composites); it receives the placeholders.
//   Ranges keep inputs away from kinks and poles (Relu at 0, Log at 0, Maximum ties...).
//   A row that needs an op not registered yet is skipped (GTEST_SKIP) rather than failed.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/gradients/gradients.h"
#include "tensorflux/graph/graph.h"

namespace tensorflux::gradient_check {

// Builds ys from the float64 placeholders xs in `g` (use AddNodeFromInputs from gradients.h).
using BuildFn = std::function<StatusOr<std::vector<GradOutput>>(
    Graph* g, const std::vector<GradOutput>& xs)>;

struct GradientError {
  double max_error = 0;     // max |sym - num| / max(1, |num|)
  std::string worst;        // "d y0[3] / d x1[2]: symbolic 1.5, numeric 1.2"
  int64_t entries = 0;      // Jacobian entries compared
};

// Compares the symbolic and numeric Jacobians of build(xs) at x_values (DT_DOUBLE tensors).
// Errors: the graph building, AddSymbolicGradients or Session errors; INVALID_ARGUMENT for a
// non-double x value or a gradient of the wrong shape.
StatusOr<GradientError> ComputeGradientError(const std::vector<Tensor>& x_values,
                                             const BuildFn& build, double delta = 1e-5);

struct GradCheckRow {
  std::string op;
  std::string label;                                  // distinguishes rows of one op
  std::vector<TensorShape> shapes;                    // differentiated inputs (float64)
  std::vector<std::pair<double, double>> ranges;      // per input [lo, hi); default [-2, 2)
  std::vector<std::pair<int, Tensor>> consts;         // (input position, constant value)
  GradAttrs attrs;
  BuildFn build;                                      // replaces the single `op` node
  std::vector<int> outputs;                           // outputs checked; default: all float ones
  double tolerance = 1e-6;
  uint64_t seed = 0;                                  // 0: derived from op and label
};

// "Op" or "Op_label", with characters gtest rejects replaced by '_'.
std::string RowName(const GradCheckRow& row);
// Draws the inputs, builds the graph and checks the gradient error against row.tolerance.
// Skips (GTEST_SKIP via the returned flag) when an op it needs is not registered.
struct RowResult {
  bool skipped = false;
  std::string skip_reason;
  Status status;           // building or running failed
  GradientError error;
};
RowResult RunGradCheckRow(const GradCheckRow& row);
// gtest body: fails on a status error or an error above tolerance; skips unregistered ops.
void ExpectGradCheckRow(const GradCheckRow& row);

inline void PrintTo(const GradCheckRow& row, std::ostream* os) { *os << RowName(row); }

}  // namespace tensorflux::gradient_check

// Instantiates one parameterized gtest case per row: GradCheck/<Family>.Check/<RowName>.
#define TX_GRAD_CHECK_ROWS(Family, rows_expr)                                              \
  class Family##GradCheck                                                                  \
      : public ::testing::TestWithParam<::tensorflux::gradient_check::GradCheckRow> {};    \
  TEST_P(Family##GradCheck, Check) {                                                       \
    ::tensorflux::gradient_check::ExpectGradCheckRow(GetParam());                          \
  }                                                                                        \
  INSTANTIATE_TEST_SUITE_P(                                                                \
      GradCheck, Family##GradCheck, ::testing::ValuesIn(rows_expr),                        \
      [](const ::testing::TestParamInfo<::tensorflux::gradient_check::GradCheckRow>& info) { \
        return ::tensorflux::gradient_check::RowName(info.param);                          \
      })
