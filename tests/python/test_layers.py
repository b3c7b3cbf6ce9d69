"""tx.layers: dense, conv2d, max/average pooling, flatten and batch_normalization against
float64 numpy references (conv by an explicit loop over output positions), variable names and
shapes, regularization losses, batch norm's moving statistics after several steps and inference
with them, and the training switch as a boolean placeholder."""

import numpy as np
import pytest

import tensorflux as tx

RNG = np.random.default_rng(11)


def session():
    return tx.Session(graph=tx.get_default_graph())


def init_and_run(fetches, feed_dict=None):
    with session() as sess:
        sess.run(tx.global_variables_initializer())
        return sess.run(fetches, feed_dict)


def var_names():
    return sorted((v.name, tuple(v.shape.as_list())) for v in tx.global_variables())


# ------------------------------------------------------------------ dense

def test_dense_forward_names_and_shapes(graph):
    x = RNG.standard_normal((4, 5)).astype(np.float32)
    inp = tx.placeholder(tx.float32, [None, 5])
    y1 = tx.layers.dense(inp, 3, activation=tx.nn.relu)
    y2 = tx.layers.dense(inp, 2, use_bias=False, name="logits")
    y3 = tx.layers.dense(inp, 3, bias_initializer=tx.constant_initializer(0.5))
    assert var_names() == [("dense/bias:0", (3,)), ("dense/kernel:0", (5, 3)),
                           ("dense_1/bias:0", (3,)), ("dense_1/kernel:0", (5, 3)),
                           ("logits/kernel:0", (5, 2))]
    assert [v.name for v in tx.trainable_variables()] == [v.name for v in tx.global_variables()]
    assert y1.shape.as_list() == [None, 3]
    with session() as sess:
        sess.run(tx.global_variables_initializer())
        got1, got2, got3 = sess.run([y1, y2, y3], {inp: x})
        k = {v.name: sess.run(v) for v in tx.global_variables()}
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(got1, np.maximum(x64 @ k["dense/kernel:0"] + k["dense/bias:0"],
                                                0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got2, x64 @ k["logits/kernel:0"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got3, x64 @ k["dense_1/kernel:0"] + 0.5, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(k["dense/bias:0"], np.zeros(3))
    # Glorot uniform default: |w| <= sqrt(6 / (fan_in + fan_out))
    assert np.abs(k["dense/kernel:0"]).max() <= np.sqrt(6 / 8) and k["dense/kernel:0"].std() > 0


def test_dense_rank3_and_layer_reuse(graph):
    x = RNG.standard_normal((2, 3, 4))
    layer = tx.layers.Dense(5, kernel_initializer=tx.constant_initializer(
        RNG.standard_normal((4, 5))))
    a = layer(tx.constant(x))
    b = layer(tx.constant(2 * x))  # the same variables
    assert len(tx.global_variables()) == 2
    assert a.shape.as_list() == [2, 3, 5]
    with session() as sess:
        sess.run(tx.global_variables_initializer())
        got_a, got_b, kernel = sess.run([a, b, layer.kernel])
    np.testing.assert_allclose(got_a, x @ kernel, rtol=1e-12)
    np.testing.assert_allclose(got_b, 2 * x @ kernel, rtol=1e-12)


def test_dense_errors(graph):
    with pytest.raises(ValueError, match="last dimension"):
        tx.layers.dense(tx.placeholder(tx.float32, [None, None]), 3)
    with pytest.raises(ValueError):
        tx.layers.dense(tx.placeholder(tx.float32, [3]), 3)


def test_regularization_losses_collected(graph):
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    y = tx.layers.dense(tx.constant(x), 2,
                        kernel_regularizer=tx.contrib.layers.l2_regularizer(0.1),
                        bias_regularizer=tx.contrib.layers.l1_regularizer(0.2),
                        bias_initializer=tx.constant_initializer(-1.0))
    tx.layers.dense(y, 2, kernel_regularizer=tx.keras.regularizers.l2(0.3))
    losses = tx.losses.get_regularization_losses()
    assert len(losses) == 3
    total = tx.losses.get_regularization_loss()
    with session() as sess:
        sess.run(tx.global_variables_initializer())
        got, got_total = sess.run([losses, total])
        k0, k1 = sess.run([tx.global_variables()[0], tx.global_variables()[2]])
    want = [0.1 * (k0.astype(np.float64) ** 2).sum() / 2, 0.2 * 2 * 1.0,
            0.3 * (k1.astype(np.float64) ** 2).sum()]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(got_total, sum(want), rtol=1e-5)


# ------------------------------------------------------------------ conv2d and pooling

def np_same_pads(size, k, stride, dilation):
    out = -(-size // stride)
    total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)
    return out, total // 2


def np_conv2d(x, w, stride, padding, dilation):
    n, h, wd, _ = x.shape
    kh, kw, _, co = w.shape
    if padding == "same":
        oh, ph = np_same_pads(h, kh, stride[0], dilation[0])
        ow, pw = np_same_pads(wd, kw, stride[1], dilation[1])
    else:
        oh = (h - (kh - 1) * dilation[0] - 1) // stride[0] + 1
        ow = (wd - (kw - 1) * dilation[1] - 1) // stride[1] + 1
        ph = pw = 0
    out = np.zeros((n, oh, ow, co))
    for i in range(oh):
        for j in range(ow):
            for di in range(kh):
                for dj in range(kw):
                    r = i * stride[0] + di * dilation[0] - ph
                    c = j * stride[1] + dj * dilation[1] - pw
                    if 0 <= r < h and 0 <= c < wd:
                        out[:, i, j, :] += x[:, r, c, :] @ w[di, dj]
    return out


@pytest.mark.parametrize("kernel,strides,padding,dilation", [
    ((3, 3), (1, 1), "valid", (1, 1)), ((3, 2), (2, 1), "same", (1, 1)),
    ((2, 2), (1, 1), "SAME", (2, 2)), ((1, 1), (2, 2), "valid", (1, 1))])
def test_conv2d_forward(graph, kernel, strides, padding, dilation):
    x = RNG.standard_normal((2, 7, 6, 3))
    w = RNG.standard_normal(kernel + (3, 4))
    b = RNG.standard_normal(4)
    y = tx.layers.conv2d(tx.constant(x), 4, kernel, strides=strides, padding=padding,
                         dilation_rate=dilation, activation=tx.nn.relu,
                         kernel_initializer=tx.constant_initializer(w),
                         bias_initializer=tx.constant_initializer(b))
    assert var_names() == [("conv2d/bias:0", (4,)), ("conv2d/kernel:0", kernel + (3, 4))]
    want = np.maximum(np_conv2d(x, w, strides, padding.lower(), dilation) + b, 0)
    assert y.shape.as_list() == list(want.shape)
    np.testing.assert_allclose(init_and_run(y), want, rtol=1e-10, atol=1e-12)


def test_conv2d_names_and_errors(graph):
    x = tx.placeholder(tx.float32, [None, 8, 8, 1])
    tx.layers.conv2d(x, 2, 3)
    tx.layers.conv2d(x, 2, 3, use_bias=False)
    assert var_names() == [("conv2d/bias:0", (2,)), ("conv2d/kernel:0", (3, 3, 1, 2)),
                           ("conv2d_1/kernel:0", (3, 3, 1, 2))]
    with pytest.raises(ValueError, match="padding"):
        tx.layers.conv2d(x, 2, 3, padding="full")
    with pytest.raises(ValueError, match="dilation"):
        tx.layers.conv2d(x, 2, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="ndim=4"):
        tx.layers.conv2d(tx.placeholder(tx.float32, [None, 8, 8]), 2, 3)
    with pytest.raises(ValueError, match="kernel_size"):
        tx.layers.conv2d(x, 2, (3, 3, 3))


def np_pool(x, size, stride, padding, fn):
    n, h, w, c = x.shape
    if padding == "same":
        oh, ph = np_same_pads(h, size[0], stride[0], 1)
        ow, pw = np_same_pads(w, size[1], stride[1], 1)
    else:
        oh, ow, ph, pw = (h - size[0]) // stride[0] + 1, (w - size[1]) // stride[1] + 1, 0, 0
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * stride[0] - ph, j * stride[1] - pw
            win = x[:, max(r0, 0):r0 + size[0], max(c0, 0):c0 + size[1], :]
            out[:, i, j, :] = fn(win, axis=(1, 2))
    return out


@pytest.mark.parametrize("size,stride,padding", [((2, 2), (2, 2), "valid"),
                                                 ((3, 2), (2, 1), "same"), (2, 1, "valid")])
def test_pooling_and_flatten(graph, size, stride, padding):
    x = RNG.standard_normal((2, 5, 6, 3))
    mx = tx.layers.max_pooling2d(tx.constant(x), size, stride, padding=padding)
    av = tx.layers.average_pooling2d(tx.constant(x), size, stride, padding=padding)
    fl = tx.layers.flatten(mx)
    sz = size if isinstance(size, tuple) else (size, size)
    st = stride if isinstance(stride, tuple) else (stride, stride)
    got_mx, got_av, got_fl = init_and_run([mx, av, fl])
    want_mx = np_pool(x, sz, st, padding, np.max)
    np.testing.assert_allclose(got_mx, want_mx, rtol=1e-12)
    np.testing.assert_allclose(got_av, np_pool(x, sz, st, padding, np.mean), rtol=1e-12)
    np.testing.assert_array_equal(got_fl, want_mx.reshape(2, -1))
    assert fl.shape.as_list() == [2, int(np.prod(want_mx.shape[1:]))]
    assert mx.op.name.startswith("max_pooling2d/")


def test_channels_first(graph):
    x = RNG.standard_normal((2, 3, 6, 5))  # NCHW
    w = RNG.standard_normal((3, 2, 3, 4))
    nhwc = x.transpose(0, 2, 3, 1)
    conv = tx.layers.conv2d(tx.constant(x), 4, (3, 2), padding="same",
                            data_format="channels_first", use_bias=False,
                            kernel_initializer=tx.constant_initializer(w))
    mx = tx.layers.max_pooling2d(tx.constant(x), 2, 2, data_format="channels_first")
    av = tx.layers.average_pooling2d(tx.constant(x), 2, 1, padding="same",
                                     data_format="channels_first")
    fl = tx.layers.flatten(tx.constant(x), data_format="channels_first")
    got_conv, got_mx, got_av, got_fl = init_and_run([conv, mx, av, fl])
    np.testing.assert_allclose(got_conv, np_conv2d(nhwc, w, (1, 1), "same", (1, 1))
                               .transpose(0, 3, 1, 2), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_mx, np_pool(nhwc, (2, 2), (2, 2), "valid", np.max)
                               .transpose(0, 3, 1, 2), rtol=1e-12)
    np.testing.assert_allclose(got_av, np_pool(nhwc, (2, 2), (1, 1), "same", np.mean)
                               .transpose(0, 3, 1, 2), rtol=1e-12)
    np.testing.assert_array_equal(got_fl, nhwc.reshape(2, -1))  # channels-last order, as TF


def test_flatten_unknown_batch(graph):
    x = tx.placeholder(tx.float32, [None, 2, 3])
    y = tx.layers.flatten(x)
    v = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    np.testing.assert_array_equal(init_and_run(y, {x: v}), v.reshape(2, 6))
    assert y.shape.as_list() == [None, 6]


# ------------------------------------------------------------------ batch normalization

def np_bn(x, mean, var, gamma, beta, eps):
    return gamma * (x - mean) / np.sqrt(var + eps) + beta


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 2, 3)])
def test_batch_norm_moving_stats_and_inference(graph, shape):
    steps, momentum, eps = 4, 0.9, 1e-3
    batches = [RNG.standard_normal(shape) * (i + 1) + i for i in range(steps)]
    x = tx.placeholder(tx.float64, shape)
    gamma, beta = RNG.uniform(0.5, 2, 3), RNG.standard_normal(3)
    y_train = tx.layers.batch_normalization(x, momentum=momentum, epsilon=eps, training=True,
                                            gamma_initializer=tx.constant_initializer(gamma),
                                            beta_initializer=tx.constant_initializer(beta))
    y_infer = tx.layers.batch_normalization(x, momentum=momentum, epsilon=eps, training=False,
                                            name="batch_normalization", reuse=True)
    updates = tx.get_collection(tx.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    assert var_names() == [("batch_normalization/beta:0", (3,)),
                           ("batch_normalization/gamma:0", (3,)),
                           ("batch_normalization/moving_mean:0", (3,)),
                           ("batch_normalization/moving_variance:0", (3,))]
    assert sorted(v.name for v in tx.trainable_variables()) == [
        "batch_normalization/beta:0", "batch_normalization/gamma:0"]
    axes = tuple(range(len(shape) - 1))
    mm, mv = np.zeros(3), np.ones(3)
    with session() as sess:
        sess.run(tx.global_variables_initializer())
        for b in batches:
            got, _ = sess.run([y_train, updates], {x: b})
            n = b.size // 3
            mean, var = b.mean(axes), b.var(axes)
            np.testing.assert_allclose(got, np_bn(b, mean, var, gamma, beta, eps), rtol=1e-8,
                                       atol=1e-10)
            moved_var = var * n / (n - 1) if len(shape) == 4 else var  # TF fused vs non-fused
            mm -= (mm - mean) * (1 - momentum)
            mv -= (mv - moved_var) * (1 - momentum)
        moving = sess.run(tx.global_variables()[2:])
        got_infer = sess.run(y_infer, {x: batches[0]})
    np.testing.assert_allclose(moving[0], mm, rtol=1e-10)
    np.testing.assert_allclose(moving[1], mv, rtol=1e-10)
    np.testing.assert_allclose(got_infer, np_bn(batches[0], mm, mv, gamma, beta, eps),
                               rtol=1e-8, atol=1e-10)


def test_batch_norm_training_placeholder(graph):
    training = tx.placeholder(tx.bool, [])
    b = RNG.standard_normal((8, 4)).astype(np.float32) * 3 + 1
    x = tx.constant(b)
    y = tx.layers.batch_normalization(x, training=training, center=False, scale=False,
                                      momentum=0.5)
    updates = tx.get_collection(tx.GraphKeys.UPDATE_OPS)
    assert [v.name for v in tx.global_variables()] == [
        "batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"]
    with session() as sess:
        sess.run(tx.global_variables_initializer())
        got_off, _ = sess.run([y, updates], {training: False})
        np.testing.assert_allclose(got_off, b / np.sqrt(1 + 1e-3), rtol=1e-5)
        np.testing.assert_array_equal(sess.run(tx.global_variables()[0]), np.zeros(4))
        got_on, _ = sess.run([y, updates], {training: True})
        mean, var = b.astype(np.float64).mean(0), b.astype(np.float64).var(0)
        np.testing.assert_allclose(got_on, (b - mean) / np.sqrt(var + 1e-3), rtol=1e-4,
                                   atol=1e-5)
        np.testing.assert_allclose(sess.run(tx.global_variables()[0]), 0.5 * mean, rtol=1e-5)


def test_static_shapes_survive_the_training_switch(graph):
    training = tx.placeholder(tx.bool, [])
    x2, x3 = tx.placeholder(tx.float32, [None, 5]), tx.placeholder(tx.float32, [None, 3, 4])
    assert tx.layers.batch_normalization(x2, training=training).shape.as_list() == [None, 5]
    assert tx.layers.batch_normalization(x3, training=True).shape.as_list() == [None, 3, 4]
    assert tx.layers.dropout(x2, training=training).shape.as_list() == [None, 5]
    # so a dense layer can follow them
    assert tx.layers.dense(tx.layers.batch_normalization(x2, training=training),
                           2).shape.as_list() == [None, 2]


def test_batch_norm_nchw_and_errors(graph):
    b = RNG.standard_normal((2, 3, 4, 5))
    y = tx.layers.batch_normalization(tx.constant(b), axis=1, training=True)
    mean, var = b.mean((0, 2, 3)), b.var((0, 2, 3))
    want = (b - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-3)
    np.testing.assert_allclose(init_and_run(y), want, rtol=1e-8, atol=1e-10)
    with pytest.raises(ValueError, match="axis"):
        tx.layers.batch_normalization(tx.constant(b), axis=2)
    with pytest.raises(ValueError):
        tx.layers.batch_normalization(tx.placeholder(tx.float32, [None, None]))
