r"""How a fitted graph retriever reaches each gold passage, and where BCT brings in wrong ones.

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
Jeh, G. & Widom, J. (2003). Scaling personalized web search. WWW '03 (the linearity theorem).
"""

from __future__ import annotations

import numpy as np

from ..core.bct import provenance
from ..core.provenance import hop_distances
from ..retrievers import GraphRetriever, HybridRetriever, clone
from ..retrievers.base import PassageIds
from .attribution import explain, question_graph

__all__ = [
    "REACH",
    "BCT_RULES",
    "same_graph",
    "without_bct",
    "gold_reach",
    "hit_chains",
    "bct_intrusions",
    "provenance_report",
]

#: Categories of :func:`gold_reach`, from the most to the least direct.
REACH = ("direct", "bct", "linked", "two-hop", "longer", "unreached", "bm25-teleport")
#: BCT's expansion rules (every rule but ``"exact"``).
BCT_RULES = ("alias", "substring", "token")


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
        gold pid in the pool → ``{"category", "distance", "bct_only", "via"}``: edges from the nearest
        seed entity (``None``: unreached), whether only BCT's seeds reach it, the ``[seed, entity, rule]``
        of the seeds it mentions, best first.
    """
    pool = query.pool if pool is None else pool
    graph, _ = question_graph(retriever, query.text, pool)
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
        out[pid] = {
            "category": cat,
            "distance": int(d) if np.isfinite(d) else None,
            "bct_only": bool(np.isfinite(d) and not np.isfinite(exact[node])),
            "via": [[e.seed, e.entity, e.via] for e in mentioned],
        }
    return out


def hit_chains(retriever, query, k: int = 5, pool=None) -> list[dict]:
    """The top ``k`` hits of ``query`` with, per hit, the seed → graph entity → rule → passage chains.

    Returns
    -------
    list of dict
        One per hit, in rank order: ``rank``, ``pid``, ``score``, ``gold``, ``ppr`` (its PageRank),
        ``chains``: ``{"seed", "entity", "via", "share", "fraction", "mentioned"}`` per seed with a share,
        largest first (``fraction`` = share / PageRank; ``mentioned``: the passage names the entity).
    """
    pool = query.pool if pool is None else pool
    run = retriever.search([query], k=k, pool=None if pool is None else {query.qid: list(pool)})
    hits = run[query.qid]
    graph, _ = question_graph(retriever, query.text, pool)
    exps = retriever.expansions(query.text, graph)
    shares = explain(retriever, query.text, [pid for pid, _ in hits], pool=pool)
    out = []
    for rank, (pid, score) in enumerate(hits, start=1):
        named = {e.entity for e in provenance(pid, exps, graph)}
        total = sum(s.share for s in shares[pid])
        out.append(
            {
                "rank": rank,
                "pid": pid,
                "score": float(score),
                "gold": pid in query.gold,
                "ppr": total,
                "chains": [
                    {**s.to_dict(), "fraction": s.share / total, "mentioned": s.entity in named}
                    for s in shares[pid]
                ],
            }
        )
    return out


def same_graph(paper: GraphRetriever, **changes) -> GraphRetriever:
    """The fitted graph retriever ``paper`` with the search settings ``changes`` (BCT mode, teleport probability),
    over the same graph and BM25 index (:meth:`GraphRetriever.from_graph`: nothing is extracted again)."""
    ids = [PassageIds(p, d) for p, d in zip(paper.pids_, paper.doc_ids_)]
    settings = {**paper.get_params(deep=False), **changes}
    return GraphRetriever.from_graph(ids, paper.graph_, paper.bm25_, **settings)


def without_bct(retriever):
    """The fitted retriever ``retriever`` would be with ``bct="none"``, over the same graph (nothing is extracted:
    BCT changes only how a question is seeded)."""
    paper = retriever.graph_retriever_ if isinstance(retriever, HybridRetriever) else retriever
    exact = same_graph(paper, bct="none")
    if not isinstance(retriever, HybridRetriever):
        return exact
    return clone(retriever).set_params(graph=exact, prefit=True).fit(retriever.passages_)


def bct_intrusions(retriever, query, k: int = 5, pool=None, exact=None) -> list[dict]:
    """Wrong passages that BCT brings into the top ``k`` of ``query``.

    A passage *intrudes* when it is not gold, is in the top ``k`` with the retriever's BCT mode
    but not with ``bct="none"``, and BCT's seeds (rules alias, substring, token) send it more
    than half of its PageRank (:meth:`~aethel_lite.retrievers.GraphRetriever.explain`).

    Returns
    -------
    list of dict
        ``{"pid", "rank", "bct_fraction", "seed", "entity", "via", "displaced_gold"}``: the BCT seed
        that sent it the most, and the gold passages of the top ``k`` without BCT but not with it.
    """
    pool = query.pool if pool is None else pool
    pools = None if pool is None else {query.qid: list(pool)}
    with_bct = retriever.search([query], k=k, pool=pools)[query.qid]
    exact = without_bct(retriever) if exact is None else exact
    plain = exact.search([query], k=k, pool=pools)[query.qid]
    before = {pid for pid, _ in plain}
    after = {pid for pid, _ in with_bct}
    displaced = sorted(pid for pid in before - after if pid in query.gold)
    new = [
        (rank, pid)
        for rank, (pid, _) in enumerate(with_bct, start=1)
        if pid not in before and pid not in query.gold
    ]
    if not new:
        return []
    shares = explain(retriever, query.text, [pid for _, pid in new], pool=pool)
    out = []
    for rank, pid in new:
        total = sum(s.share for s in shares[pid])
        bct = [s for s in shares[pid] if s.via in BCT_RULES]
        frac = sum(s.share for s in bct) / total if total > 0 else 0.0
        if frac > 0.5:
            top = bct[0]
            out.append(
                {
                    "pid": pid,
                    "rank": rank,
                    "bct_fraction": float(frac),
                    "seed": top.seed,
                    "entity": top.entity,
                    "via": top.via,
                    "displaced_gold": displaced,
                }
            )
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

    exact = without_bct(retriever)
    reach = dict.fromkeys(REACH, 0)
    per_query, rows = {}, []
    bct_only = n_gold = all_direct = 0
    questions = displacing = 0
    for q in tqdm(list(queries), desc="provenance", disable=not progress, leave=False):
        found = per_query[q.qid] = gold_reach(retriever, q)
        for g in found.values():
            reach[g["category"]] += 1
            bct_only += g["bct_only"]
        n_gold += len(found)
        all_direct += bool(found) and all(g["category"] == "direct" for g in found.values())
        intr = bct_intrusions(retriever, q, k=k, exact=exact)
        if intr:
            questions += 1
            displacing += bool(intr[0]["displaced_gold"])
        rows += [{"qid": q.qid, "question": q.text, **row} for row in intr]
    return {
        "n_queries": len(per_query),
        "n_gold": n_gold,
        "k": k,
        "gold_reach": reach,
        "bct_only": bct_only,
        "questions_all_gold_direct": all_direct,
        "intrusions": {
            "n_passages": len(rows),
            "n_questions": questions,
            "n_questions_displacing_gold": displacing,
        },
        "intrusion_rows": rows,
        "per_query": per_query,
    }
