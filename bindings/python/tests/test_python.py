"""Tests of the kryflow Python package on the cpu backend (SciPy and NumPy on the host).

The corpus matrices are read from $KRYFLOW_DATA_DIR/matrices (default: ../shared/data beside
the repository); the tests that need them are skipped when they are absent.
"""

import json
import os
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import kryflow

REPO = pathlib.Path(__file__).resolve().parents[3]
DATA = pathlib.Path(os.environ.get("KRYFLOW_DATA_DIR") or REPO.parent / "shared" / "data")
MATRICES = DATA / "matrices"


def corpus_matrix(relative):
    path = MATRICES / relative
    if not path.is_file():
        pytest.skip(f"corpus matrix {path} not found (set KRYFLOW_DATA_DIR)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # mmread's spmatrix default
        return sp.csr_array(scipy.io.mmread(str(path)))


def corpus_vector(relative):
    path = MATRICES / relative
    if not path.is_file():
        pytest.skip(f"corpus vector {path} not found (set KRYFLOW_DATA_DIR)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        v = scipy.io.mmread(str(path))
    return np.asarray(v.toarray() if sp.issparse(v) else v, dtype=np.float64).ravel()


def true_relative_residual(A, b, x):
    return np.linalg.norm(b - A @ x) / np.linalg.norm(b)


def poisson2d(n):
    """The 5-point Laplacian on an n x n grid (SPD, diagonal 4)."""
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    eye = sp.identity(n)
    return sp.csr_array(sp.kron(t, eye) + sp.kron(eye, t))


def random_rhs(n, seed=1):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, n)


# ---------------------------------------------------------------------------------------------
# The package


def test_package_facts():
    assert kryflow.version == kryflow.__version__
    assert kryflow.version.count(".") == 2
    assert isinstance(kryflow.built_with_cuda(), bool)
    backends = kryflow.backends()
    assert "cpu" in backends and "reference" in backends
    presets = kryflow.presets()
    for name in ("pcg_jacobi", "pcg_amg", "gmres_ilu0", "bicgstab_jacobi"):
        assert name in presets
    assert presets == sorted(presets)
    # The presets installed inside the package, where the library looks for them.
    assert pathlib.Path(kryflow.preset_directory(), "pcg_amg.json").is_file()


# ---------------------------------------------------------------------------------------------
# Corpus systems


def test_ex10hs_pcg_amg():
    A = corpus_matrix("suitesparse/ex10hs/ex10hs.mtx.gz")
    b = A @ random_rhs(A.shape[0])
    x, report = kryflow.solve(A, b, "pcg_amg", backend="cpu")
    assert report.converged, report.reason
    assert report.status == "converged"
    assert report.backend.startswith("cpu")
    assert true_relative_residual(A, b, x) <= 1e-7
    assert report.relative_residual == pytest.approx(
        report.true_residual_norm / report.rhs_norm, rel=1e-12
    )
    assert report.rhs_norm == pytest.approx(np.linalg.norm(b), rel=1e-12)
    assert isinstance(report.residual_history, np.ndarray)
    assert report.residual_history.shape == (report.iterations + 1,)
    assert report.residual_history[0] == pytest.approx(report.initial_residual_norm)
    assert report.setup_seconds >= 0.0 and report.solve_seconds > 0.0


def test_ex19_cavity_gmres_ilu0():
    A = corpus_matrix("petsc_ex19/ex19_cavity_33.mtx.gz")
    b = corpus_vector("petsc_ex19/ex19_cavity_33_b.mtx.gz")
    assert abs(A - A.T).max() > 0  # nonsymmetric
    x, report = kryflow.solve(A, b, "gmres_ilu0", backend="cpu")
    assert report.converged, report.reason
    assert true_relative_residual(A, b, x) <= 1e-7


def test_solve_and_solver_agree():
    A = corpus_matrix("petsc_ex19/ex19_cavity_33.mtx.gz")
    b = corpus_vector("petsc_ex19/ex19_cavity_33_b.mtx.gz")
    x1, r1 = kryflow.solve(A, b, "bicgstab_jacobi", backend="cpu")
    solver = kryflow.Solver("bicgstab_jacobi", backend="cpu")
    solver.setup(A)
    x2, r2 = solver.solve(b)
    assert r1.converged and r2.converged
    assert r1.iterations == r2.iterations
    np.testing.assert_array_equal(x1, x2)
    # A second solve with the same setup gives the same again.
    x3, r3 = solver.solve(b)
    assert r3.iterations == r2.iterations
    np.testing.assert_array_equal(x3, x2)


# ---------------------------------------------------------------------------------------------
# Solver: setup, value updates, initial guesses, configurations


def test_update_values_scaled_by_two_halves_x():
    A = poisson2d(40)
    b = random_rhs(A.shape[0])
    solver = kryflow.Solver("pcg_amg", ["solver.relative_tolerance=1e-10"], backend="cpu")
    solver.setup(A)
    x, report = solver.solve(b)
    assert report.converged, report.reason
    solver.update_values(2.0 * A)
    x2, report2 = solver.solve(b)
    assert report2.converged, report2.reason
    np.testing.assert_allclose(x2, x / 2.0, rtol=1e-7, atol=1e-9 * np.abs(x).max())
    assert true_relative_residual(2.0 * A, b, x2) <= 1e-9
    # The values alone, in CSR order, as a NumPy array: back to A.
    solver.update_values(A.data)
    x3, _ = solver.solve(b)
    np.testing.assert_allclose(x3, x, rtol=1e-7, atol=1e-9 * np.abs(x).max())


def test_update_values_checks_the_pattern():
    A = poisson2d(10)
    solver = kryflow.Solver("pcg_jacobi", backend="cpu").setup(A)
    other = sp.csr_array(A + sp.diags([1.0], [5], shape=A.shape))
    with pytest.raises(kryflow.InvalidInput):
        solver.update_values(other)
    with pytest.raises(kryflow.DimensionMismatch):
        solver.update_values(np.ones(A.nnz - 1))
    with pytest.raises(kryflow.DimensionMismatch):
        solver.update_values(poisson2d(11))
    with pytest.raises(kryflow.InvalidInput):
        kryflow.Solver().update_values(A)
    with pytest.raises(kryflow.InvalidInput):
        kryflow.Solver().solve(np.ones(A.shape[0]))


def test_initial_guess_and_numpy_out():
    A = poisson2d(20)
    xs = random_rhs(A.shape[0], seed=3)
    b = A @ xs
    x, report = kryflow.solve(A, b, backend="cpu")
    assert type(x) is np.ndarray and x.dtype == np.float64 and x.shape == b.shape
    assert report.converged
    # Starting from the solution: converged at once; x0 is not modified.
    x0 = xs.copy()
    x1, report1 = kryflow.solve(A, b, backend="cpu", x0=x0)
    np.testing.assert_array_equal(x0, xs)
    assert report1.converged and report1.iterations <= 1
    np.testing.assert_allclose(x1, xs, rtol=1e-10)
    # b as a list, float32 and non-contiguous arrays are converted.
    _, r_list = kryflow.solve(A, list(b), backend="cpu")
    assert r_list.iterations == report.iterations
    wide = np.zeros(2 * len(b))
    wide[::2] = b
    x_strided, r_strided = kryflow.solve(A, wide[::2], backend="cpu")
    assert r_strided.iterations == report.iterations
    np.testing.assert_array_equal(x_strided, x)
    # b = 0 gives x = 0 at once.
    x_zero, r_zero = kryflow.solve(A, np.zeros(A.shape[0]), backend="cpu")
    assert r_zero.converged and r_zero.iterations == 0 and not x_zero.any()


def test_configuration_sources(tmp_path):
    A = poisson2d(16)
    b = random_rhs(A.shape[0])
    text = '{"solver": {"type": "pcg", "relative_tolerance": 1e-10, "preconditioner": {"type": "jacobi"}}}'
    as_dict = json.loads(text)
    path = tmp_path / "cg.json"
    path.write_text(text)
    reports = [
        kryflow.solve(A, b, config, backend="cpu")[1] for config in (text, as_dict, str(path), path)
    ]
    assert all(r.converged for r in reports)
    assert len({r.iterations for r in reports}) == 1
    overridden = kryflow.solve(A, b, "pcg_jacobi", ["solver.relative_tolerance=1e-10"], "cpu")[1]
    assert overridden.iterations == reports[0].iterations
    as_dict_overrides = kryflow.solve(
        A, b, "pcg_jacobi", {"solver.relative_tolerance": 1e-10}, "cpu"
    )[1]
    assert as_dict_overrides.iterations == reports[0].iterations

    solver = kryflow.Solver("pcg_amg", ["solver.max_iterations=77"])
    config = solver.configuration
    assert config["solver"]["type"] == "pcg"
    assert config["solver"]["max_iterations"] == 77
    assert config["solver"]["preconditioner"]["type"] == "amg"
    # The resolved configuration builds the same solver.
    assert kryflow.Solver(config).configuration == config
    # None: every default (PCG with Jacobi).
    default = kryflow.Solver().configuration["solver"]
    assert default["type"] == "pcg" and default["preconditioner"]["type"] == "jacobi"


def test_input_formats_give_the_same_solution():
    A = poisson2d(12)
    b = random_rhs(A.shape[0])
    x, report = kryflow.solve(A, b, backend="cpu")
    # Unsorted columns with duplicates split in two, int64 indices: summed and sorted on a copy.
    coo = A.tocoo()
    order = np.random.default_rng(5).permutation(coo.nnz)
    rows = np.concatenate([coo.row[order], coo.row])
    cols = np.concatenate([coo.col[order], coo.col])
    vals = np.concatenate([0.25 * coo.data[order], 0.75 * coo.data])
    messy = sp.csr_matrix((vals, (rows, cols)), shape=A.shape)
    messy.indices = messy.indices.astype(np.int64)
    messy.indptr = messy.indptr.astype(np.int64)
    messy.has_sorted_indices = False
    before = (messy.indptr.copy(), messy.indices.copy(), messy.data.copy())
    for M in (A.tocoo(), A.tocsc(), sp.bsr_array(A, blocksize=(2, 2)), messy, A.toarray()):
        xm, rm = kryflow.solve(M, b, backend="cpu")
        assert rm.iterations == report.iterations
        np.testing.assert_allclose(xm, x, rtol=1e-12, atol=1e-14)
    # The caller's matrix is left as it was.
    for kept, now in zip(before, (messy.indptr, messy.indices, messy.data)):
        np.testing.assert_array_equal(kept, now)


def test_storage_formats_and_float32():
    A = poisson2d(24)
    b = random_rhs(A.shape[0])
    _, reference = kryflow.solve(A, b, "pcg_jacobi", backend="cpu")
    for format in ("sell", "auto"):
        solver = kryflow.Solver("pcg_jacobi", backend="cpu", format=format).setup(A)
        _, report = solver.solve(b)
        assert report.iterations == reference.iterations, solver.storage
    bsr = kryflow.Solver("pcg_jacobi", backend="cpu", format="bsr").setup(
        sp.bsr_array(A, blocksize=(2, 2))
    )
    assert bsr.storage.startswith("BSR-2")
    assert bsr.solve(b)[1].iterations == reference.iterations
    # float32 values (exact for this matrix's small integers): the same iterations.
    solver = kryflow.Solver("pcg_jacobi", backend="cpu", precision="float32").setup(A)
    assert "float32" in solver.storage
    x, report = solver.solve(b)
    assert report.converged, report.reason
    assert report.iterations == reference.iterations
    assert true_relative_residual(A, b, x) <= 1e-7
    # AMG builds its hierarchy from float64 values.
    with pytest.raises(kryflow.NotSupported):
        kryflow.Solver("pcg_amg", backend="cpu", precision="float32").setup(A)


def test_float32_storage_corpus():
    A = corpus_matrix("petsc_ex19/ex19_cavity_33.mtx.gz")
    b = corpus_vector("petsc_ex19/ex19_cavity_33_b.mtx.gz")
    x, report = kryflow.solve(A, b, "gmres_ilu0", backend="cpu", precision="float32")
    assert report.converged, report.reason
    # Against the float-rounded matrix it solved.
    A32 = sp.csr_array((A.data.astype(np.float32).astype(np.float64), A.indices, A.indptr), A.shape)
    assert true_relative_residual(A32, b, x) <= 1e-7


def test_reference_backend():
    A = poisson2d(10)
    b = random_rhs(A.shape[0])
    x, report = kryflow.solve(A, b, "pcg_jacobi", backend="reference")
    assert report.converged and report.backend == "reference"
    assert true_relative_residual(A, b, x) <= 1e-7


def test_not_converging_is_reported_not_raised():
    A = corpus_matrix("suitesparse/ex10hs/ex10hs.mtx.gz")
    b = A @ random_rhs(A.shape[0])
    x, report = kryflow.solve(A, b, "pcg_jacobi", ["solver.max_iterations=20"], "cpu")
    assert report.status == "max_iterations" and not report.converged
    assert report.iterations == 20
    assert "hint" in report.reason
    assert x.shape == b.shape


# ---------------------------------------------------------------------------------------------
# Exceptions


def test_exception_hierarchy():
    assert issubclass(kryflow.Error, RuntimeError)
    assert issubclass(kryflow.InvalidInput, kryflow.Error)
    assert issubclass(kryflow.InvalidInput, ValueError)
    assert issubclass(kryflow.DimensionMismatch, kryflow.InvalidInput)
    assert issubclass(kryflow.ParseError, kryflow.InvalidInput)
    assert issubclass(kryflow.ConfigError, kryflow.Error)
    assert issubclass(kryflow.ConfigError, ValueError)
    for name in ("NotSupported", "NotCompiled", "BackendError"):
        assert issubclass(getattr(kryflow, name), kryflow.Error)
    assert issubclass(kryflow.OutOfMemory, kryflow.BackendError)
    assert issubclass(kryflow.OutOfMemory, MemoryError)


def test_unknown_preset_is_config_error():
    with pytest.raises(kryflow.ConfigError, match="unknown preset 'no_such_preset'") as info:
        kryflow.solve(poisson2d(4), np.ones(16), "no_such_preset")
    assert info.value.path == "preset"
    assert info.value.where  # the place in kryflow's sources


def test_config_errors_name_the_path():
    with pytest.raises(kryflow.ConfigError) as info:
        kryflow.Solver({"solver": {"type": "pcg", "tolerance": 1e-8}})
    assert "solver.tolerance" in str(info.value)
    with pytest.raises(kryflow.ConfigError):
        kryflow.Solver("pcg_jacobi", ["solver.relative_tolerance"])  # no '='
    with pytest.raises(kryflow.ConfigError):
        kryflow.Solver("{not json")
    with pytest.raises(kryflow.ConfigError):
        kryflow.Solver("pcg_jacobi", ["solver.preconditioner.omega=-1"])


def test_wrong_rhs_length_is_dimension_mismatch():
    A = poisson2d(6)
    with pytest.raises(kryflow.DimensionMismatch):
        kryflow.solve(A, np.ones(A.shape[0] + 1), backend="cpu")
    with pytest.raises(kryflow.DimensionMismatch):
        kryflow.solve(A, np.ones((A.shape[0], 2)), backend="cpu")
    with pytest.raises(kryflow.DimensionMismatch):
        kryflow.solve(A, np.ones(A.shape[0]), backend="cpu", x0=np.ones(3))


def test_zero_diagonal_with_jacobi_is_invalid_input():
    A = sp.lil_array(poisson2d(5))
    A[7, 7] = 0.0
    A = sp.csr_array(A)
    with pytest.raises(kryflow.InvalidInput, match="diagonal") as info:
        kryflow.solve(A, np.ones(A.shape[0]), "pcg_jacobi", backend="cpu")
    assert not isinstance(info.value, kryflow.DimensionMismatch)
    assert info.value.where


def test_non_square_is_invalid_input():
    A = sp.random(5, 7, density=0.5, format="csr", random_state=1)
    with pytest.raises(kryflow.InvalidInput):
        kryflow.solve(A, np.ones(5), backend="cpu")


def test_other_errors():
    A = poisson2d(4)
    b = np.ones(16)
    with pytest.raises(kryflow.InvalidInput):
        kryflow.solve(A, b, backend="gpu")  # unknown backend, from the C++ library
    with pytest.raises(kryflow.InvalidInput):
        kryflow.solve(A, b, format="ell")
    with pytest.raises(kryflow.InvalidInput):
        kryflow.solve(A, b, precision="float16")
    with pytest.raises(kryflow.InvalidInput):
        kryflow.solve(A, b, backend="cpu", format="bsr")  # 5-point pattern: no blocks
    with pytest.raises(kryflow.NotSupported):
        kryflow.solve(A.astype(np.complex128), b, backend="cpu")
    with pytest.raises(TypeError):
        kryflow.solve([[1.0]], b)
    with pytest.raises(kryflow.InvalidInput):
        kryflow.Solver(pathlib.Path("/nonexistent/config.json"))
    if "cuda" not in kryflow.backends():
        expected = kryflow.BackendError if kryflow.built_with_cuda() else kryflow.NotCompiled
        with pytest.raises(expected):
            kryflow.solve(A, b, backend="cuda")


# ---------------------------------------------------------------------------------------------
# Plots


def test_report_to_dict_and_plot(tmp_path):
    pytest.importorskip("matplotlib")
    A = poisson2d(20)
    b = random_rhs(A.shape[0])
    _, jacobi = kryflow.solve(A, b, "pcg_jacobi", backend="cpu")
    _, amg = kryflow.solve(A, b, "pcg_amg", backend="cpu")
    png = tmp_path / "history.png"
    ax = kryflow.plot_residual_history([jacobi, amg], path=png, labels=["PCG-Jacobi", "PCG-AMG"])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(ax.get_lines()) == 2

    # python -m kryflow.plot reads what to_dict() writes (one object or a list).
    one = dict(jacobi.to_dict(), label="PCG-Jacobi")
    (tmp_path / "one.json").write_text(json.dumps(one))
    (tmp_path / "two.json").write_text(json.dumps([one, dict(amg.to_dict(), label="PCG-AMG")]))
    for name in ("one.json", "two.json"):
        out = tmp_path / (name + ".png")
        run = subprocess.run(
            [sys.executable, "-m", "kryflow.plot", str(tmp_path / name), str(out)],
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0, run.stderr
        assert run.stderr == ""
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = tmp_path / "bad.json"
    bad.write_text('{"rhs_norm": 1.0}')
    run = subprocess.run(
        [sys.executable, "-m", "kryflow.plot", str(bad), str(tmp_path / "bad.png")],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1 and "residual_history" in run.stderr
