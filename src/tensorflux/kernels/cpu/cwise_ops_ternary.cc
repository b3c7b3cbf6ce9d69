// CPU kernels of the three-input elementwise ops: Select (TF v1: condition of t's shape, a
// scalar, or a vector of t's first dim), SelectV2 (NumPy broadcasting of all three) and
// ClipByValue (bounds broadcast to t). One broadcast-and-collapse iteration for all three;
// every dtype their OpDefs allow (Select/SelectV2 include bool and string).

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <type_traits>

#include "absl/container/inlined_vector.h"
#include "tensorflux/kernels/cpu/cwise_ops_common.h"

namespace tensorflux {
namespace cwise {
namespace {

// The iteration space of out = f(a, b, c) after NumPy broadcasting: collapsed dims (outermost
// first, never empty) and each input's element strides along them (0 where broadcast).
struct TernaryBroadcast {
  TensorShape out_shape;
  absl::InlinedVector<int64_t, 6> dims;
  std::array<absl::InlinedVector<int64_t, 6>, 3> strides;
};

Status ComputeTernaryBroadcast(const std::array<TensorShape, 3>& in, TernaryBroadcast* bc) {
  int rank = 0;
  for (const TensorShape& s : in) rank = std::max(rank, s.dims());
  auto dim_of = [&](int k, int i) -> int64_t {  // input k's size along output dim i
    const int j = i - (rank - in[k].dims());
    return j >= 0 ? in[k].dim_size(j) : 1;
  };
  absl::InlinedVector<int64_t, 8> out_dims(rank, 1);
  for (int i = 0; i < rank; ++i) {
    for (int k = 0; k < 3; ++k) {
      const int64_t d = dim_of(k, i);
      if (d == out_dims[i] || d == 1) continue;
      if (out_dims[i] != 1) {
        return errors::InvalidArgument("Incompatible shapes: ", in[0].DebugString(), " vs. ",
                                       in[1].DebugString(), " vs. ", in[2].DebugString());
      }
      out_dims[i] = d;
    }
  }
  auto shape = TensorShape::Make(out_dims);
  if (!shape.ok()) return shape.status();
  bc->out_shape = *std::move(shape);
  // Collapse, innermost first: drop size-1 dims, merge neighbours with one broadcast pattern.
  using Pattern = std::array<bool, 3>;
  absl::InlinedVector<Pattern, 8> patterns;
  bc->dims.clear();
  for (int i = rank - 1; i >= 0; --i) {
    if (out_dims[i] == 1) continue;
    const Pattern p = {dim_of(0, i) == 1, dim_of(1, i) == 1, dim_of(2, i) == 1};
    if (!patterns.empty() && patterns.back() == p) {
      bc->dims.back() *= out_dims[i];
    } else {
      bc->dims.push_back(out_dims[i]);
      patterns.push_back(p);
    }
  }
  if (bc->dims.empty()) {
    bc->dims.push_back(1);
    patterns.push_back({false, false, false});
  }
  for (int k = 0; k < 3; ++k) {
    bc->strides[k].clear();
    int64_t stride = 1;
    for (size_t d = 0; d < bc->dims.size(); ++d) {
      bc->strides[k].push_back(patterns[d][k] ? 0 : stride);
      if (!patterns[d][k]) stride *= bc->dims[d];
    }
    std::reverse(bc->strides[k].begin(), bc->strides[k].end());
  }
  std::reverse(bc->dims.begin(), bc->dims.end());
  return OkStatus();
}

// Calls run(out_offset, {a, b, c offsets}, {a, b, c inner strides}, len) for each innermost run
// of output elements in [begin, end).
template <typename Run>
void ForEachTernaryRun(const TernaryBroadcast& bc, int64_t begin, int64_t end, Run&& run) {
  const int r = static_cast<int>(bc.dims.size());
  const int64_t inner = bc.dims[r - 1];
  std::array<int64_t, 3> in_stride, off = {0, 0, 0};
  for (int k = 0; k < 3; ++k) in_stride[k] = bc.strides[k][r - 1];
  absl::InlinedVector<int64_t, 6> idx(r, 0);
  int64_t rem = begin / inner, col = begin % inner;
  for (int d = r - 2; d >= 0; --d) {
    idx[d] = rem % bc.dims[d];
    rem /= bc.dims[d];
    for (int k = 0; k < 3; ++k) off[k] += idx[d] * bc.strides[k][d];
  }
  for (int64_t pos = begin; pos < end;) {
    const int64_t len = std::min(inner - col, end - pos);
    run(pos, std::array<int64_t, 3>{off[0] + col * in_stride[0], off[1] + col * in_stride[1],
                                    off[2] + col * in_stride[2]},
        in_stride, len);
    pos += len;
    col = 0;
    for (int d = r - 2; d >= 0; --d) {
      for (int k = 0; k < 3; ++k) off[k] += bc.strides[k][d];
      if (++idx[d] < bc.dims[d]) break;
      for (int k = 0; k < 3; ++k) off[k] -= bc.dims[d] * bc.strides[k][d];
      idx[d] = 0;
    }
  }
}

// Ordering for the clip: half/bfloat16 compare as float.
template <typename T>
bool LessThan(const T& a, const T& b) {
  if constexpr (kIsHalfLike<T>) {
    return static_cast<float>(a) < static_cast<float>(b);
  } else {
    return a < b;
  }
}

// out = f(a, b, c) over the broadcast of the three inputs; `forward` lists inputs whose buffer
// the output may take (only ones of the output's element count, so indices coincide).
template <typename A, typename T, typename F>
void RunTernary(OpKernelContext* ctx, const Tensor& a, const Tensor& b, const Tensor& c,
                const TensorShape& a_shape, std::initializer_list<int> forward, int64_t cost,
                const TensorShape* required_out, F&& f) {
  TernaryBroadcast bc;
  OP_REQUIRES_OK(ctx, ComputeTernaryBroadcast({a_shape, b.shape(), c.shape()}, &bc));
  if (required_out != nullptr && !(bc.out_shape == *required_out)) {
    ctx->SetStatus(errors::InvalidArgument(
        "clip_value_min ", b.shape().DebugString(), " and clip_value_max ",
        c.shape().DebugString(), " must broadcast to t's shape ", required_out->DebugString()));
    return;
  }
  const A* ap = a.data<A>();
  const T* bp = b.data<T>();
  const T* cp = c.data<T>();
  Tensor* out = nullptr;
  OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output(forward, 0, bc.out_shape, &out));
  const int64_t total = bc.out_shape.num_elements();
  if (total == 0) return;
  T* op = out->data<T>();
  ParallelShards(ctx, total, cost, [&](int64_t begin, int64_t end) {
    ForEachTernaryRun(bc, begin, end,
                      [&](int64_t o, std::array<int64_t, 3> off, std::array<int64_t, 3> st,
                          int64_t len) {
                        for (int64_t i = 0; i < len; ++i) {
                          op[o + i] = f(ap[off[0] + i * st[0]], bp[off[1] + i * st[1]],
                                        cp[off[2] + i * st[2]]);
                        }
                      });
  });
}

template <typename T>
T Pick(bool cond, const T& t, const T& e) {
  return cond ? t : e;
}

// Select (v1): condition of t's shape, a scalar, or a vector matching t's first dim.
template <typename T>
class SelectOp : public OpKernel {
 public:
  explicit SelectOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& t = ctx->input(1);
    const Tensor& e = ctx->input(2);
    OP_REQUIRES(ctx, t.shape() == e.shape(),
                errors::InvalidArgument("'then' and 'else' must have the same size.  but "
                                        "received: ",
                                        t.shape().DebugString(), " vs. ", e.shape().DebugString()));
    TensorShape cond_shape = cond.shape();
    if (cond.dims() == 1 && t.dims() > 1) {
      OP_REQUIRES(ctx, cond.dim_size(0) == t.dim_size(0),
                  errors::InvalidArgument("Number of batches of 'then' must match size of "
                                          "'cond', but saw: ",
                                          t.dim_size(0), " vs. ", cond.dim_size(0)));
      absl::InlinedVector<int64_t, 8> dims(t.dims(), 1);
      dims[0] = cond.dim_size(0);
      cond_shape = TensorShape(absl::Span<const int64_t>(dims));
    } else {
      OP_REQUIRES(ctx, cond.dims() == 0 || cond.shape() == t.shape(),
                  errors::InvalidArgument(
                      "'condition' must be a scalar, have the shape of 'then', or be a vector "
                      "of its first dimension; got condition ",
                      cond.shape().DebugString(), " and 'then' ", t.shape().DebugString()));
    }
    RunTernary<bool, T>(ctx, cond, t, e, cond_shape, {1, 2}, 1, nullptr, Pick<T>);
  }
};

template <typename T>
class SelectV2Op : public OpKernel {
 public:
  explicit SelectV2Op(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    RunTernary<bool, T>(ctx, cond, ctx->input(1), ctx->input(2), cond.shape(), {1, 2}, 1,
                        nullptr, Pick<T>);
  }
};

// max(min(t, hi), lo): NaN in t stays NaN; lo wins where lo > hi.
template <typename T>
class ClipByValueOp : public OpKernel {
 public:
  explicit ClipByValueOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    const TensorShape t_shape = t.shape();
    RunTernary<T, T>(ctx, t, ctx->input(1), ctx->input(2), t_shape, {0}, 2, &t_shape,
                     [](const T& v, const T& lo, const T& hi) {
                       const T m = LessThan(hi, v) ? hi : v;
                       return LessThan(m, lo) ? lo : m;
                     });
  }
};

template <template <typename> class Kernel, typename... Ts>
void RegisterTernary(const char* op, TypeList<Ts...>) {
  (KernelRegistry::Global()->Register(
       KernelDefBuilder(op).Device(DEVICE_CPU).TypeConstraint<Ts>("T"),
       [](OpKernelConstruction* c) -> OpKernel* { return new Kernel<Ts>(c); }),
   ...);
}

using SelectTypes = TypeList<Half, BFloat16, float, double, int8_t, int16_t, int32_t, int64_t,
                             uint8_t, uint16_t, uint32_t, uint64_t, bool, std::string>;

[[maybe_unused]] const bool kRegistered = [] {
  RegisterTernary<SelectOp>("Select", SelectTypes{});
  RegisterTernary<SelectV2Op>("SelectV2", SelectTypes{});
  RegisterTernary<ClipByValueOp>("ClipByValue", FloatTypes{});
  RegisterTernary<ClipByValueOp>("ClipByValue", IntTypes{});
  return true;
}();

}  // namespace
}  // namespace cwise
}  // namespace tensorflux
