"""Weight regularizers: callables weights -> scalar penalty tensor (or None for "no penalty").

Two families, as in TF 1.x, differing in the L2 term:

  tx.contrib.layers.l1_regularizer(scale)   scale * sum(|w|)
  tx.contrib.layers.l2_regularizer(scale)   scale * sum(w^2) / 2      (L2Loss, TF1's weight decay)
  tx.contrib.layers.l1_l2_regularizer(scale_l1, scale_l2)   the sum of both
  tx.keras.regularizers.l1(l) / l2(l) / l1_l2(l1, l2) / L1L2:  l1 * sum(|w|) + l2 * sum(w^2)
                                            (no 1/2: keras' l2(l) equals contrib's l2(2 l))

Either kind may be given as a layer's kernel_regularizer / bias_regularizer or to
tx.get_variable(regularizer=): the penalty is then added to tx.GraphKeys.REGULARIZATION_LOSSES
and summed by tx.losses.get_regularization_loss(). The TF 1.x examples use the contrib form.
"""

import numbers

from tensorflux.framework import ops
from tensorflux.ops import array_ops
from tensorflux.ops import math_ops
from tensorflux.ops import math_ops2
from tensorflux.ops import nn_ops
from tensorflux.ops import reduction_ops


def _check_scale(scale):
    """None when the scale disables the regularizer, else the scale; raises as TF does."""
    if isinstance(scale, numbers.Integral) and not isinstance(scale, bool):
        raise ValueError("scale cannot be an integer: %s" % (scale,))
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError("Setting a scale less than 0 on a regularizer: %g" % scale)
        if scale == 0.0:
            return None
    return scale


def _scaled_regularizer(scale, scope, default_name, penalty):
    if _check_scale(scale) is None:
        return lambda _: None

    def regularizer(weights):
        with ops.name_scope(scope, default_name, [weights]) as name:
            weights = ops.convert_to_tensor(weights, name="weights")
            my_scale = ops.convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return math_ops.multiply(my_scale, penalty(weights), name=name)
    regularizer.__name__ = default_name
    return regularizer


def l1_regularizer(scale, scope=None):
    """weights -> scale * sum(|weights|). A scale of 0.0 gives a regularizer returning None;
    an integer or negative scale is a ValueError."""
    return _scaled_regularizer(
        scale, scope, "l1_regularizer",
        lambda w: reduction_ops.reduce_sum(math_ops2.abs(w)))


def l2_regularizer(scale, scope=None):
    """weights -> scale * sum(weights ** 2) / 2 (L2Loss). A scale of 0.0 gives a regularizer
    returning None; an integer or negative scale is a ValueError."""
    return _scaled_regularizer(scale, scope, "l2_regularizer", nn_ops.l2_loss)


def sum_regularizer(regularizer_list, scope=None):
    """weights -> the sum of the non-None penalties of regularizer_list (None if all are)."""
    regularizer_list = [r for r in regularizer_list if r is not None]
    if not regularizer_list:
        return None

    def regularizer(weights):
        with ops.name_scope(scope, "sum_regularizer", [weights]) as name:
            penalties = [r(weights) for r in regularizer_list]
            penalties = [p for p in penalties if p is not None]
            if not penalties:
                return None
            return math_ops2.add_n(penalties, name=name)
    return regularizer


def l1_l2_regularizer(scale_l1=1.0, scale_l2=1.0, scope=None):
    """weights -> scale_l1 * sum(|w|) + scale_l2 * sum(w^2) / 2; both scales 0 give a
    regularizer returning None."""
    if _check_scale(scale_l1) is None and _check_scale(scale_l2) is None:
        return lambda _: None
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)],
                           scope=scope or "l1_l2_regularizer")


def apply_regularization(regularizer, weights_list=None):
    """The sum of regularizer(w) over weights_list (default: the WEIGHTS collection), added to
    REGULARIZATION_LOSSES and returned. Raises ValueError for an empty list."""
    if not weights_list:
        weights_list = ops.get_collection(ops.GraphKeys.WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize.")
    with ops.name_scope(None, "get_regularization_penalty", list(weights_list)) as scope:
        penalties = [regularizer(w) for w in weights_list]
        penalties = [p for p in penalties if p is not None]
        if not penalties:
            raise ValueError("The regularizer returned None for every weight.")
        summed = math_ops2.add_n(penalties, name=scope)
        ops.add_to_collection(ops.GraphKeys.REGULARIZATION_LOSSES, summed)
        return summed


# ------------------------------------------------------------------ keras style

class Regularizer:
    """Base class of the keras-style regularizers: callables x -> scalar penalty."""

    def __call__(self, x):
        return 0.0

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class L1L2(Regularizer):
    """x -> l1 * sum(|x|) + l2 * sum(x ** 2) (keras' definition: no 1/2 on the L2 term)."""

    def __init__(self, l1=0.0, l2=0.0):  # pylint: disable=redefined-outer-name
        self.l1 = float(l1)
        self.l2 = float(l2)
        if self.l1 < 0 or self.l2 < 0:
            raise ValueError("L1L2: l1 and l2 must be >= 0, got %g and %g" % (self.l1, self.l2))

    def __call__(self, x):
        with ops.name_scope(None, "L1L2", [x]) as name:
            x = ops.convert_to_tensor(x, name="x")
            dtype = x.dtype.base_dtype
            terms = []
            if self.l1:
                terms.append(math_ops.multiply(
                    ops.convert_to_tensor(self.l1, dtype=dtype),
                    reduction_ops.reduce_sum(math_ops2.abs(x))))
            if self.l2:
                terms.append(math_ops.multiply(
                    ops.convert_to_tensor(self.l2, dtype=dtype),
                    reduction_ops.reduce_sum(math_ops.square(x))))
            if not terms:
                return ops.convert_to_tensor(0.0, dtype=dtype, name=name)
            if len(terms) == 1:
                return array_ops.identity(terms[0], name=name)
            return math_ops2.add_n(terms, name=name)

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


def l1(l1=0.01, *, l=None):  # noqa: E741  pylint: disable=redefined-outer-name,invalid-name
    """keras.regularizers.l1: x -> l1 * sum(|x|) (`l`: keras' older name of l1)."""
    return L1L2(l1=l1 if l is None else l)


def l2(l2=0.01, *, l=None):  # noqa: E741  pylint: disable=redefined-outer-name,invalid-name
    """keras.regularizers.l2: x -> l2 * sum(x ** 2) (`l`: keras' older name of l2)."""
    return L1L2(l2=l2 if l is None else l)


def l1_l2(l1=0.01, l2=0.01):  # pylint: disable=redefined-outer-name
    """keras.regularizers.l1_l2: x -> l1 * sum(|x|) + l2 * sum(x ** 2)."""
    return L1L2(l1=l1, l2=l2)
