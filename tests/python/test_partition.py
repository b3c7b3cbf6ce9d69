"""One graph split over several logical CPU devices (tx.ConfigProto(device_count={"CPU": 4})):
an MLP and a CNN training step give bitwise the same losses and variables as on one device,
the run is really partitioned (RunMetadata.partition_graphs with _Send/_Recv), and an error on
one device fails the step with that error while another device waits for its output."""

import ctypes
import itertools
import os

import numpy as np
import pytest

import tensorflux as tx

DEVICES = ["/job:localhost/replica:0/task:0/device:CPU:%d" % i for i in range(4)]
RNG = np.random.default_rng(11)


def round_robin():
    """A device function that puts each new op on the next of the four devices, and a variable
    on the device of its layer (layers take the devices in turn). An op that takes a variable's
    handle runs with the variable whatever it asks for (the Placer keeps a variable's request
    over its readers', TF's rule for resource edges); optimizer slots are colocated with it."""
    counter = itertools.count()
    layer_device = {}

    def device(op):
        if op.type == "VarHandleOp":
            layer = op.name.split("/")[0]
            return layer_device.setdefault(layer, DEVICES[len(layer_device) % len(DEVICES)])
        return DEVICES[next(counter) % len(DEVICES)]
    return device


def mlp(x, y):
    h = tx.layers.dense(x, 32, activation=tx.nn.relu)
    h = tx.layers.dense(h, 16, activation=tx.nn.tanh)
    logits = tx.layers.dense(h, 5)
    loss = tx.losses.sparse_softmax_cross_entropy(y, logits)
    return loss, tx.train.MomentumOptimizer(0.05, 0.9).minimize(loss)


def cnn(x, y):
    h = tx.layers.conv2d(x, 6, 3, padding="same", activation=tx.nn.relu)
    h = tx.layers.max_pooling2d(h, 2, 2)
    h = tx.layers.conv2d(h, 8, 3, activation=tx.nn.relu)
    logits = tx.layers.dense(tx.reshape(h, [-1, 3 * 3 * 8]), 5)
    loss = tx.losses.sparse_softmax_cross_entropy(y, logits)
    return loss, tx.train.AdamOptimizer(0.01).minimize(loss)


def train(model, x_shape, num_devices, steps=3):
    """Losses of `steps` training steps and the final variables, plus the partition graphs of
    the last step."""
    xs = RNG.standard_normal((steps,) + x_shape).astype(np.float32)
    ys = RNG.integers(0, 5, (steps, x_shape[0])).astype(np.int32)
    g = tx.Graph()
    with g.as_default():
        tx.set_random_seed(7)
        with g.device(round_robin() if num_devices > 1 else None):
            x = tx.placeholder(tx.float32, x_shape)
            y = tx.placeholder(tx.int32, [x_shape[0]])
            loss, step = model(x, y)
            init = tx.global_variables_initializer()
        variables = tx.global_variables()
    config = tx.ConfigProto(device_count={"CPU": num_devices})
    losses = []
    metadata = tx.RunMetadata()
    with tx.Session(graph=g, config=config) as sess:
        sess.run(init)
        for i in range(steps):
            options = tx.RunOptions(output_partition_graphs=True)
            losses.append(sess.run([loss, step], {x: xs[i], y: ys[i]}, options=options,
                                   run_metadata=metadata)[0])
        values = sess.run(variables)
    return losses, values, list(metadata.partition_graphs)


def assert_bitwise_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes(), np.max(np.abs(a.astype(np.float64) - b))


@pytest.mark.parametrize("model,x_shape", [(mlp, (16, 20)), (cnn, (4, 10, 10, 1))],
                         ids=["mlp", "cnn"])
def test_training_step_same_bits_on_four_devices(model, x_shape):
    state = RNG.bit_generator.state
    losses1, values1, parts1 = train(model, x_shape, 1)
    RNG.bit_generator.state = state  # same data for both runs
    losses4, values4, parts4 = train(model, x_shape, 4)
    assert len(parts1) == 1
    assert len(parts4) == 4
    sends = sum(n.op == "_Send" for p in parts4 for n in p.node)
    recvs = sum(n.op == "_Recv" for p in parts4 for n in p.node)
    assert sends == recvs and sends > 20
    for p in parts4:
        assert len({n.device for n in p.node}) == 1
    assert np.isfinite(losses1).all() and losses1[0] != losses1[-1]
    for a, b in zip(losses1, losses4):
        assert_bitwise_equal(a, b)
    assert len(values1) == len(values4) > 0
    for a, b in zip(values1, values4):
        assert_bitwise_equal(a, b)


def _libgomp_mapped():
    with open("/proc/self/maps") as maps:
        return any(os.path.basename(line.split()[-1]).startswith("libgomp.so") for line in maps
                   if line.split())


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: every OpenMP team has 1 thread")
def test_calling_threads_openmp_setting_changes_no_bits():
    """A session whose only device is a CPU runs its steps on the calling thread. That thread's
    own OpenMP setting (importing PyTorch sets it to torch's default, 1 on 2 vCPUs) does not
    change the team size oneDNN computes with, the session's intra-op thread count, so a CNN step
    gives the bits of a session that runs its steps on pool threads (four devices); before
    ScopedOpenMpThreads the convolutions ran on one thread and the third loss differed."""
    if not _libgomp_mapped():
        pytest.skip("built without OpenMP")
    gomp = ctypes.CDLL("libgomp.so.1")  # the instance the library uses: it is mapped already
    state = RNG.bit_generator.state
    saved = gomp.omp_get_max_threads()
    gomp.omp_set_num_threads(1)
    try:
        losses1, values1, _ = train(cnn, (4, 10, 10, 1), 1)
        assert gomp.omp_get_max_threads() == 1  # the thread's setting is restored after each call
    finally:
        gomp.omp_set_num_threads(saved)
    RNG.bit_generator.state = state
    losses4, values4, _ = train(cnn, (4, 10, 10, 1), 4)
    for a, b in zip(losses1 + values1, losses4 + values4):
        assert_bitwise_equal(a, b)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: every OpenMP team has 1 thread")
def test_one_intra_op_thread_is_one_openmp_thread_whatever_the_callers_setting():
    """intra_op_parallelism_threads=1 gives the CPU device no intra-op pool; oneDNN's team then
    has 1 thread, not the calling thread's own OpenMP count (all cores by default), so the
    convolution gradients have the same bits on threads set to 1 and to 2 OpenMP threads."""
    if not _libgomp_mapped():
        pytest.skip("built without OpenMP")
    gomp = ctypes.CDLL("libgomp.so.1")
    rng = np.random.default_rng(0)
    xv = rng.standard_normal((16, 14, 14, 32)).astype(np.float32)
    wv = (rng.standard_normal((3, 3, 32, 64)) * 0.1).astype(np.float32)
    g = tx.Graph()
    with g.as_default():
        x = tx.placeholder(tx.float32, xv.shape)
        w = tx.placeholder(tx.float32, wv.shape)
        y = tx.nn.relu(tx.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"))
        grads = tx.gradients(tx.reduce_sum(y * y), [x, w])
    saved = gomp.omp_get_max_threads()
    results = []
    try:
        for threads in (1, 2):
            gomp.omp_set_num_threads(threads)
            config = tx.ConfigProto(intra_op_parallelism_threads=1)
            with tx.Session(graph=g, config=config) as sess:
                results.append(sess.run(grads, {x: xv, w: wv}))
            assert gomp.omp_get_max_threads() == threads
    finally:
        gomp.omp_set_num_threads(saved)
    for a, b in zip(*results):
        assert_bitwise_equal(a, b)


def test_error_on_one_device_fails_the_step(graph):
    with tx.device(DEVICES[1]):
        x = tx.placeholder(tx.float32, [3])
        bad = tx.check_numerics(x, "bad input")
    with tx.device(DEVICES[0]):
        y = bad * 2.0 + tx.constant(1.0)
    with tx.Session(config=tx.ConfigProto(device_count={"CPU": 2})) as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0, 3.0]}), [3.0, 5.0, 7.0])
        with pytest.raises(tx.errors.InvalidArgumentError, match="bad input"):
            sess.run(y, {x: [1.0, np.nan, 3.0]})
        np.testing.assert_array_equal(sess.run(y, {x: [0.0, 0.0, 1.0]}), [1.0, 1.0, 3.0])
