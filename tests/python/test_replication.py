"""In-graph replication on a session with four CPU devices: towers with shared variables,
tx.train.average_gradients applied once per step (checked against numpy), and synchronized
batch normalization equal to plain batch normalization of the concatenated batch."""

import numpy as np
import pytest

import tensorflux as tx

DEVICES = ["/device:CPU:%d" % i for i in range(4)]


def _config():
    return tx.ConfigProto(device_count={"CPU": 4}, allow_soft_placement=False)


def test_towers_average_gradients_match_numpy():
    rng = np.random.RandomState(1)
    xs = rng.randn(4, 5, 3)   # four towers of 5 rows
    ys = rng.randn(4, 5, 1)
    w0 = rng.randn(3, 1)
    lr, steps = 0.1, 3
    with tx.Graph().as_default():
        opt = tx.train.GradientDescentOptimizer(lr)
        step = tx.train.get_or_create_global_step()
        tower_grads, placed = [], []
        for i in tx.train.towers(DEVICES):
            w = tx.get_variable("w", dtype=tx.float64, initializer=tx.constant(w0))
            err = tx.matmul(tx.constant(xs[i]), w) - tx.constant(ys[i])
            loss = tx.reduce_mean(tx.square(err))
            placed.append(loss.op.device)
            tower_grads.append(opt.compute_gradients(loss, var_list=[w]))
        assert placed == DEVICES
        assert [v.name for v in tx.global_variables()] == ["global_step:0", "w:0"]
        avg = tx.train.average_gradients(tower_grads)
        assert avg[0][1] is tower_grads[0][0][1]
        train = opt.apply_gradients(avg, global_step=step)
        with tx.Session(config=_config()) as sess:
            sess.run(tx.global_variables_initializer())
            for _ in range(steps):
                sess.run(train)
            got = sess.run(tx.global_variables()[1])
            assert sess.run(step) == steps
    w = w0.copy()
    for _ in range(steps):
        grads = [2 * xs[i].T @ (xs[i] @ w - ys[i]) / 5 for i in range(4)]
        w = w - lr * np.mean(grads, axis=0)
    np.testing.assert_allclose(got, w, rtol=1e-12)


def test_average_gradients_errors():
    with tx.Graph().as_default():
        a = tx.Variable(1.0, name="a")
        b = tx.Variable(1.0, name="b")
        g = tx.constant(1.0)
        assert tx.train.average_gradients([[(None, a)], [(None, a)]])[0][0] is None
        with pytest.raises(ValueError, match="different variables"):
            tx.train.average_gradients([[(g, a)], [(g, b)]])
        with pytest.raises(ValueError, match="different numbers"):
            tx.train.average_gradients([[(g, a)], [(g, a), (g, b)]])
        with pytest.raises(ValueError, match="some towers only"):
            tx.train.average_gradients([[(g, a)], [(None, a)]])


@pytest.mark.parametrize("shape", [(6, 3), (2, 3, 3, 4)])
def test_sync_batch_norm_equals_batch_norm_of_the_concatenated_batch(shape):
    rng = np.random.RandomState(2)
    towers = [rng.randn(*shape).astype(np.float32) * 3 + 1 for _ in range(4)]
    channels = shape[-1]
    gamma = rng.rand(channels).astype(np.float32) + 0.5
    beta = rng.randn(channels).astype(np.float32)
    axes = list(range(len(shape) - 1))
    with tx.Graph().as_default():
        g = tx.constant(gamma)
        b = tx.constant(beta)
        inputs = []
        for i, dev in enumerate(DEVICES):
            with tx.device(dev):
                inputs.append(tx.identity(tx.constant(towers[i])))
        outs = tx.nn.sync_batch_normalization(inputs, offset=b, scale=g,
                                              variance_epsilon=1e-3, axes=axes)
        assert [o.op.device for o in outs] == DEVICES
        mean, var = tx.nn.sync_moments(inputs, axes)
        whole = tx.concat(inputs, 0)
        ref_mean, ref_var = tx.nn.moments(whole, axes)
        ref = tx.nn.batch_normalization(whole, ref_mean, ref_var, b, g, 1e-3)
        # The gradient with respect to a tower's input crosses towers through the statistics.
        sync_grad = tx.gradients(tx.reduce_sum(tx.concat(outs, 0) * tx.concat(inputs, 0)),
                                 inputs[0])[0]
        ref_grad = tx.gradients(tx.reduce_sum(ref * whole), inputs[0])[0]
        with tx.Session(config=_config()) as sess:
            got, m, v, r, rm, rv, sg, rg = sess.run(
                [tx.concat(outs, 0), mean, var, ref, ref_mean, ref_var, sync_grad, ref_grad])
    np.testing.assert_allclose(got, r, atol=1e-6)
    np.testing.assert_allclose(m, rm, atol=1e-6)
    np.testing.assert_allclose(v, rv, rtol=1e-6)
    np.testing.assert_allclose(sg, rg, atol=1e-5)
    # And both against float64 numpy.
    cat = np.concatenate(towers, 0).astype(np.float64)
    mu = cat.mean(axis=tuple(axes))
    sd = np.sqrt(cat.var(axis=tuple(axes)) + 1e-3)
    np.testing.assert_allclose(got, (cat - mu) / sd * gamma + beta, atol=2e-5)


def test_sync_moments_errors():
    with tx.Graph().as_default():
        with pytest.raises(ValueError, match="at least one"):
            tx.nn.sync_moments([], [0])
        with pytest.raises(ValueError, match="must include 0"):
            tx.nn.sync_moments([tx.zeros([2, 3])], [1])


@pytest.mark.parametrize("shape,axis", [((5, 3), -1), ((2, 4, 4, 3), -1), ((2, 3, 4, 4), 1)])
def test_synchronized_batch_norm_layer_equals_the_layer_on_the_concatenated_batch(shape, axis):
    rng = np.random.RandomState(5)
    towers = [rng.randn(*shape).astype(np.float32) * 2 - 1 for _ in range(4)]
    with tx.Graph().as_default():
        inputs = []
        for i, dev in enumerate(DEVICES):
            with tx.device(dev):
                inputs.append(tx.identity(tx.constant(towers[i])))
        sync = tx.layers.BatchNormalization(axis=axis, momentum=0.9, synchronized=True,
                                            name="sync_bn")
        outs = sync(inputs, training=True)
        assert [o.op.device for o in outs] == DEVICES
        plain = tx.layers.BatchNormalization(axis=axis, momentum=0.9, name="plain_bn")
        ref = plain(tx.concat(inputs, 0), training=True)
        infer = sync(inputs, training=False)
        with tx.Session(config=_config()) as sess:
            sess.run(tx.global_variables_initializer())
            got, want = sess.run([tx.concat(outs, 0), ref])
            sess.run(sync.updates + plain.updates)
            moving = sess.run([sync.moving_mean, sync.moving_variance,
                               plain.moving_mean, plain.moving_variance])
            got_infer = sess.run(tx.concat(infer, 0))
    np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_allclose(moving[0], moving[2], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(moving[1], moving[3], rtol=1e-5)
    # Inference: the moving statistics, per channel.
    cat = np.concatenate(towers, 0).astype(np.float64)
    bshape = [1] * len(shape)
    bshape[axis] = shape[axis]
    mm = moving[0].reshape(bshape)
    mv = moving[1].reshape(bshape)
    np.testing.assert_allclose(got_infer, (cat - mm) / np.sqrt(mv + 1e-3), atol=1e-5)


def test_synchronized_batch_norm_layer_needs_a_list():
    with tx.Graph().as_default():
        bn = tx.layers.BatchNormalization(synchronized=True)
        with pytest.raises(ValueError, match="list of the towers"):
            bn(tx.zeros([2, 3]), training=True)
        with pytest.raises(ValueError, match="differ in dimension 0 only"):
            bn([tx.zeros([2, 3]), tx.zeros([2, 4])], training=True)
