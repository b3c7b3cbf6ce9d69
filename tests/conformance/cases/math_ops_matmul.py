"""Matrix products (ops/math_ops_matmul.cc)."""

from conformance.table import Case, Rand

CASES = [Case("MatMul", {"a": Rand((3, 2)), "b": Rand((3, 4))}, {"transpose_a": True},
              variant="transpose_a", dtype=dt, grad=("a", "b")) for dt in ("float32", "float64")]
