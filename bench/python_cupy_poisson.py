"""3D Poisson (7 points, n^3 unknowns, b = 1) built on the GPU with CuPy and solved through the
Python package with a preset, against `kryflow solve --gen poisson3d:N --rhs ones` (the CLI) on
the same device, each front end in fresh processes: the first solve of a process (what a CLI run
is: it pays the process's one-time costs, such as loading the kernels and creating the cuSOLVER
handle) compared with the CLI, and the second (warm) solve of the Python process; setup, solve
and their sum, iterations, and the wall time of the Python call (it includes storing the matrix:
a device-to-device copy and checks, no host copy).

    python3 bench/python_cupy_poisson.py --n 200 --preset pcg_amg --kryflow build/apps/kryflow/kryflow
"""
import argparse
import json
import subprocess
import sys
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


def python_process(args):
    """One fresh process: builds A with CuPy and solves twice (the first solve pays the process's
    one-time costs, as every CLI run does; the second is warm). Prints the runs as JSON."""
    A = poisson3d(args.n)
    b = cupy.ones(A.shape[0])
    cupy.cuda.get_current_stream().synchronize()
    runs = []
    for _ in range(2):
        start = time.perf_counter()
        x, report = kryflow.solve(A, b, config=args.preset, backend="cuda")
        wall = time.perf_counter() - start
        assert isinstance(x, cupy.ndarray)
        r = b - A @ x
        true_residual = float(cupy.linalg.norm(r) / cupy.linalg.norm(b))
        runs.append({"iterations": report.iterations, "status": report.status,
                     "setup_seconds": report.setup_seconds, "solve_seconds": report.solve_seconds,
                     "wall_seconds": wall, "true_relative_residual": true_residual})
    print(json.dumps(runs))


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--preset", default="pcg_amg")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per front end")
    parser.add_argument("--kryflow", default="build/apps/kryflow/kryflow")
    parser.add_argument("--json")
    parser.add_argument("--one-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_process:
        python_process(args)
        return

    cold, warm, cli = [], [], []
    for _ in range(args.repeats):
        out = subprocess.run([sys.executable, __file__, "--one-process", "--n", str(args.n),
                              "--preset", args.preset], check=True, capture_output=True, text=True)
        first, second = json.loads(out.stdout.strip().splitlines()[-1])
        cold.append(first)
        warm.append(second)
    for _ in range(args.repeats):
        out = subprocess.run([args.kryflow, "solve", "--backend", "cuda", "--gen",
                              f"poisson3d:{args.n}", "--rhs", "ones", "--preset", args.preset,
                              "--report", "json", "--copy-bytes", "0"],
                             check=False, capture_output=True, text=True)
        r = json.loads(out.stdout)
        cli.append({"iterations": r["iterations"], "status": r["status"],
                    "setup_seconds": r["setup_seconds"], "solve_seconds": r["solve_seconds"],
                    "true_relative_residual": r["true_relative_residual"]})

    def total(run):
        return run["setup_seconds"] + run["solve_seconds"]

    rows = (("python (CuPy), first solve of a process", cold),
            ("python (CuPy), second solve of a process", warm),
            ("kryflow solve (one solve per process)", cli))
    print(f"3D Poisson {args.n}^3, b = 1, {args.preset}, cuda, medians of {args.repeats} processes")
    print("| front end | iterations | status | true residual | setup s | solve s | setup + solve s |")
    print("|---|---|---|---|---|---|---|")
    for name, runs in rows:
        run = runs[0]
        print(f"| {name} | {run['iterations']} | {run['status']} | {run['true_relative_residual']:.2e} "
              f"| {median([r['setup_seconds'] for r in runs]):.4f} "
              f"| {median([r['solve_seconds'] for r in runs]):.4f} "
              f"| {median([total(r) for r in runs]):.4f} |")
    ratio = median([total(r) for r in cold]) / median([total(r) for r in cli])
    print(f"python / CLI setup + solve, both the first solve of a process: {ratio:.3f}; "
          f"python wall time of a warm call (matrix stored on the device included): "
          f"{median([r['wall_seconds'] for r in warm]):.4f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "preset": args.preset, "python_first": cold,
                       "python_second": warm, "cli": cli, "ratio_setup_plus_solve_first": ratio},
                      f, indent=1)


if __name__ == "__main__":
    main()
