"""What the paper's retriever and the hybrid share: searching through their traces.

:class:`PageRankSearch` is mixed into :class:`~aethel_lite.retrievers.GraphRetriever` and
:class:`~aethel_lite.retrievers.HybridRetriever`; it calls only the methods :mod:`aethel_lite.retrievers.traces` lists.
Why a passage was retrieved is told by :mod:`aethel_lite.explain` from :meth:`PageRankSearch.traced_search`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from . import traces
from .run import Run

__all__ = ["PageRankSearch"]


class PageRankSearch:
    """Search and PageRank of a fitted ranker (:mod:`aethel_lite.retrievers.traces`)."""

    def search(self, queries, k: int = 10, pool=None) -> Run:
        r"""As :meth:`Retriever.search <aethel_lite.retrievers.Retriever.search>`, leaving out passages scored
        :math:`-\infty` (``fallback="none"``)."""
        return self.traced_search(queries, k, pool)[0]

    def traced_search(self, queries, k: int = 10, pool=None) -> tuple[Run, dict]:
        """``(run, traces)``: the run of :meth:`search` and qid → :class:`~aethel_lite.retrievers.traces.QueryTrace`."""
        queries, k, candidates = self._checked(queries, k, pool)
        found: dict = {}
        run = self._collect(queries, candidates, traces.score_queries(self, queries, candidates, found), k)
        for qid, hits in run.items():
            run[qid] = [(pid, score) for pid, score in hits if score != -math.inf]
        return run, found

    def _score_queries(self, queries: list, candidates: list):
        return traces.score_queries(self, queries, candidates, {})

    def ppr(self, texts: Sequence[str]) -> tuple:
        """``(P, expansions, fallback)``: PageRank over the fitted graph's nodes (passages first), one column per
        question (zero without seed under ``fallback="none"``), each question's expansions and whether it used the
        BM25 teleport."""
        self._check_fitted()
        P, tels, _ = traces.ppr_block(self, list(texts))
        return P, [t.expansions for t in tels], [t.fallback for t in tels]

    def personalization(self, text: str, graph=None, corpus_idx=None, *, scores=None) -> tuple:
        """``(expansions, s, fallback)`` of a question (``teleport``)."""
        tel = self.teleport(text, graph, corpus_idx, scores)
        return tel.expansions, tel.seeds, tel.fallback
