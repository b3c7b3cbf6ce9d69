"""Runs tests/python/oracle_cases/variable_reads.py with TensorFlow and writes the values each
case fetches to tests/data/oracle/variable_reads.json (keys sorted; the same bytes every run).

    ~/.cache/tensorflux/oracle-venv/bin/python tools/oracle/variable_reads.py [--out PATH]
"""

import argparse
import json
import os
import sys

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(_REPO, "tests", "data", "oracle",
                                                      "variable_reads.json"))
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow.compat.v1 as tf  # pylint: disable=g-import-not-at-top
    tf.disable_v2_behavior()
    import tensorflow  # pylint: disable=g-import-not-at-top
    sys.path.insert(0, os.path.join(_REPO, "tests", "python"))
    from oracle_cases import variable_reads  # pylint: disable=g-import-not-at-top
    doc = {"tensorflow_version": tensorflow.__version__, "cases": variable_reads.run(tf)}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(doc, f, sort_keys=True, indent=1)
        f.write("\n")
    print("%s: %d cases" % (args.out, len(doc["cases"])), file=sys.stderr)


if __name__ == "__main__":
    main()
