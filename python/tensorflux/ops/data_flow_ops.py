"""tx.FIFOQueue and tx.ConditionalAccumulator (TF 1.x's tf.queue.FIFOQueue and
tf.ConditionalAccumulator), over the C++ ops of src/tensorflux/ops/data_flow_ops.cc.

    q = tx.FIFOQueue(capacity=10, dtypes=[tx.float32, tx.int32], shapes=[[2], []])
    enq = q.enqueue([x, label]); batch = q.dequeue_many(4)

A dequeue waits while the queue is empty, an enqueue while it is full; a waiting op ends with
CancelledError when its step is cancelled (RunOptions.timeout_in_ms, Session.close, an error
elsewhere in the step), so nothing waits forever. After q.close(), enqueues fail
(CancelledError) and dequeues drain the queue, then raise OutOfRangeError.

    acc = tx.ConditionalAccumulator(tx.float32, shape=[2], shared_name="w/grad_accum")
    apply = acc.apply_grad(g, local_step=step); avg = acc.take_grad(num_required=3)

apply_grad drops a gradient whose local_step is older than the accumulator's global step;
take_grad waits until num_required gradients arrived, returns their mean (reduction_type
"SUM": their sum), and advances the accumulator's global step by one.
"""

from tensorflux.framework import dtypes as dtypes_lib
from tensorflux.framework import ops
from tensorflux.framework import tensor_shape
from tensorflux.framework.op_def_library import apply_op


def _as_list(values):
    return list(values) if isinstance(values, (list, tuple)) else [values]


class FIFOQueue:
    """A first-in first-out queue of tuples of tensors (see the module docstring)."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        if names is not None:
            raise NotImplementedError("FIFOQueue(names=...) (dict elements) is not supported")
        self._dtypes = [dtypes_lib.as_dtype(d).base_dtype for d in _as_list(dtypes)]
        if shapes is None:
            self._shapes = [tensor_shape.unknown_shape() for _ in self._dtypes]
            shape_attr = []
        else:
            shapes = list(shapes)
            if not shapes or shapes[0] is None or isinstance(shapes[0], int):
                shapes = [shapes]  # one shape, as TF reads [] or [2, 3] (a scalar, a matrix)
            self._shapes = [tensor_shape.as_shape(s) for s in shapes]
            if len(self._shapes) != len(self._dtypes):
                raise ValueError("Queue shapes must have the same length as dtypes")
            for s in self._shapes:
                if not s.is_fully_defined():
                    raise ValueError("Queue shapes must be fully defined: %s" % s)
            shape_attr = self._shapes
        self._queue_ref = apply_op(
            "FIFOQueueV2", component_types=self._dtypes, shapes=shape_attr,
            capacity=-1 if capacity is None else int(capacity),
            shared_name=shared_name or "", name=name)
        self._name = self._queue_ref.op.name

    @property
    def queue_ref(self):
        return self._queue_ref

    @property
    def name(self):
        return self._name

    @property
    def dtypes(self):
        return list(self._dtypes)

    @property
    def shapes(self):
        return list(self._shapes)

    def _check(self, vals, many):
        vals = _as_list(vals)
        if len(vals) != len(self._dtypes):
            raise ValueError("Expected %d components, got %d" % (len(self._dtypes), len(vals)))
        tensors = []
        for i, (v, dt, shape) in enumerate(zip(vals, self._dtypes, self._shapes)):
            t = ops.convert_to_tensor(v, dtype=dt, name="component_%d" % i)
            got = t.shape
            if many and got.ndims is not None:
                if got.ndims < 1:
                    raise ValueError("enqueue_many component %d must have at least one "
                                     "dimension, got %s" % (i, got))
                got = got[1:]
            if not shape.is_compatible_with(got):
                raise ValueError("Shape %s of component %d is incompatible with the queue's %s"
                                 % (got, i, shape))
            tensors.append(t)
        return tensors

    def enqueue(self, vals, name=None):
        """Enqueues one element (a tensor or a list of them, one per component)."""
        with ops.name_scope(name, "%s_enqueue" % self._name):
            return apply_op("QueueEnqueueV2", handle=self._queue_ref,
                            components=self._check(vals, False), name=name)

    def enqueue_many(self, vals, name=None):
        """Enqueues the slices along dim 0 of the components as elements."""
        with ops.name_scope(name, "%s_EnqueueMany" % self._name):
            return apply_op("QueueEnqueueManyV2", handle=self._queue_ref,
                            components=self._check(vals, True), name=name)

    def _unpack(self, out, batch):
        out = _as_list(out)
        for t, shape in zip(out, self._shapes):
            if shape.ndims is not None:
                t.set_shape(tensor_shape.TensorShape([batch]).concatenate(shape)
                            if batch is not False else shape)
        return out[0] if len(out) == 1 else out

    def dequeue(self, name=None):
        """One element: a tensor for a one-component queue, else a list."""
        out = apply_op("QueueDequeueV2", handle=self._queue_ref, component_types=self._dtypes,
                       name=name or "%s_Dequeue" % self._name)
        return self._unpack(out, False)

    def dequeue_many(self, n, name=None):
        """n elements stacked along a new dim 0 (needs the queue's shapes)."""
        out = apply_op("QueueDequeueManyV2", handle=self._queue_ref,
                       n=ops.convert_to_tensor(n, dtype=dtypes_lib.int32),
                       component_types=self._dtypes,
                       name=name or "%s_DequeueMany" % self._name)
        batch = n if isinstance(n, int) else None
        return self._unpack(out, batch)

    def size(self, name=None):
        return apply_op("QueueSizeV2", handle=self._queue_ref, name=name or "%s_Size" % self._name)

    def close(self, cancel_pending_enqueues=False, name=None):
        return apply_op("QueueCloseV2", handle=self._queue_ref,
                        cancel_pending_enqueues=cancel_pending_enqueues,
                        name=name or "%s_Close" % self._name)


class ConditionalAccumulator:
    """Aggregates the gradients of one global step (see the module docstring). Uses TF 1.x's
    ref-handle ops (ConditionalAccumulator, AccumulatorApplyGradient, ...)."""

    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator",
                 reduction_type="MEAN"):
        self._dtype = dtypes_lib.as_dtype(dtype).base_dtype
        self._shape = tensor_shape.as_shape(shape) if shape is not None else (
            tensor_shape.unknown_shape())
        if reduction_type not in ("MEAN", "SUM"):
            raise ValueError("reduction_type must be 'MEAN' or 'SUM', got %r" % (reduction_type,))
        self._accumulator_ref = apply_op(
            "ConditionalAccumulator", dtype=self._dtype, shape=self._shape,
            shared_name=shared_name or "", reduction_type=reduction_type, name=name)
        self._name = self._accumulator_ref.op.name

    @property
    def accumulator_ref(self):
        return self._accumulator_ref

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    def num_accumulated(self, name=None):
        return apply_op("AccumulatorNumAccumulated", handle=self._accumulator_ref,
                        name=name or "%s_NumAccumulated" % self._name)

    def set_global_step(self, new_global_step, name=None):
        return apply_op("AccumulatorSetGlobalStep", handle=self._accumulator_ref,
                        new_global_step=ops.convert_to_tensor(new_global_step,
                                                              dtype=dtypes_lib.int64),
                        name=name or "%s_SetGlobalStep" % self._name)

    def apply_grad(self, grad, local_step=0, name=None):
        """Adds grad unless local_step is older than the global step. ValueError when grad's
        static shape is incompatible with the accumulator's."""
        grad = ops.convert_to_tensor(grad, dtype=self._dtype)
        if not self._shape.is_compatible_with(grad.shape):
            raise ValueError("Shape of grad %s is incompatible with the accumulator's %s"
                             % (grad.shape, self._shape))
        local_step = ops.convert_to_tensor(local_step, dtype=dtypes_lib.int64)
        return apply_op("AccumulatorApplyGradient", handle=self._accumulator_ref,
                        local_step=local_step, gradient=grad, name=name)

    def take_grad(self, num_required, name=None):
        """The mean (or sum) of num_required gradients, once they arrived."""
        out = apply_op("AccumulatorTakeGradient", handle=self._accumulator_ref,
                       num_required=ops.convert_to_tensor(num_required, dtype=dtypes_lib.int32),
                       dtype=self._dtype, name=name)
        out.set_shape(self._shape)
        return out
