r"""Why was a passage retrieved? Exact per-seed shares of its PageRank, and path analysis.

Personalized PageRank (:mod:`aethel_lite.core.ppr`) is the fixed point of

.. math:: p = \alpha s + (1 - \alpha)\,\big(W p + (d^\top p)\, s\big),

(:math:`d` the indicator of dangling nodes). Multiplying out, :math:`p = x / \|x\|_1` with
:math:`(I - (1-\alpha) W)\, x = s`: :math:`x` is *linear* in :math:`s`, :math:`p` is linear up to
the normalisation. Write the seed vector as a sum of non-negative parts,
:math:`s = \sum_j s_j` (one part per seed node, or per seed source), and let
:math:`p^{(j)} = \mathrm{PPR}(s_j / \|s_j\|_1)` be the PageRank of part :math:`j` alone. Summing
the fixed-point equation of part :math:`j` over the nodes gives
:math:`\|x(s_j / \|s_j\|_1)\|_1 = c_j = 1 / (\alpha + (1-\alpha)\, d^\top p^{(j)})`, so

.. math::

    p = \sum_j \underbrace{\frac{\|s_j\|_1\, c_j}{\sum_k \|s_k\|_1\, c_k}\; p^{(j)}}_{C_{\cdot j}}

exactly: :math:`C_{ij}` is the part of passage :math:`i`'s PageRank that seed :math:`j`
contributes, and :math:`\sum_j C_{ij} = p_i`. On a graph where no seed reaches a dangling node
(every passage–entity graph whose seeds are entities) :math:`c_j = 1/\alpha` for every part and
the weights are the seed masses themselves. One PPR solve per part (solved as batches);
:func:`ppr_parts` is the computation, :func:`seed_contributions` splits a seed vector by node,
and :meth:`GraphRetriever.explain <aethel_lite.retrievers.GraphRetriever.explain>` labels the
seed nodes with the question entity and BCT rule that put them there.

**How a gold passage is reached** (:func:`gold_reach`, :func:`provenance_report`). In a
question's graph, with :math:`E_0` the exact seed entities (what plain seeding uses) and
:math:`E` all seed entities after BCT, a gold passage is

* ``direct`` -- it mentions an entity of :math:`E_0`;
* ``bct`` -- it mentions an entity of :math:`E \setminus E_0` only (a BCT expansion put a
  seed on one of its entities);
* ``linked`` -- it mentions no seed, but an entity linked to a seed by an entity–entity edge of
  the graph (``ner3``'s substring links): graph distance 2;
* ``two-hop`` -- distance 3 over mentions alone, entity → passage → entity → passage;
* ``longer`` -- a longer path; ``unreached`` -- PPR never reaches it (no path);
* ``bm25-teleport`` -- the question has no seed entity, so the BM25 fallback seeded PPR.

Separately, a gold passage is reached *only through BCT* when it has a path from :math:`E` but
none from :math:`E_0`: without BCT its PageRank would be 0.

References
----------
Haveliwala, T. H. (2002). Topic-sensitive PageRank. WWW '02 (linearity of PPR in the seeds).
Jeh, G. & Widom, J. (2003). Scaling personalized web search. WWW '03 (the linearity theorem).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data.schema import Query
from ..errors import ParameterError
from .bct import provenance
from .ppr import PPROperator

__all__ = ["SeedShare", "part_weights", "ppr_parts", "seed_contributions", "REACH", "hop_distances", "gold_reach", "hit_chains",
           "bct_intrusions", "provenance_report"]

#: Categories of :func:`gold_reach`, from the most to the least direct.
REACH = ("direct", "bct", "linked", "two-hop", "longer", "unreached", "bm25-teleport")
#: BCT's expansion rules (every rule but ``"exact"``).
BCT_RULES = ("alias", "substring", "token")

#: Columns solved per PPR batch.
_BLOCK = 64


@dataclass(frozen=True)
class SeedShare:
    """The part of a passage's PageRank that one seed contributes.

    Attributes
    ----------
    seed : str
        What the question named: a normalised query entity key, a metadata node, or ``"bm25"`` /
        ``"dense"`` for passage seeds.
    entity : str
        The seed node the teleport lands on: the graph entity reached (entity seeds), the
        metadata node, or the seeded passage's pid.
    via : str
        How the seed was reached: ``"exact"``, ``"alias"``, ``"substring"``, ``"token"`` (BCT
        rules), ``"metadata"``, ``"lexical"``, ``"dense"`` (hybrid passage seeds) or
        ``"bm25-teleport"`` (the BM25 fallback of a question without entities).
    share : float
        The seed's contribution :math:`C_{ij}` to the passage's PageRank (module docstring); the
        shares of a passage sum to its PageRank.
    """

    seed: str
    entity: str
    via: str
    share: float

    def to_dict(self) -> dict:
        return {"seed": self.seed, "entity": self.entity, "via": self.via, "share": float(self.share)}


def _operator(adjacency: Any):

    return adjacency if isinstance(adjacency, PPROperator) else PPROperator(adjacency)


def part_weights(P: Any, masses: Any, dangling: Any, alpha: float) -> np.ndarray:
    r"""Weights :math:`w_j` with :math:`\mathrm{PPR}(s) = \sum_j w_j\, p^{(j)}` for :math:`s = \sum_j m_j \hat s_j`.

    Parameters
    ----------
    P : array_like, shape (n, b)
        :math:`p^{(j)} = \mathrm{PPR}(\hat s_j)`, the PageRank of each normalised part.
    masses : array_like, shape (b,)
        The parts' masses :math:`m_j = \|s_j\|_1` (any common scale).
    dangling : array_like of bool, shape (n,)
        Dangling nodes (``PPROperator.dangling``).
    alpha : float

    Returns
    -------
    numpy.ndarray, shape (b,)
        :math:`w_j = m_j c_j / \sum_k m_k c_k` with :math:`c_j = 1/(\alpha + (1-\alpha)\, d^\top p^{(j)})`
        (module docstring); sums to 1.
    """
    P = np.asarray(P, dtype=np.float64).reshape(len(dangling), -1)
    c = 1.0 / (alpha + (1.0 - alpha) * P[np.asarray(dangling, dtype=bool)].sum(axis=0))
    w = np.asarray(masses, dtype=np.float64) * c
    return w / w.sum()


def ppr_parts(adjacency: Any, parts: Any, *, alpha: float, tol: float = 1e-10, max_iter: int = 1000,
              rows: Any = None) -> np.ndarray:
    r"""Each part's exact contribution to the PageRank of the seed vector the parts sum to.

    Parameters
    ----------
    adjacency : scipy.sparse matrix, array_like or PPROperator, shape (n, n)
        As :func:`aethel_lite.core.ppr.personalized_pagerank`.
    parts : array_like, shape (n, b)
        Non-negative parts :math:`s_j` (columns) of the seed vector :math:`s = \sum_j s_j`; any
        scale (only :math:`s / \|s\|_1` matters). Every column must have positive mass.
    alpha, tol, max_iter
        As :func:`~aethel_lite.core.ppr.personalized_pagerank`; each part is solved to ``tol`` (L1).
    rows : array_like of int, optional
        Return only these nodes' rows (default: every node).

    Returns
    -------
    numpy.ndarray, shape (len(rows) or n, b)
        :math:`C_{ij}` of the module docstring; ``C.sum(axis=1)`` is
        ``personalized_pagerank(adjacency, parts.sum(axis=1))`` to within about ``tol`` (L1).

    Raises
    ------
    ParameterError
        ``parts`` not a 2-D array with one row per node, negative or non-finite entries, an
        all-zero column; bad ``alpha``, ``tol`` or ``max_iter``.

    References
    ----------
    Jeh, G. & Widom, J. (2003). Scaling personalized web search. WWW '03.
    """
    op = _operator(adjacency)
    S = np.asarray(parts, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != op.n:
        raise ParameterError(f"parts: expected shape ({op.n}, b), got {S.shape}")
    if not np.isfinite(S).all() or (S < 0).any():
        raise ParameterError("parts: entries must be finite and >= 0")
    mass = S.sum(axis=0)
    if (mass <= 0).any():
        raise ParameterError(f"parts: column {int(np.flatnonzero(mass <= 0)[0])} has no mass")
    rows = np.arange(op.n) if rows is None else np.asarray(rows, dtype=np.int64)
    out = np.zeros((rows.size, S.shape[1]))
    dangling_mass = np.zeros(S.shape[1])
    for start in range(0, S.shape[1], _BLOCK):
        cols = slice(start, start + _BLOCK)
        P = op.run(S[:, cols], alpha=alpha, tol=tol, max_iter=max_iter).scores.reshape(op.n, -1)
        dangling_mass[cols] = P[op.dangling].sum(axis=0)
        out[:, cols] = P[rows]
    # part_weights on the dangling masses alone (a 1-node "graph" whose node is dangling)
    return out * part_weights(dangling_mass[None, :], mass, [True], alpha)


def seed_contributions(adjacency: Any, seeds: Any, *, alpha: float, tol: float = 1e-10, max_iter: int = 1000,
                       rows: Any = None) -> tuple[np.ndarray, np.ndarray]:
    r"""Split Personalized PageRank by seed node: one PPR solve per node where the seed vector is > 0.

    Parameters
    ----------
    adjacency : scipy.sparse matrix, array_like or PPROperator, shape (n, n)
    seeds : array_like, shape (n,)
        Non-negative personalization vector (normalised to sum 1).
    alpha, tol, max_iter, rows
        As :func:`ppr_parts`.

    Returns
    -------
    nodes : numpy.ndarray of int
        The seed nodes (where ``seeds > 0``), ascending.
    contributions : numpy.ndarray, shape (len(rows) or n, len(nodes))
        Column ``j``: what seed ``nodes[j]`` contributes to each node's PageRank; the columns sum
        to ``personalized_pagerank(adjacency, seeds)``.

    Raises
    ------
    ParameterError
        ``seeds`` not 1-D with one entry per node, negative or non-finite, or all zero.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0, 1.0, 0], [1.0, 0, 1.0], [0, 1.0, 0]])   # a path 0 - 1 - 2
    >>> nodes, C = seed_contributions(A, np.array([0.5, 0.0, 0.5]), alpha=0.5)
    >>> nodes.tolist(), C.sum(axis=1).round(4).tolist()
    ([0, 2], [0.3333, 0.3333, 0.3333])
    """
    op = _operator(adjacency)
    s = np.asarray(seeds, dtype=np.float64)
    if s.ndim != 1 or s.shape[0] != op.n:
        raise ParameterError(f"seeds: expected shape ({op.n},), got {s.shape}")
    if not np.isfinite(s).all() or (s < 0).any() or not s.any():
        raise ParameterError("seeds: entries must be finite, >= 0 and not all zero")
    nodes = np.flatnonzero(s)
    parts = np.zeros((op.n, nodes.size))
    parts[nodes, np.arange(nodes.size)] = s[nodes]
    return nodes, ppr_parts(op, parts, alpha=alpha, tol=tol, max_iter=max_iter, rows=rows)


# -- paths: how each gold passage is reached ----------------------------------------------------
def hop_distances(graph, entities, *, links: bool = True) -> np.ndarray:
    """Shortest path length (edges) from any of ``entities`` to every node of ``graph``.

    Parameters
    ----------
    graph : EntityGraph
    entities : iterable of str
        Entity keys of the graph (the seeds).
    links : bool
        Walk the graph's entity–entity links too (``False``: passage–entity mentions only).

    Returns
    -------
    numpy.ndarray of float, shape (graph.n_nodes,)
        0 on the seeds, ``inf`` where no path leads (also everywhere when there is no seed).
    """
    from scipy.sparse.csgraph import dijkstra

    nodes = sorted({graph.n_passages + graph.entity_index[e] for e in entities})
    if not nodes:
        return np.full(graph.n_nodes, np.inf)
    if links:
        adj = graph.adjacency()
    else:
        import scipy.sparse as sp

        adj = sp.bmat([[None, graph.incidence], [graph.incidence.T, None]], format="csr",
                      dtype=np.float64) if graph.n_entities and graph.n_passages else graph.adjacency()
    return np.asarray(dijkstra(adj, directed=False, unweighted=True, indices=nodes, min_only=True))


def _question_graph(retriever, text: str, pool):
    corpus_idx = None
    if pool is not None:

        corpus_idx = retriever._resolve_pool(Query(qid="q", text=text, gold=frozenset()), {"q": pool})
    graph = retriever.graph_ if corpus_idx is None else retriever.pool_graph(corpus_idx)
    return graph, corpus_idx


def gold_reach(retriever, query, pool=None) -> dict:
    """How each gold passage of ``query`` is reached from its seeds (categories in the module docstring).

    Parameters
    ----------
    retriever : GraphRetriever
        Fitted; its ``bct`` mode decides the seeds :math:`E`.
    query : Query
    pool : sequence of str, optional
        The closed pool (default ``query.pool``; ``None`` for an open-corpus query).

    Returns
    -------
    dict
        gold pid → ``{"category", "distance", "bct_only", "via"}``: ``distance`` in edges from the
        nearest seed entity (``None`` when unreached), ``bct_only`` whether only BCT's seeds reach
        it, ``via`` the ``[seed, entity, rule]`` of the seeds it mentions, best first. Gold
        passages outside the pool are left out.
    """

    pool = query.pool if pool is None else pool
    graph, _ = _question_graph(retriever, query.text, pool)
    exps = retriever.expansions(query.text, graph)
    fallback = not exps and retriever.fallback == "bm25"
    everything = hop_distances(graph, [e.entity for e in exps])
    exact = hop_distances(graph, [e.entity for e in exps if e.via == "exact"])
    mentions_only = hop_distances(graph, [e.entity for e in exps], links=False)
    out = {}
    for pid in sorted(query.gold):
        if pid not in graph.pid_index:
            continue
        node = graph.passage_node(pid)
        mentioned = provenance(pid, exps, graph)
        d = float(everything[node])
        if fallback:
            cat = "bm25-teleport"
        elif any(e.via == "exact" for e in mentioned):
            cat = "direct"
        elif mentioned:
            cat = "bct"
        elif d == 2:
            cat = "linked"
        elif mentions_only[node] == 3:
            cat = "two-hop"
        elif np.isfinite(d):
            cat = "longer"
        else:
            cat = "unreached"
        out[pid] = {"category": cat, "distance": int(d) if np.isfinite(d) else None,
                    "bct_only": bool(np.isfinite(d) and not np.isfinite(exact[node])),
                    "via": [[e.seed, e.entity, e.via] for e in mentioned]}
    return out


def hit_chains(retriever, query, k: int = 5, pool=None) -> list[dict]:
    """The top ``k`` hits of ``query`` with, per hit, the seed → graph entity → rule → passage chains.

    Returns
    -------
    list of dict
        One per hit, in rank order: ``rank``, ``pid``, ``score``, ``gold``, ``ppr`` (the
        passage's PageRank, the sum of the shares), ``chains``: one per seed with a share,
        ``{"seed", "entity", "via", "share", "fraction", "mentioned"}`` (``fraction`` = share /
        PageRank; ``mentioned``: the passage names the seed entity itself, else the mass came by
        a longer path), largest share first.
    """

    pool = query.pool if pool is None else pool
    run = retriever.search([query], k=k, pool=None if pool is None else {query.qid: list(pool)})
    hits = run[query.qid]
    graph, _ = _question_graph(retriever, query.text, pool)
    exps = retriever.expansions(query.text, graph)
    shares = retriever.explain(query.text, [pid for pid, _ in hits], pool=pool)
    out = []
    for rank, (pid, score) in enumerate(hits, start=1):
        named = {e.entity for e in provenance(pid, exps, graph)}
        total = sum(s.share for s in shares[pid])
        out.append({"rank": rank, "pid": pid, "score": float(score), "gold": pid in query.gold, "ppr": total,
                    "chains": [{**s.to_dict(), "fraction": s.share / total, "mentioned": s.entity in named}
                               for s in shares[pid]]})
    return out


def bct_intrusions(retriever, query, k: int = 5, pool=None) -> list[dict]:
    """Wrong passages that BCT brings into the top ``k`` of ``query``.

    A passage *intrudes* when it is not gold, is in the top ``k`` with the retriever's BCT mode
    but not with ``bct="none"``, and BCT's seeds (rules alias, substring, token) send it more
    than half of its PageRank (:meth:`~aethel_lite.retrievers.GraphRetriever.explain`).

    Returns
    -------
    list of dict
        ``{"pid", "rank", "bct_fraction", "seed", "entity", "via", "displaced_gold"}``: its rank
        with BCT, the share of its PageRank from BCT seeds, the BCT seed that sent it the most,
        and the gold passages of the top ``k`` without BCT that are not in it with BCT.
    """
    pool = query.pool if pool is None else pool
    pools = None if pool is None else {query.qid: list(pool)}
    with_bct = retriever.search([query], k=k, pool=pools)[query.qid]
    plain = retriever.with_settings(bct="none").search([query], k=k, pool=pools)[query.qid]
    before = {pid for pid, _ in plain}
    after = {pid for pid, _ in with_bct}
    displaced = sorted(pid for pid in before - after if pid in query.gold)
    new = [(rank, pid) for rank, (pid, _) in enumerate(with_bct, start=1) if pid not in before and pid not in query.gold]
    if not new:
        return []
    shares = retriever.explain(query.text, [pid for _, pid in new], pool=pool)
    out = []
    for rank, pid in new:
        total = sum(s.share for s in shares[pid])
        bct = [s for s in shares[pid] if s.via in BCT_RULES]
        frac = sum(s.share for s in bct) / total if total > 0 else 0.0
        if frac > 0.5:
            top = bct[0]
            out.append({"pid": pid, "rank": rank, "bct_fraction": float(frac), "seed": top.seed, "entity": top.entity,
                        "via": top.via, "displaced_gold": displaced})
    return out


def provenance_report(retriever, queries, *, k: int = 5, progress: bool = False) -> dict:
    """Counts over a query set: how gold passages are reached, and where BCT brings in wrong passages.

    Parameters
    ----------
    retriever : GraphRetriever
        Fitted, with the BCT mode to study (e.g. ``aethel-bct``: ``ner3``, ``bct="both"``).
    queries : sequence of Query
        Each with its closed pool (``Query.pool``) or ``None`` (open corpus).
    k : int
        Cut-off of the intrusion analysis.

    Returns
    -------
    dict
        ``n_queries``, ``n_gold``; ``gold_reach``: category → number of gold passages
        (:data:`REACH`); ``bct_only``: gold passages reached only through BCT seeds;
        ``questions_all_gold_direct``; ``intrusions``: ``{"n_passages", "n_questions",
        "n_questions_displacing_gold"}``; ``intrusion_rows``: one row per intruding passage
        (``qid``, ``question`` and the fields of :func:`bct_intrusions`), in query order;
        ``per_query``: qid → :func:`gold_reach`.
    """
    from tqdm.auto import tqdm

    reach = dict.fromkeys(REACH, 0)
    per_query, rows = {}, []
    bct_only = n_gold = all_direct = 0
    questions = displacing = 0
    for q in tqdm(list(queries), desc="provenance", disable=not progress, leave=False):
        found = gold_reach(retriever, q)
        per_query[q.qid] = found
        for g in found.values():
            reach[g["category"]] += 1
            bct_only += g["bct_only"]
        n_gold += len(found)
        all_direct += bool(found) and all(g["category"] == "direct" for g in found.values())
        intr = bct_intrusions(retriever, q, k=k)
        if intr:
            questions += 1
            displacing += bool(intr[0]["displaced_gold"])
        rows += [{"qid": q.qid, "question": q.text, **row} for row in intr]
    return {"n_queries": len(per_query), "n_gold": n_gold, "k": k, "gold_reach": reach, "bct_only": bct_only,
            "questions_all_gold_direct": all_direct,
            "intrusions": {"n_passages": len(rows), "n_questions": questions, "n_questions_displacing_gold": displacing},
            "intrusion_rows": rows, "per_query": per_query}
