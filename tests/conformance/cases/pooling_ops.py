"""2-D pooling (ops/pooling_ops.cc): MaxPool, AvgPool, MaxPoolGrad, AvgPoolGrad, MaxPoolGradGrad
and TensorFlux's _FusedMaxPoolGrad (made by the remapper from MaxPoolGrad -> ReluGrad
[-> BiasAddGrad]; not a TF op: program cases compare it with TF's unfused gradient).

MaxPool's inputs are seeded uniform floats, so windows have no ties (a tie would make the
gradient's position depend on the scan order, which both systems fix as the first maximum in
row-major window order; the `ties` cases check that). AvgPool sums at most kh*kw = 9 values:
float32 results differ by a few ulps at most, within the default tolerance.
"""

import numpy as np

from conformance.table import FLOAT_DTYPES, Case, Rand, Special, expand

CASES = []


def _attrs(k, s, padding="VALID", **kw):
    return dict({"ksize": [1, k[0], k[1], 1], "strides": [1, s[0], s[1], 1],
                 "padding": padding}, **kw)


def _pool_out(x, k, s, padding, fn):
    """numpy pooling (NHWC, SAME/VALID) for the orig_output inputs of the gradient ops."""
    n, h, w, c = x.shape
    if padding == "SAME":
        oh, ow = -(-h // s[0]), -(-w // s[1])
        pt = max((oh - 1) * s[0] + k[0] - h, 0) // 2
        pl = max((ow - 1) * s[1] + k[1] - w, 0) // 2
    else:
        oh, ow = (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1
        pt = pl = 0
    out = np.zeros((n, oh, ow, c), x.dtype)
    for i in range(oh):
        for j in range(ow):
            y0, x0 = i * s[0] - pt, j * s[1] - pl
            win = x[:, max(y0, 0):y0 + k[0], max(x0, 0):x0 + k[1], :]
            out[:, i, j, :] = fn(win, axis=(1, 2))
    return out


def _grad_inputs(shape, k, s, padding, seed, grad_of_output=True, ties=False):
    """orig_input, orig_output (its max pool) and grad for MaxPoolGrad / MaxPoolGradGrad."""
    def make(which):
        def f(dtype):
            rs = np.random.RandomState(seed)
            if ties:
                x = rs.randint(0, 3, size=shape).astype(dtype)
            else:
                x = rs.permutation(np.prod(shape)).reshape(shape).astype(dtype) - 10
            y = _pool_out(x, k, s, padding, np.max)
            if which == "orig_input":
                return x
            if which == "orig_output":
                return y
            g = rs.uniform(-2, 2, size=(y if grad_of_output else x).shape)
            return g.astype(dtype) if np.dtype(dtype).kind == "f" else \
                rs.randint(-5, 6, size=g.shape).astype(dtype)
        return f
    return {n: make(n) for n in ("orig_input", "orig_output", "grad")}


# ---------------------------------------------------------------- MaxPool
# Every dtype TensorFlux's op takes and TF's CPU registers (TF also has uint32/uint64 kernels,
# which TensorFlux's op does not list).
MAXPOOL_DTYPES = FLOAT_DTYPES + ("int8", "uint8", "int16", "uint16", "int32", "int64")
for dt in MAXPOOL_DTYPES:
    CASES.append(Case("MaxPool", {"input": Rand((1, 4, 4, 2), low=-100, high=100)},
                      _attrs((2, 2), (2, 2)), dtype=dt,
                      grad=("input",) if dt in FLOAT_DTYPES else ()))
for dt in ("float32", "float64"):
    CASES += [
        Case("MaxPool", {"input": Rand((2, 5, 5, 1))}, _attrs((3, 3), (2, 2), "SAME"),
             variant="same_stride2", grad=("input",), dtype=dt),
        Case("MaxPool", {"input": Rand((1, 4, 3, 2))}, _attrs((2, 3), (1, 1), "SAME"),
             variant="same_overlap", grad=("input",), dtype=dt),
        Case("MaxPool", {"input": Rand((1, 5, 4, 1))}, _attrs((3, 2), (2, 1)),
             variant="valid_rect", grad=("input",), dtype=dt),
        Case("MaxPool", {"input": Rand((1, 4, 4, 1))},
             _attrs((2, 2), (2, 2), "EXPLICIT", explicit_paddings=[0, 0, 1, 1, 0, 1, 0, 0]),
             variant="explicit", grad=("input",), dtype=dt),
    ]
CASES += [
    Case("MaxPool", {"input": Rand((0, 4, 4, 2))}, _attrs((2, 2), (2, 2)), variant="empty"),
    Case("MaxPool", {"input": Rand((1, 4, 4, 0))}, _attrs((2, 2), (2, 2)),
         variant="empty_depth", deviation="TF's shape function refuses an empty depth with "
         "VALID padding (its depth window of 1 'does not fit'); TensorFlux pools it to an empty "
         "output"),
    Case("MaxPool", {"input": Special(shape=(1, 4, 4, 1))}, _attrs((2, 2), (2, 2)),
         variant="specials"),
    Case("MaxPool", {"input": Special(shape=(1, 4, 4, 1))}, _attrs((2, 2), (1, 1), "SAME"),
         variant="specials", dtype="int32"),
    Case("MaxPool", {"input": Special(shape=(1, 4, 4, 1))}, _attrs((2, 2), (1, 1), "SAME"),
         variant="specials", dtype="int64"),
    Case("MaxPool", {"input": Special(shape=(1, 4, 4, 1))}, _attrs((2, 2), (1, 1), "SAME"),
         variant="specials", dtype="uint8"),
    Case("MaxPool", {"input": Rand((1, 1, 1, 2))}, _attrs((1, 1), (1, 1)), variant="identity"),
    # A window larger than the input with SAME.
    Case("MaxPool", {"input": Rand((1, 2, 2, 1))}, _attrs((3, 3), (1, 1), "SAME"),
         variant="same_big_window", grad=("input",), dtype="float64"),
    # TF's CPU MaxPool refuses NCHW.
    Case("MaxPool", {"input": Rand((1, 2, 4, 4))}, _attrs((2, 2), (2, 2), data_format="NCHW"),
         variant="nchw"),
    # Errors.
    Case("MaxPool", {"input": Rand((1, 2, 2, 1))}, _attrs((3, 3), (1, 1)),
         variant="window_too_large"),
    Case("MaxPool", {"input": Rand((2, 4, 4, 1))},
         {"ksize": [2, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"},
         variant="batch_window"),
    Case("MaxPool", {"input": Rand((1, 4, 4, 2))},
         {"ksize": [1, 2, 2, 2], "strides": [1, 1, 1, 2], "padding": "VALID"},
         variant="depth_window"),
    Case("MaxPool", {"input": Rand((1, 4, 4, 1))},
         {"ksize": [1, 2, 2], "strides": [1, 1, 1, 1], "padding": "VALID"},
         variant="ksize_length"),
    Case("MaxPool", {"input": Rand((1, 4, 4, 1))},
         {"ksize": [1, 0, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"},
         variant="zero_ksize"),
    Case("MaxPool", {"input": Rand((1, 4, 4, 1))},
         {"ksize": [1, 2, 2, 1], "strides": [1, 0, 1, 1], "padding": "VALID"},
         variant="zero_stride"),
    Case("MaxPool", {"input": Rand((4, 4, 1))}, _attrs((2, 2), (2, 2)), variant="rank3"),
]

# ---------------------------------------------------------------- AvgPool
CASES += expand("AvgPool", FLOAT_DTYPES, inputs={"value": Rand((1, 4, 4, 2))},
                attrs=_attrs((2, 2), (2, 2)), grad=("value",))
for dt in ("float32", "float64"):
    CASES += [
        # SAME: edge windows average their valid elements only.
        Case("AvgPool", {"value": Rand((2, 5, 5, 1))}, _attrs((3, 3), (2, 2), "SAME"),
             variant="same_stride2", grad=("value",), dtype=dt),
        Case("AvgPool", {"value": Rand((1, 4, 3, 2))}, _attrs((2, 3), (1, 1), "SAME"),
             variant="same_overlap", grad=("value",), dtype=dt),
        Case("AvgPool", {"value": Rand((1, 5, 4, 1))}, _attrs((3, 2), (2, 1)),
             variant="valid_rect", grad=("value",), dtype=dt),
    ]
CASES += [
    Case("AvgPool", {"value": Rand((0, 4, 4, 2))}, _attrs((2, 2), (2, 2)), variant="empty"),
    Case("AvgPool", {"value": Special(shape=(1, 4, 4, 1))}, _attrs((2, 2), (2, 2)),
         variant="specials"),
    Case("AvgPool", {"value": Rand((1, 2, 4, 4))}, _attrs((2, 2), (2, 2), data_format="NCHW"),
         variant="nchw"),
    Case("AvgPool", {"value": Rand((1, 2, 2, 1))}, _attrs((3, 3), (1, 1)),
         variant="window_too_large"),
    Case("AvgPool", {"value": Rand((2, 4, 4, 1))},
         {"ksize": [2, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"},
         variant="batch_window"),
    Case("AvgPool", {"value": Rand((4, 4, 1))}, _attrs((2, 2), (2, 2)), variant="rank3"),
]

# ---------------------------------------------------------------- MaxPoolGrad
# TF's CPU also registers integer MaxPoolGrad kernels; TensorFlux's op lists the same types.
for dt in FLOAT_DTYPES + ("int8", "uint8", "int16", "uint16", "int32", "int64"):
    CASES.append(Case("MaxPoolGrad", _grad_inputs((1, 4, 4, 2), (2, 2), (2, 2), "VALID", 1),
                      _attrs((2, 2), (2, 2)), dtype=dt,
                      grad=("orig_input", "orig_output", "grad") if dt in FLOAT_DTYPES
                      else ()))
for dt in ("float32", "float64"):
    CASES += [
        Case("MaxPoolGrad", _grad_inputs((2, 5, 5, 1), (3, 3), (2, 2), "SAME", 2),
             _attrs((3, 3), (2, 2), "SAME"), variant="same_stride2", dtype=dt,
             grad=("orig_input", "orig_output", "grad")),
        Case("MaxPoolGrad", _grad_inputs((1, 4, 3, 2), (2, 3), (1, 1), "SAME", 3),
             _attrs((2, 3), (1, 1), "SAME"), variant="same_overlap", dtype=dt,
             grad=("grad",)),
    ]
CASES += [
    # Ties: the gradient goes to the first maximum of the window.
    Case("MaxPoolGrad", _grad_inputs((1, 4, 4, 1), (2, 2), (1, 1), "VALID", 4, ties=True),
         _attrs((2, 2), (1, 1)), variant="ties"),
    Case("MaxPoolGrad", _grad_inputs((0, 4, 4, 1), (2, 2), (2, 2), "VALID", 5),
         _attrs((2, 2), (2, 2)), variant="empty"),
    Case("MaxPoolGrad", {"orig_input": Rand((1, 4, 4, 1)), "orig_output": Rand((1, 3, 3, 1)),
                         "grad": Rand((1, 3, 3, 1))}, _attrs((2, 2), (2, 2)),
         variant="bad_output_shape"),
    Case("MaxPoolGrad", {"orig_input": Rand((1, 4, 4, 1)), "orig_output": Rand((1, 2, 2, 1)),
                         "grad": Rand((1, 2, 3, 1))}, _attrs((2, 2), (2, 2)),
         variant="bad_grad_shape"),
]

# ---------------------------------------------------------------- MaxPoolGradGrad
for dt in FLOAT_DTYPES + ("int8", "uint8", "int16", "uint16", "int32", "int64"):
    CASES.append(Case("MaxPoolGradGrad",
                      _grad_inputs((1, 4, 4, 2), (2, 2), (2, 2), "VALID", 6, False),
                      _attrs((2, 2), (2, 2)), dtype=dt,
                      grad=("orig_input", "orig_output", "grad") if dt in FLOAT_DTYPES
                      else ()))
for dt in ("float32", "float64"):
    CASES.append(Case("MaxPoolGradGrad",
                      _grad_inputs((2, 5, 5, 1), (3, 3), (2, 2), "SAME", 7, False),
                      _attrs((3, 3), (2, 2), "SAME"), variant="same_stride2", dtype=dt,
                      grad=("grad",)))
CASES += [
    Case("MaxPoolGradGrad", _grad_inputs((1, 4, 4, 1), (2, 2), (1, 1), "VALID", 8, False,
                                         ties=True),
         _attrs((2, 2), (1, 1)), variant="ties"),
    Case("MaxPoolGradGrad", _grad_inputs((0, 4, 4, 1), (2, 2), (2, 2), "VALID", 9, False),
         _attrs((2, 2), (2, 2)), variant="empty"),
    Case("MaxPoolGradGrad", {"orig_input": Rand((1, 4, 4, 1)),
                             "orig_output": Rand((1, 2, 2, 1)), "grad": Rand((1, 2, 2, 1))},
         _attrs((2, 2), (2, 2)), variant="bad_grad_shape"),
]

# ---------------------------------------------------------------- AvgPoolGrad
for dt in FLOAT_DTYPES:
    CASES.append(Case("AvgPoolGrad", {"orig_input_shape": np.array([1, 4, 4, 2], np.int32),
                                      "grad": Rand((1, 2, 2, 2))},
                      _attrs((2, 2), (2, 2)), const=("orig_input_shape",), grad=("grad",),
                      dtype=dt))
for dt in ("float32", "float64"):
    CASES += [
        Case("AvgPoolGrad", {"orig_input_shape": np.array([2, 5, 5, 1], np.int32),
                             "grad": Rand((2, 3, 3, 1))}, _attrs((3, 3), (2, 2), "SAME"),
             variant="same_stride2", const=("orig_input_shape",), grad=("grad",), dtype=dt),
        Case("AvgPoolGrad", {"orig_input_shape": np.array([1, 4, 3, 2], np.int32),
                             "grad": Rand((1, 4, 3, 2))}, _attrs((2, 3), (1, 1), "SAME"),
             variant="same_overlap", const=("orig_input_shape",), grad=("grad",), dtype=dt),
    ]
CASES += [
    # orig_input_shape fed: the static shape is unknown.
    Case("AvgPoolGrad", {"orig_input_shape": np.array([1, 4, 4, 2], np.int32),
                         "grad": Rand((1, 2, 2, 2))}, _attrs((2, 2), (2, 2)), variant="fed_shape"),
    Case("AvgPoolGrad", {"orig_input_shape": np.array([0, 4, 4, 2], np.int32),
                         "grad": Rand((0, 2, 2, 2))}, _attrs((2, 2), (2, 2)),
         const=("orig_input_shape",), variant="empty"),
    Case("AvgPoolGrad", {"orig_input_shape": np.array([1, 4, 4], np.int32),
                         "grad": Rand((1, 2, 2, 2))}, _attrs((2, 2), (2, 2)),
         const=("orig_input_shape",), variant="bad_shape_length"),
]

# ---------------------------------------------------------------- _FusedMaxPoolGrad
# Gradients of max_pool(relu(bias_add(x, b))) with non-overlapping windows: TensorFlux's
# remapper fuses MaxPoolGrad -> ReluGrad [-> BiasAddGrad]; TF runs them one by one.


def _relu_pool_program(shape, k, s, padding, with_bias, dtype, seed):
    def program(m):
        rs = np.random.RandomState(seed)
        x = rs.uniform(-2, 2, shape).astype(dtype)
        b = rs.uniform(-1, 1, shape[-1:]).astype(dtype)
        px = m.placeholder(m.as_dtype(dtype), shape)
        pb = m.placeholder(m.as_dtype(dtype), shape[-1:])
        h = m.nn.bias_add(px, pb) if with_bias else px * 1.5
        y = m.nn.relu(h)
        p = m.nn.max_pool(y, ksize=[1, k[0], k[1], 1], strides=[1, s[0], s[1], 1],
                          padding=padding)
        w = rs.uniform(-1, 1, _pool_out(np.zeros(shape), k, s, padding, np.max).shape)
        xs = [px, pb] if with_bias else [px]
        grads = m.gradients([p], xs, grad_ys=[m.constant(w.astype(dtype))])
        return list(grads), {px: x, pb: b}, []
    return program


for dt in ("float32", "float64"):
    CASES.append(Case("_FusedMaxPoolGrad", variant="program_bias", dtype=dt,
                      program=_relu_pool_program((2, 4, 4, 3), (2, 2), (2, 2), "VALID", True,
                                                 dt, 11)))
CASES += [
    Case("_FusedMaxPoolGrad", variant="program_no_bias", dtype="float32",
         program=_relu_pool_program((1, 6, 6, 2), (3, 3), (3, 3), "VALID", False, "float32",
                                    12)),
    Case("_FusedMaxPoolGrad", variant="program_same", dtype="float32",
         program=_relu_pool_program((1, 5, 5, 2), (2, 2), (2, 2), "SAME", True, "float32", 13)),
]
