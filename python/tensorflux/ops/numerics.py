"""tx.check_numerics / tx.debugging.check_numerics (TF 1.x): the NaN/Inf guard as an op.

For a guard on every op of a step, set the session option instead:
tx.Session(config=tx.ConfigProto(check_numerics=True)) (a TensorFlux extension of
ConfigProto) fails the step at the first node whose floating output holds a NaN or Inf,
naming that node and op.
"""

from tensorflux.framework.op_def_library import apply_op


def check_numerics(tensor, message, name=None):
    """`tensor` unchanged; running it raises InvalidArgumentError "<message> : Tensor had NaN
    values" (or "Inf values", "NaN and Inf values") when it holds any. Gradients through it are
    checked the same way."""
    return apply_op("CheckNumerics", tensor=tensor, message=message,
                    name=name or "CheckNumerics")
