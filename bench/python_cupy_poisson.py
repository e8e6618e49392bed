"""3D Poisson (7 points, n^3 unknowns, b = 1) built on the GPU with CuPy and solved through the
Python package with a preset, against `kryflow solve --gen poisson3d:N --rhs ones` (the CLI) on
the same device: setup, solve and their sum, iterations, and the wall time of the Python call
(it includes storing the matrix: a device-to-device copy and checks, no host copy).

    python3 bench/python_cupy_poisson.py --n 200 --preset pcg_amg --kryflow build/apps/kryflow/kryflow
"""
import argparse
import json
import subprocess
import time

import cupy
import cupyx.scipy.sparse as cusparse

import kryflow


def poisson3d(n):
    """The 7-point Laplacian on an n^3 grid (Dirichlet), assembled on the device as CSR."""
    one = cusparse.diags([-cupy.ones(n - 1), 2 * cupy.ones(n), -cupy.ones(n - 1)], [-1, 0, 1],
                         format="csr")
    eye = cusparse.identity(n, format="csr")
    a2 = cusparse.kron(one, eye) + cusparse.kron(eye, one)
    a3 = cusparse.kron(a2, eye) + cusparse.kron(cusparse.identity(n * n, format="csr"), one)
    a3 = a3.tocsr()
    a3.sum_duplicates()
    a3.sort_indices()
    return a3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--preset", default="pcg_amg")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kryflow", default="build/apps/kryflow/kryflow")
    parser.add_argument("--json")
    args = parser.parse_args()

    A = poisson3d(args.n)
    b = cupy.ones(A.shape[0])
    cupy.cuda.get_current_stream().synchronize()
    python = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        x, report = kryflow.solve(A, b, config=args.preset, backend="cuda")
        wall = time.perf_counter() - start
        assert isinstance(x, cupy.ndarray)
        r = b - A @ x
        true_residual = float(cupy.linalg.norm(r) / cupy.linalg.norm(b))
        python.append({"iterations": report.iterations, "status": report.status,
                       "setup_seconds": report.setup_seconds, "solve_seconds": report.solve_seconds,
                       "wall_seconds": wall, "true_relative_residual": true_residual})
    cli = []
    for _ in range(args.repeats):
        out = subprocess.run([args.kryflow, "solve", "--backend", "cuda", "--gen",
                              f"poisson3d:{args.n}", "--rhs", "ones", "--preset", args.preset,
                              "--report", "json", "--copy-bytes", "0"],
                             check=False, capture_output=True, text=True)
        r = json.loads(out.stdout)
        cli.append({"iterations": r["iterations"], "status": r["status"],
                    "setup_seconds": r["setup_seconds"], "solve_seconds": r["solve_seconds"],
                    "true_relative_residual": r["true_relative_residual"]})

    def best(runs):
        return min(runs, key=lambda run: run["setup_seconds"] + run["solve_seconds"])

    p, c = best(python), best(cli)
    total_p = p["setup_seconds"] + p["solve_seconds"]
    total_c = c["setup_seconds"] + c["solve_seconds"]
    print(f"3D Poisson {args.n}^3, b = 1, {args.preset}, cuda, best of {args.repeats}")
    print("| front end | iterations | status | true residual | setup s | solve s | setup + solve s |")
    print("|---|---|---|---|---|---|---|")
    for name, run in (("python (CuPy)", p), ("kryflow solve", c)):
        print(f"| {name} | {run['iterations']} | {run['status']} | {run['true_relative_residual']:.2e} "
              f"| {run['setup_seconds']:.4f} | {run['solve_seconds']:.4f} "
              f"| {run['setup_seconds'] + run['solve_seconds']:.4f} |")
    print(f"python / CLI setup + solve: {total_p / total_c:.3f}; python wall time of the call "
          f"(matrix stored on the device included): {p['wall_seconds']:.4f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "preset": args.preset, "python": python, "cli": cli,
                       "ratio_setup_plus_solve": total_p / total_c}, f, indent=1)


if __name__ == "__main__":
    main()
