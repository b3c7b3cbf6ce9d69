"""2-D convolutions (ops/conv_ops.cc): Conv2D, its two backprops, DepthwiseConv2dNative and its
two backprops, and _FusedConv2D (Conv2D + BiasAdd [+ activation], made by the remapper).

Tolerances. TF (Eigen contractions, one thread) and TensorFlux (oneDNN for float32 and the 16-bit
floats, direct loops for float64) sum each output's K = kh * kw * in_depth (forward), kh * kw *
out_depth (input gradient) or N * out_rows * out_cols (filter gradient) products in different
orders. With inputs of magnitude <= 2 every product is <= 4 and the two results differ by at
most 2 * (K - 1) * u * sum|products| <= 8 * K^2 * u (u the unit roundoff): _tol(K, dtype) is
that bound as an absolute tolerance. float16: TensorFlux widens to float32 and rounds the result
once; TF accumulates in float16 pieces, so the float16 bound is the same formula with u = 2^-11
(the data's sums stay far below it in practice).
"""

import numpy as np

from conformance.table import Case, Rand

_U = {"float16": 2.0 ** -11, "float32": 2.0 ** -24, "float64": 2.0 ** -53}
FLOATS = ("float16", "float32", "float64")


def _tol(k, dtype):
    """(rtol, atol) for sums of k products of magnitude <= 4 (see the module docstring)."""
    u = _U[dtype]
    return (4 * u, 8 * k * k * u)


# Reasons for the cases TF's CPU kernels refuse and TensorFlux's run (_DEVIATIONS, at the end).
DEV_NCHW = "TensorFlux's CPU Conv2D / DepthwiseConv2dNative take NCHW (TF's CPU kernels refuse it)"
DEV_DILATED = "TensorFlux's CPU kernels take dilations here (TF's CPU kernel refuses them)"
DEV_GROUPED = "TensorFlux's CPU backprops take grouped convolutions (TF's CPU refuses them)"
DEV_STRIDES = "TensorFlux's depthwise kernels take unequal row/col strides (TF's CPU refuses them)"


def _conv(op, inputs, attrs, variant, dtype, k, grad=(), grad_k=None, const=(), **kw):
    return Case(op, inputs, attrs, variant=variant, dtype=dtype, grad=grad, const=const,
                tol=_tol(k, dtype), grad_tol=_tol(grad_k or k, dtype) if grad else None, **kw)


def _sizes(*v):
    return np.array(v, np.int32)


def _s(*strides):
    return list(strides)


CASES = []

# ---------------------------------------------------------------- Conv2D
for dt in FLOATS:
    # VALID, stride 1: K = 2*2*2 = 8; the input gradient sums kh*kw*out = 12 terms, the filter
    # gradient N*3*3 = 9.
    CASES.append(_conv("Conv2D", {"input": Rand((1, 4, 4, 2)), "filter": Rand((2, 2, 2, 3))},
                       {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "valid", dt, 8,
                       grad=("input", "filter"), grad_k=12))
for dt in ("float32", "float64"):
    CASES += [
        # SAME, stride 2, odd input: uneven padding (TF pads more after). K = 3*3*2 = 18.
        _conv("Conv2D", {"input": Rand((2, 5, 5, 2)), "filter": Rand((3, 3, 2, 2))},
              {"strides": _s(1, 2, 2, 1), "padding": "SAME"}, "same_stride2", dt, 18,
              grad=("input", "filter"), grad_k=18),
        _conv("Conv2D", {"input": Rand((1, 3, 4, 2)), "filter": Rand((2, 3, 2, 2))},
              {"strides": _s(1, 1, 2, 1), "padding": "SAME"}, "same_rect", dt, 12,
              grad=("input", "filter"), grad_k=12),
        _conv("Conv2D", {"input": Rand((1, 4, 3, 1)), "filter": Rand((2, 2, 1, 2))},
              {"strides": _s(1, 1, 1, 1), "padding": "EXPLICIT",
               "explicit_paddings": [0, 0, 1, 2, 2, 0, 0, 0]}, "explicit", dt, 4,
              grad=("input", "filter"), grad_k=8),
        _conv("Conv2D", {"input": Rand((1, 5, 5, 1)), "filter": Rand((2, 2, 1, 2))},
              {"strides": _s(1, 1, 1, 1), "padding": "VALID", "dilations": [1, 2, 2, 1]},
              "dilated", dt, 4),
        _conv("Conv2D", {"input": Rand((1, 5, 5, 1)), "filter": Rand((2, 2, 1, 1))},
              {"strides": _s(1, 2, 2, 1), "padding": "SAME", "dilations": [1, 2, 1, 1]},
              "dilated_same_strided", dt, 4),
        # Grouped: in depth 4, filter in depth 2 -> 2 groups.
        _conv("Conv2D", {"input": Rand((1, 3, 3, 4)), "filter": Rand((2, 2, 2, 4))},
              {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "grouped", dt, 8),
        # 1x1 filter: a matmul over the channels.
        _conv("Conv2D", {"input": Rand((2, 2, 2, 3)), "filter": Rand((1, 1, 3, 2))},
              {"strides": _s(1, 1, 1, 1), "padding": "SAME"}, "pointwise", dt, 3,
              grad=("input", "filter"), grad_k=8),
    ]
CASES += [
    # TF's CPU Conv2D refuses NCHW.
    _conv("Conv2D", {"input": Rand((1, 2, 3, 3)), "filter": Rand((2, 2, 2, 2))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID", "data_format": "NCHW"}, "nchw",
          "float32", 8),
    _conv("Conv2D", {"input": Rand((0, 4, 4, 2)), "filter": Rand((2, 2, 2, 3))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "empty_batch", "float32", 8),
    _conv("Conv2D", {"input": Rand((1, 4, 4, 0)), "filter": Rand((2, 2, 0, 3))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "empty_depth", "float32", 8),
    _conv("Conv2D", {"input": Rand((1, 3, 3, 1)), "filter": Rand((2, 2, 1, 0))},
          {"strides": _s(1, 1, 1, 1), "padding": "SAME"}, "empty_out_depth", "float32", 8),
    # inf and NaN spread to the windows holding them (inf*0 would be NaN: no zeros in filter).
    _conv("Conv2D", {"input": np.array([1.0, np.inf, 0.5, -1.0, np.nan, 2.0, -np.inf, 0.25,
                                        1.5], np.float32).reshape(1, 3, 3, 1),
                     "filter": np.array([0.5, -1.0, 2.0, 1.5], np.float32).reshape(2, 2, 1, 1)},
          {"strides": _s(1, 1, 1, 1), "padding": "SAME"}, "specials", "float32", 4),
    # int32: TF's CPU has an int32 Conv2D kernel, TensorFlux none: refused there (NotFound).
    # Errors.
    _conv("Conv2D", {"input": Rand((1, 4, 4, 3)), "filter": Rand((2, 2, 2, 3))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "depth_mismatch", "float32", 8),
    _conv("Conv2D", {"input": Rand((1, 2, 2, 1)), "filter": Rand((3, 3, 1, 1))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "filter_too_large", "float32", 8),
    _conv("Conv2D", {"input": Rand((1, 4, 4, 1)), "filter": Rand((2, 2, 1, 1))},
          {"strides": _s(2, 1, 1, 1), "padding": "VALID"}, "batch_stride", "float32", 8),
    _conv("Conv2D", {"input": Rand((1, 4, 4, 1)), "filter": Rand((2, 2, 1, 1))},
          {"strides": _s(1, 1, 1), "padding": "VALID"}, "strides_length", "float32", 8),
    _conv("Conv2D", {"input": Rand((1, 4, 4, 1)), "filter": Rand((2, 2, 1, 1))},
          {"strides": _s(1, 0, 1, 1), "padding": "VALID"}, "zero_stride", "float32", 8),
    _conv("Conv2D", {"input": Rand((1, 4, 4, 1)), "filter": Rand((2, 2, 1, 1))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID", "dilations": [2, 1, 1, 1]},
          "batch_dilation", "float32", 8),
    _conv("Conv2D", {"input": Rand((1, 4, 4, 1)), "filter": Rand((2, 2, 1, 1))},
          {"strides": _s(1, 1, 1, 1), "padding": "EXPLICIT",
           "explicit_paddings": [0, 0, 1, 1]}, "explicit_length", "float32", 8),
    _conv("Conv2D", {"input": Rand((1, 4, 4, 1)), "filter": Rand((2, 2, 1, 1))},
          {"strides": _s(1, 1, 1, 1), "padding": "EXPLICIT",
           "explicit_paddings": [0, 0, -1, 1, 0, 0, 0, 0]}, "explicit_negative", "float32", 8),
    _conv("Conv2D", {"input": Rand((1, 4, 4, 1)), "filter": Rand((2, 2, 1, 1))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID",
           "explicit_paddings": [0, 0, 1, 1, 1, 1, 0, 0]}, "explicit_not_explicit", "float32",
          8),
    _conv("Conv2D", {"input": Rand((4, 4, 1)), "filter": Rand((2, 2, 1, 1))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "input_rank3", "float32", 8),
]

# ---------------------------------------------------------------- Conv2D backprops
# Conv2DBackpropInput(input_sizes, filter, out_backprop): K = kh*kw*out_depth.
for dt in FLOATS:
    CASES.append(_conv("Conv2DBackpropInput",
                       {"input_sizes": _sizes(1, 4, 4, 2), "filter": Rand((2, 2, 2, 3)),
                        "out_backprop": Rand((1, 3, 3, 3))},
                       {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "valid", dt, 12,
                       grad=("filter", "out_backprop"), grad_k=9, const=("input_sizes",)))
    CASES.append(_conv("Conv2DBackpropFilter",
                       {"input": Rand((1, 4, 4, 2)), "filter_sizes": _sizes(2, 2, 2, 3),
                        "out_backprop": Rand((1, 3, 3, 3))},
                       {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "valid", dt, 9,
                       grad=("input", "out_backprop"), grad_k=12, const=("filter_sizes",)))
for dt in ("float32", "float64"):
    CASES += [
        _conv("Conv2DBackpropInput",
              {"input_sizes": _sizes(2, 5, 5, 2), "filter": Rand((3, 3, 2, 2)),
               "out_backprop": Rand((2, 3, 3, 2))},
              {"strides": _s(1, 2, 2, 1), "padding": "SAME"}, "same_stride2", dt, 18,
              grad=("filter", "out_backprop"), grad_k=18, const=("input_sizes",)),
        _conv("Conv2DBackpropInput",
              {"input_sizes": _sizes(1, 4, 3, 1), "filter": Rand((2, 2, 1, 2)),
               "out_backprop": Rand((1, 6, 4, 2))},
              {"strides": _s(1, 1, 1, 1), "padding": "EXPLICIT",
               "explicit_paddings": [0, 0, 1, 2, 2, 0, 0, 0]}, "explicit", dt, 8,
              grad=("filter", "out_backprop"), grad_k=12, const=("input_sizes",)),
        _conv("Conv2DBackpropFilter",
              {"input": Rand((2, 5, 5, 2)), "filter_sizes": _sizes(3, 3, 2, 2),
               "out_backprop": Rand((2, 3, 3, 2))},
              {"strides": _s(1, 2, 2, 1), "padding": "SAME"}, "same_stride2", dt, 18,
              grad=("input", "out_backprop"), grad_k=18, const=("filter_sizes",)),
        _conv("Conv2DBackpropFilter",
              {"input": Rand((1, 4, 3, 1)), "filter_sizes": _sizes(2, 2, 1, 2),
               "out_backprop": Rand((1, 6, 4, 2))},
              {"strides": _s(1, 1, 1, 1), "padding": "EXPLICIT",
               "explicit_paddings": [0, 0, 1, 2, 2, 0, 0, 0]}, "explicit", dt, 24,
              grad=("input", "out_backprop"), grad_k=8, const=("filter_sizes",)),
    ]
CASES += [
    # TF's CPU kernels refuse dilations, groups and NCHW in the backprops.
    _conv("Conv2DBackpropInput",
          {"input_sizes": _sizes(1, 5, 5, 1), "filter": Rand((2, 2, 1, 2)),
           "out_backprop": Rand((1, 3, 3, 2))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID", "dilations": [1, 2, 2, 1]},
          "dilated", "float32", 8, const=("input_sizes",)),
    _conv("Conv2DBackpropInput",
          {"input_sizes": _sizes(1, 3, 3, 4), "filter": Rand((2, 2, 2, 4)),
           "out_backprop": Rand((1, 2, 2, 4))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "grouped", "float32", 8,
          const=("input_sizes",)),
    _conv("Conv2DBackpropInput",
          {"input_sizes": _sizes(1, 2, 3, 3), "filter": Rand((2, 2, 2, 2)),
           "out_backprop": Rand((1, 2, 1, 2))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID", "data_format": "NCHW"}, "nchw",
          "float32", 8, const=("input_sizes",)),
    _conv("Conv2DBackpropFilter",
          {"input": Rand((1, 5, 5, 1)), "filter_sizes": _sizes(2, 2, 1, 2),
           "out_backprop": Rand((1, 3, 3, 2))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID", "dilations": [1, 2, 2, 1]},
          "dilated", "float32", 9, const=("filter_sizes",)),
    _conv("Conv2DBackpropFilter",
          {"input": Rand((1, 3, 3, 4)), "filter_sizes": _sizes(2, 2, 2, 4),
           "out_backprop": Rand((1, 2, 2, 4))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "grouped", "float32", 4,
          const=("filter_sizes",)),
    _conv("Conv2DBackpropFilter",
          {"input": Rand((1, 2, 3, 3)), "filter_sizes": _sizes(2, 2, 2, 2),
           "out_backprop": Rand((1, 2, 1, 2))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID", "data_format": "NCHW"}, "nchw",
          "float32", 4, const=("filter_sizes",)),
    # input_sizes with only the spatial dims.
    _conv("Conv2DBackpropInput",
          {"input_sizes": _sizes(4, 4), "filter": Rand((2, 2, 2, 3)),
           "out_backprop": Rand((1, 3, 3, 3))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "sizes_2d", "float32", 12,
          const=("input_sizes",)),
    # input_sizes not constant: the static shape is unknown.
    _conv("Conv2DBackpropInput",
          {"input_sizes": _sizes(1, 4, 4, 2), "filter": Rand((2, 2, 2, 3)),
           "out_backprop": Rand((1, 3, 3, 3))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "sizes_fed", "float32", 12),
    _conv("Conv2DBackpropInput",
          {"input_sizes": _sizes(0, 4, 4, 2), "filter": Rand((2, 2, 2, 3)),
           "out_backprop": Rand((0, 3, 3, 3))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "empty_batch", "float32", 12,
          const=("input_sizes",)),
    _conv("Conv2DBackpropInput",
          {"input_sizes": _sizes(1, 4, 4, 2), "filter": Rand((2, 2, 2, 3)),
           "out_backprop": Rand((1, 2, 2, 3))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "out_backprop_mismatch", "float32",
          12, const=("input_sizes",)),
    _conv("Conv2DBackpropInput",
          {"input_sizes": _sizes(1, 4, 4), "filter": Rand((2, 2, 2, 3)),
           "out_backprop": Rand((1, 3, 3, 3))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "sizes_length", "float32", 12,
          const=("input_sizes",)),
    _conv("Conv2DBackpropFilter",
          {"input": Rand((0, 4, 4, 2)), "filter_sizes": _sizes(2, 2, 2, 3),
           "out_backprop": Rand((0, 3, 3, 3))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "empty_batch", "float32", 9,
          const=("filter_sizes",)),
    _conv("Conv2DBackpropFilter",
          {"input": Rand((1, 4, 4, 2)), "filter_sizes": _sizes(2, 2, 2, 3),
           "out_backprop": Rand((1, 3, 3, 3))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "sizes_fed", "float32", 9),
    _conv("Conv2DBackpropFilter",
          {"input": Rand((1, 4, 4, 2)), "filter_sizes": _sizes(2, 2, 2, 3),
           "out_backprop": Rand((1, 3, 2, 3))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "out_backprop_mismatch", "float32",
          9, const=("filter_sizes",)),
]

# ---------------------------------------------------------------- depthwise
# DepthwiseConv2dNative: K = kh*kw per output; input gradient kh*kw*multiplier; filter
# gradient N*out_rows*out_cols.
for dt in FLOATS:
    CASES.append(_conv("DepthwiseConv2dNative",
                       {"input": Rand((1, 4, 4, 2)), "filter": Rand((2, 2, 2, 2))},
                       {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "valid", dt, 4,
                       grad=("input", "filter"), grad_k=9))
    CASES.append(_conv("DepthwiseConv2dNativeBackpropInput",
                       {"input_sizes": _sizes(1, 4, 4, 2), "filter": Rand((2, 2, 2, 2)),
                        "out_backprop": Rand((1, 3, 3, 4))},
                       {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "valid", dt, 8,
                       grad=("filter", "out_backprop"), grad_k=9, const=("input_sizes",)))
    CASES.append(_conv("DepthwiseConv2dNativeBackpropFilter",
                       {"input": Rand((1, 4, 4, 2)), "filter_sizes": _sizes(2, 2, 2, 2),
                        "out_backprop": Rand((1, 3, 3, 4))},
                       {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "valid", dt, 9,
                       grad=("input", "out_backprop"), grad_k=8, const=("filter_sizes",)))
for dt in ("float32", "float64"):
    CASES += [
        _conv("DepthwiseConv2dNative", {"input": Rand((2, 5, 5, 2)), "filter": Rand((3, 3, 2, 1))},
              {"strides": _s(1, 2, 2, 1), "padding": "SAME"}, "same_stride2", dt, 9,
              grad=("input", "filter"), grad_k=18),
        _conv("DepthwiseConv2dNative", {"input": Rand((1, 4, 3, 1)), "filter": Rand((2, 2, 1, 3))},
              {"strides": _s(1, 1, 1, 1), "padding": "EXPLICIT",
               "explicit_paddings": [0, 0, 1, 0, 0, 1, 0, 0]}, "explicit", dt, 4,
              grad=("input", "filter"), grad_k=15),
        _conv("DepthwiseConv2dNativeBackpropInput",
              {"input_sizes": _sizes(2, 5, 5, 2), "filter": Rand((3, 3, 2, 1)),
               "out_backprop": Rand((2, 3, 3, 2))},
              {"strides": _s(1, 2, 2, 1), "padding": "SAME"}, "same_stride2", dt, 9,
              grad=("filter", "out_backprop"), grad_k=18, const=("input_sizes",)),
        _conv("DepthwiseConv2dNativeBackpropFilter",
              {"input": Rand((2, 5, 5, 2)), "filter_sizes": _sizes(3, 3, 2, 1),
               "out_backprop": Rand((2, 3, 3, 2))},
              {"strides": _s(1, 2, 2, 1), "padding": "SAME"}, "same_stride2", dt, 18,
              grad=("input", "out_backprop"), grad_k=9, const=("filter_sizes",)),
    ]
CASES += [
    # TF's CPU kernels refuse dilations and NCHW.
    _conv("DepthwiseConv2dNative", {"input": Rand((1, 5, 5, 1)), "filter": Rand((2, 2, 1, 2))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID", "dilations": [1, 2, 2, 1]},
          "dilated", "float32", 4),
    _conv("DepthwiseConv2dNative", {"input": Rand((1, 2, 3, 3)), "filter": Rand((2, 2, 2, 2))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID", "data_format": "NCHW"}, "nchw",
          "float32", 4),
    _conv("DepthwiseConv2dNativeBackpropInput",
          {"input_sizes": _sizes(1, 2, 3, 3), "filter": Rand((2, 2, 2, 2)),
           "out_backprop": Rand((1, 4, 1, 2))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID", "data_format": "NCHW"}, "nchw",
          "float32", 8, const=("input_sizes",)),
    _conv("DepthwiseConv2dNativeBackpropFilter",
          {"input": Rand((1, 2, 3, 3)), "filter_sizes": _sizes(2, 2, 2, 2),
           "out_backprop": Rand((1, 4, 1, 2))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID", "data_format": "NCHW"}, "nchw",
          "float32", 2, const=("filter_sizes",)),
    _conv("DepthwiseConv2dNative", {"input": Rand((0, 4, 4, 2)), "filter": Rand((2, 2, 2, 2))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "empty_batch", "float32", 4),
    _conv("DepthwiseConv2dNative", {"input": Rand((1, 4, 4, 3)), "filter": Rand((2, 2, 2, 2))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "depth_mismatch", "float32", 4),
    _conv("DepthwiseConv2dNative", {"input": Rand((1, 4, 4, 2)), "filter": Rand((2, 2, 2, 2))},
          {"strides": _s(1, 2, 1, 1), "padding": "VALID"}, "unequal_strides", "float32", 4),
    _conv("DepthwiseConv2dNative", {"input": Rand((1, 2, 2, 1)), "filter": Rand((3, 3, 1, 1))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "filter_too_large", "float32", 4),
    _conv("DepthwiseConv2dNativeBackpropInput",
          {"input_sizes": _sizes(1, 4, 4, 2), "filter": Rand((2, 2, 2, 2)),
           "out_backprop": Rand((1, 3, 3, 3))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "out_backprop_mismatch", "float32",
          8, const=("input_sizes",)),
    _conv("DepthwiseConv2dNativeBackpropFilter",
          {"input": Rand((1, 4, 4, 2)), "filter_sizes": _sizes(2, 2, 2, 2),
           "out_backprop": Rand((1, 3, 3, 3))},
          {"strides": _s(1, 1, 1, 1), "padding": "VALID"}, "out_backprop_mismatch", "float32",
          9, const=("filter_sizes",)),
]

# ---------------------------------------------------------------- _FusedConv2D
# TF's _FusedConv2D has another signature (args: TArgs, host_args, filter_format), and both
# systems make the op themselves (TF's grappler remapper, TensorFlux's passes/remapper.cc) from
# Conv2D -> BiasAdd [-> activation]: program cases build that chain with the public API and
# compare the fused result. K = 2*2*2 = 8 with inputs up to 4 (products <= 16): 4x the bound.


def _fused_program(act, shape=(1, 3, 3, 2), fshape=(2, 2, 2, 3), strides=(1, 1, 1, 1),
                   padding="SAME", dtype="float32", seed=0):
    def program(m):
        rs = np.random.RandomState(seed)
        x = rs.uniform(-4, 4, shape).astype(dtype)
        f = rs.uniform(-2, 2, fshape).astype(dtype)
        b = rs.uniform(-2, 2, fshape[-1:]).astype(dtype)
        px = m.placeholder(m.as_dtype(dtype), shape)
        y = m.nn.bias_add(m.nn.conv2d(px, m.constant(f), strides=list(strides),
                                      padding=padding), m.constant(b))
        if act == "relu":
            y = m.nn.relu(y)
        elif act == "relu6":
            y = m.nn.relu6(y)
        elif act == "elu":
            y = m.nn.elu(y)
        elif act == "leaky_relu":
            y = m.nn.leaky_relu(y, alpha=0.3)
        return [y], {px: x}, []
    return program


for dt in ("float32", "float64"):
    for act in ("none", "relu", "relu6", "elu", "leaky_relu"):
        CASES.append(Case("_FusedConv2D", variant="program_bias_" + act, dtype=dt,
                          program=_fused_program(act, dtype=dt, seed=len(CASES)),
                          tol=tuple(4 * t for t in _tol(8, dt))))
CASES.append(Case("_FusedConv2D", variant="program_valid_stride2", dtype="float32",
                  program=_fused_program("relu", (2, 5, 5, 2), (3, 3, 2, 2), (1, 2, 2, 1),
                                         "VALID", seed=7), tol=tuple(4 * t for t in _tol(18, "float32"))))

# TF's CPU kernels refuse these cases; TensorFlux runs them (docs/TF_DIFFERENCES.md, conv_ops).
_DEVIATIONS = {
    "Conv2D/nchw/float32": DEV_NCHW,
    "DepthwiseConv2dNative/nchw/float32": DEV_NCHW,
    "DepthwiseConv2dNative/dilated/float32": DEV_DILATED,
    "Conv2DBackpropInput/dilated/float32": DEV_DILATED,
    "Conv2DBackpropFilter/dilated/float32": DEV_DILATED,
    "Conv2DBackpropInput/grouped/float32": DEV_GROUPED,
    "Conv2DBackpropFilter/grouped/float32": DEV_GROUPED,
    "DepthwiseConv2dNative/unequal_strides/float32": DEV_STRIDES,
}
for _c in CASES:
    _c.deviation = _DEVIATIONS.get(_c.id, _c.deviation)
