// Direct-loop convolution in float64 (see conv_impl.h): one loop nest over output positions,
// groups, output channels and filter taps serves all three directions; only the statement in the
// innermost loop differs.
#include <algorithm>
#include <cstdint>

#include "tensorflux/kernels/cpu/conv_impl.h"

namespace tensorflux {
namespace conv {
namespace {

struct ActivationStrides {
  int64_t n, h, w, c;
};

ActivationStrides Strides(const ConvGeometry& g, int64_t rows, int64_t cols, int64_t depth) {
  if (g.format == DataFormat::kNHWC) return {rows * cols * depth, cols * depth, depth, 1};
  return {depth * rows * cols, cols, 1, rows * cols};
}

}  // namespace

void ReferenceConv(Direction dir, const ConvGeometry& g, double* input, double* filter,
                   double* output) {
  const ActivationStrides xs = Strides(g, g.in_rows, g.in_cols, g.in_depth);
  const ActivationStrides ys = Strides(g, g.out_rows, g.out_cols, g.out_depth);
  // Filter element (row, col, i, group, o) of HWIO [kh, kw, group_in, out_depth]; output channel
  // group * group_out + o. The depthwise [kh, kw, in, multiplier] layout is the same memory.
  const int64_t fs_i = g.out_depth, fs_w = g.group_in * g.out_depth, fs_h = g.filter_cols * fs_w;
  if (dir == Direction::kForward) {
    std::fill_n(output, g.OutputShape().num_elements(), 0.0);
  } else if (dir == Direction::kBackwardInput) {
    std::fill_n(input, g.InputShape().num_elements(), 0.0);
  } else {
    std::fill_n(filter, g.FilterShape().num_elements(), 0.0);
  }
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t oh = 0; oh < g.out_rows; ++oh) {
      for (int64_t ow = 0; ow < g.out_cols; ++ow) {
        for (int64_t grp = 0; grp < g.groups; ++grp) {
          for (int64_t o = 0; o < g.group_out; ++o) {
            const int64_t oc = grp * g.group_out + o;
            double* y = output + n * ys.n + oh * ys.h + ow * ys.w + oc * ys.c;
            double acc = 0;
            for (int64_t kh = 0; kh < g.filter_rows; ++kh) {
              const int64_t ih = oh * g.stride_rows - g.pad_top + kh * g.dilation_rows;
              if (ih < 0 || ih >= g.in_rows) continue;
              for (int64_t kw = 0; kw < g.filter_cols; ++kw) {
                const int64_t iw = ow * g.stride_cols - g.pad_left + kw * g.dilation_cols;
                if (iw < 0 || iw >= g.in_cols) continue;
                for (int64_t i = 0; i < g.group_in; ++i) {
                  const int64_t ic = grp * g.group_in + i;
                  double* x = input + n * xs.n + ih * xs.h + iw * xs.w + ic * xs.c;
                  double* f = filter + kh * fs_h + kw * fs_w + i * fs_i + oc;
                  switch (dir) {
                    case Direction::kForward: acc += *x * *f; break;
                    case Direction::kBackwardInput: *x += *y * *f; break;
                    case Direction::kBackwardFilter: *f += *y * *x; break;
                  }
                }
              }
            }
            if (dir == Direction::kForward) *y = acc;
          }
        }
      }
    }
  }
}

}  // namespace conv
}  // namespace tensorflux
