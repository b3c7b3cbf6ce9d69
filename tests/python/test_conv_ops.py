"""tx.nn.conv2d / depthwise_conv2d(_native) / conv2d_backprop_input / conv2d_backprop_filter
(tensorflux/ops/conv_ops.py) against a numpy reference written per filter tap (pad, take the
strided window of each tap, einsum), in float32 and float64, NHWC and NCHW, SAME/VALID/explicit
padding, strides, dilations, groups; tx.gradients of both ops against the numpy adjoints; the
argument forms (int, 2- and 4-lists); static shapes; errors."""

import numpy as np
import pytest

import tensorflux as tx

RNG = np.random.default_rng(11)


def run(fetches, feed_dict=None):
    with tx.Session(graph=tx.get_default_graph()) as sess:
        return sess.run(fetches, feed_dict)


def out_and_pads(n, k, s, d, padding, pads=None):
    keff = (k - 1) * d + 1
    if padding == "VALID":
        return max(0, (n - keff) // s + 1), (0, 0)
    if padding == "SAME":
        out = -(-n // s)
        total = max(0, (out - 1) * s + keff - n)
        return out, (total // 2, total - total // 2)
    return (n + pads[0] + pads[1] - keff) // s + 1, tuple(pads)


class Geometry:
    """NHWC geometry of one convolution; x [N,H,W,C], w [kh,kw,C/G,O] (or depthwise [kh,kw,C,M])."""

    def __init__(self, x_shape, w_shape, strides, dilations, padding, pads=None, depthwise=False):
        n, h, w, c = x_shape
        kh, kw, kin, kout = w_shape
        self.s, self.d, self.k = strides, dilations, (kh, kw)
        pads = pads or [(0, 0), (0, 0)]
        (self.ho, self.pr), (self.wo, self.pc) = (
            out_and_pads(h, kh, strides[0], dilations[0], padding, pads[0]),
            out_and_pads(w, kw, strides[1], dilations[1], padding, pads[1]))
        self.depthwise = depthwise
        self.groups = c if depthwise else c // kin
        self.x_shape = x_shape
        self.out_c = c * kout if depthwise else kout

    def padded(self, x):
        return np.pad(x, [(0, 0), self.pr, self.pc, (0, 0)])

    def window(self, xp, i, j):
        r0, c0 = i * self.d[0], j * self.d[1]
        return xp[:, r0:r0 + self.s[0] * (self.ho - 1) + 1:self.s[0],
                  c0:c0 + self.s[1] * (self.wo - 1) + 1:self.s[1], :]

    def _group_filter(self, w):
        """[kh, kw, G, C/G, O/G] view of the filter in grouped form."""
        kh, kw = self.k
        if self.depthwise:  # [kh,kw,C,M]: group c, one input channel, M outputs
            return w.reshape(kh, kw, w.shape[2], 1, w.shape[3])
        g = self.groups
        return w.reshape(kh, kw, w.shape[2], g, w.shape[3] // g).transpose(0, 1, 3, 2, 4)

    def forward(self, x, w):
        xp = self.padded(x)
        wg = self._group_filter(w)
        y = np.zeros((x.shape[0], self.ho, self.wo, self.groups, wg.shape[-1]))
        for i in range(self.k[0]):
            for j in range(self.k[1]):
                win = self.window(xp, i, j)
                win = win.reshape(win.shape[:3] + (self.groups, win.shape[3] // self.groups))
                y += np.einsum("nhwgc,gco->nhwgo", win, wg[i, j])
        return y.reshape(x.shape[0], self.ho, self.wo, self.out_c)

    def backprop_input(self, w, dy):
        xp = np.zeros(self.padded(np.zeros(self.x_shape)).shape)
        wg = self._group_filter(w)
        dyg = dy.reshape(dy.shape[:3] + (self.groups, dy.shape[3] // self.groups))
        for i in range(self.k[0]):
            for j in range(self.k[1]):
                contrib = np.einsum("nhwgo,gco->nhwgc", dyg, wg[i, j])
                view = self.window(xp, i, j)
                view += contrib.reshape(view.shape)
        h, w_ = self.x_shape[1:3]
        return xp[:, self.pr[0]:self.pr[0] + h, self.pc[0]:self.pc[0] + w_, :]

    def backprop_filter(self, x, w_shape, dy):
        xp = self.padded(x)
        dyg = dy.reshape(dy.shape[:3] + (self.groups, dy.shape[3] // self.groups))
        kh, kw = self.k
        dwg = np.zeros((kh, kw) + self._group_filter(np.zeros(w_shape)).shape[2:])
        for i in range(kh):
            for j in range(kw):
                win = self.window(xp, i, j)
                win = win.reshape(win.shape[:3] + (self.groups, win.shape[3] // self.groups))
                dwg[i, j] = np.einsum("nhwgc,nhwgo->gco", win, dyg)
        if self.depthwise:
            return dwg.reshape(w_shape)
        return dwg.transpose(0, 1, 3, 2, 4).reshape(w_shape)


CASES = [
    # x shape, w shape, strides, dilations, padding, explicit pads (rows, cols)
    ((1, 5, 5, 2), (3, 3, 2, 3), (1, 1), (1, 1), "VALID", None),
    ((3, 6, 7, 3), (3, 3, 3, 4), (1, 1), (1, 1), "SAME", None),
    ((2, 7, 9, 3), (3, 2, 3, 5), (2, 3), (1, 1), "SAME", None),
    ((2, 8, 8, 2), (3, 3, 2, 3), (1, 1), (2, 3), "SAME", None),
    ((1, 9, 9, 2), (2, 3, 2, 2), (2, 1), (3, 2), "VALID", None),
    ((2, 5, 4, 2), (3, 2, 2, 3), (1, 1), (1, 1), "EXPLICIT", [(1, 2), (0, 3)]),
    ((3, 4, 5, 6), (1, 1, 6, 7), (1, 1), (1, 1), "VALID", None),
    ((2, 5, 5, 4), (3, 3, 2, 6), (1, 1), (1, 1), "SAME", None),  # 2 groups
    ((0, 5, 5, 2), (3, 3, 2, 3), (1, 1), (1, 1), "SAME", None),  # empty batch
]


def explicit(pads, data_format):
    if pads is None:
        return None
    if data_format == "NHWC":
        return [[0, 0], list(pads[0]), list(pads[1]), [0, 0]]
    return [[0, 0], [0, 0], list(pads[0]), list(pads[1])]


def to_format(a, data_format):
    return a if data_format == "NHWC" else a.transpose(0, 3, 1, 2)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_conv2d_and_backprops(graph, case, dtype, data_format):
    x_shape, w_shape, strides, dilations, padding, pads = case
    g = Geometry(x_shape, w_shape, strides, dilations, padding, pads)
    x = RNG.standard_normal(x_shape)
    w = RNG.standard_normal(w_shape)
    want = g.forward(x, w)
    dy = RNG.standard_normal(want.shape)
    pad_arg = explicit(pads, data_format) or padding
    kw = dict(strides=list(strides), padding=pad_arg, data_format=data_format,
              dilations=list(dilations))
    xf, dyf = to_format(x, data_format).astype(dtype), to_format(dy, data_format).astype(dtype)
    y = tx.nn.conv2d(xf, w.astype(dtype), **kw)
    dx = tx.nn.conv2d_backprop_input(np.array(xf.shape, np.int32), w.astype(dtype), dyf, **kw)
    dw = tx.nn.conv2d_backprop_filter(xf, np.array(w_shape, np.int32), dyf, **kw)
    assert y.shape.as_list() == list(to_format(want, data_format).shape)
    got_y, got_dx, got_dw = run([y, dx, dw])
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_y, to_format(want, data_format), **tol)
    np.testing.assert_allclose(got_dx, to_format(g.backprop_input(w, dy), data_format), **tol)
    np.testing.assert_allclose(got_dw, g.backprop_filter(x, w_shape, dy), **tol)


DEPTHWISE = [
    ((1, 5, 5, 3), (3, 3, 3, 1), (1, 1), (1, 1), "VALID", None),
    ((3, 6, 5, 2), (3, 3, 2, 2), (1, 1), (1, 1), "SAME", None),
    ((2, 7, 9, 4), (2, 3, 4, 3), (2, 2), (1, 1), "SAME", None),
    ((1, 8, 8, 2), (3, 3, 2, 2), (1, 1), (2, 2), "VALID", None),
    ((2, 4, 5, 3), (3, 2, 3, 2), (1, 1), (1, 1), "EXPLICIT", [(2, 1), (1, 0)]),
]


@pytest.mark.parametrize("case", DEPTHWISE)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_depthwise(graph, case, dtype):
    x_shape, w_shape, strides, dilations, padding, pads = case
    g = Geometry(x_shape, w_shape, strides, dilations, padding, pads, depthwise=True)
    x, w = RNG.standard_normal(x_shape), RNG.standard_normal(w_shape)
    want = g.forward(x, w)
    pad_arg = explicit(pads, "NHWC") or padding
    y = tx.nn.depthwise_conv2d_native(x.astype(dtype), w.astype(dtype), [1, *strides, 1], pad_arg,
                                      dilations=[1, *dilations, 1])
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(run(y), want, **tol)
    dy = RNG.standard_normal(want.shape)
    dx = tx.raw_ops.DepthwiseConv2dNativeBackpropInput(
        input_sizes=np.array(x_shape, np.int32), filter=w.astype(dtype),
        out_backprop=dy.astype(dtype), strides=[1, *strides, 1], padding=padding,
        explicit_paddings=[0, 0, *pads[0], *pads[1], 0, 0] if pads else [],
        dilations=[1, *dilations, 1])
    dw = tx.raw_ops.DepthwiseConv2dNativeBackpropFilter(
        input=x.astype(dtype), filter_sizes=np.array(w_shape, np.int32),
        out_backprop=dy.astype(dtype), strides=[1, *strides, 1], padding=padding,
        explicit_paddings=[0, 0, *pads[0], *pads[1], 0, 0] if pads else [],
        dilations=[1, *dilations, 1])
    got_dx, got_dw = run([dx, dw])
    np.testing.assert_allclose(got_dx, g.backprop_input(w, dy), **tol)
    np.testing.assert_allclose(got_dw, g.backprop_filter(x, w_shape, dy), **tol)


def test_depthwise_conv2d_rate(graph):
    x, w = RNG.standard_normal((2, 9, 9, 3)), RNG.standard_normal((3, 3, 3, 2))
    g = Geometry(x.shape, w.shape, (1, 1), (2, 2), "SAME", depthwise=True)
    y = tx.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME", rate=[2, 2])
    np.testing.assert_allclose(run(y), g.forward(x, w), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="rate > 1"):
        tx.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME", rate=[2, 2])


@pytest.mark.parametrize("strides,dilations", [(2, 1), ([2], [1]), ([2, 2], [1, 1]),
                                               ([1, 2, 2, 1], [1, 1, 1, 1])])
def test_argument_forms(graph, strides, dilations):
    x, w = RNG.standard_normal((1, 6, 6, 2)), RNG.standard_normal((3, 3, 2, 2))
    want = Geometry(x.shape, w.shape, (2, 2), (1, 1), "SAME").forward(x, w)
    y = tx.nn.conv2d(x, filters=w, strides=strides, padding="SAME", dilations=dilations)
    np.testing.assert_allclose(run(y), want, rtol=1e-12)


def test_gradients_match_numpy_adjoints(graph):
    x_np, w_np = RNG.standard_normal((2, 6, 5, 3)), RNG.standard_normal((3, 3, 3, 4))
    g = Geometry(x_np.shape, w_np.shape, (2, 1), (1, 1), "SAME")
    x, w = tx.constant(x_np), tx.constant(w_np)
    y = tx.nn.conv2d(x, w, [1, 2, 1, 1], "SAME")
    dy_np = RNG.standard_normal(y.shape.as_list())
    gx, gw = tx.gradients(y, [x, w], grad_ys=[tx.constant(dy_np)])
    got_x, got_w = run([gx, gw])
    np.testing.assert_allclose(got_x, g.backprop_input(w_np, dy_np), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_w, g.backprop_filter(x_np, w_np.shape, dy_np), rtol=1e-12,
                               atol=1e-12)

    # Depthwise, through a loss: d sum(y^2) / dw.
    wd = tx.constant(RNG.standard_normal((2, 2, 3, 2)))
    yd = tx.nn.depthwise_conv2d_native(x, wd, [1, 1, 1, 1], "VALID")
    (gwd,) = tx.gradients(tx.reduce_sum(tx.square(yd)), [wd])
    gd = Geometry(x_np.shape, (2, 2, 3, 2), (1, 1), (1, 1), "VALID", depthwise=True)
    yv, gwv, wv = run([yd, gwd, wd])
    np.testing.assert_allclose(gwv, gd.backprop_filter(x_np, (2, 2, 3, 2), 2 * yv), rtol=1e-12)


def test_float32_matches_float64(graph):
    x, w = RNG.standard_normal((4, 28, 28, 32)), RNG.standard_normal((3, 3, 32, 64))
    y32 = tx.nn.conv2d(x.astype(np.float32), w.astype(np.float32), 1, "SAME")
    y64 = tx.nn.conv2d(x, w, 1, "SAME")
    a, b = run([y32, y64])
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype,rtol", [(np.float16, 2e-3), (tx.bfloat16, 1.6e-2)])
def test_half_and_bfloat16(graph, dtype, rtol):
    x, w = RNG.standard_normal((2, 7, 6, 4)), RNG.standard_normal((3, 3, 4, 5))
    xt, wt = tx.cast(tx.constant(x), dtype), tx.cast(tx.constant(w), dtype)
    y = tx.cast(tx.nn.conv2d(xt, wt, [1, 2, 1, 1], "SAME"), tx.float64)
    xr, wr = run([tx.cast(xt, tx.float64), tx.cast(wt, tx.float64)])  # the rounded inputs
    g = Geometry(x.shape, w.shape, (2, 1), (1, 1), "SAME")
    want, mag = g.forward(xr, wr), g.forward(np.abs(xr), np.abs(wr))
    assert np.all(np.abs(run(y) - want) <= rtol * mag)


def test_static_shapes(graph):
    x = tx.placeholder(tx.float32, [None, 28, 28, 3])
    y = tx.nn.conv2d(x, tx.ones([5, 5, 3, 8]), [1, 2, 2, 1], "SAME")
    assert y.shape.as_list() == [None, 14, 14, 8]
    y = tx.nn.conv2d(x, tx.ones([5, 5, 3, 8]), 1, "VALID", dilations=2)
    assert y.shape.as_list() == [None, 20, 20, 8]
    d = tx.nn.depthwise_conv2d_native(x, tx.ones([3, 3, 3, 4]), [1, 1, 1, 1], "SAME")
    assert d.shape.as_list() == [None, 28, 28, 12]


def test_errors(graph):
    x = np.zeros((1, 5, 5, 2), np.float32)
    with pytest.raises(tx.errors.InvalidArgumentError, match="evenly divisible"):
        tx.nn.conv2d(x, np.zeros((3, 3, 3, 4), np.float32), 1, "SAME")
    with pytest.raises(tx.errors.UnimplementedError, match="batch and depth"):
        tx.nn.conv2d(x, np.zeros((3, 3, 2, 4), np.float32), [2, 1, 1, 1], "SAME")
    with pytest.raises(tx.errors.InvalidArgumentError, match="negative"):
        tx.nn.conv2d(x, np.zeros((7, 3, 2, 4), np.float32), 1, "VALID")
    with pytest.raises(ValueError):
        tx.nn.conv2d(x, np.zeros((3, 3, 2, 4), np.float32), [1, 1, 1], "SAME")
    # Shapes known only at run time: the kernel reports the same error.
    p = tx.placeholder(tx.float32, None)
    y = tx.nn.conv2d(p, np.zeros((3, 3, 3, 4), np.float32), 1, "SAME")
    with pytest.raises(tx.errors.InvalidArgumentError, match="evenly divisible"):
        run(y, {p: x})


def test_raw_ops_and_namespace():
    for name in ["Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "DepthwiseConv2dNative",
                 "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter"]:
        assert callable(getattr(tx.raw_ops, name))
    for name in ["conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "depthwise_conv2d",
                 "depthwise_conv2d_native"]:
        assert callable(getattr(tx.nn, name))
