"""Learning-rate schedules as graph computations on the global step (TF 1.x tf.train.*_decay).

Each function returns a scalar Tensor of the learning rate's dtype (a Python float becomes
float32) that is recomputed from `global_step` (an integer or float scalar tensor or variable,
usually tx.train.get_or_create_global_step()) every time it is run, so an optimizer given it
follows the schedule as training advances the step. With p = global_step / decay_steps:

    exponential_decay     lr * decay_rate ^ p                      (staircase: p floored)
    natural_exp_decay     lr * exp(-decay_rate * p)                (staircase: p floored)
    inverse_time_decay    lr / (1 + decay_rate * p)                (staircase: p floored)
    piecewise_constant    values[i] for boundaries[i-1] < step <= boundaries[i]
    polynomial_decay      (lr - end) * (1 - min(step, decay_steps) / decay_steps)^power + end;
                          cycle: decay_steps *= ceil(step / decay_steps) (1 at step 0)
    cosine_decay          lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) /
                          decay_steps)) + alpha)
    cosine_decay_restarts the same over periods growing by t_mul, peaks scaled by m_mul
    linear_warmup         a linear ramp in front of any of them (see its docstring)
"""

import math

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.ops import array_ops
from tensorflux.ops import math_ops
from tensorflux.ops import math_ops2


def _check_step(global_step, fn):
    if global_step is None:
        raise ValueError("global_step is required for %s." % fn)


def _lr_and_step(learning_rate, global_step):
    """learning_rate as a tensor (its dtype), global_step cast to that dtype."""
    lr = ops.convert_to_tensor(learning_rate, name="learning_rate")
    if not lr.dtype.is_floating:
        lr = math_ops.cast(lr, dtypes.float32)
    step = math_ops.cast(ops.convert_to_tensor(global_step), lr.dtype)
    return lr, step


def _floor(x):
    return math_ops2.floordiv(x, ops.convert_to_tensor(1.0, dtype=x.dtype))


def _decay_progress(learning_rate, global_step, decay_steps, staircase):
    lr, step = _lr_and_step(learning_rate, global_step)
    p = math_ops.truediv(step, math_ops.cast(ops.convert_to_tensor(decay_steps), lr.dtype))
    if staircase:
        p = _floor(p)
    return lr, p


def _rate_decay(fn_name, default_name, learning_rate, global_step, decay_steps, decay_rate,
                staircase, name, formula):
    """formula(lr, decay_rate, p, name) with p = global_step / decay_steps (floored when
    staircase), all of the learning rate's dtype."""
    _check_step(global_step, fn_name)
    with ops.name_scope(name, default_name,
                        [learning_rate, global_step, decay_steps, decay_rate]) as scope:
        lr, p = _decay_progress(learning_rate, global_step, decay_steps, staircase)
        rate = math_ops.cast(ops.convert_to_tensor(decay_rate), lr.dtype)
        return formula(lr, rate, p, scope)


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """learning_rate * decay_rate ^ (global_step / decay_steps); with staircase the exponent is
    floored (the rate drops every decay_steps). ValueError without global_step."""
    return _rate_decay(
        "exponential_decay", "ExponentialDecay", learning_rate, global_step, decay_steps,
        decay_rate, staircase, name,
        lambda lr, rate, p, scope: math_ops.multiply(lr, math_ops2.pow(rate, p), name=scope))


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """learning_rate * exp(-decay_rate * global_step / decay_steps) (staircase: floored)."""
    return _rate_decay(
        "natural_exp_decay", "NaturalExpDecay", learning_rate, global_step, decay_steps,
        decay_rate, staircase, name,
        lambda lr, rate, p, scope: math_ops.multiply(
            lr, math_ops.exp(math_ops.negative(rate * p)), name=scope))


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                       name=None):
    """learning_rate / (1 + decay_rate * global_step / decay_steps) (staircase: floored)."""
    return _rate_decay(
        "inverse_time_decay", "InverseTimeDecay", learning_rate, global_step, decay_steps,
        decay_rate, staircase, name,
        lambda lr, rate, p, scope: math_ops.truediv(lr, 1.0 + rate * p, name=scope))


def piecewise_constant(x, boundaries, values, name=None):
    """values[0] while x <= boundaries[0], values[i] while boundaries[i-1] < x <= boundaries[i],
    values[-1] once x > boundaries[-1]. boundaries: increasing numbers (compared in x's dtype);
    values: one more than boundaries, all of one dtype (the result's). ValueError when the lengths
    do not match or the values' dtypes differ."""
    if len(boundaries) + 1 != len(values):
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    with ops.name_scope(name, "PiecewiseConstant", [x] + list(boundaries) + list(values)) as scope:
        x = ops.convert_to_tensor(x)
        values = [ops.convert_to_tensor(v) for v in values]
        for v in values[1:]:
            if v.dtype.base_dtype != values[0].dtype.base_dtype:
                raise ValueError("Values must have elements all with the same dtype (%s vs %s)."
                                 % (values[0].dtype.name, v.dtype.name))
        bounds = [ops.convert_to_tensor(b, dtype=x.dtype.base_dtype) if not isinstance(
            b, ops.Tensor) else math_ops.cast(b, x.dtype.base_dtype) for b in boundaries]
        result = values[-1]
        for b, v in reversed(list(zip(bounds, values[:-1]))):
            result = math_ops2.where_v2(math_ops2.less_equal(x, b), v, result)
        return array_ops.identity(result, name=scope)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle=False, name=None):
    """(learning_rate - end_learning_rate) * (1 - step / decay_steps)^power + end_learning_rate
    with step = min(global_step, decay_steps); with cycle, decay_steps is instead multiplied by
    ceil(global_step / decay_steps) (1 at step 0), so the decay restarts every decay_steps."""
    _check_step(global_step, "polynomial_decay")
    with ops.name_scope(name, "PolynomialDecay",
                        [learning_rate, global_step, decay_steps, end_learning_rate,
                         power]) as scope:
        lr, step = _lr_and_step(learning_rate, global_step)
        dt = lr.dtype
        steps = math_ops.cast(ops.convert_to_tensor(decay_steps), dt)
        end = math_ops.cast(ops.convert_to_tensor(end_learning_rate), dt)
        power = math_ops.cast(ops.convert_to_tensor(power), dt)
        if cycle:
            ceil = math_ops.negative(_floor(math_ops.negative(step / steps)))
            one = ops.convert_to_tensor(1.0, dtype=dt)
            multiplier = math_ops2.where_v2(math_ops2.equal(step, 0.0), one, ceil)
            steps = steps * multiplier
        else:
            step = math_ops.minimum(step, steps)
        p = math_ops.truediv(step, steps)
        return math_ops.add((lr - end) * math_ops2.pow(1.0 - p, power), end, name=scope)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * step / decay_steps)) + alpha) with
    step = min(global_step, decay_steps) (Loshchilov & Hutter, SGDR, without restarts)."""
    _check_step(global_step, "cosine_decay")
    with ops.name_scope(name, "CosineDecay", [learning_rate, global_step]) as scope:
        lr, step = _lr_and_step(learning_rate, global_step)
        dt = lr.dtype
        steps = math_ops.cast(ops.convert_to_tensor(decay_steps), dt)
        fraction = math_ops.truediv(math_ops.minimum(step, steps), steps)
        cosine = 0.5 * (1.0 + math_ops2.cos(math.pi * fraction))
        alpha = math_ops.cast(ops.convert_to_tensor(alpha), dt)
        return math_ops.multiply(lr, (1.0 - alpha) * cosine + alpha, name=scope)


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0,
                          alpha=0.0, name=None):
    """Cosine decay with warm restarts (SGDR, Loshchilov & Hutter 2017; TF 1.x's definition).
    Period i (from 0) lasts first_decay_steps * t_mul^i steps and peaks at
    learning_rate * m_mul^i; inside a period at fraction f the rate is
    learning_rate * ((1 - alpha) * 0.5 * m_mul^i * (1 + cos(pi * f)) + alpha).
    t_mul: a Python number > 0 (1 gives equal periods)."""
    _check_step(global_step, "cosine_decay_restarts")
    if not isinstance(t_mul, (int, float)) or t_mul <= 0:
        raise ValueError("t_mul must be a positive Python number, got %r" % (t_mul,))
    with ops.name_scope(name, "SGDRDecay", [learning_rate, global_step]) as scope:
        lr, step = _lr_and_step(learning_rate, global_step)
        dt = lr.dtype
        first = math_ops.cast(ops.convert_to_tensor(first_decay_steps), dt)
        fraction = math_ops.truediv(step, first)
        if t_mul == 1.0:
            i_restart = _floor(fraction)
            fraction = fraction - i_restart
        else:
            t = ops.convert_to_tensor(float(t_mul), dtype=dt)
            i_restart = _floor(math_ops.log(1.0 - fraction * (1.0 - t)) / math.log(t_mul))
            t_pow = math_ops2.pow(t, i_restart)
            sum_r = (1.0 - t_pow) / (1.0 - t)
            fraction = (fraction - sum_r) / t_pow
        m_fac = math_ops2.pow(math_ops.cast(ops.convert_to_tensor(m_mul), dt), i_restart)
        cosine = 0.5 * m_fac * (1.0 + math_ops2.cos(math.pi * fraction))
        alpha = math_ops.cast(ops.convert_to_tensor(alpha), dt)
        return math_ops.multiply(lr, (1.0 - alpha) * cosine + alpha, name=scope)


def linear_warmup(schedule_or_lr, warmup_steps, global_step, initial=0.0, name=None):
    """A linear warm-up in front of a schedule (a TensorFlux addition; TF 1.x has none).

    schedule_or_lr: a number or scalar Tensor (a constant rate), or a callable step -> rate such
    as `lambda step: tx.train.cosine_decay(0.1, step, 1000)`. warmup_steps: a Python int >= 0.
    Convention: for global_step < warmup_steps the rate is
        initial + (target - initial) * global_step / warmup_steps,
    target being the schedule's value at step 0; from global_step = warmup_steps on, it is the
    schedule evaluated at global_step - warmup_steps (so the schedule starts, undecayed, where the
    warm-up ends and its decay_steps count after the warm-up). warmup_steps = 0 is the schedule
    itself. Returns a scalar Tensor of the schedule's dtype.
    """
    _check_step(global_step, "linear_warmup")
    if not isinstance(warmup_steps, int) or warmup_steps < 0:
        raise ValueError("warmup_steps must be a non-negative int, got %r" % (warmup_steps,))
    with ops.name_scope(name, "LinearWarmup", [global_step]) as scope:
        step = ops.convert_to_tensor(global_step)
        if callable(schedule_or_lr):
            shifted = math_ops.maximum(step - math_ops.cast(warmup_steps, step.dtype),
                                       math_ops.cast(0, step.dtype))
            rate = ops.convert_to_tensor(schedule_or_lr(shifted))
        else:
            rate = ops.convert_to_tensor(schedule_or_lr)
        if not rate.dtype.is_floating:
            rate = math_ops.cast(rate, dtypes.float32)
        if warmup_steps == 0:
            return array_ops.identity(rate, name=scope)
        dt = rate.dtype
        fstep = math_ops.cast(step, dt)
        init = math_ops.cast(ops.convert_to_tensor(initial), dt)
        ramp = init + (rate - init) * (fstep / float(warmup_steps))
        in_warmup = math_ops2.less(fstep, float(warmup_steps))
        return math_ops2.where_v2(in_warmup, ramp, rate, name=scope)
