// Arithmetic simplification (graph_optimizer.h; the simplest rewrites of TF grappler's
// arithmetic_optimization and dependency_optimizer). A node whose value is one of its inputs
// is removed and its consumers read that input directly (with the node's control inputs moved to
// them):
//
//   Mul(x, 1), Mul(1, x)                  -> x
//   Add(x, 0), Add(0, x), AddV2 the same  -> x
//   Sub(x, 0)                             -> x
//   Neg(Neg(x))                           -> x
//   Identity(x)                           -> x   (a chain of Identity nodes collapses)
//
// "1" and "0" are Const nodes of the op's numeric dtype whose every element is 1 (resp. 0; -0.0
// counts as 0). The rewrite must not change the result's shape or dtype: the dtype is the op's T
// for both inputs; a scalar constant never changes x's shape, and a non-scalar one is accepted
// only when x's static shape and the node's inferred output shape are both fully known and equal
// (x[3] * ones[2, 3] is [2, 3] and stays). Never rewritten: preserved nodes (a fetched Identity
// stays), stateful ones, and nodes whose replacement would be a reference output (Identity of a
// TF 1.x variable takes a snapshot of its value; reading the variable later could differ).
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensorflux/graph/algorithm.h"
#include "tensorflux/graph/static_shapes.h"
#include "tensorflux/passes/graph_optimizer.h"
#include "tensorflux/passes/pass_util.h"

namespace tensorflux {
namespace {

using Output = std::pair<Node*, int>;

// True when `t` is numeric and every element equals `v` (0 or 1).
bool AllElementsAre(const Tensor& t, int v) {
  if (t.dtype() == DT_BOOL) return false;
  bool all = false;
  Status s = VisitPodType(t.dtype(), "AllElementsAre", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    all = true;
    using Wide = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>,
                                    float, T>;
    for (const T& x : t.flat<T>()) {
      if (static_cast<Wide>(x) != static_cast<Wide>(v)) {
        all = false;
        break;
      }
    }
    return OkStatus();
  });
  return s.ok() && all;
}

class ArithmeticSimplifier : public GraphPass {
 public:
  const char* name() const override { return "arithmetic_optimization"; }

  StatusOr<int> Run(const OptimizerContext& ctx, Graph* g) const override {
    TX_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*g));
    const StaticShapeTable shapes = InferStaticShapes(*g);
    int simplified = 0;
    for (Node* n : order) {
      if (!passes::IsRewritable(ctx, n)) continue;
      std::optional<Output> x = Simplify(shapes, n);
      if (!x.has_value() || IsRefType(x->first->output_type(x->second))) continue;
      TX_RETURN_IF_ERROR(passes::ForwardNode(g, n, x->first, x->second));
      ++simplified;
    }
    return simplified;
  }

 private:
  static std::optional<Output> Input(const Node* n, int i) {
    const Edge* e = passes::InEdge(n, i);
    if (e == nullptr) return std::nullopt;
    return Output{e->src(), e->src_output()};
  }

  // What n can be replaced by, if anything.
  static std::optional<Output> Simplify(const StaticShapeTable& shapes, const Node* n) {
    const std::string& op = n->type_string();
    if (op == "Identity") return Input(n, 0);
    if (op == "Neg") {
      std::optional<Output> inner = Input(n, 0);
      if (!inner.has_value() || inner->first->type_string() != "Neg") return std::nullopt;
      return Input(inner->first, 0);
    }
    int identity_value;
    bool commutative;
    if (op == "Mul") {
      identity_value = 1;
      commutative = true;
    } else if (op == "Add" || op == "AddV2") {
      identity_value = 0;
      commutative = true;
    } else if (op == "Sub") {
      identity_value = 0;
      commutative = false;
    } else {
      return std::nullopt;
    }
    for (int c = 1; c >= (commutative ? 0 : 1); --c) {
      std::optional<Output> k = Input(n, c), x = Input(n, 1 - c);
      if (!k.has_value() || !x.has_value()) return std::nullopt;
      std::optional<Tensor> value = passes::ConstValue(k->first);
      if (!value.has_value() || !AllElementsAre(*value, identity_value)) continue;
      if (value->dims() == 0 || SameKnownShape(shapes, *x, Output{const_cast<Node*>(n), 0})) {
        return x;
      }
    }
    return std::nullopt;
  }

  static bool SameKnownShape(const StaticShapeTable& shapes, const Output& a, const Output& b) {
    auto shape = [&](const Output& o) -> const PartialTensorShape* {
      const auto& s = shapes[o.first->id()];
      return o.second < static_cast<int>(s.size()) ? &s[o.second] : nullptr;
    };
    const PartialTensorShape* sa = shape(a);
    const PartialTensorShape* sb = shape(b);
    return sa != nullptr && sb != nullptr && sa->IsFullyDefined() && sb->IsFullyDefined() &&
           *sa == *sb;
  }
};

}  // namespace

std::unique_ptr<GraphPass> NewArithmeticSimplifierPass() {
  return std::make_unique<ArithmeticSimplifier>();
}

}  // namespace tensorflux
