// Shared by the pooling kernel tests (pooling_ops_test.cc, fused_pool_grad_test.cc): a window
// configuration, its attrs on a KernelRunner, and float64 reference loops for max and average
// pooling and their gradients, written from TF's documented window formulas.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernel_test_util.h"

namespace tensorflux {
namespace pool_test {

struct Cfg {
  std::vector<int64_t> in;  // N, H, W, C
  int kr, kc, sr, sc;
  std::string padding;
  std::vector<int64_t> explicit_pads;  // top, bottom, left, right (EXPLICIT only)
};

// Output size and leading padding of one dimension, computed from TF's documented formulas.
inline void Geometry(const Cfg& c, int dim, int64_t* out, int64_t* pad) {
  const int64_t in = c.in[dim], k = dim == 1 ? c.kr : c.kc, s = dim == 1 ? c.sr : c.sc;
  if (c.padding == "VALID") {
    *out = (in - k) / s + 1;
    *pad = 0;
  } else if (c.padding == "SAME") {
    *out = (in + s - 1) / s;
    *pad = std::max<int64_t>((*out - 1) * s + k - in, 0) / 2;
  } else {
    const int64_t before = c.explicit_pads[dim == 1 ? 0 : 2];
    const int64_t after = c.explicit_pads[dim == 1 ? 1 : 3];
    *out = (in + before + after - k) / s + 1;
    *pad = before;
  }
}

struct Ref {
  std::vector<int64_t> out_shape;
  std::vector<double> max, avg;          // forward
  std::vector<double> max_grad, avg_grad;  // backward of `grad`
  std::vector<int64_t> max_at;             // flat input index of each window's first maximum
};

// Visits every window position (ky, kx) of every output, skipping padded positions.
inline Ref Reference(const Cfg& c, const std::vector<double>& x, const std::vector<double>& grad) {
  int64_t oh, ow, pt, pl;
  Geometry(c, 1, &oh, &pt);
  Geometry(c, 2, &ow, &pl);
  const int64_t N = c.in[0], H = c.in[1], W = c.in[2], C = c.in[3];
  Ref r;
  r.out_shape = {N, oh, ow, C};
  r.max.assign(N * oh * ow * C, 0);
  r.avg.assign(N * oh * ow * C, 0);
  r.max_grad.assign(x.size(), 0);
  r.avg_grad.assign(x.size(), 0);
  r.max_at.assign(N * oh * ow * C, -1);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t ch = 0; ch < C; ++ch) {
          double best = -std::numeric_limits<double>::infinity(), sum = 0;
          int64_t best_at = -1, count = 0;
          std::vector<int64_t> valid;
          for (int ky = 0; ky < c.kr; ++ky)
            for (int kx = 0; kx < c.kc; ++kx) {
              const int64_t y = i * c.sr - pt + ky, xx = j * c.sc - pl + kx;
              if (y < 0 || y >= H || xx < 0 || xx >= W) continue;
              const int64_t at = ((n * H + y) * W + xx) * C + ch;
              if (best_at < 0 || x[at] > best) best = x[at], best_at = at;
              sum += x[at];
              ++count;
              valid.push_back(at);
            }
          const int64_t o = ((n * oh + i) * ow + j) * C + ch;
          r.max[o] = best;
          r.max_at[o] = best_at;
          r.avg[o] = sum / count;
          if (!grad.empty()) {
            r.max_grad[best_at] += grad[o];
            for (int64_t at : valid) r.avg_grad[at] += grad[o] / count;
          }
        }
  return r;
}

inline test::KernelRunner& WindowAttrs(test::KernelRunner& r, const Cfg& c) {
  r.Attr("ksize", std::vector<int64_t>{1, c.kr, c.kc, 1})
      .Attr("strides", std::vector<int64_t>{1, c.sr, c.sc, 1})
      .Attr("padding", c.padding);
  if (c.padding == "EXPLICIT") {
    const auto& p = c.explicit_pads;
    r.Attr("explicit_paddings", std::vector<int64_t>{0, 0, p[0], p[1], p[2], p[3], 0, 0});
  }
  return r;
}

}  // namespace pool_test
}  // namespace tensorflux
