"""Distributed training throughput (issue 7): Fashion-MNIST CNN and MLP trained with synchronous
in-graph replication over real tensorflux-server processes on loopback, with 1 and 2 workers,
and the same model in one in-process session, in one run.

Set-up of a distributed step (TF 1.x's multi-tower pattern, tx.train.towers): one client; one
tower per worker task (`/job:worker/task:i`), reading shard i of the training set through its
own tx.data pipeline (an iterator on that worker); variables and Adam's slots on the one ps task
(replica_device_setter); the towers' gradients averaged on the ps and applied once per step.
Batch per worker: 64 (CNN) and 128 (MLP); the in-process figure uses one tower of that batch.

Threads: the machine's cores are split between the workers (`--cores`, default all): each
worker gets cores/workers intra-op threads (OMP_NUM_THREADS for oneDNN, OPENBLAS_NUM_THREADS,
--intra_op_threads for the engine's own pool), the ps one; OMP_WAIT_POLICY=PASSIVE everywhere
(spinning OpenMP threads of three processes fight for the cores otherwise).

Prints images/s (median of --reps timed runs of --steps steps, after --warmup steps), CPU
milliseconds per image over all the processes and per step of each process (client, ps, workers),
and the 2-vs-1-worker ratio; --trace-dir DIR also writes a Chrome trace of one step of each
set-up (DIR/cnn_2w.json, ...). Usage:
    PYTHONPATH=build/python /usr/bin/python3 bench/dist_train_bench.py [--models cnn,mlp]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

# Before the libraries load (they read these once): the in-process session runs here.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "examples", "fashion_mnist"))

import tensorflux as tx  # noqa: E402
import model  # noqa: E402

BATCH = {"cnn": 64, "mlp": 128}


def tower_input(data_dir, batch, num_shards, shard_index):
    """(images, labels) of one tower: its shard, shuffled, repeated, batched."""
    ds = model.dataset(data_dir, "train", batch, num_shards=num_shards, shard_index=shard_index,
                       shuffle_seed=1 + shard_index, repeat=True, drop_remainder=True)
    return tx.data.make_one_shot_iterator(ds).get_next()


def build(model_name, data_dir, worker_devices, ps_device):
    """The training op of one step over len(worker_devices) towers."""
    batch = BATCH[model_name]
    n = len(worker_devices)
    with tx.device(ps_device):
        step = tx.train.get_or_create_global_step()
    opt = tx.train.AdamOptimizer(1e-3, epsilon=1e-8)
    tower_grads = []
    for i in tx.train.towers(worker_devices):
        with tx.device(tx.train.replica_device_setter(ps_tasks=1, ps_device=ps_device,
                                                      worker_device=worker_devices[i])):
            images, labels = tower_input(data_dir, batch, n, i)
            if model_name == "cnn":
                logits = model.cnn_logits(images, training=True, seed=1)
            else:
                logits = model.mlp_logits(images, seed=1)
            loss = tx.losses.sparse_softmax_cross_entropy(labels, logits)
            tower_grads.append(opt.compute_gradients(loss))
    with tx.device(ps_device):
        return opt.apply_gradients(tx.train.average_gradients(tower_grads), global_step=step)


def counters(procs):
    """{name: (user + system CPU seconds, context switches) so far} of this process ("client")
    and of `procs` ({name: pid}), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for name, pid in [("client", os.getpid())] + list(procs.items()):
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        switches = 0
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                    switches += sum(int(line.split()[1]) for line in f
                                    if "ctxt_switches:" in line)
            except FileNotFoundError:  # a thread that just ended
                pass
        out[name] = ((int(fields[11]) + int(fields[12])) / tick, switches)  # utime + stime
    return out


def measure(target, config, model_name, data_dir, worker_devices, ps_device, args, procs=None):
    """(images/s of each timed run, CPU milliseconds per image over all of them and all the
    processes, {process: (CPU ms, context switches) per step}) with `procs` the servers ({name:
    pid}); the CPU and switch figures hold under load, where images/s does not. Threads that
    ended during the runs are not counted (the pools' threads live as long as the servers)."""
    with tx.Graph().as_default():
        train = build(model_name, data_dir, worker_devices, ps_device)
        with tx.Session(target, config=config) as sess:
            sess.run(tx.global_variables_initializer())
            for _ in range(args.warmup):
                sess.run(train)
            rates = []
            before = counters(procs or {})
            for _ in range(args.reps):
                t0 = time.perf_counter()
                for _ in range(args.steps):
                    sess.run(train)
                dt = time.perf_counter() - t0
                rates.append(args.steps * BATCH[model_name] * len(worker_devices) / dt)
            images = args.reps * args.steps * BATCH[model_name] * len(worker_devices)
            steps = args.reps * args.steps
            per_step = {k: (1000 * (cpu - before[k][0]) / steps, (sw - before[k][1]) / steps)
                        for k, (cpu, sw) in counters(procs or {}).items()}
            if args.trace_dir:
                write_trace(sess, train, os.path.join(args.trace_dir, "%s_%s.json" % (
                    model_name, "%dw" % len(worker_devices) if procs else "local")))
            return rates, sum(v[0] for v in per_step.values()) * steps / images, per_step


def write_trace(sess, train, path):
    """Runs one more step with FULL_TRACE and writes its Chrome trace (a lane per device of
    every task; docs/DISTRIBUTED.md) to `path`."""
    meta = tx.RunMetadata()
    sess.run(train, options=tx.RunOptions(trace_level=tx.RunOptions.FULL_TRACE),
             run_metadata=meta)
    with open(path, "w") as f:
        f.write(tx.timeline.Timeline(meta.step_stats).generate_chrome_trace_format())
    print("    trace of one step: " + path)


def distributed(model_name, workers, args, log_dir):
    threads = max(1, args.cores // workers)

    def flags(job, task):
        n = threads if job == "worker" else 1
        return ["--intra_op_threads", str(n), "--inter_op_threads", str(n)]

    def env(job, task):
        n = str(threads if job == "worker" else 1)
        return {"OMP_NUM_THREADS": n, "OPENBLAS_NUM_THREADS": n, "OMP_WAIT_POLICY": "PASSIVE"}

    with tx.train.LocalCluster(num_workers=workers, num_ps=1, log_dir=log_dir,
                               server_args=flags, env=env) as cluster:
        return measure(cluster.target(), None, model_name, args.data_dir,
                       ["/job:worker/task:%d" % i for i in range(workers)], "/job:ps/task:0",
                       args, {"%s%d" % t: cluster.process(*t).pid for t in cluster.tasks()})


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default="cnn,mlp")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--cores", type=int, default=os.cpu_count())
    p.add_argument("--data-dir", default=model.DATA_DIR)
    p.add_argument("--trace-dir", help="write a Chrome trace of one step of each set-up here")
    args = p.parse_args()
    # Missing inputs skip the benchmark (make bench goes on with the others) and say why.
    try:
        model.data_files(args.data_dir, "train")
    except FileNotFoundError as e:
        print("dist_train_bench: SKIPPED: %s" % e)
        return
    if tx.train.LocalCluster.server_binary() is None:
        print("dist_train_bench: SKIPPED: tensorflux-server is not built (make build)")
        return
    print("uptime: " + open("/proc/loadavg").read().strip())
    for name in args.models.split(","):
        with tempfile.TemporaryDirectory(prefix="dist_train_bench") as log_dir:
            local = measure("", tx.ConfigProto(intra_op_parallelism_threads=args.cores,
                                               inter_op_parallelism_threads=args.cores),
                            name, args.data_dir, ["/device:CPU:0"], "/device:CPU:0", args)
            one = distributed(name, 1, args, log_dir)
            two = distributed(name, 2, args, log_dir)
        results = (("in-process", local), ("1 worker", one), ("2 workers", two))
        med = {k: statistics.median(v[0]) for k, v in results}
        for k, (rates, cpu, per_process) in results:
            print("%s %-10s batch %3d/worker: %8.0f images/s (runs: %s), %.3f CPU ms/image" % (
                name.upper(), k, BATCH[name], med[k], ", ".join("%.0f" % r for r in rates), cpu))
            print("    per step: " + ", ".join("%s %.1f CPU ms %.0f switches" % (k, cpu, sw)
                                            for k, (cpu, sw) in per_process.items()))
        print("%s 2 workers / 1 worker: %.2f; 1 worker / in-process: %.2f" % (
            name.upper(), med["2 workers"] / med["1 worker"], med["1 worker"] / med["in-process"]))
    print("uptime: " + open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()
