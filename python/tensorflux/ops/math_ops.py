"""Elementwise math, matmul and cast (TF 1.x names and defaults), and the Tensor operators
+ - * / @ and unary -. Binary ops broadcast by NumPy rules."""

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.framework.op_def_library import apply_op


def add(x, y, name=None):
    """x + y elementwise (AddV2; Add for strings, which concatenates)."""
    with ops.name_scope(name, "Add", [x, y]) as scope:
        return _add_named(x, y, scope)


def subtract(x, y, name=None):
    """x - y elementwise (Sub)."""
    return apply_op("Sub", x=x, y=y, name=name or "Sub")


def multiply(x, y, name=None):
    """x * y elementwise (Mul)."""
    return apply_op("Mul", x=x, y=y, name=name or "Mul")


def realdiv(x, y, name=None):
    """x / y elementwise for real types (RealDiv; integer division truncates)."""
    return apply_op("RealDiv", x=x, y=y, name=name or "RealDiv")


_TRUEDIV_FLOAT = {dtypes.int8: dtypes.float32, dtypes.uint8: dtypes.float32,
                  dtypes.int16: dtypes.float32, dtypes.uint16: dtypes.float32,
                  dtypes.int32: dtypes.float64, dtypes.int64: dtypes.float64}


def truediv(x, y, name=None):
    """x / y in floating point: integers are cast first (int8/16 -> float32, int32/64 ->
    float64), then RealDiv, as Python 3 division does."""
    with ops.name_scope(name, "truediv", [x, y]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        y = ops.convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
        target = _TRUEDIV_FLOAT.get(x.dtype.base_dtype)
        if target is not None:
            x = cast(x, target)
            y = cast(y, target)
        return apply_op("RealDiv", x=x, y=y, name=scope)


def divide(x, y, name=None):
    """x / y (Python 3 semantics: see truediv)."""
    return truediv(x, y, name=name or "truediv")


def negative(x, name=None):
    """-x elementwise (Neg)."""
    return apply_op("Neg", x=x, name=name or "Neg")


def square(x, name=None):
    return apply_op("Square", x=x, name=name or "Square")


def sqrt(x, name=None):
    return apply_op("Sqrt", x=x, name=name or "Sqrt")


def exp(x, name=None):
    return apply_op("Exp", x=x, name=name or "Exp")


def log(x, name=None):
    """Natural logarithm elementwise."""
    return apply_op("Log", x=x, name=name or "Log")


def maximum(x, y, name=None):
    return apply_op("Maximum", x=x, y=y, name=name or "Maximum")


def minimum(x, y, name=None):
    return apply_op("Minimum", x=x, y=y, name=name or "Minimum")


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, output_type=None, name=None):
    """op(a) @ op(b). Rank-2 a [M,K] and b [K,N] give MatMul; when either has rank > 2 (or an
    unknown rank) the product is batched (BatchMatMulV2): a [..., M, K] x b [..., K, N] ->
    [..., M, N], the batch dims broadcasting by NumPy rules. Adjoint equals transpose for real
    types (for batched inputs both transpose the last two dims). output_type: None or the
    inputs' dtype (TF's int8 -> int32 products are not supported: NotImplementedError)."""
    if a_is_sparse or b_is_sparse:
        raise NotImplementedError("tx.matmul: sparse inputs are not supported")
    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_b and adjoint_b can be True.")
    with ops.name_scope(name, "MatMul", [a, b]) as scope:
        a = ops.convert_to_tensor(a, name="a")
        b = ops.convert_to_tensor(b, dtype=a.dtype.base_dtype, name="b")
        if output_type is not None and \
                dtypes.as_dtype(output_type).base_dtype != a.dtype.base_dtype:
            raise NotImplementedError("tx.matmul: output_type=%s for %s inputs is not supported"
                                      % (dtypes.as_dtype(output_type).name, a.dtype.name))
        ta, tb = bool(transpose_a or adjoint_a), bool(transpose_b or adjoint_b)
        for t in (a, b):
            if t.shape.ndims is not None and t.shape.ndims < 2:
                raise ValueError("tx.matmul needs inputs of rank >= 2; %s has shape %s"
                                 % (t.name, t.shape))
        if a.shape.ndims == 2 and b.shape.ndims == 2:
            return apply_op("MatMul", a=a, b=b, transpose_a=ta, transpose_b=tb, name=scope)
        return apply_op("BatchMatMulV2", x=a, y=b, adj_x=ta, adj_y=tb, name=scope)


def cast(x, dtype, name=None):
    """x converted to `dtype` (Cast); returns x itself when it already has that dtype."""
    base = dtypes.as_dtype(dtype).base_dtype
    if isinstance(x, ops.Tensor) and x.dtype.base_dtype == base:
        return x
    with ops.name_scope(name, "Cast", [x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        if x.dtype.base_dtype == base:
            return x
        return apply_op("Cast", x=x, DstT=base, name=scope)


def to_float(x, name="ToFloat"):
    return cast(x, dtypes.float32, name=name)


def to_double(x, name="ToDouble"):
    return cast(x, dtypes.float64, name=name)


def to_int32(x, name="ToInt32"):
    return cast(x, dtypes.int32, name=name)


def to_int64(x, name="ToInt64"):
    return cast(x, dtypes.int64, name=name)


# ------------------------------------------------------------------ Tensor operators

def _binary_operator(fn, op_name):
    def forward(x, y):
        with ops.name_scope(None, op_name, [x, y]) as scope:
            y = ops.convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
            return fn(x, y, name=scope)

    def reflected(y, x):
        with ops.name_scope(None, op_name, [x, y]) as scope:
            x = ops.convert_to_tensor(x, dtype=y.dtype.base_dtype, name="x")
            return fn(x, y, name=scope)

    forward.__name__ = "__%s__" % op_name
    reflected.__name__ = "__r%s__" % op_name
    return forward, reflected


def _is_string(v):
    if isinstance(v, ops.Tensor):
        return v.dtype.base_dtype == dtypes.string
    return isinstance(v, (str, bytes))


def _add_named(x, y, name):
    op_type = "Add" if _is_string(x) or _is_string(y) else "AddV2"
    return apply_op(op_type, x=x, y=y, name=name)


def _install_operators():
    for op_name, fn in (("add", _add_named), ("sub", subtract), ("mul", multiply),
                        ("truediv", truediv)):
        forward, reflected = _binary_operator(fn, op_name)
        setattr(ops.Tensor, "__%s__" % op_name, forward)
        setattr(ops.Tensor, "__r%s__" % op_name, reflected)
    forward, reflected = _binary_operator(
        lambda a, b, name: matmul(a, b, name=name), "matmul")
    ops.Tensor.__matmul__ = forward
    ops.Tensor.__rmatmul__ = reflected
    ops.Tensor.__neg__ = lambda self: negative(self)


_install_operators()
