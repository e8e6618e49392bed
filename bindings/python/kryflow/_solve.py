"""Solving sparse linear systems with kryflow: SciPy and NumPy on the host, CuPy on the device.

The arrays are checked and converted here (CSR with sorted, unique column indices in int32,
float64 values; contiguous float64 vectors), on the side where they live: NumPy and SciPy
arrays on the host, CuPy arrays on the device, so that a CuPy system goes to kryflow's cuda
backend without passing through the host. The extension module ``kryflow._kryflow`` copies
them into kryflow's own storage (``kryflow::CsrMatrix::copy_from``, ``kryflow::copy_bytes``)
and copies the solution back into an array of the same kind.
"""

import json
import os
import sys
import threading
from dataclasses import asdict, dataclass, field

import numpy as np
import scipy.sparse

from . import _kryflow
from ._errors import DimensionMismatch, InvalidInput, NotSupported

__all__ = ["SolveReport", "Solver", "solve"]

_FORMATS = ("csr", "sell", "bsr", "auto")
_PRECISIONS = ("float64", "float32")
_INDEX_MAX = np.iinfo(np.int32).max


@dataclass(frozen=True)
class SolveReport:
    """What a solve did (``kryflow::SolveReport``). Norms are 2-norms, times in seconds.

    Attributes
    ----------
    status : str
        ``"converged"``, ``"max_iterations"``, ``"breakdown"``, ``"diverged"``,
        ``"stagnated"`` or ``"nan_detected"``. ``"converged"`` only when the recursive residual
        met the target, max(relative_tolerance * ||b||, absolute_tolerance), and the true
        residual ||b - A x||, recomputed after the iteration, agrees within a factor of 10.
    converged : bool
        ``status == "converged"``.
    iterations : int
        Completed iterations (one Arnoldi step for GMRES).
    reason : str
        One sentence on why the iteration stopped; unless converged it ends with
        ``"; hint: ..."``, what to try instead.
    rhs_norm : float
        ||b||.
    initial_residual_norm : float
        ||b - A x0||.
    residual_norm : float
        The solver's recursive (or preconditioned) residual estimate at the end.
    true_residual_norm : float
        ||b - A x|| recomputed after the iteration.
    relative_residual : float
        ``true_residual_norm / rhs_norm`` (0 when b = 0).
    convergence_rate : float
        Geometric mean reduction of the residual per iteration.
    residual_history : numpy.ndarray
        float64, shape (iterations + 1,): the recursive residual norm per iteration, [0] being
        ||r_0||. Always a NumPy array, whichever side the system lived on.
    setup_seconds : float
        Seconds of the last setup or value update of the solver.
    solve_seconds : float
        Seconds of the solve.
    backend : str
        The backend that ran it, e.g. ``"cpu (16 threads)"`` or
        ``"cuda:0 (NVIDIA H100 80GB HBM3)"``.
    """

    status: str
    converged: bool
    iterations: int
    reason: str
    rhs_norm: float
    initial_residual_norm: float
    residual_norm: float
    true_residual_norm: float
    relative_residual: float
    convergence_rate: float
    residual_history: np.ndarray = field(repr=False)
    setup_seconds: float
    solve_seconds: float
    backend: str

    def to_dict(self):
        """The report as a dict of plain Python values (JSON-serializable).

        Returns
        -------
        dict
            Every attribute, ``residual_history`` as a list of floats. ``json.dump`` of it
            (with a ``"label"`` key added, if wanted) is a file that
            ``python -m kryflow.plot`` reads.
        """
        out = asdict(self)
        out["residual_history"] = [float(v) for v in self.residual_history]
        return out


# ---------------------------------------------------------------------------------------------
# Arguments


def _config_source(config):
    """The configuration source the C++ library resolves (a preset name, JSON text, a .json
    path, or "" for the defaults)."""
    if config is None:
        return ""
    if isinstance(config, dict):
        return json.dumps(config)
    if isinstance(config, os.PathLike):
        path = os.fspath(config)
        if path.endswith(".json"):
            return path
        with open(path, encoding="utf-8") as f:
            return f.read()
    if isinstance(config, str):
        return config
    raise TypeError(
        "config must be a preset name, JSON text, a dict, a path to a .json file or None, "
        f"not {type(config).__name__}"
    )


def _override_list(overrides):
    """Overrides as "dotted.key=value" strings."""
    if overrides is None:
        return []
    if isinstance(overrides, str):
        return [overrides]
    if isinstance(overrides, dict):
        return [
            f"{key}={value if isinstance(value, str) else json.dumps(value)}"
            for key, value in overrides.items()
        ]
    out = []
    for item in overrides:
        if not isinstance(item, str):
            raise TypeError(f"an override must be a 'key=value' string, not {type(item).__name__}")
        out.append(item)
    return out


def _check_choice(name, value, choices):
    if value not in choices:
        raise InvalidInput(f"unknown {name} {value!r}: valid choices are {', '.join(choices)}")


def _cupy_module():
    """CuPy when it has been imported (an array can only be a CuPy array then), else None."""
    return sys.modules.get("cupy")


def _is_cupy_array(x):
    cp = _cupy_module()
    return cp is not None and isinstance(x, cp.ndarray)


def _is_cupy_sparse(A):
    if _cupy_module() is None:
        return False
    try:
        import cupyx.scipy.sparse as csp
    except ImportError:  # pragma: no cover - CuPy without cupyx
        return False
    return csp.issparse(A)


def _sync_cupy():
    """Waits for the work queued on CuPy's current stream (kryflow runs on its own stream)."""
    _cupy_module().cuda.get_current_stream().synchronize()


def _check_device(*arrays):
    """kryflow's cuda backend runs on device 0."""
    for a in arrays:
        if a is not None and a.device.id != 0:
            raise NotSupported(
                f"a CuPy array on device {a.device.id}: kryflow's cuda backend runs on device 0"
            )


# ---------------------------------------------------------------------------------------------
# Matrices


class _Csr:
    """A CSR system matrix ready for the extension: int32 indptr and indices, float64 data, all
    contiguous, sorted unique columns; NumPy arrays, or CuPy arrays when on_device."""

    def __init__(self, on_device, shape, indptr, indices, data, block_size=0):
        self.on_device = on_device
        self.shape = (int(shape[0]), int(shape[1]))
        self.indptr = indptr
        self.indices = indices
        self.data = data
        self.block_size = block_size

    @property
    def nnz(self):
        return int(self.indices.shape[0])

    def pointers(self):
        if self.on_device:
            return self.indptr.data.ptr, self.indices.data.ptr, self.data.data.ptr
        return self.indptr.ctypes.data, self.indices.ctypes.data, self.data.ctypes.data

    def same_pattern(self, other):
        if self.on_device != other.on_device or self.shape != other.shape:
            return False
        if self.nnz != other.nnz:
            return False
        xp = _cupy_module() if self.on_device else np
        return bool(xp.array_equal(self.indptr, other.indptr)) and bool(
            xp.array_equal(self.indices, other.indices)
        )


def _check_sizes(shape, nnz):
    if max(shape) > _INDEX_MAX or nnz > _INDEX_MAX:
        raise NotSupported(
            f"a {shape[0]} x {shape[1]} matrix with {nnz} entries: beyond kryflow's 32-bit "
            "indices"
        )


def _host_csr(A):
    """A SciPy sparse matrix or array (any format) or a dense 2-D NumPy array as a host _Csr."""
    if isinstance(A, np.ndarray):
        if A.ndim != 2:
            raise DimensionMismatch(f"A must be 2-D, not of shape {A.shape}")
        A = scipy.sparse.csr_array(A)
    elif not scipy.sparse.issparse(A):
        raise TypeError(
            "A must be a scipy.sparse matrix or array (or a cupyx.scipy.sparse matrix), "
            f"not {type(A).__name__}"
        )
    if A.dtype.kind == "c":
        raise NotSupported("complex matrices are not supported: kryflow solves real systems")
    block_size = 0
    if A.format == "bsr" and A.blocksize[0] == A.blocksize[1]:
        block_size = int(A.blocksize[0])
    owned = A.format != "csr"
    if owned:
        A = A.tocsr()
    if not A.has_canonical_format:
        if not owned:
            A = A.copy()  # never sort or sum the caller's matrix in place
        A.sum_duplicates()  # sorts the columns of each row and sums duplicates
    _check_sizes(A.shape, A.nnz)
    indptr = np.ascontiguousarray(A.indptr, dtype=np.int32)
    indices = np.ascontiguousarray(A.indices, dtype=np.int32)
    data = np.ascontiguousarray(A.data, dtype=np.float64)
    return _Csr(False, A.shape, indptr, indices, data, block_size)


def _device_csr(A):
    """A cupyx.scipy.sparse matrix (any format) as a device _Csr, converted on the device."""
    cp = _cupy_module()
    if A.dtype.kind == "c":
        raise NotSupported("complex matrices are not supported: kryflow solves real systems")
    owned = A.format != "csr"
    if owned:
        A = A.tocsr()
    if not A.has_canonical_format:
        if not owned:
            A = A.copy()
        A.sum_duplicates()
    _check_sizes(A.shape, A.nnz)
    indptr = cp.ascontiguousarray(A.indptr, dtype=cp.int32)
    indices = cp.ascontiguousarray(A.indices, dtype=cp.int32)
    data = cp.ascontiguousarray(A.data, dtype=cp.float64)
    _check_device(indptr, indices, data)
    return _Csr(True, A.shape, indptr, indices, data)


def _as_csr(A):
    return _device_csr(A) if _is_cupy_sparse(A) else _host_csr(A)


def _values_array(values, csr):
    """New values given as a 1-D array in CSR order (on the matrix's side), float64."""
    if csr.on_device:
        if not _is_cupy_array(values):
            raise InvalidInput("the matrix lives on the device: give its new values as a CuPy array")
        v = _cupy_module().ascontiguousarray(values, dtype=np.float64)
        _check_device(v)
    else:
        if _is_cupy_array(values):
            raise InvalidInput("the matrix lives on the host: give its new values as a NumPy array")
        v = np.asarray(values)
        if v.dtype.kind == "c":
            raise NotSupported("complex values are not supported: kryflow solves real systems")
        v = np.ascontiguousarray(v, dtype=np.float64)
    if v.ndim != 1 or v.shape[0] != csr.nnz:
        raise DimensionMismatch(
            f"new values of shape {v.shape}: the matrix stores {csr.nnz} entries (CSR order)"
        )
    return v


# ---------------------------------------------------------------------------------------------
# Vectors


def _vector(x, n, on_device, name):
    """x as a contiguous float64 vector of n entries on the system's side (a new array when a
    conversion is needed; the caller's otherwise)."""
    if on_device:
        if not _is_cupy_array(x):
            raise InvalidInput(
                f"A is a CuPy matrix, so {name} must be a CuPy array, not {type(x).__name__}"
            )
        v = _cupy_module().ascontiguousarray(x, dtype=np.float64)
        _check_device(v)
    else:
        if _is_cupy_array(x):
            raise InvalidInput(
                f"{name} is a CuPy array but A lives on the host: give A as a "
                "cupyx.scipy.sparse matrix to solve on the device"
            )
        v = np.asarray(x)
        if v.dtype.kind == "c":
            raise NotSupported(f"{name} is complex: kryflow solves real systems")
        v = np.ascontiguousarray(v, dtype=np.float64)
    if v.ndim != 1:
        raise DimensionMismatch(f"{name} must be a 1-D array, not of shape {v.shape}")
    if v.shape[0] != n:
        raise DimensionMismatch(f"{name} has {v.shape[0]} entries, A has {n} rows")
    return v


def _pointer(v, on_device):
    return v.data.ptr if on_device else v.ctypes.data


# ---------------------------------------------------------------------------------------------
# The solver


class Solver:
    """A configured kryflow solver and preconditioner, set up once and reused.

    Wraps ``kryflow::Solver`` (``include/kryflow/solver.hpp``) and the matrix it is set up on,
    stored by ``kryflow::store_matrix``. Set up on a matrix, re-set up when its values change
    with the same pattern (a value-only re-setup of the preconditioner, much cheaper than a
    new setup for AMG), and solve as many right-hand sides as needed.

    Parameters
    ----------
    config : str, dict, os.PathLike or None, optional
        A preset name (see :func:`kryflow.presets`, e.g. ``"pcg_jacobi"``, ``"pcg_amg"``,
        ``"bicgstab_jacobi"``), JSON text (starting with ``{``), a dict (dumped to JSON), or a
        path to a ``.json`` file. ``None`` takes every default: PCG with Jacobi, relative
        tolerance 1e-8, at most 1000 iterations. The keys are listed in ``docs/config.md``
        (``kryflow config-doc``). Resolved by ``kryflow::config::resolve_configuration``.
    overrides : sequence of str, str or dict, optional
        ``"dotted.key=value"`` assignments applied in order on top of ``config``, e.g.
        ``["solver.relative_tolerance=1e-10", "solver.max_iterations=500"]``; a dict maps
        dotted keys to values.
    backend : {None, "cuda", "cpu", "reference"}, optional
        Where the solve runs. ``None`` chooses at :meth:`setup`: ``"cuda"`` for a CuPy matrix;
        for a SciPy matrix cuda when this build has it and a device opens, else cpu (the
        arrays are then uploaded and the solution downloaded).
    format : {"csr", "sell", "bsr", "auto"}, optional
        How the matrix is stored for its products: CSR, SELL-C-sigma, BSR (block size
        detected from the pattern, or taken from a ``scipy.sparse.bsr_array`` with square
        blocks) or the format kryflow's advisor chooses. The iterations do not depend on it.
    precision : {"float64", "float32"}, optional
        How the matrix values are stored; vectors and arithmetic stay float64 (float32
        halves the value bytes of every product).

    Raises
    ------
    ConfigError
        Unknown preset, invalid JSON, unknown key, wrong type or out-of-range value; the
        message names the JSON path.
    InvalidInput
        Unknown ``format`` or ``precision``; a configuration file that cannot be opened.

    Examples
    --------
    >>> solver = kryflow.Solver("pcg_amg", ["solver.relative_tolerance=1e-10"])
    >>> solver.setup(A)                       # doctest: +SKIP
    >>> x, report = solver.solve(b)           # doctest: +SKIP
    >>> solver.update_values(2.0 * A)         # same pattern, new values   # doctest: +SKIP
    >>> x2, report2 = solver.solve(b)         # x2 == x / 2                # doctest: +SKIP
    """

    def __init__(self, config=None, overrides=(), backend=None, format="csr", precision="float64"):
        _check_choice("format", format, _FORMATS)
        _check_choice("precision", precision, _PRECISIONS)
        if backend is not None and not isinstance(backend, str):
            raise TypeError(f"backend must be a string or None, not {type(backend).__name__}")
        text = _kryflow.resolve_configuration(_config_source(config), _override_list(overrides))
        self._handle = _kryflow.Solver(text)
        self._backend_name = backend
        self._format = format
        self._precision = precision
        self._matrix = None  # the _kryflow.Matrix the solver is set up on
        self._csr = None  # its pattern (and the values it was set up with)
        self._lock = threading.Lock()

    @property
    def configuration(self):
        """dict: the resolved configuration, every default filled in
        (``kryflow::Solver::configuration``); ``Solver(solver.configuration)`` builds the same."""
        return json.loads(self._handle.configuration_json)

    @property
    def backend(self):
        """str or None: the name of the backend the solver is set up on (None before setup)."""
        return None if self._matrix is None else self._matrix.backend.name

    @property
    def storage(self):
        """str or None: how the matrix is stored, e.g. ``"CSR (float64 values)"`` or
        ``"BSR-4 (float32 values)"`` (None before setup)."""
        return None if self._matrix is None else self._matrix.format

    @property
    def shape(self):
        """tuple of int or None: the shape of the matrix set up on (None before setup)."""
        return None if self._csr is None else self._csr.shape

    @property
    def preconditioner_summary(self):
        """str: the preconditioner's own report after setup (AMG levels, fill, ...); may be
        empty."""
        return self._handle.preconditioner_summary

    def setup(self, A):
        """Stores ``A`` on the backend and sets the preconditioner up on it.

        Parameters
        ----------
        A : scipy.sparse matrix or array, or cupyx.scipy.sparse matrix
            The square system matrix, real. A SciPy matrix of any format (and a dense 2-D NumPy
            array) is converted to CSR with sorted column indices on the host, duplicates
            summed, indices as int32 and values as float64, without modifying ``A``. A CuPy
            matrix is converted the same way on the device, and its arrays are copied device to
            device (``kryflow::CsrMatrix::copy_from``), never through the host; it needs the
            cuda backend.

        Returns
        -------
        Solver
            ``self``.

        Raises
        ------
        InvalidInput
            A zero or missing diagonal entry the preconditioner needs (``pcg_jacobi``), NaN,
            a singular block, a CuPy matrix with a host backend, a matrix that does not tile
            into blocks for ``format="bsr"``, float32 overflow.
        DimensionMismatch
            ``A`` is not square.
        NotSupported
            Complex values; more than 2**31 - 1 rows or entries; a CuPy array on a device
            other than 0.
        NotCompiled
            ``backend="cuda"`` in a build without CUDA.
        BackendError, OutOfMemory
            The device cannot be opened or the matrix or the preconditioner does not fit.
        """
        csr = _as_csr(A)
        if csr.shape[0] != csr.shape[1]:
            raise DimensionMismatch(f"A must be square, not {csr.shape[0]} x {csr.shape[1]}")
        name = self._backend_name
        if name is None:
            name = "cuda" if csr.on_device else ""
        elif csr.on_device and name != "cuda":
            raise InvalidInput(f"a CuPy matrix needs backend='cuda', not {name!r}")
        with self._lock:
            backend = _kryflow.backend(name)
            block_size = csr.block_size if self._format == "bsr" else 0
            if csr.on_device:
                _sync_cupy()
            matrix = _kryflow.Matrix.from_csr(
                backend,
                csr.on_device,
                csr.shape[0],
                csr.shape[1],
                csr.nnz,
                *csr.pointers(),
                self._format,
                block_size,
                self._precision,
            )
            self._matrix = None
            self._csr = None
            self._handle.setup(matrix)
            self._matrix = matrix
            self._csr = csr
        return self

    def update_values(self, A_new):
        """Replaces the matrix's values, same pattern, and re-sets the preconditioner up.

        Calls ``kryflow::StoredMatrix::update_values`` with the values in CSR order, then
        ``kryflow::Solver::update_values`` (a value-only re-setup: AMG keeps its coarsening
        and recomputes the level operators).

        Parameters
        ----------
        A_new : sparse matrix, or 1-D array
            A matrix of the same kind (SciPy, or CuPy when set up on a CuPy matrix) with the
            pattern of the matrix set up on (after the same conversion to sorted CSR), or its
            values alone: a 1-D array of ``nnz`` values in that CSR order (NumPy or CuPy, as
            the matrix was).

        Returns
        -------
        Solver
            ``self``.

        Raises
        ------
        InvalidInput
            Setup has not run; ``A_new`` has another pattern or lives on the other side; the
            re-setup fails (a zero diagonal entry, NaN, float32 overflow).
        DimensionMismatch
            Another shape, or another number of values.
        """
        if self._csr is None:
            raise InvalidInput("Solver.update_values: setup has not run")
        old = self._csr
        if scipy.sparse.issparse(A_new) or _is_cupy_sparse(A_new):
            new = _as_csr(A_new)
            if new.on_device != old.on_device:
                side = "the device (CuPy)" if old.on_device else "the host (SciPy)"
                raise InvalidInput(f"the matrix was set up on {side}: give A_new there too")
            if new.shape != old.shape:
                raise DimensionMismatch(f"A_new is {new.shape}, the matrix set up on is {old.shape}")
            if not new.same_pattern(old):
                raise InvalidInput(
                    "A_new has another sparsity pattern than the matrix set up on: call setup"
                )
            values = new.data
        else:
            values = _values_array(A_new, old)
        with self._lock:
            if old.on_device:
                _sync_cupy()
            self._matrix.update_values(old.on_device, old.nnz, _pointer(values, old.on_device))
            self._handle.update_values()
        return self

    def solve(self, b, x0=None):
        """Solves A x = b with the matrix of the last setup or value update.

        Parameters
        ----------
        b : numpy.ndarray or cupy.ndarray
            The right-hand side, 1-D with as many entries as A has rows; converted to float64.
            A NumPy array (any array-like) for a SciPy matrix, a CuPy array for a CuPy matrix.
        x0 : numpy.ndarray or cupy.ndarray, optional
            The initial guess (same kind and length as ``b``; not modified). Zeros when omitted.

        Returns
        -------
        x : numpy.ndarray or cupy.ndarray
            The solution, float64, shape (n,): a NumPy array for a SciPy system, a CuPy array
            for a CuPy system (copied device to device). Returned whatever the status: check
            ``report.converged``.
        report : SolveReport
            Status, iterations, residuals, residual history and times. A solve that does not
            converge is reported, not raised.

        Raises
        ------
        InvalidInput
            Setup has not run; ``b`` or ``x0`` lives on the other side than A.
        DimensionMismatch
            ``b`` or ``x0`` has the wrong length or is not 1-D.
        NotSupported
            Complex ``b`` or ``x0``.
        BackendError, OutOfMemory
            Device failures.
        """
        if self._csr is None:
            raise InvalidInput("Solver.solve: setup has not run")
        on_device = self._csr.on_device
        n = self._csr.shape[0]
        bv = _vector(b, n, on_device, "b")
        if x0 is None:
            xp = _cupy_module() if on_device else np
            x = xp.empty(n, dtype=np.float64)
        else:
            x = _vector(x0, n, on_device, "x0")
            x = x.copy()  # the caller's x0 is left as it is
        with self._lock:
            if on_device:
                _sync_cupy()
            info = self._handle.solve(
                on_device, n, _pointer(bv, on_device), _pointer(x, on_device), x0 is not None
            )
        info["residual_history"] = np.asarray(info["residual_history"], dtype=np.float64)
        return x, SolveReport(**info)

    def __repr__(self):
        solver = self.configuration.get("solver", {})
        kind = solver.get("type", "?")
        pre = solver.get("preconditioner", {}).get("type", "none")
        where = f"set up on {self.shape[0]} x {self.shape[1]}, {self.backend}" if self._csr else "not set up"
        return f"<kryflow.Solver {kind} with {pre}, {where}>"


def solve(
    A,
    b,
    config=None,
    overrides=(),
    backend=None,
    x0=None,
    format="csr",
    precision="float64",
):
    """Solves the sparse linear system A x = b with a kryflow solver.

    One call of ``Solver(config, overrides, backend, format, precision).setup(A).solve(b, x0)``;
    use :class:`Solver` to reuse the setup (several right-hand sides, new values with the same
    pattern).

    Parameters
    ----------
    A : scipy.sparse matrix or array, or cupyx.scipy.sparse matrix
        Square and real, shape (n, n). SciPy matrices of any format (BSR, COO, CSC, ...) are
        converted to CSR with sorted int32 indices and float64 values on the host; CuPy
        matrices the same way on the device, and then copied device to device, never through
        the host (they need the cuda backend).
    b : numpy.ndarray or cupy.ndarray
        The right-hand side, shape (n,), converted to float64; NumPy for a SciPy matrix, CuPy
        for a CuPy matrix.
    config : str, dict, os.PathLike or None, optional
        A preset name (``"pcg_jacobi"``, ``"pcg_amg"``, ``"bicgstab_jacobi"``,
        ``"gmres_ilu0"``, ...; :func:`kryflow.presets` lists them), JSON text, a dict or a
        ``.json`` path. ``None``: every default, PCG with Jacobi to a relative residual of
        1e-8 in at most 1000 iterations.
    overrides : sequence of str, str or dict, optional
        ``"dotted.key=value"`` assignments on top of ``config``, e.g.
        ``["solver.relative_tolerance=1e-10"]``.
    backend : {None, "cuda", "cpu", "reference"}, optional
        ``None``: cuda for CuPy input; for SciPy input cuda when a device opens, else cpu.
    x0 : numpy.ndarray or cupy.ndarray, optional
        Initial guess, shape (n,); zeros when omitted. Not modified.
    format : {"csr", "sell", "bsr", "auto"}, optional
        Storage format of the matrix on the backend.
    precision : {"float64", "float32"}, optional
        Storage precision of the matrix values (vectors and arithmetic stay float64).

    Returns
    -------
    x : numpy.ndarray or cupy.ndarray
        The solution, float64, shape (n,), of the kind ``b`` was (NumPy in, NumPy out; CuPy in,
        CuPy out).
    report : SolveReport
        What the solve did. Not converging is reported in ``report.status``, never raised.

    Raises
    ------
    ConfigError
        Unknown preset, invalid JSON, unknown configuration key or out-of-range value.
    InvalidInput
        Zero or missing diagonal entry with a Jacobi preconditioner, NaN, arrays on different
        sides, unknown format or precision.
    DimensionMismatch
        Non-square ``A``, ``b`` or ``x0`` of the wrong length.
    NotSupported, NotCompiled, BackendError, OutOfMemory
        See :class:`Solver`.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, kryflow
    >>> n = 100
    >>> A = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n), format="csr")
    >>> x, report = kryflow.solve(A, np.ones(n), "pcg_jacobi", backend="cpu")
    >>> report.converged
    True
    """
    solver = Solver(config, overrides, backend, format, precision)
    solver.setup(A)
    return solver.solve(b, x0)
