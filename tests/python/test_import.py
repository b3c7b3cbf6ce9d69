"""The package imports, exposes the TF 1.x names, and maps status codes to error classes."""

import pytest

from conftest import IMPORT_ERROR

if IMPORT_ERROR:
    pytest.skip(IMPORT_ERROR, allow_module_level=True)

import tensorflux as tx  # noqa: E402


def test_version():
    assert isinstance(tx.__version__, str) and tx.__version__.count(".") == 2


@pytest.mark.parametrize("name", [
    "Graph", "Operation", "Tensor", "TensorShape", "Dimension", "DType", "as_dtype", "constant",
    "placeholder", "placeholder_with_default", "identity", "identity_n", "add", "subtract",
    "multiply", "divide", "realdiv", "truediv", "negative", "square", "sqrt", "exp", "log",
    "maximum", "minimum", "matmul", "reshape", "shape", "size", "rank", "fill", "zeros_like",
    "ones_like", "cast", "zeros", "ones", "no_op", "group", "import_graph_def", "Session",
    "InteractiveSession", "get_default_graph", "reset_default_graph", "name_scope",
    "control_dependencies", "device", "convert_to_tensor", "get_default_session",
    "ConfigProto", "RunOptions", "RunMetadata", "GraphDef", "NodeDef", "AttrValue",
    "make_tensor_proto", "make_ndarray", "raw_ops", "errors", "dtypes", "math", "linalg",
])
def test_public_names(name):
    assert hasattr(tx, name)


def test_math_aliases_are_the_same_functions():
    assert tx.math.add is tx.add
    assert tx.math.multiply is tx.multiply
    assert tx.math.maximum is tx.maximum
    assert tx.linalg.matmul is tx.matmul


CODES = [
    ("CANCELLED", 1, "CancelledError"), ("UNKNOWN", 2, "UnknownError"),
    ("INVALID_ARGUMENT", 3, "InvalidArgumentError"),
    ("DEADLINE_EXCEEDED", 4, "DeadlineExceededError"), ("NOT_FOUND", 5, "NotFoundError"),
    ("ALREADY_EXISTS", 6, "AlreadyExistsError"),
    ("PERMISSION_DENIED", 7, "PermissionDeniedError"),
    ("RESOURCE_EXHAUSTED", 8, "ResourceExhaustedError"),
    ("FAILED_PRECONDITION", 9, "FailedPreconditionError"), ("ABORTED", 10, "AbortedError"),
    ("OUT_OF_RANGE", 11, "OutOfRangeError"), ("UNIMPLEMENTED", 12, "UnimplementedError"),
    ("INTERNAL", 13, "InternalError"), ("UNAVAILABLE", 14, "UnavailableError"),
    ("DATA_LOSS", 15, "DataLossError"), ("UNAUTHENTICATED", 16, "UnauthenticatedError"),
]


@pytest.mark.parametrize("const,code,cls_name", CODES)
def test_error_codes_and_classes(const, code, cls_name):
    assert getattr(tx.errors, const) == code
    cls = getattr(tx.errors, cls_name)
    assert issubclass(cls, tx.errors.OpError)
    assert tx.errors.exception_type_from_error_code(code) is cls
    assert tx.errors.error_code_from_exception_type(cls) == code
    e = cls(None, None, "boom")
    assert e.error_code == code and e.message == "boom" and str(e) == "boom"
    assert e.node_def is None and e.op is None


def test_op_error_constructor_matches_tf():
    e = tx.errors.OpError(None, None, "msg", tx.errors.ABORTED)
    assert e.error_code == 10
    assert tx.errors.exception_type_from_error_code(999) is tx.errors.UnknownError
