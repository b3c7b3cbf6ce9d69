"""Optimizers (training/optimizer.py, training/optimizers.py) and the global step
(training/training_util.py): the first three updates of every optimizer against a numpy float64
reference of TF's update rules, slots, global_step increments, var_list, None gradients, the
gradient-transform hook, learning-rate tensors (schedules), argument errors, convergence on a
quadratic."""

import math

import numpy as np
import pytest

import tensorflux as tx

W0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
C = np.array([[1.0, 2.0, 0.5], [3.0, 1.0, 0.25]])
D = np.array([[0.1, -0.3, 0.2], [-0.4, 0.5, 0.05]])


def grad_of(w):
    """The gradient of loss(w) = sum(C * w^2) / 2 + sum(D * w)."""
    return C * w + D


def build_loss(w, dtype):
    c = tx.constant(C, dtype=dtype)
    d = tx.constant(D, dtype=dtype)
    return tx.reduce_sum(c * tx.square(w)) * 0.5 + tx.reduce_sum(d * w)


def run_steps(make_opt, dtype=tx.float64, steps=3):
    """Values of w after each of `steps` minimize runs of make_opt() from W0."""
    g = tx.Graph()
    with g.as_default():
        w = tx.get_variable("w", initializer=tx.constant(W0, dtype=dtype))
        opt = make_opt()
        step = tx.train.get_or_create_global_step()
        train = opt.minimize(build_loss(w, dtype), global_step=step)
        with tx.Session(graph=g) as sess:
            sess.run(tx.global_variables_initializer())
            out = []
            for _ in range(steps):
                sess.run(train)
                out.append(sess.run(w))
            assert sess.run(step) == steps
    return out, opt


def reference(update, steps=3):
    """numpy float64: update(w, g, state, t) -> w after each step, t = 1, 2, ..."""
    w = W0.copy()
    state = {}
    out = []
    for t in range(1, steps + 1):
        w = update(w, grad_of(w), state, t)
        out.append(w.copy())
    return out


def check(make_opt, update, rtol=1e-10):
    got, opt = run_steps(make_opt)
    for a, b in zip(got, reference(update)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12)
    got32, _ = run_steps(make_opt, tx.float32)
    for a, b in zip(got32, reference(update)):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)
    return opt


def test_gradient_descent():
    check(lambda: tx.train.GradientDescentOptimizer(0.1), lambda w, g, s, t: w - 0.1 * g)


@pytest.mark.parametrize("dtype", [tx.float16, tx.bfloat16])
def test_16_bit_variables_train(dtype):
    # Half and bfloat16 variables: the update ops compute in float and store rounded (as TF),
    # so three Adam steps follow the float64 reference to the 16-bit type's precision.
    def adam(w, g, s, t):
        s["m"] = 0.9 * s.get("m", 0) + 0.1 * g
        s["v"] = 0.999 * s.get("v", 0) + 0.001 * g * g
        return w - 0.01 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t) * s["m"] / (np.sqrt(s["v"])
                                                                              + 1e-8)
    got, _ = run_steps(lambda: tx.train.AdamOptimizer(0.01), dtype)
    eps = 2.0 ** -10 if dtype == tx.float16 else 2.0 ** -7
    for a, b in zip(got, reference(adam)):
        np.testing.assert_allclose(np.asarray(a, np.float64), b, rtol=4 * eps, atol=4 * eps)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum(nesterov):
    lr, mu = 0.1, 0.9

    def update(w, g, s, t):
        a = s["a"] = mu * s.get("a", 0.0) + g
        return w - (lr * g + lr * mu * a if nesterov else lr * a)
    opt = check(lambda: tx.train.MomentumOptimizer(lr, mu, use_nesterov=nesterov), update)
    assert opt.get_slot_names() == ["momentum"]


def adam_update(lr, b1, b2, eps, wd=0.0):
    def update(w, g, s, t):
        w = w - lr * wd * w
        m = s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
        v = s["v"] = b2 * s.get("v", 0.0) + (1 - b2) * g * g
        lr_t = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        return w - lr_t * m / (np.sqrt(v) + eps)
    return update


def test_adam_updates_slots_and_beta_powers():
    opt = check(lambda: tx.train.AdamOptimizer(0.01), adam_update(0.01, 0.9, 0.999, 1e-8))
    assert opt.get_slot_names() == ["m", "v"]
    g = tx.Graph()
    with g.as_default():
        w = tx.get_variable("w", initializer=tx.constant(W0))
        opt = tx.train.AdamOptimizer(0.01, beta1=0.8, beta2=0.99)
        train = opt.minimize(build_loss(w, tx.float64))
        m, v = opt.get_slot(w, "m"), opt.get_slot(w, "v")
        assert (m.name, v.name) == ("w/Adam:0", "w/Adam_1:0")
        assert m not in tx.trainable_variables() and m in tx.global_variables()
        b1p, b2p = opt._get_beta_accumulators()
        assert b1p.name == "beta1_power:0"
        assert opt.variables() == sorted([m, v, b1p, b2p], key=lambda x: x.name)
        with tx.Session(graph=g) as sess:
            sess.run(tx.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            assert sess.run(b1p) == pytest.approx(0.8 ** 4)
            assert sess.run(b2p) == pytest.approx(0.99 ** 4)
        assert opt.get_slot(tx.get_variable("other", [1]), "m") is None


def test_adam_m_slot_matches_reference():
    g = tx.Graph()
    with g.as_default():
        w = tx.get_variable("w", initializer=tx.constant(W0))
        opt = tx.train.AdamOptimizer(0.01)
        train = opt.minimize(build_loss(w, tx.float64))
        with tx.Session(graph=g) as sess:
            sess.run(tx.global_variables_initializer())
            state = {}
            wv = W0.copy()
            for t in range(1, 4):
                sess.run(train)
                wv = adam_update(0.01, 0.9, 0.999, 1e-8)(wv, grad_of(wv), state, t)
                # Python-number hyper-parameters are made in the variable's dtype: float64 slots
                # carry no float32 rounding of beta1, beta2 (TF1 casts float32 constants).
                np.testing.assert_allclose(sess.run(opt.get_slot(w, "m")), state["m"], rtol=1e-9)
                np.testing.assert_allclose(sess.run(opt.get_slot(w, "v")), state["v"], rtol=1e-9)


def test_adamw_decoupled_decay():
    check(lambda: tx.train.AdamWOptimizer(0.1, learning_rate=0.01),
          adam_update(0.01, 0.9, 0.999, 1e-8, wd=0.1))
    g = tx.Graph()
    with g.as_default():
        w = tx.get_variable("w", initializer=tx.constant(W0))
        opt = tx.train.AdamWOptimizer(0.1)
        (grad, _), = opt.compute_gradients(build_loss(w, tx.float64))
        opt.apply_gradients([(grad, w)])
        decay = [op for op in g.get_operations() if op.type == "AssignSubVariableOp"]
        adam = [op for op in g.get_operations() if op.type == "ResourceApplyAdam"]
        assert len(decay) == 1 and len(adam) == 1
        # The decay runs after the gradient is computed, the Adam update after the decay.
        assert grad.op in decay[0].control_inputs and decay[0] in adam[0].control_inputs


def test_rmsprop():
    lr, rho, mu, eps = 0.01, 0.9, 0.5, 1e-10

    def update(w, g, s, t):
        ms = s["ms"] = rho * s.get("ms", 1.0) + (1 - rho) * g * g  # rms starts at 1 (TF1)
        mom = s["mom"] = mu * s.get("mom", 0.0) + lr * g / np.sqrt(ms + eps)
        return w - mom
    opt = check(lambda: tx.train.RMSPropOptimizer(lr, decay=rho, momentum=mu, epsilon=eps),
                update)
    assert opt.get_slot_names() == ["momentum", "rms"]


def test_rmsprop_centered():
    lr, rho, mu, eps = 0.01, 0.8, 0.3, 1e-6

    def update(w, g, s, t):
        mg = s["mg"] = rho * s.get("mg", 0.0) + (1 - rho) * g
        ms = s["ms"] = rho * s.get("ms", 1.0) + (1 - rho) * g * g
        mom = s["mom"] = mu * s.get("mom", 0.0) + lr * g / np.sqrt(ms - mg * mg + eps)
        return w - mom
    opt = check(lambda: tx.train.RMSPropOptimizer(lr, decay=rho, momentum=mu, epsilon=eps,
                                                  centered=True), update)
    assert opt.get_slot_names() == ["mg", "momentum", "rms"]


def test_adagrad():
    lr, init = 0.1, 0.1

    def update(w, g, s, t):
        acc = s["acc"] = s.get("acc", init) + g * g
        return w - lr * g / np.sqrt(acc)
    check(lambda: tx.train.AdagradOptimizer(lr, initial_accumulator_value=init), update)
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
        tx.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)


def test_learning_rate_schedule_tensor():
    """GD with lr = exponential_decay on the global step: each step uses the decayed rate."""
    def make():
        step = tx.train.get_or_create_global_step()
        return tx.train.GradientDescentOptimizer(
            tx.train.exponential_decay(0.1, step, 1, 0.5))
    # The schedule is a float32 tensor (0.1 rounded to float32) cast to float64: rtol 1e-6.
    check(make, lambda w, g, s, t: w - 0.1 * 0.5 ** (t - 1) * g, rtol=1e-6)
    check(lambda: tx.train.GradientDescentOptimizer(lambda: tx.constant(0.05, tx.float64)),
          lambda w, g, s, t: w - 0.05 * g)


def test_var_list_none_gradients_and_global_step(graph):
    a = tx.get_variable("a", initializer=tx.constant([1.0, 2.0]))
    b = tx.get_variable("b", initializer=tx.constant([3.0]))
    unused = tx.get_variable("unused", initializer=tx.constant([5.0]))
    loss = tx.reduce_sum(tx.square(a)) + tx.reduce_sum(b * 2.0)
    opt = tx.train.GradientDescentOptimizer(0.5)
    gv = opt.compute_gradients(loss)
    assert [v for _, v in gv] == [a, b, unused] and gv[2][0] is None
    step = tx.train.create_global_step()
    train_a = opt.minimize(loss, var_list=[a], global_step=step)
    train_all = opt.apply_gradients(gv, global_step=step)  # unused's None gradient is skipped
    assert train_all in tx.get_collection(tx.GraphKeys.TRAIN_OP)
    with tx.Session() as sess:
        sess.run(tx.global_variables_initializer())
        sess.run(train_a)
        np.testing.assert_allclose(sess.run(a), [0.0, 0.0])  # a - 0.5 * 2a
        np.testing.assert_allclose(sess.run(b), [3.0])
        assert sess.run(step) == 1
        sess.run(train_all)
        np.testing.assert_allclose(sess.run(b), [2.0])
        np.testing.assert_allclose(sess.run(unused), [5.0])
        assert sess.run(step) == 2
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.apply_gradients([(None, a)])
    with pytest.raises(ValueError, match="No variables provided"):
        opt.apply_gradients([])
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.minimize(tx.reduce_sum(tx.constant([1.0])), var_list=[a])
    with pytest.raises(ValueError, match="Invalid type"):
        opt.compute_gradients(tx.constant(1), var_list=[a])
    with pytest.raises(TypeError):
        opt.apply_gradients([(tx.constant([1.0]), "not a variable")])


def test_gate_graph_gradients_wait_for_each_other(graph):
    a = tx.get_variable("a", initializer=tx.constant([1.0, 2.0]))
    b = tx.get_variable("b", initializer=tx.constant([3.0]))
    loss = tx.reduce_sum(tx.square(a)) + tx.reduce_sum(b * 2.0)
    opt = tx.train.GradientDescentOptimizer(0.5)
    gated = opt.compute_gradients(loss, gate_gradients=tx.train.Optimizer.GATE_GRAPH)
    ga, gb = gated[0][0], gated[1][0]
    assert {ga.op.type, gb.op.type} == {"Identity"}
    # Each gated gradient also waits for the other's computation.
    assert ga.op.inputs[0].op in gb.op.control_inputs
    assert gb.op.inputs[0].op in ga.op.control_inputs
    with tx.Session() as sess:
        sess.run(tx.global_variables_initializer())
        np.testing.assert_allclose(sess.run(ga), [2.0, 4.0])
        np.testing.assert_allclose(sess.run(gb), [2.0])
    with pytest.raises(ValueError, match="gate_gradients"):
        opt.compute_gradients(loss, gate_gradients=5)


def test_grad_loss_and_increment_ordering(graph):
    w = tx.get_variable("w", initializer=tx.constant([1.0, -3.0]))
    step = tx.train.create_global_step()
    loss = tx.reduce_sum(tx.square(w))
    # grad_loss seeds d(loss) with 0.25 instead of 1: the step is 0.1 * 0.25 * 2w.
    train = tx.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step,
                                                            grad_loss=tx.constant(0.25),
                                                            name="sgd")
    assert train.type == "AssignAddVariableOp" and train.name == "sgd"
    update = [op for op in graph.get_operations() if op.type == "ResourceApplyGradientDescent"]
    # The increment waits for the group of updates, which waits for every update.
    group = train.control_inputs[0]
    assert group.name == "sgd/update" and update[0] in group.control_inputs
    with tx.Session() as sess:
        sess.run(tx.global_variables_initializer())
        sess.run(train)
        np.testing.assert_allclose(sess.run(w), [1.0 - 0.05, -3.0 + 0.15], rtol=1e-6)
        assert sess.run(step) == 1


def test_no_variables(graph):
    with pytest.raises(ValueError, match="No variables to optimize"):
        tx.train.GradientDescentOptimizer(0.1).minimize(tx.constant(1.0))


def test_grad_transform_hook(graph):
    w = tx.get_variable("w", initializer=tx.constant([2.0, -4.0]))
    seen = []

    def halve(grads_and_vars):
        seen.append(len(grads_and_vars))
        return [(g * 0.5, v) for g, v in grads_and_vars]
    train = tx.train.GradientDescentOptimizer(1.0).minimize(tx.reduce_sum(tx.square(w)),
                                                           grad_transform=halve)
    assert seen == [1]
    with tx.Session() as sess:
        sess.run(tx.global_variables_initializer())
        sess.run(train)
        np.testing.assert_allclose(sess.run(w), [0.0, 0.0])  # w - 1.0 * 0.5 * 2w


def test_global_step_helpers(graph):
    assert tx.train.get_global_step() is None
    step = tx.train.get_or_create_global_step()
    assert step.name == "global_step:0" and step.dtype.base_dtype == tx.int64
    assert step.get_shape().ndims == 0
    assert tx.train.get_global_step() is step
    assert tx.train.get_or_create_global_step() is step
    assert tx.get_collection(tx.GraphKeys.GLOBAL_STEP) == [step]
    assert step not in tx.trainable_variables()
    with pytest.raises(ValueError, match="'global_step' already exists"):
        tx.train.create_global_step()
    with tx.Session() as sess:
        sess.run(tx.global_variables_initializer())
        assert sess.run(step) == 0


@pytest.mark.parametrize("make,steps", [
    (lambda: tx.train.GradientDescentOptimizer(0.2), 60),
    (lambda: tx.train.AdamOptimizer(0.1), 150),
    (lambda: tx.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True), 120),
])
def test_minimize_quadratic_converges(graph, make, steps):
    target = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    w = tx.get_variable("w", [3], initializer=tx.zeros_initializer())
    loss = tx.reduce_sum(tx.square(w - target))
    train = make().minimize(loss)
    with tx.Session() as sess:
        sess.run(tx.global_variables_initializer())
        for _ in range(steps):
            sess.run(train)
        np.testing.assert_allclose(sess.run(w), target, atol=2e-3)
