// Gradients of the Conv2D family (TensorFlow's nn_grad.py formulas). A convolution is bilinear
// in (input, filter), and each backprop op is the same bilinear map with two arguments swapped,
// so every gradient is one of the other two ops with the forward node's conv attrs (strides,
// padding, explicit_paddings, data_format, dilations, use_cudnn_on_gpu) copied over; sizes come
// from Shape nodes:
//   y = Conv2D(x, w):                      dx = BackpropInput(Shape(x), w, dy)
//                                          dw = BackpropFilter(x, Shape(w), dy)
//   x = BackpropInput(sizes, w, dy)  (dL/dx = g):  dw = BackpropFilter(g, Shape(w), dy)
//                                                  ddy = Conv2D(g, w)
//   w = BackpropFilter(x, sizes, dy) (dL/dw = g):  dx = BackpropInput(Shape(x), g, dy)
//                                                  ddy = Conv2D(x, g)
// The same with DepthwiseConv2dNative and its two backprop ops. The int32 sizes inputs get none.
#include <string>

#include "tensorflux/gradients/gradients.h"

namespace tensorflux {
namespace {

using GradList = std::vector<GradOutput>;

struct ConvFamily {
  const char* forward;
  const char* backprop_input;
  const char* backprop_filter;
};
constexpr ConvFamily kConv2D = {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"};
constexpr ConvFamily kDepthwise = {"DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
                                   "DepthwiseConv2dNativeBackpropFilter"};

// The forward node's attrs other than T (the three ops of a family share them).
GradAttrs ConvAttrsOf(const GradContext& c) {
  GradAttrs attrs;
  for (const char* name : {"strides", "padding", "explicit_paddings", "data_format", "dilations",
                           "use_cudnn_on_gpu"}) {
    auto it = c.op().def().attr().find(name);
    if (it != c.op().def().attr().end()) attrs.emplace_back(name, it->second);
  }
  return attrs;
}

StatusOr<GradOutput> BackpropInput(GradContext* c, const ConvFamily& f, GradOutput x_like,
                                   GradOutput w, GradOutput dy) {
  TX_ASSIGN_OR_RETURN(GradOutput sizes, c->Op("Shape", {x_like}));
  return c->Op(f.backprop_input, {sizes, w, dy}, ConvAttrsOf(*c));
}

StatusOr<GradOutput> BackpropFilter(GradContext* c, const ConvFamily& f, GradOutput x,
                                    GradOutput w_like, GradOutput dy) {
  TX_ASSIGN_OR_RETURN(GradOutput sizes, c->Op("Shape", {w_like}));
  return c->Op(f.backprop_filter, {x, sizes, dy}, ConvAttrsOf(*c));
}

template <const ConvFamily& F>
Status ForwardGrad(GradContext* c, GradList* dx) {
  const GradOutput x = c->input(0), w = c->input(1), dy = c->grad(0);
  TX_ASSIGN_OR_RETURN((*dx)[0], BackpropInput(c, F, x, w, dy));
  TX_ASSIGN_OR_RETURN((*dx)[1], BackpropFilter(c, F, x, w, dy));
  return OkStatus();
}

template <const ConvFamily& F>
Status BackpropInputGrad(GradContext* c, GradList* dx) {
  const GradOutput w = c->input(1), dy = c->input(2), g = c->grad(0);
  TX_ASSIGN_OR_RETURN((*dx)[1], BackpropFilter(c, F, g, w, dy));
  TX_ASSIGN_OR_RETURN((*dx)[2], c->Op(F.forward, {g, w}, ConvAttrsOf(*c)));
  return OkStatus();
}

template <const ConvFamily& F>
Status BackpropFilterGrad(GradContext* c, GradList* dx) {
  const GradOutput x = c->input(0), dy = c->input(2), g = c->grad(0);
  TX_ASSIGN_OR_RETURN((*dx)[0], BackpropInput(c, F, x, g, dy));
  TX_ASSIGN_OR_RETURN((*dx)[2], c->Op(F.forward, {x, g}, ConvAttrsOf(*c)));
  return OkStatus();
}

REGISTER_GRADIENT("Conv2D", ForwardGrad<kConv2D>);
REGISTER_GRADIENT("Conv2DBackpropInput", BackpropInputGrad<kConv2D>);
REGISTER_GRADIENT("Conv2DBackpropFilter", BackpropFilterGrad<kConv2D>);
REGISTER_GRADIENT("DepthwiseConv2dNative", ForwardGrad<kDepthwise>);
REGISTER_GRADIENT("DepthwiseConv2dNativeBackpropInput", BackpropInputGrad<kDepthwise>);
REGISTER_GRADIENT("DepthwiseConv2dNativeBackpropFilter", BackpropFilterGrad<kDepthwise>);

}  // namespace
}  // namespace tensorflux
