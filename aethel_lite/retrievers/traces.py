r"""The search loop of the PageRank retrievers, and what it computes for each question (its trace).

A *ranker* is a fitted :class:`~aethel_lite.retrievers.GraphRetriever` or
:class:`~aethel_lite.retrievers.HybridRetriever`; both answer the same questions (their public methods):

==========================================  =================================================================
``teleport(text, graph, idx, row, ments)``  the question's :class:`Teleport` over ``graph``
``question_scores(texts)``                  corpus-wide ``"lexical"``/``"dense"``/``"heading"`` scores it needs
``pool_graph(idx)``                         the graph of a closed pool
``doc_nodes(graph, idx)``                   each candidate's document node (``None`` without document nodes)
``anchor_traces(text, trace, op, docs)``    one trace per anchor (``None``: the question is not anchored)
``ranking_scores(text, ppr, idx, **xs)``    the corpus-length scores that ``search`` ranks
``merged_scores(text, trace)``              the scores of an anchored question
==========================================  =================================================================

Open-corpus questions are solved as batches of :data:`BLOCK` PageRank columns on the fitted graph; a closed-pool
question on its pool's graph, with an operator of its own. Nothing is stored on the ranker.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from ..core.ppr import PPROperator

__all__ = ["BLOCK", "Teleport", "QueryTrace", "ppr_block", "open_traces", "pool_trace", "score_queries"]

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
        The ranking's inputs: ``"ppr"``, ``"lexical"``, ``"dense"``, ``"heading"``, ``"doc_ppr"``; ``"anchors"``
        (``[(Anchor, QueryTrace), ...]`` or ``None``) and, once ranked, ``"anchor_of"``.
    """

    expansions: list
    fallback: bool
    graph: Any
    n_reached: int
    parts: dict | None = None
    corpus_idx: np.ndarray | None = None
    extra: dict = field(default_factory=dict)


def _trace(
    ranker, text: str, tel: Teleport, row: Mapping, full: np.ndarray, graph, cand, op, docs
) -> QueryTrace:
    """A question's :class:`QueryTrace` from its teleport and its PageRank ``full`` over ``graph``'s nodes."""
    extra = {
        "ppr": full[: graph.n_passages],
        "lexical": row.get("lexical"),
        "dense": row.get("dense"),
        "heading": row.get("heading"),
        "doc_ppr": None if docs is None else full[docs],
    }
    n_reached = int(np.count_nonzero(extra["ppr"] > 0))
    trace = QueryTrace(tel.expansions, tel.fallback, graph, n_reached, tel.parts, cand, extra)
    extra["anchors"] = ranker.anchor_traces(text, trace, op, docs)
    return trace


def ppr_block(ranker, texts: list[str]) -> tuple[np.ndarray, list[Teleport], list[dict]]:
    """``(P, teleports, rows)``: PageRank over the fitted graph's nodes, one column per question (zero for a
    question without seed), each question's :class:`Teleport` and its row of :meth:`question_scores`."""
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


def open_traces(ranker, queries) -> dict[str, QueryTrace]:
    """qid → :class:`QueryTrace` of open-corpus ``queries``, solved as one PageRank batch on the fitted graph."""
    docs = ranker.doc_nodes(ranker.graph_, None)
    P, tels, rows = ppr_block(ranker, [q.text for q in queries])
    g, op = ranker.graph_, ranker.operator_
    return {
        q.qid: _trace(ranker, q.text, tels[j], rows[j], P[:, j], g, None, op, docs)
        for j, q in enumerate(queries)
    }


def pool_trace(ranker, text: str, cand: np.ndarray) -> QueryTrace:
    """The :class:`QueryTrace` of one closed-pool question: PageRank on the pool's graph."""
    graph = ranker.pool_graph(cand)
    row = {k: v[0] for k, v in ranker.question_scores([text]).items()}
    tel = ranker.teleport(text, graph, cand, row, None)
    full = np.zeros(graph.n_nodes)
    op = PPROperator(graph.adjacency())
    if tel.seeds is not None:
        full = op.run(tel.seeds, alpha=ranker.alpha, tol=ranker.tol, max_iter=ranker.max_iter).scores
    return _trace(ranker, text, tel, row, full, graph, cand, op, ranker.doc_nodes(graph, cand))


def score_queries(ranker, queries: list, candidates: list, traces: dict) -> Iterator[np.ndarray]:
    """Each question's corpus-length scores, in order; ``traces`` receives qid → :class:`QueryTrace`."""
    open_q = [q for q, c in zip(queries, candidates) if c is None]
    for start in range(
        0, len(open_q), BLOCK
    ):  # open corpus: batched PageRank (in blocks) on the fitted graph
        traces.update(open_traces(ranker, open_q[start : start + BLOCK]))
    pairs = list(zip(queries, candidates))
    for q, cand in tqdm(pairs, desc=f"{ranker.name} search", disable=not ranker.progress, leave=False):
        if cand is not None:
            traces[q.qid] = pool_trace(ranker, q.text, cand)
        t = traces[q.qid]
        if t.extra.get("anchors"):  # one ranking per anchor, merged (retrievers.anchors)
            yield ranker.merged_scores(q.text, t)
            continue
        e = t.extra
        yield ranker.ranking_scores(
            q.text,
            e["ppr"],
            cand,
            lexical=e["lexical"],
            dense=e["dense"],
            doc_ppr=e["doc_ppr"],
            heading=e["heading"],
        )
