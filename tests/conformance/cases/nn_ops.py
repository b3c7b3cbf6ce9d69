"""NN ops (ops/nn_ops.cc): BiasAdd, BiasAddGrad, Softmax, LogSoftmax, the two softmax cross
entropies and L2Loss."""

import numpy as np

from conformance.table import FLOAT_DTYPES, INT_DTYPES, Case, Rand, Special, expand

CASES = []

# ---------------------------------------------------------------- BiasAdd / BiasAddGrad
# Every real dtype both register on CPU (TF also has complex; TensorFlux does not register it).
for dt in FLOAT_DTYPES + INT_DTYPES:
    fl = dt in FLOAT_DTYPES
    CASES.append(Case("BiasAdd", {"value": Rand((2, 3, 4)), "bias": Rand((4,))},
                      grad=("value", "bias") if fl else (), dtype=dt))
    CASES.append(Case("BiasAddGrad", {"out_backprop": Rand((2, 3, 4))},
                      grad=("out_backprop",) if fl else (), dtype=dt))
for dt in ("float32", "float64"):
    CASES += [
        Case("BiasAdd", {"value": Rand((2, 3, 2, 2)), "bias": Rand((3,))},
             {"data_format": "NCHW"}, variant="nchw", grad=("value", "bias"), dtype=dt),
        Case("BiasAdd", {"value": Rand((2, 3, 2)), "bias": Rand((3,))},
             {"data_format": "NCHW"}, variant="nchw_rank3", grad=("value", "bias"), dtype=dt),
        Case("BiasAdd", {"value": Rand((3, 5)), "bias": Rand((5,))}, variant="rank2",
             grad=("value", "bias"), dtype=dt),
        Case("BiasAdd", {"value": Rand((1, 2, 1, 2, 3)), "bias": Rand((3,))}, variant="rank5",
             grad=("value", "bias"), dtype=dt),
        Case("BiasAddGrad", {"out_backprop": Rand((2, 3, 2, 2))}, {"data_format": "NCHW"},
             variant="nchw", grad=("out_backprop",), dtype=dt),
        Case("BiasAddGrad", {"out_backprop": Rand((1, 2, 1, 2, 3))}, variant="rank5",
             grad=("out_backprop",), dtype=dt),
        Case("BiasAddGrad", {"out_backprop": Rand((2, 3, 1, 2, 2))}, {"data_format": "NCHW"},
             variant="nchw_rank5", grad=("out_backprop",), dtype=dt),
    ]
CASES += [
    Case("BiasAdd", {"value": Rand((0, 3)), "bias": Rand((3,))}, variant="empty"),
    Case("BiasAdd", {"value": Rand((2, 0)), "bias": Rand((0,))}, variant="empty_channels"),
    Case("BiasAdd", {"value": Special(shape=(2, 7)), "bias": Special(shape=(7,))},
         variant="specials"),
    Case("BiasAdd", {"value": Special(shape=(2, 5)), "bias": Special(shape=(5,))},
         variant="specials", dtype="int32"),
    Case("BiasAdd", {"value": Special(shape=(2, 5)), "bias": Special(shape=(5,))},
         variant="specials", dtype="uint8"),
    Case("BiasAdd", {"value": Special(shape=(2, 5)), "bias": Special(shape=(5,))},
         variant="specials", dtype="int64"),
    # Errors: bias size, bias rank, value rank, NCHW below rank 3.
    Case("BiasAdd", {"value": Rand((2, 3)), "bias": Rand((4,))}, variant="bad_bias_size"),
    Case("BiasAdd", {"value": Rand((2, 3)), "bias": Rand((1, 3))}, variant="bad_bias_rank"),
    Case("BiasAdd", {"value": Rand((3,)), "bias": Rand((3,))}, variant="bad_value_rank"),
    Case("BiasAdd", {"value": Rand((2, 3)), "bias": Rand((3,))}, {"data_format": "NCHW"},
         variant="nchw_rank2"),
    Case("BiasAddGrad", {"out_backprop": Rand((0, 3))}, variant="empty"),
    Case("BiasAddGrad", {"out_backprop": Rand((2, 0))}, variant="empty_channels"),
    Case("BiasAddGrad", {"out_backprop": Special(shape=(3, 7))}, variant="specials"),
    Case("BiasAddGrad", {"out_backprop": Special(shape=(4, 5))}, variant="specials",
         dtype="int32"),
    Case("BiasAddGrad", {"out_backprop": Special(shape=(4, 5))}, variant="specials",
         dtype="uint8"),
    Case("BiasAddGrad", {"out_backprop": Rand((3,))}, variant="bad_rank"),
]

# ---------------------------------------------------------------- Softmax / LogSoftmax
for op in ("Softmax", "LogSoftmax"):
    CASES += expand(op, FLOAT_DTYPES, inputs={"logits": Rand((2, 5))}, grad=("logits",))
    CASES += expand(op, ("float32", "float64"), variant="rank1",
                    inputs={"logits": Rand((4,))}, grad=("logits",))
    CASES += expand(op, ("float32", "float64"), variant="rank3",
                    inputs={"logits": Rand((2, 2, 3))}, grad=("logits",))
    CASES += [
        Case(op, {"logits": Rand((0, 4))}, variant="empty"),
        Case(op, {"logits": Rand((2, 0))}, variant="empty_classes"),
        Case(op, {"logits": Rand((3, 1))}, variant="one_class", grad=("logits",),
             dtype="float64"),
        # Large magnitudes: the max is subtracted first (no overflow).
        Case(op, {"logits": np.array([[1000.0, 999.0, -1000.0], [-1e4, -1e4 + 1, -1e4 + 2]],
                                     np.float32)}, variant="large"),
        # inf, -inf and NaN rows.
        Case(op, {"logits": np.array([[np.inf, 1.0, 2.0], [-np.inf, 1.0, 2.0],
                                      [np.nan, 0.0, 1.0], [-np.inf, -np.inf, -np.inf]],
                                     np.float32)}, variant="specials"),
        Case(op, {"logits": np.array(1.0, np.float32)}, variant="scalar"),
    ]

# ---------------------------------------------------------------- cross entropies
for dt in FLOAT_DTYPES:
    for lt in ("int32", "int64"):
        CASES.append(Case("SparseSoftmaxCrossEntropyWithLogits",
                          {"features": Rand((3, 5)), "labels": np.array([0, 4, 2], lt)},
                          variant="labels_" + lt, grad=("features",), dtype=dt))
CASES += [
    Case("SparseSoftmaxCrossEntropyWithLogits",
         {"features": Rand((0, 5)), "labels": np.zeros((0,), np.int32)}, variant="empty"),
    Case("SparseSoftmaxCrossEntropyWithLogits",
         {"features": np.array([[1e4, 0.0, -1e4], [-50.0, 50.0, 0.0]], np.float32),
          "labels": np.array([2, 1], np.int64)}, variant="large"),
    Case("SparseSoftmaxCrossEntropyWithLogits",
         {"features": Rand((2, 1)), "labels": np.array([0, 0], np.int32)}, variant="one_class",
         grad=("features",), dtype="float64"),
    Case("SparseSoftmaxCrossEntropyWithLogits",
         {"features": Rand((3, 5)), "labels": np.array([0, 5, 2], np.int32)},
         variant="label_too_large"),
    Case("SparseSoftmaxCrossEntropyWithLogits",
         {"features": Rand((3, 5)), "labels": np.array([0, -1, 2], np.int64)},
         variant="label_negative"),
    Case("SparseSoftmaxCrossEntropyWithLogits",
         {"features": Rand((3, 5)), "labels": np.array([0, 1], np.int32)},
         variant="batch_mismatch"),
    Case("SparseSoftmaxCrossEntropyWithLogits",
         {"features": Rand((2, 3, 5)), "labels": np.array([0, 1], np.int32)},
         variant="features_rank3"),
    Case("SparseSoftmaxCrossEntropyWithLogits",
         {"features": Rand((3, 5)), "labels": np.array([[0], [1], [2]], np.int32)},
         variant="labels_rank2"),
]


def _distribution(shape, seed):
    def make(dtype):
        rs = np.random.RandomState(seed)
        p = rs.uniform(0.1, 1.0, size=shape)
        return (p / p.sum(axis=-1, keepdims=True)).astype(dtype)
    return make


for dt in FLOAT_DTYPES:
    # Labels rows are distributions (TF's gradient assumes they sum to 1).
    CASES.append(Case("SoftmaxCrossEntropyWithLogits",
                      {"features": Rand((3, 4)), "labels": _distribution((3, 4), 1)},
                      grad=("features",), dtype=dt))
CASES += [
    # TF's labels gradient leaves out the term of the gradient reaching `backprop`; TensorFlux
    # keeps it (exact; checked here against finite differences only).
    Case("SoftmaxCrossEntropyWithLogits",
         {"features": Rand((3, 4)), "labels": _distribution((3, 4), 2)},
         variant="labels_grad", grad=("features", "labels"), dtype="float64",
         deviation="labels gradient includes the term through `backprop` (TF drops it)"),
    Case("SoftmaxCrossEntropyWithLogits",
         {"features": Rand((3, 4)), "labels": _distribution((1, 4), 3)},
         variant="broadcast_labels"),
    Case("SoftmaxCrossEntropyWithLogits",
         {"features": Rand((1, 4)), "labels": _distribution((3, 4), 4)},
         variant="broadcast_features"),
    Case("SoftmaxCrossEntropyWithLogits",
         {"features": Rand((0, 4)), "labels": Rand((0, 4))}, variant="empty"),
    Case("SoftmaxCrossEntropyWithLogits",
         {"features": np.array([[1e4, 0.0, -1e4], [np.inf, 0.0, 1.0]], np.float32),
          "labels": np.array([[0.0, 0.0, 1.0], [0.5, 0.5, 0.0]], np.float32)},
         variant="specials"),
    Case("SoftmaxCrossEntropyWithLogits", {"features": Rand((4,)), "labels": Rand((4,))},
         variant="rank1"),
    Case("SoftmaxCrossEntropyWithLogits", {"features": Rand((3, 4)), "labels": Rand((3, 5))},
         variant="incompatible"),
    Case("SoftmaxCrossEntropyWithLogits", {"features": Rand((2, 3, 4)),
                                           "labels": Rand((2, 3, 4))}, variant="rank3"),
]

# ---------------------------------------------------------------- L2Loss
CASES += expand("L2Loss", FLOAT_DTYPES, inputs={"t": Rand((2, 3))}, grad=("t",))
CASES += [
    Case("L2Loss", {"t": np.array(3.0, np.float64)}, variant="scalar", grad=("t",),
         dtype="float64"),
    Case("L2Loss", {"t": Rand((0, 3))}, variant="empty", grad=("t",)),
    Case("L2Loss", {"t": Special()}, variant="specials"),
    Case("L2Loss", {"t": Special(finite=True)}, variant="overflow"),
    Case("L2Loss", {"t": Rand((2, 2, 2, 2), low=-0.5, high=0.5)}, variant="rank4",
         grad=("t",), dtype="float64"),
]
