"""A minimal SparseTensor (TF's tf.SparseTensor fields): indices [N, rank] int64, values [N],
dense_shape [rank] int64. A namedtuple, so Session.run fetches it as a whole and returns a
SparseTensorValue of numpy arrays with the same fields."""

import collections

import numpy as np


class SparseTensorValue(collections.namedtuple("SparseTensorValue",
                                               ["indices", "values", "dense_shape"])):
    """A fetched SparseTensor (numpy arrays)."""
    __slots__ = ()

    def to_dense(self, default_value=0):
        """The dense numpy array (for tests and debugging)."""
        values = np.asarray(self.values)
        out = np.full(tuple(self.dense_shape), default_value,
                      dtype=values.dtype if values.size else object)
        for idx, v in zip(np.asarray(self.indices), values):
            out[tuple(idx)] = v
        return out


class SparseTensor(collections.namedtuple("SparseTensor", ["indices", "values", "dense_shape"])):
    """Sparse tensor of three dense tensors (tf.SparseTensor's fields)."""
    __slots__ = ()
    _fetched_type = SparseTensorValue

    @property
    def dtype(self):
        return self.values.dtype
