"""Cases written once against the tf.compat.v1 API and run by both sides: tools/oracle/*.py runs
them with TensorFlow and commits the results under tests/data/oracle/; tests/python/test_*.py
run them with TensorFlux (passed in as the module `tf`) and compare. Nothing here imports
TensorFlow or TensorFlux itself."""
