#include "gradient_checker.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux::gradient_check {
namespace {

Tensor Zeros(const TensorShape& shape) {
  Tensor t(DT_DOUBLE, shape);
  std::fill_n(t.data<double>(), t.NumElements(), 0.0);
  return t;
}

}  // namespace

StatusOr<GradientError> ComputeGradientError(const std::vector<Tensor>& x_values,
                                             const BuildFn& build, double delta) {
  Graph g;
  std::vector<GradOutput> xs;
  for (size_t i = 0; i < x_values.size(); ++i) {
    if (x_values[i].dtype() != DT_DOUBLE)
      return errors::InvalidArgument("ComputeGradientError: x", i, " must be double, got ",
                                     DataTypeString(x_values[i].dtype()));
    NodeDef def;
    def.set_name(absl::StrCat("x", i));
    def.set_op("Placeholder");
    AddNodeAttr("dtype", DT_DOUBLE, &def);
    AddNodeAttr("shape", PartialTensorShape(x_values[i].shape()), &def);
    TX_ASSIGN_OR_RETURN(Node * n, g.AddNode(std::move(def)));
    xs.push_back({n, 0});
  }
  TX_ASSIGN_OR_RETURN(std::vector<GradOutput> ys, build(&g, xs));
  if (ys.empty()) return errors::InvalidArgument("ComputeGradientError: build returned no ys");
  for (const GradOutput& y : ys) {
    if (!y.valid()) return errors::InvalidArgument("ComputeGradientError: a null y");
    if (y.dtype() != DT_DOUBLE)
      return errors::InvalidArgument("ComputeGradientError: y ", y.name(), " is ",
                                     DataTypeString(y.dtype()), ", not double");
  }
  std::vector<GradOutput> gys;
  for (size_t k = 0; k < ys.size(); ++k) {
    NodeDef def;
    def.set_name(absl::StrCat("grad_y", k));
    def.set_op("Placeholder");
    AddNodeAttr("dtype", DT_DOUBLE, &def);
    TX_ASSIGN_OR_RETURN(Node * n, g.AddNode(std::move(def)));
    gys.push_back({n, 0});
  }
  std::vector<GradOutput> gxs;
  TX_RETURN_IF_ERROR(AddSymbolicGradients(&g, ys, xs, gys, &gxs));

  GraphDef gdef;
  g.ToGraphDef(&gdef);
  TX_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(SessionOptions()));
  TX_RETURN_IF_ERROR(session->Create(gdef));

  std::vector<std::string> y_names;
  for (const GradOutput& y : ys) y_names.push_back(y.name());
  auto feeds_for = [&](const std::vector<Tensor>& xv) {
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (size_t i = 0; i < xv.size(); ++i) feeds.emplace_back(xs[i].name(), xv[i]);
    return feeds;
  };
  auto run_ys = [&](const std::vector<Tensor>& xv, std::vector<Tensor>* out) {
    return session->Run(feeds_for(xv), y_names, {}, out);
  };

  std::vector<Tensor> y0;
  TX_RETURN_IF_ERROR(run_ys(x_values, &y0));
  for (size_t k = 0; k < ys.size(); ++k) {
    if (y0[k].dtype() != DT_DOUBLE)
      return errors::InvalidArgument("y ", ys[k].name(), " evaluated to ",
                                     DataTypeString(y0[k].dtype()));
  }

  // Jacobian blocks jac[k][i]: rows = elements of y_k, cols = elements of x_i.
  const size_t K = ys.size(), I = xs.size();
  auto make_blocks = [&] {
    std::vector<std::vector<std::vector<double>>> b(K, std::vector<std::vector<double>>(I));
    for (size_t k = 0; k < K; ++k)
      for (size_t i = 0; i < I; ++i)
        b[k][i].assign(y0[k].NumElements() * x_values[i].NumElements(), 0.0);
    return b;
  };
  auto sym = make_blocks(), num = make_blocks();

  // Symbolic: one run per y element, grad_ys one-hot.
  std::vector<std::string> gx_names;
  std::vector<size_t> gx_index;
  for (size_t i = 0; i < I; ++i) {
    if (!gxs[i].valid()) continue;
    gx_names.push_back(gxs[i].name());
    gx_index.push_back(i);
  }
  if (!gx_names.empty()) {
    for (size_t k = 0; k < K; ++k) {
      for (int64_t j = 0; j < y0[k].NumElements(); ++j) {
        auto feeds = feeds_for(x_values);
        for (size_t kk = 0; kk < K; ++kk) {
          Tensor seed = Zeros(y0[kk].shape());
          if (kk == k) seed.data<double>()[j] = 1.0;
          feeds.emplace_back(gys[kk].name(), seed);
        }
        std::vector<Tensor> out;
        TX_RETURN_IF_ERROR(session->Run(feeds, gx_names, {}, &out));
        for (size_t a = 0; a < gx_names.size(); ++a) {
          const size_t i = gx_index[a];
          if (out[a].dtype() != DT_DOUBLE || out[a].shape() != x_values[i].shape())
            return errors::InvalidArgument(
                "gradient ", gx_names[a], " of x", i, " has dtype ", DataTypeString(out[a].dtype()),
                " shape ", out[a].shape().DebugString(), ", expected double ",
                x_values[i].shape().DebugString());
          const int64_t n = x_values[i].NumElements();
          for (int64_t m = 0; m < n; ++m) sym[k][i][j * n + m] = out[a].data<double>()[m];
        }
      }
    }
  }

  // Numeric: central differences.
  for (size_t i = 0; i < I; ++i) {
    const int64_t n = x_values[i].NumElements();
    for (int64_t m = 0; m < n; ++m) {
      std::vector<Tensor> xv = x_values;
      const double x = x_values[i].data<double>()[m];
      const double h = delta * std::max(1.0, std::fabs(x));
      std::vector<Tensor> plus, minus;
      xv[i] = x_values[i].DeepCopy();
      xv[i].data<double>()[m] = x + h;
      TX_RETURN_IF_ERROR(run_ys(xv, &plus));
      xv[i] = x_values[i].DeepCopy();
      xv[i].data<double>()[m] = x - h;
      TX_RETURN_IF_ERROR(run_ys(xv, &minus));
      for (size_t k = 0; k < K; ++k) {
        for (int64_t j = 0; j < y0[k].NumElements(); ++j) {
          num[k][i][j * n + m] =
              (plus[k].data<double>()[j] - minus[k].data<double>()[j]) / (2 * h);
        }
      }
    }
  }

  GradientError result;
  for (size_t k = 0; k < K; ++k) {
    for (size_t i = 0; i < I; ++i) {
      const int64_t n = x_values[i].NumElements();
      for (size_t e = 0; e < sym[k][i].size(); ++e) {
        const double s = sym[k][i][e], nu = num[k][i][e];
        double err = std::fabs(s - nu) / std::max(1.0, std::fabs(nu));
        if (std::isnan(err)) err = INFINITY;
        ++result.entries;
        if (err > result.max_error || (result.worst.empty() && err == INFINITY)) {
          result.max_error = err;
          result.worst = absl::StrCat("d y", k, "[", e / n, "] / d x", i, "[", e % n,
                                      "]: symbolic ", s, ", numeric ", nu);
        }
      }
    }
  }
  return result;
}

// ---------------------------------------------------------------- table rows

std::string RowName(const GradCheckRow& row) {
  std::string name = row.label.empty() ? row.op : absl::StrCat(row.op, "_", row.label);
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

namespace {

// True for the NOT_FOUND "Op type not registered" error of an op the forward graph or a gradient
// function uses that no helper has added yet.
bool IsUnregisteredOpError(const Status& s, std::string* which) {
  if (s.code() != absl::StatusCode::kNotFound) return false;
  const std::string msg(s.message());
  if (msg.find("Op type not registered") == std::string::npos) return false;
  *which = msg;
  return true;
}

}  // namespace

RowResult RunGradCheckRow(const GradCheckRow& row) {
  RowResult r;
  if (!row.build && !OpRegistry::Global()->LookUpOpDef(row.op).ok()) {
    r.skipped = true;
    r.skip_reason = absl::StrCat("op ", row.op, " is not registered yet");
    return r;
  }
  uint64_t seed = row.seed != 0 ? row.seed : std::hash<std::string>()(RowName(row));
  std::mt19937_64 rng(seed);
  std::vector<Tensor> xv;
  for (size_t i = 0; i < row.shapes.size(); ++i) {
    auto [lo, hi] = i < row.ranges.size() ? row.ranges[i] : std::pair<double, double>(-2, 2);
    std::uniform_real_distribution<double> dist(lo, hi);
    Tensor t(DT_DOUBLE, row.shapes[i]);
    for (int64_t m = 0; m < t.NumElements(); ++m) t.data<double>()[m] = dist(rng);
    xv.push_back(t);
  }
  BuildFn build = row.build;
  if (!build) {
    build = [&row](Graph* g, const std::vector<GradOutput>& xs)
        -> StatusOr<std::vector<GradOutput>> {
      const int n_in = static_cast<int>(xs.size() + row.consts.size());
      std::vector<GradOutput> inputs(n_in);
      for (const auto& [pos, value] : row.consts) {
        if (pos < 0 || pos >= n_in)
          return errors::InvalidArgument("row ", RowName(row), ": const position ", pos);
        NodeDef def;
        def.set_name(g->NewName(absl::StrCat("const", pos)));
        def.set_op("Const");
        AddNodeAttr("dtype", value.dtype(), &def);
        AddNodeAttr("value", value, &def);
        TX_ASSIGN_OR_RETURN(Node * n, g->AddNode(std::move(def)));
        inputs[pos] = {n, 0};
      }
      size_t next = 0;
      for (GradOutput& in : inputs)
        if (!in.valid()) in = xs[next++];
      TX_ASSIGN_OR_RETURN(Node * n, AddNodeFromInputs(g, "", row.op, inputs, row.attrs));
      std::vector<GradOutput> ys;
      if (row.outputs.empty()) {
        for (int k = 0; k < n->num_outputs(); ++k)
          if (n->output_type(k) == DT_DOUBLE) ys.push_back({n, k});
      } else {
        for (int k : row.outputs) {
          if (k < 0 || k >= n->num_outputs())
            return errors::InvalidArgument("row ", RowName(row), ": no output ", k);
          ys.push_back({n, k});
        }
      }
      return ys;
    };
  }
  auto err = ComputeGradientError(xv, build);
  if (!err.ok()) {
    std::string which;
    if (IsUnregisteredOpError(err.status(), &which)) {
      r.skipped = true;
      r.skip_reason = which;
      return r;
    }
    r.status = err.status();
    return r;
  }
  r.error = *err;
  return r;
}

void ExpectGradCheckRow(const GradCheckRow& row) {
  RowResult r = RunGradCheckRow(row);
  if (r.skipped) GTEST_SKIP() << r.skip_reason;
  ASSERT_TRUE(r.status.ok()) << RowName(row) << ": " << r.status;
  EXPECT_LT(r.error.max_error, row.tolerance)
      << RowName(row) << ": worst entry " << r.error.worst << " (" << r.error.entries
      << " entries)";
  EXPECT_GT(r.error.entries, 0) << RowName(row);
}

}  // namespace tensorflux::gradient_check
