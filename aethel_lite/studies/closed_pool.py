r"""The closed-pool study: each question ranks its own small pool of candidate paragraphs (the paper's first
setting), for ``notebooks/10_closed_pool.ipynb``.

:func:`closed_pool_study` runs every method on each data set (:func:`~aethel_lite.evaluation.runner.run_methods`,
``setting="closed"``), the BCT ablation of the NER3 graph (:func:`~aethel_lite.evaluation.runner.bct_ablation`)
and the paired tests of the graph with BCT against BM25, dense retrieval and the graph without BCT
(:func:`~aethel_lite.evaluation.runner.paired_comparisons`); the returned :class:`ClosedPoolStudy` holds the
result as ``results/closed_pool.json`` stores it and builds the chapter's tables, figures and text from it.

References
----------
Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13 (percentile interval).
Smucker, Allan & Carterette (2007), A comparison of statistical significance tests for information
retrieval evaluation, CIKM (paired randomization test).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..caching.versions import versions
from ..core.bct import MODES
from ..data.select import load_or_synthetic
from ..data.summary import dataset_summary
from ..evaluation.runner import bct_ablation, paired_comparisons, run_methods, score_runs, without_timing
from ..evaluation.stats import bootstrap_ci, format_difference, format_estimate, format_interval
from .paper import PAPER_DIFFERENCES, paper_rows
from .record import as_record, save_record

__all__ = [
    "PAIRS",
    "TESTED",
    "load_closed",
    "closed_pool_study",
    "ClosedPoolStudy",
    "metrics_table",
    "paper_comparison",
    "comparisons_table",
    "ablation_figure",
    "closed_pool_headline",
    "closed_pool_reading",
]

#: The chapter's paired tests: the graph with BCT against BM25, dense retrieval and the graph without BCT.
PAIRS: tuple[tuple[str, str], ...] = (
    ("aethel-bct", "bm25"),
    ("aethel-bct", "dense"),
    ("aethel-bct", "aethel-ner3"),
)
#: The metrics they are run on.
TESTED: tuple[str, ...] = ("HR@5", "AllSupport@5")


def load_closed(datasets: Sequence[str], *, limit: int | None = None, size: int = 2000) -> dict:
    """Each closed-pool data set by name (:func:`~aethel_lite.data.select.load_or_synthetic`: the synthetic
    corpus of ``size`` passages stands in, loudly, for missing real data), cut to its first ``limit``
    questions and their pools when ``limit`` is set."""
    loaded = {}
    for name in datasets:
        ds = load_or_synthetic(name, setting="closed", size=size)
        loaded[name] = ds.subset(limit=limit, keep_all_passages=False) if limit else ds
    return loaded


def closed_pool_study(
    loaded: Mapping[str, Any],
    methods: Sequence[str],
    *,
    limit: int | None = None,
    n_resamples: int = 10_000,
    n_process: int = 2,
    progress: bool = True,
) -> ClosedPoolStudy:
    """Run the closed-pool chapter on the data sets of :func:`load_closed`.

    Parameters
    ----------
    loaded : mapping
        data-set name → Dataset.
    methods : sequence of str
        Names from :data:`aethel_lite.retrievers.registry.METHODS` / ``FUSIONS``.
    limit : int, optional
        The ``limit`` the data sets were cut with (recorded in the result only).
    n_resamples : int
        Paired bootstrap resamples (seed 0).
    n_process : int
        spaCy worker processes for entity extraction (the results do not depend on it).

    Returns
    -------
    ClosedPoolStudy
        ``result``: ``{"datasets", "synthetic_fallback", "methods", "bct_ablation", "paired_tests",
        "parameters", "versions"}``, timing removed.
    """
    scores = {}
    for name, ds in loaded.items():
        outcomes = run_methods(
            ds, methods, setting="closed", progress=progress, log=None, graph={"n_process": n_process}
        )
        scores[name] = score_runs(outcomes, ds.queries, k=5)
    ablation = {name: bct_ablation(ds, extractor="ner3", n_process=n_process) for name, ds in loaded.items()}
    tests = {
        name: paired_comparisons(
            block, [p for p in PAIRS if set(p) <= set(block)], list(TESTED), n_resamples=n_resamples, seed=0
        )
        for name, block in scores.items()
    }
    result = {
        "datasets": {name: dataset_summary(ds) for name, ds in loaded.items()},
        "synthetic_fallback": {name: ds.meta.get("fallback_from") is not None for name, ds in loaded.items()},
        "methods": scores,
        "bct_ablation": ablation,
        "paired_tests": tests,
        "parameters": {"methods": list(methods), "limit": limit, "n_resamples": n_resamples},
        "versions": versions(),
    }
    return ClosedPoolStudy(as_record(without_timing(result)))


@dataclass
class ClosedPoolStudy:
    """The closed-pool result (``result``, as ``results/closed_pool.json`` holds it) and what the chapter
    shows of it. Tables are pandas DataFrames, figures matplotlib Figures."""

    result: dict

    @property
    def n_resamples(self) -> int:
        return self.result["parameters"]["n_resamples"]

    def save(self, results_dir: str | Path = "results") -> None:
        """Write ``results_dir/closed_pool.json``."""
        save_record(self.result, results_dir, "closed_pool")

    def headline(self) -> tuple[Any, str]:
        """:func:`closed_pool_headline` of the result."""
        return closed_pool_headline(self.result, n_resamples=self.n_resamples)

    def paper_comparison(self):
        """The paper's closed-pool numbers beside ours (:func:`paper_comparison`); a data set on which the
        synthetic corpus stood in gets no "ours": it would read as a reproduction."""
        r = self.result
        return paper_comparison(r["methods"], paper_rows("closed_pool"), synthetic=r["synthetic_fallback"])

    def metrics_tables(self) -> dict:
        """Caption (data set and its number of questions, Markdown) → metrics × methods DataFrame."""
        r = self.result
        return {
            f"**{name}** ({r['datasets'][name]['n_queries']} questions)": metrics_table(block).T.rename_axis(
                "metric"
            )
            for name, block in r["methods"].items()
        }

    def ablation_figures(self) -> list:
        """One :func:`ablation_figure` per data set."""
        return [
            ablation_figure(ab, title=f"{name}: graph retriever (ner3) by BCT mode")
            for name, ab in self.result["bct_ablation"].items()
        ]

    def tests_table(self):
        """Every paired test, indexed by data set (an empty DataFrame when none was run)."""
        import pandas as pd

        shown = ["a", "b", "metric", "n", "diff", "95% CI", "p_randomization"]
        parts = {
            name: comparisons_table(rows)[shown] for name, rows in self.result["paired_tests"].items() if rows
        }
        return pd.concat(parts, names=["data set"]) if parts else pd.DataFrame()

    def reading(self) -> str:
        """:func:`closed_pool_reading` of the result (Markdown)."""
        return closed_pool_reading(self.result, n_resamples=self.n_resamples)


# ------------------------------------------------------------------------------------------- tables
def _dataframe(rows, index: str | None = None):
    import pandas as pd

    df = pd.DataFrame(rows)
    return df if index is None else df.set_index(index)


def metrics_table(block: Mapping[str, Mapping[str, Any]]):
    """A pandas DataFrame of mean metrics: one row per method (the ``methods`` block of a result)."""
    per_question = ("per_query", "per_query_metrics")
    return _dataframe(
        [
            {"method": name, **{m: v for m, v in entry.items() if m not in per_question}}
            for name, entry in block.items()
        ],
        "method",
    )


def paper_comparison(
    results: Mapping[str, Mapping[str, Any]],
    rows: Sequence[Mapping[str, Any]],
    synthetic: Sequence[str] | Mapping[str, bool] = (),
):
    """The paper's numbers beside ours.

    Parameters
    ----------
    results : mapping
        data-set name → ``methods`` block of a result file.
    rows : sequence of dict
        :data:`aethel_lite.studies.paper.PAPER_ROWS` entries.
    synthetic : sequence of str, or mapping str → bool
        Data sets on which the synthetic corpus stood in for missing real data (a result file's
        ``synthetic_fallback``); their ``ours`` stays empty.

    Returns
    -------
    pandas.DataFrame
        Columns: data set, paper's method, metric, paper, ours (our method), ours − paper, note.
        ``ours`` is empty when that data set or method was not run, or ran on synthetic data.
    """
    stand_ins = {n for n, v in synthetic.items() if v} if isinstance(synthetic, Mapping) else set(synthetic)
    out = []
    for r in rows:
        ours = (
            None
            if r["dataset"] in stand_ins
            else results.get(r["dataset"], {}).get(r["ours"], {}).get(r["metric"])
        )
        note = r["note"]
        if r["dataset"] in stand_ins:
            note = "not comparable: synthetic corpus instead of the real data" + (f"; {note}" if note else "")
        out.append(
            {
                "data set": r["dataset"],
                "paper's method": r["paper_method"],
                "metric": r["metric"],
                "paper": r["value"],
                "ours": ours,
                "our method": r["ours"],
                "ours − paper": None if ours is None else round(ours - r["value"], 3),
                "note": note,
            }
        )
    return _dataframe(out)


def comparisons_table(rows: Sequence[Mapping[str, Any]]):
    """Paired tests (rows of :func:`aethel_lite.evaluation.runner.paired_comparisons`) as a DataFrame."""
    df = _dataframe(list(rows))
    if df.empty:
        return df
    df["95% CI"] = [format_interval(lo, hi, signed=True) for lo, hi in zip(df["ci_low"], df["ci_high"])]
    df["CI excludes 0"] = (df["ci_low"] > 0) | (df["ci_high"] < 0)
    return df[
        [
            "a",
            "b",
            "metric",
            "n",
            "mean_a",
            "mean_b",
            "diff",
            "95% CI",
            "CI excludes 0",
            "p_bootstrap",
            "p_randomization",
        ]
    ]


def ablation_figure(
    ablation: Mapping[str, Mapping[str, float]],
    metrics: Sequence[str] = ("HR@1", "HR@5", "AllSupport@5"),
    title: str = "",
):
    """Grouped bars: one group per BCT mode, one bar per metric. Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt
    import numpy as np

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


# ------------------------------------------------------------------------------------------ in words
def closed_pool_headline(
    saved: Mapping[str, Any],
    metrics: Sequence[str] = ("HR@5", "AllSupport@5"),
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> tuple[Any, str]:
    """Methods × data sets of a closed-pool result (each metric's mean with its 95% bootstrap CI) as a
    DataFrame, and a verdict on the graph with BCT against BM25."""
    rows, said = [], []
    order = saved.get("parameters", {}).get("methods") or []
    for name, block in saved["methods"].items():
        label = f"{name} (synthetic)" if saved.get("synthetic_fallback", {}).get(name) else name
        ranked = [m for m in order if m in block] + sorted(m for m in block if m not in order)
        for i, method in enumerate(ranked):
            entry = block[method]
            row = {"data set": label if i == 0 else "", "method": method}  # the data set named once per group
            for m in metrics:
                values = [v[m] for v in entry.get("per_query_metrics", {}).values() if m in v]
                if len(values) >= 2:
                    ci = bootstrap_ci(values, n_resamples=n_resamples, seed=seed)
                    row[f"{m} [95% CI]"] = format_estimate(ci)
                elif m in entry:
                    row[f"{m} [95% CI]"] = f"{entry[m]:.3f}"
            rows.append(row)
        hr = metrics[0]
        top = max(block[m].get(hr, float("-inf")) for m in block)
        best = [f"`{m}`" for m in ranked if block[m].get(hr) == top]
        n = saved.get("datasets", {}).get(name, {}).get("n_queries")
        text = f"On {label}{f' ({n} questions)' if n else ''}, "
        text += (
            f"{best[0]} ranks a supporting paragraph in the top 5 most often ({hr} {top:.3f})"
            if len(best) == 1
            else f"{', '.join(best[:-1])} and {best[-1]} share the highest {hr} ({top:.3f})"
        )
        tests = {
            (t["b"], t["metric"]): t
            for t in saved.get("paired_tests", {}).get(name, [])
            if t["a"] == "aethel-bct"
        }
        against = [f"on {m} {format_difference(tests[('bm25', m)])}" for m in metrics if ("bm25", m) in tests]
        if against:
            text += "; the graph with BCT minus BM25, paired over the same questions: " + "; ".join(against)
        said.append(text + ".")
    verdict = " ".join(said)
    if any(saved.get("synthetic_fallback", {}).values()):
        verdict += (
            " A data set marked synthetic ran on the synthetic corpus standing in for the real one (no data"
            " configured): its numbers describe that invented corpus, not the paper's data."
        )
    return _dataframe(rows), verdict


def closed_pool_reading(saved: Mapping[str, Any], *, n_resamples: int = 10_000, seed: int = 0) -> str:
    r"""The closed-pool chapter's "What to take away", every number and every direction read from its result.

    Per data set run on real data: the NER3 graph's HR@5 against the paper's and the baselines; AllSupport@5
    of the graph retrievers against BM25 and dense retrieval, with the chapter's paired tests; and what BCT
    (``aethel-bct`` against ``aethel-ner3``) does to HR@1, HR@5 and AllSupport@5, each change as a paired
    bootstrap difference :math:`\bar d = \frac1n \sum_i (a_i - b_i)` with its 95% percentile CI and in
    questions (:math:`n \bar d`), against the paper's HR@1 change.

    Parameters
    ----------
    saved : mapping
        A closed-pool result (``results/closed_pool.json``).
    n_resamples, seed : int
        Bootstrap of the BCT differences.

    Returns
    -------
    str
        Markdown bullets.
    """
    out = []
    limit = saved.get("parameters", {}).get("limit")
    if limit:
        out.append(
            f"*This build ran on the first {limit} questions of each sample only (`limit`); the numbers below are "
            "those of that subset.*"
        )
    for name, block in saved["methods"].items():
        if saved.get("synthetic_fallback", {}).get(name):
            out.append(
                f"* **{name}**: no real data — the synthetic corpus stood in, so nothing here speaks to the paper's "
                f"{name} numbers."
            )
            continue
        n = saved["datasets"][name]["n_queries"]
        hr5 = {m: e["HR@5"] for m, e in block.items()}
        parts = []
        if "aethel-ner3" in block:
            graph = hr5["aethel-ner3"]
            paper = next(
                (
                    r["value"]
                    for r in paper_rows("closed_pool", name)
                    if r["ours"] == "aethel-ner3" and r["metric"] == "HR@5"
                ),
                None,
            )
            rel = (
                ""
                if paper is None
                else (
                    f" against the paper's {paper:.3f}"
                    + (", above it" if graph > paper else ", below it" if graph < paper else "")
                )
            )
            better = sorted(
                (m for m in hr5 if m != "aethel-ner3" and not m.startswith("aethel-") and hr5[m] >= graph),
                key=lambda m: -hr5[m],
            )
            parts.append(
                f"HR@5 of the NER3 graph is {graph:.3f}{rel}; "
                + (
                    "; ".join(f"`{m}` reaches {hr5[m]:.3f}" for m in better)
                    + " — as good or better at putting one "
                    "supporting paragraph in the top 5"
                    if better
                    else "no baseline reaches it"
                )
            )
        out.append(f"* **{name}** ({n} questions): " + "; ".join(parts) + ".")
        allsup = {m: e["AllSupport@5"] for m, e in block.items() if "AllSupport@5" in e}
        graphs = sorted((m for m in allsup if m.startswith("aethel-")), key=lambda m: -allsup[m])
        base = [m for m in ("bm25", "dense") if m in allsup]
        if graphs and base:
            beats = {b: [g for g in graphs if allsup[g] > allsup[b]] for b in base}
            words = "; ".join(
                f"above `{b}` ({allsup[b]:.3f}): " + (", ".join(f"`{g}`" for g in beats[b]) or "none of them")
                for b in base
            )
            tests = [
                t
                for t in saved.get("paired_tests", {}).get(name, [])
                if t["metric"] == "AllSupport@5" and t["b"] in base
            ]
            tested = "; ".join(
                f"`{t['a']}` − `{t['b']}` {format_difference(t, interval='the CI', interval_decimals=3)}"
                for t in tests
            )
            out.append(
                "  AllSupport@5 (every supporting paragraph in the top 5): "
                + ", ".join(f"`{g}` {allsup[g]:.3f}" for g in graphs)
                + f"; {words}."
                + (f" Paired tests: {tested}." if tested else "")
            )
        if "aethel-bct" in block and "aethel-ner3" in block:
            metrics = [m for m in ("HR@1", "HR@5", "AllSupport@5") if m in block["aethel-bct"]]
            rows = paired_comparisons(
                block, [("aethel-bct", "aethel-ner3")], metrics, n_resamples=n_resamples, seed=seed
            )
            said = []
            for t in rows:
                verb = "raises" if t["diff"] > 0 else "lowers" if t["diff"] < 0 else "leaves unchanged"
                questions = round(abs(t["diff"]) * t["n"])
                said.append(
                    f"{verb} {t['metric']} {t['mean_b']:.3f} → {t['mean_a']:.3f} ({format_difference(t, interval='the CI', interval_decimals=3)}; "
                    f"{questions} question{'s' if questions != 1 else ''} of {t['n']})"
                )
            paper = next(
                (d for d in PAPER_DIFFERENCES if d["dataset"] == name and d["metric"] == "HR@1"), None
            )
            hr1 = next((t for t in rows if t["metric"] == "HR@1"), None)
            cmp = ""
            if paper is not None and hr1 is not None:
                same = (hr1["diff"] < 0) == (paper["value"] < 0) and hr1["diff"] != 0
                inside = hr1["ci_low"] <= paper["value"] <= hr1["ci_high"]
                cmp = (
                    f" The paper reports an HR@1 change of {paper['value']:+.3f} on {name}: ours goes "
                    + ("the same way" if same else "the other way" if hr1["diff"] != 0 else "nowhere")
                    + (
                        ", and the paper's change lies inside our CI."
                        if inside
                        else ", and the paper's change lies outside our CI."
                    )
                )
            elif hr1 is not None:
                cmp = " The paper reports no BCT ablation on this data set."
            out.append(
                "  BCT (`aethel-bct` against `aethel-ner3`, same questions) " + "; ".join(said) + "." + cmp
            )
    return "\n".join(out)
