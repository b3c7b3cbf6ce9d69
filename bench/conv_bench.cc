// float32 Conv2D family on the shape: N=64, 28x28, 32 -> 64 channels, 3x3, SAME, stride
// 1, NHWC. One benchmark per op (Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter): each
// iteration times Session::Run of Placeholder(s) -> op (input_sizes / filter_sizes are Consts)
// and then the same computation with oneDNN called directly in this process, in four layouts:
//   nhwc       NHWC activations, weights format_tag::any reordered from/to HWIO every call:
//              what the kernel does (the Session/direct "ratio" is against this one);
//   nhwc_pre   NHWC activations, weights already in oneDNN's layout (the primitive alone);
//   blocked    every tensor in oneDNN's chosen (blocked) layout, the primitive alone: oneDNN's
//              best case, which NHWC tensors cannot reach without reorders;
//   blocked_r  the blocked primitive plus the reorders of NHWC activations and HWIO weights in
//              and of the result out (what an NHWC kernel using blocked layouts would pay).
// Interleaving keeps the comparison fair when other processes share the machine.
// Figures: GFLOP/s from the MEDIAN call time, 2*N*Ho*Wo*kh*kw*Cin*Cout flops per op. The summary
// prints per op: Session, direct nhwc, their ratio (goal >= 0.9), every variant, Session over the
// best variant and, with TX_PEAK_GFLOPS set (peak_flops_bench's all-core figure), the fraction of
// peak (goal >= 0.85 for the forward). oneDNN runs on the calling thread's OpenMP team (all
// cores; OMP_NUM_THREADS to change).
#ifndef TX_HAVE_DNNL
#include <cstdio>
int main() {
  std::puts("conv_bench: built without oneDNN, nothing to measure");
  return 0;
}
#else
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"

namespace tensorflux::bench {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

constexpr int64_t kN = 64, kH = 28, kW = 28, kCin = 32, kCout = 64, kK = 3;
constexpr double kFlops = 2.0 * kN * kH * kW * kK * kK * kCin * kCout;

enum Op { kForward = 0, kBackpropInput = 1, kBackpropFilter = 2 };
const char* const kOpNames[] = {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"};
enum Variant { kNhwc = 0, kNhwcPre = 1, kBlocked = 2, kBlockedReorder = 3 };
const char* const kVariantNames[] = {"nhwc", "nhwc_pre", "blocked", "blocked_r"};

struct Buffers {
  Tensor x = RandomFloats(TensorShape({kN, kH, kW, kCin}), 1);
  Tensor w = RandomFloats(TensorShape({kK, kK, kCin, kCout}), 2);
  Tensor y = RandomFloats(TensorShape({kN, kH, kW, kCout}), 3);  // forward output / out_backprop
};

// oneDNN called directly: one op in one layout variant, on preallocated buffers.
class Direct {
 public:
  Direct(Op op, Variant v, Buffers* buf) : op_(op), eng_(dnnl::engine::kind::cpu, 0), s_(eng_) {
    const memory::dims xd = {kN, kCin, kH, kW}, yd = {kN, kCout, kH, kW};
    const memory::dims wd = {kCout, kCin, kK, kK};
    const memory::desc x_user(xd, memory::data_type::f32, Tag::nhwc);
    const memory::desc y_user(yd, memory::data_type::f32, Tag::nhwc);
    const memory::desc w_user(wd, memory::data_type::f32, Tag::hwio);
    const bool blocked = v == kBlocked || v == kBlockedReorder;
    const memory::desc x_req = blocked ? memory::desc(xd, memory::data_type::f32, Tag::any) : x_user;
    const memory::desc y_req = blocked ? memory::desc(yd, memory::data_type::f32, Tag::any) : y_user;
    const memory::desc w_req(wd, memory::data_type::f32, Tag::any);
    const memory::dims st = {1, 1}, dil = {0, 0}, pad = {1, 1};
    const auto alg = dnnl::algorithm::convolution_direct;
    dnnl::convolution_forward::primitive_desc fwd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, x_req, w_req,
                                        y_req, st, dil, pad, pad),
        eng_);
    memory::desc x_prim, w_prim, y_prim;
    if (op == kForward) {
      prim_ = dnnl::convolution_forward(fwd);
      x_prim = fwd.src_desc(), w_prim = fwd.weights_desc(), y_prim = fwd.dst_desc();
      impl_ = fwd.impl_info_str();
    } else if (op == kBackpropInput) {
      dnnl::convolution_backward_data::primitive_desc pd(
          dnnl::convolution_backward_data::desc(alg, x_req, w_req, y_req, st, dil, pad, pad), eng_,
          fwd);
      prim_ = dnnl::convolution_backward_data(pd);
      x_prim = pd.diff_src_desc(), w_prim = pd.weights_desc(), y_prim = pd.diff_dst_desc();
      impl_ = pd.impl_info_str();
    } else {
      dnnl::convolution_backward_weights::primitive_desc pd(
          dnnl::convolution_backward_weights::desc(alg, x_req, w_req, y_req, st, dil, pad, pad),
          eng_, fwd);
      prim_ = dnnl::convolution_backward_weights(pd);
      x_prim = pd.src_desc(), w_prim = pd.diff_weights_desc(), y_prim = pd.diff_dst_desc();
      impl_ = pd.impl_info_str();
    }
    // The computed argument: x for backprop input, w for backprop filter, y for forward.
    const int out = op == kForward ? 2 : op == kBackpropInput ? 0 : 1;
    const memory::desc user[3] = {x_user, w_user, y_user};
    const memory::desc prim[3] = {x_prim, w_prim, y_prim};
    float* ptr[3] = {buf->x.data<float>(), buf->w.data<float>(), buf->y.data<float>()};
    for (int i = 0; i < 3; ++i) {
      user_[i] = memory(user[i], eng_, ptr[i]);
      prim_mem_[i] = prim[i] == user[i] ? user_[i] : memory(prim[i], eng_);
      // Per-call reorders: variant nhwc reorders the weights, blocked_r everything.
      const bool per_call = prim[i] != user[i] && (v == kBlockedReorder || (v == kNhwc && i == 1));
      if (prim[i] != user[i]) {
        dnnl::reorder in(user_[i], prim_mem_[i]);
        if (i != out) in.execute(s_, user_[i], prim_mem_[i]);  // pre-reordered once
      }
      if (!per_call) continue;
      if (i == out) {
        after_.push_back({dnnl::reorder(prim_mem_[i], user_[i]), prim_mem_[i], user_[i]});
      } else {
        before_.push_back({dnnl::reorder(user_[i], prim_mem_[i]), user_[i], prim_mem_[i]});
      }
    }
    s_.wait();
  }

  void Run() {
    for (auto& r : before_) r.r.execute(s_, r.from, r.to);
    if (op_ == kForward) {
      prim_.execute(s_, {{DNNL_ARG_SRC, prim_mem_[0]}, {DNNL_ARG_WEIGHTS, prim_mem_[1]},
                         {DNNL_ARG_DST, prim_mem_[2]}});
    } else if (op_ == kBackpropInput) {
      prim_.execute(s_, {{DNNL_ARG_DIFF_SRC, prim_mem_[0]}, {DNNL_ARG_WEIGHTS, prim_mem_[1]},
                         {DNNL_ARG_DIFF_DST, prim_mem_[2]}});
    } else {
      prim_.execute(s_, {{DNNL_ARG_SRC, prim_mem_[0]}, {DNNL_ARG_DIFF_WEIGHTS, prim_mem_[1]},
                         {DNNL_ARG_DIFF_DST, prim_mem_[2]}});
    }
    for (auto& r : after_) r.r.execute(s_, r.from, r.to);
    s_.wait();
  }
  const std::string& impl() const { return impl_; }

 private:
  struct Reorder {
    dnnl::reorder r;
    memory from, to;
  };
  Op op_;
  dnnl::engine eng_;
  dnnl::stream s_;
  dnnl::primitive prim_;
  memory user_[3], prim_mem_[3];
  std::vector<Reorder> before_, after_;
  std::string impl_;
};

void SizesConst(GraphDef* g, const char* name, const TensorShape& shape) {
  std::vector<int32_t> v;
  for (int64_t d : shape.dim_sizes()) v.push_back(static_cast<int32_t>(d));
  AddConst(g, name, Tensor::FromVector<int32_t>(absl::Span<const int32_t>(v), {4}));
}

// The graph for `op` and its feeds.
GraphDef ConvGraph(Op op, const Buffers& buf,
                   std::vector<std::pair<std::string, Tensor>>* feeds) {
  GraphDef g;
  NodeDef* conv = nullptr;
  if (op == kForward) {
    AddPlaceholder(&g, "x", buf.x.shape());
    AddPlaceholder(&g, "w", buf.w.shape());
    conv = AddNode(&g, "conv", "Conv2D");
    conv->add_input("x");
    conv->add_input("w");
    *feeds = {{"x", buf.x}, {"w", buf.w}};
  } else if (op == kBackpropInput) {
    SizesConst(&g, "sizes", buf.x.shape());
    AddPlaceholder(&g, "w", buf.w.shape());
    AddPlaceholder(&g, "dy", buf.y.shape());
    conv = AddNode(&g, "conv", "Conv2DBackpropInput");
    for (const char* in : {"sizes", "w", "dy"}) conv->add_input(in);
    *feeds = {{"w", buf.w}, {"dy", buf.y}};
  } else {
    AddPlaceholder(&g, "x", buf.x.shape());
    SizesConst(&g, "sizes", buf.w.shape());
    AddPlaceholder(&g, "dy", buf.y.shape());
    conv = AddNode(&g, "conv", "Conv2DBackpropFilter");
    for (const char* in : {"x", "sizes", "dy"}) conv->add_input(in);
    *feeds = {{"x", buf.x}, {"dy", buf.y}};
  }
  AddNodeAttr("T", DT_FLOAT, conv);
  AddNodeAttr("strides", std::vector<int64_t>{1, 1, 1, 1}, conv);
  AddNodeAttr("padding", "SAME", conv);
  return g;
}

void BM_ConvSession(benchmark::State& state) {
  const Op op = static_cast<Op>(state.range(0));
  Buffers buf;
  std::vector<std::pair<std::string, Tensor>> feeds;
  const GraphDef graph = ConvGraph(op, buf, &feeds);
  auto session = WarmSession(state, graph, feeds, "conv:0");  // builds executor + primitive
  if (session == nullptr) return;
  Buffers direct_buf;
  std::vector<std::unique_ptr<Direct>> direct;
  try {
    for (int v = 0; v < 4; ++v) {
      direct.push_back(std::make_unique<Direct>(op, static_cast<Variant>(v), &direct_buf));
      direct.back()->Run();
    }
  } catch (const dnnl::error& e) {
    state.SkipWithError(e.what());
    return;
  }
  // Each iteration times the Session call and then every direct variant, so all of them see the
  // same machine load.
  CallTimes session_times, direct_times[4];
  std::vector<std::pair<std::function<void()>, CallTimes*>> refs;
  for (int v = 0; v < 4; ++v) refs.push_back({[&, v] { direct[v]->Run(); }, &direct_times[v]});
  if (!TimeInterleaved(state, session.get(), feeds, "conv:0", &session_times, refs)) return;
  const double sg = session_times.GigaPerSecond(kFlops);
  state.counters["GFLOPS"] = sg;
  for (int v = 0; v < 4; ++v) {
    state.counters[std::string(kVariantNames[v]) + "_GFLOPS"] =
        direct_times[v].GigaPerSecond(kFlops);
  }
  state.counters["ratio"] = Ratio(sg, direct_times[kNhwc].GigaPerSecond(kFlops));
  state.SetLabel(direct[kNhwc]->impl());
}

BENCHMARK(BM_ConvSession)
    ->ArgName("op")
    ->DenseRange(0, 2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3.0);

class ConvSummary : public SummaryReporter {
 public:
  void PrintSummary() const override {
    const double peak = PeakGflopsFromEnv();
    std::printf("\nConv2D family, float32, N=64 28x28 32->64 3x3 SAME NHWC; GFLOP/s (medians)\n");
    std::printf("%-22s %8s %8s %6s", "op", "Session", "direct", "ratio");
    for (const char* v : kVariantNames) std::printf(" %9s", v);
    std::printf(" %9s %8s\n", "vs_best", "of_peak");
    for (int op = 0; op < 3; ++op) {
      const std::string key = "BM_ConvSession/op:" + std::to_string(op);
      const double g = Get(key, "GFLOPS");
      if (g <= 0) continue;
      std::printf("%-22s %8.1f %8.1f %6.3f", kOpNames[op], g, Get(key, "nhwc_GFLOPS"),
                  Get(key, "ratio"));
      double best = 0;
      for (const char* v : kVariantNames) {
        const double d = Get(key, std::string(v) + "_GFLOPS");
        best = std::max(best, d);
        std::printf(" %9.1f", d);
      }
      std::printf(" %9.3f", Ratio(g, best));
      PrintOfPeak(g, peak);
    }
    if (peak <= 0) std::printf("(set TX_PEAK_GFLOPS from peak_flops_bench for of_peak)\n");
  }
};

}  // namespace
}  // namespace tensorflux::bench

int main(int argc, char** argv) {
  tensorflux::bench::ConvSummary reporter;
  return tensorflux::bench::RunBenchmarks(argc, argv, &reporter);
}
#endif  // TX_HAVE_DNNL
