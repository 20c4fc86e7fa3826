"""How much of a :class:`~aethel_lite.retrievers.GraphRetriever` ranking came from BM25 rather than the graph.

Per query (:func:`query_diagnostics`, from an explained search: ``explained_search``):
``{"fallback": bool`` (the BM25 teleport was used), ``"n_seed_entities": int`` (graph entities
in the seed vector, after BCT), ``"n_reached": int`` (candidate passages with PPR > 0),
``"bm25_ordered_top5": int}`` (top-5 hits that are unreached passages ordered by BM25), plus
``"sources"`` (the seed sources present) for a hybrid retriever. :func:`summarize` aggregates
them; :func:`reliance` computes the summary of a finished run without searching again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["query_diagnostics", "summarize", "reliance"]


def _bm25_ordered_top5(hits) -> int:
    return sum(1 for _, score in hits[:5] if score < 0)


def query_diagnostics(trace, hits, hybrid: bool) -> dict:
    """One query's diagnostics from its :class:`~aethel_lite.explain.attribution.QueryTrace` and hits."""
    out = {
        "fallback": bool(trace.fallback),
        "n_seed_entities": len(trace.expansions),
        "n_reached": int(trace.n_reached),
        "bm25_ordered_top5": _bm25_ordered_top5(hits),
    }
    if hybrid:
        out["sources"] = sorted(trace.parts["mix"]) if trace.parts else []
    return out


def _summary(fallbacks: Sequence[bool], top5: Sequence[int], k: int) -> dict:
    n = len(fallbacks)
    slots = n * min(int(k), 5)
    return {
        "fallback_share": sum(fallbacks) / n if n else None,
        "bm25_top5_share": sum(top5) / slots if slots else None,
        "n_queries": n,
    }


def summarize(diagnostics: Mapping[str, Mapping], k: int) -> dict:
    """How much of a search came from the BM25 fallback rather than the graph.

    Parameters
    ----------
    diagnostics : mapping
        qid → :func:`query_diagnostics` (``SearchResult.diagnostics``).
    k : int
        The depth searched (each question has ``min(k, 5)`` top-5 slots).

    Returns
    -------
    dict
        ``"fallback_share"`` of the questions whose teleport was the BM25 fallback, ``"bm25_top5_share"``
        of all top-5 slots filled by unreached passages in BM25 order (both ``None`` without queries), ``"n_queries"``.
    """
    return _summary(
        [d["fallback"] for d in diagnostics.values()],
        [d["bm25_ordered_top5"] for d in diagnostics.values()],
        k,
    )


def reliance(retriever, queries, run, k: int, pool=None) -> dict:
    """:func:`summarize` of a run ``retriever`` returned for ``queries``, without searching again (each
    question's fallback flag from ``GraphRetriever.personalization``, no PageRank solve)."""
    fallbacks, top5 = [], []
    for q in queries:
        idx = retriever.resolve_pool(q, pool)
        graph = retriever.graph_ if idx is None else retriever.pool_graph(idx)
        fallbacks.append(bool(retriever.personalization(q.text, graph, idx)[2]))
        top5.append(_bm25_ordered_top5(run.get(q.qid, [])))
    return _summary(fallbacks, top5, k)
