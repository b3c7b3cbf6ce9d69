"""Resource-variable reads and control dependencies (issue 19): which value does each way of
reading a resource variable see when it is made inside `control_dependencies([update])`?

build(tf) builds every case in the default graph of `tf` (TensorFlow's tf.compat.v1 with v2
behaviour off, or tensorflux) and returns (init_ops, {case name: fetch}). run(tf) runs each case
in a fresh session after init_ops and returns {case name: nested list of floats, or None for
a gradient that does not exist}. Every case is deterministic: the only writes a fetch depends on
are the ones its reads are ordered after.
"""


def _resource_variable(tf, value, name):
    return tf.Variable(value, name=name, use_resource=True)


def build(tf):
    cases = {}
    inits = []

    def var(value, name):
        v = _resource_variable(tf, value, name)
        inits.append(v.initializer)
        return v

    # Implicit reads (operators, conversions) made under the dependency see the assignment.
    v = var(2.0, "v")
    with tf.control_dependencies([v.assign(3.0)]):
        cases["add_inside"] = v + 0.0
        cases["mul_inside"] = v * 1.0
        cases["neg_inside"] = -v
        cases["value_inside"] = v.value()
        cases["read_value_inside"] = v.read_value()
        cases["convert_to_tensor_inside"] = tf.convert_to_tensor(v)
        cases["identity_inside"] = tf.identity(v)
        cases["add_n_inside"] = tf.add_n([v, v])
    # A read made outside the block is not ordered after the assignment (and is fetched alone).
    cases["add_outside"] = v + 0.0

    m = var([[2.0, 0.0], [0.0, 2.0]], "m")
    x = tf.constant([[1.0, 2.0]])
    with tf.control_dependencies([m.assign([[3.0, 1.0], [1.0, 3.0]])]):
        cases["matmul_inside"] = tf.matmul(x, m)
        cases["getitem_inside"] = m[0]
        cases["reduce_sum_inside"] = tf.reduce_sum(m)

    a = var(2.0, "a")
    with tf.control_dependencies([a.assign_add(1.5, read_value=False)]):
        cases["assign_add_then_add"] = a + 0.0
    s = var(2.0, "s")
    with tf.control_dependencies([s.assign_sub(0.5)]):
        cases["assign_sub_then_pow"] = s ** 2.0

    # get_variable in a resource variable scope behaves the same.
    with tf.variable_scope("scope", use_resource=True):
        w = tf.get_variable("w", initializer=2.0)
    inits.append(w.initializer)
    with tf.control_dependencies([w.assign(3.0)]):
        cases["get_variable_mul_inside"] = w * 1.0

    # Gradients still flow to the variable through each read, and sum over reads.
    g = var(2.0, "g")
    with tf.control_dependencies([g.assign(3.0)]):
        inside = g + 0.0
    outside = g * 1.0
    loss = inside * 2.0 + outside * 5.0
    cases["gradient_wrt_variable"] = tf.gradients(loss, [g])[0]
    cases["gradient_wrt_handle"] = tf.gradients(loss, [g.handle])[0]
    # value() is a new read that the loss does not use: no gradient.
    cases["gradient_wrt_new_value"] = tf.gradients(loss, [g.value()])[0]
    h = var([1.0, 2.0], "h")
    with tf.control_dependencies([h.assign([3.0, 4.0])]):
        hsq = tf.reduce_sum(h * h)
    cases["gradient_square_inside"] = tf.gradients(hsq, [h])[0]
    return inits, cases


def _plain(value):
    if value is None:
        return None
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list):
        return [_plain(x) for x in value]
    return float(value)


def run(tf):
    graph = tf.Graph()
    with graph.as_default():
        inits, cases = build(tf)
    out = {}
    for name in sorted(cases):
        fetch = cases[name]
        if fetch is None:
            out[name] = None
            continue
        with tf.Session(graph=graph) as sess:
            sess.run(inits)
            out[name] = _plain(sess.run(fetch))
    return out
