"""Linear-algebra op functions (tf.linalg names): qr."""

from tensorflux.framework.op_def_library import apply_op


def qr(input, full_matrices=False, name=None):  # pylint: disable=redefined-builtin
    """QR decomposition of every inner matrix of `input` [..., M, N] (float32 or float64): returns
    (q, r) with input = q @ r, q [..., M, P] with orthonormal columns and r [..., P, N] upper
    triangular, P = min(M, N); with full_matrices, q [..., M, M] and r [..., M, N] (Qr op).
    r's diagonal may be negative (Householder signs, as LAPACK)."""
    return tuple(apply_op("Qr", input=input, full_matrices=bool(full_matrices), name=name or "Qr"))
