"""Activations and their backward ops (ops/nn_activation_ops.cc): Relu, Relu6, LeakyRelu, Elu,
Selu, Softplus, and ReluGrad ... ReciprocalGrad (the backward ops of these and of Tanh, Sigmoid,
Rsqrt, Sqrt, Reciprocal), which have gradients of their own (second derivatives).

Per op: every dtype, edge values (NaN, inf, the kinks at 0 and 6), scalars, empty tensors,
attrs (alpha), errors (backward ops do not broadcast), and gradients."""

import numpy as np

from conformance.table import FLOAT_DTYPES, INT_DTYPES, Case, Rand, Special

F = FLOAT_DTYPES
I = INT_DTYPES
CASES = []


def vals(*v):
    return lambda dt: np.array(v, dtype=dt)


# ---------------------------------------------------------------- forward

FORWARD = {
    # op: (dtypes, value range of the base case)
    "Relu": (F + I, (-3, 3)),
    "Relu6": (F + I, (-3, 9)),
    "LeakyRelu": (F, (-3, 3)),
    "Elu": (F, (-3, 3)),
    "Selu": (F, (-3, 3)),
    "Softplus": (F, (-5, 5)),
}
for op, (dtypes, (lo, hi)) in FORWARD.items():
    for dt in dtypes:
        if dt in F:
            CASES.append(Case(op, {"features": Rand((2, 3), low=lo, high=hi, nonzero=True)},
                              variant="base", dtype=dt, grad=("features",)))
        CASES.append(Case(op, {"features": Special()}, variant="specials", dtype=dt))
    CASES += [
        Case(op, {"features": Rand((), low=lo, high=hi, nonzero=True)}, variant="scalar",
             dtype="float64", grad=("features",)),
        Case(op, {"features": Rand((0, 3))}, variant="empty", grad=("features",)),
        Case(op, {"features": np.array([True, False])}, variant="bool", dtype="bool"),
    ]
CASES += [
    # The kinks themselves: Relu6 at 6, integer inputs around 0 and 6.
    Case("Relu6", {"features": vals(-1.0, 0.0, 5.999, 6.0, 6.001, 100.0)}, variant="kinks",
         dtype="float32"),
    Case("Relu6", {"features": vals(-7, -1, 0, 5, 6, 7, 127)}, variant="kinks", dtype="int8"),
    Case("LeakyRelu", {"features": Rand((2, 3), nonzero=True)}, {"alpha": 0.5},
         variant="alpha_half", dtype="float64", grad=("features",)),
    Case("LeakyRelu", {"features": Rand((2, 3), nonzero=True)}, {"alpha": 2.0},
         variant="alpha_above_one", dtype="float64", grad=("features",)),
    Case("LeakyRelu", {"features": Rand((2, 3), nonzero=True)}, {"alpha": 0.0},
         variant="alpha_zero", dtype="float32", grad=("features",)),
    Case("LeakyRelu", {"features": Rand((2, 3), nonzero=True)}, {"alpha": -0.5},
         variant="alpha_negative", dtype="float32", grad=("features",)),
    Case("LeakyRelu", {"features": vals(1, -2, 3)}, variant="int", dtype="int32"),
    Case("Elu", {"features": vals(1, -2, 3)}, variant="int", dtype="int32"),
    # Softplus far from 0: x for large x, exp(x) for very negative x, never inf for finite x.
    Case("Softplus", {"features": vals(-100.0, -30.0, -15.0, 15.0, 30.0, 100.0, 1e4)},
         variant="tails", dtype="float32", grad=("features",)),
    Case("Softplus", {"features": vals(-800.0, -40.0, 40.0, 800.0)}, variant="tails",
         dtype="float64", grad=("features",), fd=False),
    Case("Softplus", {"features": vals(-20.0, -10.0, 10.0, 12.0, 20.0)}, variant="tails",
         dtype="float16"),
    Case("Elu", {"features": vals(-100.0, -20.0, -1e-3, 1e-3)}, variant="tails",
         dtype="float32", grad=("features",)),
    Case("Selu", {"features": vals(-100.0, -20.0, -1e-3, 1e-3)}, variant="tails",
         dtype="float32", grad=("features",)),
]
# Just below 0, TensorFlux's Elu/Selu use expm1 (exact there); TF's exp(x) - 1 rounds to 0 for
# |x| below float32's epsilon. Within tolerance for Elu; Selu's gradient, chosen by that output's
# sign, then takes TF's x > 0 branch: scale where the slope is scale * alpha.
CASES += [
    Case("Elu", {"features": vals(-1e-8, -1e-10, 1e-8)}, variant="near_zero", dtype="float32",
         grad=("features",)),
    Case("Selu", {"features": vals(-1e-8, -1e-10, 1e-8)}, variant="near_zero", dtype="float32",
         grad=("features",),
         deviation="expm1 where TF computes exp(x) - 1: the exact sign just below 0, so the "
                   "gradient's slope there (docs/TF_DIFFERENCES.md, nn_activation_ops)"),
]

# ---------------------------------------------------------------- backward

# op: (first input, second input, dtypes, the second input's range)
BACKWARD = {
    "ReluGrad": ("gradients", "features", F + I, (-3, 3)),
    "Relu6Grad": ("gradients", "features", F + I, (-3, 9)),
    "LeakyReluGrad": ("gradients", "features", F, (-3, 3)),
    "SoftplusGrad": ("gradients", "features", F, (-4, 4)),
    "EluGrad": ("gradients", "outputs", F, (-0.9, 3)),
    "SeluGrad": ("gradients", "outputs", F, (-1.7, 3)),
}
# y = f(x) first, dy second.
OUTPUT_GRAD = {
    "TanhGrad": (-0.95, 0.95),
    "SigmoidGrad": (0.05, 0.95),
    "RsqrtGrad": (0.2, 3),
    "SqrtGrad": (0.2, 3),
    "ReciprocalGrad": (-3, 3),
}
for op, (lo, hi) in OUTPUT_GRAD.items():
    BACKWARD[op] = ("y", "dy", F, (lo, hi))

for op, (a, b, dtypes, (lo, hi)) in BACKWARD.items():
    y_first = a == "y"
    for dt in dtypes:
        if dt in F:
            ranged = Rand((2, 3), low=lo, high=hi, nonzero=True)
            other = Rand((2, 3))
            ins = {a: ranged, b: other} if y_first else {a: other, b: ranged}
            CASES.append(Case(op, ins, variant="base", dtype=dt, grad=(a, b)))
            ins = {a: Special(), b: Rand((14,))} if y_first else {a: Rand((14,)), b: Special()}
            CASES.append(Case(op, ins, variant="specials", dtype=dt))
        else:
            CASES.append(Case(op, {a: Rand((10,), low=-50, high=50), b: Special(shape=(10,))},
                              variant="specials", dtype=dt))
    CASES += [
        Case(op, {a: Rand(()), b: Rand((), low=lo, high=hi, nonzero=True)}, variant="scalar",
             dtype="float64", grad=(a, b)),
        Case(op, {a: Rand((0, 2)), b: Rand((0, 2))}, variant="empty", grad=(a, b)),
        Case(op, {a: Rand((2, 3)), b: Rand((3,))}, variant="no_broadcast"),
        Case(op, {a: Rand((2, 3)), b: Rand((2, 3), dtype="float64")},
             variant="mismatched_dtypes"),
    ]
CASES += [
    # At the kinks the backward ops pass nothing (ReluGrad at 0, Relu6Grad at 0 and 6).
    Case("ReluGrad", {"gradients": Rand((5,)), "features": vals(-1.0, 0.0, -0.0, 1e-30, 2.0)},
         variant="kinks", dtype="float32"),
    Case("Relu6Grad", {"gradients": Rand((6,)),
                       "features": vals(-1.0, 0.0, 1e-30, 5.999, 6.0, 6.001)},
         variant="kinks", dtype="float32"),
    Case("LeakyReluGrad", {"gradients": Rand((2, 3)), "features": Rand((2, 3), nonzero=True)},
         {"alpha": 0.5}, variant="alpha_half", dtype="float64", grad=("gradients", "features")),
    Case("LeakyReluGrad", {"gradients": Rand((4,)), "features": vals(-1.0, 0.0, -0.0, 1.0)},
         {"alpha": 2.0}, variant="alpha_above_one", dtype="float32"),
    Case("LeakyReluGrad", {"gradients": vals(1, 2), "features": vals(1, -2)},
         variant="int", dtype="int32"),
    Case("TanhGrad", {"y": vals(1, 2), "dy": vals(1, 2)}, variant="int", dtype="int32"),
]
