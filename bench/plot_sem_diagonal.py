#!/usr/bin/env python3
"""Draws the local-diagonal kernel comparison written by `kryflow_bench_sem_diagonal --json FILE`.

    python3 bench/plot_sem_diagonal.py results.json [-o plot.png]

One panel per element count, one group of bars per polynomial order p, one bar per kernel
variant (natural, shared, extended, wide: Wahlgren 2022, sec. 3.1), the height its time in
microseconds (the layout of that paper's Figure 2). Variants that do not exist for an order
(natural and shared need N^3 <= 1024 threads) are left out. The PNG goes beside the JSON unless
-o says otherwise. Needs matplotlib.
"""
import argparse
import json
import os


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json_file")
    parser.add_argument("-o", "--output")
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(args.json_file) as f:
        data = json.load(f)
    records = [r for r in data["records"] if r.get("supported", True)]
    variants = ["natural", "shared", "extended", "wide"]
    orders = sorted({r["order"] for r in records})
    small = sorted({r["elements"] for r in records if r["elements"] == 4096})
    panels = [("4096 elements", lambda r: r["elements"] == 4096),
              ("device-filling element count", lambda r: r["elements"] != 4096)]
    if not small:
        panels = panels[1:]
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4), squeeze=False)
    width = 0.2
    for ax, (title, keep) in zip(axes[0], panels):
        for v, variant in enumerate(variants):
            xs, ys = [], []
            for i, p in enumerate(orders):
                match = [r for r in records if keep(r) and r["order"] == p and r["variant"] == variant]
                if match:
                    xs.append(i + (v - 1.5) * width)
                    ys.append(match[0]["seconds"] * 1e6)
            ax.bar(xs, ys, width, label=variant)
        ax.set_xticks(range(len(orders)))
        ax.set_xticklabels([f"p = {p}" for p in orders])
        ax.set_ylabel("time (us)")
        ax.set_title(f"{title}, {data.get('device', '')}")
        ax.legend()
    fig.suptitle("Jacobi diagonal of the SEM Poisson operator: four kernel designs")
    fig.tight_layout()
    output = args.output or os.path.splitext(args.json_file)[0] + ".png"
    fig.savefig(output, dpi=120)
    print(output)


if __name__ == "__main__":
    main()
