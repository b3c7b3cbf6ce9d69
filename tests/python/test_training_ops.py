"""Optimizer update ops (Apply* on reference variables, ResourceApply* on resource variables):
the first three updates of each against a float64 numpy reference written from the papers' /
TF docs' formulas, for float32 and float64; and the kernels' shape and initialization errors."""

import numpy as np
import pytest

import tensorflux as tx

raw = tx.raw_ops
SHAPE = (2, 3)


def _adam(use_nesterov):
    def step(s, g, h, t):
        b1, b2, lr, eps = h["beta1"], h["beta2"], h["lr"], h["epsilon"]
        s["m"] = b1 * s["m"] + (1 - b1) * g
        s["v"] = b2 * s["v"] + (1 - b2) * g * g
        m = b1 * s["m"] + (1 - b1) * g if use_nesterov else s["m"]
        m_hat = m / (1 - b1 ** t)
        v_hat = s["v"] / (1 - b2 ** t)
        # TF's "epsilon hat" form: epsilon is added to sqrt(v), not to sqrt(v_hat).
        s["var"] -= lr * m_hat / (np.sqrt(v_hat) + eps / np.sqrt(1 - b2 ** t))
    return step


def _momentum(use_nesterov):
    def step(s, g, h, t):
        s["accum"] = h["momentum"] * s["accum"] + g
        if use_nesterov:
            s["var"] -= h["lr"] * (g + h["momentum"] * s["accum"])
        else:
            s["var"] -= h["lr"] * s["accum"]
    return step


def _gd(s, g, h, t):
    s["var"] -= h["alpha"] * g


def _rmsprop(s, g, h, t):
    s["ms"] = h["rho"] * s["ms"] + (1 - h["rho"]) * g * g
    s["mom"] = h["momentum"] * s["mom"] + h["lr"] * g / np.sqrt(s["ms"] + h["epsilon"])
    s["var"] -= s["mom"]


def _centered_rmsprop(s, g, h, t):
    s["mg"] = h["rho"] * s["mg"] + (1 - h["rho"]) * g
    s["ms"] = h["rho"] * s["ms"] + (1 - h["rho"]) * g * g
    denom = np.sqrt(s["ms"] - s["mg"] ** 2 + h["epsilon"])
    s["mom"] = h["momentum"] * s["mom"] + h["lr"] * g / denom
    s["var"] -= s["mom"]


def _adagrad(update_slots):
    def step(s, g, h, t):
        if update_slots:
            s["accum"] = s["accum"] + g * g
        s["var"] -= h["lr"] * g / np.sqrt(s["accum"])
    return step


# (op suffix, slot names, hyper-parameters (beta powers are filled per step), grad arg name,
#  attrs, reference step)
CASES = [
    ("GradientDescent", [], {"alpha": 0.3}, "delta", {}, _gd),
    ("Momentum", ["accum"], {"lr": 0.1, "momentum": 0.9}, "grad", {}, _momentum(False)),
    ("Momentum", ["accum"], {"lr": 0.1, "momentum": 0.9}, "grad", {"use_nesterov": True},
     _momentum(True)),
    ("Adam", ["m", "v"], {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-7}, "grad", {},
     _adam(False)),
    ("Adam", ["m", "v"], {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-7}, "grad",
     {"use_nesterov": True}, _adam(True)),
    ("RMSProp", ["ms", "mom"], {"lr": 0.01, "rho": 0.9, "momentum": 0.5, "epsilon": 1e-6}, "grad",
     {}, _rmsprop),
    ("CenteredRMSProp", ["mg", "ms", "mom"],
     {"lr": 0.01, "rho": 0.9, "momentum": 0.5, "epsilon": 1e-6}, "grad", {}, _centered_rmsprop),
    ("Adagrad", ["accum"], {"lr": 0.1}, "grad", {}, _adagrad(True)),
    ("Adagrad", ["accum"], {"lr": 0.1}, "grad", {"update_slots": False}, _adagrad(False)),
]


def _initial(slots, rng, shape):
    state = {"var": rng.uniform(-1, 1, shape)}
    for s in slots:
        # Second moments must stay positive; mg must keep ms - mg^2 > 0.
        state[s] = (rng.uniform(0.1, 0.5, shape) if s in ("v", "ms", "accum")
                    else rng.uniform(-0.1, 0.1, shape))
    return state


def _build(case, tdt, shape, state, resource):
    """(g, beta1_power, beta2_power placeholders, update op, initializers, {name: read})."""
    name, slots, hyper, grad_name, attrs, _ = case
    names = ["var"] + slots
    g = tx.placeholder(tdt, shape, name="g")
    b1p = tx.placeholder(tdt, [], name="beta1_power")
    b2p = tx.placeholder(tdt, [], name="beta2_power")
    args = {k: tx.constant(v, tdt) for k, v in hyper.items()}
    args[grad_name] = g
    if name == "Adam":
        args.update(beta1_power=b1p, beta2_power=b2p)
    if resource:
        variables = {n: tx.Variable(tx.constant(state[n], tdt), name=n) for n in names}
        inits = [v.initializer for v in variables.values()]
        args.update({n: v.handle for n, v in variables.items()})
        update = getattr(raw, "ResourceApply" + name)(**args, **attrs)
        reads = {n: v.read_value() for n, v in variables.items()}
    else:
        refs = {n: raw.VariableV2(shape=shape, dtype=tdt, name=n) for n in names}
        inits = [raw.Assign(ref=r, value=tx.constant(state[n], tdt)) for n, r in refs.items()]
        args.update(refs)
        update = getattr(raw, "Apply" + name)(**args, **attrs)
        assert update.dtype == tdt._as_ref
        reads = {n: tx.identity(r) for n, r in refs.items()}
    return g, b1p, b2p, update, inits, reads


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0] + str(c[4]))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("resource", [True, False], ids=["resource", "ref"])
# (70, 301): large enough for the kernel's sharded, vectorized loop, with a remainder.
@pytest.mark.parametrize("shape", [SHAPE, (70, 301)], ids=["small", "sharded"])
def test_three_updates_match_numpy(graph, case, dtype, resource, shape):
    name, slots, hyper, grad_name, attrs, ref_step = case
    rng = np.random.RandomState(7)
    state = _initial(slots, rng, shape)
    grads = [rng.uniform(-1, 1, shape) for _ in range(3)]
    tdt = tx.as_dtype(dtype)
    names = ["var"] + slots
    g, b1p, b2p, update, inits, reads = _build(
        case, tdt, shape, {k: v.astype(dtype) for k, v in state.items()}, resource)
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == np.float64 else dict(rtol=1e-6, atol=1e-6)
    with tx.Session() as sess:
        sess.run(inits)
        for t, grad in enumerate(grads, start=1):
            feed = {g: grad.astype(dtype)}
            if name == "Adam":
                feed.update({b1p: hyper["beta1"] ** t, b2p: hyper["beta2"] ** t})
            out = sess.run(update, feed)
            h = {k: float(np.asarray(v, dtype)) for k, v in hyper.items()}
            ref_step(state, grad.astype(dtype).astype(np.float64), h, t)
            if not resource:  # Apply* returns the updated variable
                np.testing.assert_allclose(out, state["var"], **tol)
            got = sess.run(reads)
            for n in names:
                np.testing.assert_allclose(got[n], state[n], err_msg="%s step %d" % (n, t), **tol)


def test_shape_and_scalar_errors_name_the_input(graph):
    v = tx.Variable(np.zeros(SHAPE, np.float32), name="v")
    accum = tx.Variable(np.ones([3], np.float32), name="accum")
    g = tx.placeholder(tx.float32, name="g")
    lr = tx.placeholder(tx.float32, name="lr")
    gd = raw.ResourceApplyGradientDescent(var=v.handle, alpha=lr, delta=g)
    mom = raw.ResourceApplyMomentum(var=v.handle, accum=accum.handle, lr=0.1, grad=g,
                                    momentum=0.9)
    with tx.Session() as sess:
        with pytest.raises(tx.errors.FailedPreconditionError) as e:
            sess.run(gd, {lr: 0.1, g: np.ones(SHAPE, np.float32)})
        assert "v" in e.value.message
        sess.run([v.initializer, accum.initializer])
        with pytest.raises(tx.errors.InvalidArgumentError) as e:
            sess.run(gd, {lr: 0.1, g: np.ones([3, 2], np.float32)})
        assert "var and delta do not have the same shape" in e.value.message
        with pytest.raises(tx.errors.InvalidArgumentError) as e:
            sess.run(gd, {lr: [0.1, 0.2], g: np.ones(SHAPE, np.float32)})
        assert "alpha is not a scalar" in e.value.message
        with pytest.raises(tx.errors.InvalidArgumentError) as e:
            sess.run(mom, {g: np.ones(SHAPE, np.float32)})
        assert "var and accum do not have the same shape" in e.value.message
        # A failed update leaves the variable unchanged.
        np.testing.assert_array_equal(sess.run(v), np.zeros(SHAPE))
    # Known static shapes fail when the graph is built.
    with pytest.raises(ValueError):
        raw.ApplyGradientDescent(var=raw.VariableV2(shape=[2], dtype=tx.float32), alpha=0.1,
                                 delta=tx.constant([1.0, 2.0, 3.0]))


def _round_bfloat16(x):
    """float32 values rounded to the nearest bfloat16 (ties to even), as float32."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.int64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0] + str(c[4]))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("resource", [True, False], ids=["resource", "ref"])
def test_16_bit_updates_compute_in_float_and_round(graph, case, dtype, resource):
    # As TF's CPU kernels: the 16-bit inputs are widened to float32, the update is computed in
    # float32 and each variable is rounded back. Reference: numpy float32 with that rounding.
    name, slots, hyper, grad_name, attrs, ref_step = case
    if name == "Adam":
        hyper = dict(hyper, beta2=0.99)  # 0.999 rounds to 1 in bfloat16
    rnd = (lambda x: np.asarray(x, np.float32).astype(np.float16).astype(np.float32)) \
        if dtype == "float16" else _round_bfloat16
    rng = np.random.RandomState(3)
    state = {k: rnd(v) for k, v in _initial(slots, rng, SHAPE).items()}
    grads = [rnd(rng.uniform(-1, 1, SHAPE)) for _ in range(3)]
    tdt = tx.as_dtype(dtype)
    names = ["var"] + slots
    g, b1p, b2p, update, inits, reads = _build((name, slots, hyper, grad_name, attrs, ref_step),
                                               tdt, SHAPE, state, resource)
    h = {k: np.float32(rnd(v)) for k, v in hyper.items()}
    # One ulp of the 16-bit type (the float32 reference and the kernel may round differently
    # where the float32 results differ in their last bits).
    tol = dict(rtol=2 ** -10, atol=1e-6) if dtype == "float16" else dict(rtol=2 ** -7, atol=1e-6)
    with tx.Session() as sess:
        sess.run(inits)
        for t, grad in enumerate(grads, start=1):
            feed = {g: grad}
            if name == "Adam":
                feed.update({b1p: rnd(h["beta1"] ** t), b2p: rnd(h["beta2"] ** t)})
            sess.run(update, feed)
            got = sess.run(reads)
            assert all(got[n].dtype == np.dtype(tdt.as_numpy_dtype) for n in names)
            step_state = {k: v.astype(np.float32) for k, v in state.items()}
            ref_step(step_state, grad, h, t)
            state = {k: rnd(v) for k, v in step_state.items()}
            for n in names:
                np.testing.assert_allclose(np.asarray(got[n], np.float32), state[n],
                                           err_msg="%s step %d" % (n, t), **tol)
            # Next step from the kernel's own (rounded) values, so errors do not compound.
            state = {n: np.asarray(got[n], np.float32) for n in names}


def test_one_variable_passed_as_two_inputs_keeps_the_scalar_order(graph):
    # ResourceApplyMomentum with var and accum the same variable: per element accum' = x * m + g,
    # var' = x - lr * accum', stored var then accum, so accum' is what remains. The update loop
    # is vectorized (70 x 301 elements: sharded, with a remainder); the result must be the
    # scalar loop's.
    rng = np.random.RandomState(3)
    x0 = rng.uniform(-1, 1, (70, 301)).astype(np.float32)
    grad = rng.uniform(-1, 1, (70, 301)).astype(np.float32)
    v = tx.Variable(tx.constant(x0), name="v")
    update = raw.ResourceApplyMomentum(var=v.handle, accum=v.handle, lr=tx.constant(0.5),
                                       grad=tx.constant(grad), momentum=tx.constant(0.9))
    with tx.Session() as sess:
        sess.run(v.initializer)
        sess.run(update)
        got = sess.run(v.read_value())
    # (the kernel may fuse the multiply-add: one rounding instead of two)
    np.testing.assert_allclose(got, x0.astype(np.float64) * np.float32(0.9) + grad,
                               rtol=1e-6, atol=1e-6)
