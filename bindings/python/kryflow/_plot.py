"""Residual histories drawn with matplotlib (imported only when a plot is drawn)."""

import json
import os

import numpy as np

__all__ = ["plot_residual_history", "load_histories"]


def _run_of(item):
    """(history, rhs_norm, label) of a SolveReport, a dict or an object with the same fields."""
    if isinstance(item, dict):
        if "residual_history" not in item:
            raise ValueError("a residual history needs the key 'residual_history'")
        history = item["residual_history"]
        rhs_norm = item.get("rhs_norm")
        label = item.get("label")
    elif hasattr(item, "residual_history"):
        history = item.residual_history
        rhs_norm = getattr(item, "rhs_norm", None)
        label = getattr(item, "label", None)
    else:
        raise TypeError(
            "expected a SolveReport or a dict with 'residual_history' (and 'rhs_norm', 'label'), "
            f"not {type(item).__name__}"
        )
    history = np.asarray(history, dtype=np.float64).ravel()
    return history, None if rhs_norm is None else float(rhs_norm), label


def _runs(report_or_reports):
    if isinstance(report_or_reports, (list, tuple)):
        return [_run_of(item) for item in report_or_reports]
    return [_run_of(report_or_reports)]


def plot_residual_history(report_or_reports, path=None, ax=None, labels=None):
    """Draws residual histories: ||r_k|| / ||b|| against the iteration k, on a log scale.

    matplotlib is imported only when this is called (``pip install kryflow[plot]``).

    Parameters
    ----------
    report_or_reports : SolveReport, dict, or a list of them
        Each a :class:`~kryflow.SolveReport` or a dict with ``"residual_history"`` (the residual
        norm per iteration, [0] = ||r_0||), optionally ``"rhs_norm"`` (||b||) and ``"label"``.
        Without ``rhs_norm`` (or with 0) a history is drawn relative to its first entry.
    path : str or os.PathLike, optional
        When given, the figure is written there (PNG unless the extension names another
        format matplotlib knows). Without ``ax``, the figure is then made without pyplot, so
        no display is needed.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made when omitted.
    labels : str or sequence of str, optional
        Legend entries, one per history; they replace the reports' own ``"label"``. A legend
        is drawn when any history has a label.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Raises
    ------
    ImportError
        matplotlib is not installed.
    ValueError
        ``labels`` does not have one entry per history, or a dict lacks
        ``"residual_history"``.
    TypeError
        An item is neither a report nor a dict.
    """
    runs = _runs(report_or_reports)
    if labels is not None:
        labels = [labels] if isinstance(labels, str) else list(labels)
        if len(labels) != len(runs):
            raise ValueError(f"{len(labels)} labels for {len(runs)} residual histories")
        runs = [(history, rhs, label) for (history, rhs, _), label in zip(runs, labels)]

    if ax is None:
        if path is not None:
            from matplotlib.figure import Figure

            fig = Figure(figsize=(6.4, 4.4), layout="constrained")
            ax = fig.add_subplot()
        else:
            import matplotlib.pyplot as plt

            fig, ax = plt.subplots(figsize=(6.4, 4.4), layout="constrained")
    else:
        fig = ax.figure

    for history, rhs_norm, label in runs:
        scale = rhs_norm
        if not scale:
            scale = history[0] if history.size and history[0] > 0 else 1.0
        ax.semilogy(np.arange(history.size), history / scale, label=label)
    ax.set_xlabel("iteration")
    ax.set_ylabel("relative residual ||r|| / ||b||")
    ax.grid(True, which="major", alpha=0.4)
    if any(label for _, _, label in runs):
        ax.legend()
    if path is not None:
        fig.savefig(os.fspath(path), dpi=120)
    return ax


def load_histories(path):
    """Reads residual histories from a JSON file.

    Parameters
    ----------
    path : str or os.PathLike
        A JSON file holding an object ``{"residual_history": [...], "rhs_norm": x,
        "label": "..."}`` or a list of such objects (``rhs_norm`` and ``label`` optional).

    Returns
    -------
    list of dict
        The objects, ready for :func:`plot_residual_history`.

    Raises
    ------
    OSError
        The file cannot be read.
    ValueError
        It is not JSON of that shape.
    """
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    items = data if isinstance(data, list) else [data]
    for item in items:
        if not isinstance(item, dict) or "residual_history" not in item:
            raise ValueError(
                f"{os.fspath(path)}: expected an object with 'residual_history' or a list of them"
            )
    return items
