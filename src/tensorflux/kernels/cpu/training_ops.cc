// CPU kernels of the optimizer update ops (ops/training_ops.cc). One functor per optimizer
// holds its update rule (TF's training_ops formulas); one kernel template, ApplyOp<T, F>,
// serves both the reference (Apply*) and the resource (ResourceApply*) form: it resolves the
// variable inputs to Vars (framework/resource_var.h), locks them in address order, checks
// that they are initialized (FAILED_PRECONDITION) and that slots, gradient and scalars have the
// right shapes (INVALID_ARGUMENT naming the input) -- kernels/shared/apply_vars.h, shared with
// the GPU kernels --, makes their buffers private
// (copy-on-write, so held reads stay snapshots) and runs the functor over the elements
// (vectorized, sharded over the intra-op thread pool when large). T: half, bfloat16 (computed
// in float, stored rounded to T, as TF), float, double.
//
// Update rules (elementwise; lr etc. are the scalar inputs):
//   GradientDescent  var -= alpha * delta
//   Momentum         accum = accum * momentum + grad
//                    var -= nesterov ? grad * lr + accum * momentum * lr : lr * accum
//   Adam             lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
//                    m += (grad - m) * (1 - beta1);  v += (grad^2 - v) * (1 - beta2)
//                    var -= lr_t * (nesterov ? m * beta1 + (1 - beta1) * grad : m)
//                           / (sqrt(v) + epsilon)      (Kingma & Ba 2015, TF's epsilon-hat form)
//   RMSProp          ms += (grad^2 - ms) * (1 - rho)
//                    mom = mom * momentum + lr * grad / sqrt(ms + epsilon);  var -= mom
//   CenteredRMSProp  mg += (grad - mg) * (1 - rho);  ms as RMSProp
//                    mom = mom * momentum + lr * grad / sqrt(ms - mg^2 + epsilon); var -= mom
//   Adagrad          accum += grad^2 (when update_slots);  var -= lr * grad / sqrt(accum)
#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "tensorflux/core/threadpool.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/framework/resource_var.h"
#include "tensorflux/kernels/shared/apply_vars.h"

namespace tensorflux {
namespace {

// Updates of fewer than kMinParallelCost / kCostPerElement elements run on the calling thread;
// larger ones are sharded over the intra-op pool.
constexpr int64_t kCostPerElement = 8;
constexpr int64_t kMinParallelCost = 32768;

struct Options {
  bool nesterov = false;
  bool update_slots = true;
};

// Each functor: kVars variable inputs first, then kOthers inputs of which input kGrad (an index
// over all inputs) has the variable's shape and the rest are scalars, passed in `s` in input
// order. Update(o, s, v, g) updates one element: v[k] is its value in variable k (updated in
// place), g the gradient's. T is the compute type: float for half and bfloat16 variables (as
// TF's CPU kernels compute them; the result is rounded back to the variable's dtype), else
// the variable's.
struct GradientDescent {
  static constexpr int kVars = 1, kOthers = 2, kGrad = 2;
  template <typename T>
  static void Update(const Options&, const T* s, T* v, T g) {
    v[0] -= s[0] * g;
  }
};

struct Momentum {
  static constexpr int kVars = 2, kOthers = 3, kGrad = 3;  // lr, grad, momentum
  template <typename T>
  static void Update(const Options& o, const T* s, T* v, T g) {
    const T lr = s[0], momentum = s[1];
    T& var = v[0];
    T& accum = v[1];
    accum = accum * momentum + g;
    var -= o.nesterov ? g * lr + accum * momentum * lr : lr * accum;
  }
};

struct Adam {
  // beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad
  static constexpr int kVars = 3, kOthers = 7, kGrad = 9;
  template <typename T>
  static void Update(const Options& o, const T* s, T* v, T g) {
    const T beta1_power = s[0], beta2_power = s[1], lr = s[2], beta1 = s[3], beta2 = s[4],
            epsilon = s[5];
    const T alpha = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    T& m = v[1];
    T& vv = v[2];
    m += (g - m) * (T(1) - beta1);
    vv += (g * g - vv) * (T(1) - beta2);
    const T step = o.nesterov ? m * beta1 + (T(1) - beta1) * g : m;
    v[0] -= alpha * step / (std::sqrt(vv) + epsilon);
  }
};

// RMSProp and its centered form: `mean` is the running mean of grad (centered) or 0.
// s = lr, rho, momentum, epsilon; updates ms and mom, then var -= mom.
template <typename T>
void RmsPropStep(const T* s, T g, T mean, T& ms, T& mom, T& var) {
  const T lr = s[0], rho = s[1], momentum = s[2], epsilon = s[3];
  ms += (g * g - ms) * (T(1) - rho);
  mom = mom * momentum + lr * g / std::sqrt(ms - mean * mean + epsilon);
  var -= mom;
}

struct RMSProp {
  static constexpr int kVars = 3, kOthers = 5, kGrad = 7;  // lr, rho, momentum, epsilon, grad
  template <typename T>
  static void Update(const Options&, const T* s, T* v, T g) {
    RmsPropStep(s, g, T(0), v[1], v[2], v[0]);  // var, ms, mom
  }
};

struct CenteredRMSProp {
  static constexpr int kVars = 4, kOthers = 5, kGrad = 8;  // lr, rho, momentum, epsilon, grad
  template <typename T>
  static void Update(const Options&, const T* s, T* v, T g) {
    T& mg = v[1];
    mg += (g - mg) * (T(1) - s[1]);
    RmsPropStep(s, g, mg, v[2], v[3], v[0]);  // var, mg, ms, mom
  }
};

struct Adagrad {
  static constexpr int kVars = 2, kOthers = 2, kGrad = 3;  // lr, grad
  template <typename T>
  static void Update(const Options& o, const T* s, T* v, T g) {
    T& accum = v[1];
    if (o.update_slots) accum += g * g;
    v[0] -= s[0] * g / std::sqrt(accum);
  }
};

// The type the update is computed in: float for the 16-bit float types.
template <typename T>
using ComputeType =
    std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// Updates elements [begin, end) of every variable. Each variable's buffer is its own local
// pointer (at most 4 variables): with the pointers read from an array the compiler reloaded them
// every iteration (a store through one could change the array, for all it knew) and left the
// loop scalar, one sqrt and one divide at a time: ResourceApplyAdam on the CNN's 401k-element
// dense kernel took about a millisecond. Iterations are independent (element i reads and writes
// index i only, even when one Var is passed for two inputs), which ivdep tells the vectorizer.
template <typename F, typename T, typename C>
void UpdateRange(const Options& opt, const std::array<C, F::kOthers> scalars,
                 const std::array<T*, F::kVars>& data, const T* grad, int64_t begin,
                 int64_t end) {
  static_assert(F::kVars >= 1 && F::kVars <= 4, "UpdateRange takes 1 to 4 variables");
  T* const p0 = data[0];
  T* const p1 = data[F::kVars > 1 ? 1 : 0];
  T* const p2 = data[F::kVars > 2 ? 2 : 0];
  T* const p3 = data[F::kVars > 3 ? 3 : 0];
  const C* s = scalars.data();
#pragma GCC ivdep
  for (int64_t i = begin; i < end; ++i) {
    C e[F::kVars];
    e[0] = static_cast<C>(p0[i]);
    if constexpr (F::kVars > 1) e[1] = static_cast<C>(p1[i]);
    if constexpr (F::kVars > 2) e[2] = static_cast<C>(p2[i]);
    if constexpr (F::kVars > 3) e[3] = static_cast<C>(p3[i]);
    F::Update(opt, s, e, static_cast<C>(grad[i]));
    p0[i] = static_cast<T>(e[0]);
    if constexpr (F::kVars > 1) p1[i] = static_cast<T>(e[1]);
    if constexpr (F::kVars > 2) p2[i] = static_cast<T>(e[2]);
    if constexpr (F::kVars > 3) p3[i] = static_cast<T>(e[3]);
  }
}

template <typename T, typename F>
class ApplyOp : public OpKernel {
 public:
  explicit ApplyOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    for (const auto& arg : ctx->op_def().input_arg()) names_.push_back(arg.name());
    if (ctx->HasAttr("use_nesterov"))
      OP_REQUIRES_OK(ctx, ctx->GetAttr("use_nesterov", &opt_.nesterov));
    if (ctx->HasAttr("update_slots"))
      OP_REQUIRES_OK(ctx, ctx->GetAttr("update_slots", &opt_.update_slots));
    OP_REQUIRES(
        ctx, static_cast<int>(names_.size()) == F::kVars + F::kOthers,
        errors::Internal(ctx->def().op(), ": kernel expects ", F::kVars + F::kOthers, " inputs"));
  }

  void Compute(OpKernelContext* ctx) override {
    ApplyVars vars;
    OP_REQUIRES_OK(ctx, vars.Acquire(ctx, names_, F::kVars, F::kOthers, F::kGrad,
                                     DataTypeToEnum<T>::value));
    for (Var* v : vars.distinct()) OP_REQUIRES_OK(ctx, v->CopyOnWrite());

    using C = ComputeType<T>;
    std::array<C, F::kOthers> scalars{};
    for (int k = 0, j = 0; k < F::kOthers; ++k) {
      if (F::kVars + k == F::kGrad) continue;
      scalars[j++] = static_cast<C>(ctx->input(F::kVars + k).template scalar<T>());
    }
    std::array<T*, F::kVars> data;
    for (int k = 0; k < F::kVars; ++k) data[k] = vars.tensor(k)->template data<T>();
    const T* grad = ctx->input(F::kGrad).template data<T>();
    const int64_t n = vars.tensor(0)->NumElements();
    const Options opt = opt_;
    auto run = [opt, scalars, data, grad](int64_t begin, int64_t end) {
      UpdateRange<F, T, C>(opt, scalars, data, grad, begin, end);
    };
    ThreadPool* pool = n * kCostPerElement < kMinParallelCost ? nullptr
                                                              : ctx->intra_op_thread_pool();
    if (pool == nullptr || pool->NumThreads() <= 1) {
      run(0, n);
    } else {
      pool->ParallelFor(n, kCostPerElement, run);
    }
    if (num_outputs() > 0) ctx->set_output(0, ctx->input(0));  // Apply*: out is the variable
  }

 private:
  std::vector<std::string> names_;
  Options opt_;
};

#define TX_REGISTER_APPLY_T(NAME, F, T)                                                      \
  REGISTER_KERNEL_BUILDER(Name("Apply" NAME).Device(DEVICE_CPU).TypeConstraint<T>("T"),      \
                          ApplyOp<T, F>);                                                    \
  REGISTER_KERNEL_BUILDER(Name("ResourceApply" NAME).Device(DEVICE_CPU).TypeConstraint<T>("T"), \
                          ApplyOp<T, F>);
#define TX_REGISTER_APPLY(NAME, F)         \
  TX_REGISTER_APPLY_T(NAME, F, Half)       \
  TX_REGISTER_APPLY_T(NAME, F, BFloat16)   \
  TX_REGISTER_APPLY_T(NAME, F, float)      \
  TX_REGISTER_APPLY_T(NAME, F, double)

TX_REGISTER_APPLY("GradientDescent", GradientDescent)
TX_REGISTER_APPLY("Momentum", Momentum)
TX_REGISTER_APPLY("Adam", Adam)
TX_REGISTER_APPLY("RMSProp", RMSProp)
TX_REGISTER_APPLY("CenteredRMSProp", CenteredRMSProp)
TX_REGISTER_APPLY("Adagrad", Adagrad)
#undef TX_REGISTER_APPLY
#undef TX_REGISTER_APPLY_T

}  // namespace
}  // namespace tensorflux
