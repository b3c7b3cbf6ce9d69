"""The figures of a Fashion-MNIST training run: confusion matrix, per-class accuracy, terminal
tables, and the run's report.md + report.png (issue 8). numpy only, except write_report's plot,
which needs matplotlib (Debian's python3-matplotlib, Agg backend: no display needed).

    confusion = confusion_matrix(labels, predictions, 10)   # int64 [10, 10], rows true class
    print(format_per_class(confusion, CLASS_NAMES))
    print(format_confusion(confusion, CLASS_NAMES))
    write_report(run_dir, history, confusion, CLASS_NAMES, config)

history is a list with one dict per epoch: epoch, step (the global step the epoch ended at),
loss, train_accuracy, test_accuracy, images_per_sec, learning_rate (a missing key or None prints
as "-"), and optionally "step_losses", the losses of the epoch's last steps in order, up to and
including `step` (plotted as the per-step loss curve). read_report() parses a report.md back
into the same figures.
"""

import os
import re

import numpy as np

EPOCH_COLUMNS = ("epoch", "step", "loss", "train_accuracy", "test_accuracy", "images_per_sec",
                 "learning_rate")
_FORMATS = {"epoch": "%d", "step": "%d", "loss": "%.4f", "train_accuracy": "%.4f",
            "test_accuracy": "%.4f", "images_per_sec": "%.1f", "learning_rate": "%.6g"}
PNG_SIZE = (1500, 520)  # report.png's width and height in pixels
_DPI = 100


def count(n, noun):
    """"1 worker", "2 workers": n and the noun, plural (an "s" added) unless n is 1; a noun that
    ends in "s" ("ps") stays as it is."""
    return "%d %s" % (n, noun if n == 1 or noun.endswith("s") else noun + "s")


def confusion_matrix(labels, predictions, num_classes):
    """Counts of (true class, predicted class): int64 [num_classes, num_classes], rows indexed by
    the true label, columns by the prediction (tf.math.confusion_matrix's layout). labels and
    predictions: integer arrays of the same length with values in [0, num_classes). Raises
    ValueError on a length mismatch, a non-integer dtype or a value out of range."""
    labels = np.asarray(labels).ravel()
    predictions = np.asarray(predictions).ravel()
    if labels.shape != predictions.shape:
        raise ValueError("confusion_matrix: %d labels but %d predictions"
                         % (labels.size, predictions.size))
    for name, a in (("labels", labels), ("predictions", predictions)):
        if a.size and a.dtype.kind not in "iu":
            raise ValueError("confusion_matrix: %s must be integers, not %s" % (name, a.dtype))
        if a.size and (a.min() < 0 or a.max() >= num_classes):
            raise ValueError("confusion_matrix: %s must lie in [0, %d), found [%d, %d]"
                             % (name, num_classes, a.min(), a.max()))
    flat = labels.astype(np.int64) * num_classes + predictions.astype(np.int64)
    return np.bincount(flat, minlength=num_classes * num_classes).reshape(
        num_classes, num_classes).astype(np.int64)


def _check_confusion(confusion, class_names=None):
    confusion = np.asarray(confusion)
    if confusion.ndim != 2 or confusion.shape[0] != confusion.shape[1]:
        raise ValueError("a confusion matrix is square [C, C], not %s" % (confusion.shape,))
    if class_names is not None and len(class_names) != confusion.shape[0]:
        raise ValueError("%d class names for a %dx%d confusion matrix"
                         % (len(class_names), confusion.shape[0], confusion.shape[0]))
    return confusion


def per_class_accuracy(confusion):
    """Recall of each true class: float64 [C], diagonal / row sum; NaN for a class with no
    samples."""
    confusion = _check_confusion(confusion)
    totals = confusion.sum(axis=1).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0, np.diag(confusion) / totals, np.nan)


def accuracy(confusion):
    """Overall accuracy of a confusion matrix (trace / total), NaN when it is empty."""
    confusion = _check_confusion(confusion)
    total = confusion.sum()
    return float(np.trace(confusion)) / total if total else float("nan")


def _table(header, rows, right_from=1):
    """Fixed-width text table: the first `right_from` columns left-aligned, the rest right."""
    cells = [list(header)] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = []
    for r in cells:
        lines.append("  ".join(c.ljust(w) if i < right_from else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    return "\n".join(lines)


def _per_class_rows(confusion, class_names):
    confusion = _check_confusion(confusion, class_names)
    acc = per_class_accuracy(confusion)
    return [(name, int(confusion[i].sum()), int(confusion[i, i]),
             "-" if np.isnan(acc[i]) else "%.4f" % acc[i])
            for i, name in enumerate(class_names)]


def format_per_class(confusion, class_names):
    """A text table, one line per class: class, samples, correct, accuracy."""
    return _table(("class", "samples", "correct", "accuracy"),
                  _per_class_rows(confusion, class_names))


def format_confusion(confusion, class_names):
    """The confusion matrix as a text table: one row per true class (index and name), one column
    per predicted class (headed by its index)."""
    confusion = _check_confusion(confusion, class_names)
    header = ["true \\ predicted"] + [str(j) for j in range(len(class_names))]
    rows = [["%d %s" % (i, name)] + [int(v) for v in confusion[i]]
            for i, name in enumerate(class_names)]
    return _table(header, rows)


def _md_row(cells):
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def _md_table(header, rows):
    return "\n".join([_md_row(header), _md_row(["---"] * len(header))]
                     + [_md_row(r) for r in rows])


def _cell(key, value):
    return "-" if value is None else _FORMATS[key] % value


def _x(step, steps_per_epoch):
    return step / steps_per_epoch if steps_per_epoch else step


def loss_curve(history, steps_per_epoch=None):
    """(x, loss) lists of the per-step losses of `history` for report.png: x is the global step
    of each loss (an entry's step_losses end at its "step"), in epochs (step / steps_per_epoch)
    when steps_per_epoch is given. So an epoch cut short (--max-steps) ends where it stopped,
    and an epoch continued by a resumed run is one continuous curve."""
    xs, ys = [], []
    for h in history:
        losses = h.get("step_losses") or []
        if h.get("step") is None:
            continue
        first = h["step"] - len(losses) + 1
        xs += [_x(first + i, steps_per_epoch) for i in range(len(losses))]
        ys += list(losses)
    return xs, ys


def _plot(png_path, history, confusion, class_names, steps_per_epoch):
    import matplotlib  # pylint: disable=import-outside-toplevel
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt  # pylint: disable=import-outside-toplevel

    fig, (ax_loss, ax_acc, ax_cm) = plt.subplots(
        1, 3, figsize=(PNG_SIZE[0] / _DPI, PNG_SIZE[1] / _DPI), dpi=_DPI, layout="constrained")
    try:
        unit = "epoch" if steps_per_epoch else "step"
        xs, ys = loss_curve(history, steps_per_epoch)
        if ys:
            ax_loss.plot(xs, ys, lw=0.6, alpha=0.6, label="per step")
        ends = [(h, _x(h["step"], steps_per_epoch)) for h in history if h.get("step") is not None]
        pts = [(x, h["loss"]) for h, x in ends if h.get("loss") is not None]
        if pts:
            ax_loss.plot(*zip(*pts), "o-", label="epoch mean (at its last step)")
        ax_loss.set(title="Training loss", xlabel=unit, ylabel="loss")
        ax_loss.legend()
        for key in ("train_accuracy", "test_accuracy"):
            pts = [(x, h[key]) for h, x in ends if h.get(key) is not None]
            if pts:
                ax_acc.plot(*zip(*pts), "o-", label=key.replace("_", " "))
        ax_acc.set(title="Accuracy (at each epoch's end)", xlabel=unit, ylabel="accuracy")
        span = max([x for _, x in ends] + xs + [0])
        for ax in (ax_loss, ax_acc):  # both from the first step (0) to the last
            ax.set_xlim(0, span * 1.03 or 1)
            if steps_per_epoch and span >= 2:  # whole epochs (no 1.2, 1.4 ticks for 2 epochs)
                ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax_acc.grid(alpha=0.3)
        ax_acc.legend()
        im = ax_cm.imshow(confusion, cmap="Blues")
        n = len(class_names)
        ax_cm.set(title="Confusion matrix (test)", xlabel="predicted", ylabel="true",
                  xticks=range(n), yticks=range(n))
        ax_cm.set_xticklabels(class_names, rotation=45, ha="right", fontsize=7)
        ax_cm.set_yticklabels(class_names, fontsize=7)
        half = confusion.max() / 2 if confusion.size else 0
        for i in range(n):
            for j in range(n):
                ax_cm.text(j, i, int(confusion[i, j]), ha="center", va="center", fontsize=6,
                           color="white" if confusion[i, j] > half else "black")
        fig.colorbar(im, ax=ax_cm)
        fig.savefig(png_path, dpi=_DPI)
    finally:
        plt.close(fig)


def write_report(out_dir, history, confusion, class_names, config, steps_per_epoch=None):
    """Writes out_dir/report.png (loss per step and epoch, train/test accuracy per epoch, against
    the global step, in epochs when steps_per_epoch is given; the confusion matrix heat map;
    PNG_SIZE pixels) and out_dir/report.md (config, per-epoch table,
    final test accuracy from `confusion`, per-class accuracy, confusion matrix, and the files of
    out_dir). config: a dict of the run's settings. Returns (report.md path, report.png path);
    the png path is None, with a note in report.md, when matplotlib is not installed."""
    confusion = _check_confusion(confusion, class_names)
    os.makedirs(out_dir, exist_ok=True)
    png_path = os.path.join(out_dir, "report.png")
    png_note = None
    try:
        _plot(png_path, history, confusion, class_names, steps_per_epoch)
    except ImportError as e:
        png_path, png_note = None, ("report.png not written: matplotlib is missing (%s); "
                                    "install Debian's python3-matplotlib (scripts/setup)" % e)
    md_path = os.path.join(out_dir, "report.md")
    parts = ["# Fashion-MNIST training report", "", "## Config", "",
             _md_table(("setting", "value"), sorted((str(k), v) for k, v in config.items())),
             "", "## Epochs", "",
             _md_table(EPOCH_COLUMNS,
                       [[_cell(k, h.get(k)) for k in EPOCH_COLUMNS] for h in history]),
             "", "## Test accuracy", "",
             "test_accuracy=%.4f (%d test images)" % (accuracy(confusion), confusion.sum()),
             "", "## Per-class accuracy", "",
             _md_table(("class", "samples", "correct", "accuracy"),
                       _per_class_rows(confusion, class_names)),
             "", "## Confusion matrix", "",
             "Rows: true class; columns: predicted class.", "",
             _md_table([""] + list(class_names),
                       [[name] + [int(v) for v in confusion[i]]
                        for i, name in enumerate(class_names)]),
             "", "## Files", ""]
    if png_note:
        parts += [png_note, ""]
    names = {n for n in os.listdir(out_dir) if not n.startswith(".")} | {"report.md"}
    for name in sorted(names):
        path = os.path.join(out_dir, name)
        if os.path.isdir(path):
            parts.append("- `%s/`" % name)
        else:
            size = os.path.getsize(path) if os.path.exists(path) else None
            parts.append("- `%s`" % name + ("" if size is None else " (%d bytes)" % size))
    with open(md_path, "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")
    return md_path, png_path


def _md_tables(text):
    """{section heading: rows of its first table (lists of cells, header first)}."""
    tables, section = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        elif line.startswith("|") and section is not None:
            cells = [c.strip().replace("\\|", "|")
                     for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if not all(set(c) <= {"-"} and c for c in cells):  # skip the | --- | line
                tables.setdefault(section, []).append(cells)
    return tables


def read_report(path):
    """Parses a report.md written by write_report: a dict with config (str -> str), epochs (a
    list of dicts of EPOCH_COLUMNS, floats or None for "-"), test_accuracy (float), per_class
    (class name -> (samples, correct)), confusion (int64 [C, C]), class_names and files."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    tables = _md_tables(text)
    num = lambda c: None if c == "-" else float(c)  # noqa: E731
    epochs = [dict(zip(tables["Epochs"][0], map(num, r))) for r in tables["Epochs"][1:]]
    found = re.search(r"^test_accuracy=([0-9.]+|nan)", text, re.M)
    cm = tables["Confusion matrix"]
    return {
        "config": {k: v for k, v in tables["Config"][1:]},
        "epochs": epochs,
        "test_accuracy": float(found.group(1)),
        "per_class": {r[0]: (int(r[1]), int(r[2])) for r in tables["Per-class accuracy"][1:]},
        "class_names": cm[0][1:],
        "confusion": np.array([[int(v) for v in r[1:]] for r in cm[1:]], np.int64),
        "files": re.findall(r"^- `([^`]+)`", text, re.M),
    }
