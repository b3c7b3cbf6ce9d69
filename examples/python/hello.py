"""The smallest TensorFlux Python program: y = x W + 1, written as a TF 1.x user would.

Run with: PYTHONPATH=build/python /usr/bin/python3 examples/python/hello.py
"""
import numpy as np
import tensorflux as tx

g = tx.Graph()
with g.as_default():
    x = tx.placeholder(tx.float32, shape=[None, 2], name="x")
    w = tx.constant([[1.0, 2.0], [3.0, 4.0]], name="w")
    y = tx.add(tx.matmul(x, w), 1.0, name="y")

sess = tx.Session(graph=g)
print("y =", sess.run(y, feed_dict={x: np.array([[1.0, 1.0]], dtype=np.float32)}))  # [[5. 7.]]
