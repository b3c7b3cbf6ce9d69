"""tx.train: training under TF 1.x's tf.train names: optimizers, the global step,
learning-rate schedules, the Saver, and distributed training (ClusterSpec, Server,
LocalCluster: tensorflux-server processes on loopback, replica_device_setter,
SyncReplicasOptimizer, in-graph towers, MonitoredTrainingSession and its hooks, QueueRunner and
Coordinator)."""

from tensorflux.training.learning_rate_decay import cosine_decay  # noqa: F401
from tensorflux.training.learning_rate_decay import cosine_decay_restarts  # noqa: F401
from tensorflux.training.learning_rate_decay import exponential_decay  # noqa: F401
from tensorflux.training.learning_rate_decay import inverse_time_decay  # noqa: F401
from tensorflux.training.learning_rate_decay import linear_warmup  # noqa: F401
from tensorflux.training.learning_rate_decay import natural_exp_decay  # noqa: F401
from tensorflux.training.learning_rate_decay import piecewise_constant  # noqa: F401
from tensorflux.training.learning_rate_decay import polynomial_decay  # noqa: F401
from tensorflux.training.optimizer import Optimizer  # noqa: F401
from tensorflux.training.optimizers import AdagradOptimizer  # noqa: F401
from tensorflux.training.optimizers import AdamOptimizer  # noqa: F401
from tensorflux.training.optimizers import AdamWOptimizer  # noqa: F401
from tensorflux.training.optimizers import GradientDescentOptimizer  # noqa: F401
from tensorflux.training.optimizers import MomentumOptimizer  # noqa: F401
from tensorflux.training.optimizers import RMSPropOptimizer  # noqa: F401
from tensorflux.training.training_util import create_global_step  # noqa: F401
from tensorflux.training.training_util import get_global_step  # noqa: F401
from tensorflux.training.training_util import get_or_create_global_step  # noqa: F401
from tensorflux.training.saver import Saver  # noqa: F401
from tensorflux.framework.graph_io import write_graph  # noqa: F401
from tensorflux.training.saver import get_checkpoint_state  # noqa: F401
from tensorflux.training.saver import latest_checkpoint  # noqa: F401
from tensorflux.training.server_lib import Server  # noqa: F401
from tensorflux.training.local_cluster import LocalCluster  # noqa: F401
from tensorflux.training.local_cluster import LocalClusterError  # noqa: F401
from tensorflux.training.basic_session_run_hooks import CheckpointSaverHook  # noqa: F401,E402
from tensorflux.training.basic_session_run_hooks import CheckpointSaverListener  # noqa: F401,E402
from tensorflux.training.basic_session_run_hooks import FeedFnHook  # noqa: F401,E402
from tensorflux.training.basic_session_run_hooks import FinalOpsHook  # noqa: F401,E402
from tensorflux.training.basic_session_run_hooks import LoggingTensorHook  # noqa: F401,E402
from tensorflux.training.basic_session_run_hooks import NanLossDuringTrainingError  # noqa: F401,E402
from tensorflux.training.basic_session_run_hooks import NanTensorHook  # noqa: F401,E402
from tensorflux.training.basic_session_run_hooks import SecondOrStepTimer  # noqa: F401,E402
from tensorflux.training.basic_session_run_hooks import StepCounterHook  # noqa: F401,E402
from tensorflux.training.basic_session_run_hooks import StopAtStepHook  # noqa: F401,E402
from tensorflux.training.basic_session_run_hooks import SummarySaverHook  # noqa: F401,E402
from tensorflux.training.coordinator import Coordinator  # noqa: F401,E402
from tensorflux.training.device_setter import GreedyLoadBalancingStrategy  # noqa: F401,E402
from tensorflux.training.device_setter import RoundRobinStrategy  # noqa: F401,E402
from tensorflux.training.device_setter import byte_size_load_fn  # noqa: F401,E402
from tensorflux.training.device_setter import replica_device_setter  # noqa: F401,E402
from tensorflux.training.monitored_session import ChiefSessionCreator  # noqa: F401,E402
from tensorflux.training.monitored_session import MonitoredSession  # noqa: F401,E402
from tensorflux.training.monitored_session import MonitoredTrainingSession  # noqa: F401,E402
from tensorflux.training.monitored_session import Scaffold  # noqa: F401,E402
from tensorflux.training.monitored_session import SessionCreator  # noqa: F401,E402
from tensorflux.training.monitored_session import WorkerSessionCreator  # noqa: F401,E402
from tensorflux.training.queue_runner import QueueRunner  # noqa: F401,E402
from tensorflux.training.queue_runner import add_queue_runner  # noqa: F401,E402
from tensorflux.training.queue_runner import start_queue_runners  # noqa: F401,E402
from tensorflux.training.replication import average_gradients  # noqa: F401,E402
from tensorflux.training.replication import towers  # noqa: F401,E402
from tensorflux.training.cluster_spec import ClusterSpec  # noqa: F401,E402
from tensorflux.training.session_run_hook import SessionRunArgs  # noqa: F401,E402
from tensorflux.training.session_run_hook import SessionRunContext  # noqa: F401,E402
from tensorflux.training.session_run_hook import SessionRunHook  # noqa: F401,E402
from tensorflux.training.session_run_hook import SessionRunValues  # noqa: F401,E402
from tensorflux.training.sync_replicas_optimizer import SyncReplicasOptimizer  # noqa: F401,E402
from tensorflux.summary.writer import summary_iterator  # noqa: F401
# tf.train.Example and its parts (TF's protos, byte-compatible).
from tensorflux.example_pb2 import Example, SequenceExample  # noqa: F401,E402
from tensorflux.feature_pb2 import (  # noqa: F401,E402
    BytesList, Feature, FeatureList, FeatureLists, Features, FloatList, Int64List)
