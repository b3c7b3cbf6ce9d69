"""tx.layers BatchNormalization / batch_normalization (TF 1.x tf.layers names, arguments and
defaults), computed by FusedBatchNormV3.

    y = gamma * (x - mean) / sqrt(var + epsilon) + beta        per channel (the `axis` dim)

Training (training=True, or a boolean tensor true at run time): mean and var are the batch's
(biased variance in y) and the moving statistics move toward them,
    moving_mean     -= (moving_mean - batch_mean) * (1 - momentum)
    moving_variance -= (moving_variance - batch_variance) * (1 - momentum)
through assign ops added to tx.GraphKeys.UPDATE_OPS (and layer.updates): as in TF 1.x, they run
only when something depends on them, so make the train op depend on them:

    with tx.control_dependencies(tx.get_collection(tx.GraphKeys.UPDATE_OPS)):
        train_op = optimizer.minimize(loss)

batch_variance there is what TF uses: for 4-D inputs (TF's fused path) the Bessel-corrected
(n / (n - 1)) batch variance, for other ranks (TF's non-fused path) the biased one. Inference
(training=False, the default) normalizes with the moving statistics. With a boolean tensor both
forms are built and SelectV2 picks one, and the update uses momentum 1 (no change) when false.

Variables (tx.get_variable under the layer's scope): gamma (ones; absent when scale=False),
beta (zeros; absent when center=False), moving_mean (zeros) and moving_variance (ones), the
moving ones non-trainable. axis: the channel dim: -1 / last (any rank >= 2; inputs are viewed
as [-1, 1, 1, C]) or 1 for 4-D NCHW inputs. epsilon below 1.001e-5 is raised to it (the fused
op's floor, as TF's fused path does).

Synchronized batch normalization (in-graph replication, tx.train.towers): a layer made with
synchronized=True is called once with the list of the towers' inputs (one per device, split
along the batch) and returns the list of outputs. In training the batch statistics are those of
all towers together (tx.nn.sync_moments: each tower reduces its slice on its device, only
per-channel sums cross devices), so the outputs and the moving-statistics update equal those
of this layer on the concatenated batch; inference normalizes each tower with the moving
statistics on its device.

    bn = tx.layers.BatchNormalization(synchronized=True)
    outs = bn([h_tower0, h_tower1, h_tower2, h_tower3], training=True)
"""

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.layers import base
from tensorflux.ops import array_ops
from tensorflux.ops import math_ops
from tensorflux.ops import math_ops2
from tensorflux.ops import nn_impl
from tensorflux.ops import pool_bn_ops
from tensorflux.ops import sync_batch_norm


def _init(name):
    from tensorflux.ops import init_ops  # pylint: disable=g-import-not-at-top
    return init_ops.ones_initializer() if name == "ones" else init_ops.zeros_initializer()


def _check_unsupported(**args):
    for what in sorted(args):
        if args[what] is not None:
            raise NotImplementedError("BatchNormalization: %s is not supported" % what)


class BatchNormalization(base.Layer):
    """Batch normalization layer (Ioffe & Szegedy 2015) over the channel axis."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=None, gamma_initializer=None, moving_mean_initializer=None,
                 moving_variance_initializer=None, beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None,
                 trainable=True, virtual_batch_size=None, adjustment=None, name=None,
                 synchronized=False, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        _check_unsupported(renorm=renorm or None, renorm_clipping=renorm_clipping,
                           virtual_batch_size=virtual_batch_size, adjustment=adjustment)
        del renorm_momentum  # used by renorm only
        self.beta_constraint = beta_constraint
        self.gamma_constraint = gamma_constraint
        self.synchronized = bool(synchronized)
        if isinstance(axis, (list, tuple)):
            if len(axis) != 1:
                raise ValueError("BatchNormalization supports one channel axis, got %r"
                                 % (axis,))
            axis = axis[0]
        self.axis = int(axis)
        self.momentum = float(momentum)
        self.epsilon = max(float(epsilon), 1.001e-5)
        self.center = center
        self.scale = scale
        self.beta_initializer = beta_initializer
        self.gamma_initializer = gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.beta_regularizer = beta_regularizer
        self.gamma_regularizer = gamma_regularizer
        if fused is False:
            raise ValueError("BatchNormalization: only the fused implementation exists here "
                             "(fused=None or True)")
        self.gamma = self.beta = self.moving_mean = self.moving_variance = None
        self._data_format = "NHWC"
        self._channels = None

    def build(self, input_shape):
        rank = input_shape.ndims
        if rank is None or rank < 2:
            raise ValueError("BatchNormalization needs inputs of known rank >= 2, got %s"
                             % input_shape)
        axis = self.axis % rank if -rank <= self.axis < rank else None
        if axis == rank - 1:
            self._data_format = "NHWC"
        elif axis == 1 and rank == 4:
            self._data_format = "NCHW"
        else:
            raise ValueError("BatchNormalization: axis %d of rank-%d inputs is not supported "
                             "(the last axis, or 1 for 4-D NCHW inputs)" % (self.axis, rank))
        channels = input_shape.dims[axis].value
        if channels is None:
            raise ValueError("Axis %d of input tensor should have a defined dimension but the "
                             "layer received an input with shape %s." % (self.axis, input_shape))
        self._channels = channels
        param_dtype = dtypes.float64 if self._dtype == dtypes.float64 else dtypes.float32
        if self.scale:
            self.gamma = self.add_weight("gamma", [channels], param_dtype,
                                         self.gamma_initializer or _init("ones"),
                                         self.gamma_regularizer,
                                         constraint=self.gamma_constraint)
        if self.center:
            self.beta = self.add_weight("beta", [channels], param_dtype,
                                        self.beta_initializer or _init("zeros"),
                                        self.beta_regularizer,
                                        constraint=self.beta_constraint)
        self.moving_mean = self.add_weight("moving_mean", [channels], param_dtype,
                                           self.moving_mean_initializer or _init("zeros"),
                                           trainable=False)
        self.moving_variance = self.add_weight("moving_variance", [channels], param_dtype,
                                               self.moving_variance_initializer or _init("ones"),
                                               trainable=False)
        self.built = True

    def call(self, inputs, training=False, mask=None):  # pylint: disable=arguments-differ
        if mask is not None:
            raise NotImplementedError("BatchNormalization: mask is not supported")
        static = nn_impl.static_bool(training)
        param_dtype = dtypes.float64 if inputs.dtype.base_dtype == dtypes.float64 \
            else dtypes.float32
        c = self._channels
        gamma = self.gamma if self.gamma is not None else np.ones([c], param_dtype.as_numpy_dtype)
        beta = self.beta if self.beta is not None else np.zeros([c], param_dtype.as_numpy_dtype)
        rank = inputs.shape.ndims
        x = inputs if rank == 4 else array_ops.reshape(inputs, np.int32([-1, 1, 1, c]))

        def train():
            y, mean, var = pool_bn_ops.fused_batch_norm(
                x, gamma, beta, epsilon=self.epsilon, data_format=self._data_format,
                is_training=True)
            return y, mean, var

        def infer():
            y, _, _ = pool_bn_ops.fused_batch_norm(
                x, gamma, beta, mean=self.moving_mean, variance=self.moving_variance,
                epsilon=self.epsilon, data_format=self._data_format, is_training=False)
            return y

        if static is False:
            y = infer()
        else:
            y_train, mean, var = train()
            y = y_train if static else math_ops2.where_v2(training, y_train, infer())
            if rank != 4:
                # TF's non-fused path moves toward the biased batch variance.
                n = math_ops.cast(array_ops.size(x), param_dtype) / float(c)
                var = var * ((n - 1.0) / n)
            self._update_moving_statistics(mean, var, training, static, param_dtype)
        if rank != 4:
            dims = inputs.shape.as_list()
            y = array_ops.reshape(y, np.int32([-1] + dims[1:]) if None not in dims[1:]
                                  else array_ops.shape(inputs))
        return y


    def _update_moving_statistics(self, mean, var, training, static, param_dtype):
        """moving -= (moving - batch) * (1 - momentum), through UPDATE_OPS; momentum 1 (no
        change) when a run-time `training` is false."""
        decay = 1.0 - self.momentum
        if static:
            decay = ops.convert_to_tensor(decay, dtype=param_dtype, name="decay")
        else:
            decay = math_ops2.where_v2(training, ops.convert_to_tensor(decay, param_dtype),
                                       ops.convert_to_tensor(0.0, param_dtype), name="decay")
        for variable, value in ((self.moving_mean, mean), (self.moving_variance, var)):
            with ops.name_scope(None, "AssignMovingAvg", [variable, value]):
                delta = (variable.read_value() - value) * decay
                self.add_update(variable.assign_sub(delta, read_value=False))

    # ---------------------------------------------------------------- synchronized
    def __call__(self, inputs, *args, **kwargs):
        if not self.synchronized:
            return super().__call__(inputs, *args, **kwargs)
        if not isinstance(inputs, (list, tuple)) or not inputs:
            raise ValueError("A synchronized BatchNormalization takes the list of the towers' "
                             "inputs, got %r" % (inputs,))
        towers = [ops.convert_to_tensor(x, dtype=self._dtype, name="inputs") for x in inputs]
        if self._dtype is None:
            self._dtype = towers[0].dtype.base_dtype
        for x in towers[1:]:
            if (x.shape.ndims != towers[0].shape.ndims
                    or not x.shape[1:].is_compatible_with(towers[0].shape[1:])):
                raise ValueError("The towers' inputs must differ in dimension 0 only: %s vs %s"
                                 % (x.shape, towers[0].shape))
        return self._call_in_scope(towers[0].shape,
                                   lambda: self._call_towers(towers, *args, **kwargs))

    def _call_towers(self, towers, training=False):
        static = nn_impl.static_bool(training)
        graph = towers[0].graph

        def infer():
            outs = []
            for x in towers:
                with graph.device(x.device):
                    outs.append(self.call(x, training=False))
            return outs

        if static is False:
            return infer()
        rank = towers[0].shape.ndims
        channel = self.axis % rank
        reduce_axes = [d for d in range(rank) if d != channel]
        bshape = [1] * rank
        bshape[channel] = self._channels
        param_dtype = dtypes.float64 if self._dtype == dtypes.float64 else dtypes.float32
        mean, var = sync_batch_norm.sync_moments(towers, reduce_axes, keep_dims=True)

        def param(p):
            if p is None:
                return None
            return math_ops.cast(array_ops.reshape(p, np.int32(bshape)), self._dtype)

        gamma, beta = param(self.gamma), param(self.beta)
        outs = []
        for x in towers:
            with graph.device(x.device):
                outs.append(sync_batch_norm.batch_normalization(x, mean, var, beta, gamma,
                                                                self.epsilon))
        if static is None:
            outs = [math_ops2.where_v2(training, y, y_infer) for y, y_infer in zip(outs, infer())]
        mean = math_ops.cast(array_ops.reshape(mean, np.int32([self._channels])), param_dtype)
        var = math_ops.cast(array_ops.reshape(var, np.int32([self._channels])), param_dtype)
        if rank == 4:
            # The fused layer moves toward the Bessel-corrected variance of its whole batch.
            n = math_ops2.add_n([math_ops.cast(array_ops.size(x), param_dtype)
                                 for x in towers]) / float(self._channels)
            var = var * (n / (n - 1.0))
        self._update_moving_statistics(mean, var, training, static, param_dtype)
        return outs


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=None, gamma_initializer=None,
                        moving_mean_initializer=None, moving_variance_initializer=None,
                        beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                        gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                        fused=None, virtual_batch_size=None, adjustment=None):
    """Functional form of BatchNormalization (tf.layers.batch_normalization); see the module
    doc for the UPDATE_OPS the train op must depend on. The None initializers mean TF's
    defaults (ones for gamma and moving_variance, zeros for beta and moving_mean)."""
    layer = BatchNormalization(axis=axis, momentum=momentum, epsilon=epsilon, center=center,
                               scale=scale, beta_initializer=beta_initializer,
                               gamma_initializer=gamma_initializer,
                               moving_mean_initializer=moving_mean_initializer,
                               moving_variance_initializer=moving_variance_initializer,
                               beta_regularizer=beta_regularizer,
                               gamma_regularizer=gamma_regularizer,
                               beta_constraint=beta_constraint,
                               gamma_constraint=gamma_constraint, renorm=renorm,
                               renorm_clipping=renorm_clipping,
                               renorm_momentum=renorm_momentum, fused=fused,
                               trainable=trainable, virtual_batch_size=virtual_batch_size,
                               adjustment=adjustment, name=name, _reuse=reuse)
    return layer.apply(inputs, training=training)
