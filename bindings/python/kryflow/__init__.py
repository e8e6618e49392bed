"""kryflow: sparse linear solvers for CFD, on NVIDIA GPUs first, from SciPy and CuPy.

Krylov methods (PCG, pipelined CG, BiCGStab, restarted and flexible GMRES) with Jacobi, ILU,
approximate-inverse, Gauss-Seidel and algebraic multigrid preconditioners, configured by JSON
presets, running on a CUDA device, on the host with OpenMP, or on the single-threaded reference
backend.

>>> import numpy as np, scipy.sparse as sp, kryflow
>>> A = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(50, 50), format="csr")
>>> x, report = kryflow.solve(A, np.ones(50), "pcg_jacobi", backend="cpu")
>>> report.status
'converged'

Public API
----------
solve
    Solve A x = b in one call.
Solver
    Set up once, update the values, solve many right-hand sides.
SolveReport
    What a solve did.
plot_residual_history
    Residual histories drawn with matplotlib.
presets, backends, built_with_cuda, version
    What this build holds.
Error, InvalidInput, DimensionMismatch, ParseError, ConfigError, NotSupported, NotCompiled,
BackendError, OutOfMemory
    The exceptions.
"""

from . import _errors, _kryflow
from ._errors import (
    BackendError,
    ConfigError,
    DimensionMismatch,
    Error,
    InvalidInput,
    NotCompiled,
    NotSupported,
    OutOfMemory,
    ParseError,
    _types,
)

_kryflow._set_error_types(_types())

from ._solve import SolveReport, Solver, solve  # noqa: E402
# matplotlib is imported only when a plot is drawn.
from ._plot import plot_residual_history  # noqa: E402

#: str: the version of the kryflow library this package holds ("MAJOR.MINOR.PATCH").
version = _kryflow.version()
__version__ = version

__all__ = [
    "solve",
    "Solver",
    "SolveReport",
    "plot_residual_history",
    "presets",
    "preset_directory",
    "backends",
    "built_with_cuda",
    "version",
] + _errors.__all__


def presets():
    """Names of the shipped configuration presets.

    Returns
    -------
    list of str
        Sorted names, e.g. ``["bicgstab_jacobi", ..., "pcg_amg", "pcg_jacobi", ...]``, each
        usable as ``config`` of :func:`solve` and :class:`Solver`. They are the JSON files in
        :func:`preset_directory` (``kryflow::config::preset_names``).
    """
    return list(_kryflow.preset_names())


def preset_directory():
    """The folder the presets are read from.

    Returns
    -------
    str
        ``kryflow/share/kryflow/configs`` inside the installed package, or the folder the
        environment variable ``KRYFLOW_PRESET_DIR`` names when set
        (``kryflow::config::preset_directory``).
    """
    return _kryflow.preset_directory()


def built_with_cuda():
    """Whether this build holds the cuda backend.

    Returns
    -------
    bool
        True when the library was compiled with CUDA (``kryflow::built_with_cuda``); a device
        may still be absent at run time: :func:`backends` says whether one opens.
    """
    return bool(_kryflow.built_with_cuda())


def backends():
    """The backends available in this process.

    Returns
    -------
    list of str
        Among ``"cuda"`` (compiled in and device 0 opens), ``"cpu"`` (OpenMP on the host) and
        ``"reference"`` (single-threaded, the oracle the others are tested against), in that
        order. Opening the cuda backend the first time creates its device context.
    """
    return list(_kryflow.available_backends())
