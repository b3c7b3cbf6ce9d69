"""The rest of the elementwise family (TF 1.x names, arguments and defaults): floor division and
modulo, pow, squared_difference, comparisons (bool results), logical ops, abs/sign/reciprocal/
rsqrt/log1p/tanh/sigmoid/erf, where (Select) and where_v2 (SelectV2), clip_by_value, add_n,
and the activations relu/relu6/leaky_relu/elu/selu/softplus (also under tx.nn). Binary ops
broadcast by NumPy rules; integer division or modulo by zero raises InvalidArgumentError.

Also installs the Tensor operators // % ** < <= > >= & | ~ and abs()."""

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.framework.op_def_library import apply_op
from tensorflux.ops import math_ops


def _binary(op_type, default_name, py_name):
    def fn(x, y, name=None):
        with ops.name_scope(name, default_name, [x, y]) as scope:
            x = ops.convert_to_tensor(x, name="x")
            y = ops.convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
            return apply_op(op_type, x=x, y=y, name=scope)
    fn.__name__ = fn.__qualname__ = py_name
    fn.__doc__ = "%s elementwise, broadcasting (%s)." % (py_name, op_type)
    return fn


def _unary(op_type, py_name):
    def fn(x, name=None):
        return apply_op(op_type, x=x, name=name or op_type)
    fn.__name__ = fn.__qualname__ = py_name
    fn.__doc__ = "%s elementwise (%s)." % (py_name, op_type)
    return fn


floordiv = _binary("FloorDiv", "floordiv", "floordiv")
floordiv.__doc__ = "floor(x / y) elementwise, rounding toward -inf (FloorDiv)."
floor_div = floordiv
floormod = _binary("FloorMod", "floormod", "floormod")
floormod.__doc__ = "x - floor(x / y) * y elementwise; the result has y's sign (FloorMod)."
mod = floormod
squared_difference = _binary("SquaredDifference", "SquaredDifference", "squared_difference")
squared_difference.__doc__ = "(x - y)^2 elementwise (SquaredDifference)."
less = _binary("Less", "Less", "less")
less_equal = _binary("LessEqual", "LessEqual", "less_equal")
greater = _binary("Greater", "Greater", "greater")
greater_equal = _binary("GreaterEqual", "GreaterEqual", "greater_equal")
logical_and = _binary("LogicalAnd", "LogicalAnd", "logical_and")
logical_or = _binary("LogicalOr", "LogicalOr", "logical_or")


def pow(x, y, name=None):  # pylint: disable=redefined-builtin
    """x^y elementwise (Pow). Integer tensors with a negative exponent raise
    InvalidArgumentError."""
    with ops.name_scope(name, "Pow", [x, y]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        y = ops.convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
        return apply_op("Pow", x=x, y=y, name=scope)


def equal(x, y, name=None):
    """x == y elementwise as bool (Equal); shapes that do not broadcast raise."""
    return _binary("Equal", "Equal", "equal")(x, y, name=name)


def not_equal(x, y, name=None):
    """x != y elementwise as bool (NotEqual); shapes that do not broadcast raise."""
    return _binary("NotEqual", "NotEqual", "not_equal")(x, y, name=name)


def logical_not(x, name=None):
    return apply_op("LogicalNot", x=x, name=name or "LogicalNot")


def logical_xor(x, y, name="LogicalXor"):
    """(x | y) & ~(x & y), as TF composes it."""
    with ops.name_scope(name, "LogicalXor", [x, y]):
        return logical_and(logical_or(x, y), logical_not(logical_and(x, y)))


abs = _unary("Abs", "abs")  # pylint: disable=redefined-builtin
abs.__doc__ = "|x| elementwise (Abs)."
sign = _unary("Sign", "sign")
sign.__doc__ = "-1, 0 or 1 elementwise (Sign); 0 for NaN."
reciprocal = _unary("Reciprocal", "reciprocal")
rsqrt = _unary("Rsqrt", "rsqrt")
log1p = _unary("Log1p", "log1p")
tanh = _unary("Tanh", "tanh")
sigmoid = _unary("Sigmoid", "sigmoid")
erf = _unary("Erf", "erf")
cos = _unary("Cos", "cos")
cos.__doc__ = "cos(x) elementwise, x in radians (Cos)."
sin = _unary("Sin", "sin")
sin.__doc__ = "sin(x) elementwise, x in radians (Sin)."


def where(condition, x=None, y=None, name=None):
    """TF 1.x where with x and y: Select (condition of x's shape, a scalar, or a vector of x's
    first dimension). The one-argument form (coordinates of true elements) is not supported."""
    if x is None or y is None:
        raise NotImplementedError("tx.where(condition) without x and y (the Where op) is not "
                                  "supported; pass x and y")
    with ops.name_scope(name, "Select", [condition, x, y]) as scope:
        condition = ops.convert_to_tensor(condition, dtype=dtypes.bool, name="condition")
        x = ops.convert_to_tensor(x, name="x")
        y = ops.convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
        return apply_op("Select", condition=condition, t=x, e=y, name=scope)


def where_v2(condition, x=None, y=None, name=None):
    """condition ? x : y elementwise with the three broadcast by NumPy rules (SelectV2)."""
    if x is None or y is None:
        raise NotImplementedError("tx.where_v2(condition) without x and y is not supported")
    with ops.name_scope(name, "SelectV2", [condition, x, y]) as scope:
        condition = ops.convert_to_tensor(condition, dtype=dtypes.bool, name="condition")
        x = ops.convert_to_tensor(x, name="x")
        y = ops.convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
        return apply_op("SelectV2", condition=condition, t=x, e=y, name=scope)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """max(min(t, clip_value_max), clip_value_min) elementwise (ClipByValue); the bounds are
    scalars or broadcast to t's shape."""
    with ops.name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        t = ops.convert_to_tensor(t, name="t")
        lo = ops.convert_to_tensor(clip_value_min, dtype=t.dtype.base_dtype, name="clip_value_min")
        hi = ops.convert_to_tensor(clip_value_max, dtype=t.dtype.base_dtype, name="clip_value_max")
        return apply_op("ClipByValue", t=t, clip_value_min=lo, clip_value_max=hi, name=scope)


def add_n(inputs, name=None):
    """Elementwise sum of a list of tensors of one shape and dtype (AddN)."""
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError("inputs must be a non-empty list of tensors")
    inputs = [ops.convert_to_tensor(v) for v in inputs]
    if len(inputs) == 1 and name is None:
        return inputs[0]
    return apply_op("AddN", inputs=inputs, name=name or "AddN")


# ------------------------------------------------------------------ activations (tx.nn)

def relu(features, name=None):
    return apply_op("Relu", features=features, name=name or "Relu")


def relu6(features, name=None):
    return apply_op("Relu6", features=features, name=name or "Relu6")


def leaky_relu(features, alpha=0.2, name=None):
    return apply_op("LeakyRelu", features=features, alpha=float(alpha), name=name or "LeakyRelu")


def elu(features, name=None):
    return apply_op("Elu", features=features, name=name or "Elu")


def selu(features, name=None):
    return apply_op("Selu", features=features, name=name or "Selu")


def softplus(features, name=None):
    return apply_op("Softplus", features=features, name=name or "Softplus")


# ------------------------------------------------------------------ Tensor operators

def _install_operators():
    def operator(fn, name):
        forward, reflected = math_ops._binary_operator(fn, name)  # pylint: disable=protected-access
        setattr(ops.Tensor, "__%s__" % name, forward)
        setattr(ops.Tensor, "__r%s__" % name, reflected)

    operator(floordiv, "floordiv")
    operator(floormod, "mod")
    operator(pow, "pow")
    operator(logical_and, "and")
    operator(logical_or, "or")
    operator(logical_xor, "xor")
    for name, fn in (("lt", less), ("le", less_equal), ("gt", greater), ("ge", greater_equal)):
        forward, _ = math_ops._binary_operator(fn, name)  # pylint: disable=protected-access
        setattr(ops.Tensor, "__%s__" % name, forward)
    ops.Tensor.__abs__ = lambda self: abs(self)
    ops.Tensor.__invert__ = lambda self: logical_not(self)


_install_operators()
