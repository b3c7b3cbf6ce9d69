"""Case definitions for the op conformance table.

A Case is one op run on concrete inputs with concrete attrs. Inputs are numpy arrays made
deterministically from a spec (Rand, Special, explicit arrays), seeded by the case's id, so the
table alone says what runs; the oracle's data also stores the inputs it used.

What the table checks per case (tests/python/test_conformance.py):
  values   every output against TensorFlow's: exact for integer, bool and string dtypes; for
           floating dtypes |tx - tf| <= atol + rtol * |tf| (per-dtype TOLERANCE, or the case's
           own), NaN where TF has NaN, infinities of the same sign.
  shapes   the static shape TensorFlux infers for every output against TF's static shape, with
           the inputs as placeholders of known shape (inputs in `const` as constants, so
           value-dependent shape functions see them).
  errors   where TF refuses the case (shape function or kernel), TensorFlux refuses it too, with
           the same error class when TF raised an OpError.
  grads    for inputs named in `grad`: tx.gradients(outputs, inputs, grad_ys=W) against TF's
           tf.gradients with the same seeded W, and (fd=True, floating inputs) against central
           finite differences of sum(W * outputs) computed in TensorFlux.
"""

import dataclasses
import zlib
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import numpy as np

FLOAT_DTYPES = ("float16", "float32", "float64")
SIGNED_INT_DTYPES = ("int8", "int16", "int32", "int64")
UNSIGNED_INT_DTYPES = ("uint8", "uint16", "uint32", "uint64")
INT_DTYPES = SIGNED_INT_DTYPES + UNSIGNED_INT_DTYPES
REAL_DTYPES = FLOAT_DTYPES + INT_DTYPES

# Default value bounds per floating dtype: |tx - tf| <= atol + rtol * |tf|.
TOLERANCE = {
    "float16": (1e-3, 1e-3),
    "float32": (1e-5, 1e-6),
    "float64": (1e-12, 1e-14),
}
# Gradients compose several kernels: bounds are looser.
GRAD_TOLERANCE = {
    "float16": (1e-2, 1e-2),
    "float32": (1e-4, 1e-5),
    "float64": (1e-10, 1e-12),
}


def seed_of(*parts):
    return zlib.crc32("/".join(str(p) for p in parts).encode()) & 0x7FFFFFFF


@dataclasses.dataclass(frozen=True)
class Rand:
    """Seeded random values: floats uniform in [low, high), integers uniform in [low, high]
    (clipped to the dtype's range), bools fair coins. `dtype` None takes the case's dtype."""
    shape: Tuple[int, ...]
    dtype: Optional[str] = None
    low: float = -2.0
    high: float = 2.0
    nonzero: bool = False  # replace zeros (and tiny magnitudes) by `high`

    def make(self, dtype, seed):
        rs = np.random.RandomState(seed)
        dt = np.dtype(self.dtype or dtype)
        if dt == np.bool_:
            return rs.randint(0, 2, size=self.shape).astype(np.bool_)
        if dt.kind in "iu":
            info = np.iinfo(dt)
            lo, hi = max(int(self.low), info.min), min(int(self.high), info.max)
            out = rs.randint(lo, hi + 1, size=self.shape, dtype=np.int64).astype(dt)
            if self.nonzero:
                out[out == 0] = dt.type(hi if hi != 0 else 1)
            return out
        out = rs.uniform(self.low, self.high, size=self.shape).astype(dt)
        if self.nonzero:
            out[np.abs(out) < 0.05] = dt.type(self.high)
        return out


@dataclasses.dataclass(frozen=True)
class Special:
    """The edge values of a dtype: for floats 0, -0, 1, -1, 0.5, a tiny, the largest and the
    smallest finite, inf, -inf and NaN; for integers 0, 1, -1 (signed), min, max, min+1, max-1;
    for bool both. Shape (n,), or `shape` filled cyclically."""
    dtype: Optional[str] = None
    shape: Optional[Tuple[int, ...]] = None
    finite: bool = False  # leave out inf and NaN

    def make(self, dtype, seed):
        dt = np.dtype(self.dtype or dtype)
        if dt == np.bool_:
            vals = np.array([False, True])
        elif dt.kind in "iu":
            info = np.iinfo(dt)
            v = [0, 1, info.min, info.max, info.min + 1, info.max - 1, 2, 7]
            if dt.kind == "i":
                v += [-1, -7]
            vals = np.array(v, dtype=dt)
        else:
            fi = np.finfo(dt)
            v = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, float(fi.tiny), float(fi.max), float(-fi.max),
                 3.0, -0.75]
            if not self.finite:
                v += [np.inf, -np.inf, np.nan]
            vals = np.array(v, dtype=dt)
        if self.shape is None:
            return vals
        n = int(np.prod(self.shape))
        return np.resize(vals, n).reshape(self.shape)


def _materialize(spec, dtype, seed):
    if isinstance(spec, (Rand, Special)):
        return spec.make(dtype, seed)
    if isinstance(spec, list):
        return [_materialize(s, dtype, seed + i + 1) for i, s in enumerate(spec)]
    if callable(spec):
        return spec(dtype)
    return np.asarray(spec)


@dataclasses.dataclass
class Case:
    """One op on one set of inputs and attrs.

    op        the op's registered name (TF's name)
    inputs    input arg name -> spec (Rand, Special, a numpy array / literal, a function of the
              dtype, or a list of those for list inputs)
    attrs     attr name -> value; type attrs as dtype names ("float32"); "$T" is the case's dtype
    variant   a short name for what the case covers ("broadcast", "specials", "empty")
    dtype     the dtype the specs default to (also the id's last part)
    const     input names built as constants rather than placeholders
    grad      input names to differentiate against (TF's tf.gradients, finite differences)
    fd        check grad against finite differences too (float64 cases only)
    tol/grad_tol  (rtol, atol) overriding the per-dtype defaults
    deviation a documented reason TensorFlux differs from TF on this case; the test then checks
              only that TensorFlux handles it without crashing: it runs it, or refuses it with
              an error (a safer error, another error class) (see docs/TF_DIFFERENCES.md)
    program   for ops that need a graph around them (variables, datasets, queues): a function
              program(m) -> (fetches, feed_dict, init_ops) built with module m (tf.compat.v1 or
              tensorflux); `covers` names the ops it exercises, `grad_covers` the ops whose
              gradient it fetches (compared with TF's)
    unspecified  indices of outputs whose values TF leaves unspecified (uninitialized memory, e.g.
              FusedBatchNormV3's reserve spaces in inference, DynamicStitch's gaps): stored as
              zeros by the oracle and compared by shape and dtype only
    config    ConfigProto fields for a program case's session (a dict, e.g.
              {"device_count": {"CPU": 2}}), merged over the system's own settings
    """
    op: str
    inputs: Dict[str, Any] = dataclasses.field(default_factory=dict)
    attrs: Dict[str, Any] = dataclasses.field(default_factory=dict)
    variant: str = "base"
    dtype: str = "float32"
    const: Sequence[str] = ()
    grad: Sequence[str] = ()
    fd: bool = True
    tol: Optional[Tuple[float, float]] = None
    grad_tol: Optional[Tuple[float, float]] = None
    deviation: Optional[str] = None
    program: Optional[Callable] = None
    covers: Sequence[str] = ()
    grad_covers: Sequence[str] = ()
    unspecified: Sequence[int] = ()
    config: Optional[Dict[str, Any]] = None

    @property
    def id(self):
        return "%s/%s/%s" % (self.op, self.variant, self.dtype)

    def arrays(self):
        """Input name -> numpy array (or list of arrays), deterministic for the case."""
        return {name: _materialize(spec, self.dtype, seed_of(self.id, name))
                for name, spec in self.inputs.items()}

    def resolved_attrs(self):
        return {k: (self.dtype if v == "$T" else v) for k, v in self.attrs.items()}

    def upstream(self, shape, dtype, index):
        """The seeded grad_ys for output `index`: uniform in [-1, 1)."""
        rs = np.random.RandomState(seed_of(self.id, "w", index))
        return rs.uniform(-1.0, 1.0, size=shape).astype(dtype)


def expand(op, dtypes, variant="base", **kwargs):
    """One Case per dtype with the same inputs, attrs and options."""
    return [Case(op=op, dtype=dt, variant=variant, **kwargs) for dt in dtypes]
