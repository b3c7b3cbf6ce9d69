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

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/graph.pb.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {
namespace {

using Clock = std::chrono::steady_clock;
using dnnl::memory;
using Tag = memory::format_tag;

constexpr int64_t kN = 64, kH = 28, kW = 28, kCin = 32, kCout = 64, kK = 3;
constexpr double kFlops = 2.0 * kN * kH * kW * kK * kK * kCin * kCout;

enum Op { kForward = 0, kBackpropInput = 1, kBackpropFilter = 2 };
const char* const kOpNames[] = {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"};
enum Variant { kNhwc = 0, kNhwcPre = 1, kBlocked = 2, kBlockedReorder = 3 };
const char* const kVariantNames[] = {"nhwc", "nhwc_pre", "blocked", "blocked_r"};

Tensor Random(const TensorShape& shape, uint32_t seed) {
  Tensor t(DT_FLOAT, shape);
  float* p = t.data<float>();
  uint32_t s = seed;
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<float>(s >> 8) / static_cast<float>(1 << 24) - 0.5f;
  }
  return t;
}

struct Buffers {
  Tensor x = Random({kN, kH, kW, kCin}, 1);
  Tensor w = Random({kK, kK, kCin, kCout}, 2);
  Tensor y = Random({kN, kH, kW, kCout}, 3);  // forward output / out_backprop
};

class Samples {
 public:
  template <typename Fn>
  void Time(Fn&& fn) {
    const auto start = Clock::now();
    fn();
    seconds_.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  double Gflops() {
    if (seconds_.empty()) return 0;
    std::nth_element(seconds_.begin(), seconds_.begin() + seconds_.size() / 2, seconds_.end());
    const double m = seconds_[seconds_.size() / 2];
    return m > 0 ? kFlops / m * 1e-9 : 0;
  }

 private:
  std::vector<double> seconds_;
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

NodeDef* AddNode(GraphDef* g, const char* name, const char* op) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  return n;
}

void Placeholder(GraphDef* g, const char* name, const TensorShape& shape) {
  NodeDef* p = AddNode(g, name, "Placeholder");
  AddNodeAttr("dtype", DT_FLOAT, p);
  AddNodeAttr("shape", PartialTensorShape(shape), p);
}

void SizesConst(GraphDef* g, const char* name, const TensorShape& shape) {
  std::vector<int32_t> v;
  for (int64_t d : shape.dim_sizes()) v.push_back(static_cast<int32_t>(d));
  NodeDef* c = AddNode(g, name, "Const");
  AddNodeAttr("dtype", DT_INT32, c);
  AddNodeAttr("value", Tensor::FromVector<int32_t>(absl::Span<const int32_t>(v), {4}), c);
}

// The graph for `op` and its feeds.
GraphDef ConvGraph(Op op, const Buffers& buf,
                   std::vector<std::pair<std::string, Tensor>>* feeds) {
  GraphDef g;
  NodeDef* conv = nullptr;
  if (op == kForward) {
    Placeholder(&g, "x", buf.x.shape());
    Placeholder(&g, "w", buf.w.shape());
    conv = AddNode(&g, "conv", "Conv2D");
    conv->add_input("x");
    conv->add_input("w");
    *feeds = {{"x", buf.x}, {"w", buf.w}};
  } else if (op == kBackpropInput) {
    SizesConst(&g, "sizes", buf.x.shape());
    Placeholder(&g, "w", buf.w.shape());
    Placeholder(&g, "dy", buf.y.shape());
    conv = AddNode(&g, "conv", "Conv2DBackpropInput");
    for (const char* in : {"sizes", "w", "dy"}) conv->add_input(in);
    *feeds = {{"w", buf.w}, {"dy", buf.y}};
  } else {
    Placeholder(&g, "x", buf.x.shape());
    SizesConst(&g, "sizes", buf.w.shape());
    Placeholder(&g, "dy", buf.y.shape());
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
  auto session = NewSession(SessionOptions());
  if (!session.ok()) {
    state.SkipWithError(session.status().ToString().c_str());
    return;
  }
  Status s = (*session)->Create(ConvGraph(op, buf, &feeds));
  std::vector<Tensor> out;
  if (s.ok()) s = (*session)->Run(feeds, {"conv:0"}, {}, &out);  // builds executor + primitive
  if (!s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return;
  }
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
  Samples session_times, direct_times[4];
  for (auto _ : state) {
    session_times.Time([&] { s = (*session)->Run(feeds, {"conv:0"}, {}, &out); });
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
    for (int v = 0; v < 4; ++v) direct_times[v].Time([&] { direct[v]->Run(); });
  }
  const double sg = session_times.Gflops();
  state.counters["GFLOPS"] = sg;
  for (int v = 0; v < 4; ++v) {
    state.counters[std::string(kVariantNames[v]) + "_GFLOPS"] = direct_times[v].Gflops();
  }
  const double same = direct_times[kNhwc].Gflops();
  state.counters["ratio"] = same > 0 ? sg / same : 0;
  state.SetLabel(direct[kNhwc]->impl());
}

BENCHMARK(BM_ConvSession)
    ->ArgName("op")
    ->DenseRange(0, 2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3.0);

// Console output plus, per (benchmark, op, variant), the best counters over repetitions.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      const std::string name = r.run_name.function_name + "/" + r.run_name.args.substr(
                                   0, r.run_name.args.find('/'));
      for (const auto& [counter, value] : r.counters) {
        double& best = values_[name + "/" + counter];
        best = std::max(best, static_cast<double>(value));
      }
    }
  }

  void PrintSummary() const {
    const char* peak_env = std::getenv("TX_PEAK_GFLOPS");
    const double peak = peak_env != nullptr ? std::atof(peak_env) : 0.0;
    auto get = [&](const std::string& key) {
      auto it = values_.find(key);
      return it == values_.end() ? 0.0 : it->second;
    };
    std::printf("\nConv2D family, float32, N=64 28x28 32->64 3x3 SAME NHWC; GFLOP/s (medians)\n");
    std::printf("%-22s %8s %8s %6s", "op", "Session", "direct", "ratio");
    for (const char* v : kVariantNames) std::printf(" %9s", v);
    std::printf(" %9s %8s\n", "vs_best", "of_peak");
    for (int op = 0; op < 3; ++op) {
      const std::string key = "BM_ConvSession/op:" + std::to_string(op) + "/";
      const double g = get(key + "GFLOPS");
      std::printf("%-22s %8.1f %8.1f %6.3f", kOpNames[op], g, get(key + "nhwc_GFLOPS"),
                  get(key + "ratio"));
      double best = 0;
      for (const char* v : kVariantNames) {
        const double d = get(key + v + "_GFLOPS");
        best = std::max(best, d);
        std::printf(" %9.1f", d);
      }
      std::printf(" %9.3f", best > 0 ? g / best : 0.0);
      if (peak > 0) {
        std::printf(" %8.3f\n", g / peak);
      } else {
        std::printf(" %8s\n", "-");
      }
    }
    if (peak <= 0) std::printf("(set TX_PEAK_GFLOPS from peak_flops_bench for of_peak)\n");
  }

 private:
  std::map<std::string, double> values_;
};

}  // namespace
}  // namespace tensorflux

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  tensorflux::SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.PrintSummary();
  benchmark::Shutdown();
  return 0;
}
#endif  // TX_HAVE_DNNL
