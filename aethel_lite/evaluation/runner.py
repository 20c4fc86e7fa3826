"""Run named retrieval methods (:mod:`aethel_lite.retrievers.registry`) on a data set and score them:
the engine behind ``aethel eval`` and the notebooks. Runs are :data:`RUN_DEPTH` (1,000) passages deep."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..caching.memo import shared
from ..data.runs import RRF_K, RUN_DEPTH, fuse_runs
from ..data.schema import Dataset
from ..data.synthetic import alias_table
from ..errors import ParameterError, check_k
from ..retrievers import GraphRetriever, clone, write_qrels
from ..retrievers.registry import FUSIONS, make_retriever
from .metrics import evaluate, mean, mean_metrics, per_query
from .stats import holm, paired_bootstrap, randomization_test

__all__ = [
    "RUN_DEPTH",
    "RRF_K",
    "MethodOutcome",
    "run_methods",
    "fuse",
    "metric_names",
    "score_runs",
    "write_trec_runs",
    "bct_ablation",
    "paired_comparisons",
    "block_of",
    "without_timing",
]


@dataclass
class MethodOutcome:
    """One method's run, its fit-and-search seconds, and the fitted retriever (None for a fusion)."""

    name: str
    run: Any
    seconds: float
    retriever: Any = None
    extra: dict = field(default_factory=dict)


def run_methods(
    dataset: Dataset,
    methods: Sequence[str],
    *,
    setting: str = "closed",
    depth: int = RUN_DEPTH,
    graph: Mapping[str, Any] | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = print,
    memo: bool = True,
) -> dict[str, MethodOutcome]:
    """Fit and run every requested method (and the base methods that fusions need) once each.

    Parameters
    ----------
    dataset : Dataset
    methods : names from :data:`METHODS` or :data:`FUSIONS`
    setting : ``"closed"`` ranks each query's pool (``Query.pool``); ``"open"`` the whole corpus.
    depth : int
        Passages ranked per query (all of a smaller closed pool); a fusion fuses the top ``depth`` of each run.
    graph : mapping, optional
        Settings of the paper's graph retriever for every graph and hybrid method (e.g. ``{"n_process": 2}``;
        :func:`~aethel_lite.retrievers.registry.make_retriever`).
    progress : bool
    log : callable, optional
        Called with one line per fitted method and its seconds.
    memo : bool
        Share per-text work between the methods through the process-wide memos
        (:func:`aethel_lite.caching.memo.shared`); rankings are identical either way.

    Returns
    -------
    dict
        Method name → :class:`MethodOutcome` (the run, seconds, fitted retriever), in ``methods`` order.

    Raises
    ------
    ParameterError
        Unknown ``setting``, bad ``depth``, or the closed setting on a query without a pool.
    """
    if setting not in ("closed", "open"):
        raise ParameterError(f"--setting must be 'closed' or 'open', got {setting!r}")
    check_k(depth, "--depth")
    if setting == "closed" and any(q.pool is None for q in dataset.queries):
        missing = next(q.qid for q in dataset.queries if q.pool is None)
        raise ParameterError(
            f"--setting closed: query {missing!r} of {dataset.name!r} has no candidate pool; use --setting open"
        )
    pool = "query" if setting == "closed" else None
    needed = list(dict.fromkeys(base for name in methods for base in FUSIONS.get(name, (name,))))
    outcomes: dict[str, MethodOutcome] = {}
    graph = dict(graph or {})
    if isinstance(
        dataset.meta.get("aliases"), dict
    ):  # the synthetic corpus ships its alias table; BCT uses it
        graph.setdefault("alias_table", alias_table(dataset))
    for name in needed:
        t0 = time.perf_counter()
        retr = make_retriever(name, graph=graph, progress=progress)
        with shared(memo):
            retr.fit(dataset.passages)
            run = retr.search(dataset.queries, k=depth, pool=pool)
        run.name = name
        outcomes[name] = MethodOutcome(name, run, time.perf_counter() - t0, retr)
        if log:
            log(f"  {name}: {outcomes[name].seconds:.1f}s")
    for name in methods:
        if name in FUSIONS:
            outcomes[name] = fuse(name, outcomes, depth=depth)
    return {name: outcomes[name] for name in methods}


def fuse(name: str, outcomes: Mapping[str, MethodOutcome], *, depth: int = RUN_DEPTH) -> MethodOutcome:
    r"""The fused method ``name`` (:data:`FUSIONS`) from the outcomes of its base methods.

    :func:`~aethel_lite.data.runs.fuse_runs`, the fusion ``aethel search`` uses too:
    reciprocal rank fusion with :math:`k` = :data:`RRF_K` (60),
    :math:`\mathrm{RRF}(d) = \sum_r 1 / (60 + \mathrm{rank}_r(d))` over the top ``depth`` of each
    base run (Cormack, Clarke & Büttcher 2009), cut to its top ``depth``; ``seconds`` is the
    fusion's time plus its base methods'.
    """
    if name not in FUSIONS:
        raise ParameterError(f"method {name!r} is not a fusion; choose from {', '.join(FUSIONS)}")
    missing = [b for b in FUSIONS[name] if b not in outcomes]
    if missing:
        raise ParameterError(
            f"fusion {name!r} needs the run of {missing[0]!r}, which is not among the outcomes"
        )
    t0 = time.perf_counter()
    run = fuse_runs([outcomes[b].run for b in FUSIONS[name]], name=name, depth=depth)
    seconds = time.perf_counter() - t0 + sum(outcomes[b].seconds for b in FUSIONS[name])
    return MethodOutcome(name, run, seconds)


def metric_names(k: int) -> tuple[str, ...]:
    """The metrics reported by ``aethel eval``: HR@1, HR@k, AllSupport@k, Recall@k, MRR, nDCG@10."""
    names = ["HR@1", f"HR@{k}", f"AllSupport@{k}", f"Recall@{k}", "MRR", "nDCG@10"]
    return tuple(dict.fromkeys(names))


def score_runs(
    outcomes: Mapping[str, MethodOutcome], queries, *, k: int = 5, depth: int = 10
) -> dict[str, dict]:
    """The ``methods`` block of the ``aethel eval`` JSON: mean metrics (:func:`metric_names`), per-query
    metrics and the top ``depth`` pids of each query (``per_query``)."""
    names = metric_names(k)
    block: dict[str, dict] = {}
    for name, outcome in outcomes.items():
        pq = per_query(outcome.run, queries, metrics=names)
        means = mean_metrics(pq, names)
        entry: dict[str, Any] = {m: round(float(means[m]), 6) for m in names}
        entry["per_query"] = {q.qid: [pid for pid, _ in outcome.run.get(q.qid, [])[:depth]] for q in queries}
        entry["per_query_metrics"] = {
            qid: {m: round(float(v), 6) for m, v in vals.items()} for qid, vals in pq.items()
        }
        block[name] = entry
    return block


def write_trec_runs(
    outcomes: Mapping[str, MethodOutcome], queries, directory: str | os.PathLike
) -> list[Path]:
    """Write each whole run as ``directory/<method>.trec`` (:meth:`~aethel_lite.retrievers.Run.to_trec`,
    tag = method name) and the gold as ``directory/qrels.txt``, atomically; return the paths, qrels last.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = [outcome.run.to_trec(directory / f"{name}.trec", tag=name) for name, outcome in outcomes.items()]
    paths.append(write_qrels(queries, directory / "qrels.txt"))
    return paths


def bct_ablation(
    dataset: Dataset,
    *,
    modes: Sequence[str] = ("none", "alias", "substring", "both"),
    extractor: str = "ner3",
    setting: str = "closed",
    k: int = 5,
    depth: int = RUN_DEPTH,
    progress: bool = False,
    **graph_kwargs: Any,
) -> dict[str, dict[str, float]]:
    """Mean metrics of the graph retriever under each BCT mode (one fit and search per mode, the entities shared
    through the stores and memos), on runs ``depth`` deep as in :func:`run_methods`."""
    if isinstance(dataset.meta.get("aliases"), dict):
        graph_kwargs.setdefault("alias_table", alias_table(dataset))
    base = GraphRetriever(extractor=extractor, bct="none", progress=progress, **graph_kwargs)
    pool = "query" if setting == "closed" else None
    out: dict[str, dict[str, float]] = {}
    for mode in modes:
        with shared():
            r = clone(base).set_params(bct=mode).fit(dataset.passages)
            run = r.search(dataset.queries, k=max(10, depth), pool=pool)
        out[mode] = {
            m: round(float(v), 6) for m, v in evaluate(run, dataset.queries, metrics=metric_names(k)).items()
        }
    return out


def paired_comparisons(
    block: Mapping[str, Mapping[str, Any]],
    pairs: Sequence[tuple[str, str]],
    metrics: Sequence[str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> list[dict]:
    """Paired bootstrap (and randomization test) of per-query metric differences A − B.

    Parameters
    ----------
    block : mapping
        The ``methods`` block of :func:`score_runs` (``per_query_metrics`` of each method).
    pairs : sequence of (str, str)
        Methods (A, B) to compare on the queries they share.
    metrics : sequence of str
    n_resamples, seed : int
        Passed to :func:`~aethel_lite.evaluation.stats.paired_bootstrap` and ``randomization_test``.

    Returns
    -------
    list of dict
        One JSON-able row per (pair, metric): ``a``, ``b``, ``metric``, ``n``, ``mean_a``, ``mean_b``,
        ``diff`` (mean A − B) and its 95% CI ``ci_low``/``ci_high``, ``p_bootstrap``, ``p_randomization``
        and ``p_holm`` (:func:`~aethel_lite.evaluation.stats.holm` over *all* rows returned).
    """
    rows, raw_p = [], []
    for a, b in pairs:
        pa, pb = block[a]["per_query_metrics"], block[b]["per_query_metrics"]
        qids = sorted(pa)
        for m in metrics:
            x = [pa[q][m] for q in qids]
            y = [pb[q][m] for q in qids]
            boot = paired_bootstrap(x, y, n_resamples=n_resamples, seed=seed)
            perm = randomization_test(x, y, n_resamples=n_resamples, seed=seed)
            raw_p.append(boot.p_value)
            rows.append(
                {
                    "a": a,
                    "b": b,
                    "metric": m,
                    "n": len(qids),
                    "mean_a": round(mean(x), 6),
                    "mean_b": round(mean(y), 6),
                    "diff": round(boot.mean_diff, 6),
                    "ci_low": round(boot.ci_low, 6),
                    "ci_high": round(boot.ci_high, 6),
                    "p_bootstrap": round(boot.p_value, 6),
                    "p_randomization": round(perm.p_value, 6),
                }
            )
    for row, p in zip(rows, holm(raw_p).tolist()):
        row["p_holm"] = round(p, 6)
    return rows


def block_of(block: Mapping[str, Mapping[str, Any]], qids: Sequence[str]) -> dict:
    """An ``aethel eval`` methods block narrowed to the ``per_query_metrics`` of the questions ``qids``."""
    keep = set(qids)
    return {
        m: {"per_query_metrics": {q: v for q, v in e["per_query_metrics"].items() if q in keep}}
        for m, e in block.items()
    }


def without_timing(result: Any) -> Any:
    """A copy of a result with every ``seconds``/``timing`` entry removed (for byte-identical reruns)."""
    if isinstance(result, Mapping):
        return {k: without_timing(v) for k, v in result.items() if k not in ("seconds", "timing")}
    if isinstance(result, list):
        return [without_timing(v) for v in result]
    return result
