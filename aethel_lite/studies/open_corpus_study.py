"""The open-corpus chapter (``notebooks/20_open_corpus.ipynb``): the study it runs, in one call
(:func:`open_corpus_study`), and what it shows of it — tables, a figure and its verdict in words —
built on :mod:`aethel_lite.studies.open_corpus`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..caching.versions import versions
from ..errors import DataNotFoundError
from ..evaluation.stats import format_estimate, format_interval
from . import analysis
from .closed_pool import comparisons_table
from .open_corpus import (
    OPEN_DATASETS,
    QUICK,
    OpenCorpora,
    chapter_tests,
    error_analysis,
    evaluate_open,
    load_open,
    paper_verdicts,
    takeaways,
)
from .paper import PAPER_TESTS, paper_rows
from .record import as_record, save_record

__all__ = [
    "PAIRS",
    "load_corpora",
    "open_corpus_study",
    "OpenCorpusStudy",
    "ci_table",
    "group_table",
    "ci_figure",
    "verdict_table",
    "reliance_table",
    "open_corpus_verdict",
]


# --------------------------------------------------------------------------------------- the chapter
#: The chapter's paired tests (each on MRR and HR@5, on every corpus where both methods ran).
PAIRS: tuple[tuple[str, str], ...] = (
    ("rrf", "bm25"),
    ("aethel-ner3", "bm25"),
    ("aethel-ner3", "dense"),
    ("aethel-reg", "aethel-ner3"),
    ("rrf-dense", "bm25"),
    ("dense-max", "dense"),
    ("aethel-bct", "aethel-ner3"),
)


def load_corpora(datasets: Sequence[str], *, quick: bool = False) -> OpenCorpora:
    """Load every corpus of ``datasets`` (:func:`load_open`; ``quick``: :data:`QUICK`'s questions and sample).

    A corpus whose real data is not configured is listed in ``missing``, and the synthetic corpus then
    runs in its place (once); a wrong ``AETHEL_DATA`` is an error, not a fallback.
    """
    limit, corpus_size = (QUICK["limit"], QUICK["corpus_size"]) if quick else (None, None)
    loaded, missing = {}, {}
    for name in datasets:
        try:
            loaded[name] = load_open(name, limit=limit, corpus_size=corpus_size)
        except DataNotFoundError:  # only when no data folder is configured
            missing[name] = "no real data configured"
    if missing and "synthetic" not in loaded:
        loaded["synthetic"] = load_open("synthetic", limit=limit, corpus_size=corpus_size)
    return OpenCorpora(list(datasets), loaded, missing, quick)


def open_corpus_study(
    corpora: OpenCorpora,
    methods: Sequence[str],
    *,
    n_resamples: int = 10_000,
    n_process: int = 2,
    progress: bool = True,
) -> OpenCorpusStudy:
    """Run the open-corpus chapter: every method on every corpus (:func:`evaluate_open`), the error analysis
    of the NER3 graph on FinanceBench (on the synthetic corpus without real data; :func:`error_analysis`),
    the paired tests of :data:`PAIRS` (:func:`chapter_tests`) and the paper's numbers with a verdict
    (:func:`paper_verdicts`).

    Returns
    -------
    OpenCorpusStudy
        ``result``: ``{"datasets", "labels", "missing", "synthetic_only", "tests", "verdicts",
        "error_analysis", "parameters", "versions"}`` (``results/open_corpus.json``).
    """
    graph = {"n_process": n_process}
    results, fitted = {}, {}
    for name, ds in corpora.loaded.items():
        results[name], outcomes = evaluate_open(
            ds, methods, n_resamples=n_resamples, seed=0, graph=graph, progress=progress
        )
        if name == "financebench" or (corpora.synthetic_only and name == "synthetic"):
            fitted = {"dataset": ds, "outcomes": outcomes}  # kept for the error analysis
        del outcomes
    graph_name = (
        "aethel-ner3" if "aethel-ner3" in methods else next(m for m in methods if m.startswith("aethel-"))
    )
    errors = error_analysis(fitted["dataset"], graph_name, outcomes=fitted["outcomes"], graph=graph)
    tests = chapter_tests(results, PAIRS, ("MRR", "HR@5"), n_resamples=n_resamples, seed=0)
    verdicts = paper_verdicts(
        results,
        paper_rows("open_corpus") + paper_rows("open_corpus_multihop"),
        synthetic=sorted(n for n in corpora.loaded if n == "synthetic"),
    )
    result = {
        "datasets": results,
        "labels": {n: OPEN_DATASETS[n] for n in corpora.loaded},
        "missing": corpora.missing,
        "synthetic_only": corpora.synthetic_only,
        "tests": tests,
        "verdicts": verdicts,
        "error_analysis": errors,
        "parameters": {
            "datasets": corpora.datasets,
            "methods": list(methods),
            "quick": corpora.quick,
            "n_resamples": n_resamples,
        },
        "versions": versions(),
    }
    return OpenCorpusStudy(as_record(result))


@dataclass
class OpenCorpusStudy:
    """The open-corpus result (``result``, as ``results/open_corpus.json`` holds it) and what the chapter
    shows of it: pandas DataFrames, matplotlib Figures and Markdown text."""

    result: dict

    def save(self, results_dir: str | Path = "results") -> None:
        """Write ``results_dir/open_corpus.json``."""
        save_record(self.result, results_dir, "open_corpus")

    def figure(self, metric: str = "HR@5"):
        """:func:`ci_figure` of every corpus."""
        res = self.result["datasets"]
        return ci_figure(res, metric, labels={n: n for n in res})

    def headline(self) -> tuple[Any, str]:
        """The chapter's answer: the HR@5 figure and :func:`open_corpus_verdict`."""
        return self.figure("HR@5"), open_corpus_verdict(self.result)

    def ci_tables(self) -> dict:
        """Caption (Markdown) → methods × metrics with 95% CIs, one per corpus."""
        r = self.result
        return {
            f"**{name}** — {r['labels'][name]['label']} ({res['summary']['n_queries']} questions, "
            f"{res['summary']['n_passages']:,} passages)": ci_table(
                res["ci"], ["HR@1", "HR@5", "MRR", "AllSupport@5"]
            )
            for name, res in r["datasets"].items()
        }

    def leaders(self) -> str:
        """Markdown: per corpus, the stronger dense baseline on MRR and the best MRR of all."""
        lines = []
        for name, r in self.result["datasets"].items():
            m = r["methods"]
            if "dense" in m and "dense-max" in m:
                best = "dense-max" if m["dense-max"]["MRR"] > m["dense"]["MRR"] else "dense"
                lines.append(
                    f"* `{name}`: the stronger dense baseline is **`{best}`** (MRR {m[best]['MRR']:.3f} against "
                    f"{m['dense' if best == 'dense-max' else 'dense-max']['MRR']:.3f})."
                )
            top = max(m, key=lambda k: (m[k]["MRR"], k))
            lines.append(
                f"* `{name}`: the best MRR is `{top}`'s, {m[top]['MRR']:.3f}; BM25 {m['bm25']['MRR']:.3f}"
                + (f", NER3 graph {m['aethel-ner3']['MRR']:.3f}" if "aethel-ner3" in m else "")
                + "."
            )
        return "**Which dense baseline, and who wins** (generated from the result file):\n\n" + "\n".join(
            lines
        )

    def group_tables(self, metric: str = "HR@5") -> dict:
        """Caption (Markdown) → methods × question groups of ``metric``, one per corpus."""
        return {
            f"**{name}**, {metric} by question group": group_table(r["ci"], metric)
            for name, r in self.result["datasets"].items()
        }

    def reliance_table(self):
        """:func:`reliance_table` of every corpus."""
        return reliance_table(self.result["datasets"])

    def verdict_table(self):
        """:func:`verdict_table`: the paper's open-corpus numbers beside ours."""
        return verdict_table(self.result["verdicts"])

    def rrf_table(self) -> tuple[str, Any]:
        """RRF(BM25 + NER3 graph) − BM25 on MRR on every corpus, below the paper's: a caption (Markdown) and
        the DataFrame."""
        rows = [t for t in self.result["tests"] if (t["a"], t["b"], t["metric"]) == ("rrf", "bm25", "MRR")]
        p = next(t for t in PAPER_TESTS if (t["a"], t["b"], t["metric"]) == ("rrf", "bm25", "MRR"))
        df = _dataframe(
            [
                {
                    "corpus": f"paper (private, {p['n']} questions)",
                    "N": p["n"],
                    "RRF MRR": p["mean_a"],
                    "BM25 MRR": p["mean_b"],
                    "difference": round(p["mean_a"] - p["mean_b"], 3),
                    "95% CI": format_interval(p["ci_low"], p["ci_high"], signed=True),
                }
            ]
            + [
                {
                    "corpus": t["dataset"],
                    "N": t["n"],
                    "RRF MRR": t["mean_a"],
                    "BM25 MRR": t["mean_b"],
                    "difference": t["diff"],
                    "95% CI": format_interval(t["ci_low"], t["ci_high"], signed=True),
                }
                for t in rows
            ]
        )
        caption = (
            "**RRF(BM25 + NER3 graph) against BM25 on MRR, reported as the paper reports it** "
            f"(paired bootstrap, {self.result['parameters']['n_resamples']:,} resamples):"
        )
        return caption, df

    def tests_table(self):
        """Every paired test of the chapter with its Holm-adjusted p-value over all of them."""
        tests = self.result["tests"]
        df = comparisons_table(tests)
        df.insert(0, "data set", [t["dataset"] for t in tests])
        df["p (Holm, chapter)"] = [t["p_holm_chapter"] for t in tests]
        return df[
            ["data set", "a", "b", "metric", "n", "diff", "95% CI", "p_randomization", "p (Holm, chapter)"]
        ]

    def gap(self) -> str:
        """Markdown: the HR@5 gap the error analysis has to explain (the graph, BM25, the better dense
        variant, and the paper's numbers)."""
        ea = self.result["error_analysis"]
        gap = self.result["datasets"][ea["dataset"]]["methods"]
        best_dense = max(
            (d for d in ("dense", "dense-max") if d in gap), key=lambda d: (gap[d]["HR@5"], d), default=None
        )
        return (
            f"On `{ea['dataset']}` the `{ea['method']}` graph has HR@5 {gap[ea['method']]['HR@5']:.3f}, BM25 "
            f"{gap['bm25']['HR@5']:.3f}"
            + (f", `{best_dense}` {gap[best_dense]['HR@5']:.3f}" if best_dense else "")
            + " (the paper, on its private corpus: "
            + ", ".join(
                f"{r['paper_method']} {r['value']:.3f}"
                for r in paper_rows("open_corpus")
                if r["metric"] == "HR@5"
            )
            + ")."
        )

    def aggregate_table(self):
        """The error analysis's aggregate measurements, one row each."""
        ea = self.result["error_analysis"]
        agg = ea["aggregate"]
        return _dataframe({"": list(agg), f"{ea['method']} on {ea['dataset']}": list(agg.values())})

    def rank_figure(self):
        """:func:`aethel_lite.studies.analysis.rank_figure` of the error analysis."""
        return analysis.rank_figure(self.result["error_analysis"])

    def hubs_tables(self) -> tuple[Any, Any]:
        """The highest-degree entity nodes, and those holding the most PageRank mass (DataFrames)."""
        ea = self.result["error_analysis"]
        return _dataframe(ea["hubs"]), _dataframe(ea["hub_mass"])

    def examples(self) -> list[str]:
        """The worked examples in Markdown (:func:`aethel_lite.studies.analysis.example_markdown`)."""
        return [analysis.example_markdown(ex) for ex in self.result["error_analysis"]["examples"]]

    def takeaways(self) -> str:
        """:func:`takeaways` of the result."""
        return takeaways(self.result)


# ------------------------------------------------------------------------------------- tables, figure
def _dataframe(rows, index: str | None = None):
    import pandas as pd

    df = pd.DataFrame(rows)
    return df if index is None else df.set_index(index)


def ci_table(ci: Mapping[str, Mapping[str, Any]], metrics: Sequence[str]):
    """Methods × metrics over all questions, each cell ``mean [95% CI]``, from the ``ci`` block of an open-corpus
    result."""
    return _dataframe(
        [
            {
                "method": method,
                **{
                    m: format_estimate(entry["all"][m], interval_decimals=3)
                    for m in metrics
                    if m in entry["all"]
                },
            }
            for method, entry in ci.items()
        ],
        "method",
    )


def group_table(ci: Mapping[str, Mapping[str, Any]], metric: str):
    """Methods × question groups for one metric (``mean [CI]``), with the group sizes in the header."""
    groups = sorted({g for entry in ci.values() for g in entry["groups"]})
    rows = []
    for method, entry in ci.items():
        row = {"method": method}
        for g in groups:
            cell = entry["groups"].get(g, {}).get(metric)
            if cell is not None:
                row[f"{g} (n={cell['n']})"] = format_estimate(cell, interval_decimals=3)
        rows.append(row)
    return _dataframe(rows, "method")


def ci_figure(
    results: Mapping[str, Mapping[str, Any]],
    metric: str = "HR@5",
    methods: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
):
    """One panel per data set: each method's mean ``metric`` as a dot with its 95% CI as a bar.

    The panels stand in rows of at most three, so that each stays readable in the text column.
    """
    import matplotlib.pyplot as plt

    names = list(results)
    ncols = min(3, len(names))
    nrows = -(-len(names) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 3.2 * nrows), sharex=True, squeeze=False)
    for ax in axes.flat[len(names) :]:
        ax.set_visible(False)
    for ax, name in zip(axes.flat, names):
        ci = results[name]["ci"]
        ms = [m for m in (methods or ci) if m in ci]
        means = [ci[m]["all"][metric]["mean"] for m in ms]
        lo = [means[i] - ci[m]["all"][metric]["ci_low"] for i, m in enumerate(ms)]
        hi = [ci[m]["all"][metric]["ci_high"] - means[i] for i, m in enumerate(ms)]
        y = list(range(len(ms)))[::-1]
        ax.errorbar(means, y, xerr=[lo, hi], fmt="o", capsize=3)
        ax.set_yticks(y, ms, fontsize=8)
        ax.set_xlim(0, 1)
        ax.set_xlabel(f"{metric} (95% CI)")
        ax.set_title((labels or {}).get(name, name), fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def verdict_table(verdicts: Sequence[Mapping[str, Any]]):
    """The paper's open-corpus numbers beside ours with the generated verdict (rows of
    :func:`paper_verdicts`); ``ours`` is empty when not comparable."""
    rows = []
    for v in verdicts:  # a "not comparable" number (synthetic stand-in) is not set beside the paper's
        ours = (
            ""
            if v["ours"] is None or v["verdict"] == "not comparable"
            else format_estimate(v["ours"], v["ci_low"], v["ci_high"], interval_decimals=3)
        )
        rows.append(
            {
                "paper's method": v["paper_method"],
                "metric": v["metric"] + (" (multi-hop)" if v["section"].endswith("multihop") else ""),
                "paper": v["paper"],
                "our data set": v["dataset"],
                "ours [95% CI]": ours,
                "verdict": v["verdict"],
                "why": v["why"],
            }
        )
    return _dataframe(rows)


def reliance_table(results: Mapping[str, Mapping[str, Any]]):
    """Per data set and graph method: share of questions on the BM25 fallback, share of top-5 slots
    ordered by BM25, and HR@5 of the method."""
    return _dataframe(
        [
            {
                "data set": name,
                "method": method,
                "questions on BM25 fallback": rel["fallback_share"],
                "top-5 slots ordered by BM25": rel["bm25_top5_share"],
                "HR@5": res["methods"][method]["HR@5"],
            }
            for name, res in results.items()
            for method, rel in res.get("reliance", {}).items()
        ]
    )


def open_corpus_verdict(saved: Mapping[str, Any], metric: str = "MRR") -> str:
    """One paragraph from an open-corpus result: per corpus the best method's ``metric`` and the NER3
    graph's, and the count of the paper's numbers by verdict."""
    said = []
    for name, r in saved["datasets"].items():
        ci = {m: e["all"][metric] for m, e in r["ci"].items() if metric in e["all"]}
        if not ci:
            continue
        best = max(ci, key=lambda m: (ci[m]["mean"], m))
        text = f"On {name}, the best {metric} is `{best}`'s, {format_estimate(ci[best])}"
        for other in ("aethel-ner3", "bm25"):
            if other in ci and other != best:
                text += f"; `{other}` {format_estimate(ci[other])}"
        said.append(text + ".")
    counts = Counter(v["verdict"] for v in saved.get("verdicts", []))
    if counts:
        said.append(
            f"Of the paper's {sum(counts.values())} open-corpus numbers: "
            + ", ".join(f"{n} {v}" for v, n in counts.items())
            + "."
        )
    verdict = " ".join(said)
    if saved.get("synthetic_only"):
        verdict = (
            "Only the synthetic corpus ran (no real data was found): these are not the paper's experiment. "
            + verdict
        )
    return verdict
