"""Parsing (ops/parsing_ops.cc): DecodeCSV, ParseExample, ParseSingleExample. Single-op cases;
the serialized tf.train.Example inputs are encoded here in plain Python
(program_util.example), so both systems parse the same bytes."""

import numpy as np

from conformance.program_util import example
from conformance.table import Case

CASES = []


def _s(*items):
    return np.array([i.encode() if isinstance(i, str) else i for i in items], dtype=bytes)


def _ex(features):
    b = example(features)
    # Inputs are stored as numpy bytes, which drop trailing NULs: keep examples free of them.
    assert not b.endswith(b"\x00"), features
    return b


# ---------------------------------------------------------------- DecodeCSV

def _csv(variant, records, defaults, attrs=None, const=("record_defaults",)):
    return Case("DecodeCSV", {"records": records, "record_defaults": defaults}, attrs or {},
                variant=variant, dtype="string", const=const)


_DEFAULTS = [np.array([0], np.int32), np.array([1.5], np.float32), np.array([b"zz"]),
             np.array([-1], np.int64), np.array([0.25], np.float64)]
CASES += [
    _csv("base", _s("1,2.5,abc,10,0.5", "-3,0.125,,20,1e-3", "7,-1e3,\"q, c\",30,-0"),
         _DEFAULTS),
    _csv("defaults", _s(",,,,", "4,,x,,"), _DEFAULTS),
    _csv("scalar", np.array(b"5,6.5,s,7,8.5"), _DEFAULTS),
    _csv("matrix", np.array([[b"1,2,a,3,4", b"5,6,b,7,8"], [b"9,1,c,2,3", b"0,0,d,0,0"]]),
         _DEFAULTS),
    _csv("empty", np.zeros((0,), "S1"), _DEFAULTS),
    _csv("field_delim", _s("1|x|2.5", "2|y|"),
         [np.array([0], np.int32), np.array([b""]), np.array([0.0], np.float32)],
         {"field_delim": "|"}),
    _csv("quoted", _s('"1","a ""b"" c",2', '3,"",4'),
         [np.array([0], np.int32), np.array([b""]), np.array([0], np.int64)]),
    _csv("no_quote_delim", _s('1,"a"', '2,b"c'),
         [np.array([0], np.int32), np.array([b""])], {"use_quote_delim": False}),
    _csv("na_value", _s("NA,1.5", "2,NA"),
         [np.array([-9], np.int32), np.array([0.5], np.float32)], {"na_value": "NA"}),
    _csv("select_cols", _s("1,skip,2.5,x", "3,skip,4.5,y"),
         [np.array([0], np.int32), np.array([0.0], np.float32)], {"select_cols": [0, 2]}),
    _csv("specials", _s("nan,inf,-inf", "1e40,-0,1e-50"),
         [np.array([0.0], np.float32), np.array([0.0], np.float32),
          np.array([0.0], np.float64)]),
    _csv("int_limits", _s("2147483647,-9223372036854775808", "-2147483648,9223372036854775807"),
         [np.array([0], np.int32), np.array([0], np.int64)]),
    _csv("whitespace", _s(" 1 , 2.5 ,  s "),
         [np.array([0], np.int32), np.array([0.0], np.float32), np.array([b""])]),
    # Refusals: a required (empty default) field missing, a bad number, out of range, the
    # wrong field count, a bad quote.
    _csv("missing_required", _s("1,", "2,3"), [np.array([0], np.int32),
                                               np.zeros((0,), np.int32)]),
    _csv("bad_int", _s("1,x"), [np.array([0], np.int32), np.array([0], np.int32)]),
    _csv("bad_float", _s("1.5.5"), [np.array([0.0], np.float32)]),
    _csv("int_overflow", _s("2147483648"), [np.array([0], np.int32)]),
    _csv("too_many_fields", _s("1,2,3"), [np.array([0], np.int32), np.array([0], np.int32)]),
    _csv("too_few_fields", _s("1"), [np.array([0], np.int32), np.array([0], np.int32)]),
    _csv("bad_quote", _s('1,"ab'), [np.array([0], np.int32), np.array([b""])]),
    _csv("default_rank2", _s("1"), [np.array([[0]], np.int32)]),
    _csv("default_two_values", _s("1"), [np.array([0, 1], np.int32)]),
    _csv("bad_delim", _s("1"), [np.array([0], np.int32)], {"field_delim": "ab"}),
    _csv("defaults_fed", _s("1,2.5", ",") , [np.array([7], np.int32),
                                             np.array([1.5], np.float32)], const=()),
]

# ---------------------------------------------------------------- examples

EX = [
    _ex({"age": {"i": [31]}, "score": {"f": [0.5, 1.5]}, "name": {"b": [b"ann"]},
         "tags": {"b": [b"x", b"y", b"z"]}, "ids": {"i": [3, -1]}}),
    _ex({"age": {"i": [7]}, "tags": {"b": []}, "score": {"f": [-2.5, 3.0]},
         "ids": {"i": [9, 8, 7, 6]}}),
    _ex({"score": {"f": [1.0, 2.0]}, "ids": {"i": []}, "name": {"b": [b"bob"]},
         "w": {"f": [0.25]}}),
]


def _parse_example(variant, serialized, sparse, dense, names=None, attrs=None):
    """sparse: [(key, dtype)]; dense: [(key, default array, shape)]."""
    inputs = {"serialized": serialized,
              "names": names if names is not None else np.zeros((0,), "S1"),
              "sparse_keys": [np.array(k.encode()) for k, _ in sparse],
              "dense_keys": [np.array(k.encode()) for k, _, _ in dense],
              "dense_defaults": [d for _, d, _ in dense]}
    a = {"sparse_types": [t for _, t in sparse], "dense_shapes": [list(s) for _, _, s in dense]}
    a.update(attrs or {})
    return Case("ParseExample", inputs, a, variant=variant, dtype="string",
                const=("sparse_keys", "dense_keys", "dense_defaults"))


_DENSE = [("age", np.array([-1], np.int64), [1]), ("score", np.zeros(2, np.float32), [2]),
          ("name", np.array(b"none"), [])]
_SPARSE = [("tags", "string"), ("ids", "int64"), ("w", "float32")]
CASES += [
    _parse_example("base", np.array(EX, dtype=bytes), _SPARSE, _DENSE),
    _parse_example("names", np.array(EX, dtype=bytes), _SPARSE, _DENSE,
                   names=_s("e0", "e1", "e2")),
    _parse_example("sparse_only", np.array(EX, dtype=bytes), _SPARSE, []),
    _parse_example("dense_only", np.array(EX[:2], dtype=bytes), [], _DENSE[:2]),
    _parse_example("empty_batch", np.zeros((0,), "S1"), _SPARSE, _DENSE),
    _parse_example("no_default", np.array(EX, dtype=bytes), [],
                   [("age", np.zeros((0,), np.int64), [1])]),
    _parse_example("wrong_type", np.array(EX[:1], dtype=bytes), [],
                   [("age", np.array([0.0], np.float32), [1])]),
    _parse_example("wrong_size", np.array(EX[:1], dtype=bytes), [],
                   [("score", np.zeros(3, np.float32), [3])]),
    _parse_example("sparse_wrong_type", np.array(EX[:1], dtype=bytes), [("ids", "float32")],
                   []),
    _parse_example("corrupt", _s("\x0a\x05ab"), [("ids", "int64")], []),
    _parse_example("dense_matrix", np.array([_ex({"m": {"f": [1, 2, 3, 4, 5, 6]}}),
                                             _ex({"m": {"f": [6, 5, 4, 3, 2, 1]}})],
                                            dtype=bytes),
                   [], [("m", np.zeros((2, 3), np.float32), [2, 3])]),
    _parse_example("default_broadcast", np.array(EX, dtype=bytes), [],
                   [("score", np.array([9.0, 9.5], np.float32), [2])]),
    _parse_example("empty_example", _s(""), [("ids", "int64")],
                   [("age", np.array([5], np.int64), [1])]),
]


def _parse_single(variant, serialized, sparse, dense, attrs=None):
    inputs = {"serialized": serialized, "dense_defaults": [d for _, d, _ in dense]}
    a = {"num_sparse": len(sparse), "sparse_keys": [k for k, _ in sparse],
         "dense_keys": [k for k, _, _ in dense], "sparse_types": [t for _, t in sparse],
         "dense_shapes": [list(s) for _, _, s in dense]}
    a.update(attrs or {})
    return Case("ParseSingleExample", inputs, a, variant=variant, dtype="string",
                const=("dense_defaults",))


CASES += [
    _parse_single("base", np.array(EX[0]), _SPARSE, _DENSE),
    _parse_single("second", np.array(EX[1]), _SPARSE, _DENSE),
    _parse_single("defaults", np.array(EX[2]), _SPARSE, _DENSE),
    _parse_single("sparse_only", np.array(EX[0]), _SPARSE, []),
    _parse_single("dense_only", np.array(EX[0]), [], _DENSE),
    _parse_single("no_default", np.array(EX[2]), [], [("age", np.zeros((0,), np.int64), [1])]),
    _parse_single("wrong_type", np.array(EX[0]), [], [("age", np.array([0.0], np.float32), [1])]),
    _parse_single("wrong_size", np.array(EX[0]), [], [("score", np.zeros(3, np.float32), [3])]),
    _parse_single("corrupt", np.array(b"\x0a\x05ab"), [("ids", "int64")], []),
    _parse_single("vector_input", np.array(EX[:2], dtype=bytes), [("ids", "int64")], []),
    _parse_single("num_sparse_mismatch", np.array(EX[0]), [("ids", "int64")], [],
                  {"num_sparse": 2}),
    _parse_single("empty_example", np.array(b""), [("ids", "int64")],
                  [("age", np.array([5], np.int64), [1])]),
]
