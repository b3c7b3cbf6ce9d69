"""Initializers (tx.initializers, ops/init_ops.py) and the Qr op behind Orthogonal: fans,
moments of large samples against the formulas (numpy statistics), bounds, determinism under a
graph seed, op seeds, orthogonality, and Qr against numpy.linalg.qr."""

import math

import numpy as np
import pytest

import tensorflux as tx
from tensorflux.ops import init_ops


def run(t, graph=None):
    with tx.Session(graph=graph or tx.get_default_graph()) as sess:
        return sess.run(t)


def sample(init, shape, dtype=tx.float32):
    g = tx.Graph()
    with g.as_default():
        t = init(shape, dtype=dtype)
        assert t.dtype == dtype and t.shape.as_list() == list(shape)
    return run(t, g)


# ------------------------------------------------------------------ fans

@pytest.mark.parametrize("shape,fans", [
    ([], (1, 1)), ([7], (7, 7)), ([3, 5], (3, 5)), ([3, 3, 16, 32], (144, 288)),
    ([2, 3, 4, 5, 6], (120, 144)), ([5, 1, 8], (5, 40)),
])
def test_compute_fans_as_tf(shape, fans):
    assert init_ops._compute_fans(shape) == fans


# ------------------------------------------------------------------ fixed values

def test_zeros_ones_constant(graph):
    np.testing.assert_array_equal(run(tx.zeros_initializer()([2, 3])), np.zeros((2, 3)))
    z = tx.initializers.zeros()([4], dtype=tx.int64)
    assert z.dtype == tx.int64
    np.testing.assert_array_equal(run(z), [0, 0, 0, 0])
    np.testing.assert_array_equal(run(tx.ones_initializer(dtype=tx.int32)([3])), [1, 1, 1])
    np.testing.assert_array_equal(run(tx.initializers.zeros(tx.bool)([2])), [False, False])
    np.testing.assert_array_equal(run(tx.constant_initializer(2.5)([2, 2])), np.full((2, 2), 2.5))
    c = tx.constant_initializer([1, 2, 3, 4, 5, 6])([2, 3])
    np.testing.assert_array_equal(run(c), [[1, 2, 3], [4, 5, 6]])
    # A shorter list repeats its last value (TF 1.x).
    np.testing.assert_array_equal(run(tx.constant_initializer([7, 8])([2, 2])), [[7, 8], [8, 8]])
    with pytest.raises((TypeError, ValueError)):
        tx.constant_initializer([1, 2, 3], verify_shape=True)([2, 2])
    with pytest.raises(TypeError):
        tx.constant_initializer({"a": 1})


def test_random_initializers_need_float_dtype():
    for cls in (tx.random_normal_initializer, tx.random_uniform_initializer,
                tx.truncated_normal_initializer, tx.glorot_uniform_initializer,
                tx.orthogonal_initializer):
        with pytest.raises(ValueError, match="floating point"):
            cls(dtype=tx.int32)
    with pytest.raises(ValueError, match="floating point"):
        tx.random_normal_initializer()([2], dtype=tx.int64)


# ------------------------------------------------------------------ plain random ones

N = 40000


def test_random_uniform_bounds_and_moments():
    v = sample(tx.random_uniform_initializer(-2.0, 3.0, seed=1), [N])
    assert v.min() >= -2.0 and v.max() < 3.0
    assert abs(v.mean() - 0.5) < 0.05
    assert abs(v.std() - 5 / math.sqrt(12)) < 0.03
    d = sample(tx.random_uniform_initializer(seed=2), [N], tx.float64)  # maxval None: [0, 1)
    assert d.dtype == np.float64 and d.min() >= 0 and d.max() < 1


def test_random_normal_moments():
    v = sample(tx.random_normal_initializer(1.0, 2.0, seed=3), [N])
    assert abs(v.mean() - 1.0) < 0.05
    assert abs(v.std() - 2.0) / 2.0 < 0.03
    assert np.abs(v - 1).max() > 4.5  # not truncated: beyond 2 stddev happens


def test_truncated_normal_bounds_and_moments():
    v = sample(tx.truncated_normal_initializer(0.5, 2.0, seed=4), [N])
    assert np.abs(v - 0.5).max() <= 4.0 + 1e-5
    assert abs(v.mean() - 0.5) < 0.05
    assert abs(v.std() - 2.0 * init_ops._TRUNCATED_NORMAL_STDDEV) < 0.03


def test_keras_defaults_and_get():
    k = tx.keras.initializers
    assert k.RandomNormal().stddev == 0.05 and k.TruncatedNormal().stddev == 0.05
    u = k.RandomUniform()
    assert (u.minval, u.maxval) == (-0.05, 0.05)
    assert isinstance(k.get("glorot_uniform"), tx.initializers.glorot_uniform)
    assert isinstance(k.get("GlorotNormal"), tx.initializers.glorot_normal)
    he = k.get("he_normal")
    assert (he.scale, he.mode, he.distribution) == (2.0, "fan_in", "truncated_normal")
    assert k.get(None) is None
    with pytest.raises(ValueError):
        k.get("no_such_initializer")


# ------------------------------------------------------------------ variance scaling

@pytest.mark.parametrize("mode,n", [("fan_in", 100), ("fan_out", 400), ("fan_avg", 250)])
@pytest.mark.parametrize("distribution", ["truncated_normal", "untruncated_normal", "uniform"])
def test_variance_scaling(mode, n, distribution):
    scale = 3.0
    v = sample(tx.variance_scaling_initializer(scale, mode, distribution, seed=5), [100, 400])
    want_std = math.sqrt(scale / n)
    assert abs(v.mean()) < 0.05 * want_std
    assert abs(v.std() - want_std) / want_std < 0.03
    if distribution == "uniform":
        assert np.abs(v).max() <= math.sqrt(3 * scale / n)
    elif distribution == "truncated_normal":
        assert np.abs(v).max() <= 2 * want_std / init_ops._TRUNCATED_NORMAL_STDDEV * (1 + 1e-6)
    else:
        assert np.abs(v).max() > 2.5 * want_std


@pytest.mark.parametrize("init,shape,std,limit", [
    (tx.initializers.glorot_uniform, [300, 100], math.sqrt(2 / 400), math.sqrt(6 / 400)),
    (tx.initializers.glorot_normal, [300, 100], math.sqrt(2 / 400), None),
    (tx.initializers.xavier_uniform, [3, 3, 20, 30], math.sqrt(2 / 450), math.sqrt(6 / 450)),
    (tx.initializers.he_uniform, [3, 3, 20, 30], math.sqrt(2 / 180), math.sqrt(6 / 180)),
    (tx.initializers.he_normal, [3, 3, 20, 30], math.sqrt(2 / 180), None),
    (tx.initializers.lecun_uniform, [200, 50], math.sqrt(1 / 200), math.sqrt(3 / 200)),
    (tx.initializers.lecun_normal, [200, 50], math.sqrt(1 / 200), None),
])
def test_named_variance_scaling_instances(init, shape, std, limit):
    v = sample(init(seed=6), shape)
    assert abs(v.std() - std) / std < 0.04
    if limit is not None:
        assert np.abs(v).max() <= limit
        assert np.abs(v).max() > 0.95 * limit
    else:
        assert np.abs(v).max() <= 2 * std / init_ops._TRUNCATED_NORMAL_STDDEV * (1 + 1e-6)


def test_variance_scaling_argument_errors():
    with pytest.raises(ValueError, match="positive"):
        tx.variance_scaling_initializer(0.0)
    with pytest.raises(ValueError, match="mode"):
        tx.variance_scaling_initializer(mode="fan_sum")
    with pytest.raises(ValueError, match="distribution"):
        tx.variance_scaling_initializer(distribution="cauchy")
    with pytest.raises(ValueError, match="fully defined"):
        tx.glorot_uniform_initializer()([None, 3])


# ------------------------------------------------------------------ seeds

ALL = [
    lambda s: tx.random_uniform_initializer(-1, 1, seed=s),
    lambda s: tx.random_normal_initializer(seed=s),
    lambda s: tx.truncated_normal_initializer(seed=s),
    lambda s: tx.glorot_uniform_initializer(seed=s),
    lambda s: tx.initializers.he_normal(seed=s),
    lambda s: tx.orthogonal_initializer(seed=s),
]


def _graph_values(make, graph_seed, op_seed):
    g = tx.Graph()
    with g.as_default():
        if graph_seed is not None:
            tx.set_random_seed(graph_seed)
        t = make(op_seed)([6, 5])
    return run(t, g)


@pytest.mark.parametrize("make", ALL)
def test_graph_seed_gives_identical_bits(make):
    a = _graph_values(make, 1234, None)
    b = _graph_values(make, 1234, None)
    assert a.tobytes() == b.tobytes()
    c = _graph_values(make, 1235, None)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("make", ALL)
def test_op_seeds_select_streams(make):
    a = _graph_values(make, None, 7)
    assert a.tobytes() == _graph_values(make, None, 7).tobytes()
    assert not np.array_equal(a, _graph_values(make, None, 8))


# ------------------------------------------------------------------ orthogonal and Qr

@pytest.mark.parametrize("shape", [[6, 4], [4, 6], [5, 5], [3, 3, 4, 8], [2, 2, 3, 2], [1, 7],
                                   [7, 1]])
def test_orthogonal(shape):
    gain = 1.5
    v = sample(tx.orthogonal_initializer(gain=gain, seed=9), shape, tx.float64)
    flat = v.reshape(-1, shape[-1])
    rows, cols = flat.shape
    if rows >= cols:
        np.testing.assert_allclose(flat.T @ flat, gain ** 2 * np.eye(cols), atol=1e-12)
    else:
        np.testing.assert_allclose(flat @ flat.T, gain ** 2 * np.eye(rows), atol=1e-12)
    f32 = sample(tx.orthogonal_initializer(seed=9), shape)
    m = f32.reshape(-1, shape[-1])
    small = m.T @ m if rows >= cols else m @ m.T
    np.testing.assert_allclose(small, np.eye(min(rows, cols)), atol=1e-5)


@pytest.mark.parametrize("shape", [[6, 4], [4, 6], [2, 3, 5]])
def test_orthogonal_matches_numpy_from_the_same_normal_draw(shape):
    """TF's construction replayed in numpy on the same random_normal values (same op seed)."""
    rows, cols = int(np.prod(shape[:-1])), shape[-1]
    flat = (cols, rows) if rows < cols else (rows, cols)
    g = tx.Graph()
    with g.as_default():
        a = run(tx.random_normal(flat, dtype=tx.float64, seed=21), g)
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    want = 0.5 * q.reshape(shape)
    got = sample(tx.orthogonal_initializer(gain=0.5, seed=21), shape, tx.float64)
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_identity(graph):
    np.testing.assert_array_equal(run(tx.initializers.identity(gain=2.0)([3, 5])),
                                  2.0 * np.eye(3, 5))
    v = run(tx.keras.initializers.get("Identity")([4, 2], dtype=tx.float64))
    assert v.dtype == np.float64
    np.testing.assert_array_equal(v, np.eye(4, 2))
    with pytest.raises(ValueError, match="2D matrices"):
        tx.initializers.identity()([2, 2, 2])


def test_orthogonal_needs_rank_2():
    with pytest.raises(ValueError, match="two-dimensional"):
        tx.orthogonal_initializer()([5])


def _match_signs(q_ref, r_ref, q, r):
    """numpy's (q_ref, r_ref) with each column of q (row of r) negated where r's diagonal
    signs differ: QR is unique up to these signs."""
    p = min(r.shape[-2], r.shape[-1])
    s = np.sign(np.diagonal(r, axis1=-2, axis2=-1)[..., :p]) * \
        np.sign(np.diagonal(r_ref, axis1=-2, axis2=-1)[..., :p])
    q_ref = q_ref.copy()
    r_ref = r_ref.copy()
    q_ref[..., :, :p] *= s[..., None, :]
    r_ref[..., :p, :] *= s[..., :, None]
    return q_ref, r_ref


@pytest.mark.parametrize("shape", [[5, 3], [3, 5], [4, 4], [2, 3, 6, 4]])
@pytest.mark.parametrize("full", [False, True])
def test_qr_matches_numpy(graph, shape, full):
    a = np.random.RandomState(0).randn(*shape)
    q, r = run(tx.linalg.qr(tx.constant(a), full_matrices=full))
    q_ref, r_ref = np.linalg.qr(a, mode="complete" if full else "reduced")
    q_ref, r_ref = _match_signs(q_ref, r_ref, q, r)
    np.testing.assert_allclose(q, q_ref, atol=1e-10)
    np.testing.assert_allclose(r, r_ref, atol=1e-10)
    q32, r32 = run(tx.linalg.qr(tx.constant(a.astype(np.float32)), full_matrices=full))
    assert q32.dtype == np.float32
    np.testing.assert_allclose(np.matmul(q32, r32), a, atol=1e-5)


def test_qr_static_shapes_and_errors(graph):
    q, r = tx.linalg.qr(tx.placeholder(tx.float32, [None, 7, 3]))
    assert q.shape.as_list() == [None, 7, 3] and r.shape.as_list() == [None, 3, 3]
    q, r = tx.linalg.qr(tx.placeholder(tx.float64, [2, 5]), full_matrices=True)
    assert q.shape.as_list() == [2, 2] and r.shape.as_list() == [2, 5]
    with pytest.raises(ValueError, match="rank"):
        tx.linalg.qr(tx.constant([1.0, 2.0]))
    with pytest.raises(TypeError):
        tx.linalg.qr(tx.constant([[1, 2], [3, 4]]))
