r"""Error analysis of the entity-graph retriever: where the PPR mass of a question goes, and why.

A fitted :class:`~aethel_lite.retrievers.GraphRetriever` ranks passages by Personalized PageRank
on the passage–entity graph (passages first, then entities),

.. math::

    p = \alpha s + (1 - \alpha) W p, \qquad W = A D^{-1},

with the teleport vector :math:`s` on the question's seed entities (after BCT). The functions here
measure, on the retriever's own open-corpus PPR (:meth:`GraphRetriever.ppr`), the facts that decide it:

* **Seed degree.** An entity :math:`e` with incidence column :math:`B_{:e}` touches
  :math:`d_e = \sum_i B_{ie}` passages of :math:`D_e = |\{\mathrm{doc}(i) : B_{ie} = 1\}|`
  documents; its share of the graph's passage–entity edges is :math:`d_e / \sum_{i,e} B_{ie}`.
* **Why passages tie.** A passage :math:`i` is never a seed (except under the BM25 fallback), so
  its row of the fixed point reads

  .. math:: p_i = (1 - \alpha) \sum_e B_{ie}\, \frac{p_e}{d_e} ,

  a function of its entity set alone: passages that mention the same entities tie. Ties are
  counted on the retriever's ranking scores (PPR rounded to ``tol / 100``,
  :meth:`GraphRetriever.ppr_scores`).
* **Mass split.** :math:`\pi_P = \sum_{i \in P} p_i` (passages) and :math:`\pi_E = 1 - \pi_P`
  (entities); of :math:`\pi_P`, the shares on the gold passages and on the gold's documents.

References
----------
L. Page, S. Brin, R. Motwani, T. Winograd, "The PageRank citation ranking: bringing order to the
Web", Stanford InfoLab Technical Report 1999-66, 1999.
T. H. Haveliwala, "Topic-sensitive PageRank", Proc. WWW 2002, pp. 517-526.
R. Andersen, F. Chung, K. Lang, "Local graph partitioning using PageRank vectors", Proc. FOCS
2006, pp. 475-486 (PPR mass stays near its seeds).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.bct import seed_vector
from ..errors import DataError, ParameterError
from ..evaluation.metrics import gold_rank as _rank
from ..retrievers import GraphRetriever, HybridRetriever, topk

__all__ = [
    "gold_rank",
    "gold_ranks",
    "seed_report",
    "hub_entities",
    "mass_report",
    "worked_example",
    "aggregate_report",
    "hub_mass",
    "example_markdown",
    "rank_figure",
]

_BLOCK = 64  # questions per PPR batch, as in GraphRetriever.search


# ------------------------------------------------------------------------------------ ranks
def gold_rank(scores: np.ndarray, gold: Iterable[int]) -> int | None:
    """1-based rank of the best gold passage in the full ranking of ``scores``.

    The rank of :func:`aethel_lite.evaluation.metrics.gold_rank` (ties by corpus order, as
    :func:`~aethel_lite.retrievers.topk` orders them), over the gold passages that are ranked.

    Parameters
    ----------
    scores : ndarray, shape (n,)
        One score per corpus passage; ``-inf`` and NaN mean *not ranked*.
    gold : iterable of int
        Corpus indices of the gold passages (one outside ``scores`` is a :class:`ParameterError`).

    Returns
    -------
    int or None
        The smallest rank over the gold passages; ``None`` if none of them is ranked.
    """
    scores = np.asarray(scores, dtype=np.float64)
    gold = [int(g) for g in gold]
    for g in gold:
        if not 0 <= g < scores.shape[0]:
            raise ParameterError(f"gold: index {g} is outside the {scores.shape[0]} scores")
    ranked = [g for g in gold if not (np.isnan(scores[g]) or scores[g] == -np.inf)]
    return _rank(scores, ranked) or None


def gold_ranks(retriever, queries: Sequence) -> dict[str, int | None]:
    """qid → :func:`gold_rank` of each question in a fitted GraphRetriever's open-corpus ranking.

    Parameters
    ----------
    retriever : GraphRetriever
    queries : sequence of Query
        Their gold pids must be fitted passages (else :class:`DataError`).

    Returns
    -------
    dict
        qid → rank (``None``: unranked).
    """
    facts = _Facts(retriever)
    return {
        q.qid: gold_rank(solved.scores, solved.gold) for q, solved in zip(queries, _solve(facts, queries))
    }


# --------------------------------------------------------------------------- per-retriever facts
class _Facts:
    """Lookups on a fitted retriever's graph, computed once: degrees, documents, gold indices."""

    def __init__(self, retriever) -> None:
        if not isinstance(retriever, (GraphRetriever, HybridRetriever)):
            raise ParameterError(
                f"retriever: expected a fitted GraphRetriever, got {type(retriever).__name__}"
            )
        retriever._check_fitted()
        self.retriever = retriever
        self.graph = graph = retriever.graph_
        self.degree = np.bincount(graph.incidence.indices, minlength=graph.n_entities)  # passages per entity
        self.doc_names, doc_of = np.unique(np.asarray(retriever.doc_ids_, dtype=str), return_inverse=True)
        self.doc_of = doc_of.ravel()
        coo = graph.incidence.tocoo()
        n_docs = len(self.doc_names)
        pairs = np.unique(coo.col.astype(np.int64) * n_docs + self.doc_of[coo.row])
        self.n_documents = np.bincount(pairs // n_docs, minlength=graph.n_entities)
        self.n_edges = int(graph.incidence.nnz)

    def entity_row(self, j: int) -> dict:
        return {
            "entity": self.graph.entities[j],
            "degree": int(self.degree[j]),
            "n_documents": int(self.n_documents[j]),
        }

    def passage_entities(self, i: int) -> list[str]:
        """The entity keys passage ``i`` mentions, in graph order."""
        inc = self.graph.incidence
        return [self.graph.entities[j] for j in inc.indices[inc.indptr[i] : inc.indptr[i + 1]]]

    def gold(self, query) -> np.ndarray:
        """Corpus indices of ``query``'s gold passages, sorted (a :class:`DataError` names an unknown pid)."""
        index = self.retriever.pid_index_
        missing = sorted(pid for pid in query.gold if pid not in index)
        if missing:
            raise DataError(f"query {query.qid!r}: gold pid {missing[0]!r} is not in the fitted corpus")
        return np.asarray(sorted(index[pid] for pid in query.gold), dtype=np.int64)


@dataclass
class _Solved:
    """One question as the retriever sees it: seeds, the full PPR vector and the ranking scores."""

    query: object
    expansions: list
    fallback: bool
    ppr: np.ndarray  # (n_nodes,), passages then entities
    scores: np.ndarray  # (n_corpus,), what search ranks
    gold: np.ndarray  # corpus indices

    @property
    def reached(self) -> np.ndarray:
        return self.ppr[: self.scores.shape[0]] > 0


def _solve(facts: _Facts, queries: Sequence) -> Iterator[_Solved]:
    """The questions' PPR (batches of ``_BLOCK`` on the retriever's operator) and ranking scores."""
    r = facts.retriever
    n_p = facts.graph.n_passages
    queries = list(queries)
    for start in range(0, len(queries), _BLOCK):
        chunk = queries[start : start + _BLOCK]
        golds = [facts.gold(q) for q in chunk]  # fail on a bad gold pid before solving
        P, exps, used = r.ppr([q.text for q in chunk])
        for j, q in enumerate(chunk):
            p = np.ascontiguousarray(P[:, j])
            yield _Solved(q, exps[j], used[j], p, r.ppr_scores(q.text, p[:n_p]), golds[j])


def _solve_one(retriever, query) -> tuple[_Facts, _Solved]:
    facts = _Facts(retriever)
    return facts, next(_solve(facts, [query]))


def _check_positive(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ParameterError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


# ------------------------------------------------------------------------------------ seeds
def _seeds(facts: _Facts, solved: _Solved, sources: dict[str, str]) -> list[dict]:
    """One row per seed entity (``sources``: :meth:`GraphRetriever.query_key_sources` of the question)."""
    graph = facts.graph
    s = seed_vector(solved.expansions, graph)
    gold_entities = {e for g in solved.gold for e in facts.passage_entities(int(g))}
    index = graph.entity_index
    return [
        {
            **facts.entity_row(index[e.entity]),
            "query_key": e.seed,
            "found_by": sources.get(e.seed, "mention") if e.via == "exact" else f"bct-{e.via}",
            "weight": float(s[graph.n_passages + index[e.entity]]),
            "on_gold": e.entity in gold_entities,
        }
        for e in solved.expansions
    ]


def _seed_report(facts: _Facts, solved: _Solved) -> dict:
    q = solved.query
    sources = facts.retriever.query_key_sources(q.text)
    seeds = _seeds(facts, solved, sources)
    keys = [
        {"key": key, "found_by": how, "in_graph": key in facts.graph.entity_index}
        for key, how in sources.items()
    ]
    return {
        "qid": q.qid,
        "question": q.text,
        "query_keys": keys,
        "seeds": seeds,
        "n_seeds": len(seeds),
        "fallback": solved.fallback,
        "gold_has_seed": any(s["on_gold"] for s in seeds),
    }


def seed_report(retriever, query) -> dict:
    """The seed entities of a question (after BCT), how each was found, and how specific it is.

    Parameters
    ----------
    retriever : GraphRetriever
    query : Query

    Returns
    -------
    dict
        ``qid``, ``question``, ``query_keys`` (each key found by ``"mention"`` or ``"ngram"``),
        ``seeds`` in teleport order (``found_by`` the key's source, or ``"bct-<rule>"``; ``weight`` the
        share of :math:`s`; ``degree`` :math:`d_e`; ``n_documents`` :math:`D_e`; ``on_gold``),
        ``n_seeds``, ``fallback`` (the BM25 teleport was used) and ``gold_has_seed``.
    """
    return _seed_report(*_solve_one(retriever, query))


def hub_entities(retriever, top: int = 20) -> list[dict]:
    r"""The ``top`` highest-degree entity nodes of a fitted GraphRetriever's graph.

    Returns
    -------
    list of dict
        ``{"entity", "degree", "n_documents", "surface", "edge_share"}``, by degree (descending) then
        name; ``edge_share`` is :math:`d_e / \sum_{i,e} B_{ie}`.
    """
    top = _check_positive(top, "top")
    facts = _Facts(retriever)
    order = np.lexsort((np.arange(facts.graph.n_entities), -facts.degree))[:top]
    return [
        {
            **facts.entity_row(int(j)),
            "surface": facts.graph.surface.get(facts.graph.entities[j], ""),
            "edge_share": float(facts.degree[j] / facts.n_edges) if facts.n_edges else 0.0,
        }
        for j in order
    ]


def hub_mass(retriever, queries: Sequence, top: int = 15, block: int = 64) -> list[dict]:
    r"""Which entity nodes soak up the PageRank mass, averaged over questions.

    Entity :math:`e`'s share in question :math:`q` is :math:`p^{(q)}_e / \sum_v p^{(q)}_v`, averaged
    over the questions that have any mass.

    Returns
    -------
    list of dict
        ``{"entity", "degree", "n_documents", "mean_mass_share", "n_questions_top"}`` for the ``top``
        entities by mean share; ``n_questions_top`` counts the questions in which that entity holds
        more mass than any other node.
    """
    top = _check_positive(top, "top")
    block = _check_positive(block, "block")
    facts = _Facts(retriever)
    n_p = facts.graph.n_passages
    total = np.zeros(facts.graph.n_entities)
    wins = np.zeros(facts.graph.n_entities, dtype=np.int64)
    n_live = 0
    texts = [q.text for q in queries]
    for start in range(0, len(texts), block):
        P, _, _ = retriever.ppr(texts[start : start + block])
        mass = P.sum(axis=0)
        live = mass > 0
        if not live.any():
            continue
        total += (P[n_p:, live] / mass[live]).sum(axis=1)
        best = np.argmax(P[:, live], axis=0)
        np.add.at(wins, best[best >= n_p] - n_p, 1)
        n_live += int(live.sum())
    if n_live == 0:
        return []
    mean = total / n_live
    order = np.lexsort((np.arange(mean.size), -mean))[:top]
    return [
        {**facts.entity_row(int(j)), "mean_mass_share": float(mean[j]), "n_questions_top": int(wins[j])}
        for j in order
    ]


# ------------------------------------------------------------------------------------- mass
def _tied_top(solved: _Solved) -> int:
    """Reached passages whose ranking score equals the best one (0 when none is reached)."""
    top = solved.scores[solved.reached]
    return int(np.count_nonzero(top == top.max())) if top.size else 0


def _share(part: float, total: float) -> float | None:
    return float(part / total) if total > 0 else None


def _mass(facts: _Facts, solved: _Solved, top: int) -> dict:
    """Mass split, top entities by mass and the gold's share of the passage mass."""
    n_p = facts.graph.n_passages
    p = solved.ppr
    passage_mass, total = float(p[:n_p].sum()), float(p.sum())
    ent = p[n_p:]
    order = np.lexsort((np.arange(ent.size), -ent))[:top]
    seeds = {e.entity for e in solved.expansions}
    top_entities = [
        {**facts.entity_row(int(j)), "mass": float(ent[j]), "is_seed": facts.graph.entities[j] in seeds}
        for j in order
        if ent[j] > 0
    ]
    gold_docs = np.unique(facts.doc_of[solved.gold])
    in_gold_docs = np.isin(facts.doc_of, gold_docs)
    has_gold = solved.gold.size > 0
    return {
        "passage_share": _share(passage_mass, total),
        "entity_share": _share(total - passage_mass, total),
        "top_entities": top_entities,
        "gold_share": _share(float(p[solved.gold].sum()), passage_mass) if has_gold else None,
        "gold_doc_share": _share(float(p[:n_p][in_gold_docs].sum()), passage_mass) if has_gold else None,
        "gold_documents": [str(facts.doc_names[d]) for d in gold_docs],
    }


def mass_report(retriever, query, top: int = 10) -> dict:
    r"""Where a question's PPR mass goes: passages vs entities, hub entities, gold, ties.

    Parameters
    ----------
    retriever : GraphRetriever
    query : Query
    top : int
        How many entities to list by mass.

    Returns
    -------
    dict
        ``ppr`` is :math:`p` over the ``n_passages`` passages, then the entities;
        ``passage_share``/``entity_share`` are :math:`\pi_P`/:math:`\pi_E`; ``gold_share`` and
        ``gold_doc_share``, the shares of :math:`\pi_P` on the gold and on its documents, are ``None``
        with no mass or no gold; ``n_tied_top`` counts the reached passages tied at ``top_score``.
    """
    top = _check_positive(top, "top")
    facts, solved = _solve_one(retriever, query)
    reached = solved.scores[solved.reached]
    return {
        "qid": query.qid,
        "question": query.text,
        "fallback": solved.fallback,
        "n_passages": facts.graph.n_passages,
        "ppr": solved.ppr.tolist(),
        **_mass(facts, solved, top),
        "n_reached": int(reached.size),
        "top_score": float(reached.max()) if reached.size else None,
        "n_tied_top": _tied_top(solved),
    }


# ------------------------------------------------------------------------------ worked example
def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _gold_rows(facts: _Facts, solved: _Solved, seeds: set[str]) -> list[dict]:
    """Each gold passage: its rank, score, whether PPR reached it, its entities and seeds, ties."""
    rows = []
    for g in solved.gold.tolist():
        entities = facts.passage_entities(g)
        score = solved.scores[g]
        ranked = bool(np.isfinite(score))
        rows.append(
            {
                "pid": facts.retriever.pids_[g],
                "doc_id": str(facts.doc_names[facts.doc_of[g]]),
                "rank": gold_rank(solved.scores, [g]),
                "score": float(score) if ranked else None,
                "reached": bool(solved.ppr[g] > 0),
                "entities": entities,
                "seed_entities": [e for e in entities if e in seeds],
                "n_tied": int(np.count_nonzero(solved.scores == score)) - 1 if ranked else 0,
            }
        )
    return sorted(rows, key=lambda r: (r["rank"] is None, r["rank"] or 0, r["pid"]))


def _hits(facts: _Facts, solved: _Solved, seeds: set[str], k: int) -> list[dict]:
    idx, vals = topk(solved.scores, k)
    return [
        {
            "rank": rank,
            "pid": facts.retriever.pids_[i],
            "doc_id": str(facts.doc_names[facts.doc_of[i]]),
            "score": float(v),
            "reached": bool(solved.ppr[i] > 0),
            "seed_entities": [e for e in facts.passage_entities(i) if e in seeds],
        }
        for rank, (i, v) in enumerate(zip(idx.tolist(), vals.tolist()), start=1)
        if np.isfinite(v)
    ]


def _reason(solved: _Solved, seeds: list[dict], gold: list[dict]) -> str:
    """One line, from the measured facts, on why the best gold passage ranks where it does."""
    if not gold:
        return "no gold passage given"
    best = gold[0]
    rank = "unranked" if best["rank"] is None else f"ranked {_ordinal(best['rank'])}"
    if not seeds:
        if not solved.fallback:
            return "no seed entity in the question: the pure graph ranks nothing"
        how = "reached by" if best["reached"] else "not reached by (BM25 order)"
        return f"no seed entity in the question: gold {rank}, {how} the BM25-seeded teleport"
    if not best["reached"]:
        return f"gold not reached: no seed entity on the gold page and no path to it from the seeds ({rank})"
    if not best["seed_entities"]:
        return f"gold reached only through other entities (no seed entity on the gold page): {rank}"
    if best["n_tied"]:
        return f"gold reached but tied with {_count(best['n_tied'], 'other page')} at the same PPR score: {rank} by corpus order"
    on_gold = [s for s in seeds if s["entity"] in best["seed_entities"]]
    s = min(on_gold, key=lambda r: (-r["weight"], r["degree"], r["entity"]))
    return (
        f"gold {rank}: its seed '{s['entity']}' is also on {_count(s['degree'] - 1, 'other page')} "
        f"of {_count(s['n_documents'], 'document')}"
    )


def worked_example(retriever, query, k: int = 5) -> dict:
    """One question end to end, for a narrative: seeds → mass → top-k hits → gold → reason.

    Parameters
    ----------
    retriever : GraphRetriever
    query : Query
    k : int
        Hits listed (and entities listed by mass).

    Returns
    -------
    dict
        The seeds as :func:`seed_report`, the ``mass`` as :func:`mass_report`, the top-``k``
        ``hits``, the ``gold`` passages best first (``n_tied``: other passages with exactly its
        score), ``gold_rank``, ``n_tied_top`` and a one-line ``reason`` generated from these facts.
    """
    k = _check_positive(k, "k")
    facts, solved = _solve_one(retriever, query)
    report = _seed_report(facts, solved)
    names = {s["entity"] for s in report["seeds"]}
    gold = _gold_rows(facts, solved, names)
    return {
        "qid": query.qid,
        "question": query.text,
        "query_keys": report["query_keys"],
        "seeds": report["seeds"],
        "fallback": solved.fallback,
        "mass": _mass(facts, solved, k),
        "hits": _hits(facts, solved, names, k),
        "gold": gold,
        "gold_rank": gold_rank(solved.scores, solved.gold),
        "n_tied_top": _tied_top(solved),
        "reason": _reason(solved, report["seeds"], gold),
    }


# ------------------------------------------------------------------------------------ aggregate
def _median(values: list) -> float | None:
    return float(statistics.median(values)) if values else None


def _mean(values: list) -> float | None:
    return float(sum(values) / len(values)) if values else None


def _query_row(facts: _Facts, solved: _Solved) -> dict:
    seeds = _seeds(facts, solved, facts.retriever.query_key_sources(solved.query.text))
    has_gold = solved.gold.size > 0
    return {
        "qid": solved.query.qid,
        "n_seeds": len(seeds),
        "fallback": solved.fallback,
        "seed_degrees": [s["degree"] for s in seeds],
        "seed_documents": [s["n_documents"] for s in seeds],
        "has_gold": has_gold,
        "gold_has_seed": any(s["on_gold"] for s in seeds),
        "gold_reached": bool(solved.reached[solved.gold].any()) if has_gold else False,
        "gold_rank": gold_rank(solved.scores, solved.gold),
        "n_reached": int(solved.reached.sum()),
        "n_tied_top": _tied_top(solved),
    }


def aggregate_report(retriever, queries: Sequence) -> dict:
    """Why the graph finds (or misses) the gold, over a whole query set (open corpus).

    Parameters
    ----------
    retriever : GraphRetriever
    queries : sequence of Query
        A question without gold counts only in the seed statistics.

    Returns
    -------
    dict
        Shares of the questions (the gold shares over the ``n_with_gold`` with gold), medians of
        :math:`d_e` and :math:`D_e` over every (question, seed) pair, ``median_gold_rank`` over the
        ``n_gold_ranked`` ranked golds, ``mean_tied_top`` over questions that reach any passage, and
        ``per_query`` rows. Shares and medians are ``None`` over an empty set.
    """
    facts = _Facts(retriever)
    rows = [_query_row(facts, solved) for solved in _solve(facts, queries)]
    with_gold = [r for r in rows if r["has_gold"]]
    ranks = [r["gold_rank"] for r in with_gold if r["gold_rank"] is not None]
    return {
        "n_queries": len(rows),
        "n_with_gold": len(with_gold),
        "no_seed_share": _mean([r["n_seeds"] == 0 for r in rows]),
        "fallback_share": _mean([r["fallback"] for r in rows]),
        "median_seed_degree": _median([d for r in rows for d in r["seed_degrees"]]),
        "median_seed_documents": _median([d for r in rows for d in r["seed_documents"]]),
        "gold_has_seed_share": _mean([r["gold_has_seed"] for r in with_gold]),
        "gold_reached_share": _mean([r["gold_reached"] for r in with_gold]),
        "median_gold_rank": _median(ranks),
        "n_gold_ranked": len(ranks),
        "mean_tied_top": _mean([r["n_tied_top"] for r in rows if r["n_reached"]]),
        "per_query": rows,
    }


def example_markdown(ex: Mapping[str, Any]) -> str:
    """A worked example (:func:`worked_example`) as Markdown: question → seeds →
    where the mass went → top hits → the gold passage → the measured reason."""

    def pct(x):
        return "n/a" if x is None else f"{100 * x:.1f}%"

    lines = [f"**{ex['question']}** (`{ex['qid']}`)", ""]
    if ex["seeds"]:
        seeds = "; ".join(
            f"`{s['entity']}` ({s['degree']} passages in {s['n_documents']} documents, found by "
            f"{s['found_by']}{', on a gold passage' if s['on_gold'] else ''})"
            for s in ex["seeds"]
        )
        lines.append(f"* **Seeds:** {seeds}.")
    else:
        lines.append(
            "* **Seeds:** none of the question's words is an entity in the graph"
            + (" — BM25-seeded teleport (fallback)." if ex["fallback"] else ".")
        )
    mass = ex["mass"]
    top = ", ".join(f"`{e['entity']}` {pct(e['mass'])}" for e in mass["top_entities"][:5])
    lines.append(
        f"* **Mass:** {pct(mass['entity_share'])} on entity nodes, {pct(mass['passage_share'])} on passages; "
        f"top entities {top}; the gold passages hold {pct(mass['gold_share'])} of the passage mass, the gold's "
        f"documents {pct(mass['gold_doc_share'])}. {ex['n_tied_top']} passages tie at the top score."
    )
    hits = "; ".join(
        f"{h['rank']}. `{h['pid']}`" + (" (BM25 order)" if not h["reached"] else "") for h in ex["hits"]
    )
    lines.append(f"* **Top hits:** {hits}.")
    for g in ex["gold"]:
        lines.append(
            f"* **Gold** `{g['pid']}`: rank {g['rank'] if g['rank'] is not None else 'not ranked'}, "
            f"{'reached' if g['reached'] else 'not reached'} by PageRank; seed entities on it: "
            f"{', '.join(f'`{e}`' for e in g['seed_entities']) or 'none'}; {len(g['entities'])} entities in all."
        )
    lines.append(f"* **Why:** {ex['reason']}")
    return "\n".join(lines)


def rank_figure(errors: Mapping[str, Any]):
    """Histogram of where the graph ranks each question's best gold passage in its full ranking (log scale),
    from an open-corpus error analysis (:func:`aethel_lite.studies.open_corpus.error_analysis`)."""
    import matplotlib.pyplot as plt

    ranks = [r["gold_rank"] for r in errors["per_query"] if r["gold_rank"] is not None]
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.hist(ranks, bins=[1, 2, 6, 11, 101, 1001, 10**6], edgecolor="black")
    ax.set_xscale("log")
    ax.set_xlabel("rank of the best gold passage in the full ranking (log scale)")
    ax.set_ylabel("questions")
    ax.set_title(
        f"{errors['method']} on {errors['dataset']}: {len(ranks)} of {len(errors['per_query'])} questions ranked"
    )
    fig.tight_layout()
    return fig
