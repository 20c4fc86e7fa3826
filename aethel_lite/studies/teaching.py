"""Step-by-step views of the graph retriever for the teaching chapter (``notebooks/01_graph_construction``):
plain JSON-able data, which the chapter writes to ``results/`` and draws its tables and figures from.

References
----------
Page, L., Brin, S., Motwani, R. & Winograd, T. (1999). The PageRank citation ranking.
Haveliwala, T. H. (2002). Topic-sensitive PageRank. WWW '02.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core.bct import MODES, provenance
from ..core.entities import extract_entities
from ..core.ppr import PPROperator, _check_alpha, personalized_pagerank
from ..data.schema import passage_text
from ..errors import ParameterError
from ..explain.attribution import seed_pieces
from ..explain.reach import hit_chains, same_graph

__all__ = [
    "check_parameters",
    "entity_comparison",
    "power_trace",
    "drawing_data",
    "draw_graph",
    "trace_figure",
    "rankings_by_mode",
    "alpha_sweep",
    "pick_alias_question",
    "pool_of",
    "pool_pagerank",
    "seed_entities",
    "seed_rows",
    "traced_passages",
    "walk_record",
    "walkthrough",
]


def check_parameters(*, alpha: Any, extractor: Any, bct: Any) -> None:
    """Stop a chapter at its parameters cell when one is invalid, naming it (:class:`ParameterError`)."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ParameterError(f"alpha: the teleport probability must be a number in (0, 1), got {alpha!r}")
    if extractor not in ("regex", "ner", "ner3"):
        raise ParameterError(f"extractor: choose from 'regex', 'ner', 'ner3', got {extractor!r}")
    if bct not in MODES:
        raise ParameterError(f"bct: choose from {', '.join(repr(m) for m in MODES)}, got {bct!r}")


def entity_comparison(retrievers: Mapping[str, Any], passages: Sequence) -> dict:
    """What each extractor finds in ``passages`` and what the graph keeps of it.

    Parameters
    ----------
    retrievers : mapping
        Extractor label → a fitted :class:`~aethel_lite.retrievers.GraphRetriever`.
    passages : sequence of Passage
        The paragraphs to compare (e.g. one question's pool); each must be in every graph.

    Returns
    -------
    dict
        label → ``{"found", "kept", "dropped": {pid: [keys]}, "links": [[shorter, longer], ...]}``: the
        normalised mentions, the graph entities among them, the others (stop-entities), and the
        entity–entity links among the kept keys. Keys sorted.
    """
    out = {}
    for label, r in retrievers.items():
        mentions = extract_entities(
            [passage_text(p) for p in passages], r.extractor_, cache=r.cache, progress=False
        )
        graph = r.graph_
        found = {p.pid: sorted({m.key for m in ms if m.key}) for p, ms in zip(passages, mentions)}
        kept = {pid: [k for k in keys if k in graph.entity_index] for pid, keys in found.items()}
        dropped = {pid: [k for k in keys if k not in graph.entity_index] for pid, keys in found.items()}
        here = [] if graph.alias is None else sorted({k for ks in kept.values() for k in ks})
        links = {
            tuple(sorted((key, graph.entities[j]), key=lambda x: (len(x), x)))
            for key in here
            for j in graph.alias.getrow(graph.entity_index[key]).indices
            if graph.entities[j] in here
        }
        out[label] = {
            "found": found,
            "kept": kept,
            "dropped": dropped,
            "links": [list(x) for x in sorted(links)],
        }
    return out


def power_trace(adjacency: Any, seeds: Any, alpha: float, n_iter: int = 30) -> np.ndarray:
    r"""Every iterate of PageRank's power iteration, starting from the seeds.

    .. math:: p^{(0)} = s, \qquad p^{(t+1)} = \alpha s + (1-\alpha)\big(W p^{(t)} + (d^\top p^{(t)})\, s\big)

    (:mod:`aethel_lite.core.ppr`: :math:`W` column-stochastic, :math:`d` the dangling nodes).

    Parameters
    ----------
    adjacency : scipy.sparse matrix or array_like, shape (n, n)
    seeds : array_like, shape (n,)
        Non-negative, not all zero (normalised to sum 1).
    alpha : float
        Teleport probability in (0, 1).
    n_iter : int

    Returns
    -------
    numpy.ndarray, shape (n_iter + 1, n)
        Row :math:`t` is :math:`p^{(t)}`; every row sums to 1.
    """
    alpha = _check_alpha(alpha)
    if isinstance(n_iter, bool) or not isinstance(n_iter, int) or n_iter < 0:
        raise ParameterError(f"n_iter must be an integer >= 0, got {n_iter!r}")
    op = PPROperator(adjacency)
    s = np.asarray(seeds, dtype=np.float64)
    if s.shape != (op.n,) or not np.isfinite(s).all() or (s < 0).any() or not s.any():
        raise ParameterError(f"seeds: expected {op.n} finite values >= 0, not all zero")
    s = s / s.sum()
    out = np.empty((n_iter + 1, op.n))
    out[0] = p = s.copy()
    for t in range(1, n_iter + 1):
        p = alpha * s + (1 - alpha) * (op.W @ p + p[op.dangling].sum() * s)
        out[t] = p
    return out


def drawing_data(
    graph,
    ppr: Any,
    *,
    seeds: Sequence[str] = (),
    gold: Sequence[str] = (),
    titles: Mapping[str, str] | None = None,
    max_nodes: int = 60,
) -> dict:
    """The nodes and edges of ``graph`` to draw, at most ``max_nodes``, and what is left out.

    Every passage is drawn; the remaining places go to the seed entities, then to the other entities
    PageRank reaches, by decreasing PageRank (ties: name).

    Parameters
    ----------
    graph : EntityGraph
    ppr : array_like, shape (graph.n_nodes,)
    seeds, gold : sequence of str
        Seed entity keys (highlighted) and gold pids (marked).
    titles : mapping, optional
        pid → label (default: the pid).
    max_nodes : int
        At least the number of passages.

    Returns
    -------
    dict
        ``nodes`` (passages, then entities); ``edges`` as ``[i, j, "mention" | "link"]`` (indices into
        ``nodes``); ``left_out``: the numbers of entities (and unreached ones) and edges not drawn, and
        the PageRank mass of the entities not drawn.
    """
    p = np.asarray(ppr, dtype=np.float64)
    if p.shape != (graph.n_nodes,):
        raise ParameterError(f"ppr: expected shape ({graph.n_nodes},), got {p.shape}")
    if int(max_nodes) < graph.n_passages:
        raise ParameterError(f"max_nodes={max_nodes} is smaller than the {graph.n_passages} passages")
    n_p = graph.n_passages
    seedset = {s for s in seeds if s in graph.entity_index}
    order = sorted(
        (j for j in range(graph.n_entities) if graph.entities[j] in seedset or p[n_p + j] > 0),
        key=lambda j: (graph.entities[j] not in seedset, -p[n_p + j], graph.entities[j]),
    )
    ents = sorted(order[: int(max_nodes) - n_p])
    gold = set(gold)
    nodes = [
        {
            "id": pid,
            "kind": "passage",
            "label": (titles or {}).get(pid, pid),
            "ppr": float(p[i]),
            "seed": False,
            "gold": pid in gold,
        }
        for i, pid in enumerate(graph.pids)
    ]
    where = {j: len(nodes) + r for r, j in enumerate(ents)}
    nodes += [
        {
            "id": graph.entities[j],
            "kind": "entity",
            "label": graph.entities[j],
            "ppr": float(p[n_p + j]),
            "seed": graph.entities[j] in seedset,
            "gold": False,
        }
        for j in ents
    ]
    inc = graph.incidence.tocoo()
    edges = [
        [i, where[j], "mention"] for i, j in sorted(zip(inc.row.tolist(), inc.col.tolist())) if j in where
    ]
    al = None if graph.alias is None else graph.alias.tocoo()
    links = [] if al is None else [(a, b) for a, b in sorted(zip(al.row.tolist(), al.col.tolist())) if a < b]
    edges += [[where[a], where[b], "link"] for a, b in links if a in where and b in where]
    hidden = [j for j in range(graph.n_entities) if j not in where]
    return {
        "nodes": nodes,
        "edges": edges,
        "left_out": {
            "entities": len(hidden),
            "unreached_entities": int(sum(p[n_p + j] <= 0 for j in hidden)),
            "edges": len(inc.row) + len(links) - len(edges),
            "ppr_mass": float(p[[n_p + j for j in hidden]].sum()) if hidden else 0.0,
        },
    }


def draw_graph(data: Mapping, *, ax=None, title: str | None = None, seed: int = 0):
    """Draw :func:`drawing_data` output: passages as squares, entities as circles (seeds red), area
    by the square root of PageRank, gold passages with a thick black border, links dashed; passages
    PageRank does not reach sit in a row below the spring layout (fixed ``seed``).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt
    import networkx as nx

    nodes, edges = data["nodes"], data["edges"]
    g = nx.Graph()
    g.add_nodes_from(range(len(nodes)))
    g.add_edges_from((i, j) for i, j, _ in edges)
    live = [i for i, n in enumerate(nodes) if n["ppr"] > 0 or n["seed"]]
    dead = [i for i, n in enumerate(nodes) if i not in set(live)]
    sub = g.subgraph(live)
    comps = sorted((sorted(c) for c in nx.connected_components(sub)), key=lambda c: (-len(c), c[0]))
    # the largest component gets the left 60% of the panel, the others share the right 40%
    boxes = [(-1.0, -1.0, 0.25, 1.0)] if comps else []
    rest = comps[1:]
    n_col = 1 if len(rest) <= 4 else 2
    n_row = -(-len(rest) // n_col)
    for r in range(len(rest)):
        col, row = r % n_col, r // n_col
        x0 = 0.4 + col * 0.6 / n_col
        y1 = 1.0 - row * 2.0 / n_row
        boxes.append((x0, y1 - 2.0 / n_row + 0.15, x0 + 0.6 / n_col - 0.1, y1))
    pos = {}
    for comp, (x0, y0, x1, y1) in zip(comps, boxes):
        if len(comp) == 1:
            pos[comp[0]] = np.array([(x0 + x1) / 2, (y0 + y1) / 2])
            continue
        lay = nx.spring_layout(sub.subgraph(comp), seed=seed, k=1.5 / len(comp) ** 0.5, iterations=300)
        xy = np.array([lay[i] for i in comp])
        lo, hi = xy.min(axis=0), xy.max(axis=0)
        unit = (xy - lo) / np.where(hi > lo, hi - lo, 1.0)
        for i, (u, v) in zip(comp, unit):
            pos[i] = np.array([x0 + u * (x1 - x0), y0 + v * (y1 - y0)])
    for r, i in enumerate(dead):
        pos[i] = np.array([-1 + 2 * (r + 0.5) / len(dead), -1.35 - 0.12 * (r % 2)])
    fig, ax = plt.subplots(figsize=(9, 8.5)) if ax is None else (ax.figure, ax)
    top = max((n["ppr"] for n in nodes), default=0.0) or 1.0
    for kind, style in (("mention", "-"), ("link", "--")):
        el = [(i, j) for i, j, k in edges if k == kind]
        nx.draw_networkx_edges(g, pos, edgelist=el, style=style, width=0.6, alpha=0.45, ax=ax)
    groups = [
        ([i for i, n in enumerate(nodes) if n["kind"] == "passage"], "s", "#4C72B0", "passage"),
        (
            [i for i, n in enumerate(nodes) if n["kind"] == "entity" and not n["seed"]],
            "o",
            "#DD8452",
            "entity",
        ),
        ([i for i, n in enumerate(nodes) if n["seed"]], "o", "#C44E52", "seed entity"),
    ]
    for idx, shape, colour, label in groups:
        if not idx:
            continue
        nx.draw_networkx_nodes(
            g,
            pos,
            nodelist=idx,
            node_shape=shape,
            node_color=colour,
            label=label,
            node_size=[30 + 900 * (nodes[i]["ppr"] / top) ** 0.5 for i in idx],
            alpha=0.9,
            ax=ax,
            edgecolors=["black" if nodes[i]["gold"] else "white" for i in idx],
            linewidths=[3.0 if nodes[i]["gold"] else 0.5 for i in idx],
        )
    labels = {i: (n["label"][:20] + "…" if len(n["label"]) > 21 else n["label"]) for i, n in enumerate(nodes)}
    nx.draw_networkx_labels(g, pos, labels=labels, font_size=6.5, ax=ax)
    ax.scatter([], [], marker="s", s=80, c="white", edgecolors="black", linewidths=3.0, label="gold passage")
    ax.legend(loc="upper left", fontsize=8, markerscale=0.6, frameon=True)
    if dead:
        ax.text(
            -1.0,
            -1.2,
            "passages PageRank does not reach (score 0; ranked by BM25 after the others):",
            fontsize=7,
            style="italic",
        )
    ax.set_axis_off()
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def trace_figure(
    trace: Mapping[str, Sequence[float]],
    gold: Sequence[str],
    *,
    labels: Mapping[str, str] | None = None,
    title: str | None = None,
):
    """Line plot of PageRank per iteration (log scale): gold passages solid, other passages dashed.

    Parameters
    ----------
    trace : mapping
        pid → its PageRank at iterations 0, 1, ... (:func:`power_trace` columns).
    gold : sequence of str
    labels : mapping, optional
        pid → legend label.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6))
    for pid, values in trace.items():
        is_gold = pid in set(gold)
        name = (labels or {}).get(pid, pid)
        vals = np.asarray(values, dtype=np.float64)
        shown = np.where(vals > 0, vals, np.nan)  # a passage without mass yet is not drawn (log scale)
        ax.plot(
            range(len(vals)),
            shown,
            "-" if is_gold else "--",
            linewidth=2.2 if is_gold else 1.2,
            marker=".",
            label=("gold: " if is_gold else "") + (name[:40] + "…" if len(name) > 41 else name),
        )
    ax.set_yscale("log")
    ax.set_xlabel("power iteration t")
    ax.set_ylabel("PageRank of the passage (log scale)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def rankings_by_mode(
    retriever, query, *, modes: Sequence[str] = ("none", "alias", "substring", "both"), k: int = 10
) -> dict:
    """The top ``k`` of ``query`` (its closed pool, or the open corpus) under each BCT mode.

    Returns
    -------
    dict
        mode → ``[[pid, score], ...]``, best first.
    """
    pool = None if query.pool is None else "query"
    return {
        m: [
            [pid, float(s)]
            for pid, s in same_graph(retriever, bct=m).search([query], k=k, pool=pool)[query.qid]
        ]
        for m in modes
    }


def alpha_sweep(retriever, query, alphas: Sequence[float], *, k: int = 10) -> dict:
    """The top ``k`` of ``query`` for each teleport probability in ``alphas`` (everything else fixed).

    Returns
    -------
    dict
        ``str(alpha)`` → ``{"ranking": [pid, ...], "gold_ranks": {gold pid: 1-based rank or None}}``
        (``None``: not in the top ``k``).
    """
    pool = None if query.pool is None else "query"
    out = {}
    for a in alphas:
        ranked = [
            pid for pid, _ in same_graph(retriever, alpha=float(a)).search([query], k=k, pool=pool)[query.qid]
        ]
        out[str(float(a))] = {
            "ranking": ranked,
            "gold_ranks": {g: (ranked.index(g) + 1 if g in ranked else None) for g in sorted(query.gold)},
        }
    return out


def pick_alias_question(retriever, dataset):
    """The first question of ``dataset`` that names its fund by an alias BCT must resolve, or ``None``.

    A ``single``-fact synthetic question whose fund mention (``meta["mention"]``) is in no gold
    passage, while a gold passage mentions an entity a seed reaches by BCT's ``"alias"`` rule.
    """
    texts = {p.pid: p.text for p in dataset.passages}
    for q in dataset.queries:
        mention = q.meta.get("mention")
        if q.meta.get("type") != "single" or not mention or any(mention in texts[g] for g in q.gold):
            continue
        graph = retriever.graph_ if q.pool is None else retriever.graph_.subgraph(q.pool)
        exps = [e for e in retriever.expansions(q.text, graph) if e.via == "alias"]
        if any(provenance(g, exps, graph) for g in sorted(q.gold) if g in graph.pid_index):
            return q
    return None


def pool_of(retriever, query) -> tuple[np.ndarray, Any]:
    """``(corpus indices, graph)`` of a question's closed pool: its passages (in pool order, repeats
    dropped) and the graph of those passages and their entities (``retriever.pool_graph``)."""
    if query.pool is None:
        raise ParameterError(f"question {query.qid!r} has no closed pool")
    idx = np.array([retriever.pid_index_[p] for p in dict.fromkeys(query.pool)], dtype=np.int64)
    return idx, retriever.pool_graph(idx)


def pool_pagerank(retriever, graph, seeds, n_iter: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """``(p, trace)``: the converged Personalized PageRank of ``graph`` from the teleport ``seeds``
    (:func:`~aethel_lite.core.ppr.personalized_pagerank` with the retriever's ``alpha`` and ``tol``) and
    its first ``n_iter`` power iterations (:func:`power_trace`); zeros when there are no seeds."""
    if seeds is None:
        return np.zeros(graph.n_nodes), np.zeros((n_iter + 1, graph.n_nodes))
    trace = power_trace(graph.adjacency(), seeds, retriever.alpha, n_iter=n_iter)
    ppr = personalized_pagerank(graph.adjacency(), seeds, alpha=retriever.alpha, tol=retriever.tol).scores
    return ppr, trace


def seed_entities(pieces: Sequence) -> list[str]:
    """The entity nodes among :func:`~aethel_lite.explain.attribution.seed_pieces`' seeds (the BM25
    fallback's passages left out)."""
    return [e for _, _, _, e, via in pieces if via != "bm25-teleport"]


def traced_passages(graph, trace: np.ndarray, ppr: np.ndarray, gold, n_distractors: int = 3) -> dict:
    """pid → PageRank per iteration (a column of :func:`power_trace`) of the gold passages and the
    ``n_distractors`` other passages with the most PageRank (ties: graph order)."""
    n_p = graph.n_passages
    others = sorted((i for i in range(n_p) if graph.pids[i] not in gold), key=lambda i: (-ppr[i], i))
    traced = [i for i in range(n_p) if graph.pids[i] in gold] + others[:n_distractors]
    return {graph.pids[i]: [float(v) for v in trace[:, i]] for i in traced}


def seed_rows(pieces: Sequence) -> list[dict]:
    """The seeds of :func:`~aethel_lite.explain.attribution.seed_pieces` as rows: the question key, the
    graph node it put mass on, the rule (``via``) and the mass."""
    return [{"seed": s, "entity": e, "via": v, "mass": float(m)} for _, m, s, e, v in pieces]


def walk_record(keys: Mapping, pieces: Sequence, graph, **steps) -> dict:
    """One question's walk as JSON: its entity ``keys``, the seeds (``pieces``), the pool graph's sizes and
    the other ``steps`` (``drawing``, ``trace``, ``alpha_sweep``, ``modes``, ``hits``) as given."""
    return {
        "keys": dict(keys),
        "fallback": bool(pieces) and pieces[0][4] == "bm25-teleport",
        "seeds": seed_rows(pieces),
        "graph": {
            "passages": graph.n_passages,
            "entities": graph.n_entities,
            "mentions": int(graph.incidence.nnz),
            "links": 0 if graph.alias is None else int(graph.alias.nnz // 2),
        },
        **steps,
    }


def walkthrough(
    retriever,
    query,
    *,
    titles: Mapping[str, str] | None = None,
    alphas: Sequence[float] = (),
    n_iter: int = 30,
    n_distractors: int = 3,
    max_nodes: int = 60,
    k: int = 10,
) -> dict:
    """Everything the graph-construction chapter shows for one question in its closed pool, as JSON: the
    steps :func:`pool_of`, :func:`~aethel_lite.explain.attribution.seed_pieces`, :func:`pool_pagerank`,
    :func:`drawing_data`, :func:`traced_passages`, :func:`alpha_sweep`, :func:`rankings_by_mode` and
    :func:`~aethel_lite.explain.reach.hit_chains` in turn (:func:`walk_record`).

    Parameters
    ----------
    retriever : GraphRetriever
        Fitted; its extractor, ``bct`` and ``alpha`` are the ones shown.
    query : Query
        With a closed pool.
    titles : mapping, optional
        pid → title, for labels.
    alphas : sequence of float
        Teleport probabilities for :func:`alpha_sweep`.
    n_iter, n_distractors, max_nodes, k : int
        Power iterations, non-gold passages traced, :func:`drawing_data` size, ranking depth.

    Returns
    -------
    dict
        ``keys`` (entity key → ``"mention"`` | ``"ngram"``); ``seeds``: ``[{"seed", "entity", "via",
        "mass"}]``; ``fallback``; ``graph`` (sizes); ``drawing``; ``trace``: pid → PageRank per
        iteration; ``alpha_sweep``; ``modes``; ``hits`` (:func:`aethel_lite.explain.reach.hit_chains`).
    """
    idx, graph = pool_of(retriever, query)
    seeds, pieces = seed_pieces(retriever, query.text, graph, idx)
    ppr, trace = pool_pagerank(retriever, graph, seeds, n_iter)
    gold = sorted(query.gold)
    drawing = drawing_data(
        graph,
        ppr,
        seeds=seed_entities(pieces),
        gold=gold,
        titles=titles,
        max_nodes=max(max_nodes, graph.n_passages),
    )
    return walk_record(
        retriever.query_key_sources(query.text),
        pieces,
        graph,
        drawing=drawing,
        trace=traced_passages(graph, trace, ppr, query.gold, n_distractors),
        alpha_sweep=alpha_sweep(retriever, query, alphas, k=k) if alphas else {},
        modes=rankings_by_mode(retriever, query, k=k),
        hits=hit_chains(retriever, query, k=k),
    )
