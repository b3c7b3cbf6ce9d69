"""`tensorflux predict`: a small classifier frozen with tx.graph_util, run by the CLI on IDX,
.npy and PNG files; its classes and probabilities equal the Python session's."""

import gzip
import os
import struct
import subprocess
import zlib

import numpy as np
import pytest

import tensorflux as tx
from conftest import built_binary

CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
           "Bag", "Ankle boot"]


def _cli():
    return built_binary("tensorflux")


def _write_idx(path, images):
    header = bytes([0, 0, 0x08, images.ndim]) + b"".join(struct.pack(">I", d)
                                                         for d in images.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + images.tobytes())


def _write_png(path, image):
    """An 8-bit PNG (filter 0 on every row): greyscale for uint8 [H, W], RGB for [H, W, 3],
    RGBA for [H, W, 4]."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    h, w = image.shape[:2]
    color_type = {2: 0, 3: 2, 4: 6}[image.shape[2] if image.ndim == 3 else 2]
    raw = b"".join(b"\x00" + image[r].tobytes() for r in range(h))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n"
                + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color_type, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("predict")
    g = tx.Graph()
    with g.as_default():
        tx.set_random_seed(5)
        images = tx.placeholder(tx.uint8, [None, 28, 28], name="images")
        x = tx.reshape(tx.cast(images, tx.float32) / 255.0, [-1, 784])
        h = tx.layers.dense(x, 32, activation=tx.nn.relu)
        logits = tx.layers.dense(h, 10)
        tx.nn.softmax(logits, name="probabilities")
        init = tx.global_variables_initializer()
    sess = tx.Session(graph=g)
    sess.run(init)
    frozen = tx.graph_util.convert_variables_to_constants(sess, g.as_graph_def(),
                                                          ["probabilities"])
    (d / "model.pb").write_bytes(frozen.SerializeToString())
    (d / "labels.txt").write_text("\n".join(CLASSES) + "\n")
    rng = np.random.default_rng(1)
    data = rng.integers(0, 256, (7, 28, 28), dtype=np.uint8)
    want = sess.run("probabilities:0", {"images:0": data})
    sess.close()
    _write_idx(d / "imgs.gz", data)
    return d, data, want


def _run(*args):
    return subprocess.run([_cli(), "predict"] + [str(a) for a in args], capture_output=True,
                          text=True, timeout=120)


def _parse(stdout):
    return [line.split("\t") for line in stdout.strip().split("\n")]


def test_idx_npy_png_agree_with_session(model):
    d, data, want = model
    np.save(d / "stack.npy", data[:3])
    np.save(d / "one.npy", data[4])
    _write_png(d / "six.png", data[6])
    r = _run(d / "model.pb", "--images", d / "imgs.gz", "--images", d / "stack.npy",
             "--images", d / "one.npy", "--images", d / "six.png", "--batch_size", 3)
    assert r.returncode == 0, r.stderr
    rows = _parse(r.stdout)
    expect_rows = [(i, "%s[%d]" % (d / "imgs.gz", i)) for i in range(7)]
    expect_rows += [(i, "%s[%d]" % (d / "stack.npy", i)) for i in range(3)]
    expect_rows += [(4, str(d / "one.npy")), (6, str(d / "six.png"))]
    assert len(rows) == len(expect_rows)
    for (i, name), (got_name, cls, prob) in zip(expect_rows, rows):
        assert got_name == name
        assert cls == CLASSES[int(np.argmax(want[i]))]
        assert float(prob) == pytest.approx(float(want[i].max()), abs=6e-5)


def test_colour_png_is_converted_to_grey(model, tmp_path):
    # R = G = B (and opaque alpha): libpng's grey conversion gives back the grey pixels, so the
    # prediction is the greyscale image's; before, the 3 (4) channels were split into 3 (4)
    # "images" of 784 values each.
    d, data, want = model
    rgb = np.repeat(data[2][..., None], 3, axis=2)
    _write_png(tmp_path / "rgb.png", rgb)
    _write_png(tmp_path / "rgba.png", np.concatenate(
        [rgb, np.full((28, 28, 1), 255, np.uint8)], axis=2))
    r = _run(d / "model.pb", "--images", tmp_path / "rgb.png", "--images", tmp_path / "rgba.png")
    assert r.returncode == 0, r.stderr
    rows = _parse(r.stdout)
    assert [row[0] for row in rows] == [str(tmp_path / "rgb.png"), str(tmp_path / "rgba.png")]
    for _, cls, prob in rows:
        assert cls == CLASSES[int(np.argmax(want[2]))]
        assert float(prob) == pytest.approx(float(want[2].max()), abs=6e-5)


def test_images_of_the_wrong_shape_are_refused(model, tmp_path):
    # 56x28 = two images' worth of values: refused, not split into two images.
    d, data, _ = model
    _write_png(tmp_path / "tall.png", np.concatenate([data[0], data[1]]))
    np.save(tmp_path / "wide.npy", np.concatenate([data[0], data[1]], axis=1))
    for name, shape in (("tall.png", "[56,28,1]"), ("wide.npy", "[28,56]")):
        r = _run(d / "model.pb", "--images", tmp_path / name)
        assert r.returncode == 1 and r.stdout == "", r.stdout
        assert "INVALID_ARGUMENT" in r.stderr and name in r.stderr and shape in r.stderr, r.stderr
    # The channel dim is optional: [N, 28, 28, 1] is a stack of [28, 28] images.
    np.save(tmp_path / "nhwc.npy", data[:2, :, :, None])
    r = _run(d / "model.pb", "--images", tmp_path / "nhwc.npy")
    assert r.returncode == 0, r.stderr
    assert [row[0] for row in _parse(r.stdout)] == [
        "%s[%d]" % (tmp_path / "nhwc.npy", i) for i in range(2)]


def test_bad_inputs_give_clear_errors(model, tmp_path):
    d, data, _ = model
    np.save(tmp_path / "wrong.npy", np.zeros((5, 5), np.uint8))
    r = _run(d / "model.pb", "--images", tmp_path / "wrong.npy")
    assert r.returncode == 1 and "INVALID_ARGUMENT" in r.stderr and "784" in r.stderr
    (tmp_path / "junk.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    r = _run(d / "model.pb", "--images", tmp_path / "junk.png")
    assert r.returncode == 1 and "junk.png" in r.stderr
    r = _run(d / "model.pb", "--images", tmp_path / "missing.gz")
    assert r.returncode == 1 and "missing.gz" in r.stderr
    r = _run(d / "model.pb")
    assert r.returncode == 1 and "--images" in r.stderr
    r = _run(d / "model.pb", "--images", d / "imgs.gz", "--batch_size", 0)
    assert r.returncode == 1 and "batch_size" in r.stderr
    r = _run(d / "model.pb", "--images", d / "imgs.gz", "--input", "nope")
    assert r.returncode == 1 and "not a Placeholder" in r.stderr


def test_without_labels_prints_indices(model, tmp_path):
    d, data, want = model
    (tmp_path / "model.pb").write_bytes((d / "model.pb").read_bytes())
    np.save(tmp_path / "x.npy", data[:2])
    r = _run(tmp_path / "model.pb", "--images", tmp_path / "x.npy")
    assert r.returncode == 0, r.stderr
    assert [row[1] for row in _parse(r.stdout)] == [str(int(np.argmax(w))) for w in want[:2]]
