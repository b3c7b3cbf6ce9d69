"""The op conformance table: one list of cases per op family, checked against TensorFlow.

tests/conformance/cases/<family>.py defines CASES (table.Case). tools/oracle/generate.py runs
every case in TensorFlow 2.15 (tf.compat.v1 graph mode) and writes what TF computed to
tests/data/oracle/conformance/<family>.{npz,json}; tests/python/test_conformance.py runs the
same cases in TensorFlux and compares. runner.py builds a case in either system: both expose
the same names (raw ops, placeholder, constant, gradients, Session), so one builder serves.
"""
