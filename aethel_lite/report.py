"""Tables and figures for the book, built only from result files (never typed by hand)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["metrics_table", "paper_comparison", "comparisons_table", "ablation_figure"]


def metrics_table(block: Mapping[str, Mapping[str, Any]], metrics: Sequence[str] | None = None):
    """A pandas DataFrame of mean metrics: one row per method (the ``methods`` block of a result)."""
    import pandas as pd

    rows = []
    for name, entry in block.items():
        names = metrics or [m for m in entry if m not in ("per_query", "per_query_metrics")]
        rows.append({"method": name, **{m: entry[m] for m in names}})
    return pd.DataFrame(rows).set_index("method")


def paper_comparison(results: Mapping[str, Mapping[str, Any]], rows: Sequence[Mapping[str, Any]]):
    """The paper's numbers beside ours.

    Parameters
    ----------
    results : mapping
        data-set name → ``methods`` block of a result file.
    rows : sequence of dict
        :data:`aethel_lite.paper.PAPER_ROWS` entries.

    Returns
    -------
    pandas.DataFrame
        Columns: data set, paper's method, metric, paper, ours (our method), ours − paper, note.
        ``ours`` is empty when that data set or method was not run.
    """
    import pandas as pd

    out = []
    for r in rows:
        block = results.get(r["dataset"], {})
        ours = block.get(r["ours"], {}).get(r["metric"])
        out.append({
            "data set": r["dataset"], "paper's method": r["paper_method"], "metric": r["metric"],
            "paper": r["value"], "ours": ours, "our method": r["ours"],
            "ours − paper": None if ours is None else round(ours - r["value"], 3), "note": r["note"],
        })
    return pd.DataFrame(out)


def comparisons_table(rows: Sequence[Mapping[str, Any]]):
    """Paired tests (rows of :func:`aethel_lite.experiment.paired_comparisons`) as a DataFrame."""
    import pandas as pd

    df = pd.DataFrame(list(rows))
    if df.empty:
        return df
    df["95% CI"] = [f"[{lo:+.3f}, {hi:+.3f}]" for lo, hi in zip(df["ci_low"], df["ci_high"])]
    df["CI excludes 0"] = (df["ci_low"] > 0) | (df["ci_high"] < 0)
    return df[["a", "b", "metric", "n", "mean_a", "mean_b", "diff", "95% CI", "CI excludes 0", "p_bootstrap", "p_randomization"]]


def ablation_figure(ablation: Mapping[str, Mapping[str, float]], metrics: Sequence[str] = ("HR@1", "HR@5", "AllSupport@5"),
                    title: str = ""):
    """Grouped bars: one group per BCT mode, one bar per metric. Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt
    import numpy as np

    from .bct import MODES

    # canonical order (result files store keys sorted alphabetically)
    modes = [m for m in MODES if m in ablation] + sorted(m for m in ablation if m not in MODES)
    x = np.arange(len(modes))
    width = 0.8 / len(metrics)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for i, m in enumerate(metrics):
        vals = [ablation[mode][m] for mode in modes]
        bars = ax.bar(x + (i - (len(metrics) - 1) / 2) * width, vals, width, label=m)
        ax.bar_label(bars, fmt="%.2f", fontsize=8)
    ax.set_xticks(x, [f"BCT: {m}" for m in modes])
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("seed expansion (BCT mode)")
    ax.set_ylabel("mean over questions")
    if title:
        ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig
