"""tx.data.Options (TF's tf.data.Options, reduced to what this engine implements).

    options = tx.data.Options()
    options.experimental_optimization.map_vectorization.enabled = False   # or = False (TF 1.14)
    options.experimental_threading.max_intra_op_parallelism = 0           # 0: no cap
    ds = ds.with_options(options)

map_vectorization: batch() after a map() whose function is provably elementwise (only exactly
rounded cwise ops, Cast, Identity and small constants on components of one fixed shape; see
src/tensorflux/data/map_vectorization.h) batches the map's input and calls the function once per
batch. The results are bit-identical, so it is on by default (None = the default); TF, whose
general rewrite can change results and speed, leaves its own off by default.

experimental_threading.max_intra_op_parallelism: the kernels run by the pipeline's functions
shard onto at most this many threads of the session's intra-op pool (0: no cap). None means this
engine's default, 1 (TF's is no cap): the pipeline runs beside the training step, which owns that
pool, and on 2 cores sharding a batch's kernels cost more in thread wake-ups than it saved.

with_options() adds an OptimizeDatasetV2 op (and a MaxIntraOpParallelismDataset when a cap is
set): their options reach the datasets they wrap (in TF options apply to the whole pipeline
wherever with_options is called), so call it last, as usual.
"""

# The optimizations this engine applies when an option is None.
DEFAULT_OPTIMIZATIONS = ("map_vectorization",)


class MapVectorizationOptions:
    """tf.data.experimental.MapVectorizationOptions: `enabled` is True, False or None
    (default: on)."""

    def __init__(self):
        self.enabled = None


class OptimizationOptions:
    """tf.data.experimental.OptimizationOptions (map_vectorization only)."""

    def __init__(self):
        self._map_vectorization = MapVectorizationOptions()

    @property
    def map_vectorization(self):
        return self._map_vectorization

    @map_vectorization.setter
    def map_vectorization(self, value):
        # TF 1.14 took a bool here; later versions a MapVectorizationOptions.
        if isinstance(value, MapVectorizationOptions):
            self._map_vectorization = value
        elif value is None or isinstance(value, bool):
            self._map_vectorization = MapVectorizationOptions()
            self._map_vectorization.enabled = value
        else:
            raise TypeError("map_vectorization must be a bool, None or MapVectorizationOptions, "
                            "got %r" % (value,))


class ThreadingOptions:
    """tf.data.experimental.ThreadingOptions (max_intra_op_parallelism only: None, or an int
    >= 0, 0 meaning no cap)."""

    def __init__(self):
        self.max_intra_op_parallelism = None


class Options:
    """tf.data.Options: set on a dataset with Dataset.with_options(options)."""

    def __init__(self):
        self.experimental_optimization = OptimizationOptions()
        self.experimental_threading = ThreadingOptions()

    def _optimizations(self):
        """(enabled, disabled, default) optimization names, OptimizeDatasetV2's inputs."""
        enabled, disabled = [], []
        if self.experimental_optimization.map_vectorization.enabled is True:
            enabled.append("map_vectorization")
        elif self.experimental_optimization.map_vectorization.enabled is False:
            disabled.append("map_vectorization")
        return enabled, disabled, list(DEFAULT_OPTIMIZATIONS)
