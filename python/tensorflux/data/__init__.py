"""tx.data: input pipelines (TF 1.x's tf.compat.v1.data).

    ds = tx.data.Dataset.from_tensor_slices((images, labels)).shuffle(1000, seed=1).batch(32)
    it = tx.data.make_initializable_iterator(ds)
    x, y = it.get_next()
    with tx.Session() as sess:
        sess.run(it.initializer)
        while True:
            try:
                sess.run([x, y])
            except tx.errors.OutOfRangeError:
                break
"""

from tensorflux.data import experimental
from tensorflux.data.dataset_ops import AUTOTUNE, Dataset
from tensorflux.data.iterator_ops import (
    Iterator, make_initializable_iterator, make_one_shot_iterator)
from tensorflux.data.options import Options
from tensorflux.data.readers import TextLineDataset, TFRecordDataset

DatasetV1 = Dataset
