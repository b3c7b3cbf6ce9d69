"""tx.data.Dataset: input pipelines built as graph ops (TF 1.x's tf.compat.v1.data.Dataset).

A Dataset is a DT_VARIANT tensor in the default graph (made when the Dataset is created) plus
the structure of its elements: `output_types` and `output_shapes` are nests (tuples, dicts)
of DType / TensorShape. Elements are produced in C++ (src/tensorflux/data/) by an iterator
(iterator_ops.py) whose get_next() is an op of the training graph.

Runtime errors (a batch size <= 0, a shard index out of range, elements of different shapes
in one batch) are InvalidArgumentError from the initializer or get_next run, as in TF.
"""

import numpy as np

from tensorflux.data import nest
from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.framework import tensor_shape
from tensorflux.framework import tensor_util
from tensorflux.framework.op_def_library import apply_op

AUTOTUNE = -1


def _int64(value, name):
    return ops.convert_to_tensor(value, dtype=dtypes.int64, name=name)


def _bool(value, name):
    return ops.convert_to_tensor(value, dtype=dtypes.bool, name=name)


class ElementStructure:
    """The element structure of a dataset or iterator: nests of DType / TensorShape."""

    def __init__(self, types, shapes):
        self._types = types
        self._shapes = shapes

    @property
    def output_types(self):
        return self._types

    @property
    def output_shapes(self):
        return self._shapes

    @property
    def output_classes(self):
        return nest.map_structure(lambda _: ops.Tensor, self._types)


class Dataset(ElementStructure):
    """A sequence of elements, each a nest of tensors with `output_types` / `output_shapes`."""

    def __init__(self, variant_tensor, types, shapes):
        super().__init__(types, shapes)
        self._variant_tensor = variant_tensor

    # -------------------------------------------------------------- structure

    @property
    def _flat_types(self):
        return nest.flatten(self._types)

    @property
    def _flat_shapes(self):
        return nest.flatten(self._shapes)

    def _spec_attrs(self):
        return {"output_types": self._flat_types, "output_shapes": self._flat_shapes}

    def _same_spec(self, variant):
        return Dataset(variant, self._types, self._shapes)

    def __repr__(self):
        return "<Dataset shapes: %s, types: %s>" % (self._shapes, self._types)

    # -------------------------------------------------------------- sources

    @staticmethod
    def from_tensors(tensors, name=None):
        """A dataset of one element, `tensors` (a nest of tensor-like values). name (here and
        in the other methods): the name of the dataset's op (default: its type)."""
        with ops.name_scope("TensorDataset"):
            flat = [ops.convert_to_tensor(t, name="component_%d" % i)
                    for i, t in enumerate(nest.flatten(tensors))]
        variant = apply_op("TensorDataset", components=flat,
                           output_shapes=[t.shape for t in flat], name=name)
        return Dataset(variant, nest.pack_sequence_as(tensors, [t.dtype for t in flat]),
                       nest.pack_sequence_as(tensors, [t.shape for t in flat]))

    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """One element per row (dim 0) of `tensors` (a nest of tensors of equal dim 0)."""
        with ops.name_scope("TensorSliceDataset"):
            flat = [ops.convert_to_tensor(t, name="component_%d" % i)
                    for i, t in enumerate(nest.flatten(tensors))]
        rows = None
        for t in flat:
            if t.shape.ndims == 0:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1, got %s"
                                 % t)
            n = t.shape[0].value if t.shape.ndims is not None else None
            if n is not None and rows is not None and n != rows:
                raise ValueError("Dimensions %d and %d are not compatible: all components of "
                                 "from_tensor_slices need the same dim 0" % (rows, n))
            rows = n if n is not None else rows
        shapes = [t.shape[1:] if t.shape.ndims is not None else tensor_shape.TensorShape(None)
                  for t in flat]
        variant = apply_op("TensorSliceDataset", components=flat, output_shapes=shapes,
                           name=name)
        return Dataset(variant, nest.pack_sequence_as(tensors, [t.dtype for t in flat]),
                       nest.pack_sequence_as(tensors, shapes))

    @staticmethod
    def range(*args, output_type=dtypes.int64):
        """range(stop), range(start, stop) or range(start, stop, step), as Python's range."""
        if not 1 <= len(args) <= 3:
            raise ValueError("Invalid arguments to range: %r" % (args,))
        start, stop, step = ((0, args[0], 1) if len(args) == 1 else
                             (args[0], args[1], 1) if len(args) == 2 else args)
        output_type = dtypes.as_dtype(output_type)
        with ops.name_scope("RangeDataset"):
            variant = apply_op("RangeDataset", start=_int64(start, "start"),
                               stop=_int64(stop, "stop"), step=_int64(step, "step"),
                               output_types=[output_type],
                               output_shapes=[tensor_shape.TensorShape([])])
        return Dataset(variant, output_type, tensor_shape.TensorShape([]))

    @staticmethod
    def zip(*args, datasets=None, name=None):
        """Element i is the nest `datasets` (a tuple or dict of Datasets, nested to any depth)
        with each dataset replaced by its element i (ZipDataset); ends when the shortest input
        ends. Dataset.zip((a, (b, c))) yields (x, (y, z)); as TF 2.15, Dataset.zip(a, b) is
        Dataset.zip((a, b))."""
        if not args and datasets is None:
            raise TypeError("Must pass at least one dataset to `zip`.")
        if args and datasets is not None:
            raise TypeError("Both `*args` and `datasets` cannot be set.")
        if len(args) == 1:
            datasets = args[0]
        elif len(args) > 1:
            datasets = args
        flat = nest.flatten(datasets)
        if not nest.is_nested(datasets) or not flat:
            raise TypeError("Dataset.zip needs a non-empty tuple or dict of Datasets, got %r"
                            % (datasets,))
        for d in flat:
            if not isinstance(d, Dataset):
                raise TypeError("Dataset.zip needs Datasets, got %r in %r" % (d, datasets))
        types = nest.pack_sequence_as(datasets, [d.output_types for d in flat])
        shapes = nest.pack_sequence_as(datasets, [d.output_shapes for d in flat])
        variant = apply_op("ZipDataset",
                           input_datasets=[d._variant_tensor for d in flat],  # pylint: disable=protected-access
                           output_types=nest.flatten(types), output_shapes=nest.flatten(shapes),
                           name=name)
        return Dataset(variant, types, shapes)

    # -------------------------------------------------------------- transformations

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None,
              deterministic=None, name=None):
        """Consecutive elements stacked along a new dim 0 of size batch_size (the last batch is
        smaller unless drop_remainder). num_parallel_calls, deterministic: TF may build batches
        in parallel; the batches are the same, in order, here either way."""
        del num_parallel_calls, deterministic  # the same batches (docstring)
        batch_size = _int64(batch_size, "batch_size")
        static = tensor_util.constant_value(batch_size) if drop_remainder is True else None
        dim = int(static) if static is not None else None
        shapes = nest.map_structure(
            lambda s: tensor_shape.TensorShape([dim]).concatenate(s), self._shapes)
        variant = apply_op("BatchDatasetV2", input_dataset=self._variant_tensor,
                           batch_size=batch_size,
                           drop_remainder=_bool(drop_remainder, "drop_remainder"),
                           output_types=self._flat_types, output_shapes=nest.flatten(shapes),
                           name=name)
        return Dataset(variant, self._types, shapes)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False, name=None):
        """Like batch(), padding each component to `padded_shapes` (a nest like the elements;
        None / -1 dims pad to the batch's largest size; default: every unknown dim) with
        `padding_values` (default 0 / b"")."""
        if padded_shapes is None:
            padded_shapes = self._shapes
        flat_padded = _flat_padded_shapes(self._shapes, padded_shapes)
        if padding_values is None:
            flat_values = [np.array(b"" if t == dtypes.string else 0, dtype=t.as_numpy_dtype)
                           for t in self._flat_types]
        else:
            flat_values = nest.flatten(padding_values)
        batch_size = _int64(batch_size, "batch_size")
        static = tensor_util.constant_value(batch_size) if drop_remainder is True else None
        dim = int(static) if static is not None else None
        out_shapes = [tensor_shape.TensorShape([dim]).concatenate(s) for s in flat_padded]
        with ops.name_scope("PaddedBatchDataset"):
            shape_tensors = [_int64([-1 if d is None else d for d in s.as_list()],
                                    "padded_shape_%d" % i)
                             for i, s in enumerate(flat_padded)]
            value_tensors = [ops.convert_to_tensor(v, dtype=t, name="padding_value_%d" % i)
                             for i, (v, t) in enumerate(zip(flat_values, self._flat_types))]
        variant = apply_op("PaddedBatchDatasetV2", input_dataset=self._variant_tensor,
                           batch_size=batch_size, padded_shapes=shape_tensors,
                           padding_values=value_tensors,
                           drop_remainder=_bool(drop_remainder, "drop_remainder"),
                           output_shapes=out_shapes, name=name)
        return Dataset(variant, self._types, nest.pack_sequence_as(self._shapes, out_shapes))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None, name=None):
        """Elements drawn at random from a buffer of buffer_size elements. Seeds follow
        tx.set_random_seed / seed= as random ops do; none at all is nondeterministic."""
        from tensorflux.ops import random_ops  # pylint: disable=g-import-not-at-top
        seed1, seed2 = random_ops.get_seed(seed)
        variant = apply_op("ShuffleDataset", input_dataset=self._variant_tensor,
                           buffer_size=_int64(buffer_size, "buffer_size"),
                           seed=_int64(seed1 or 0, "seed"), seed2=_int64(seed2 or 0, "seed2"),
                           reshuffle_each_iteration=(True if reshuffle_each_iteration is None
                                                     else bool(reshuffle_each_iteration)),
                           name=name, **self._spec_attrs())
        return self._same_spec(variant)

    def repeat(self, count=None, name=None):
        """The dataset `count` times (None or -1: forever)."""
        variant = apply_op("RepeatDataset", input_dataset=self._variant_tensor,
                           count=_int64(-1 if count is None else count, "count"),
                           name=name, **self._spec_attrs())
        return self._same_spec(variant)

    def take(self, count, name=None):
        """The first `count` elements (-1: all)."""
        variant = apply_op("TakeDataset", input_dataset=self._variant_tensor,
                           count=_int64(count, "count"), name=name, **self._spec_attrs())
        return self._same_spec(variant)

    def skip(self, count, name=None):
        """All but the first `count` elements (-1: skip all)."""
        variant = apply_op("SkipDataset", input_dataset=self._variant_tensor,
                           count=_int64(count, "count"), name=name, **self._spec_attrs())
        return self._same_spec(variant)

    def shard(self, num_shards, index, name=None):
        """Every num_shards-th element starting at `index` (0 <= index < num_shards)."""
        variant = apply_op("ShardDataset", input_dataset=self._variant_tensor,
                           num_shards=_int64(num_shards, "num_shards"),
                           index=_int64(index, "index"), name=name, **self._spec_attrs())
        return self._same_spec(variant)

    def prefetch(self, buffer_size, name=None):
        """Elements produced ahead by a background thread (buffer_size elements; AUTOTUNE)."""
        variant = apply_op("PrefetchDataset", input_dataset=self._variant_tensor,
                           buffer_size=_int64(buffer_size, "buffer_size"),
                           name=name, **self._spec_attrs())
        return self._same_spec(variant)

    def cache(self, filename="", name=None):
        """The first complete pass's elements, replayed by later iterators.

        filename '' keeps them in memory; otherwise the first complete pass writes them to
        '<filename>.tfxcache' (renamed into place only when the input ends, so a partial pass
        leaves no cache) and every later iterator, in any session or process, reads that file
        instead of the input. Delete the file to rebuild the cache; a corrupt one raises
        DataLossError."""
        variant = apply_op("CacheDataset", input_dataset=self._variant_tensor,
                           filename=ops.convert_to_tensor(filename, dtype=dtypes.string,
                                                          name="filename"),
                           name=name, **self._spec_attrs())
        return self._same_spec(variant)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """map_func applied to every element (a tuple element is passed as map_func(*element)).

        map_func is traced once into a function of the graph's library and runs in C++ for
        each element; tensors of the graph it uses are captured by value when the dataset op
        runs (at iterator initialization); num_parallel_calls (an int or AUTOTUNE) runs that many calls at once,
        deterministic (default True) keeps the input order."""
        traced = self._trace(map_func, "Dataset_map")
        attrs = dict(f=_func_attr(traced.name), other_arguments=traced.captured_inputs,
                     output_types=traced.output_types, output_shapes=traced.output_shapes)
        if num_parallel_calls is None:
            variant = apply_op("MapDataset", input_dataset=self._variant_tensor, name=name,
                               **attrs)
        else:
            variant = apply_op(
                "ParallelMapDatasetV2", input_dataset=self._variant_tensor,
                num_parallel_calls=_int64(num_parallel_calls, "num_parallel_calls"),
                deterministic=("default" if deterministic is None
                               else "true" if deterministic else "false"), name=name, **attrs)
        structure = traced.output_structure
        return Dataset(variant, nest.pack_sequence_as(structure, traced.output_types),
                       nest.pack_sequence_as(structure, traced.output_shapes))

    def filter(self, predicate, name=None):
        """The elements for which predicate(element) (a bool scalar tensor) is true."""
        traced = self._trace(predicate, "Dataset_filter")
        if (len(traced.output_types) != 1 or traced.output_types[0] != dtypes.bool
                or traced.output_shapes[0].ndims not in (None, 0)):
            raise ValueError("`predicate` return type must be convertible to a scalar boolean "
                             "tensor. Was %s %s." % (traced.output_types, traced.output_shapes))
        variant = apply_op("FilterDataset", input_dataset=self._variant_tensor,
                           other_arguments=traced.captured_inputs,
                           predicate=_func_attr(traced.name), name=name,
                           **self._spec_attrs())
        return self._same_spec(variant)

    def interleave(self, map_func, cycle_length=None, block_length=None,
                   num_parallel_calls=None, deterministic=None, name=None):
        """map_func(element) returns a Dataset; cycle_length (None: AUTOTUNE) of them are read
        round-robin, block_length (None: 1) elements at a time (InterleaveDataset). With num_parallel_calls (an int
        <= cycle_length, or AUTOTUNE = cycle_length) that many threads read them ahead
        (ParallelInterleaveDatasetV4, e.g. one TFRecordDataset per file); deterministic
        (default True) keeps the sequential order, False lets a ready dataset go before one
        that is waiting."""
        if cycle_length is None:
            cycle_length = AUTOTUNE
        if block_length is None:
            block_length = 1
        made = []

        def to_variant(*args):
            ds = map_func(*args)
            if not isinstance(ds, Dataset):
                raise TypeError("`map_func` must return a `Dataset` object, got %r" % (ds,))
            made.append(ds)
            return ds._variant_tensor  # pylint: disable=protected-access
        to_variant.__name__ = getattr(map_func, "__name__", "fn")
        traced = self._trace(to_variant, "Dataset_interleave")
        inner = made[0]
        attrs = dict(input_dataset=self._variant_tensor, other_arguments=traced.captured_inputs,
                     cycle_length=_int64(cycle_length, "cycle_length"),
                     block_length=_int64(block_length, "block_length"),
                     f=_func_attr(traced.name), **inner._spec_attrs())  # pylint: disable=protected-access
        if num_parallel_calls is None:
            variant = apply_op("InterleaveDataset", name=name, **attrs)
        else:
            variant = apply_op(
                "ParallelInterleaveDatasetV4",
                buffer_output_elements=_int64(AUTOTUNE, "buffer_output_elements"),
                prefetch_input_elements=_int64(AUTOTUNE, "prefetch_input_elements"),
                num_parallel_calls=_int64(num_parallel_calls, "num_parallel_calls"),
                deterministic=("default" if deterministic is None
                               else "true" if deterministic else "false"), name=name, **attrs)
        return Dataset(variant, inner.output_types, inner.output_shapes)

    def flat_map(self, map_func, name=None):
        """The elements of map_func(element) (a Dataset) for each element, in order
        (interleave with cycle_length 1)."""
        return self.interleave(map_func, cycle_length=1, block_length=1, name=name)

    def _trace(self, fn, hint):
        from tensorflux.framework import function_trace  # pylint: disable=g-import-not-at-top
        name = getattr(fn, "__name__", "fn")
        return function_trace.trace_function(
            fn, self._types, self._flat_types, self._flat_shapes,
            "%s_%s" % (hint, "lambda" if name == "<lambda>" else name))

    def apply(self, transformation_func):
        """transformation_func(self), which must return a Dataset (e.g.
        tx.data.experimental.ignore_errors())."""
        dataset = transformation_func(self)
        if not isinstance(dataset, Dataset):
            raise TypeError("`transformation_func` must return a tx.data.Dataset, got %r"
                            % (dataset,))
        return dataset

    def _ignore_errors(self, log_warning=False):
        variant = apply_op("IgnoreErrorsDataset", input_dataset=self._variant_tensor,
                           log_warning=bool(log_warning), **self._spec_attrs())
        return self._same_spec(variant)

    def with_options(self, options, name=None):
        """This dataset with tx.data.Options `options` (data/options.py) applied to it and the
        datasets it reads (OptimizeDatasetV2, and MaxIntraOpParallelismDataset for a cap)."""
        from tensorflux.data import options as options_lib  # pylint: disable=g-import-not-at-top
        if not isinstance(options, options_lib.Options):
            raise TypeError("with_options needs a tx.data.Options, got %r" % (options,))
        lists = {}
        optimizations = options._optimizations()  # pylint: disable=protected-access
        with ops.name_scope("OptimizeDataset"):
            for key, names in zip(("enabled", "disabled", "default"), optimizations):
                lists["optimizations_" + key] = ops.convert_to_tensor(
                    names, dtype=dtypes.string, name="optimizations_" + key)
            variant = apply_op("OptimizeDatasetV2", input_dataset=self._variant_tensor,
                               name=name, **lists, **self._spec_attrs())
            cap = options.experimental_threading.max_intra_op_parallelism
            if cap is not None:
                variant = apply_op("MaxIntraOpParallelismDataset", input_dataset=variant,
                                   max_intra_op_parallelism=_int64(cap, "max_intra_op_parallelism"),
                                   **self._spec_attrs())
        return self._same_spec(variant)

    # -------------------------------------------------------------- iterators

    def make_one_shot_iterator(self):
        from tensorflux.data import iterator_ops  # pylint: disable=g-import-not-at-top
        return iterator_ops.make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name=None):
        from tensorflux.data import iterator_ops  # pylint: disable=g-import-not-at-top
        return iterator_ops.make_initializable_iterator(self, shared_name)


def _func_attr(name):
    from tensorflux import attr_value_pb2  # pylint: disable=g-import-not-at-top
    av = attr_value_pb2.AttrValue()
    av.func.name = name
    return av


def _flat_padded_shapes(shapes, padded_shapes):
    """The leaves of padded_shapes, walked in the nest of `shapes` (a shape given as a list,
    like [None, 3], is one leaf), as TensorShapes."""
    leaves = []

    def walk(s, p):
        if not nest.is_nested(s):
            leaves.append(tensor_shape.as_shape(p))
            return
        keys = sorted(s) if isinstance(s, dict) else range(len(s))
        for k in keys:
            walk(s[k], p[k])
    walk(shapes, padded_shapes)
    return leaves
