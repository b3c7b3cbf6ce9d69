"""Map vectorization (batch after an elementwise map runs the map once per batch;
src/tensorflux/data/map_vectorization.h): every pipeline is drained with the rewrite on (the
default) and off (tx.data.Options) and must give bit-identical batches, equal to numpy's float32
arithmetic; functions that are not elementwise must keep their per-element meaning."""

import numpy as np
import pytest

import tensorflux as tx
from conftest import drain_one_shot


def _off(ds):
    options = tx.data.Options()
    options.experimental_optimization.map_vectorization.enabled = False
    return ds.with_options(options)


def _both(make):
    """Batches of make() with vectorization on (default) and off, each in a fresh graph."""
    out = []
    for wrap in (lambda ds: ds, _off):
        with tx.Graph().as_default():
            out.append(drain_one_shot(wrap(make())))
    return out


def _assert_same(on, off):
    assert len(on) == len(off)
    for a, b in zip(on, off):
        for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
            assert x.dtype == y.dtype and x.shape == y.shape
            assert x.tobytes() == y.tobytes()  # bit for bit


IMAGES = (np.arange(10 * 4 * 3) * 37 % 256).astype(np.uint8).reshape(10, 4, 3)


@pytest.mark.parametrize("drop", [False, True])
@pytest.mark.parametrize("parallel", [None, 2])
def test_normalize_then_batch_is_bit_identical_and_matches_numpy(drop, parallel):
    # Cast, RealDiv by a scalar, Sub of a [3] per-channel constant, Maximum with a scalar;
    # 10 elements in batches of 4: 4, 4 and a partial 2 (dropped with drop_remainder).
    mean = np.array([0.25, 0.5, 0.75], np.float32)

    def make():
        return tx.data.Dataset.from_tensor_slices(IMAGES).map(
            lambda x: tx.maximum(tx.cast(x, tx.float32) / 255.0 - mean, -0.5),
            num_parallel_calls=parallel).batch(4, drop_remainder=drop)
    on, off = _both(make)
    _assert_same(on, off)
    want = np.maximum(IMAGES.astype(np.float32) / np.float32(255.0) - mean, np.float32(-0.5))
    rows = 8 if drop else 10
    assert [b.shape[0] for b in on] == ([4, 4] if drop else [4, 4, 2])
    np.testing.assert_array_equal(np.concatenate(on), want[:rows])


def test_tuple_elements_of_one_shape_and_a_captured_tensor():
    a = np.linspace(-3, 3, 24, dtype=np.float32).reshape(6, 4)
    b = np.linspace(1, 2, 24, dtype=np.float32).reshape(6, 4)

    def make():
        scale = tx.constant(np.array([1.0, 2.0, 3.0, 4.0], np.float32))  # captured, rank 1
        return tx.data.Dataset.from_tensor_slices((a, b)).map(
            lambda x, y: (tx.sqrt(tx.square(x) + y) * scale, tx.less(x, y),
                          tx.where(tx.greater(x, 0.0), x, y))).batch(4)
    on, off = _both(make)
    _assert_same(on, off)
    s = np.array([1, 2, 3, 4], np.float32)
    np.testing.assert_array_equal(np.concatenate([t[0] for t in on]), np.sqrt(a * a + b) * s)
    np.testing.assert_array_equal(np.concatenate([t[1] for t in on]), a < b)
    np.testing.assert_array_equal(np.concatenate([t[2] for t in on]), np.where(a > 0, a, b))


def test_functions_that_are_not_elementwise_keep_their_meaning():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    cases = [
        # A reduction: per element it sums 2 values; run on a batch it would sum the batch.
        (lambda v: tx.reduce_sum(v), [1, 5, 9, 13, 17, 21]),
        # Reads its shape.
        (lambda v: tx.cast(tx.shape(v)[0], tx.float32) + v[0], [2, 4, 6, 8, 10, 12]),
        # An output that does not depend on the element (a batch would lack dim 0).
        (lambda v: (v[0], tx.constant(7.0)), None),
        # A transcendental op (vector and scalar code may round differently).
        (lambda v: tx.exp(v * 0.0), None),
    ]
    for fn, want in cases:
        def make(fn=fn):
            return tx.data.Dataset.from_tensor_slices(x).map(fn).batch(4)
        on, off = _both(make)
        _assert_same(on, off)
        if want is not None:
            np.testing.assert_array_equal(np.concatenate(on), np.array(want, np.float32))
    # (image, label): a [2] and a scalar component are batched raw only when their shapes match.
    labels = np.arange(6, dtype=np.int64)

    def make_pair():
        return tx.data.Dataset.from_tensor_slices((x, labels)).map(
            lambda v, l: (v * 2.0, l + 1)).batch(4)
    on, off = _both(make_pair)
    _assert_same(on, off)
    np.testing.assert_array_equal(np.concatenate([t[1] for t in on]), labels + 1)
    # A constant of a higher rank than the element would broadcast differently on a batch.
    def make_rank():
        return tx.data.Dataset.range(5).map(
            lambda v: v + tx.constant([[1], [2]], tx.int64)).batch(2)
    on, off = _both(make_rank)
    _assert_same(on, off)
    assert on[0].shape == (2, 2, 1)


def test_padded_batch_is_not_rewritten():
    # f(padding) != padding: the map must run before padding.
    def make():
        return tx.data.Dataset.range(1, 4).map(lambda n: tx.range(n) + 10).map(
            lambda v: v * 2).padded_batch(3, [None])
    on, off = _both(make)
    _assert_same(on, off)
    np.testing.assert_array_equal(on[0], [[20, 0, 0], [20, 22, 0], [20, 22, 24]])


def test_error_in_the_function_names_the_node():
    # Integer FloorMod by a zero element: the same error with and without the rewrite.
    def make():
        return tx.data.Dataset.from_tensor_slices(np.array([3, 0, 2], np.int32)).map(
            lambda v: tx.floormod(tx.constant(7, tx.int32), v, name="mod_by_element")).batch(3)
    for wrap in (lambda ds: ds, _off):
        with tx.Graph().as_default():
            with pytest.raises(tx.errors.InvalidArgumentError, match="mod_by_element"):
                drain_one_shot(wrap(make()))


def test_options_api():
    options = tx.data.Options()
    assert options.experimental_optimization.map_vectorization.enabled is None
    options.experimental_optimization.map_vectorization = True  # TF 1.14's bool form
    assert options.experimental_optimization.map_vectorization.enabled is True
    with pytest.raises(TypeError):
        options.experimental_optimization.map_vectorization = "yes"
    with tx.Graph().as_default():
        ds = tx.data.Dataset.range(3)
        with pytest.raises(TypeError, match="tx.data.Options"):
            ds.with_options({"map_vectorization": False})
        on = ds.map(lambda v: v * 3).batch(2).with_options(options)
        assert on.output_types == tx.int64 and on.output_shapes.as_list() == [None]
        assert [b.tolist() for b in drain_one_shot(on)] == [[0, 3], [6]]
    # The intra-op cap: any int >= 0 gives the same elements; a negative one is refused.
    for cap, ok in [(0, True), (2, True), (-1, False)]:
        threading = tx.data.Options()
        threading.experimental_threading.max_intra_op_parallelism = cap
        with tx.Graph().as_default():
            ds = (tx.data.Dataset.from_tensor_slices(np.arange(70000, dtype=np.int32))
                  .map(lambda v: tx.cast(v, tx.float32) * 2.0).batch(35000)
                  .with_options(threading))
            if ok:
                got = np.concatenate(drain_one_shot(ds))
                np.testing.assert_array_equal(got, np.arange(70000, dtype=np.float32) * 2)
            else:
                with pytest.raises(tx.errors.InvalidArgumentError,
                                   match="max_intra_op_parallelism"):
                    drain_one_shot(ds)
