// Device code of the elementwise GPU kernels (cwise_launch.h): one templated functor per kind,
// flat (same shape or a scalar operand), vectorized flat (16-byte loads and stores when every
// pointer is aligned), and broadcast (collapsed odometer) kernels, all grid-stride loops.
#include <cmath>
#include <type_traits>

#include "tensorflux/kernels/cuda/cwise_launch.h"

namespace tensorflux {
namespace gpu {
namespace {

// SELU's constants (Klambauer et al. 2017), as kernels/cpu/cwise_functors_nn.h.
constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

template <typename T>
constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, double>;

template <UnaryKind K, typename T>
constexpr bool UnaryValid() {
  return K == UnaryKind::kLogicalNot ? std::is_same_v<T, bool> : kIsFloat<T>;
}
template <BinaryKind K, typename T>
constexpr bool BinaryValid() {
  return (K == BinaryKind::kLogicalAnd || K == BinaryKind::kLogicalOr) ? std::is_same_v<T, bool>
                                                                       : kIsFloat<T>;
}

template <UnaryKind K, typename T>
__device__ __forceinline__ T Unary(T x, T alpha) {
  using K_ = UnaryKind;
  if constexpr (K == K_::kLogicalNot) {
    return !x;
  } else if constexpr (K == K_::kNeg) {
    return -x;
  } else if constexpr (K == K_::kSquare) {
    return x * x;
  } else if constexpr (K == K_::kSqrt) {
    return sqrt(x);
  } else if constexpr (K == K_::kExp) {
    return exp(x);
  } else if constexpr (K == K_::kLog) {
    return log(x);
  } else if constexpr (K == K_::kAbs) {
    return fabs(x);
  } else if constexpr (K == K_::kSign) {
    return x != x ? x : static_cast<T>((T(0) < x) - (x < T(0)));
  } else if constexpr (K == K_::kReciprocal) {
    return T(1) / x;
  } else if constexpr (K == K_::kRsqrt) {
    return T(1) / sqrt(x);
  } else if constexpr (K == K_::kLog1p) {
    return log1p(x);
  } else if constexpr (K == K_::kTanh) {
    return tanh(x);
  } else if constexpr (K == K_::kSigmoid) {
    return T(1) / (T(1) + exp(-x));
  } else if constexpr (K == K_::kErf) {
    return erf(x);
  } else if constexpr (K == K_::kCos) {
    return cos(x);
  } else if constexpr (K == K_::kSin) {
    return sin(x);
  } else if constexpr (K == K_::kRelu) {
    return x < T(0) ? T(0) : x;  // NaN stays NaN
  } else if constexpr (K == K_::kRelu6) {
    return x < T(0) ? T(0) : (x > T(6) ? T(6) : x);
  } else if constexpr (K == K_::kLeakyRelu) {
    return x > T(0) ? x : x * alpha;
  } else if constexpr (K == K_::kElu) {
    return x < T(0) ? expm1(x) : x;
  } else if constexpr (K == K_::kSelu) {
    return x < T(0) ? expm1(x) * T(kSeluScale * kSeluAlpha) : x * T(kSeluScale);
  } else {
    static_assert(K == K_::kSoftplus);
    return (x > T(0) ? x : T(0)) + log1p(exp(-fabs(x)));
  }
}

template <BinaryKind K, typename T>
__device__ __forceinline__ auto Binary(T x, T y, T alpha) {
  using K_ = BinaryKind;
  if constexpr (K == K_::kAdd) {
    return x + y;
  } else if constexpr (K == K_::kSub) {
    return x - y;
  } else if constexpr (K == K_::kMul) {
    return x * y;
  } else if constexpr (K == K_::kRealDiv) {
    return x / y;
  } else if constexpr (K == K_::kMaximum) {
    return isnan(x) ? x : (isnan(y) ? y : (x < y ? y : x));
  } else if constexpr (K == K_::kMinimum) {
    return isnan(x) ? x : (isnan(y) ? y : (y < x ? y : x));
  } else if constexpr (K == K_::kPow) {
    return pow(x, y);
  } else if constexpr (K == K_::kSquaredDifference) {
    return (x - y) * (x - y);
  } else if constexpr (K == K_::kFloorDiv) {
    return floor(x / y);
  } else if constexpr (K == K_::kFloorMod) {
    const T r = fmod(x, y);
    return (r != T(0) && ((y < T(0)) != (r < T(0)))) ? r + y : r;
  } else if constexpr (K == K_::kLess) {
    return x < y;
  } else if constexpr (K == K_::kLessEqual) {
    return x <= y;
  } else if constexpr (K == K_::kGreater) {
    return x > y;
  } else if constexpr (K == K_::kGreaterEqual) {
    return x >= y;
  } else if constexpr (K == K_::kEqual) {
    return x == y;
  } else if constexpr (K == K_::kNotEqual) {
    return x != y;
  } else if constexpr (K == K_::kLogicalAnd) {
    return x && y;
  } else if constexpr (K == K_::kLogicalOr) {
    return x || y;
  } else if constexpr (K == K_::kReluGrad) {  // (gradients, features)
    return y > T(0) ? x : T(0);
  } else if constexpr (K == K_::kRelu6Grad) {
    return (y > T(0) && y < T(6)) ? x : T(0);
  } else if constexpr (K == K_::kLeakyReluGrad) {
    return y > T(0) ? x : x * alpha;
  } else if constexpr (K == K_::kSoftplusGrad) {
    return x / (exp(-y) + T(1));
  } else if constexpr (K == K_::kEluGrad) {  // (gradients, outputs)
    return y < T(0) ? x * (y + T(1)) : x;
  } else if constexpr (K == K_::kSeluGrad) {
    return y < T(0) ? x * (y + T(kSeluScale * kSeluAlpha)) : x * T(kSeluScale);
  } else if constexpr (K == K_::kTanhGrad) {  // (y, dy)
    return y * (T(1) - x * x);
  } else if constexpr (K == K_::kSigmoidGrad) {
    return y * x * (T(1) - x);
  } else if constexpr (K == K_::kRsqrtGrad) {
    return y * (x * x * x) * T(-0.5);
  } else if constexpr (K == K_::kSqrtGrad) {
    return y * T(0.5) / x;
  } else {
    static_assert(K == K_::kReciprocalGrad);
    return y * (x * x) * T(-1);
  }
}

template <BinaryKind K, typename T>
using BinaryOut = decltype(Binary<K, T>(T(), T(), T()));

// 16 bytes of T: one vector load or store.
template <typename T>
struct alignas(16) Vec16 {
  static constexpr int kWidth = 16 / sizeof(T);
  T v[kWidth];
};

__device__ __forceinline__ int64_t GlobalThread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t GridThreads() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

bool Aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

// ---------------------------------------------------------------- unary

template <UnaryKind K, typename T>
__global__ void UnaryKernel(const T* x, T* y, int64_t n, T alpha) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) y[i] = Unary<K>(x[i], alpha);
}

template <UnaryKind K, typename T>
__global__ void UnaryVecKernel(const T* x, T* y, int64_t n, T alpha) {
  using V = Vec16<T>;
  const int64_t nv = n / V::kWidth;
  for (int64_t i = GlobalThread(); i < nv; i += GridThreads()) {
    V a = reinterpret_cast<const V*>(x)[i];
#pragma unroll
    for (int w = 0; w < V::kWidth; ++w) a.v[w] = Unary<K>(a.v[w], alpha);
    reinterpret_cast<V*>(y)[i] = a;
  }
  const int64_t tail = nv * V::kWidth + GlobalThread();
  if (tail < n) y[tail] = Unary<K>(x[tail], alpha);
}

template <UnaryKind K, typename T>
cudaError_t RunUnary(double alpha, const void* xv, void* yv, int64_t n, cudaStream_t s) {
  if constexpr (!UnaryValid<K, T>()) {
    return cudaErrorInvalidValue;
  } else {
    const T* x = static_cast<const T*>(xv);
    T* y = static_cast<T*>(yv);
    const T a = static_cast<T>(alpha);
    if constexpr (kIsFloat<T>) {
      if (Aligned16(x) && Aligned16(y) && n >= Vec16<T>::kWidth) {
        UnaryVecKernel<K, T><<<BlocksFor(n / Vec16<T>::kWidth), kThreads, 0, s>>>(x, y, n, a);
        return cudaGetLastError();
      }
    }
    UnaryKernel<K, T><<<BlocksFor(n), kThreads, 0, s>>>(x, y, n, a);
    return cudaGetLastError();
  }
}

template <typename T>
cudaError_t UnaryTyped(UnaryKind k, double alpha, const void* x, void* y, int64_t n,
                       cudaStream_t s) {
  switch (k) {
#define TX_UNARY_CASE(K) \
  case UnaryKind::K:     \
    return RunUnary<UnaryKind::K, T>(alpha, x, y, n, s);
    TX_UNARY_CASE(kNeg) TX_UNARY_CASE(kSquare) TX_UNARY_CASE(kSqrt) TX_UNARY_CASE(kExp)
    TX_UNARY_CASE(kLog) TX_UNARY_CASE(kAbs) TX_UNARY_CASE(kSign) TX_UNARY_CASE(kReciprocal)
    TX_UNARY_CASE(kRsqrt) TX_UNARY_CASE(kLog1p) TX_UNARY_CASE(kTanh) TX_UNARY_CASE(kSigmoid)
    TX_UNARY_CASE(kErf) TX_UNARY_CASE(kCos) TX_UNARY_CASE(kSin) TX_UNARY_CASE(kRelu)
    TX_UNARY_CASE(kRelu6) TX_UNARY_CASE(kLeakyRelu) TX_UNARY_CASE(kElu) TX_UNARY_CASE(kSelu)
    TX_UNARY_CASE(kSoftplus) TX_UNARY_CASE(kLogicalNot)
#undef TX_UNARY_CASE
  }
  return cudaErrorInvalidValue;
}

// ---------------------------------------------------------------- binary

// Out (BinaryOut<K, T>) is a parameter of its own: nvcc's kernel stubs cannot take a decltype
// in a kernel's signature.
template <BinaryKind K, typename T, typename Out>
__global__ void BinaryFlatKernel(const T* x, int64_t xs, const T* y, int64_t ys, Out* z,
                                 int64_t n, T alpha) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    z[i] = Binary<K>(x[i * xs], y[i * ys], alpha);
  }
}

// Vectorized flat kernel for same-type outputs; a scalar operand (stride 0) is splatted.
template <BinaryKind K, typename T>
__global__ void BinaryVecKernel(const T* x, int64_t xs, const T* y, int64_t ys, T* z, int64_t n,
                                T alpha) {
  using V = Vec16<T>;
  const int64_t nv = n / V::kWidth;
  for (int64_t i = GlobalThread(); i < nv; i += GridThreads()) {
    V a, b;
    if (xs == 0) {
#pragma unroll
      for (int w = 0; w < V::kWidth; ++w) a.v[w] = x[0];
    } else {
      a = reinterpret_cast<const V*>(x)[i];
    }
    if (ys == 0) {
#pragma unroll
      for (int w = 0; w < V::kWidth; ++w) b.v[w] = y[0];
    } else {
      b = reinterpret_cast<const V*>(y)[i];
    }
#pragma unroll
    for (int w = 0; w < V::kWidth; ++w) a.v[w] = Binary<K>(a.v[w], b.v[w], alpha);
    reinterpret_cast<V*>(z)[i] = a;
  }
  const int64_t tail = nv * V::kWidth + GlobalThread();
  if (tail < n) z[tail] = Binary<K>(x[tail * xs], y[tail * ys], alpha);
}

template <BinaryKind K, typename T, typename Out>
__global__ void BinaryBroadcastKernel(const T* x, const T* y, Out* z, BroadcastIndex bc,
                                      int64_t n, T alpha) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    int64_t rem = i, xo = 0, yo = 0;
    for (int d = bc.rank - 1; d >= 0; --d) {
      const int64_t idx = rem % bc.dims[d];
      rem /= bc.dims[d];
      xo += idx * bc.x_strides[d];
      yo += idx * bc.y_strides[d];
    }
    z[i] = Binary<K>(x[xo], y[yo], alpha);
  }
}

template <BinaryKind K, typename T>
cudaError_t RunBinary(double alpha, const void* xv, bool x_scalar, const void* yv, bool y_scalar,
                      void* zv, const BroadcastIndex* bc, int64_t n, cudaStream_t s) {
  if constexpr (!BinaryValid<K, T>()) {
    return cudaErrorInvalidValue;
  } else {
    using Out = BinaryOut<K, T>;
    const T* x = static_cast<const T*>(xv);
    const T* y = static_cast<const T*>(yv);
    Out* z = static_cast<Out*>(zv);
    const T a = static_cast<T>(alpha);
    if (bc != nullptr) {
      BinaryBroadcastKernel<K, T, Out><<<BlocksFor(n), kThreads, 0, s>>>(x, y, z, *bc, n, a);
      return cudaGetLastError();
    }
    const int64_t xs = x_scalar ? 0 : 1, ys = y_scalar ? 0 : 1;
    if constexpr (std::is_same_v<Out, T> && kIsFloat<T>) {
      if ((x_scalar || Aligned16(x)) && (y_scalar || Aligned16(y)) && Aligned16(z) &&
          n >= Vec16<T>::kWidth) {
        BinaryVecKernel<K, T><<<BlocksFor(n / Vec16<T>::kWidth), kThreads, 0, s>>>(x, xs, y, ys,
                                                                                   z, n, a);
        return cudaGetLastError();
      }
    }
    BinaryFlatKernel<K, T, Out><<<BlocksFor(n), kThreads, 0, s>>>(x, xs, y, ys, z, n, a);
    return cudaGetLastError();
  }
}

template <typename T>
cudaError_t BinaryTyped(BinaryKind k, double alpha, const void* x, bool xs, const void* y,
                        bool ys, void* z, const BroadcastIndex* bc, int64_t n, cudaStream_t s) {
  switch (k) {
#define TX_BINARY_CASE(K) \
  case BinaryKind::K:     \
    return RunBinary<BinaryKind::K, T>(alpha, x, xs, y, ys, z, bc, n, s);
    TX_BINARY_CASE(kAdd) TX_BINARY_CASE(kSub) TX_BINARY_CASE(kMul) TX_BINARY_CASE(kRealDiv)
    TX_BINARY_CASE(kMaximum) TX_BINARY_CASE(kMinimum) TX_BINARY_CASE(kPow)
    TX_BINARY_CASE(kSquaredDifference) TX_BINARY_CASE(kFloorDiv) TX_BINARY_CASE(kFloorMod)
    TX_BINARY_CASE(kLess) TX_BINARY_CASE(kLessEqual) TX_BINARY_CASE(kGreater)
    TX_BINARY_CASE(kGreaterEqual) TX_BINARY_CASE(kEqual) TX_BINARY_CASE(kNotEqual)
    TX_BINARY_CASE(kLogicalAnd) TX_BINARY_CASE(kLogicalOr) TX_BINARY_CASE(kReluGrad)
    TX_BINARY_CASE(kRelu6Grad) TX_BINARY_CASE(kLeakyReluGrad) TX_BINARY_CASE(kSoftplusGrad)
    TX_BINARY_CASE(kEluGrad) TX_BINARY_CASE(kSeluGrad) TX_BINARY_CASE(kTanhGrad)
    TX_BINARY_CASE(kSigmoidGrad) TX_BINARY_CASE(kRsqrtGrad) TX_BINARY_CASE(kSqrtGrad)
    TX_BINARY_CASE(kReciprocalGrad)
#undef TX_BINARY_CASE
  }
  return cudaErrorInvalidValue;
}

cudaError_t BinaryDispatch(BinaryKind k, ElemType t, double alpha, const void* x, bool xs,
                           const void* y, bool ys, void* z, const BroadcastIndex* bc, int64_t n,
                           cudaStream_t s) {
  switch (t) {
    case ElemType::kFloat: return BinaryTyped<float>(k, alpha, x, xs, y, ys, z, bc, n, s);
    case ElemType::kDouble: return BinaryTyped<double>(k, alpha, x, xs, y, ys, z, bc, n, s);
    case ElemType::kBool: return BinaryTyped<bool>(k, alpha, x, xs, y, ys, z, bc, n, s);
    default: return cudaErrorInvalidValue;
  }
}

// ---------------------------------------------------------------- AddN

template <typename T>
__global__ void AddNKernel(AddNInputs in, T* out, int64_t n) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    T acc = static_cast<const T*>(in.ptrs[0])[i];
    for (int j = 1; j < in.count; ++j) acc += static_cast<const T*>(in.ptrs[j])[i];
    out[i] = acc;
  }
}

}  // namespace

bool BinaryOutputsBool(BinaryKind k) {
  switch (k) {
    case BinaryKind::kLess:
    case BinaryKind::kLessEqual:
    case BinaryKind::kGreater:
    case BinaryKind::kGreaterEqual:
    case BinaryKind::kEqual:
    case BinaryKind::kNotEqual:
    case BinaryKind::kLogicalAnd:
    case BinaryKind::kLogicalOr:
      return true;
    default:
      return false;
  }
}

cudaError_t LaunchUnary(UnaryKind k, ElemType t, double alpha, const void* x, void* y, int64_t n,
                        cudaStream_t stream) {
  switch (t) {
    case ElemType::kFloat: return UnaryTyped<float>(k, alpha, x, y, n, stream);
    case ElemType::kDouble: return UnaryTyped<double>(k, alpha, x, y, n, stream);
    case ElemType::kBool: return UnaryTyped<bool>(k, alpha, x, y, n, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchBinaryFlat(BinaryKind k, ElemType t, double alpha, const void* x, bool x_scalar,
                             const void* y, bool y_scalar, void* z, int64_t n,
                             cudaStream_t stream) {
  return BinaryDispatch(k, t, alpha, x, x_scalar, y, y_scalar, z, nullptr, n, stream);
}

cudaError_t LaunchBinaryBroadcast(BinaryKind k, ElemType t, double alpha, const void* x,
                                  const void* y, void* z, const BroadcastIndex& bc, int64_t n,
                                  cudaStream_t stream) {
  return BinaryDispatch(k, t, alpha, x, false, y, false, z, &bc, n, stream);
}

cudaError_t LaunchAddN(ElemType t, const AddNInputs& in, void* out, int64_t n,
                       cudaStream_t stream) {
  if (in.count < 1 || in.count > kMaxAddNInputs) return cudaErrorInvalidValue;
  switch (t) {
    case ElemType::kFloat:
      AddNKernel<float><<<BlocksFor(n), kThreads, 0, stream>>>(in, static_cast<float*>(out), n);
      return cudaGetLastError();
    case ElemType::kDouble:
      AddNKernel<double><<<BlocksFor(n), kThreads, 0, stream>>>(in, static_cast<double*>(out), n);
      return cudaGetLastError();
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace gpu
}  // namespace tensorflux
