"""Batch normalization (ops/batch_norm_ops.cc): FusedBatchNormV3 (training and inference) and
FusedBatchNormGradV3.

TF's CPU registers T in {half, bfloat16, float} with U = float; TensorFlux adds T = U = double
(its gradient checker runs in float64): those cases are TF errors, so they carry a deviation.
Tolerances: a channel's statistics sum n = N*H*W <= 16 values in a different order (TF: Eigen
reductions; TensorFlux: its own loops), and y divides by sqrt(variance + epsilon), which
amplifies the mean's rounding by up to 1/sqrt(epsilon + var); with |x| <= 2 the float32
difference stays below 1e-5 relative (the case tol (1e-5, 1e-5)). float16 x is normalized in
float (both) and rounded once: 1 ulp of float16 (2^-10 relative) bounds it.
"""

import numpy as np

from conformance.table import Case, Rand

CASES = []

_F16_TOL = (2.0 ** -10, 2.0 ** -10)
_F32_TOL = (1e-5, 1e-5)


def _pos(shape, low=0.5, high=2.0):
    return Rand(shape, low=low, high=high)


def _bn(inputs, attrs, variant, dtype="float32", u="float32", grad=(), **kw):
    tol = _F16_TOL if dtype == "float16" else (_F32_TOL if dtype == "float32" else None)
    gtol = (1e-2, 1e-2) if dtype == "float16" else ((1e-4, 1e-4) if dtype == "float32"
                                                    else None)
    inputs = {k: (Rand(v.shape, dtype=u, low=v.low, high=v.high)
                  if isinstance(v, Rand) and k != "x" and k != "y_backprop" else v)
              for k, v in inputs.items()}
    if "y_backprop" not in inputs and (not attrs.get("is_training", True) or "empty" in variant):
        # TF's CPU leaves the reserve spaces uninitialized in inference and for an empty batch
        kw.setdefault("unspecified", (3, 4))
    return Case("FusedBatchNormV3" if "y_backprop" not in inputs else "FusedBatchNormGradV3",
                inputs, attrs, variant=variant, dtype=dtype, grad=grad, tol=tol,
                grad_tol=gtol if grad else None, **kw)


def _bn_inputs(xshape, c, empty_stats=False):
    stats = (0,) if empty_stats else (c,)
    return {"x": Rand(xshape), "scale": _pos((c,)), "offset": Rand((c,)),
            "mean": Rand(stats), "variance": _pos(stats)}


_DEV64 = "TensorFlux registers T = U = double (TF's CPU has no double FusedBatchNorm kernel)"

# ---------------------------------------------------------------- FusedBatchNormV3
for dt in ("float16", "float32"):
    CASES += [
        _bn(_bn_inputs((2, 2, 2, 3), 3), {"is_training": True}, "training", dt,
            grad=("x", "scale", "offset")),
        _bn(_bn_inputs((2, 2, 2, 3), 3), {"is_training": False}, "inference", dt,
            grad=("x", "scale", "offset", "mean", "variance")),
    ]
CASES += [
    # mean and variance may be empty in training when exponential_avg_factor is 1.
    _bn(_bn_inputs((2, 2, 2, 3), 3, empty_stats=True), {"is_training": True},
        "training_empty_stats", grad=("x", "scale", "offset")),
    _bn(_bn_inputs((2, 2, 2, 3), 3), {"is_training": True, "exponential_avg_factor": 0.25},
        "training_avg_factor", grad=("x", "scale", "offset")),
    _bn(_bn_inputs((2, 3, 2, 2), 3), {"is_training": True, "data_format": "NCHW"},
        "training_nchw", grad=("x", "scale", "offset")),
    _bn(_bn_inputs((2, 3, 2, 2), 3), {"is_training": False, "data_format": "NCHW"},
        "inference_nchw", grad=("x", "scale", "offset")),
    _bn(_bn_inputs((1, 2, 2, 2, 2), 2), {"is_training": True, "data_format": "NDHWC"},
        "training_ndhwc", grad=("x", "scale", "offset")),
    _bn(_bn_inputs((1, 2, 2, 2, 2), 2), {"is_training": False, "data_format": "NCDHW"},
        "inference_ncdhw"),
    _bn(_bn_inputs((2, 2, 2, 3), 3), {"is_training": True, "epsilon": 0.01},
        "training_epsilon", grad=("x", "scale", "offset")),
    _bn(_bn_inputs((2, 2, 2, 3), 3), {"is_training": False, "epsilon": 0.5},
        "inference_epsilon"),
    # One element per channel: the unbiased variance divides by n - 1 = 0.
    _bn(_bn_inputs((1, 1, 1, 3), 3), {"is_training": True}, "training_single"),
    _bn(_bn_inputs((0, 2, 2, 3), 3), {"is_training": True}, "training_empty"),
    _bn(_bn_inputs((0, 2, 2, 3), 3), {"is_training": False}, "inference_empty"),
    _bn(dict(_bn_inputs((1, 2, 2, 2), 2),
             x=np.array([0.0, np.inf, 1.0, 2.0, np.nan, 3.0, -1.0, 0.5],
                        np.float32).reshape(1, 2, 2, 2)),
        {"is_training": False}, "inference_specials"),
    # Errors.
    _bn(_bn_inputs((2, 2, 3), 3), {"is_training": True}, "x_rank3"),
    _bn(dict(_bn_inputs((2, 2, 2, 3), 3), scale=_pos((2,))), {"is_training": True},
        "bad_scale"),
    _bn(dict(_bn_inputs((2, 2, 2, 3), 3), offset=Rand((3, 1))), {"is_training": True},
        "bad_offset_rank"),
    _bn(_bn_inputs((2, 2, 2, 3), 3, empty_stats=True), {"is_training": False},
        "inference_empty_stats"),
    # float64: a TensorFlux extension.
    _bn(_bn_inputs((2, 2, 2, 3), 3), {"is_training": True}, "training", "float64", "float64",
        grad=("x", "scale", "offset"), deviation=_DEV64),
    _bn(_bn_inputs((2, 2, 2, 3), 3), {"is_training": False}, "inference", "float64",
        "float64", grad=("x", "scale", "offset"), deviation=_DEV64),
]

# ---------------------------------------------------------------- FusedBatchNormGradV3
# reserve_space_1/2: the batch mean and biased variance (training) or the population
# statistics (inference); reserve_space_3 is unused on the CPU.


def _grad_inputs(xshape, c):
    return {"y_backprop": Rand(xshape), "x": Rand(xshape), "scale": _pos((c,)),
            "reserve_space_1": Rand((c,), low=-0.5, high=0.5),
            "reserve_space_2": _pos((c,)),
            "reserve_space_3": np.zeros((0,), np.float32)}


for dt in ("float16", "float32"):
    for training in (True, False):
        CASES.append(_bn(_grad_inputs((2, 2, 2, 3), 3), {"is_training": training},
                         "training" if training else "inference", dt))
CASES += [
    _bn(_grad_inputs((2, 3, 2, 2), 3), {"is_training": True, "data_format": "NCHW"},
        "training_nchw"),
    _bn(_grad_inputs((2, 3, 2, 2), 3), {"is_training": False, "data_format": "NCHW"},
        "inference_nchw", deviation="TensorFlux's CPU FusedBatchNormGradV3 takes NCHW in "
        "inference (TF's CPU kernel refuses it)"),
    _bn(_grad_inputs((1, 2, 2, 2, 2), 2), {"is_training": True, "data_format": "NDHWC"},
        "training_ndhwc"),
    _bn(_grad_inputs((2, 2, 2, 3), 3), {"is_training": True, "epsilon": 0.01},
        "training_epsilon"),
    _bn(_grad_inputs((0, 2, 2, 3), 3), {"is_training": True}, "training_empty"),
    _bn(dict(_grad_inputs((2, 2, 2, 3), 3), y_backprop=Rand((2, 2, 3, 3))),
        {"is_training": True}, "shape_mismatch"),
    _bn(dict(_grad_inputs((2, 2, 2, 3), 3), scale=_pos((2,))), {"is_training": True},
        "bad_scale"),
    _bn(dict(_grad_inputs((2, 2, 2, 3), 3), reserve_space_3=np.zeros((0,), np.float64)),
        {"is_training": True}, "training", "float64", "float64", deviation=_DEV64),
]
