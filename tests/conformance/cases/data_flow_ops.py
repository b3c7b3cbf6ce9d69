"""Queues and gradient accumulators (ops/data_flow_ops.cc): FIFOQueueV2 and its enqueue,
dequeue, size and close ops; ConditionalAccumulator and the Accumulator* ops in their ref and
resource forms. Program cases: every run is ordered with control dependencies, and no case
blocks (dequeues never ask for more than was enqueued unless the queue is closed)."""

import numpy as np

from conformance.program_util import ordered, values
from conformance.table import Case

CASES = []
QUEUE = ("FIFOQueueV2", "QueueEnqueueV2", "QueueDequeueV2")


def _const(m, arr):
    arr = np.asarray(arr)
    dt = "string" if arr.dtype.kind in "SUO" else arr.dtype.name
    return m.constant(arr, dtype=m.as_dtype(dt))


def _queue(m, dtypes, shapes=None, capacity=-1, shared_name="", name="q"):
    return m.raw_ops.FIFOQueueV2(
        component_types=[m.as_dtype(d) for d in dtypes],
        shapes=[] if shapes is None else [m.TensorShape(s) for s in shapes],
        capacity=capacity, container="", shared_name=shared_name, name=name)


def _enq(m, q, comps):
    return m.raw_ops.QueueEnqueueV2(handle=q, components=[_const(m, c) for c in comps])


def _enq_many(m, q, comps):
    return m.raw_ops.QueueEnqueueManyV2(handle=q, components=[_const(m, c) for c in comps])


def _deq(m, q, dtypes):
    return m.raw_ops.QueueDequeueV2(handle=q, component_types=[m.as_dtype(d) for d in dtypes])


def _deq_many(m, q, n, dtypes):
    return m.raw_ops.QueueDequeueManyV2(handle=q, n=m.constant(n, m.int32),
                                        component_types=[m.as_dtype(d) for d in dtypes])


def _size(m, q):
    return m.raw_ops.QueueSizeV2(handle=q)


def _close(m, q, cancel=False):
    return m.raw_ops.QueueCloseV2(handle=q, cancel_pending_enqueues=cancel)


def _case(op, variant, dtype, program, covers, **kw):
    return Case(op, variant="program" + ("_" + variant if variant else ""), dtype=dtype,
                program=program, covers=[c for c in covers if c != op], **kw)


def _fifo(dtype):
    """Three two-component elements (dtype [2], int32 scalar) in, out in order."""
    def program(m):
        dts = [dtype, "int32"]
        q = _queue(m, dts, [[2], []])
        if dtype == "string":
            elems = [(np.array([b"a%d" % i, b""]), np.int32(i)) for i in range(3)]
        else:
            elems = [(values("df/fifo/%s/%d" % (dtype, i), (2,), dtype, -100, 100),
                      np.int32(i)) for i in range(3)]
        makers = [lambda e=e: _enq(m, q, e) for e in elems]
        makers.append(lambda: _size(m, q))
        makers += [lambda: _deq(m, q, dts) for _ in elems]
        makers.append(lambda: _size(m, q))
        outs = ordered(m, makers)
        return outs[3:], {}, []
    return program


for _dt in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
            "uint16", "uint32", "uint64", "bool", "string"):
    CASES.append(_case("FIFOQueueV2", "", _dt, _fifo(_dt), QUEUE + ("QueueSizeV2",)))


def _many(n_first):
    def program(m):
        dts = ["float32", "int64"]
        q = _queue(m, dts, [[3], []])
        a = values("df/many/a", (5, 3))
        b = np.arange(5, dtype=np.int64) * 10
        outs = ordered(m, [
            lambda: _enq_many(m, q, [a[:4], b[:4]]),
            lambda: _enq(m, q, [a[4], b[4]]),
            lambda: _deq_many(m, q, n_first, dts),
            lambda: _deq(m, q, dts),
            lambda: _size(m, q)])
        return outs[2:], {}, []
    return program


QMANY = ("FIFOQueueV2", "QueueEnqueueManyV2", "QueueEnqueueV2", "QueueDequeueManyV2",
         "QueueDequeueV2", "QueueSizeV2")
CASES.append(_case("QueueDequeueManyV2", "", "float32", _many(3), QMANY))
CASES.append(_case("QueueDequeueManyV2", "zero", "float32", _many(0), QMANY))
CASES.append(_case("QueueEnqueueManyV2", "", "float32", _many(4), QMANY))


def _enqueue_many_empty(m):
    q = _queue(m, ["float32"], [[2]])
    outs = ordered(m, [lambda: _enq_many(m, q, [np.zeros((0, 2), np.float32)]),
                       lambda: _size(m, q)])
    return outs[1:], {}, []


CASES.append(_case("QueueEnqueueManyV2", "empty", "float32", _enqueue_many_empty,
                   ("FIFOQueueV2", "QueueSizeV2")))


def _enqueue_many_ragged(m):
    q = _queue(m, ["float32", "int32"], [[], []])
    e = _enq_many(m, q, [np.zeros(3, np.float32), np.zeros(2, np.int32)])
    return [], {}, [e]


CASES.append(_case("QueueEnqueueManyV2", "ragged", "float32", _enqueue_many_ragged,
                   ("FIFOQueueV2",)))


def _unshaped(m):
    """No shapes: elements of different shapes pass one at a time."""
    q = _queue(m, ["float32"])
    outs = ordered(m, [
        lambda: _enq(m, q, [np.float32(1.5)]),
        lambda: _enq(m, q, [np.arange(6, dtype=np.float32).reshape(2, 3)]),
        lambda: _enq(m, q, [np.zeros((0, 4), np.float32)]),
        lambda: _deq(m, q, ["float32"]),
        lambda: _deq(m, q, ["float32"]),
        lambda: _deq(m, q, ["float32"])])
    return outs[3:], {}, []


CASES.append(_case("QueueDequeueV2", "unshaped", "float32", _unshaped, QUEUE))


def _unshaped_many(m):
    q = _queue(m, ["float32"])
    outs = ordered(m, [lambda: _enq(m, q, [np.float32(1.5)]),
                       lambda: _deq_many(m, q, 1, ["float32"])])
    return outs[1:], {}, []


CASES.append(_case("QueueDequeueManyV2", "unshaped", "float32", _unshaped_many, QUEUE))


def _wrong_shape(fed):
    def program(m):
        q = _queue(m, ["float32"], [[2]])
        if fed:
            p = m.placeholder(m.float32, shape=None)
            e = m.raw_ops.QueueEnqueueV2(handle=q, components=[p])
            return [], {p: np.zeros(3, np.float32)}, [e]
        return [], {}, [_enq(m, q, [np.zeros(3, np.float32)])]
    return program


CASES.append(_case("QueueEnqueueV2", "wrong_shape", "float32", _wrong_shape(False),
                   ("FIFOQueueV2",)))
CASES.append(_case("QueueEnqueueV2", "wrong_shape_fed", "float32", _wrong_shape(True),
                   ("FIFOQueueV2",)))


def _wrong_dtype(m):
    q = _queue(m, ["float32"], [[2]])
    return [], {}, [_enq(m, q, [np.zeros(2, np.int32)])]


CASES.append(_case("QueueEnqueueV2", "wrong_dtype", "float32", _wrong_dtype, ("FIFOQueueV2",)))


def _closed(what):
    def program(m):
        dts = ["float32"]
        q = _queue(m, dts, [[]])
        makers = [lambda: _enq_many(m, q, [np.array([1.0, 2.0, 3.0], np.float32)]),
                  lambda: _close(m, q, what == "cancel")]
        if what in ("drain", "cancel"):
            makers += [lambda: _deq(m, q, dts), lambda: _deq_many(m, q, 2, dts),
                       lambda: _size(m, q)]
        elif what == "dequeue_empty":
            makers += [lambda: _deq_many(m, q, 3, dts), lambda: _deq(m, q, dts)]
        elif what == "dequeue_many_short":
            makers += [lambda: _deq_many(m, q, 4, dts)]
        elif what == "enqueue":
            makers += [lambda: _enq(m, q, [np.float32(4.0)])]
        elif what == "enqueue_many":
            makers += [lambda: _enq_many(m, q, [np.array([4.0], np.float32)])]
        elif what == "twice":
            makers += [lambda: _close(m, q), lambda: _size(m, q)]
        outs = ordered(m, makers)
        return [o for o in outs[2:] if o.__class__.__name__ != "Operation"], {}, []
    return program


QCLOSE = ("FIFOQueueV2", "QueueEnqueueManyV2", "QueueDequeueV2", "QueueDequeueManyV2",
          "QueueSizeV2", "QueueEnqueueV2")
for _what in ("drain", "cancel", "dequeue_empty", "dequeue_many_short", "enqueue",
              "enqueue_many", "twice"):
    CASES.append(_case("QueueCloseV2", _what, "float32", _closed(_what), QCLOSE))


def _shared(m):
    q1 = _queue(m, ["int32"], [[]], shared_name="shared", name="q1")
    q2 = _queue(m, ["int32"], [[]], shared_name="shared", name="q2")
    outs = ordered(m, [lambda: _enq(m, q1, [np.int32(7)]),
                       lambda: _size(m, q2),
                       lambda: _deq(m, q2, ["int32"])])
    return outs[1:], {}, []


def _shared_mismatch(m):
    q1 = _queue(m, ["int32"], [[]], shared_name="shared", name="q1")
    q2 = _queue(m, ["float32"], [[]], shared_name="shared", name="q2")
    outs = ordered(m, [lambda: _enq(m, q1, [np.int32(7)]),
                       lambda: _size(m, q2)])
    return outs[1:], {}, []


CASES.append(_case("FIFOQueueV2", "shared_name", "int32", _shared, QUEUE + ("QueueSizeV2",)))
CASES.append(_case("FIFOQueueV2", "shared_name_mismatch", "int32", _shared_mismatch,
                   QUEUE + ("QueueSizeV2",)))


def _capacity(m):
    """A bounded queue: filling it to capacity does not block; size reports it."""
    q = _queue(m, ["int32"], [[]], capacity=3)
    outs = ordered(m, [lambda: _enq_many(m, q, [np.array([1, 2, 3], np.int32)]),
                       lambda: _size(m, q),
                       lambda: _deq_many(m, q, 3, ["int32"])])
    return outs[1:], {}, []


CASES.append(_case("FIFOQueueV2", "capacity", "int32", _capacity, QMANY))


def _class_api(m):
    """The FIFOQueue class: enqueue, enqueue_many, dequeue_many, dequeue, size, close."""
    q = m.FIFOQueue(10, [m.float32, m.int32], shapes=[[2], []])
    a = values("df/class/a", (3, 2))
    outs = ordered(m, [
        lambda: q.enqueue_many([a, np.array([1, 2, 3], np.int32)]),
        lambda: q.enqueue([a[0] * 2, np.int32(9)]),
        lambda: q.size(),
        lambda: q.dequeue_many(2),
        lambda: q.close(),
        lambda: q.dequeue(),
        lambda: q.dequeue()])
    return [o for o in outs[2:] if o.__class__.__name__ != "Operation"], {}, []


CASES.append(_case("FIFOQueueV2", "class_api", "float32", _class_api,
                   QCLOSE + ("QueueCloseV2",)))

# ---------------------------------------------------------------- accumulators

ACC_REF = ("ConditionalAccumulator", "AccumulatorApplyGradient", "AccumulatorTakeGradient",
           "AccumulatorNumAccumulated", "AccumulatorSetGlobalStep")
ACC_RES = tuple("Resource" + n for n in ACC_REF)


def _acc_ops(m, resource):
    prefix = "Resource" if resource else ""
    return {n: getattr(m.raw_ops, prefix + n) for n in ACC_REF}


def _accumulate(dtype, resource=False, reduction="MEAN", shape=(2, 3), stale=False,
                num_required=3, unknown_shape=False):
    """Three gradients (local steps 0, 0, 1, or a stale one after set_global_step), the count,
    the taken mean or sum, the count after."""
    def program(m):
        ops = _acc_ops(m, resource)
        dt = m.as_dtype(dtype)
        acc = ops["ConditionalAccumulator"](
            dtype=dt, shape=m.TensorShape(None if unknown_shape else list(shape)),
            container="", shared_name="acc", reduction_type=reduction)
        grads = [values("df/acc/%s/%d" % (dtype, i), shape, dtype, -10, 10) for i in range(3)]
        steps = [0, 0, 1]
        makers = []
        if stale:
            makers.append(lambda: ops["AccumulatorSetGlobalStep"](
                handle=acc, new_global_step=m.constant(1, m.int64)))
        for g, s in zip(grads, steps):
            makers.append(lambda g=g, s=s: ops["AccumulatorApplyGradient"](
                handle=acc, local_step=m.constant(s, m.int64), gradient=_const(m, g)))
        makers.append(lambda: ops["AccumulatorNumAccumulated"](handle=acc))
        makers.append(lambda: ops["AccumulatorTakeGradient"](
            handle=acc, num_required=m.constant(num_required, m.int32), dtype=dt))
        makers.append(lambda: ops["AccumulatorNumAccumulated"](handle=acc))
        # After a take the global step moved on: a gradient of local step 0 is stale.
        makers.append(lambda: ops["AccumulatorApplyGradient"](
            handle=acc, local_step=m.constant(0, m.int64), gradient=_const(m, grads[0])))
        makers.append(lambda: ops["AccumulatorNumAccumulated"](handle=acc))
        outs = ordered(m, makers)
        return [o for o in outs if o.__class__.__name__ != "Operation"], {}, []
    return program


for _res, _covers in ((False, ACC_REF), (True, ACC_RES)):
    _op = _covers[0]
    for _dt in ("float16", "float32", "float64"):
        CASES.append(_case(_op, "", _dt, _accumulate(_dt, _res), _covers))
    CASES.append(_case(_op, "sum", "float32", _accumulate("float32", _res, "SUM"), _covers))
    CASES.append(_case(_op, "scalar", "float64", _accumulate("float64", _res, shape=()),
                       _covers))
    CASES.append(_case(_op, "empty", "float32", _accumulate("float32", _res, shape=(0,)),
                       _covers))
    CASES.append(_case(_op, "stale", "float32", _accumulate("float32", _res, stale=True,
                                                            num_required=1), _covers))
    CASES.append(_case(_op, "unknown_shape", "float32",
                       _accumulate("float32", _res, unknown_shape=True), _covers))
    for _dt in ("int32", "int64"):
        CASES.append(_case(_op, "", _dt, _accumulate(_dt, _res), _covers,
                           deviation="TensorFlux accumulates int32/int64 gradients; "
                                     "TensorFlow registers no CPU kernel for them"))


def _acc_bad_shape(resource, fed):
    def program(m):
        ops = _acc_ops(m, resource)
        acc = ops["ConditionalAccumulator"](dtype=m.float32, shape=m.TensorShape([2]),
                                            container="", shared_name="acc",
                                            reduction_type="MEAN")
        if fed:
            p = m.placeholder(m.float32, shape=None)
            a = ops["AccumulatorApplyGradient"](handle=acc, local_step=m.constant(0, m.int64),
                                                gradient=p)
            return [], {p: np.zeros(3, np.float32)}, [a]
        a = ops["AccumulatorApplyGradient"](handle=acc, local_step=m.constant(0, m.int64),
                                            gradient=m.constant([1.0, 2.0, 3.0]))
        return [], {}, [a]
    return program


def _acc_take_zero(resource):
    def program(m):
        ops = _acc_ops(m, resource)
        acc = ops["ConditionalAccumulator"](dtype=m.float32, shape=m.TensorShape([2]),
                                            container="", shared_name="acc",
                                            reduction_type="MEAN")
        t = ops["AccumulatorTakeGradient"](handle=acc, num_required=m.constant(0, m.int32),
                                           dtype=m.float32)
        return [t], {}, []
    return program


def _acc_set_step_back(resource):
    """Setting the global step lower is allowed; a gradient of an older step counts again."""
    def program(m):
        ops = _acc_ops(m, resource)
        acc = ops["ConditionalAccumulator"](dtype=m.float32, shape=m.TensorShape([2]),
                                            container="", shared_name="acc",
                                            reduction_type="SUM")
        outs = ordered(m, [
            lambda: ops["AccumulatorSetGlobalStep"](handle=acc,
                                                    new_global_step=m.constant(5, m.int64)),
            lambda: ops["AccumulatorApplyGradient"](handle=acc, local_step=m.constant(3, m.int64),
                                                    gradient=m.constant([1.0, 2.0])),
            lambda: ops["AccumulatorNumAccumulated"](handle=acc),
            lambda: ops["AccumulatorSetGlobalStep"](handle=acc,
                                                    new_global_step=m.constant(2, m.int64)),
            lambda: ops["AccumulatorApplyGradient"](handle=acc, local_step=m.constant(3, m.int64),
                                                    gradient=m.constant([1.0, 2.0])),
            lambda: ops["AccumulatorNumAccumulated"](handle=acc)])
        return [outs[2], outs[5]], {}, []
    return program


for _res, _covers in ((False, ACC_REF), (True, ACC_RES)):
    CASES.append(_case(_covers[1], "bad_shape", "float32", _acc_bad_shape(_res, False), _covers))
    CASES.append(_case(_covers[1], "bad_shape_fed", "float32", _acc_bad_shape(_res, True),
                       _covers))
    CASES.append(_case(_covers[2], "take_zero", "float32", _acc_take_zero(_res), _covers))
    CASES.append(_case(_covers[4], "step_back", "float32", _acc_set_step_back(_res), _covers))


def _acc_class(m):
    """The ConditionalAccumulator class."""
    acc = m.ConditionalAccumulator(m.float32, shape=[2], shared_name="acc")
    outs = ordered(m, [lambda: acc.apply_grad([1.0, 2.0], local_step=0),
                       lambda: acc.apply_grad([3.0, 6.0], local_step=0),
                       lambda: acc.num_accumulated(),
                       lambda: acc.take_grad(2)])
    return outs[2:], {}, []


CASES.append(_case("ConditionalAccumulator", "class_api", "float32", _acc_class,
                   ACC_REF + ACC_RES))
