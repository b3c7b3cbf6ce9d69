"""The C++ extension (_pywrap_tensorflux), imported once with a clear error when it is missing."""

try:
    from tensorflux._pywrap_tensorflux import Session  # noqa: F401
    from tensorflux._pywrap_tensorflux import chrome_trace_from_step_stats  # noqa: F401
    from tensorflux._pywrap_tensorflux import infer_node  # noqa: F401
    from tensorflux._pywrap_tensorflux import list_local_devices  # noqa: F401
    from tensorflux._pywrap_tensorflux import op_list  # noqa: F401
    from tensorflux._pywrap_tensorflux import parse_device_name  # noqa: F401
    from tensorflux._pywrap_tensorflux import read_safetensors  # noqa: F401
    from tensorflux._pywrap_tensorflux import set_py_func_dispatcher  # noqa: F401
    from tensorflux._pywrap_tensorflux import tensor_proto_to_ndarray  # noqa: F401
    from tensorflux._pywrap_tensorflux import tensor_round_trip  # noqa: F401
    from tensorflux._pywrap_tensorflux import tensor_to_proto  # noqa: F401
    from tensorflux._pywrap_tensorflux import write_safetensors  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the build
    if isinstance(e.__cause__, KeyboardInterrupt):
        # Ctrl-C while the extension initialized (pybind11 wraps it in ImportError): an
        # interrupt, not a missing build.
        raise KeyboardInterrupt() from None
    raise ImportError(
        "tensorflux: cannot load the C++ extension _pywrap_tensorflux (%s). Build it with "
        "`make build` and put build/python on PYTHONPATH." % e) from e
