r"""The open-corpus study: every question searches a whole corpus (the paper's second setting).

The paper's experiment on a private corpus of 4,123 financial chunks (:mod:`aethel_lite.studies.paper`),
re-run on public corpora (:data:`OPEN_DATASETS`) for ``notebooks/20_open_corpus.ipynb``.

References
----------
Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13 (percentile interval).
Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand. J. Statist. 6.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..caching.resultcache import cached, dataset_digest
from ..data.own_files import own_files
from ..data.runs import RUN_DEPTH
from ..data.sampling import sample_corpus
from ..data.select import load_for_eval
from ..data.summary import dataset_summary
from ..errors import ParameterError
from ..evaluation.runner import paired_comparisons, run_methods, score_runs
from ..evaluation.stats import bootstrap_ci, format_estimate, holm
from ..explain.diagnostics import reliance
from ..retrievers import GraphRetriever, HybridRetriever
from ..retrievers.registry import known_methods
from . import analysis
from .paper import PAPER_TESTS

__all__ = [
    "OPEN_DATASETS",
    "QUICK",
    "check_parameters",
    "load_open",
    "group_of",
    "metric_cis",
    "evaluate_open",
    "error_analysis",
    "graph_reliance",
    "chapter_tests",
    "paper_verdicts",
    "OPEN_METRICS",
    "pick_examples",
    "takeaways",
    "OpenCorpora",
]

#: name → how to load it and what it stands for in the paper.
OPEN_DATASETS: dict[str, dict[str, Any]] = {
    "financebench": {
        "format": "financebench",
        "granularity": "page",
        "label": "FinanceBench, pages of the 74 filings asked about",
        "stands_for": "the paper's financial corpus (real SEC filings), at page level",
    },
    "financebench-own": {
        "format": "financebench",
        "granularity": "page",
        "own_files": True,
        "label": "FinanceBench pages as your own files: opaque document ids, no titles, no filing metadata",
        "stands_for": "a user's own PDFs: what the retrievers know of each filing is what its pages say",
    },
    "financebench-4123": {
        "format": "financebench",
        "granularity": "page",
        "corpus_size": 4123,
        "label": "FinanceBench pages, sampled to the paper's 4,123 passages (gold kept)",
        "stands_for": "the paper's corpus size, with real filings",
    },
    "financebench-chunk": {
        "format": "financebench",
        "granularity": "chunk",
        "label": "FinanceBench, ~200-word chunks of the same filings",
        "stands_for": "the paper's financial corpus, chunked as the paper chunks it",
    },
    "musique-open": {
        "format": "musique",
        "label": "MuSiQue-open: the sample's paragraphs pooled",
        "stands_for": "a public corpus close in size (≈4,000 passages) and kind (multi-hop)",
    },
    "2wiki-open": {
        "format": "2wiki",
        "label": "2Wiki-open: the sample's paragraphs + 6,119 distractors",
        "stands_for": "multi-hop Wikipedia questions among real distractors",
    },
    "synthetic": {
        "format": "synthetic",
        "size": 4123,
        "label": "synthetic private-equity corpus, 4,123 passages",
        "stands_for": "a financial corpus of the paper's size with known truth and aliases",
    },
}

#: Metrics reported per method (MRR is over the top 1,000 of each ranking; see evaluation.runner.run_methods).
OPEN_METRICS = ("HR@1", "HR@5", "MRR", "AllSupport@5", "Recall@5")

#: ``quick`` mode (CI): the first ``limit`` questions over a sampled corpus of ``corpus_size`` passages (every
#: cell of a chapter runs on real data; the sample is small because each FinanceBench page is encoded as a page,
#: its max-pooling windows and its heading, in both the named and the own-files setting).
QUICK = {"limit": 12, "corpus_size": 100}


def check_parameters(datasets: Sequence[str], methods: Sequence[str]) -> None:
    """Fail fast, naming the parameter, on an unknown data set or method name."""
    if isinstance(datasets, str) or isinstance(methods, str):
        raise ParameterError("datasets and methods must be lists of names, e.g. datasets = ['financebench']")
    unknown = [d for d in datasets if d not in OPEN_DATASETS]
    if unknown or not datasets:
        raise ParameterError(
            f"datasets: unknown {unknown or 'empty list'}; choose from {', '.join(OPEN_DATASETS)}"
        )
    bad = [m for m in methods if m not in known_methods()]
    if bad or not methods:
        raise ParameterError(
            f"methods: unknown {bad or 'empty list'}; choose from {', '.join(known_methods())}"
        )


def load_open(
    name: str,
    *,
    data: str | None = None,
    limit: int | None = None,
    corpus_size: int | None = None,
    seed: int = 0,
    docs: str = "question",
):
    """Load open-corpus data set ``name`` (a key of :data:`OPEN_DATASETS`), pools dropped.

    ``limit`` keeps the first questions (and the whole corpus); ``corpus_size`` then samples the
    corpus with :func:`aethel_lite.data.sampling.sample_corpus` (gold kept, the rest drawn with
    ``seed``). An own-files data set hides the filings' names and metadata after sampling: the same
    pages as ``"financebench"``. Raises :class:`~aethel_lite.errors.DataNotFoundError` without the data.
    """
    if name not in OPEN_DATASETS:
        raise ParameterError(f"datasets: unknown {name!r}; choose from {', '.join(OPEN_DATASETS)}")
    spec = OPEN_DATASETS[name]
    fmt = spec["format"]
    if fmt == "synthetic":
        ds = load_for_eval("synthetic", size=spec["size"], seed=0)
    elif fmt == "financebench":
        ds = load_for_eval(fmt, data, docs=docs, granularity=spec["granularity"])
    else:
        ds = load_for_eval(fmt, data, setting="open")
    if limit:
        ds = ds.subset(limit=limit, keep_all_passages=True)
    corpus_size = corpus_size or spec.get("corpus_size")
    if corpus_size:
        ds = sample_corpus(ds, corpus_size, seed)
    if spec.get("own_files"):
        ds = own_files(ds)
    ds.name = name
    return ds


def group_of(dataset_name: str, query) -> str:
    """The question group of split results: evidence pages (FinanceBench), 2Wiki type, else hops."""
    if dataset_name.startswith("financebench"):
        return "one evidence page" if query.hops <= 1 else "several evidence pages"
    if dataset_name.startswith("2wiki") and query.meta.get("type"):
        return str(query.meta["type"])
    if dataset_name.startswith("synthetic"):
        return "single-hop" if query.hops <= 1 else "multi-hop"
    return f"{query.hops}-hop"


def metric_cis(
    block: Mapping[str, Mapping[str, Any]],
    queries: Sequence,
    groups: Mapping[str, str] | None = None,
    *,
    metrics: Sequence[str] = OPEN_METRICS,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> dict:
    """Mean and 95% percentile-bootstrap CI of every method's per-query metrics.

    Returns ``{method: {"all": {metric: {"mean", "ci_low", "ci_high", "n"}}, "groups": {group: {...}}}}``;
    ``groups`` maps qid → group name (None: overall only).
    """

    def cell(values: list[float]) -> dict:
        if len(values) < 2:  # no interval from one question: the interval is the point
            mean = float(values[0]) if values else float("nan")
            return {
                "mean": round(mean, 6),
                "ci_low": round(mean, 6),
                "ci_high": round(mean, 6),
                "n": len(values),
            }
        ci = bootstrap_ci(values, n_resamples=n_resamples, seed=seed)
        return {
            "mean": round(float(ci.mean), 6),
            "ci_low": round(float(ci.ci_low), 6),
            "ci_high": round(float(ci.ci_high), 6),
            "n": len(values),
        }

    def cells(pq: Mapping[str, Mapping[str, float]], members: list[str]) -> dict:
        return {m: cell([pq[q][m] for q in members]) for m in metrics if m in pq[qids[0]]}

    qids = [q.qid for q in queries]
    names = sorted(set((groups or {}).values()))
    return {
        method: {
            "all": cells(e["per_query_metrics"], qids),
            "groups": {g: cells(e["per_query_metrics"], [q for q in qids if groups[q] == g]) for g in names},
        }
        for method, e in block.items()
    }


def graph_reliance(outcomes: Mapping[str, Any], queries: Sequence, k: int) -> dict:
    """Per graph method, how much of its open-corpus run came from BM25 rather than the graph
    (:func:`aethel_lite.explain.diagnostics.reliance` at depth ``k``)."""
    out = {}
    for name, outcome in outcomes.items():
        retriever = getattr(outcome, "retriever", None)
        if isinstance(retriever, (GraphRetriever, HybridRetriever)):
            summary = reliance(retriever, queries, outcome.run, k)
            out[name] = {key: (round(v, 6) if isinstance(v, float) else v) for key, v in summary.items()}
    return out


def evaluate_open(
    dataset,
    methods: Sequence[str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    graph: Mapping | None = None,
    progress: bool = False,
    log: Callable[[str], None] | None = None,
) -> tuple[dict, dict]:
    """Run ``methods`` on ``dataset`` in the open setting and score them (cached on disk).

    Returns
    -------
    result : dict
        ``{"summary", "meta", "groups", "methods" (the aethel eval block), "ci", "reliance", "timing"}``.
    outcomes : dict
        method → :class:`~aethel_lite.evaluation.runner.MethodOutcome`; empty when the result came from the cache.
    """
    outcomes: dict = {}

    def compute() -> dict:
        outcomes.update(
            run_methods(
                dataset,
                methods,
                setting="open",
                progress=progress,
                log=log,
                graph=graph,
            )
        )
        block = score_runs(outcomes, dataset.queries, k=5)
        groups = {q.qid: group_of(dataset.name, q) for q in dataset.queries}
        return {
            "summary": dataset_summary(dataset),
            "meta": {
                k: dataset.meta[k]
                for k in (
                    "left_out",
                    "duplicates_merged",
                    "sample",
                    "chunk_words",
                    "chunk_overlap",
                    "n_distractors",
                    "fallback_from",
                )
                if k in dataset.meta
            },
            "groups": groups,
            "methods": block,
            "ci": metric_cis(block, dataset.queries, groups, n_resamples=n_resamples, seed=seed),
            "reliance": graph_reliance(outcomes, dataset.queries, RUN_DEPTH),
            "timing": {name: round(o.seconds, 3) for name, o in outcomes.items()},
        }

    result = cached(
        "open-eval",
        {
            "dataset": dataset_digest(dataset),
            "methods": list(methods),
            "n_resamples": n_resamples,
            "seed": seed,
            "graph": graph,
        },
        compute,
    )
    return result, outcomes


def error_analysis(
    dataset,
    method: str,
    *,
    outcomes: Mapping | None = None,
    graph: Mapping | None = None,
    top: int = 15,
    examples: int = 5,
) -> dict:
    """Where a graph method's mass goes on ``dataset``: the chapter's error analysis (cached on disk).

    Parameters
    ----------
    dataset : Dataset
    method : str
        A graph method (``aethel-*``).
    outcomes : mapping, optional
        :func:`evaluate_open`'s outcomes, whose fitted ``method`` retriever is used when present.
    top, examples : int
        Hub entities listed; worked examples (:func:`pick_examples`).

    Returns
    -------
    dict
        ``{"dataset", "method", "aggregate", "per_query", "hubs", "hub_mass", "examples"}``
        (:mod:`aethel_lite.studies.analysis`).
    """

    def compute() -> dict:
        outcome = (outcomes or {}).get(method)
        if outcome is None or outcome.retriever is None:
            outcome = run_methods(dataset, [method], setting="open", progress=False, log=None, graph=graph)[
                method
            ]
        retriever, questions = outcome.retriever, dataset.queries
        agg = analysis.aggregate_report(retriever, questions)
        by_id = {q.qid: q for q in questions}
        return {
            "dataset": dataset.name,
            "method": method,
            "aggregate": {k: v for k, v in agg.items() if k != "per_query"},
            "per_query": agg["per_query"],
            "hubs": analysis.hub_entities(retriever, top=top),
            "hub_mass": analysis.hub_mass(retriever, questions, top=top),
            "examples": [
                analysis.worked_example(retriever, by_id[qid], k=5)
                for qid in pick_examples(agg["per_query"], k=examples)
            ],
        }

    return cached(
        "open-errors",
        {
            "dataset": dataset_digest(dataset),
            "method": method,
            "top": top,
            "examples": examples,
            "graph": graph,
        },
        compute,
    )


def chapter_tests(
    results: Mapping[str, Mapping[str, Any]],
    pairs: Sequence[tuple[str, str]],
    metrics: Sequence[str] = ("MRR", "HR@5"),
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> list[dict]:
    """Paired bootstrap and randomization tests of every pair on every data set, Holm-adjusted over all rows.

    Each row is :func:`aethel_lite.evaluation.runner.paired_comparisons`'s plus ``dataset`` and
    ``p_holm_chapter`` (the bootstrap p-value Holm-adjusted over every test of the chapter).
    """
    rows = [
        {"dataset": name, **row}
        for name, res in results.items()
        for row in paired_comparisons(
            res["methods"],
            [p for p in pairs if set(p) <= res["methods"].keys()],
            metrics,
            n_resamples=n_resamples,
            seed=seed,
        )
    ]
    adjusted = holm([r["p_bootstrap"] for r in rows]) if rows else []
    for row, p in zip(rows, adjusted):
        row["p_holm_chapter"] = round(float(p), 6)
    return rows


def paper_verdicts(
    results: Mapping[str, Mapping[str, Any]], rows: Sequence[Mapping[str, Any]], synthetic: Sequence[str] = ()
) -> list[dict]:
    """One row per (paper number, our data set): ours, our 95% CI, and a verdict.

    ``verdict``: ``"inside our CI"``, ``"outside our CI"``, or ``"not comparable"`` (data sets in
    ``synthetic``, or the method not run); ``why`` says what separates the two corpora. Rows of the
    ``open_corpus_multihop`` section are compared on the multi-evidence / multi-hop group.
    """
    out = []
    for r in rows:
        for name, res in results.items():
            ci = res["ci"].get(r["ours"])
            cell = None
            if ci is not None:
                if r["section"] == "open_corpus_multihop":
                    multi = [
                        g
                        for g in ci["groups"]
                        if g in ("several evidence pages", "multi-hop")
                        or (g.endswith("-hop") and g != "1-hop")
                    ]
                    if len(multi) == 1:
                        cell = ci["groups"][multi[0]].get(r["metric"])
                else:
                    cell = ci["all"].get(r["metric"])
            if cell is None:
                verdict, why = (
                    "not comparable",
                    "not run on this data set" if ci is None else "no such question group",
                )
            elif name in synthetic:
                verdict, why = "not comparable", "synthetic data stands in for missing real data"
            else:
                verdict = (
                    "inside our CI" if cell["ci_low"] <= r["value"] <= cell["ci_high"] else "outside our CI"
                )
                why = f"different corpus and questions: {OPEN_DATASETS.get(name, {}).get('stands_for', name)}"
            out.append(
                {
                    "dataset": name,
                    "paper_method": r["paper_method"],
                    "metric": r["metric"],
                    "section": r["section"],
                    "paper": r["value"],
                    "ours_method": r["ours"],
                    "ours": None if cell is None else cell["mean"],
                    "ci_low": None if cell is None else cell["ci_low"],
                    "ci_high": None if cell is None else cell["ci_high"],
                    "verdict": verdict,
                    "why": why,
                }
            )
    return out


def pick_examples(rows: Sequence[Mapping[str, Any]], k: int = 5) -> list[str]:
    """Question ids for worked examples from :func:`aethel_lite.studies.analysis.aggregate_report`'s rows:
    the first whose gold ranks in the top ``k``, the first whose gold PageRank reaches but ranks
    below ``k``, and the first whose gold it never reaches (a kind with no such question is skipped)."""
    kinds = (
        lambda r: r["gold_rank"] is not None and r["gold_rank"] <= k,
        lambda r: r["gold_reached"] and (r["gold_rank"] is None or r["gold_rank"] > k),
        lambda r: r["has_gold"] and not r["gold_reached"],
    )
    chosen = []
    for kind in kinds:
        qid = next((r["qid"] for r in rows if kind(r) and r["qid"] not in chosen), None)
        if qid is not None:
            chosen.append(qid)
    return chosen


def ci_text(c: Mapping[str, Any]) -> str:
    """A :func:`metric_cis` cell as ``mean [ci_low, ci_high]``, 3 decimals."""
    return format_estimate(c, interval_decimals=3)


def _cell(res: Mapping[str, Any], method: str, metric: str) -> str:
    ci = res["ci"].get(method)
    return "n/a" if ci is None else ci_text(ci["all"][metric])


def takeaways(saved: Mapping[str, Any]) -> str:
    """The chapter's closing bullets, every number read from a saved open-corpus result: the order
    of BM25, the best dense variant and the NER3 graph on each corpus against the paper's, the
    RRF − BM25 MRR difference against the paper's, and the measured reasons from the error analysis."""
    out = []
    if saved.get("synthetic_only"):
        out.append(
            "*No real data was found: every number here comes from the synthetic corpus and says nothing "
            "about the paper's claims.*"
        )
    for name, res in saved["datasets"].items():
        m = res["methods"]
        dense = max(
            (d for d in ("dense", "dense-max") if d in m), key=lambda d: (m[d]["HR@5"], d), default=None
        )
        shown = (("bm25", "BM25"), (dense, dense), ("aethel-ner3", "NER3 graph"))
        parts = [f"{label} {_cell(res, x, 'HR@5')}" for x, label in shown if x == "bm25" or x in m]
        order = sorted(
            (x for x in ("bm25", dense, "aethel-ner3") if x and x in m), key=lambda x: -m[x]["HR@5"]
        )
        paper_order = order == ["bm25", "aethel-ner3", dense]
        out.append(
            f"* **{name}**, HR@5: "
            + "; ".join(parts)
            + f". Order: {' > '.join(order)}"
            + (" — the paper's order." if paper_order else " — not the paper's BM25 > graph > dense.")
        )

    paper = next(p for p in PAPER_TESTS if (p["a"], p["b"], p["metric"]) == ("rrf", "bm25", "MRR"))
    for t in saved.get("tests", []):
        if (t["a"], t["b"], t["metric"]) == ("rrf", "bm25", "MRR"):
            out.append(
                f"* RRF(BM25 + graph) − BM25 on MRR, `{t['dataset']}`: "
                f"{format_estimate(t, signed=True, interval_decimals=3)}, N = {t['n']} (paper: "
                f"{format_estimate(paper['mean_a'] - paper['mean_b'], paper['ci_low'], paper['ci_high'], signed=True, interval_decimals=3)}, "
                f"N = {paper['n']})"
                + (
                    "; the CI excludes zero."
                    if t["ci_low"] > 0 or t["ci_high"] < 0
                    else "; the CI spans zero, as in the paper."
                )
            )
    ea = saved.get("error_analysis")
    if ea:
        a = ea["aggregate"]

        def pct(x):
            return "n/a" if x is None else f"{100 * x:.0f}%"

        facts = (
            f"* What the graph does on `{ea['dataset']}` ({ea['method']}): a question's seed entity touches a median "
            f"of {a['median_seed_degree']} passages in {a['median_seed_documents']} documents; "
            f"{pct(a['gold_has_seed_share'])} of gold passages carry a seed entity at all; PageRank reaches the gold "
            f"passage for {pct(a['gold_reached_share'])} of questions; {pct(a['fallback_share'])} of questions have no "
            f"seed entity and fall back to BM25; on average {a['mean_tied_top'] or 0:.1f} passages tie at the top score."
        )
        reasons = []
        if (a["median_seed_documents"] or 0) >= 5:
            reasons.append(
                "a seed such as a company name sits on passages of many documents, so its mass is spread "
                "over all of them"
            )
        if a["gold_has_seed_share"] is not None and a["gold_has_seed_share"] < 0.5:
            reasons.append(
                "most gold passages carry none of the question's seed entities: what picks the passage "
                "(a year, a line item, a metric) is not an entity in the graph"
            )
        if (a["mean_tied_top"] or 0) >= 2:
            reasons.append(
                "passages with the same seed entities get the same PageRank score and cannot be told apart"
            )
        out.append(facts + (" Measured reasons: " + "; ".join(reasons) + "." if reasons else ""))
    return "\n".join(out)


@dataclass
class OpenCorpora:
    """The corpora a chapter asked for (``datasets``), those it loaded and those it could not (``missing``:
    name → why), from :func:`load_corpora`."""

    datasets: list
    loaded: dict
    missing: dict = field(default_factory=dict)
    quick: bool = False

    @property
    def synthetic_only(self) -> bool:
        return set(self.loaded) == {"synthetic"}

    def table(self):
        """One row per loaded corpus: what it is, what it stands for in the paper, passages, questions."""
        import pandas as pd

        return pd.DataFrame(
            [
                {
                    "data set": name,
                    "what it is": OPEN_DATASETS[name]["label"],
                    "stands for": OPEN_DATASETS[name]["stands_for"],
                    "passages": len(ds.passages),
                    "questions": len(ds.queries),
                }
                for name, ds in self.loaded.items()
            ]
        )

    def missing_markdown(self) -> str:
        """The corpora not run for want of data (empty when none)."""
        return (
            "**Not run (data missing):** " + "; ".join(f"`{k}`" for k in self.missing) if self.missing else ""
        )

    def notes(self) -> str:
        """Markdown bullets on how each corpus was made: questions left out, chunking, merged duplicates,
        the quick sample."""
        notes = []
        for name, ds in self.loaded.items():
            if "left_out" in ds.meta:
                notes.append(
                    f"* `{name}`: {len(ds.meta['left_out'])} FinanceBench questions are left out because their "
                    "evidence filing's PDF was not available, so its pages are not in the corpus; "
                    f"{len(ds.queries)} questions remain. Left out: "
                    + ", ".join(f"`{qid}`" for qid in sorted(ds.meta["left_out"]))
                    + "."
                )
            if ds.meta.get("chunk_words"):
                notes.append(
                    f"* `{name}`: {len(ds.passages):,} chunks of {ds.meta['chunk_words']} words overlapping by "
                    f"{ds.meta['chunk_overlap']}; a chunk is gold when it holds the annotated evidence text."
                )
            if ds.meta.get("duplicates_merged"):
                notes.append(
                    f"* `{name}`: {ds.meta['duplicates_merged']} paragraphs repeated across questions' pools "
                    "were merged into one passage (gold remapped)."
                )
            if "sample" in ds.meta:
                notes.append(
                    f"* `{name}`: quick mode, a sample of {ds.meta['sample']['size']} passages "
                    f"(all {ds.meta['sample']['n_gold']} gold kept)."
                )
        return "\n".join(notes)
