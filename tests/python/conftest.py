"""pytest set-up for the tensorflux Python tests.

The package is imported from build/python (PYTHONPATH, or $TX_BUILD_DIR/python, or
<repo>/build/python). When the C++ extension cannot be imported, every test module but
test_import.py is left out and test_import.py reports one skip with the reason; with CI=1 or
TX_REQUIRE_EXTENSION=1 in the environment the import error fails the run instead.
"""

import os
import sys
import threading
import time

import pytest

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TEST_DATA_DIR = os.path.join(_REPO, "tests", "data")


def _add_build_path():
    candidates = []
    if os.environ.get("TX_BUILD_DIR"):
        candidates.append(os.path.join(os.environ["TX_BUILD_DIR"], "python"))
    candidates.append(os.path.join(_REPO, "build", "python"))
    for c in candidates:
        if os.path.isdir(os.path.join(c, "tensorflux")) and c not in sys.path:
            sys.path.append(c)
            return


_add_build_path()

try:
    import tensorflux  # noqa: F401
    IMPORT_ERROR = None
except ImportError as e:  # pragma: no cover - only without a build
    if os.environ.get("CI") or os.environ.get("TX_REQUIRE_EXTENSION"):
        raise
    IMPORT_ERROR = "tensorflux could not be imported (build it with `make build`): %s" % e
    collect_ignore_glob = ["test_[!i]*.py", "test_i[!m]*.py"]


def pytest_report_header(config):
    if IMPORT_ERROR:
        return "tensorflux: SKIPPING Python tests: " + IMPORT_ERROR
    return "tensorflux: %s from %s" % (tensorflux.__version__,
                                       os.path.dirname(tensorflux.__file__))


@pytest.fixture
def graph():
    """A fresh graph, installed as the default graph for the test."""
    import tensorflux as tx  # pylint: disable=g-import-not-at-top
    g = tx.Graph()
    with g.as_default():
        yield g


@pytest.fixture
def data_dir():
    return TEST_DATA_DIR


def drain_one_shot(ds):
    """Every element of a fresh one-shot iterator of `ds`, run in a new session."""
    import tensorflux as tx  # pylint: disable=g-import-not-at-top
    nxt = tx.data.make_one_shot_iterator(ds).get_next()
    out = []
    with tx.Session() as sess:
        while True:
            try:
                out.append(sess.run(nxt))
            except tx.errors.OutOfRangeError:
                return out


def wait_until(done, seconds=60.0):
    """Polls done() until it is true (True) or `seconds` have passed (False): for waiting on
    what another thread or process does, where a fixed sleep can be too short on a loaded
    machine (CI runs the test shards in parallel on 2 cores). The limit only bounds a failing
    test."""
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


def run_in_threads(fn, n, timeout=120):
    """Runs fn(0) .. fn(n - 1) on n threads and waits for them (at most `timeout` seconds each);
    fails if one is still running (a hang) and re-raises the first exception a thread raised."""
    errors = []

    def body(i):
        try:
            fn(i)
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a thread hangs"
    if errors:
        raise errors[0]


def built_binary(name):
    """The path of build/bin/<name> next to the imported tensorflux package's build; skips the
    test when it is not built."""
    import tensorflux as tx  # pylint: disable=g-import-not-at-top
    build = os.path.dirname(os.path.dirname(os.path.abspath(tx.__file__)))
    path = os.path.join(build, "..", "bin", name)
    if not os.path.exists(path):
        pytest.skip("build/bin/%s is not built" % name)
    return path
