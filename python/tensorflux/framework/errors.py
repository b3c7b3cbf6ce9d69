"""Exceptions raised by TensorFlux, one class per canonical status code (as in tf.errors).

Every error the C++ engine reports arrives as a subclass of OpError chosen by its code; the
integer codes are the canonical ones (tx.errors.INVALID_ARGUMENT == 3, ...).
"""

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A failed operation: the code, the message and, when known, the node that raised it."""

    def __init__(self, node_def, op, message, error_code, *args):
        super().__init__(message, *args)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code

    @property
    def message(self):
        return self._message

    @property
    def op(self):
        """The tx.Operation that failed, when known, else None."""
        return self._op

    @property
    def node_def(self):
        """The NodeDef proto of the failed node, when known, else None."""
        return self._node_def

    @property
    def error_code(self):
        return self._error_code

    def __str__(self):
        return self._message

    def __reduce__(self):
        return (type(self), (self._node_def, self._op, self._message, self._error_code))


def _subclass(name, code, doc):
    def __init__(self, node_def, op, message, error_code=code, *args):
        OpError.__init__(self, node_def, op, message, error_code, *args)

    def __reduce__(self):
        return (type(self), (self._node_def, self._op, self._message))

    return type(name, (OpError,), {"__init__": __init__, "__reduce__": __reduce__,
                                   "__doc__": doc, "__module__": __name__})


CancelledError = _subclass("CancelledError", CANCELLED, "An operation or step was cancelled.")
UnknownError = _subclass("UnknownError", UNKNOWN, "An error without a more specific code.")
InvalidArgumentError = _subclass("InvalidArgumentError", INVALID_ARGUMENT,
                                 "An operation received an invalid argument.")
DeadlineExceededError = _subclass("DeadlineExceededError", DEADLINE_EXCEEDED,
                                  "A deadline expired before the operation completed.")
NotFoundError = _subclass("NotFoundError", NOT_FOUND,
                          "A requested entity (node, tensor, file) was not found.")
AlreadyExistsError = _subclass("AlreadyExistsError", ALREADY_EXISTS,
                               "An entity that was to be created already exists.")
PermissionDeniedError = _subclass("PermissionDeniedError", PERMISSION_DENIED,
                                  "The caller lacks permission for the operation.")
ResourceExhaustedError = _subclass("ResourceExhaustedError", RESOURCE_EXHAUSTED,
                                   "Some resource (memory, quota) was exhausted.")
FailedPreconditionError = _subclass("FailedPreconditionError", FAILED_PRECONDITION,
                                    "The system is not in a state the operation requires.")
AbortedError = _subclass("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _subclass("OutOfRangeError", OUT_OF_RANGE,
                            "The operation went past the valid range (e.g. end of input).")
UnimplementedError = _subclass("UnimplementedError", UNIMPLEMENTED,
                               "The operation is not implemented or supported.")
InternalError = _subclass("InternalError", INTERNAL, "An internal invariant was broken.")
UnavailableError = _subclass("UnavailableError", UNAVAILABLE,
                             "The service is currently unavailable.")
DataLossError = _subclass("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")
UnauthenticatedError = _subclass("UnauthenticatedError", UNAUTHENTICATED,
                                 "The request lacks valid authentication credentials.")

_CODE_TO_EXCEPTION = {
    CANCELLED: CancelledError,
    UNKNOWN: UnknownError,
    INVALID_ARGUMENT: InvalidArgumentError,
    DEADLINE_EXCEEDED: DeadlineExceededError,
    NOT_FOUND: NotFoundError,
    ALREADY_EXISTS: AlreadyExistsError,
    PERMISSION_DENIED: PermissionDeniedError,
    RESOURCE_EXHAUSTED: ResourceExhaustedError,
    FAILED_PRECONDITION: FailedPreconditionError,
    ABORTED: AbortedError,
    OUT_OF_RANGE: OutOfRangeError,
    UNIMPLEMENTED: UnimplementedError,
    INTERNAL: InternalError,
    UNAVAILABLE: UnavailableError,
    DATA_LOSS: DataLossError,
    UNAUTHENTICATED: UnauthenticatedError,
}
_EXCEPTION_TO_CODE = {cls: code for code, cls in _CODE_TO_EXCEPTION.items()}

_CODE_NAMES = {
    OK: "OK", CANCELLED: "CANCELLED", UNKNOWN: "UNKNOWN", INVALID_ARGUMENT: "INVALID_ARGUMENT",
    DEADLINE_EXCEEDED: "DEADLINE_EXCEEDED", NOT_FOUND: "NOT_FOUND",
    ALREADY_EXISTS: "ALREADY_EXISTS", PERMISSION_DENIED: "PERMISSION_DENIED",
    RESOURCE_EXHAUSTED: "RESOURCE_EXHAUSTED", FAILED_PRECONDITION: "FAILED_PRECONDITION",
    ABORTED: "ABORTED", OUT_OF_RANGE: "OUT_OF_RANGE", UNIMPLEMENTED: "UNIMPLEMENTED",
    INTERNAL: "INTERNAL", UNAVAILABLE: "UNAVAILABLE", DATA_LOSS: "DATA_LOSS",
    UNAUTHENTICATED: "UNAUTHENTICATED",
}


def exception_type_from_error_code(error_code):
    """The OpError subclass for a canonical code (UnknownError for codes it does not know)."""
    return _CODE_TO_EXCEPTION.get(error_code, UnknownError)


def error_code_from_exception_type(cls):
    """The canonical code of an OpError subclass (UNKNOWN for others)."""
    for klass in getattr(cls, "__mro__", ()):
        if klass in _EXCEPTION_TO_CODE:
            return _EXCEPTION_TO_CODE[klass]
    return UNKNOWN


def code_name(error_code):
    """"INVALID_ARGUMENT" for 3, ..."""
    return _CODE_NAMES.get(error_code, str(error_code))


_DUAL_CLASSES = {}


def _with_builtin(e, builtin):
    """A copy of OpError `e` whose class also derives from `builtin` (ValueError, TypeError), so
    that code written for TF 1.x's Python-side errors catches it too."""
    key = (type(e), builtin)
    cls = _DUAL_CLASSES.get(key)
    if cls is None:
        cls = type(type(e).__name__, (type(e), builtin), {"__module__": __name__})
        _DUAL_CLASSES[key] = cls
    return cls(e.node_def, e.op, e.message)


def _as_value_error(e):
    return _with_builtin(e, ValueError)


def _as_type_error(e):
    return _with_builtin(e, TypeError)
