#!/usr/bin/env python3
"""Draws the SpMV format comparison written by `kryflow bench spmv --json FILE`.

    python3 bench/plot_spmv.py results.json [more.json ...] [-o plot.png]

One group of bars per matrix, one bar per format: the best kryflow configuration of each format
(CSR, SELL-C-sigma, BSR; float64 and float32 values apart) and cuSPARSE's CSR and BSR products,
as the fraction of the measured copy bandwidth they reach (useful bytes: padding and the zeros
a BSR block adds are not counted). Matrices whose data fit in the cache are hatched: there the
fraction exceeds what memory alone allows. The PNG goes beside the first JSON unless -o says
otherwise. Needs matplotlib.
"""
import argparse
import json
import os
import sys


def family(record):
    """The bar a record belongs to: format plus value precision for kryflow, the peer's name."""
    fmt = record["format"]
    if fmt.startswith("cusparse"):
        return fmt.replace("cusparse_", "cuSPARSE ").replace("csr", "CSR").replace("bsr", "BSR")
    name = {"csr": "CSR", "sell": "SELL", "bsr": "BSR"}.get(fmt, fmt)
    if record.get("precision", "float64") == "float32":
        name += " (float values)"
    return name


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", nargs="+")
    parser.add_argument("-o", "--output")
    args = parser.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_spmv.py: matplotlib is not installed (pip install matplotlib)")

    records, device, bandwidth = [], None, None
    for path in args.json:
        with open(path) as f:
            data = json.load(f)
        device = device or data.get("device")
        bandwidth = bandwidth or data.get("copy_bandwidth_bytes_per_s")
        records += data["records"]
    if not records:
        sys.exit("plot_spmv.py: no records")

    matrices = list(dict.fromkeys(r["matrix"] for r in records))
    order = ["CSR", "SELL", "BSR", "CSR (float values)", "SELL (float values)",
             "BSR (float values)", "cuSPARSE CSR", "cuSPARSE BSR"]
    families = [f for f in order if any(family(r) == f for r in records)]
    families += sorted({family(r) for r in records} - set(families))
    best = {}      # fraction of copy bandwidth of the best configuration of each bar
    speedup = {}   # its speedup over cuSPARSE CSR (time ratio), when measured
    cached = {}
    for r in records:
        key = (r["matrix"], family(r))
        if r["fraction_of_copy_bandwidth"] > best.get(key, 0.0):
            best[key] = r["fraction_of_copy_bandwidth"]
            cached[key] = r.get("cache_resident", False)
        if "speedup_over_cusparse_csr" in r:
            speedup[key] = max(speedup.get(key, 0.0), r["speedup_over_cusparse_csr"])

    width = 0.8 / len(families)
    panels = 2 if speedup else 1
    fig, axes = plt.subplots(panels, 1, figsize=(max(8, 1.3 * len(matrices) + 3), 4.5 * panels),
                             squeeze=False)
    colors = plt.get_cmap("tab10")
    for panel, (values, label) in enumerate(
            [(best, "fraction of measured copy bandwidth"),
             (speedup, "speedup over cuSPARSE CSR (time)")][:panels]):
        ax = axes[panel][0]
        for k, fam in enumerate(families):
            xs, ys, hatches = [], [], []
            for i, m in enumerate(matrices):
                if (m, fam) in values:
                    xs.append(i - 0.4 + width * (k + 0.5))
                    ys.append(values[(m, fam)])
                    hatches.append("//" if cached.get((m, fam)) else "")
            bars = ax.bar(xs, ys, width, label=fam, color=colors(k % 10),
                          edgecolor="black", linewidth=0.4)
            for bar, hatch in zip(bars, hatches):
                bar.set_hatch(hatch)
        ax.axhline(1.0, color="black", linestyle="--", linewidth=0.8)
        ax.set_xticks(range(len(matrices)))
        ax.set_xticklabels(matrices, rotation=30, ha="right")
        ax.set_ylabel(label)
        if panel == 0:
            title = "SpMV y = Ax by format (best configuration of each)"
            if device:
                title += f", {device}"
            if bandwidth:
                title += f" (copy {bandwidth / 1e9:.0f} GB/s)"
            ax.set_title(title + "\nhatched: its data fit in the cache")
            ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    output = args.output or os.path.splitext(args.json[0])[0] + ".png"
    fig.savefig(output, dpi=120)
    print(output)


if __name__ == "__main__":
    main()
