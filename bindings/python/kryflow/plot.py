"""Plots of residual histories, and the command ``python -m kryflow.plot``.

::

    python -m kryflow.plot history.json [more.json ...] out.png [--title TEXT]

Each JSON file holds ``{"residual_history": [...], "rhs_norm": x, "label": "..."}`` or a list
of such objects (``kryflow solve --plot`` writes one; ``SolveReport.to_dict()`` gives one). The
PNG shows ||r_k|| / ||b|| against k on a log scale. Exit status 0 when written, 1 on an error
(unreadable file, matplotlib missing), 2 on wrong arguments.
"""

import argparse
import sys

from ._plot import load_histories, plot_residual_history

__all__ = ["plot_residual_history", "load_histories", "main"]


def main(argv=None):
    """Runs ``python -m kryflow.plot``.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (``sys.argv[1:]`` when omitted): one or more JSON files, then the
        output image, and optionally ``--title TEXT``.

    Returns
    -------
    int
        0 when the image was written, 1 on an error (reported on stderr).
    """
    parser = argparse.ArgumentParser(
        prog="python -m kryflow.plot",
        description="Plot residual histories (||r_k|| / ||b|| against k) from JSON files.",
    )
    parser.add_argument(
        "histories",
        nargs="+",
        metavar="history.json",
        help='{"residual_history": [...], "rhs_norm": x, "label": "..."} or a list of them',
    )
    parser.add_argument("output", metavar="out.png", help="the image to write")
    parser.add_argument("--title", help="the figure's title")
    args = parser.parse_args(argv)
    try:
        runs = []
        for path in args.histories:
            runs.extend(load_histories(path))
        try:
            from matplotlib.figure import Figure  # no pyplot: no display needed
        except ImportError:
            raise ImportError(
                "matplotlib is needed to plot: pip install matplotlib (or kryflow[plot])"
            ) from None
        fig = Figure(figsize=(6.4, 4.4), layout="constrained")
        ax = plot_residual_history(runs, ax=fig.add_subplot())
        if args.title:
            ax.set_title(args.title)
        fig.savefig(args.output, dpi=120)
    except (OSError, ValueError, TypeError, ImportError) as e:
        print(f"python -m kryflow.plot: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
