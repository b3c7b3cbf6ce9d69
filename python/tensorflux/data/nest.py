"""Nested structures of dataset elements (tf.data's nest rules): tuples, namedtuples and dicts
nest; dict values are flattened in sorted key order; anything else, lists included, is a leaf
(tf.data converts a list to one tensor)."""

import collections.abc


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def is_nested(x):
    return isinstance(x, (tuple, collections.abc.Mapping))


def _children(x):
    if isinstance(x, collections.abc.Mapping):
        return [x[k] for k in sorted(x)]
    return list(x)


def flatten(structure):
    """The leaves of `structure`, depth first."""
    if not is_nested(structure):
        return [structure]
    out = []
    for c in _children(structure):
        out.extend(flatten(c))
    return out


def _pack(structure, leaves, i):
    if not is_nested(structure):
        return leaves[i], i + 1
    packed = []
    for c in _children(structure):
        v, i = _pack(c, leaves, i)
        packed.append(v)
    if isinstance(structure, collections.abc.Mapping):
        items = list(zip(sorted(structure), packed))
        try:
            return type(structure)(items), i
        except TypeError:  # defaultdict and other mappings without a pairs constructor
            return dict(items), i
    if _is_namedtuple(structure):
        return type(structure)(*packed), i
    return type(structure)(packed), i


def pack_sequence_as(structure, flat):
    """`flat` (a list of leaves) in the shape of `structure`."""
    flat = list(flat)
    n = len(flatten(structure))
    if n != len(flat):
        raise ValueError("Structure has %d leaves but %d values were given" % (n, len(flat)))
    return _pack(structure, flat, 0)[0]


def map_structure(fn, *structures):
    """fn applied leaf by leaf, in the shape of the first structure."""
    flats = [flatten(s) for s in structures]
    for f in flats[1:]:
        if len(f) != len(flats[0]):
            raise ValueError("The structures do not have the same number of elements")
    return pack_sequence_as(structures[0], [fn(*xs) for xs in zip(*flats)])
