"""Beyond the paper: the ``aethel-hybrid`` study — baselines, the method and its ablations on each open
corpus, development / test / all questions, paired bootstrap tests against BM25 and dense retrieval,
the closed-pool check and question latency.

What the chapter shows of the results (our targets, tables, the figure and generated sentences) is
read off the saved result by :mod:`aethel_lite.studies.beyond_report`.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..caching.memo import shared
from ..caching.resultcache import cached, dataset_digest
from ..data.summary import dataset_summary
from ..errors import DataNotFoundError, ParameterError
from ..evaluation.metrics import mean
from ..evaluation.runner import MethodOutcome, block_of, paired_comparisons, run_methods, score_runs
from ..explain import explained_search
from ..retrievers import params_json
from ..retrievers.hybrid import ABLATIONS, HISTORICAL
from ..retrievers.registry import make_retriever
from .open_corpus import QUICK, load_open
from .tuning import halves

# ------------------------------------------------------------------------------------ study
#: The corpora of the study (the development halves of these chose the weights).
STUDY_CORPORA = ("financebench", "musique-open", "2wiki-open", "synthetic")
#: Baselines run beside the hybrid in :func:`beyond_study`.
BASELINES = ("bm25", "dense", "dense-max", "rrf-dense", "aethel-bct")
#: Metrics of the study's tables.
BEYOND_METRICS = ("HR@1", "HR@5", "MRR", "AllSupport@5", "Recall@5")
#: Variants ``aethel-hybrid`` is tested against to measure what the graph itself adds
#: (:func:`~aethel_lite.studies.beyond_report.composition`).
COMPONENT_TESTS = ("aethel-hybrid-no-graph", "aethel-hybrid-no-metadata", "aethel-hybrid-no-heading")
#: Metrics of the paired tests
_TESTED = ("MRR", "HR@5", "Recall@5", "AllSupport@5")


#: ``aethel-hybrid``'s variants in the study's tables: the ablations, then the earlier setting
VARIANTS = (*ABLATIONS, *HISTORICAL)


def _derive(base, name: str, passages):
    """The fitted variant ``name`` (a hybrid method of the registry) of a fitted ``aethel-hybrid`` retriever: it
    shares the base's fitted paper retriever when their graph settings agree (``prefit``); entities and embeddings
    come from the stores."""
    if name == "aethel-hybrid":
        return base
    r = make_retriever(name, graph={"n_process": base.graph.n_process})
    if params_json(r.graph) == params_json(base.graph):
        r.set_params(graph=base.graph_retriever_, prefit=True)
    with shared():
        return r.fit(passages)


def _fit_hybrids(
    dataset, names: Sequence[str], *, setting: str, depth: int, n_process: int, keep: dict | None = None
) -> dict:
    """Fit ``aethel-hybrid`` once and derive its variants; run each (MethodOutcome per name).

    ``keep`` receives the fitted ``aethel-hybrid`` under ``dataset.name``. Only its top-5 hits are
    attributed to their seed sources (``extra["sources"]``, for :func:`_top_sources`): the variants
    explain none, which spares one PageRank solve per seed source and question."""
    pool = "query" if setting == "closed" else None
    t0 = time.perf_counter()
    base = make_retriever("aethel-hybrid", graph={"n_process": n_process})
    with shared():  # per-text work shared with the methods fitted before it (aethel_lite.caching.memo)
        base.fit(dataset.passages)
    fit_seconds = time.perf_counter() - t0
    if keep is not None:
        keep[dataset.name] = base
    out = {}
    for name in names:
        t = time.perf_counter()
        r = _derive(base, name, dataset.passages)
        extra = {}
        with shared():
            if name == "aethel-hybrid":
                result = explained_search(r, dataset.queries, k=depth, pool=pool, depth=5)
                run, extra["sources"] = result.run, result.sources
            else:
                run = r.search(dataset.queries, k=depth, pool=pool)
        run.name = name
        out[name] = MethodOutcome(name, run, fit_seconds + time.perf_counter() - t, r, extra)
    return out


def score_halves(
    block: Mapping[str, Mapping[str, Any]],
    parts: Mapping[str, Sequence[str]],
    *,
    metrics: Sequence[str] = BEYOND_METRICS,
) -> dict:
    """Mean of every metric of every method on each half and on all questions.

    Returns ``{method: {"dev" | "test" | "all": {metric: mean}}}`` (``None`` for an empty half).
    """

    def means(pq: Mapping[str, Any], qids: Sequence[str]) -> dict:
        vals = [pq[q] for q in qids if q in pq]
        return {m: (round(mean([v[m] for v in vals]), 6) if vals else None) for m in metrics}

    return {
        method: {
            half: means(e["per_query_metrics"], qids)
            for half, qids in [*parts.items(), ("all", list(e["per_query_metrics"]))]
        }
        for method, e in block.items()
    }


def _tests(block, parts, pairs, n_resamples, seed) -> list[dict]:
    """Paired tests of ``pairs`` on :data:`_TESTED`, on the test half and all questions."""
    rows = []
    for half in ("test", "all"):
        qids = parts[half] if half != "all" else list(next(iter(block.values()))["per_query_metrics"])
        if len(qids) < 2:
            continue
        sub = block_of(block, qids)
        usable = [p for p in pairs if p[0] in sub and p[1] in sub]
        for row in paired_comparisons(sub, usable, _TESTED, n_resamples=n_resamples, seed=seed):
            rows.append({"half": half, **row, "excludes_zero": bool(row["ci_low"] > 0 or row["ci_high"] < 0)})
    return rows


def _top_sources(sources, run, k: int = 5) -> dict:
    """Share of the top-``k`` hits whose largest source is each seed source (``sources``: ``SearchResult.sources``)."""
    counts = Counter(
        max(shares, key=shares.get)
        for qid, hits in run.items()
        for pid, _ in hits[:k]
        if (shares := sources.get(qid, {}).get(pid))
    )
    n = sum(counts.values())
    return {c: round(v / n, 6) for c, v in sorted(counts.items())} if n else {}


def beyond_study(
    loaded: Mapping[str, Any],
    *,
    baselines: Mapping[str, Mapping[str, Any]] | None = None,
    variants: Sequence[str] | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    n_process: int = 1,
    depth: int = 1000,
    log: Callable[[str], None] | None = None,
    keep: dict | None = None,
    baseline_names: Sequence[str] = BASELINES,
) -> dict:
    """Run the baselines, ``aethel-hybrid`` and its ablations on each open corpus; score halves; test.

    Parameters
    ----------
    loaded : mapping
        Open-corpus name → Dataset (:func:`aethel_lite.studies.open_corpus.load_open`).
    baselines : mapping, optional
        Corpus name → an ``aethel eval`` ``methods`` block already computed on the same data set:
        the baselines found there are reused, the others are run.
    variants : sequence of str, optional
        Hybrid variants to run (default ``aethel-hybrid`` and every ablation).
    n_resamples, seed : int
        Bootstrap resamples and seed of the paired tests.
    n_process : int
        spaCy worker processes for entity extraction.
    keep : dict, optional
        Receives each corpus's fitted ``aethel-hybrid`` (for :func:`latency`), except for a corpus
        whose entry came from the on-disk result cache.
    baseline_names : sequence of str
        The baselines run and tested against (default :data:`BASELINES`).

    Returns
    -------
    dict
        Per corpus (cached on disk): ``summary``, ``halves`` (the qids of each half), ``metrics``
        (:func:`score_halves`), ``tests`` (paired bootstrap of ``aethel-hybrid`` against each
        baseline on MRR, HR@5, Recall@5 and AllSupport@5, on the test half and all questions;
        ``excludes_zero``), ``components`` (the same against :data:`COMPONENT_TESTS`, a separate
        family), ``sources`` (share of the hybrid's top-5 hits by their largest seed source),
        ``timing`` (seconds per method) and ``per_query_metrics``.
    """
    variants = list(variants) if variants is not None else ["aethel-hybrid", *VARIANTS]
    out = {}
    for name, ds in loaded.items():
        if log:
            log(f"{name}: {len(ds.queries)} questions, {len(ds.passages):,} passages")
        have = (baselines or {}).get(name, {})
        block = {b: have[b] for b in baseline_names if b in have}

        def compute(ds=ds, block=block) -> dict:
            missing = [b for b in baseline_names if b not in block]
            timing = {}
            if missing:
                outcomes = run_methods(
                    ds,
                    missing,
                    setting="open",
                    depth=depth,
                    progress=False,
                    log=None,
                    graph={"n_process": n_process},
                )
                block.update(score_runs(outcomes, ds.queries, k=5))
                timing.update({m: round(o.seconds, 3) for m, o in outcomes.items()})
            hybrids = _fit_hybrids(ds, variants, setting="open", depth=depth, n_process=n_process, keep=keep)
            block.update(score_runs(hybrids, ds.queries, k=5))
            timing.update({m: round(o.seconds, 3) for m, o in hybrids.items()})
            parts = {h: [q.qid for q in qs] for h, qs in halves(ds).items()}
            return {
                "summary": dataset_summary(ds),
                "halves": parts,
                "metrics": score_halves(block, parts),
                "tests": _tests(
                    block, parts, [("aethel-hybrid", b) for b in baseline_names], n_resamples, seed
                ),
                "components": _tests(
                    block, parts, [("aethel-hybrid", v) for v in COMPONENT_TESTS], n_resamples, seed
                ),
                "sources": _top_sources(
                    hybrids["aethel-hybrid"].extra.get("sources", {}), hybrids["aethel-hybrid"].run
                ),
                "timing": timing,
                "per_query_metrics": {m: e["per_query_metrics"] for m, e in block.items()},
            }

        given = hashlib.sha256(json.dumps(block, sort_keys=True, default=str).encode("utf-8")).hexdigest()
        out[name] = cached(
            "beyond",
            {
                "dataset": dataset_digest(ds),
                "variants": variants,
                "baselines": given,
                "baseline_names": list(baseline_names),
                "n_resamples": n_resamples,
                "seed": seed,
                "depth": depth,
            },
            compute,
        )
    return out


def closed_pool_check(
    loaded: Mapping[str, Any],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    n_process: int = 1,
    log: Callable[[str], None] | None = None,
) -> dict:
    """``aethel-hybrid`` against ``aethel-bct`` in the closed pools (each question ranks its own candidates).

    Returns
    -------
    dict
        Per data set: ``metrics`` (:func:`score_halves`), ``tests`` (rows as in :func:`beyond_study`),
        ``passes``: for every metric, the 95% CI of hybrid − BCT on all questions reaches 0 or above.
    """
    out = {}
    for name, ds in loaded.items():
        if log:
            log(f"{name} (closed pools): {len(ds.queries)} questions")

        def compute(ds=ds) -> dict:
            outcomes = run_methods(
                ds,
                ["aethel-bct"],
                setting="closed",
                progress=False,
                log=None,
                graph={"n_process": n_process},
            )
            outcomes.update(
                _fit_hybrids(ds, ["aethel-hybrid"], setting="closed", depth=1000, n_process=n_process)
            )
            block = score_runs(outcomes, ds.queries, k=5)
            parts = {h: [q.qid for q in qs] for h, qs in halves(ds).items()}
            tests = _tests(block, parts, [("aethel-hybrid", "aethel-bct")], n_resamples, seed)
            return {
                "metrics": score_halves(block, parts),
                "tests": tests,
                "passes": all(t["ci_high"] >= 0 for t in tests if t["half"] == "all"),
            }

        out[name] = cached(
            "beyond-closed",
            {"dataset": dataset_digest(ds), "n_resamples": n_resamples, "seed": seed},
            compute,
        )
    return out


def latency(
    dataset,
    *,
    n_queries: int | None = None,
    repeats: int = 3,
    n_process: int = 1,
    fitted: Mapping[str, Any] | None = None,
) -> dict:
    """Milliseconds per question of ``aethel-hybrid`` beside BM25 and dense retrieval, open corpus.

    Each retriever is fitted once (from the caches), or taken from ``fitted`` (``"bm25"``,
    ``"dense"``, ``"aethel-hybrid"`` → a retriever already fitted on ``dataset``'s passages); then
    ``search`` ranks the first ``n_queries`` questions (all by default) one at a time (*single*:
    median ms over questions) and all in one call (*batched*: total ms / questions), 10 hits each,
    the best of ``repeats`` passes. Rows:

    * ``bm25``, ``dense`` (the dense time is mostly MiniLM encoding the question);
    * ``aethel-hybrid``: end to end, without per-hit attribution;
    * ``aethel-hybrid (question analysed)``: the same with the question's MiniLM embedding, spaCy
      mentions and BM25 tokens computed beforehand (:func:`aethel_lite.caching.memo.shared`; what the graph
      method adds to a dense retriever);
    * ``aethel-hybrid (explain)``: end to end plus the attribution of the first 10 hits by seed
      source (one more PageRank solve per source).

    Returns
    -------
    dict
        ``{row: {"single_ms", "batched_ms"}}``, plus ``n_queries`` and ``n_passages``.
    """
    if n_queries is not None and n_queries < 1:
        raise ParameterError(
            f"latency: n_queries must be a positive integer or None (all), got {n_queries!r}"
        )
    queries = list(dataset.queries)[: n_queries or None]
    if not queries:
        raise ParameterError(f"latency: {dataset.name!r} has no questions to time")
    given = dict(fitted or {})
    pids = [p.pid for p in dataset.passages]
    for name, r in given.items():
        if list(getattr(r, "pids_", [])) != pids:
            raise ParameterError(
                f"latency: the fitted {name!r} retriever was not fitted on {dataset.name!r}'s passages"
            )
    fitted = {
        name: given.get(name) or make_retriever(name).fit(dataset.passages) for name in ("bm25", "dense")
    }
    hybrid = given.get("aethel-hybrid") or make_retriever(
        "aethel-hybrid", graph={"n_process": n_process}
    ).fit(dataset.passages)
    out: dict[str, Any] = {"n_queries": len(queries), "n_passages": len(dataset.passages)}

    def row(r, explain_depth: int | None = None) -> dict:
        def search(qs):
            if explain_depth is None:
                return r.search(qs, k=10)
            return explained_search(r, qs, k=10, depth=explain_depth)

        singles, batches = None, None
        for _ in range(max(int(repeats), 1)):
            times = []
            for q in queries:
                t = time.perf_counter()
                search([q])
                times.append(time.perf_counter() - t)
            t = time.perf_counter()
            search(queries)
            batch = (time.perf_counter() - t) / len(queries)
            if singles is None or statistics.median(times) < statistics.median(singles):
                singles = times
            batches = batch if batches is None else min(batches, batch)
        return {
            "single_ms": round(1000 * statistics.median(singles), 3),
            "batched_ms": round(1000 * batches, 3),
        }

    with shared(False):  # a timed search pays for its question's encoding, NER and tokens
        for name in ("bm25", "dense"):
            out[name] = row(fitted[name])
        out["aethel-hybrid"] = row(hybrid)
    with (
        shared()
    ):  # the questions' embeddings, mentions and tokens from the memos, filled by one untimed pass
        for q in queries:
            hybrid.search([q], k=10)
        hybrid.search(queries, k=10)
        out["aethel-hybrid (question analysed)"] = row(hybrid)
    with shared(False):
        out["aethel-hybrid (explain)"] = row(hybrid, explain_depth=10)
    return out


def load_study(datasets: Sequence[str] = STUDY_CORPORA, *, quick: bool = False) -> tuple[dict, dict]:
    """The study's corpora, loaded as the open-corpus chapter loads them (:func:`load_open`).

    ``quick``: the first questions over a small sample of each corpus (``open_corpus.QUICK``). A real
    data set that cannot be found because no data folder is configured goes to ``missing`` (name →
    why), and the synthetic corpus is then loaded even when not asked for. Returns ``(loaded,
    missing)``, ``loaded`` in the order of :data:`STUDY_CORPORA`.
    """
    unknown = [d for d in datasets if d not in STUDY_CORPORA] if not isinstance(datasets, str) else [datasets]
    if unknown or not datasets:
        raise ParameterError(
            f"datasets: unknown {unknown or 'empty list'}; choose from {', '.join(STUDY_CORPORA)}"
        )
    limit, size = (QUICK["limit"], QUICK["corpus_size"]) if quick else (None, None)
    loaded, missing = {}, {}
    for name in datasets:
        try:
            loaded[name] = load_open(name, limit=limit, corpus_size=size)
        except DataNotFoundError:  # only when no data folder is configured; a wrong AETHEL_DATA is an error
            missing[name] = "no real data configured"
    if missing and "synthetic" not in loaded:
        loaded["synthetic"] = load_open("synthetic", limit=limit, corpus_size=size)
    return {n: loaded[n] for n in STUDY_CORPORA if n in loaded}, missing
