"""End-to-end training on small problems with known answers (float64, full batch, < 1 s each):
linear regression through tx.layers.dense recovers numpy's least-squares weights; logistic
regression through tx.losses.sigmoid_cross_entropy reaches the optimum loss found by Newton's
method in numpy; a dense + batch-norm model trains with the UPDATE_OPS dependency pattern;
clip_by_global_norm between compute_gradients and apply_gradients."""

import numpy as np

import tensorflux as tx

RNG = np.random.default_rng(5)


def test_linear_regression_recovers_weights(graph):
    xs = RNG.standard_normal((200, 3))
    w_true, b_true = np.array([2.0, -3.0, 0.5]), 1.25
    ys = xs @ w_true + b_true + 0.01 * RNG.standard_normal(200)
    x = tx.placeholder(tx.float64, [None, 3])
    y = tx.placeholder(tx.float64, [None])
    pred = tx.reshape(tx.layers.dense(x, 1), [-1])
    loss = tx.losses.mean_squared_error(y, pred)
    train = tx.train.GradientDescentOptimizer(0.3).minimize(loss)
    a = np.hstack([xs, np.ones((200, 1))])
    want, *_ = np.linalg.lstsq(a, ys, rcond=None)
    with tx.Session() as sess:
        sess.run(tx.global_variables_initializer())
        for _ in range(150):
            sess.run(train, {x: xs, y: ys})
        kernel, bias = sess.run(tx.trainable_variables())
    np.testing.assert_allclose(kernel.ravel(), want[:3], atol=1e-6)
    np.testing.assert_allclose(bias, want[3:], atol=1e-6)
    np.testing.assert_allclose(kernel.ravel(), w_true, atol=0.01)


def np_logistic_optimum(a, z):
    """Minimum of the mean logistic loss over w (a includes the bias column): Newton's method
    in float64."""
    w = np.zeros(a.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-a @ w))
        grad = a.T @ (p - z) / len(z)
        hess = (a * (p * (1 - p))[:, None]).T @ a / len(z)
        w -= np.linalg.solve(hess, grad)
    x = a @ w
    return np.mean(np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))), w


def test_logistic_regression_reaches_optimum(graph):
    xs = RNG.standard_normal((300, 2))
    z = (RNG.uniform(size=300) < 1 / (1 + np.exp(-(xs @ [1.5, -2.0] + 0.3)))).astype(np.float64)
    best, w_best = np_logistic_optimum(np.hstack([xs, np.ones((300, 1))]), z)
    x = tx.constant(xs)
    logits = tx.reshape(tx.layers.dense(x, 1), [-1])
    loss = tx.losses.sigmoid_cross_entropy(z, logits)
    train = tx.train.GradientDescentOptimizer(2.0).minimize(loss)
    with tx.Session() as sess:
        sess.run(tx.global_variables_initializer())
        for _ in range(300):
            sess.run(train)
        final, kernel = sess.run([loss, tx.trainable_variables()[0]])
    assert final - best < 1e-9, (final, best)
    np.testing.assert_allclose(kernel.ravel(), w_best[:2], atol=1e-4)


def test_batch_norm_model_trains_with_update_ops(graph):
    xs = RNG.standard_normal((64, 4)) * 5 + 3
    ys = (xs @ [1.0, -1.0, 0.5, 0.0] > 3).astype(np.int32)
    x = tx.constant(xs)
    training = tx.placeholder_with_default(True, [])
    h = tx.layers.batch_normalization(tx.layers.dense(x, 8), training=training)
    logits = tx.layers.dense(tx.nn.relu(h), 2)
    loss = tx.losses.sparse_softmax_cross_entropy(ys, logits)
    with tx.control_dependencies(tx.get_collection(tx.GraphKeys.UPDATE_OPS)):
        train = tx.train.GradientDescentOptimizer(0.5).minimize(loss)
    moving_mean = [v for v in tx.global_variables() if "moving_mean" in v.name][0]
    with tx.Session() as sess:
        sess.run(tx.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(100):
            sess.run(train)
        last = sess.run(loss)
        mm = sess.run(moving_mean)
    assert last < 0.5 * first, (first, last)
    assert np.abs(mm).max() > 0  # the updates ran with the train op


def test_clip_by_global_norm_between_compute_and_apply(graph):
    w0, b0 = np.array([[1.0, -2.0], [0.5, 3.0]]), np.array([0.25, -0.5])
    w, b = tx.Variable(w0), tx.Variable(b0)
    loss = tx.reduce_sum(tx.square(w)) + 3.0 * tx.reduce_sum(b)
    opt = tx.train.GradientDescentOptimizer(0.1)
    grads_and_vars = opt.compute_gradients(loss, var_list=[w, b])
    grads, norm = tx.clip_by_global_norm([g for g, _ in grads_and_vars], 1.0)
    train = opt.apply_gradients(list(zip(grads, [v for _, v in grads_and_vars])))
    gw, gb = 2 * w0, np.full(2, 3.0)
    want_norm = np.sqrt((gw ** 2).sum() + (gb ** 2).sum())
    with tx.Session() as sess:
        sess.run(tx.global_variables_initializer())
        got_norm, _ = sess.run([norm, train])
        got_w, got_b = sess.run([w, b])
    np.testing.assert_allclose(got_norm, want_norm, rtol=1e-12)
    np.testing.assert_allclose(got_w, w0 - 0.1 * gw / want_norm, rtol=1e-12)
    np.testing.assert_allclose(got_b, b0 - 0.1 * gb / want_norm, rtol=1e-12)
