"""tx.nn pooling and batch norm (python/tensorflux/ops/pool_bn_ops.py) against numpy references:
max/avg pooling with SAME/VALID/explicit padding, odd sizes, strides != ksize, float32/float64;
fused_batch_norm in training (unbiased batch_variance, exponential_avg_factor) and inference;
gradients vs numpy formulas and finite differences; errors."""

import itertools

import numpy as np
import pytest

import tensorflux as tx

RNG = np.random.default_rng(11)


def run(fetches, feed_dict=None):
    with tx.Session(graph=tx.get_default_graph()) as sess:
        return sess.run(fetches, feed_dict)


def np_pool(x, k, s, padding, kind):
    """Reference pooling in float64 over explicit (before, after) pads or SAME/VALID."""
    n, h, w, c = x.shape
    if padding == "VALID":
        pads = [(0, 0), (0, 0)]
    elif padding == "SAME":
        pads = []
        for size, kk, ss in ((h, k[0], s[0]), (w, k[1], s[1])):
            out = -(-size // ss)
            total = max((out - 1) * ss + kk - size, 0)
            pads.append((total // 2, total - total // 2))
    else:
        pads = [tuple(padding[1]), tuple(padding[2])]
    oh = (h + sum(pads[0]) - k[0]) // s[0] + 1
    ow = (w + sum(pads[1]) - k[1]) // s[1] + 1
    out = np.zeros((n, oh, ow, c))
    xd = x.astype(np.float64)
    for i, j in itertools.product(range(oh), range(ow)):
        y0, x0 = i * s[0] - pads[0][0], j * s[1] - pads[1][0]
        win = xd[:, max(y0, 0):min(y0 + k[0], h), max(x0, 0):min(x0 + k[1], w), :]
        out[:, i, j, :] = win.max(axis=(1, 2)) if kind == "max" else win.mean(axis=(1, 2))
    return out


CASES = [((2, 7, 9, 3), (3, 3), (2, 2), "SAME"), ((2, 7, 9, 3), (3, 3), (2, 2), "VALID"),
         ((1, 5, 6, 4), (2, 3), (1, 2), "SAME"), ((3, 8, 8, 2), (2, 2), (2, 2), "VALID"),
         ((1, 3, 2, 5), (4, 4), (1, 1), "SAME")]


@pytest.mark.parametrize("shape,k,s,padding", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pooling_matches_numpy(graph, shape, k, s, padding, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    mp = tx.nn.max_pool2d(x, list(k), list(s), padding)
    ap = tx.nn.avg_pool2d(x, list(k), list(s), padding)
    mp1 = tx.nn.max_pool(x, [1, k[0], k[1], 1], [1, s[0], s[1], 1], padding)
    want_max, want_avg = np_pool(x, k, s, padding, "max"), np_pool(x, k, s, padding, "avg")
    assert mp.shape.as_list() == list(want_max.shape)
    got = run([mp, ap, mp1])
    assert got[0].dtype == dtype
    np.testing.assert_allclose(got[0], want_max, rtol=1e-6)
    np.testing.assert_allclose(got[1], want_avg, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got[2], got[0])


def test_max_pool_explicit_padding(graph):
    x = RNG.standard_normal((2, 6, 7, 3)).astype(np.float32)
    pads = [[0, 0], [1, 2], [0, 2], [0, 0]]
    got = run(tx.nn.max_pool2d(x, 3, [2, 3], pads))
    np.testing.assert_allclose(got, np_pool(x, (3, 3), (2, 3), pads, "max"), rtol=1e-6)


def test_pool_gradients(graph):
    x = RNG.standard_normal((2, 5, 7, 3))
    xt = tx.constant(x)
    dy = RNG.standard_normal((2, 3, 4, 3))
    gm = tx.gradients(tx.nn.max_pool2d(xt, 3, 2, "SAME") * dy, xt)[0]
    ga = tx.gradients(tx.nn.avg_pool2d(xt, 3, 2, "SAME") * dy, xt)[0]
    got_m, got_a = run([gm, ga])
    # numpy reference: route each dy to its window's first maximum / spread over valid elements
    want_m, want_a = np.zeros_like(x), np.zeros_like(x)
    for b, i, j, c in itertools.product(range(2), range(3), range(4), range(3)):
        y0, x0 = i * 2 - 1, j * 2 - 1   # SAME, in 5x7, k 3, s 2: pad before 1 on both dims
        ys, xs = slice(max(y0, 0), min(y0 + 3, 5)), slice(max(x0, 0), min(x0 + 3, 7))
        win = x[b, ys, xs, c]
        r, q = np.unravel_index(np.argmax(win), win.shape)
        want_m[b, ys.start + r, xs.start + q, c] += dy[b, i, j, c]
        want_a[b, ys, xs, c] += dy[b, i, j, c] / win.size
    np.testing.assert_allclose(got_m, want_m, rtol=1e-12)
    np.testing.assert_allclose(got_a, want_a, rtol=1e-12)


def np_batch_norm(x, scale, offset, mean, var, eps):
    return (x - mean) / np.sqrt(var + eps) * scale + offset


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("factor", [1.0, 0.25])
def test_fused_batch_norm_training(graph, dtype, factor):
    x = (RNG.standard_normal((4, 5, 3, 6)) * 2 + 1).astype(dtype)
    scale, offset = RNG.uniform(0.5, 2, 6), RNG.uniform(-1, 1, 6)
    old_mean, old_var = RNG.uniform(-1, 1, 6), RNG.uniform(0.5, 2, 6)
    kwargs = {} if factor == 1.0 else dict(mean=old_mean, variance=old_var)
    y, m, v = tx.nn.fused_batch_norm(x, scale, offset, epsilon=1e-3,
                                     exponential_avg_factor=factor, **kwargs)
    got_y, got_m, got_v = run([y, m, v])
    xd = x.astype(np.float64)
    bm, bv = xd.mean(axis=(0, 1, 2)), xd.var(axis=(0, 1, 2))
    unbiased = xd.var(axis=(0, 1, 2), ddof=1)
    tol = 1e-10 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(got_y, np_batch_norm(xd, scale, offset, bm, bv, 1e-3), rtol=tol,
                               atol=tol)
    np.testing.assert_allclose(got_m, (1 - factor) * old_mean + factor * bm, rtol=tol, atol=tol)
    np.testing.assert_allclose(got_v, (1 - factor) * old_var + factor * unbiased, rtol=tol,
                               atol=tol)
    assert got_y.dtype == dtype


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_fused_batch_norm_inference(graph, data_format):
    x = RNG.standard_normal((2, 4, 3, 5)).astype(np.float32)
    c = 5 if data_format == "NHWC" else 4
    scale, offset = RNG.uniform(0.5, 2, c), RNG.uniform(-1, 1, c)
    mean, var = RNG.uniform(-1, 1, c), RNG.uniform(0.5, 2, c)
    y, m, v = tx.nn.fused_batch_norm(x, scale, offset, mean, var, epsilon=1e-3,
                                     data_format=data_format, is_training=False)
    got_y, got_m, got_v = run([y, m, v])
    shape = (1, 1, 1, c) if data_format == "NHWC" else (1, c, 1, 1)
    want = np_batch_norm(x.astype(np.float64), *(a.reshape(shape) for a in (scale, offset, mean,
                                                                             var)), 1e-3)
    np.testing.assert_allclose(got_y, want, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(got_m, mean, rtol=1e-6)
    np.testing.assert_allclose(got_v, var, rtol=1e-6)


@pytest.mark.parametrize("is_training", [True, False])
def test_fused_batch_norm_gradient_finite_differences(graph, is_training):
    x = RNG.standard_normal((2, 3, 2, 3))
    scale, offset = RNG.uniform(0.5, 2, 3), RNG.uniform(-1, 1, 3)
    mean, var = RNG.uniform(-1, 1, 3), RNG.uniform(0.5, 2, 3)
    w = RNG.standard_normal(x.shape)
    xp = tx.placeholder(tx.float64, x.shape)
    sp = tx.placeholder(tx.float64, [3])
    kwargs = {} if is_training else dict(mean=mean, variance=var)
    y = tx.nn.fused_batch_norm(xp, sp, offset, epsilon=1e-3, is_training=is_training,
                               **kwargs)[0]
    loss = tx.reduce_sum(y * w)
    gx, gs = tx.gradients(loss, [xp, sp])
    with tx.Session(graph=tx.get_default_graph()) as sess:
        got_x, got_s = sess.run([gx, gs], {xp: x, sp: scale})

        def f(xv, sv):
            return sess.run(loss, {xp: xv, sp: sv})

        h = 1e-6
        num_x = np.zeros_like(x)
        for idx in np.ndindex(*x.shape):
            e = np.zeros_like(x)
            e[idx] = h
            num_x[idx] = (f(x + e, scale) - f(x - e, scale)) / (2 * h)
        num_s = np.array([(f(x, scale + h * np.eye(3)[i]) - f(x, scale - h * np.eye(3)[i])) /
                          (2 * h) for i in range(3)])
    np.testing.assert_allclose(got_x, num_x, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got_s, num_s, rtol=1e-6, atol=1e-7)


def test_errors(graph):
    x = np.zeros((1, 4, 4, 2), np.float32)
    with pytest.raises(ValueError):
        tx.nn.max_pool2d(x, [1, 2, 3], 1, "SAME")
    with pytest.raises(ValueError):
        tx.nn.fused_batch_norm(x, [1.0, 1.0], [0.0, 0.0], is_training=False)
    with pytest.raises((ValueError, tx.errors.InvalidArgumentError)):
        run(tx.nn.max_pool2d(x, 5, 1, "VALID"))   # window larger than the input
    with pytest.raises((ValueError, tx.errors.InvalidArgumentError)):
        run(tx.nn.fused_batch_norm(x, [1.0, 1.0, 1.0], [0.0, 0.0, 0.0])[0])
    xp = tx.placeholder(tx.float32, [None, None, None, 2])
    out = tx.nn.max_pool2d(xp, 2, 2, "VALID")
    with pytest.raises(tx.errors.InvalidArgumentError):
        run(out, {xp: np.zeros((1, 1, 1, 2), np.float32)})


def test_half_precision(graph):
    x = RNG.standard_normal((2, 5, 4, 3)).astype(np.float16)
    scale, offset = RNG.uniform(0.5, 2, 3), RNG.uniform(-1, 1, 3)
    y, m, v = tx.nn.fused_batch_norm(x, scale, offset, epsilon=1e-3)
    mp = tx.nn.max_pool2d(x, 2, 2, "SAME")
    ap = tx.nn.avg_pool2d(x, 3, 1, "SAME")
    got_y, got_m, got_v, got_mp, got_ap = run([y, m, v, mp, ap])
    assert got_y.dtype == np.float16 and got_m.dtype == np.float32
    xd = x.astype(np.float64)
    bm, bv = xd.mean(axis=(0, 1, 2)), xd.var(axis=(0, 1, 2))
    np.testing.assert_allclose(got_y, np_batch_norm(xd, scale, offset, bm, bv, 1e-3), rtol=1e-2,
                               atol=1e-2)
    np.testing.assert_allclose(got_m, bm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_v, xd.var(axis=(0, 1, 2), ddof=1), rtol=1e-5)
    np.testing.assert_array_equal(got_mp, np_pool(x, (2, 2), (2, 2), "SAME", "max"))
    np.testing.assert_allclose(got_ap, np_pool(x, (3, 3), (1, 1), "SAME", "avg"), rtol=2e-3,
                               atol=2e-3)
