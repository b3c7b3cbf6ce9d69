// float32 convolution through oneDNN primitives, cached per kernel (see conv_impl.h).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/conv_impl.h"
#include "tensorflux/kernels/cpu/dnnl_util.h"

namespace tensorflux {
namespace conv {

#ifndef TX_HAVE_DNNL
std::unique_ptr<DnnlConvCache> NewDnnlConvCache() { return nullptr; }
#else
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// Kernels see few distinct shapes; a graph fed with changing shapes should not grow without bound.
constexpr size_t kMaxCachedPrimitives = 32;

// One argument of a primitive: the user's layout, the primitive's, and the reorder between them
// (absent when they are the same).
struct Arg {
  memory::desc user, prim;
  bool reordered = false;
  dnnl::reorder reorder;  // user -> prim for inputs, prim -> user for the computed argument
};

struct Primitive {
  dnnl::primitive prim;
  Arg input, filter, output;  // src / (diff_)weights / dst-or-diff_dst roles
  // Largest scratchpad of the primitive and its reorders, in bytes. Every primitive here uses a
  // user-managed scratchpad allocated per call: with oneDNN's default library-managed one, a
  // primitive keeps one scratchpad for all its executions, and two threads executing it at once
  // (concurrent steps on one kernel) corrupt each other's results or deadlock in its barriers.
  size_t scratchpad_bytes = 0;
};

dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

memory::desc ActivationDesc(const ConvGeometry& g, int64_t rows, int64_t cols, int64_t depth) {
  return memory::desc({g.batch, depth, rows, cols}, memory::data_type::f32,
                      g.format == DataFormat::kNHWC ? Tag::nhwc : Tag::nchw);
}

// The HWIO filter ([kh, kw, group_in, out_depth], output channel = group * group_out + o), as
// oneDNN's logical OIHW (groups == 1) or GOIHW with explicit strides.
memory::desc FilterDesc(const ConvGeometry& g) {
  const int64_t s_i = g.out_depth, s_w = g.group_in * g.out_depth, s_h = g.filter_cols * s_w;
  if (g.groups == 1) {
    return memory::desc({g.out_depth, g.group_in, g.filter_rows, g.filter_cols},
                        memory::data_type::f32, memory::dims{1, s_i, s_h, s_w});
  }
  return memory::desc({g.groups, g.group_out, g.group_in, g.filter_rows, g.filter_cols},
                      memory::data_type::f32, memory::dims{g.group_out, 1, s_i, s_h, s_w});
}

memory::desc AnyFilterDesc(const ConvGeometry& g) {
  if (g.groups == 1) {
    return memory::desc({g.out_depth, g.group_in, g.filter_rows, g.filter_cols},
                        memory::data_type::f32, Tag::any);
  }
  return memory::desc({g.groups, g.group_out, g.group_in, g.filter_rows, g.filter_cols},
                      memory::data_type::f32, Tag::any);
}

void SetArg(Primitive* p, Arg* a, const memory::desc& user, const memory::desc& prim,
            bool computed) {
  a->user = user;
  a->prim = prim;
  a->reordered = user != prim;
  if (!a->reordered) return;
  dnnl::engine& eng = dnnl_util::CpuEngine();
  const dnnl::reorder::primitive_desc pd =
      computed ? dnnl::reorder::primitive_desc(eng, prim, eng, user, UserScratchpad())
               : dnnl::reorder::primitive_desc(eng, user, eng, prim, UserScratchpad());
  a->reorder = dnnl::reorder(pd);
  p->scratchpad_bytes = std::max(p->scratchpad_bytes, pd.scratchpad_desc().get_size());
}

// The descriptors every direction shares: activations in the user's layout (as `any` for
// Winograd, whose primitives take only their blocked layout), the filter as `any`.
struct ConvDescs {
  ConvDescs(const ConvGeometry& g, dnnl::algorithm algorithm)
      : alg(algorithm),
        user_x(ActivationDesc(g, g.in_rows, g.in_cols, g.in_depth)),
        user_y(ActivationDesc(g, g.out_rows, g.out_cols, g.out_depth)),
        x(Requested(g, user_x, g.in_depth)),
        y(Requested(g, user_y, g.out_depth)),
        w(AnyFilterDesc(g)),
        b({g.out_depth}, memory::data_type::f32, Tag::a),
        strides{g.stride_rows, g.stride_cols},
        dilates{g.dilation_rows - 1, g.dilation_cols - 1},  // oneDNN counts from 0, TF from 1
        pad_l{g.pad_top, g.pad_left},
        pad_r{g.pad_bottom, g.pad_right} {}
  memory::desc Requested(const ConvGeometry& g, const memory::desc& user, int64_t depth) const {
    if (alg != dnnl::algorithm::convolution_winograd) return user;
    return memory::desc({g.batch, depth, user.dims()[2], user.dims()[3]},
                        memory::data_type::f32, Tag::any);
  }
  dnnl::algorithm alg;
  memory::desc user_x, user_y, x, y, w, b;
  memory::dims strides, dilates, pad_l, pad_r;
};

// Whether to ask oneDNN for Winograd F(4x4, 3x3) (Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016) rather than direct convolution: for 3x3 filters with
// stride and dilation 1, one group, depths that fill its 16-float vectors and a batch times
// output size of at least kMinWinogradPixels. It takes 36 multiplies per 4x4 output tile and
// channel pair where direct convolution takes 144; on the bench/peer CNN's second convolution
// ([64, 14, 14, 32] -> 64, 2 cores) forward 1.30 vs 1.95 ms, backward data 1.44 vs 1.94,
// backward filter 1.40 vs 2.38 (docs/PERFORMANCE.md, 2026-12-02). Its results differ from direct
// convolution's by rounding (the input/output transforms add and scale: about 1e-6 relative
// here), as cuDNN's Winograd algorithms, which TF and PyTorch use on GPUs, do. oneDNN refuses
// some shapes and post-op combinations; Build() then takes direct convolution. The environment
// variable TX_ENABLE_WINOGRAD=0 (read once) keeps every convolution direct.
constexpr int64_t kMinWinogradPixels = 64 * 7 * 7;

bool WinogradEnabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("TX_ENABLE_WINOGRAD");
    return v == nullptr || std::string_view(v) != "0";
  }();
  return enabled;
}

bool WantsWinograd(const ConvGeometry& g) {
  return WinogradEnabled() && g.groups == 1 && !g.depthwise && g.filter_rows == 3 &&
         g.filter_cols == 3 && g.stride_rows == 1 && g.stride_cols == 1 &&
         g.dilation_rows == 1 && g.dilation_cols == 1 && g.in_depth % 16 == 0 &&
         g.out_depth % 16 == 0 && g.batch * g.out_rows * g.out_cols >= kMinWinogradPixels;
}

// The forward primitive's descriptor, with a bias argument and a ReLU post-op when asked
// (DnnlEpilogue); the backward primitives take the plain one as their hint.
dnnl::convolution_forward::primitive_desc ForwardPd(const ConvDescs& d, bool bias, bool relu) {
  const auto prop = dnnl::prop_kind::forward_training;
  dnnl::primitive_attr attr = UserScratchpad();
  if (relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(ops);
  }
  dnnl::engine& eng = dnnl_util::CpuEngine();
  if (bias) {
    return {dnnl::convolution_forward::desc(prop, d.alg, d.x, d.w, d.b, d.y, d.strides,
                                            d.dilates, d.pad_l, d.pad_r),
            attr, eng};
  }
  return {dnnl::convolution_forward::desc(prop, d.alg, d.x, d.w, d.y, d.strides, d.dilates,
                                          d.pad_l, d.pad_r),
          attr, eng};
}

std::shared_ptr<const Primitive> BuildWith(dnnl::algorithm alg, Direction dir,
                                           const ConvGeometry& g, bool bias, bool relu) {
  dnnl::engine& eng = dnnl_util::CpuEngine();
  const ConvDescs d(g, alg);
  const memory::desc &x = d.x, &y = d.y, &w = d.w;
  const memory::desc &user_x = d.user_x, &user_y = d.user_y;
  const dnnl::primitive_attr attr = UserScratchpad();
  const dnnl::convolution_forward::primitive_desc fwd_pd =
      ForwardPd(d, dir == Direction::kForward && bias, dir == Direction::kForward && relu);
  auto p = std::make_shared<Primitive>();
  const memory::desc user_w = FilterDesc(g);
  switch (dir) {
    case Direction::kForward:
      p->prim = dnnl::convolution_forward(fwd_pd);
      p->scratchpad_bytes = fwd_pd.scratchpad_desc().get_size();
      SetArg(p.get(), &p->input, user_x, fwd_pd.src_desc(), false);
      SetArg(p.get(), &p->filter, user_w, fwd_pd.weights_desc(), false);
      SetArg(p.get(), &p->output, user_y, fwd_pd.dst_desc(), true);
      break;
    case Direction::kBackwardInput: {
      dnnl::convolution_backward_data::desc bd(alg, x, w, y, d.strides, d.dilates, d.pad_l,
                                               d.pad_r);
      dnnl::convolution_backward_data::primitive_desc pd(bd, attr, eng, fwd_pd);
      p->prim = dnnl::convolution_backward_data(pd);
      p->scratchpad_bytes = pd.scratchpad_desc().get_size();
      SetArg(p.get(), &p->input, user_x, pd.diff_src_desc(), true);
      SetArg(p.get(), &p->filter, user_w, pd.weights_desc(), false);
      SetArg(p.get(), &p->output, user_y, pd.diff_dst_desc(), false);
      break;
    }
    case Direction::kBackwardFilter: {
      dnnl::convolution_backward_weights::desc bd(alg, x, w, y, d.strides, d.dilates, d.pad_l,
                                                  d.pad_r);
      dnnl::convolution_backward_weights::primitive_desc pd(bd, attr, eng, fwd_pd);
      p->prim = dnnl::convolution_backward_weights(pd);
      p->scratchpad_bytes = pd.scratchpad_desc().get_size();
      SetArg(p.get(), &p->input, user_x, pd.src_desc(), false);
      SetArg(p.get(), &p->filter, user_w, pd.diff_weights_desc(), true);
      SetArg(p.get(), &p->output, user_y, pd.diff_dst_desc(), false);
      break;
    }
  }
  return p;
}

// Winograd where WantsWinograd() and oneDNN has it for the geometry and epilogue, else direct
// convolution. A dnnl::error of the direct one reaches the caller (Guard makes it INTERNAL).
std::shared_ptr<const Primitive> Build(Direction dir, const ConvGeometry& g, bool bias,
                                       bool relu) {
  if (WantsWinograd(g)) {
    try {
      return BuildWith(dnnl::algorithm::convolution_winograd, dir, g, bias, relu);
    } catch (const dnnl::error&) {
      // unimplemented for this shape or post-op: direct below
    }
  }
  return BuildWith(dnnl::algorithm::convolution_direct, dir, g, bias, relu);
}

struct Key {
  Direction dir;
  ConvGeometry g;
  bool bias, relu;  // DnnlEpilogue (forward only)
  bool operator==(const Key& o) const {
    return dir == o.dir && g == o.g && bias == o.bias && relu == o.relu;
  }
  template <typename H>
  friend H AbslHashValue(H h, const Key& k) {
    return H::combine(std::move(h), k.dir, k.g, k.bias, k.relu);
  }
};

class DnnlConvCacheImpl : public DnnlConvCache {
 public:
  Status Run(OpKernelContext* ctx, Direction dir, const ConvGeometry& g, float* input,
             float* filter, float* output, const DnnlEpilogue& epilogue) override {
    const bool bias = epilogue.bias != nullptr;
    if ((bias || epilogue.relu) && dir != Direction::kForward) {
      return errors::Internal("oneDNN convolution: a fused epilogue needs the forward direction");
    }
    return dnnl_util::Guard("oneDNN convolution", [&]() -> Status {
      // Held from the primitive's creation (oneDNN fixes its split over threads then, for the
      // thread count the gate sets) to stream.wait().
      dnnl_util::TeamGate gate(ctx);
      std::shared_ptr<const Primitive> p = Lookup(Key{dir, g, bias, epilogue.relu});
      dnnl::engine& eng = dnnl_util::CpuEngine();
      dnnl::stream& stream = dnnl_util::ThreadStream();
      // The user's buffer, or a scratch buffer in the primitive's layout (reordered into before
      // the primitive for inputs, out of after it for the computed argument).
      Tensor scratch[3], scratchpad_buf;
      memory user_mem[3], prim_mem[3];
      const int64_t pad_floats = static_cast<int64_t>((p->scratchpad_bytes + 3) / 4);
      TX_RETURN_IF_ERROR(
          ctx->allocate_temp(DT_FLOAT, TensorShape({std::max<int64_t>(pad_floats, 1)}),
                             &scratchpad_buf));
      // One buffer serves every step: they run one after another on this thread's stream.
      const memory scratchpad(
          memory::desc({std::max<int64_t>(pad_floats, 1) * 4}, memory::data_type::u8, Tag::a),
          eng, scratchpad_buf.data<float>());
      auto reorder = [&](const Arg& a, const memory& from, const memory& to) {
        a.reorder.execute(stream, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to},
                                   {DNNL_ARG_SCRATCHPAD, scratchpad}});
      };
      const Arg* args[3] = {&p->input, &p->filter, &p->output};
      float* ptrs[3] = {input, filter, output};
      const int computed = dir == Direction::kForward ? 2 : dir == Direction::kBackwardInput ? 0 : 1;
      for (int i = 0; i < 3; ++i) {
        user_mem[i] = memory(args[i]->user, eng, ptrs[i]);
        if (!args[i]->reordered) {
          prim_mem[i] = user_mem[i];
          continue;
        }
        const int64_t floats = static_cast<int64_t>((args[i]->prim.get_size() + 3) / 4);
        TX_RETURN_IF_ERROR(ctx->allocate_temp(DT_FLOAT, TensorShape({floats}), &scratch[i]));
        prim_mem[i] = memory(args[i]->prim, eng, scratch[i].data<float>());
        if (i != computed) reorder(*args[i], user_mem[i], prim_mem[i]);
      }
      const int x = 0, w = 1, y = 2;
      switch (dir) {
        case Direction::kForward: {
          std::unordered_map<int, memory> a = {{DNNL_ARG_SRC, prim_mem[x]},
                                               {DNNL_ARG_WEIGHTS, prim_mem[w]},
                                               {DNNL_ARG_DST, prim_mem[y]},
                                               {DNNL_ARG_SCRATCHPAD, scratchpad}};
          if (bias) {
            a.emplace(DNNL_ARG_BIAS,
                      memory(memory::desc({g.out_depth}, memory::data_type::f32, Tag::a), eng,
                             const_cast<float*>(epilogue.bias)));
          }
          p->prim.execute(stream, a);
          break;
        }
        case Direction::kBackwardInput:
          p->prim.execute(stream, {{DNNL_ARG_DIFF_SRC, prim_mem[x]},
                                   {DNNL_ARG_WEIGHTS, prim_mem[w]},
                                   {DNNL_ARG_DIFF_DST, prim_mem[y]},
                                   {DNNL_ARG_SCRATCHPAD, scratchpad}});
          break;
        case Direction::kBackwardFilter:
          p->prim.execute(stream, {{DNNL_ARG_SRC, prim_mem[x]},
                                   {DNNL_ARG_DIFF_WEIGHTS, prim_mem[w]},
                                   {DNNL_ARG_DIFF_DST, prim_mem[y]},
                                   {DNNL_ARG_SCRATCHPAD, scratchpad}});
          break;
      }
      if (args[computed]->reordered) {
        reorder(*args[computed], prim_mem[computed], user_mem[computed]);
      }
      stream.wait();
      return OkStatus();
    });
  }

  int CachedPrimitives() const override {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(cache_.size());
  }

 private:
  // Builds outside the lock (primitive creation JITs code: milliseconds); a concurrent builder of
  // the same key wastes its work, which is harmless.
  std::shared_ptr<const Primitive> Lookup(const Key& key) {
    {
      absl::MutexLock lock(&mu_);
      auto it = cache_.find(key);
      if (it != cache_.end()) return it->second;
    }
    std::shared_ptr<const Primitive> p = Build(key.dir, key.g, key.bias, key.relu);
    absl::MutexLock lock(&mu_);
    if (cache_.size() >= kMaxCachedPrimitives) cache_.clear();
    cache_.emplace(key, p);
    return p;
  }

  mutable absl::Mutex mu_;
  absl::flat_hash_map<Key, std::shared_ptr<const Primitive>> cache_;
};

}  // namespace

std::unique_ptr<DnnlConvCache> NewDnnlConvCache() { return std::make_unique<DnnlConvCacheImpl>(); }
#endif  // TX_HAVE_DNNL

}  // namespace conv
}  // namespace tensorflux
