"""tx.train.SyncReplicasOptimizer (TF 1.x's tf.train.SyncReplicasOptimizer): synchronous
between-graph data parallelism with gradient accumulators and a token queue.

    opt = tx.train.SyncReplicasOptimizer(tx.train.GradientDescentOptimizer(0.1),
                                         replicas_to_aggregate=2, total_num_replicas=2)
    train_op = opt.minimize(loss, global_step=step)
    hook = opt.make_session_run_hook(is_chief=(task_index == 0), num_tokens=0)
    with tx.train.MonitoredTrainingSession(master, is_chief, hooks=[hook]) as sess: ...

How a step works (as TF's): every replica computes its gradients at its copy of the variables,
applies them to one ConditionalAccumulator per variable (on the variable's ps) with its
local_step, then waits for a token from the sync_token_q queue. The chief's queue runner
(get_chief_queue_runner) takes the mean of replicas_to_aggregate gradients from every
accumulator, applies it with the wrapped optimizer once (global_step += 1), and enqueues
max(total_num_replicas, replicas_to_aggregate) tokens holding the new global step; each replica
sets its local_step to the token it dequeued. A gradient computed at an older step than the
accumulator's is dropped (stale). With num_tokens=0 in make_session_run_hook no replica starts
step k+1 before step k is applied: training is the same as one optimizer applying the mean of
the replicas' gradients once per step. With the default num_tokens (replicas_to_aggregate
tokens at start) replicas may run one step ahead, as in TF; the aggregate then still has
replicas_to_aggregate fresh gradients, not necessarily one per replica.

Dense gradients only (IndexedSlices gradients are not supported here).
"""

from tensorflux.framework import ops
from tensorflux.ops import array_ops
from tensorflux.ops import control_flow_ops
from tensorflux.ops import data_flow_ops
from tensorflux.ops import variables
from tensorflux.training import monitored_session
from tensorflux.training import optimizer
from tensorflux.training import queue_runner
from tensorflux.training import session_run_hook


class SyncReplicasOptimizer(optimizer.Optimizer):
    """Wraps `opt` for synchronous replicas (see the module docstring)."""

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None,
                 variable_averages=None, variables_to_average=None, use_locking=False,
                 name="sync_replicas"):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        if replicas_to_aggregate < 1 or total_num_replicas < 1:
            raise ValueError("replicas_to_aggregate and total_num_replicas must be positive")
        if variable_averages is not None:
            raise NotImplementedError("SyncReplicasOptimizer(variable_averages=...) is not "
                                      "supported")
        del variables_to_average
        super().__init__(use_locking, name)
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._gradients_applied = False
        self._global_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self._accumulator_list = []
        self._local_step = None
        self.local_step_init_op = None
        self.chief_init_op = None
        self.ready_for_local_init_op = None

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's compute_gradients."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The replica's train op: apply the gradients to the accumulators, then take a token
        and set local_step to it. Also builds the chief's sync op (see get_chief_queue_runner)
        and chief_init_op / local_step_init_op. ValueError without gradients or global_step."""
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        graph = global_step.graph
        with graph.as_default():
            # local_step lives on this worker: colocated with an op that the worker's device
            # function places there (a variable would go to a ps).
            with graph.control_dependencies(None):
                local_anchor = control_flow_ops.no_op(name="sync_rep_local_anchor")
                with graph.colocate_with(local_anchor):
                    self._local_step = variables.Variable(
                        0, trainable=False, collections=[ops.GraphKeys.LOCAL_VARIABLES],
                        dtype=global_step.dtype.base_dtype, name="sync_rep_local_step")
            self.local_step_init_op = self._local_step.assign(global_step, read_value=False)
            chief_init_ops = [self.local_step_init_op]
            self.ready_for_local_init_op = monitored_session._uninitialized_mask(
                variables.global_variables(), "report_uninitialized_variables")

            train_ops, aggregated, var_list = [], [], []
            with ops.name_scope(None, self._name):
                for grad, var in grads_and_vars:
                    var_list.append(var)
                    with graph.device(var.device):
                        if grad is None:
                            aggregated.append(None)
                            continue
                        if not isinstance(grad, ops.Tensor):
                            raise TypeError("SyncReplicasOptimizer supports dense gradients "
                                            "only, got %r for %s" % (grad, var.name))
                        accum = data_flow_ops.ConditionalAccumulator(
                            grad.dtype, shape=var.get_shape(),
                            shared_name=var.name + "/grad_accum")
                        train_ops.append(accum.apply_grad(grad, local_step=self._local_step))
                        aggregated.append(accum.take_grad(self._replicas_to_aggregate))
                        self._accumulator_list.append((accum, var.device))

                with graph.device(global_step.device), ops.name_scope(""):
                    update_op = self._opt.apply_gradients(list(zip(aggregated, var_list)),
                                                          global_step)
                with graph.device(global_step.device), ops.name_scope(""):
                    self._sync_token_queue = data_flow_ops.FIFOQueue(
                        -1, global_step.dtype.base_dtype, shapes=[[]], name="sync_token_q",
                        shared_name="sync_token_q")
                with graph.control_dependencies(train_ops):
                    token = self._sync_token_queue.dequeue()
                train_op = self._local_step.assign(token, read_value=False)
                with graph.control_dependencies([update_op]):
                    # A read after the update: the tokens carry the new global step.
                    tokens = array_ops.fill([self._tokens_per_step], global_step.read_value())
                    sync_op = self._sync_token_queue.enqueue_many([tokens])
                self._chief_queue_runner = queue_runner.QueueRunner(self._sync_token_queue,
                                                                    [sync_op])
            for accum, dev in self._accumulator_list:
                with graph.device(dev):
                    chief_init_ops.append(accum.set_global_step(global_step,
                                                                name="SetGlobalStep"))
            self.chief_init_op = control_flow_ops.group(*chief_init_ops)
        self._gradients_applied = True
        return train_op

    def get_chief_queue_runner(self):
        """The QueueRunner of the chief's sync op. ValueError before apply_gradients."""
        if not self._gradients_applied:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._opt.variables()

    def get_init_tokens_op(self, num_tokens=-1):
        """Enqueues num_tokens tokens (-1: replicas_to_aggregate) holding the global step, for
        the chief to run once at start. ValueError when num_tokens is below
        replicas_to_aggregate - total_num_replicas (training could not start)."""
        if not self._gradients_applied:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError("Too few tokens to finish the first step: %d (given) vs %d "
                             "(needed)" % (num_tokens, tokens_needed))
        graph = self._global_step.graph
        with graph.as_default():
            if num_tokens > 0:
                with graph.device(self._global_step.device), ops.name_scope(""):
                    tokens = array_ops.fill([num_tokens], self._global_step.read_value())
                    return self._sync_token_queue.enqueue_many([tokens])
            return control_flow_ops.no_op(name="no_init_tokens")

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """The hook that runs the init ops and, on the chief, the init tokens and the chief's
        queue runner, when a MonitoredSession creates its session."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)


class _SyncReplicasOptimizerHook(session_run_hook.SessionRunHook):
    """Runs the chief's or a worker's init ops after the session is created (TF's hook)."""

    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self):
        if self._sync_optimizer._gradients_applied is False:  # pylint: disable=protected-access
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before "
                             "using the hook.")
        if self._is_chief:
            self._local_init_op = self._sync_optimizer.chief_init_op
            self._q_runner = self._sync_optimizer.get_chief_queue_runner()
            self._init_tokens_op = self._sync_optimizer.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = self._sync_optimizer.local_step_init_op
            self._q_runner = None
            self._init_tokens_op = None

    def after_create_session(self, session, coord):
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)
