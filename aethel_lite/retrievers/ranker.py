"""What the paper's retriever and the hybrid share: searching through their traces, and explaining what they rank.

:class:`PageRankSearch` is mixed into :class:`~aethel_lite.retrievers.GraphRetriever` and
:class:`~aethel_lite.retrievers.HybridRetriever`; it calls only the methods :mod:`aethel_lite.retrievers.traces` lists.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from . import attribution, traces
from .run import Run

__all__ = ["EXPLAIN_DEPTH", "PageRankSearch"]

#: hits per question that ``search(explain=True)`` explains unless told otherwise
EXPLAIN_DEPTH = 100


class PageRankSearch:
    """Search, PageRank and explanations of a fitted ranker (:mod:`aethel_lite.retrievers.traces`)."""

    def search(
        self, queries, k: int = 10, pool=None, *, explain: bool = False, explain_depth: int | None = None
    ):
        r"""As :meth:`Retriever.search <aethel_lite.retrievers.Retriever.search>`, leaving out passages scored
        :math:`-\infty` (``fallback="none"``).

        Parameters
        ----------
        explain : bool
            Return a :class:`~aethel_lite.retrievers.attribution.SearchResult` explaining each question's first
            ``explain_depth`` hits (default :data:`EXPLAIN_DEPTH`).
        """
        run, found = self.traced_search(queries, k, pool)
        if not explain:
            return run
        depth = EXPLAIN_DEPTH if explain_depth is None else int(explain_depth)
        return attribution.attribute(self, run, found, k=k, depth=depth)

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

    def seed_pieces(self, text: str, graph=None, corpus_idx=None, *, scores=None) -> tuple:
        """The teleport vector and what put mass on each seed node (:func:`attribution.seed_pieces`)."""
        return attribution.seed_pieces(self, text, graph, corpus_idx, scores=scores)

    def explain(self, text: str, pids, pool: Sequence[str] | None = None) -> dict:
        """pid → exact per-seed shares of its (or its document node's) PageRank (:func:`attribution.explain`)."""
        return attribution.explain(self, text, pids, pool)
