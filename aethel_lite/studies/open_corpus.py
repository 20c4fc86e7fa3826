r"""The open-corpus study: every question searches a whole corpus (the paper's second setting).

The paper's experiment on a private corpus of 4,123 financial chunks (:mod:`aethel_lite.studies.paper`),
re-run on public corpora (:data:`OPEN_DATASETS`) for ``notebooks/20_open_corpus.ipynb``.

References
----------
Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13 (percentile interval).
Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand. J. Statist. 6.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..caching.resultcache import cached, dataset_digest
from ..caching.versions import versions
from ..data.own_files import own_files
from ..data.sampling import sample_corpus
from ..data.select import load_for_eval
from ..data.summary import dataset_summary
from ..errors import DataNotFoundError, ParameterError
from ..evaluation.runner import paired_comparisons, run_methods, score_runs
from ..evaluation.stats import bootstrap_ci, format_estimate, format_interval, holm
from ..explain.diagnostics import reliance
from ..retrievers import GraphRetriever, HybridRetriever
from ..retrievers.registry import known_methods
from ..retrievers.run import RUN_DEPTH
from . import analysis
from .closed_pool import comparisons_table
from .paper import PAPER_TESTS, paper_rows
from .record import as_record, save_record

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
    "PAIRS",
    "load_corpora",
    "OpenCorpora",
    "open_corpus_study",
    "OpenCorpusStudy",
    "ci_table",
    "group_table",
    "ci_figure",
    "verdict_table",
    "reliance_table",
    "open_corpus_verdict",
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
QUICK = {"limit": 12, "corpus_size": 150}


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
