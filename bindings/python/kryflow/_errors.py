"""The exceptions kryflow raises, one for each of the C++ library's exception types.

Numerical outcomes (an iteration limit, a breakdown, divergence, stagnation, NaN) are never
raised: they are in the :class:`~kryflow.SolveReport` of a solve. These exceptions are for
misuse and for failures of the environment.

Every exception raised from the C++ library carries the attribute ``where`` (the place in
kryflow's sources that raised it, ``"file:line"``); :class:`ConfigError` also has ``path``
(the JSON path of the offending key), :class:`ParseError` ``file`` and ``line``, and
:class:`OutOfMemory` ``bytes_requested`` and ``bytes_free``. Exceptions raised by the Python
layer itself (argument checks) have ``where`` set to ``None``.
"""

__all__ = [
    "Error",
    "InvalidInput",
    "DimensionMismatch",
    "ParseError",
    "ConfigError",
    "NotSupported",
    "NotCompiled",
    "BackendError",
    "OutOfMemory",
]


class Error(RuntimeError):
    """Base class of every exception kryflow raises (``kryflow::Error``)."""

    where = None


class InvalidInput(Error, ValueError):
    """The caller passed data kryflow cannot use (``kryflow::InvalidInput``).

    A zero or missing diagonal entry a preconditioner needs, NaN, a non-square matrix,
    unsorted or out-of-range indices, arrays of the wrong type or on the wrong side (host or
    device), an unknown storage format or precision.
    """


class DimensionMismatch(InvalidInput):
    """Operand shapes do not agree (``kryflow::DimensionMismatch``), e.g. ``b`` of the wrong
    length or new values of another count than the matrix stores."""


class ParseError(InvalidInput):
    """A malformed input file (``kryflow::ParseError``); the message names the file and line."""

    file = None
    line = None


class ConfigError(Error, ValueError):
    """A configuration key or value is unknown or invalid, or a preset does not exist
    (``kryflow::ConfigError``); the message and ``path`` name the JSON path."""

    path = None


class NotSupported(Error):
    """The request is valid but this combination is not implemented (``kryflow::NotSupported``),
    e.g. complex values or more entries than 32-bit indices reach."""


class NotCompiled(Error):
    """The request needs a component this build does not contain (``kryflow::NotCompiled``),
    e.g. the cuda backend in a build without CUDA."""


class BackendError(Error):
    """A backend call failed (``kryflow::BackendError``): the CUDA device cannot be opened, or
    device work reported an error."""


class OutOfMemory(BackendError, MemoryError):
    """An allocation on the backend failed (``kryflow::OutOfMemory``); the process survives and
    the caller may free memory and retry."""

    bytes_requested = None
    bytes_free = None


def _types():
    """The classes by name, as the extension module registers them."""
    return {name: globals()[name] for name in __all__}
