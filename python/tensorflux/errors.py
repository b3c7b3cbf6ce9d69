"""tx.errors: OpError, one subclass per canonical code, and the code constants."""

from tensorflux.framework.errors import *  # noqa: F401,F403
from tensorflux.framework.errors import OpError  # noqa: F401
from tensorflux.framework.errors import error_code_from_exception_type  # noqa: F401
from tensorflux.framework.errors import exception_type_from_error_code  # noqa: F401
