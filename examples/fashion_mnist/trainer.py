"""train.py's graph and loop: towers of model.cnn_logits on a Cluster (cluster_setup.py), the
training epochs with progress and summaries, checkpoints, evaluation, and the frozen model.pb.

Steps: every tower reads batch_size images of its own shard per step (drop_remainder, so all
towers take the same number of steps: an epoch is floor(smallest shard / batch_size) steps and
the towers' iterators are re-initialized, reshuffled, at each epoch). A run resumed from a
checkpoint taken inside an epoch does that epoch's remaining steps on a fresh shuffle; the
interrupted run left its part of the epoch in history.json (an entry with "partial": true), so
the epoch's line and report row cover the steps of both runs; one interrupted during an epoch's
evaluation left the epoch's steps done and its entry partial, and the resumed run evaluates it
first. history.json has one entry per epoch whatever was interrupted.
"""

import json
import math
import os
import signal
import sys
import time

import numpy as np

from google.protobuf import text_format

import tensorflux as tx
from tensorflux.checkpoint_state_pb2 import CheckpointState

import model
import report

TRACE_STEP = 5  # the step (of this run) traced into trace.json
SUMMARY_EVERY = 20  # steps between TensorBoard scalars (and the last step of each epoch)


def shard_sizes(n, shards):
    return [len(range(i, n, shards)) for i in range(shards)]


def eval_batch_size(n, shards, target=500):
    """A batch size near `target` that gives every shard of n examples the same number of
    batches (so the towers end together)."""
    sizes = shard_sizes(n, shards)
    b = min(target, max(sizes))
    while len({math.ceil(s / b) for s in sizes}) > 1:
        b += 1
    return b


class Graph:
    """The training and evaluation graph (built in the default graph)."""

    def __init__(self, args, cluster, steps_per_epoch, total_steps):
        towers = len(cluster.tower_devices)
        tx.set_random_seed(args.seed)
        with tx.device(cluster.shared_device):
            self.global_step = tx.train.get_or_create_global_step()
            warmup = min(int(round(args.warmup_epochs * steps_per_epoch)), total_steps // 2)
            decay = max(1, total_steps - warmup)
            self.learning_rate = tx.train.linear_warmup(
                lambda s: tx.train.cosine_decay(args.learning_rate, s, decay), warmup,
                self.global_step)
            opt = tx.train.AdamOptimizer(self.learning_rate)
        tower_grads, losses, correct, self.train_iterators = [], [], [], []
        for i in tx.train.towers(cluster.tower_devices):
            it = tx.data.make_initializable_iterator(model.dataset(
                args.data_dir, "train", args.batch_size, num_shards=towers, shard_index=i,
                shuffle_seed=args.seed + i, drop_remainder=True))
            self.train_iterators.append(it)
            images, labels = it.get_next()
            logits = model.cnn_logits(images, training=True, l2_scale=args.l2)
            loss = (tx.losses.sparse_softmax_cross_entropy(labels, logits)
                    + tx.losses.get_regularization_loss())
            losses.append(loss)
            correct.append(_num_correct(logits, labels))
            tower_grads.append(opt.compute_gradients(loss))
        with tx.device(cluster.shared_device), tx.name_scope("update"):
            grads, variables = zip(*tx.train.average_gradients(tower_grads))
            clipped, self.grad_norm = tx.clip_by_global_norm(list(grads), args.clip_norm)
            self.train_op = opt.apply_gradients(zip(clipped, variables),
                                                global_step=self.global_step)
            self.loss = tx.add_n(losses) * (1.0 / towers)
            self.correct = tx.add_n(correct)

        preds, labels_out, self.eval_iterators = [], [], []
        eval_bs = eval_batch_size(args.eval_examples, towers)
        self.eval_steps = math.ceil(shard_sizes(args.eval_examples, towers)[0] / eval_bs)
        with tx.variable_scope(tx.get_variable_scope(), reuse=True):
            for i in tx.train.towers(cluster.tower_devices, name="eval"):
                it = tx.data.make_initializable_iterator(model.dataset(
                    args.data_dir, "test", eval_bs, num_shards=towers, shard_index=i,
                    take=args.eval_examples))
                self.eval_iterators.append(it)
                images, labels = it.get_next()
                logits = model.cnn_logits(images, training=False)
                preds.append(tx.argmax(logits, 1, output_type=tx.int32))
                labels_out.append(labels)
        self.eval_fetch = (preds, labels_out)
        self.saver = tx.train.Saver(max_to_keep=3)
        self.init = tx.global_variables_initializer()


def _num_correct(logits, labels):
    hit = tx.equal(tx.argmax(logits, 1, output_type=tx.int32), labels)
    return tx.reduce_sum(tx.cast(hit, tx.int32))


class Progress:
    """A tqdm bar per epoch on stderr when it is a terminal (no bar otherwise, or without
    tqdm)."""

    def __init__(self, total, epoch, epochs):
        self._bar = None
        try:
            import tqdm  # pylint: disable=g-import-not-at-top
            self._bar = tqdm.tqdm(total=total, desc="epoch %d/%d" % (epoch, epochs),
                                  unit="step", file=sys.stderr, disable=None, leave=False,
                                  dynamic_ncols=True)
        except ImportError:
            pass

    def update(self, **postfix):
        if self._bar is not None:
            self._bar.set_postfix(postfix, refresh=False)
            self._bar.update(1)

    def close(self):
        if self._bar is not None:
            self._bar.close()


def evaluate(sess, g):
    """(labels, predictions) of the evaluated test examples, int32 arrays (shard order)."""
    sess.run([it.initializer for it in g.eval_iterators])
    preds, labels = [], []
    for _ in range(g.eval_steps):
        p, l = sess.run(g.eval_fetch)
        preds.extend(p)
        labels.extend(l)
    return np.concatenate(labels), np.concatenate(preds)


# A checkpoint state file names a few checkpoints in a few hundred bytes; a larger one is damaged.
MAX_STATE_FILE_BYTES = 1 << 20


def check_checkpoint_state(out):
    """A UsageError naming out/checkpoint when something is there that is not a readable state
    file naming a checkpoint: not a regular file (a directory, FIFO or device), unreadable,
    over MAX_STATE_FILE_BYTES, not protobuf text, or without model_checkpoint_path. TF's
    latest_checkpoint ignores a file that does not parse (with a warning), so the run would
    train again from step 0 and write its state file and checkpoints over what is there; one
    without model_checkpoint_path is a DataLossError from get_checkpoint_state. A state file
    that names a checkpoint which no longer exists is not an error: the run starts again at
    step 0 (a removed checkpoint, test_a_damaged_or_removed_checkpoint)."""
    state_file = os.path.join(out, "checkpoint")
    if not os.path.lexists(state_file):
        return
    why = None
    if not os.path.isfile(state_file):
        why = "not a regular file"
    else:
        try:
            with open(state_file, "rb") as f:
                data = f.read(MAX_STATE_FILE_BYTES + 1)
        except OSError as e:
            raise UsageError("cannot read %s: %s" % (state_file, e.strerror)) from None
        if len(data) > MAX_STATE_FILE_BYTES:
            why = "over %d bytes" % MAX_STATE_FILE_BYTES
        else:
            state = CheckpointState()
            try:
                text_format.Parse(data.decode("utf-8"), state)
                if not state.model_checkpoint_path:
                    why = "no model_checkpoint_path"
            except (text_format.ParseError, UnicodeDecodeError) as e:
                why = str(e)
    if why is not None:
        raise UsageError("%s is damaged (%s); remove it to train again from step 0, or pass "
                         "another --out" % (state_file, ascii(why)[1:-1]))


def _restore_or_init(sess, g, out):
    """Restores the latest checkpoint of `out` (its state file checked by train.py's
    check_checkpoint_state before the run) or runs the initializers; the checkpoint's path or
    None."""
    ckpt = tx.train.latest_checkpoint(out)
    if ckpt is None:
        sess.run(g.init)
        return None
    try:
        g.saver.restore(sess, ckpt)
    except tx.errors.OpError as e:  # a cut or damaged checkpoint file
        raise UsageError("cannot resume from %s: %s (remove the checkpoints of %s, or pass "
                         "another --out)" % (ckpt, e.message, out)) from None
    # Keep managing (max_to_keep) the checkpoints of the earlier runs, as TF's Saver recovers.
    g.saver.set_last_checkpoints(tx.train.get_checkpoint_state(out).all_model_checkpoint_paths)
    return ckpt


def _load_history(out):
    """The entries of out/history.json ([] when there is none); a UsageError naming it when it
    is not a list of epoch entries (e.g. edited by hand)."""
    path = os.path.join(out, "history.json")
    if not os.path.exists(path):
        return []
    try:
        with open(path, encoding="utf-8") as f:
            history = json.load(f)
        if not isinstance(history, list) or not all(
                isinstance(h, dict) and {"epoch", "step", "step_losses"} <= h.keys()
                for h in history):
            raise ValueError("not a list of epoch entries")
    except ValueError as e:
        raise UsageError("%s is damaged (%s): remove it (report.md will list only the epochs "
                         "trained from now on) or pass another --out" % (path, e)) from None
    return history


def _write_atomically(path, text):
    """`text` to `path` through `path`.tmp + rename: a Ctrl-C mid-write leaves the old file or
    none, never a cut one (a resumed run would trust it)."""
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def _save_history(out, history):
    _write_atomically(os.path.join(out, "history.json"), json.dumps(history))


def _write_trace(sess, g, writer, out, step):
    """Runs one training step under FULL_TRACE; trace.json (Chrome trace) + the run metadata
    in the event file. Returns the step's fetches."""
    meta = tx.RunMetadata()
    result = sess.run([g.train_op, g.loss, g.correct, g.learning_rate],
                      options=tx.RunOptions(trace_level=tx.RunOptions.FULL_TRACE),
                      run_metadata=meta)
    _write_atomically(os.path.join(out, "trace.json"),
                      tx.timeline.Timeline(meta.step_stats).generate_chrome_trace_format())
    writer.add_run_metadata(meta, "step_%d" % step, global_step=step)
    return result


class UsageError(Exception):
    """Flags that do not fit the data or the cluster, missing or corrupt data: train.py prints
    one line and exits with status 2."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during run()'s training, after the checkpoint of global step `step`
    (of `total_steps`) was saved at `path` (None: before the first step, nothing saved)."""

    def __init__(self, step, total_steps, path):
        super().__init__(step, total_steps, path)
        self.step, self.total_steps, self.path = step, total_steps, path


def ignore_interrupts():
    """A second Ctrl-C while the checkpoint is saved and the servers are stopped would cut
    them short (a traceback, a half-written history): the process is ending anyway."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _reopen(entry, images_per_step):
    """A history entry as the running sums of an epoch in progress (the `correct` and
    `seconds` of entries written before they were kept are derived from their figures)."""
    cur = dict(entry, partial=True)
    cur.pop("loss_sum", None)  # kept by the partial entries of older train.py runs
    n = len(cur["step_losses"])
    if "correct" not in cur:
        cur["correct"] = round(cur["train_accuracy"] * n * images_per_step)
    if "seconds" not in cur:
        cur["seconds"] = n * images_per_step / cur["images_per_sec"]
    return cur


def _finish_epoch(sess, g, writer, out, history, images_per_step):
    """Evaluates the test set for history[-1], the epoch whose training steps are all done
    (its checkpoint and history.json, which says "partial", are saved): completes the entry in
    place, saves history.json, prints the epoch's line. Returns (labels, predictions)."""
    cur = history[-1]
    labels, preds = evaluate(sess, g)
    n = len(cur["step_losses"])
    cur.update(loss=float(np.mean(cur["step_losses"])),
               train_accuracy=cur["correct"] / (n * images_per_step),
               test_accuracy=float(np.mean(labels == preds)),
               images_per_sec=n * images_per_step / cur["seconds"])
    del cur["partial"]
    writer.add_scalars({"test_accuracy": cur["test_accuracy"]}, cur["step"])
    writer.flush()
    _save_history(out, history)
    print("epoch=%d loss=%.4f train_accuracy=%.4f test_accuracy=%.4f images_per_sec=%.1f"
          % (cur["epoch"], cur["loss"], cur["train_accuracy"], cur["test_accuracy"],
             cur["images_per_sec"]), flush=True)
    return labels, preds


def run(args, cluster):
    """Trains, evaluates, exports; prints the epoch lines and the final figures. Returns 0.

    history.json holds one entry per epoch, always: an epoch in progress or whose evaluation
    has not run yet is an entry with "partial": true, written with each checkpoint (at the end
    of the epoch's steps, before its evaluation, and on Ctrl-C). A resumed run continues that
    entry: it trains the rest of the epoch, or, when the epoch's steps were all done (Ctrl-C
    during its evaluation), evaluates it first."""
    towers = len(cluster.tower_devices)
    steps_per_epoch = min(shard_sizes(model.NUM_TRAIN, towers)) // args.batch_size
    if steps_per_epoch < 1:
        raise UsageError("--batch-size %d is larger than a tower's shard (%d images)"
                         % (args.batch_size, min(shard_sizes(model.NUM_TRAIN, towers))))
    if args.eval_examples < towers:
        raise UsageError("--eval-examples %d leaves some of the %d towers nothing to evaluate"
                         % (args.eval_examples, towers))
    total_steps = args.epochs * steps_per_epoch
    if args.max_steps is not None:
        total_steps = min(total_steps, args.max_steps)
    images_per_step = towers * args.batch_size
    print("cluster: %s; %s x %s, %s/epoch, %s" % (
        cluster.description, report.count(towers, "tower"), report.count(args.batch_size, "image"),
        report.count(steps_per_epoch, "step"), report.count(total_steps, "step")), flush=True)
    if cluster.server_pids():
        print("server pids: %s (logs in %s)" % (
            " ".join(map(str, cluster.server_pids())), os.path.join(args.out, "server_logs")),
            flush=True)
    graph = tx.Graph()
    with graph.as_default():
        g = Graph(args, cluster, steps_per_epoch, total_steps)
    history = _load_history(args.out)
    writer = tx.summary.FileWriter(args.out, graph=graph)
    sess = tx.Session(cluster.target, graph=graph, config=cluster.config)
    ckpt_prefix = os.path.join(args.out, "model.ckpt")
    labels, preds, t0, bar, saved = None, None, None, None, (None, None)
    try:
        resumed = _restore_or_init(sess, g, args.out)
        step = int(sess.run(g.global_step))
        saved = (step, resumed)  # the step of the latest checkpoint, and its path
        # history.json may be ahead of the restored step (the latest checkpoint's file was
        # removed, so training starts again from step 0): keep the epochs up to `step` only, and
        # an unfinished entry only at `step` (its figures are those of the checkpoint).
        history = [h for h in history if h["step"] <= step]
        if history and history[-1].get("partial") and history[-1]["step"] != step:
            history.pop()
        if resumed:
            print("resumed from %s at step %d" % (resumed, step), flush=True)
        epoch_over = step % steps_per_epoch == 0 or step >= total_steps
        if history and history[-1]["step"] == step:
            if not epoch_over:  # the restored step is inside the entry's epoch: continue it
                history[-1] = _reopen(history[-1], images_per_step)
            elif history[-1].get("partial"):  # its steps done, its evaluation not
                labels, preds = _finish_epoch(sess, g, writer, args.out, history,
                                              images_per_step)
        traced = os.path.exists(os.path.join(args.out, "trace.json"))
        run_steps = 0
        while step < total_steps:
            epoch = step // steps_per_epoch + 1
            todo = min(steps_per_epoch - step % steps_per_epoch, total_steps - step)
            sess.run([it.initializer for it in g.train_iterators])
            if not (history and history[-1].get("partial") and history[-1]["epoch"] == epoch):
                history.append({"epoch": epoch, "step": step, "correct": 0, "seconds": 0.0,
                                "learning_rate": None, "step_losses": [], "partial": True})
            cur = history[-1]
            bar = Progress(todo, epoch, math.ceil(total_steps / steps_per_epoch))
            t0 = time.perf_counter()
            done = 0
            for _ in range(todo):
                run_steps += 1
                if not traced and run_steps == TRACE_STEP:
                    _, loss, hit, lr = _write_trace(sess, g, writer, args.out, step)
                    traced = True
                else:
                    _, loss, hit, lr = sess.run([g.train_op, g.loss, g.correct,
                                                 g.learning_rate])
                step += 1
                done += 1
                cur["step_losses"].append(float(loss))
                cur.update(step=step, correct=cur["correct"] + int(hit),
                           learning_rate=float(lr))
                rate = done * images_per_step / max(time.perf_counter() - t0, 1e-9)
                bar.update(loss="%.4f" % loss, acc="%.3f" % (hit / images_per_step),
                           lr="%.2e" % lr, img_s="%.0f" % rate)
                if step % SUMMARY_EVERY == 0 or done == todo:
                    writer.add_scalars({"loss": loss, "accuracy": hit / images_per_step,
                                        "learning_rate": lr, "images_per_second": rate}, step)
            bar.close()
            cur["seconds"] += time.perf_counter() - t0
            t0 = None
            # The checkpoint, and history.json saying the evaluation is still to run, first: a
            # Ctrl-C during the evaluation leaves both, and the resumed run evaluates the epoch.
            saved = (step, g.saver.save(sess, ckpt_prefix, global_step=step))
            _save_history(args.out, history)
            labels, preds = _finish_epoch(sess, g, writer, args.out, history, images_per_step)
        if labels is None:  # resumed after the last step: evaluate the checkpoint
            labels, preds = evaluate(sess, g)
    except KeyboardInterrupt:
        ignore_interrupts()
        if bar is not None:
            bar.close()
        # The signal may have come during a step that completed: ask the graph, not `step`.
        step = int(sess.run(g.global_step))
        path = None
        if step:
            # Interrupted in an evaluation, the step's checkpoint is there already.
            path = saved[1] if saved[0] == step else g.saver.save(sess, ckpt_prefix,
                                                                  global_step=step)
            if history and history[-1].get("partial"):
                # The epoch's figures so far (the steps whose losses came back: the step the
                # signal interrupted may be in the checkpoint without them), for the resumed run.
                if t0 is not None:
                    history[-1]["seconds"] += time.perf_counter() - t0
                history[-1]["step"] = step
                if not history[-1]["step_losses"]:
                    history.pop()  # interrupted before the epoch's first step came back
            _save_history(args.out, history)
        raise Interrupted(step, total_steps, path) from None
    finally:
        writer.close()
        sess.close()
    export(args, tx.train.latest_checkpoint(args.out))
    return finish(args, cluster, history, labels, preds, steps_per_epoch)


def finish(args, cluster, history, labels, preds, steps_per_epoch):
    confusion = report.confusion_matrix(labels, preds, len(model.CLASS_NAMES))
    print(report.format_per_class(confusion, model.CLASS_NAMES))
    print(report.format_confusion(confusion, model.CLASS_NAMES))
    config = {"epochs": args.epochs, "batch_size_per_worker": args.batch_size,
              "towers": len(cluster.tower_devices), "cluster": cluster.description,
              "learning_rate": args.learning_rate, "warmup_epochs": args.warmup_epochs,
              "l2": args.l2, "clip_norm": args.clip_norm, "seed": args.seed,
              "max_steps": args.max_steps, "eval_examples": args.eval_examples,
              "steps_per_epoch": steps_per_epoch}
    report.write_report(args.out, history, confusion, model.CLASS_NAMES, config,
                        steps_per_epoch)
    print("wrote %s (report.md, report.png, model.pb, checkpoints, events, trace.json)"
          % args.out)
    print("test_accuracy=%.4f" % report.accuracy(confusion), flush=True)
    return 0


def export(args, checkpoint):
    """model.pb: images (float32 [N, 28, 28, 1], pixels 0..255) -> probabilities (float32
    [N, 10]), variables from `checkpoint` folded into constants, training nodes removed; and
    labels.txt (the class names, one a line) beside it."""
    with tx.Graph().as_default() as g:
        images = tx.placeholder(tx.float32, [None, 28, 28, 1], name="images")
        logits = model.cnn_logits(images * (1.0 / 255.0), training=False)
        tx.nn.softmax(logits, name="probabilities")
        saver = tx.train.Saver(tx.global_variables())
        with tx.Session() as sess:
            saver.restore(sess, checkpoint)
            frozen = tx.graph_util.convert_variables_to_constants(
                sess, g.as_graph_def(), ["probabilities"])
    frozen = tx.graph_util.remove_training_nodes(frozen, protected_nodes=["probabilities"])
    with open(os.path.join(args.out, "model.pb"), "wb") as f:
        f.write(frozen.SerializeToString())
    with open(os.path.join(args.out, "labels.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(model.CLASS_NAMES) + "\n")
