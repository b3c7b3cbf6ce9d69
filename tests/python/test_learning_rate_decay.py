"""Learning-rate schedules (tx.train.*_decay, training/learning_rate_decay.py): values at many
steps against the formulas of TF's definitions written in numpy float64; linear warm-up in front
of a constant and of each schedule; argument errors."""

import math

import numpy as np
import pytest

import tensorflux as tx

STEPS = [0, 1, 2, 5, 9, 10, 11, 15, 19, 20, 21, 37, 50, 99, 100, 101, 250, 1000]


def values(make, steps=STEPS, step_dtype=tx.int64):
    g = tx.Graph()
    with g.as_default():
        step = tx.placeholder(step_dtype, [], name="global_step")
        lr = make(step)
        assert lr.shape.ndims == 0
        with tx.Session(graph=g) as sess:
            return lr.dtype, np.array([sess.run(lr, {step: s}) for s in steps])


def check(make, ref, rtol=2e-6, steps=STEPS):
    dtype, got = values(make, steps)
    want = np.array([ref(float(s)) for s in steps])
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-9)
    return dtype


@pytest.mark.parametrize("staircase", [False, True])
def test_exponential_decay(staircase):
    def ref(s):
        p = s / 10
        return 0.1 * 0.5 ** (math.floor(p) if staircase else p)
    dtype = check(lambda st: tx.train.exponential_decay(0.1, st, 10, 0.5, staircase=staircase),
                  ref)
    assert dtype == tx.float32


@pytest.mark.parametrize("staircase", [False, True])
def test_natural_exp_and_inverse_time_decay(staircase):
    def p(s):
        return math.floor(s / 7) if staircase else s / 7
    check(lambda st: tx.train.natural_exp_decay(0.3, st, 7, 0.2, staircase=staircase),
          lambda s: 0.3 * math.exp(-0.2 * p(s)))
    check(lambda st: tx.train.inverse_time_decay(0.3, st, 7, 0.2, staircase=staircase),
          lambda s: 0.3 / (1 + 0.2 * p(s)))


def test_double_learning_rate_keeps_its_dtype():
    dtype = check(lambda st: tx.train.exponential_decay(tx.constant(0.1, tx.float64), st, 10,
                                                        0.5), lambda s: 0.1 * 0.5 ** (s / 10),
                  rtol=1e-12)
    assert dtype == tx.float64


def test_piecewise_constant():
    def ref(s):
        return 1.0 if s <= 10 else (0.5 if s <= 20 else 0.1)
    check(lambda st: tx.train.piecewise_constant(st, [10, 20], [1.0, 0.5, 0.1]), ref)
    # int32 step and integer values.
    _, got = values(lambda st: tx.train.piecewise_constant(st, [3], [7, 9]), [0, 3, 4],
                    tx.int32)
    np.testing.assert_array_equal(got, [7, 7, 9])


def test_piecewise_constant_errors(graph):
    step = tx.placeholder(tx.int64, [])
    with pytest.raises(ValueError, match="1 less"):
        tx.train.piecewise_constant(step, [1, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="same dtype"):
        tx.train.piecewise_constant(step, [1], [0.1, tx.constant(1, tx.int32)])


@pytest.mark.parametrize("power", [1.0, 0.5, 2.0])
@pytest.mark.parametrize("cycle", [False, True])
def test_polynomial_decay(power, cycle):
    lr, end, decay_steps = 0.1, 0.01, 20.0

    def ref(s):
        steps = decay_steps
        if cycle:
            steps = decay_steps * (1.0 if s == 0 else math.ceil(s / decay_steps))
        else:
            s = min(s, decay_steps)
        return (lr - end) * (1 - s / steps) ** power + end
    check(lambda st: tx.train.polynomial_decay(lr, st, decay_steps, end, power=power,
                                               cycle=cycle), ref)


@pytest.mark.parametrize("alpha", [0.0, 0.2])
def test_cosine_decay(alpha):
    def ref(s):
        f = min(s, 100) / 100
        return 0.05 * ((1 - alpha) * 0.5 * (1 + math.cos(math.pi * f)) + alpha)
    check(lambda st: tx.train.cosine_decay(0.05, st, 100, alpha=alpha), ref, rtol=1e-5)


@pytest.mark.parametrize("t_mul,m_mul", [(1.0, 1.0), (2.0, 0.5), (1.5, 0.9)])
def test_cosine_decay_restarts(t_mul, m_mul):
    first, alpha = 10.0, 0.1

    def ref(s):
        f = s / first
        if t_mul == 1.0:
            i = math.floor(f)
            f -= i
        else:
            i = math.floor(math.log(1 - f * (1 - t_mul)) / math.log(t_mul))
            f = (f - (1 - t_mul ** i) / (1 - t_mul)) / t_mul ** i
        return 0.2 * ((1 - alpha) * 0.5 * m_mul ** i * (1 + math.cos(math.pi * f)) + alpha)
    # Steps off the restart boundaries, where float32 rounding of the log may pick either side.
    steps = [0, 1, 4, 9, 11, 17, 23, 29, 31, 44, 58, 71, 93, 151, 333]
    check(lambda st: tx.train.cosine_decay_restarts(0.2, st, first, t_mul=t_mul, m_mul=m_mul,
                                                    alpha=alpha), ref, rtol=2e-5, steps=steps)


def test_linear_warmup_constant():
    def ref(s):
        return 0.01 + (0.1 - 0.01) * s / 10 if s < 10 else 0.1
    check(lambda st: tx.train.linear_warmup(0.1, 10, st, initial=0.01), ref)


SCHEDULES = [
    (lambda st: tx.train.exponential_decay(0.1, st, 10, 0.5, staircase=True),
     lambda s: 0.1 * 0.5 ** math.floor(s / 10)),
    (lambda st: tx.train.piecewise_constant(st, [10, 20], [0.1, 0.05, 0.01]),
     lambda s: 0.1 if s <= 10 else (0.05 if s <= 20 else 0.01)),
    (lambda st: tx.train.polynomial_decay(0.1, st, 50, 0.001, power=2.0),
     lambda s: (0.1 - 0.001) * (1 - min(s, 50) / 50) ** 2 + 0.001),
    (lambda st: tx.train.cosine_decay(0.1, st, 60, alpha=0.1),
     lambda s: 0.1 * (0.9 * 0.5 * (1 + math.cos(math.pi * min(s, 60) / 60)) + 0.1)),
]


@pytest.mark.parametrize("schedule,ref", SCHEDULES)
def test_linear_warmup_in_front_of_each_schedule(schedule, ref):
    warmup = 15

    def warm_ref(s):
        if s < warmup:
            return ref(0.0) * s / warmup
        return ref(s - warmup)
    check(lambda st: tx.train.linear_warmup(schedule, warmup, st), warm_ref, rtol=1e-5)
    # No warm-up is the schedule itself.
    check(lambda st: tx.train.linear_warmup(schedule, 0, st), ref, rtol=1e-5)


def test_schedules_need_global_step(graph):
    for fn in (lambda: tx.train.exponential_decay(0.1, None, 10, 0.5),
               lambda: tx.train.polynomial_decay(0.1, None, 10),
               lambda: tx.train.cosine_decay(0.1, None, 10),
               lambda: tx.train.cosine_decay_restarts(0.1, None, 10),
               lambda: tx.train.linear_warmup(0.1, 5, None)):
        with pytest.raises(ValueError, match="global_step is required"):
            fn()
    for bad in (-1, 2.5):
        with pytest.raises(ValueError, match="warmup_steps must be a non-negative int, got %r"
                           % bad):
            tx.train.linear_warmup(0.1, bad, tx.constant(0))
