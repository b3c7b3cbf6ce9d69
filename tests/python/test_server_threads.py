"""tensorflux-server's thread flags (docs/DISTRIBUTED.md, "Threads of a task"): a ps with
--inter_op_threads -1 (TF's negative inter_op_parallelism_threads: no pool, every op on the
thread that makes it ready, the RPC thread of a received gradient included) and workers with one
thread each train the same values as numpy."""

import numpy as np
import pytest

import tensorflux as tx

pytestmark = pytest.mark.skipif(tx.train.LocalCluster.server_binary() is None,
                                reason="tensorflux-server is not built")


def test_inline_ps_and_single_thread_workers_train_like_numpy(tmp_path):
    def flags(job, task):
        if job == "ps":
            return ["--inter_op_threads", "-1", "--intra_op_threads", "1"]
        return ["--inter_op_threads", "1", "--intra_op_threads", "1"]

    rng = np.random.RandomState(5)
    xs, ys, w0 = rng.randn(2, 8, 3), rng.randn(2, 8, 1), rng.randn(3, 1)
    lr, steps = 0.1, 4
    with tx.train.LocalCluster(num_workers=2, num_ps=1, log_dir=str(tmp_path),
                               server_args=flags) as cluster:
        with tx.Graph().as_default():
            with tx.device("/job:ps/task:0"):
                w = tx.Variable(w0, name="w")
            opt = tx.train.GradientDescentOptimizer(lr)
            grads = []
            for i in range(2):
                with tx.device("/job:worker/task:%d" % i):
                    loss = tx.reduce_mean(tx.square(tx.matmul(tx.constant(xs[i]), w) - ys[i]))
                    grads.append(opt.compute_gradients(loss, var_list=[w]))
            with tx.device("/job:ps/task:0"):
                train = opt.apply_gradients(tx.train.average_gradients(grads))
            with tx.Session(cluster.target("worker", 0)) as sess:
                sess.run(tx.global_variables_initializer())
                for _ in range(steps):
                    sess.run(train)
                got = sess.run(w)
    want = w0.copy()
    for _ in range(steps):
        g = [2 * xs[i].T @ (xs[i] @ want - ys[i]) / 8 for i in range(2)]
        want = want - lr * np.mean(g, axis=0)
    np.testing.assert_allclose(got, want, rtol=1e-12)
