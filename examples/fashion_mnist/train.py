"""Trains a CNN (model.cnn_logits) on Fashion-MNIST by synchronous in-graph replication.

    PYTHONPATH=build/python /usr/bin/python3 examples/fashion_mnist/train.py [flags]

Cluster (--cluster):
  local (default)   starts 1 ps + --workers tensorflux-server processes (tx.train.LocalCluster)
                    on free loopback ports and stops them at exit, on Ctrl-C and on errors;
  none              in process: one tower per CPU device (--workers CPU devices);
  grpc://HOST:PORT  a running cluster (its ps and worker tasks are read from the master);
  TF_CONFIG         when set and --cluster is not given, its "cluster" (and "task": the master
                    the client talks to, default worker 0).
Graph: one tower per worker task (tx.train.towers), each reading its own shard of the training
set (model.dataset(num_shards=W, shard_index=i), a pipeline placed on that worker) and computing
cross-entropy + the L2 penalty on the kernels; the towers' gradients are averaged, clipped by
global norm and applied once per step by Adam, whose rate warms up linearly then follows a
cosine decay to 0 at the last step. Variables live on the ps (tx.train.replica_device_setter).
The test set is evaluated after every epoch, sharded over the same towers.

Output (--out, default runs/fashion_mnist/<UTC timestamp>/): model.ckpt-* (every epoch and on
Ctrl-C; running again with the same --out continues from the latest, with the same settings but
--epochs, and so does running again without --out when the newest run there was interrupted: it
has checkpoints but no report.md, and settings.json holds the same settings), TensorBoard
events (loss, accuracy, learning_rate, images_per_second, test_accuracy, the graph), trace.json
(a Chrome trace of one training step), history.json, report.md + report.png (report.py), and
model.pb: the frozen inference graph, input "images" float32 [N, 28, 28, 1] holding pixel values
in [0, 255] as the IDX/PNG files store them (scaled in the graph), output "probabilities"
float32 [N, 10] (softmax), with labels.txt beside it, for `tensorflux predict model.pb --images
FILE`.

stdout: one line per epoch `epoch=N loss=... train_accuracy=... test_accuracy=...
images_per_sec=...`, per-class test accuracy and the confusion matrix, and, last,
`test_accuracy=0.xxxx`. A progress bar per epoch (tqdm) goes to stderr when it is a terminal.
Exit status: 0 done, 2 bad flags, missing/corrupt data, an --out that cannot be written, or a
damaged checkpoint or other settings in --out (one line on stderr), 130 Ctrl-C (after saving a
checkpoint; one line says where and how to continue), 1 other errors (a failed step, e.g. a
dead server: its status on one line; the local servers are stopped in every case).
"""

import argparse
import datetime
import fcntl
import json
import math
import os
import signal
import sys


def _import_tensorflux():
    """tensorflux from the path, else from this checkout's build/python (so `python3
    examples/fashion_mnist/train.py --help` works without PYTHONPATH); one line and exit 2 when
    neither imports (not built, or another Python than the one it was built for)."""
    try:
        import tensorflux  # pylint: disable=import-outside-toplevel
        return tensorflux
    except ImportError as e:
        error = e
    build = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build",
                         "python")
    if os.path.isdir(os.path.join(build, "tensorflux")):
        sys.path.insert(0, os.path.normpath(build))
        try:
            import tensorflux  # pylint: disable=import-outside-toplevel
            return tensorflux
        except ImportError as e:
            error = e
    sys.stderr.write("train.py: error: cannot import tensorflux (%s); build it with `make build` "
                     "and run PYTHONPATH=build/python /usr/bin/python3 %s\n" % (error, sys.argv[0]))
    sys.exit(2)


try:
    tx = _import_tensorflux()
except KeyboardInterrupt:  # Ctrl-C in the second the import takes
    sys.stderr.write("train.py: interrupted before training started; no checkpoint saved\n")
    sys.exit(130)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_setup  # noqa: E402  pylint: disable=wrong-import-position
import idx  # noqa: E402  pylint: disable=wrong-import-position
import model  # noqa: E402  pylint: disable=wrong-import-position
import trainer  # noqa: E402  pylint: disable=wrong-import-position

UsageError = trainer.UsageError


def parse_args(argv):
    class Formatter(argparse.ArgumentDefaultsHelpFormatter,
                    argparse.RawDescriptionHelpFormatter):
        pass
    # A short usage line: a bad flag prints it and the error, not every flag (--help does).
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=Formatter,
        usage="%(prog)s [--epochs N] [--batch-size N] [--cluster local|none|grpc://HOST:PORT] "
              "[--data-dir DIR] [--out DIR] [more flags: --help lists them]")
    p.add_argument("--epochs", type=int, default=6, help="training epochs")
    p.add_argument("--batch-size", type=int, default=64, help="images per worker per step")
    p.add_argument("--cluster", default=None,
                   help="local, none, or grpc://HOST:PORT; unset: TF_CONFIG's cluster when "
                        "that is set, else local")
    p.add_argument("--workers", type=int, default=2,
                   help="worker tasks of the local cluster / CPU towers in process")
    p.add_argument("--data-dir", default=model.DATA_DIR, help="the four IDX .gz files")
    p.add_argument("--out", default=None,
                   help="output directory; unset: the newest run of runs/fashion_mnist/ when it "
                        "was interrupted with the same settings (it continues), else "
                        "runs/fashion_mnist/<UTC timestamp>/")
    p.add_argument("--seed", type=int, default=1, help="graph seed (init, dropout, shuffle)")
    p.add_argument("--learning-rate", type=float, default=2e-3, help="peak Adam rate")
    p.add_argument("--warmup-epochs", type=float, default=0.5,
                   help="linear warm-up, then cosine decay to 0 at the last step")
    p.add_argument("--l2", type=float, default=5e-5, help="L2 scale on the kernels")
    p.add_argument("--clip-norm", type=float, default=5.0, help="global-norm clipping")
    p.add_argument("--max-steps", type=int, default=None,
                   help="stop at this global step (the schedule ends there too)")
    p.add_argument("--eval-examples", type=int, default=model.NUM_TEST,
                   help="test images evaluated (the first N)")
    p.add_argument("--server-bin", default=None,
                   help="tensorflux-server of the local cluster; unset: $TX_BIN_DIR's, else the "
                        "build tree's of the imported tensorflux (build/bin), else PATH's")
    args = p.parse_args(argv)
    for name in ("epochs", "batch_size", "workers", "eval_examples"):
        if getattr(args, name) < 1:
            p.error("--%s must be >= 1" % name.replace("_", "-"))
    if args.cluster not in (None, "local", "none") and not args.cluster.startswith("grpc://"):
        p.error("--cluster must be local, none or grpc://HOST:PORT, got %r" % args.cluster)
    if args.max_steps is not None and args.max_steps < 1:
        p.error("--max-steps must be >= 1")
    if args.eval_examples > model.NUM_TEST:
        p.error("--eval-examples must be <= %d" % model.NUM_TEST)
    for name, positive in (("learning_rate", True), ("clip_norm", True),
                           ("warmup_epochs", False), ("l2", False)):
        value = getattr(args, name)
        if not math.isfinite(value) or value < 0 or (positive and value == 0):
            p.error("--%s must be a finite number %s 0, got %s"
                    % (name.replace("_", "-"), ">" if positive else ">=", value))
    return args


RUNS_DIR = os.path.join("runs", "fashion_mnist")
# The flags a run continued without --out must share with the interrupted one (the cluster and
# the run's length, --max-steps and --eval-examples, may change).
_SETTINGS = ("epochs", "batch_size", "workers", "data_dir", "seed", "learning_rate",
             "warmup_epochs", "l2", "clip_norm")


def default_out(args):
    """(out dir, True when it continues an interrupted run) for a run without --out: the newest
    directory of RUNS_DIR if it has a checkpoint, no report.md and settings.json equal to this
    run's settings and no running train.py holds it; else a new RUNS_DIR/<UTC timestamp>."""
    try:
        newest = max(n for n in os.listdir(RUNS_DIR) if os.path.isdir(os.path.join(RUNS_DIR, n)))
    except (OSError, ValueError):
        newest = None
    if newest is not None:
        d = os.path.abspath(os.path.join(RUNS_DIR, newest))
        try:
            with open(os.path.join(d, "settings.json"), encoding="utf-8") as f:
                same = json.load(f) == settings(args)
        except (OSError, ValueError):
            same = False
        if (same and tx.train.latest_checkpoint(d) is not None
                and not os.path.exists(os.path.join(d, "report.md"))):
            try:
                _lock(d).close()
                return d, True
            except BlockingIOError:  # still training (another terminal): a new directory
                pass
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    return os.path.abspath(os.path.join(RUNS_DIR, stamp)), False


def _lock(out):
    """An open file holding the exclusive lock of run directory `out` (released when it is
    closed or this process ends); BlockingIOError when another process holds it."""
    f = open(os.path.join(out, ".lock"), "a")  # pylint: disable=consider-using-with
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BaseException:
        f.close()
        raise
    return f


def settings(args):
    return {name: getattr(args, name) for name in _SETTINGS}


def check_settings(args):
    """An --out that holds a checkpoint is continued: its settings.json must hold this run's
    settings, except --epochs (a run may be made longer; the schedule follows the new
    length). A UsageError naming the flags that differ otherwise."""
    try:
        with open(os.path.join(args.out, "settings.json"), encoding="utf-8") as f:
            saved = json.load(f)
    except (OSError, ValueError):
        return  # a run of an older train.py, or none
    if tx.train.latest_checkpoint(args.out) is None:
        return
    ours = settings(args)
    differ = ["--%s %s (this run: %s)" % (k.replace("_", "-"), saved[k], ours[k])
              for k in _SETTINGS if k != "epochs" and k in saved and saved[k] != ours[k]]
    if differ:
        raise UsageError("--out %s continues a run trained with other settings: %s; pass the "
                         "same flags to continue it, or another --out"
                         % (args.out, ", ".join(differ)))


def check_data(data_dir):
    """The four IDX files exist, are whole (the gzip streams end with their CRC) and agree with
    their headers (uint8, 28x28 images, as many labels as images, 60000 / 10000 items); a
    UsageError naming the file otherwise. Reads the 55 MB once, a file at a time (about half a
    second; at most one decoded file, 47 MB, held)."""
    try:
        model.require_all_files(data_dir)
        for split, count in (("train", model.NUM_TRAIN), ("test", model.NUM_TEST)):
            images, labels = model.data_files(data_dir, split)
            for path, dims in ((images, [count, 28, 28]), (labels, [count])):
                try:
                    got = list(idx.read_idx(path).shape)
                except (OSError, EOFError) as e:
                    raise UsageError("%s is unreadable: %s" % (path, e)) from None
                except ValueError as e:
                    raise UsageError("%s is corrupt: %s" % (path, e)) from None
                if got != dims:
                    raise UsageError("%s is corrupt: IDX header says type 0x08 %s, expected "
                                     "uint8 (0x08) %s" % (path, got, dims))
    except FileNotFoundError as e:
        raise UsageError(str(e)) from None


def interrupted_message(e, out, out_given):
    """The one line train.py prints on Ctrl-C: where the run stopped, the checkpoint saved, and
    how to continue from it."""
    again = "the same command again%s continues from it" % (
        "" if out_given else " (or any with --out %s)" % out)
    if isinstance(e, trainer.Interrupted):
        if e.path is None:
            return "interrupted before the first training step; no checkpoint saved"
        return "interrupted at step %d of %d and saved %s; %s" % (
            e.step, e.total_steps, e.path, again)
    try:  # outside the training loop: before it, or while the report and model.pb were written
        latest = tx.train.latest_checkpoint(out) if os.path.isdir(out) else None
    except (OSError, ValueError):
        latest = None
    if latest is None:
        return "interrupted before training started; no checkpoint saved"
    return "interrupted; the latest checkpoint is %s; %s" % (latest, again)


def _interrupt(signum, frame):
    # SIGTERM ends the run like Ctrl-C: a checkpoint is saved and the servers are stopped.
    raise KeyboardInterrupt()


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    args.data_dir = os.path.abspath(args.data_dir)  # the servers read the data
    out_given = args.out is not None
    if not out_given:
        args.out, continued = default_out(args)
        if continued:
            print("continuing the interrupted run %s (pass --out for a new one)" % args.out,
                  flush=True)
    args.out = os.path.abspath(args.out)  # and write the checkpoints
    signal.signal(signal.SIGTERM, _interrupt)
    cluster = lock = None
    try:
        check_data(args.data_dir)
        where = "--out %s" % args.out if out_given else (
            "the run directory %s (pass --out DIR to write elsewhere)" % args.out)
        try:
            os.makedirs(args.out, exist_ok=True)
        except OSError as e:
            raise UsageError("cannot create %s: %s" % (where, e.strerror)) from None
        try:
            lock = _lock(args.out)  # held until the run ends
            trainer.check_checkpoint_state(args.out)
            check_settings(args)
            with open(os.path.join(args.out, "settings.json"), "w", encoding="utf-8") as f:
                json.dump(settings(args), f)
        except BlockingIOError:
            raise UsageError("%s is in use by another train.py run" % args.out) from None
        except OSError as e:
            raise UsageError("cannot write to %s: %s" % (where, e.strerror)) from None
        cluster = cluster_setup.resolve(args.cluster, args.workers, args.server_bin, args.out)
        return trainer.run(args, cluster)
    except UsageError as e:
        sys.stderr.write("train.py: error: %s\n" % e)
        return 2
    except cluster_setup.ClusterError as e:
        sys.stderr.write("train.py: error: %s\n" % e)
        return 1
    except tx.errors.DataLossError as e:
        sys.stderr.write("train.py: error: corrupt Fashion-MNIST data: %s\n" % e.message)
        return 2
    except tx.errors.OpError as e:  # e.g. a server of the cluster died: its status, one line
        sys.stderr.write("train.py: error: %s: %s\n" % (type(e).__name__, e.message))
        return 1
    except OSError as e:  # e.g. the disk filled up under --out
        sys.stderr.write("train.py: error: %s\n" % (
            "%s: %s" % (e.filename, e.strerror) if e.filename else e))
        return 1
    except KeyboardInterrupt as e:
        trainer.ignore_interrupts()  # a second Ctrl-C would cut the servers' shutdown short
        sys.stderr.write("train.py: %s\n" % interrupted_message(e, args.out, out_given))
        return 130
    finally:
        if cluster is not None:
            cluster.close()
        if lock is not None:
            lock.close()


if __name__ == "__main__":
    sys.exit(main())
