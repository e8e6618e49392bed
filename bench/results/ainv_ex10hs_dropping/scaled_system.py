# The system both studies solve: S A S (unit diagonal, dense), b = (S A S) x* for a fixed random x*,
# and PCG to a relative residual of 1e-8 with a preconditioner given as a function.
import gzip
import numpy as np
import scipy.io
import scipy.sparse as sp


def load(path):
    """(A as read, S A S as a dense array, b)."""
    A = scipy.io.mmread(gzip.open(path) if path.endswith(".gz") else path).tocsr().astype(float)
    s = 1 / np.sqrt(abs(A.diagonal()))
    B = (sp.diags(s) @ A @ sp.diags(s)).toarray()
    x = np.random.default_rng(1).uniform(-1, 1, A.shape[0])
    return A, B, B @ x


def pcg(B, b, M, tol=1e-8, maxit=30000):
    """Iterations PCG with z = M(r) needs on B x = b from x = 0 (maxit when it does not converge)."""
    x = np.zeros_like(b); r = b.copy(); z = M(r); p = z.copy(); rz = r @ z; nb = np.linalg.norm(b)
    for k in range(maxit):
        q = B @ p; a = rz / (p @ q); x += a * p; r -= a * q
        if np.linalg.norm(r) <= tol * nb:
            return k + 1
        z = M(r); rz2 = r @ z; p = z + rz2 / rz * p; rz = rz2
    return maxit
