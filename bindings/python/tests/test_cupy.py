"""Tests of the kryflow Python package on a CUDA device with CuPy: device arrays in, device
arrays out, never through the host. Skipped without CuPy, without a device, or when kryflow was
built without CUDA."""

import numpy as np
import pytest
import scipy.sparse as sp

cp = pytest.importorskip("cupy")
csp = pytest.importorskip("cupyx.scipy.sparse")

import kryflow  # noqa: E402


@pytest.fixture(autouse=True)
def device():
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except cp.cuda.runtime.CUDARuntimeError:
        count = 0
    if count == 0:
        pytest.skip("no CUDA device")
    if "cuda" not in kryflow.backends():
        pytest.skip("kryflow was built without CUDA, or device 0 does not open")


def poisson3d(n):
    """The 7-point Laplacian on an n^3 grid, built on the device (cupyx.scipy.sparse CSR)."""
    t = csp.diags(
        [cp.full(n - 1, -1.0), cp.full(n, 2.0), cp.full(n - 1, -1.0)], [-1, 0, 1], format="csr"
    )
    eye = csp.identity(n, dtype=cp.float64, format="csr")
    A = csp.kron(csp.kron(t, eye), eye) + csp.kron(csp.kron(eye, t), eye)
    A = A + csp.kron(csp.kron(eye, eye), t)
    return A.tocsr()


def random_vector(n, seed=1):
    return cp.random.default_rng(seed).uniform(-1.0, 1.0, n)


def true_relative_residual(A, b, x):
    return float(cp.linalg.norm(b - A @ x) / cp.linalg.norm(b))


def test_poisson3d_pcg_amg():
    A = poisson3d(32)
    b = A @ random_vector(A.shape[0])
    x, report = kryflow.solve(A, b, "pcg_amg")
    assert isinstance(x, cp.ndarray) and x.dtype == cp.float64 and x.shape == b.shape
    assert report.backend.startswith("cuda")
    assert report.converged, report.reason
    assert true_relative_residual(A, b, x) <= 1e-7
    assert isinstance(report.residual_history, np.ndarray)
    assert report.residual_history.shape == (report.iterations + 1,)


def test_solver_update_values_on_device():
    A = poisson3d(24)
    b = random_vector(A.shape[0], seed=2)
    solver = kryflow.Solver("pcg_amg", ["solver.relative_tolerance=1e-10"])
    solver.setup(A)
    assert solver.backend.startswith("cuda")
    x, report = solver.solve(b)
    assert report.converged, report.reason
    solver.update_values(2.0 * A)
    x2, report2 = solver.solve(b)
    assert report2.converged, report2.reason
    scale = float(cp.abs(x).max())
    assert float(cp.abs(x2 - x / 2.0).max()) <= 1e-7 * scale
    # The values alone, as a CuPy array in CSR order.
    solver.update_values(A.data)
    x3, _ = solver.solve(b)
    assert float(cp.abs(x3 - x).max()) <= 1e-7 * scale
    with pytest.raises(kryflow.InvalidInput):
        solver.update_values(cp.asnumpy(A.data))  # host values for a device matrix


def test_initial_guess_and_stream_ordering():
    A = poisson3d(16)
    xs = random_vector(A.shape[0], seed=3)
    cp.cuda.Device().synchronize()  # a non-blocking stream does not wait for the default one
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        # Queued on a stream of CuPy's own; solve waits for it before reading b.
        b = A @ xs
        x0 = xs.copy()
        x, report = kryflow.solve(A, b, "pcg_jacobi", x0=x0)
        assert report.converged and report.iterations <= 1
        assert bool(cp.array_equal(x0, xs))
        # The result is there for kernels on the current stream.
        assert float(cp.abs(x - xs).max()) <= 1e-8 * float(cp.abs(xs).max())
    stream.synchronize()


def test_same_iterations_as_the_host():
    A = poisson3d(16)
    b = random_vector(A.shape[0], seed=4)
    x_dev, r_dev = kryflow.solve(A, b, "pcg_jacobi")
    A_host = sp.csr_array((A.data.get(), A.indices.get(), A.indptr.get()), shape=A.shape)
    x_host, r_host = kryflow.solve(A_host, b.get(), "pcg_jacobi", backend="cpu")
    assert isinstance(x_host, np.ndarray)
    assert r_dev.iterations == r_host.iterations
    np.testing.assert_allclose(x_dev.get(), x_host, rtol=1e-10, atol=1e-12)
    # A SciPy system on the cuda backend: NumPy in, NumPy out.
    x_up, r_up = kryflow.solve(A_host, b.get(), "pcg_jacobi", backend="cuda")
    assert isinstance(x_up, np.ndarray) and r_up.backend.startswith("cuda")
    assert r_up.iterations == r_dev.iterations


def test_formats_and_float32_on_device():
    A = poisson3d(16)
    b = random_vector(A.shape[0], seed=5)
    _, reference = kryflow.solve(A, b, "pcg_jacobi")
    for format in ("sell", "auto"):
        _, report = kryflow.solve(A, b, "pcg_jacobi", format=format)
        assert report.iterations == reference.iterations
    x, report = kryflow.solve(A, b, "pcg_jacobi", precision="float32")
    assert report.converged, report.reason
    assert true_relative_residual(A, b, x) <= 1e-7


def test_device_errors():
    A = poisson3d(8)
    n = A.shape[0]
    with pytest.raises(kryflow.InvalidInput):
        kryflow.solve(A, np.ones(n))  # host b for a device matrix
    with pytest.raises(kryflow.InvalidInput):
        kryflow.solve(A, cp.ones(n), backend="cpu")
    with pytest.raises(kryflow.DimensionMismatch):
        kryflow.solve(A, cp.ones(n + 1))
    with pytest.raises(kryflow.InvalidInput):
        A_host = sp.csr_array((A.data.get(), A.indices.get(), A.indptr.get()), shape=A.shape)
        kryflow.solve(A_host, cp.ones(n))  # device b for a host matrix
    # Zero diagonal entry, found on the device by the Jacobi setup.
    start, end = int(A.indptr[5]), int(A.indptr[6])
    diagonal = start + int(cp.nonzero(A.indices[start:end] == 5)[0][0])
    B = A.copy()
    B.data[diagonal] = 0.0
    with pytest.raises(kryflow.InvalidInput):
        kryflow.solve(B, cp.ones(n), "pcg_jacobi")
