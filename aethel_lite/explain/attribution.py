r"""Why a fitted :class:`~aethel_lite.retrievers.GraphRetriever` ranked a passage, computed on request:
the provenance of a search's hits (:func:`attribute`), their scores split by seed source
(:func:`source_shares`) and exact per-seed shares of a passage's PageRank (:func:`explain`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..core.bct import Expansion, provenance
from ..core.ppr import PPROperator
from ..core.provenance import SeedShare, part_weights, ppr_parts
from ..data.docmeta import PREFIXES, _slug
from ..data.runs import Run
from ..data.schema import Query
from ..retrievers.hybrid import SOURCES, TERM_SOURCE, HybridRetriever
from ..retrievers.traces import BLOCK, QueryTrace
from . import diagnostics as _diagnostics

__all__ = [
    "EXPLAIN_DEPTH",
    "SearchResult",
    "explained_search",
    "attribute",
    "source_shares",
    "seed_pieces",
    "explain",
]


#: hits per question that :func:`explained_search` explains unless told otherwise
EXPLAIN_DEPTH = 100


@dataclass
class SearchResult:
    """An explained search: the run and what explains it (:func:`explained_search` of a graph or hybrid retriever).

    Attributes
    ----------
    run : Run
        As ``search`` without ``explain``.
    provenance : dict
        qid → pid → list of :class:`~aethel_lite.core.bct.Expansion` for the query's first
        ``depth`` hits (hybrid: the seed-source records first, largest share first).
    sources : dict
        qid → pid → seed source → share of the hit's score (hybrid retrievers; ``{}`` otherwise).
    seeds : dict
        qid → the query's expansions (empty list: no seed entity).
    diagnostics : dict
        qid → :func:`aethel_lite.explain.diagnostics.query_diagnostics`.
    k : int
        The depth searched.
    """

    run: Run
    provenance: dict
    sources: dict
    seeds: dict
    diagnostics: dict
    k: int

    def summary(self) -> dict:
        """:func:`aethel_lite.explain.diagnostics.summarize` of :attr:`diagnostics`."""
        return _diagnostics.summarize(self.diagnostics, self.k)


def ranker_of(retriever):
    """The fitted retriever that ran the PageRank search: ``retriever`` itself, or the one a stage holds
    (``ranker_``, e.g. the hybrid of ``aethel-anchors``)."""
    return getattr(retriever, "ranker_", retriever)


def _is_hybrid(retriever) -> bool:
    r = ranker_of(retriever)
    return isinstance(r, HybridRetriever) and r.is_hybrid


def explains_documents(retriever) -> bool:
    """Whether :func:`explain` splits each hit's *document node* PageRank (a hybrid ranked by its document term
    alone of the graph's terms) rather than its own."""
    r = ranker_of(retriever)
    return isinstance(r, HybridRetriever) and r.explains_documents


def explained_search(retriever, queries, k: int = 10, pool=None, *, depth: int | None = None) -> SearchResult:
    """Search with a fitted graph or hybrid retriever and explain each question's first ``depth`` hits (default
    :data:`EXPLAIN_DEPTH`): the run is the one ``retriever.search(queries, k, pool)`` returns."""
    run, found = retriever.traced_search(queries, k, pool)
    return attribute(retriever, run, found, k=k, depth=EXPLAIN_DEPTH if depth is None else int(depth))


def _by_anchor(retriever, run: Run, traces: Mapping[str, QueryTrace], depth: int) -> tuple:
    """``(run, traces, owner)`` with each anchored question's first ``depth`` hits split into one
    pseudo-question per anchor (the one ranking them best); ``owner``: key → ``(qid, Anchor or None)``."""
    sub_run, sub_traces, owner = Run(name=run.name), {}, {}
    for qid, hits in run.items():
        t = traces[qid]
        anchored = t.extra.get("anchors")
        if not anchored:
            sub_run[qid], sub_traces[qid], owner[qid] = hits, t, (qid, None)
            continue
        best = t.extra["anchor_of"]
        for a, (anchor, ta) in enumerate(anchored):
            key = f"{qid}\x00{a}"
            sub_run[key] = [(pid, s) for pid, s in hits[:depth] if best[retriever.pid_index_[pid]] == a]
            sub_traces[key], owner[key] = ta, (qid, anchor)
    return sub_run, sub_traces, owner


def attribute(
    retriever, run: Run, traces: Mapping[str, QueryTrace], *, k: int, depth: int, sources: bool = True
) -> SearchResult:
    """The :class:`SearchResult` of a run from the traces its search left (``traced_search``); an
    anchored hit's provenance starts with ``Expansion(anchor key, anchor key, "anchor", 1.0)``."""
    sub_run, sub_traces, owner = _by_anchor(retriever, run, traces, depth)
    hybrid = _is_hybrid(retriever) and sources and depth > 0
    shares = source_shares(retriever, sub_run, sub_traces, depth) if hybrid else {}
    prov: dict = {qid: {} for qid in run}
    found: dict = {}
    for key, hits in sub_run.items():
        qid, anchor = owner[key]
        t = sub_traces[key]
        if key in shares:
            found.setdefault(qid, {}).update(shares[key])
        for pid, _ in hits[:depth]:
            records = [Expansion(anchor.key, anchor.key, "anchor", 1.0)] if anchor is not None else []
            if key in shares:
                records += _source_records(retriever, t, shares[key].get(pid, {}), pid)
            prov[qid][pid] = records + provenance(pid, t.expansions, t.graph)
    prov = {
        qid: {pid: prov[qid][pid] for pid, _ in hits[:depth]} for qid, hits in run.items()
    }  # in rank order
    sources = {
        qid: {pid: got[pid] for pid, _ in run[qid][:depth] if pid in got} for qid, got in found.items()
    }
    diagnostics = {
        qid: _diagnostics.query_diagnostics(traces[qid], hits, _is_hybrid(retriever))
        for qid, hits in run.items()
    }
    return SearchResult(run, prov, sources, {qid: t.expansions for qid, t in traces.items()}, diagnostics, k)


def source_shares(retriever, run: Run, traces: Mapping[str, QueryTrace], depth: int) -> dict:
    r"""Each explained hit's score split by seed source: qid → pid → source → share (summing to 1).

    PPR is linear in :math:`s` up to normalisation, so :math:`p = \sum_c \omega_c \mathrm{PPR}(s_c)`
    exactly, :math:`\omega_c \propto \frac{w_c}{W}` corrected for the mass each source sends to
    dangling nodes (:func:`aethel_lite.core.provenance.part_weights`; the plain share when it sends
    none): solving one column per source gives each source's part :math:`p_c` of a passage's
    (and of its document node's) PageRank. A hit's PageRank term is split in proportion to the
    :math:`p_c`, its document term in proportion to the document node's :math:`\pi_c`, and
    the ``"lexical"`` and ``"dense"`` ranking terms go to those sources (``"heading"``, a
    dense score, to ``"dense"``). Without ``rank_weights`` the score is the PageRank, split
    the same way.
    """
    r = ranker_of(retriever)
    todo = [qid for qid in run if traces[qid].parts is not None]
    weights = r.term_weights() or {"ppr": 1.0}

    def solve(op, cols):
        return op.run(np.stack(cols, axis=1), alpha=r.alpha, tol=r.tol, max_iter=r.max_iter).scores

    solved: dict[tuple[str, str], np.ndarray] = {}
    owners = [(qid, c) for qid in todo if traces[qid].corpus_idx is None for c in traces[qid].parts["mix"]]

    def weigh(qid, names, columns, dangling):
        # the operator normalises each seed column to sum 1: weigh the solutions exactly (linearity)
        mix = traces[qid].parts["mix"]
        w = part_weights(np.stack(columns, axis=1), [mix[c] for c in names], dangling, r.alpha)
        for c, col, wc in zip(names, columns, w):
            solved[(qid, c)] = wc * col

    raw: dict[str, dict[str, np.ndarray]] = {}
    for start in range(0, len(owners), BLOCK):
        block = owners[start : start + BLOCK]
        P = solve(r.operator_, [traces[qid].parts["components"][c] for qid, c in block])
        for j, (qid, c) in enumerate(block):
            raw.setdefault(qid, {})[c] = P[:, j]
    for qid, cols in raw.items():
        weigh(qid, list(cols), list(cols.values()), r.operator_.dangling)
    out = {}
    for qid in todo:
        t = traces[qid]
        parts, cand, extra, graph = t.parts, t.corpus_idx, t.extra, t.graph
        if cand is not None:
            names = list(parts["mix"])
            op = PPROperator(graph.adjacency())
            P = solve(op, [parts["components"][c] for c in names])
            weigh(qid, names, [P[:, j] for j in range(len(names))], op.dangling)
        idx = np.arange(len(r.pids_)) if cand is None else cand
        terms = (
            r.rank_terms(
                "",
                extra["ppr"],
                idx,
                lexical=extra.get("lexical"),
                dense=extra.get("dense"),
                doc_ppr=extra.get("doc_ppr"),
                heading=extra.get("heading"),
            )
            if r.rank_weights is not None
            else {}
        )
        docs = r.doc_nodes(graph, cand)
        shares_of = {}
        for pid, _ in run[qid][:depth]:
            i = graph.pid_index[pid]
            share = dict.fromkeys(SOURCES, 0.0)
            for term, w in weights.items():
                size = w * (float(terms[term][i]) if terms else 1.0)
                if size <= 0:
                    continue
                if term in ("ppr", "document"):
                    node = i if term == "ppr" else int(docs[i])
                    parts_at = {c: max(float(solved[(qid, c)][node]), 0.0) for c in parts["mix"]}
                    total = sum(parts_at.values())
                    for c, v in parts_at.items():
                        share[c] += size * v / total if total > 0 else 0.0
                else:
                    share[TERM_SOURCE.get(term, term)] += size
            total = sum(share.values())
            shares_of[pid] = {
                c: v / total
                for c, v in sorted(share.items(), key=lambda kv: (-kv[1], SOURCES.index(kv[0])))
                if v > 0 and total > 0
            }
        out[qid] = shares_of
    return out


def _source_records(r, trace: QueryTrace, shares: Mapping[str, float], pid: str) -> list:
    """Provenance records of a hybrid hit: one per seed source, largest share first."""
    r = ranker_of(r)
    exps, graph = trace.expansions, trace.graph
    out = []
    for c, share in shares.items():
        if c == "entity":
            mentioned = provenance(pid, exps, graph)
            best = mentioned[0] if mentioned else (exps[0] if exps else None)
            seed, node = (best.seed, best.entity) if best else ("", "")
        elif c == "metadata":
            named = trace.parts["named"]
            seed = max(named, key=lambda k: (named[k], k)) if named else ""
            node = seed
            if r.doc_meta_ is not None:
                d = r.doc_meta_.get(r.doc_ids_[r.pid_index_[pid]])
                if d is not None:
                    mine = [k for k in d.keys() if k in named]
                    if mine:
                        seed = max(mine, key=lambda k: (named[k], k))
                    node = PREFIXES["doc"] + _slug(d.doc_id) if r.document_nodes else seed
        else:
            seed, node = ("bm25" if c == "lexical" else "dense"), pid
        out.append(Expansion(seed, node, c, round(float(share), 6)))
    return out


def seed_pieces(
    retriever,
    text: str,
    graph=None,
    corpus_idx: np.ndarray | None = None,
    *,
    scores: Mapping[str, np.ndarray] | None = None,
) -> tuple[np.ndarray | None, list]:
    """The question's teleport vector and, for every seed node, what put mass there.

    Returns
    -------
    seeds : ndarray, shape (graph.n_nodes,), or None
        The teleport :math:`s` that ``search`` uses (``teleport``);
        ``None`` without seeds and with ``fallback="none"``.
    pieces : list of (node, mass, seed, entity, via)
        One per (seed node, label), the masses at a node summing to its ``seeds`` value: an entity
        seed's BCT expansion, ``(key, key, "metadata")``, ``("bm25" | "dense", pid, source)`` for
        passage seeds, ``("bm25", pid, "bm25-teleport")`` for the BM25 fallback.
    """
    r = ranker_of(retriever)
    r._check_fitted()
    graph = r.graph_ if graph is None else graph
    if scores is None:
        scores = {k: v[0] for k, v in r.question_scores([text]).items()}
    tel = r.teleport(text, graph, corpus_idx, scores)
    exps, seeds, fallback, parts = tel.expansions, tel.seeds, tel.fallback, tel.parts
    if seeds is None:
        return None, []
    n_p = graph.n_passages
    if fallback:
        return seeds, [
            (i, float(seeds[i]), "bm25", graph.pids[i], "bm25-teleport")
            for i in np.flatnonzero(seeds).tolist()
        ]
    mix, comps = parts["mix"], parts["components"]
    pieces: list = []
    for c, share in mix.items():
        vec = comps[c]
        if c == "entity":
            seen = set()
            for e in exps:
                node = n_p + graph.entity_index[e.entity]
                if node not in seen and vec[node] > 0:
                    seen.add(node)
                    pieces.append((node, share * float(vec[node]), e.seed, e.entity, e.via))
        else:
            for node in np.flatnonzero(vec).tolist():
                if c == "metadata":
                    key = graph.entities[node - n_p]
                    pieces.append((node, share * float(vec[node]), key, key, "metadata"))
                else:
                    pieces.append(
                        (
                            node,
                            share * float(vec[node]),
                            "bm25" if c == "lexical" else "dense",
                            graph.pids[node],
                            c,
                        )
                    )
    return seeds, pieces


def question_graph(retriever, text: str, pool: Sequence[str] | None):
    """The graph a question is ranked in (the closed pool's, or the fitted one) and the pool's corpus indices."""
    retriever = ranker_of(retriever)
    if pool is None:
        return retriever.graph_, None
    corpus_idx = retriever.resolve_pool(Query(qid="q", text=text, gold=frozenset()), {"q": pool})
    return retriever.pool_graph(corpus_idx), corpus_idx


def explain(retriever, text: str, pids, pool: Sequence[str] | None = None) -> dict:
    r"""Exact per-seed shares of each passage's PageRank for one question.

    The question's teleport :math:`s` is split by seed node and PageRank solved once per seed node; by linearity
    the contributions sum to the passage's PageRank (:func:`aethel_lite.core.provenance.ppr_parts`). A node seeded
    by two sources splits its contribution in proportion to their masses.

    Parameters
    ----------
    retriever : GraphRetriever
        Fitted.
    text : str
        The question.
    pids : iterable of str
        Passages to explain (e.g. a ranking's hits); each must be in the graph searched.
    pool : sequence of str, optional
        The closed pool the question was ranked in, as given to ``search``; default: the whole corpus.

    Returns
    -------
    dict
        pid → list of :class:`~aethel_lite.core.provenance.SeedShare`, largest share first (ties:
        seed, entity), seeds contributing nothing left out, summing to its PageRank :math:`p_i`
        (within ``tol``) or, when :func:`explains_documents`, to its document node's :math:`\pi_{D(i)}`.

    References
    ----------
    Jeh, G. & Widom, J. (2003). Scaling personalized web search. WWW '03.
    """
    r = ranker_of(retriever)
    r._check_fitted()
    pids = list(pids)
    graph, corpus_idx = question_graph(r, text, pool)
    documents = explains_documents(r)
    nodes = [
        graph.passage_node(pid) for pid in pids
    ]  # a pid outside the graph searched is an error either way
    rows = [r.doc_node(graph, r.pid_index_[pid]) for pid in pids] if documents else nodes
    seeds, pieces = seed_pieces(r, text, graph, corpus_idx)
    out: dict = {pid: [] for pid in pids}
    if seeds is None or not pieces or not pids:
        return out
    nodes = sorted({p[0] for p in pieces})
    col = {node: j for j, node in enumerate(nodes)}
    parts = np.zeros((graph.n_nodes, len(nodes)))
    for node, mass, *_ in pieces:
        parts[node, col[node]] += mass
    op = r.operator_ if graph is r.graph_ else PPROperator(graph.adjacency())
    C = ppr_parts(
        op, parts, alpha=r.alpha, tol=r.tol, max_iter=r.max_iter, rows=np.array(rows, dtype=np.int64)
    )
    at_node = parts.sum(axis=0)
    for i, pid in enumerate(pids):
        shares = []
        for node, mass, seed, entity, via in pieces:
            v = float(C[i, col[node]]) * mass / at_node[col[node]]
            if v > 0:
                shares.append(SeedShare(str(seed), str(entity), via, v))
        out[pid] = sorted(shares, key=lambda s: (-s.share, s.seed, s.entity, s.via))
    return out
