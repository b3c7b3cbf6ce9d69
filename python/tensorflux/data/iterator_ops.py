"""Iterators over datasets in a graph (TF 1.x's tf.compat.v1.data.Iterator).

An Iterator is a resource (IteratorV2) in the session; `initializer` (MakeIterator) starts a
pass over a dataset and `get_next()` (IteratorGetNext) yields its elements, then raises
tx.errors.OutOfRangeError. make_initializable_iterator(ds): run the initializer before every
epoch. make_one_shot_iterator(ds): no initializer to run; every session initializes it once,
before its first run (the session runs the graph's pending one-shot initializers; TF's
OneShotIterator op does this with a dataset factory function), so its dataset may not depend on
placeholders.
"""

from tensorflux.data import dataset_ops
from tensorflux.data import nest
from tensorflux.framework import ops
from tensorflux.framework.op_def_library import apply_op

# Graph collection of the MakeIterator ops of one-shot iterators (client/session.py runs them).
ONE_SHOT_INITIALIZERS = "_tx_one_shot_iterator_initializers"


def _check_classes(output_classes):
    if output_classes is None:
        return
    for c in nest.flatten(output_classes):
        if c is not ops.Tensor:
            raise NotImplementedError("Iterator: output_classes other than tx.Tensor are not "
                                      "supported, got %r" % (c,))


class Iterator(dataset_ops.ElementStructure):
    """A handle to an iterator resource with a fixed element structure."""

    def __init__(self, iterator_resource, initializer, output_types, output_shapes,
                 output_classes=None):
        _check_classes(output_classes)
        super().__init__(output_types, output_shapes)
        self._iterator_resource = iterator_resource
        self._initializer = initializer

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        """A reinitializable iterator: make_initializer(ds) for any dataset of this
        structure. output_classes: None or tx.Tensor for every component (elements are dense
        tensors here; other classes raise NotImplementedError)."""
        _check_classes(output_classes)
        if output_shapes is None:
            from tensorflux.framework import tensor_shape  # pylint: disable=g-import-not-at-top
            output_shapes = nest.map_structure(lambda _: tensor_shape.TensorShape(None),
                                               output_types)
        handle = apply_op("IteratorV2", shared_name=shared_name or "", container="",
                          output_types=nest.flatten(output_types),
                          output_shapes=nest.flatten(output_shapes), name="Iterator")
        return Iterator(handle, None, output_types, output_shapes)

    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    def make_initializer(self, dataset, name=None):
        """An op that starts this iterator on `dataset` (same structure)."""
        if nest.flatten(dataset.output_types) != nest.flatten(self._types):
            raise TypeError("Expected output types %r but got dataset with output types %r."
                            % (self._types, dataset.output_types))
        for want, got in zip(nest.flatten(self._shapes), nest.flatten(dataset.output_shapes)):
            if not want.is_compatible_with(got):
                raise TypeError("Expected output shapes compatible with %r but got dataset "
                                "with output shapes %r." % (self._shapes, dataset.output_shapes))
        return apply_op("MakeIterator", dataset=dataset._variant_tensor,  # pylint: disable=protected-access
                        iterator=self._iterator_resource, name=name or "MakeIterator")

    def get_next(self, name=None):
        """The next element (a nest like output_types); OutOfRangeError after the last."""
        flat = apply_op("IteratorGetNext", iterator=self._iterator_resource,
                        output_types=nest.flatten(self._types),
                        output_shapes=nest.flatten(self._shapes), name=name or "IteratorGetNext")
        if isinstance(flat, ops.Tensor):
            flat = [flat]
        return nest.pack_sequence_as(self._types, list(flat))


def make_initializable_iterator(dataset, shared_name=None):
    """An iterator over `dataset` whose `initializer` must run before each pass."""
    it = Iterator.from_structure(dataset.output_types, dataset.output_shapes, shared_name)
    it._initializer = it.make_initializer(dataset)  # pylint: disable=protected-access
    return it


def _placeholders_feeding(tensor):
    seen, stack, found = set(), [tensor.op], []
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        if op.type == "Placeholder":
            found.append(op.name)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return found


def make_one_shot_iterator(dataset):
    """An iterator over `dataset` that needs no initializer (initialized once per session)."""
    placeholders = _placeholders_feeding(dataset._variant_tensor)  # pylint: disable=protected-access
    if placeholders:
        raise ValueError("Failed to create a one-shot iterator for a dataset that depends on "
                         "placeholders (%s); use make_initializable_iterator instead."
                         % ", ".join(sorted(placeholders)))
    it = Iterator.from_structure(dataset.output_types, dataset.output_shapes)
    init = it.make_initializer(dataset)
    init.graph.add_to_collection(ONE_SHOT_INITIALIZERS, init)
    return it
