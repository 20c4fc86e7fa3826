r"""The search loop of the PageRank retrievers, and what it computes for each question (its trace).

A *ranker* is a fitted :class:`~aethel_lite.retrievers.GraphRetriever` or a retriever built on one (the hybrid and
its stages). Mixing in :class:`PageRankSearch`, it answers:

==========================================  ======================================================================
``question_scores(texts)``                  corpus-wide scores it needs besides PageRank, one row per question
``block_mentions(texts)``                   text → entity mentions of a block of questions (``{}``: one at a time)
``teleport(text, graph, idx, row, ments)``  the question's :class:`Teleport` over ``graph``
``pool_graph(idx)``                         the graph of a closed pool
``rank(text, trace)``                       the corpus-length scores that ``search`` ranks
==========================================  ======================================================================

and holds the fitted ``graph_`` and ``operator_`` and the settings ``alpha``, ``tol`` and ``max_iter``. Open-corpus
questions are solved as batches of :data:`BLOCK` PageRank columns on the fitted graph; a closed-pool question on its
pool's graph, with an operator of its own. Nothing is stored on the ranker.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from ..core.ppr import PPROperator
from ..data.runs import Run

__all__ = ["BLOCK", "Teleport", "QueryTrace", "PageRankSearch", "RankingStage", "ppr_block", "score_queries"]

#: open-corpus questions (and their seed sources, in attribution) are solved as batches of this many PPR columns
BLOCK = 64


@dataclass(frozen=True)
class Teleport:
    """A question's teleport vector :math:`s` and how it was made.

    Attributes
    ----------
    expansions : list of Expansion
        The question's entity seeds (BCT expansions; empty: no seed entity).
    seeds : ndarray or None
        :math:`s` over the graph's nodes, summing to 1; ``None``: nothing to seed (``fallback="none"``).
    fallback : bool
        Whether :math:`s` is the BM25 teleport.
    parts : dict or None
        ``{"components": source → seed vector, "mix": source → share, "named": metadata node → share}``;
        ``None`` for the BM25 teleport and for no seed.
    """

    expansions: list
    seeds: np.ndarray | None
    fallback: bool
    parts: dict | None


@dataclass
class QueryTrace:
    """What a search computed for one question, for its ranking, attribution and diagnostics.

    Attributes
    ----------
    expansions : list of Expansion
        The question's entity seeds (empty list: no seed entity).
    fallback : bool
        Whether the teleport was the BM25 fallback.
    graph : EntityGraph
        The graph searched (the fitted one, or the closed pool's).
    n_reached : int
        Candidate passages with PageRank > 0.
    parts : dict or None
        The seed sources (:attr:`Teleport.parts`).
    corpus_idx : ndarray or None
        The pool's corpus indices (``None``: open corpus).
    extra : dict
        ``"nodes"``, the PageRank of every node of ``graph``; ``"ppr"``, its passages'; ``"operator"``, the PageRank
        operator of ``graph``; the question's row of ``question_scores`` (``"lexical"``, ``"dense"``, ...); and what a
        ranking adds (a stage records its own keys).
    """

    expansions: list
    fallback: bool
    graph: Any
    n_reached: int
    parts: dict | None = None
    corpus_idx: np.ndarray | None = None
    extra: dict = field(default_factory=dict)


def _trace(tel: Teleport, row: Mapping, full: np.ndarray, graph, cand, op) -> QueryTrace:
    """A question's :class:`QueryTrace` from its teleport and its PageRank ``full`` over ``graph``'s nodes."""
    extra = {**row, "nodes": full, "ppr": full[: graph.n_passages], "operator": op}
    n_reached = int(np.count_nonzero(extra["ppr"] > 0))
    return QueryTrace(tel.expansions, tel.fallback, graph, n_reached, tel.parts, cand, extra)


def ppr_block(ranker, texts: list[str]) -> tuple[np.ndarray, list[Teleport], list[dict]]:
    """``(P, teleports, rows)``: PageRank over the fitted graph's nodes, one column per question (zero for a
    question without seed), each question's :class:`Teleport` and its row of ``question_scores``."""
    scores = ranker.question_scores(texts)
    rows = [{k: v[j] for k, v in scores.items()} for j in range(len(texts))]
    mentions = ranker.block_mentions(texts)
    tels = [ranker.teleport(t, None, None, rows[j], mentions.get(t)) for j, t in enumerate(texts)]
    P = np.zeros((ranker.graph_.n_nodes, len(texts)))
    live = [j for j, tel in enumerate(tels) if tel.seeds is not None]
    if live:
        cols = np.stack([tels[j].seeds for j in live], axis=1)
        P[:, live] = ranker.operator_.run(
            cols, alpha=ranker.alpha, tol=ranker.tol, max_iter=ranker.max_iter
        ).scores
    return P, tels, rows


def _open_traces(ranker, queries) -> dict[str, QueryTrace]:
    """qid → :class:`QueryTrace` of open-corpus ``queries``, solved as one PageRank batch on the fitted graph."""
    P, tels, rows = ppr_block(ranker, [q.text for q in queries])
    g, op = ranker.graph_, ranker.operator_
    return {q.qid: _trace(tels[j], rows[j], P[:, j], g, None, op) for j, q in enumerate(queries)}


def _pool_trace(ranker, text: str, cand: np.ndarray) -> QueryTrace:
    """The :class:`QueryTrace` of one closed-pool question: PageRank on the pool's graph."""
    graph = ranker.pool_graph(cand)
    row = {k: v[0] for k, v in ranker.question_scores([text]).items()}
    tel = ranker.teleport(text, graph, cand, row, None)
    full = np.zeros(graph.n_nodes)
    op = PPROperator(graph.adjacency())
    if tel.seeds is not None:
        full = op.run(tel.seeds, alpha=ranker.alpha, tol=ranker.tol, max_iter=ranker.max_iter).scores
    return _trace(tel, row, full, graph, cand, op)


def score_queries(ranker, queries: list, candidates: list, traces: dict, rank=None) -> Iterator[np.ndarray]:
    """Each question's corpus-length scores, ``rank(text, trace)`` (default ``ranker.rank``: a stage that holds the
    ranker ranks its way), in order; ``traces`` receives qid → :class:`QueryTrace`."""
    rank = ranker.rank if rank is None else rank
    open_q = [q for q, c in zip(queries, candidates) if c is None]
    for start in range(0, len(open_q), BLOCK):  # open corpus: batched PageRank on the fitted graph
        traces.update(_open_traces(ranker, open_q[start : start + BLOCK]))
    pairs = list(zip(queries, candidates))
    for q, cand in tqdm(pairs, desc=f"{ranker.name} search", disable=not ranker.progress, leave=False):
        if cand is not None:
            traces[q.qid] = _pool_trace(ranker, q.text, cand)
        yield rank(q.text, traces[q.qid])


class PageRankSearch:
    """Search and PageRank of a fitted ranker (module docstring); why a passage was retrieved is told by
    :func:`aethel_lite.explain.explained_search` from :meth:`traced_search`."""

    def search(self, queries, k: int = 10, pool=None) -> Run:
        r"""As :meth:`Retriever.search <aethel_lite.retrievers.Retriever.search>`, leaving out passages scored
        :math:`-\infty` (``fallback="none"``)."""
        return self.traced_search(queries, k, pool)[0]

    def traced_search(self, queries, k: int = 10, pool=None, rank=None) -> tuple[Run, dict]:
        """``(run, traces)``: the run of :meth:`search` and qid → :class:`QueryTrace`; ``rank(text, trace)``
        replaces :meth:`rank` (a stage holding this ranker)."""
        queries, k, candidates = self._checked(queries, k, pool)
        found: dict = {}
        run = self._collect(queries, candidates, score_queries(self, queries, candidates, found, rank), k)
        for qid, hits in run.items():
            run[qid] = [(pid, score) for pid, score in hits if score != -math.inf]
        return run, found

    def _score_queries(self, queries: list, candidates: list):
        return score_queries(self, queries, candidates, {})

    def ppr(self, texts: Sequence[str]) -> tuple:
        """``(P, expansions, fallback)``: PageRank over the fitted graph's nodes (passages first), one column per
        question (zero without seed under ``fallback="none"``), each question's expansions and whether it used the
        BM25 teleport."""
        self._check_fitted()
        P, tels, _ = ppr_block(self, list(texts))
        return P, [t.expansions for t in tels], [t.fallback for t in tels]

    def personalization(self, text: str, graph=None, corpus_idx=None, *, scores=None) -> tuple:
        """``(expansions, s, fallback)`` of a question (``teleport``)."""
        tel = self.teleport(text, graph, corpus_idx, scores)
        return tel.expansions, tel.seeds, tel.fallback


class RankingStage:
    """A stage that ranks each question its own way over the search of the retriever it holds (``inner_``, fitted):
    the held retriever solves the PageRank and calls the stage's ``rank(text, trace)``; ``ranker_`` is the
    PageRank retriever at the bottom of the stack."""

    def search(self, queries, k: int = 10, pool=None) -> Run:
        """As the held retriever's search, each question ranked by :meth:`rank`."""
        return self.traced_search(queries, k, pool)[0]

    def traced_search(self, queries, k: int = 10, pool=None, rank=None) -> tuple[Run, dict]:
        """The held retriever's traced search, each question ranked by ``rank`` (default this stage's)."""
        self._check_fitted()
        return self.inner_.traced_search(queries, k, pool, rank=rank or self.rank)

    def _score_queries(self, queries: list, candidates: list):
        return score_queries(self.ranker_, queries, candidates, {}, rank=self.rank)
