"""Why a passage was retrieved: each hit's seed sources and entities (:mod:`~aethel_lite.explain.attribution`), how
far the gold passages are from the seeds (:mod:`~aethel_lite.explain.reach`) and how much a run leans on BM25
(:mod:`~aethel_lite.explain.diagnostics`).

Explanation reads a fitted retriever and the traces of its search; it changes nothing on the retriever::

    result = explained_search(retriever, queries, k=5)   # a SearchResult: the run, provenance, diagnostics
"""

from __future__ import annotations

from .attribution import EXPLAIN_DEPTH, SearchResult, attribute, explain, explained_search, seed_pieces

__all__ = ["EXPLAIN_DEPTH", "SearchResult", "attribute", "explain", "explained_search", "seed_pieces"]
