r"""The hybrid's extensions of :class:`~aethel_lite.retrievers.GraphRetriever` (``aethel-hybrid``).

Document and metadata nodes joined to the entity graph, passage seeds from BM25 and dense
scores, metadata seeds (companies; with period linking, fiscal periods and filing types), the
mixture of seed sources and the fused ranking, as functions of the (fitted) retriever whose settings decide them.

A question's teleport mixes the sources present,

.. math:: s = \sum_c \frac{w_c}{\sum_{c'} w_{c'}}\, s_c , \qquad c \in \{\text{entity}, \text{metadata}, \text{lexical}, \text{dense}\},

(:func:`seed_components`, :func:`mixture`), and with ``rank_weights`` a passage scores a
weighted sum of min–max normalised terms (:func:`rank_terms`;
:meth:`GraphRetriever.ranking_scores <aethel_lite.retrievers.GraphRetriever.ranking_scores>`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core.bct import seed_vector
from ..errors import ParameterError
from .base import topk
from .dense import DenseRetriever
from .docmeta import (
    PREFIXES,
    CompanyIndex,
    _slug,
    add_document_nodes,
    document_metadata,
    match_companies,
    period_keys,
    type_keys,
)

PASSAGE_SEEDS = ("lexical", "dense")
#: Seed components of the personalization vector, in the order they are reported.
SOURCES = ("entity", "metadata", "lexical", "dense")
DEFAULT_SEED_WEIGHTS = {"entity": 1.0, "metadata": 1.0, "lexical": 1.0, "dense": 1.0}
#: Terms of the hybrid ranking score (see :meth:`GraphRetriever.ranking_scores`).
RANK_TERMS = ("ppr", "document", "lexical", "dense", "heading")
#: the seed source a ranking term's share of a hit is credited to (provenance); the rest are their own
TERM_SOURCE = {"heading": "dense"}
#: open-corpus questions (and their seed sources, in attribution) are solved as batches of this many PPR columns
_BLOCK = 64


def seed_weights(r) -> dict[str, float]:
    """Each source's weight :math:`w_c` (``seed_weights`` over :data:`DEFAULT_SEED_WEIGHTS`)."""
    w = {**DEFAULT_SEED_WEIGHTS, **(r.seed_weights or {})}
    return {k: float(w[k]) for k in SOURCES}


def rank_weights(r) -> dict[str, float] | None:
    """The ranking terms' weights normalised to sum 1 (zero ones dropped), or None (PPR order)."""
    if r.rank_weights is None:
        return None
    live = {t: float(r.rank_weights.get(t, 0.0)) for t in RANK_TERMS}
    total = sum(live.values())
    return {t: v / total for t, v in live.items() if v > 0}


def needs(r, source: str) -> bool:
    """Whether searching needs corpus-wide ``"lexical"``, ``"dense"`` or ``"heading"`` scores of each question."""
    return source in r.passage_seeds or source in (rank_weights(r) or {})


def check(r) -> None:
    """Raise :class:`ParameterError` for an invalid hybrid setting of ``r``."""
    if isinstance(r.passage_seeds, str) or any(x not in PASSAGE_SEEDS for x in r.passage_seeds):
        raise ParameterError(
            f"passage_seeds must be a sequence of {', '.join(PASSAGE_SEEDS)}; got {r.passage_seeds!r}"
        )
    unknown = [k for k in (r.seed_weights or {}) if k not in SOURCES]
    if unknown:
        raise ParameterError(f"seed_weights: unknown source {unknown[0]!r}; choose from {', '.join(SOURCES)}")
    if any(
        not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0) for v in seed_weights(r).values()
    ):
        raise ParameterError(f"seed_weights must be finite and >= 0; got {r.seed_weights!r}")
    if not (isinstance(r.period_decay, (int, float)) and 0 <= r.period_decay <= 1):
        raise ParameterError(f"period_decay must be in [0, 1]; got {r.period_decay!r}")
    if isinstance(r.seed_depth, bool) or not isinstance(r.seed_depth, int) or r.seed_depth < 1:
        raise ParameterError(f"seed_depth must be a positive integer; got {r.seed_depth!r}")
    if r.rank_weights is not None:
        bad = [t for t in r.rank_weights if t not in RANK_TERMS]
        if bad:
            raise ParameterError(
                f"rank_weights: unknown term {bad[0]!r}; choose from {', '.join(RANK_TERMS)}"
            )
        vals = list(r.rank_weights.values())
        if (
            any(not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0) for v in vals)
            or not sum(vals) > 0
        ):
            raise ParameterError(f"rank_weights must be finite, >= 0 and not all 0; got {r.rank_weights!r}")
        if r.rank_weights.get("document", 0) > 0 and not r.document_nodes:
            raise ParameterError("rank_weights: a 'document' term needs document_nodes=True")


def structure(r, base_graph, passages: Sequence, metas: Mapping[str, Any] | None = None) -> tuple:
    """The entity graph plus the document / metadata nodes ``r``'s settings ask for.

    Returns
    -------
    graph, doc_meta, companies : EntityGraph, dict or None, CompanyIndex or None
        The graph; ``metas`` (a stored index's) or the passages' document metadata (``None`` without
        document and metadata nodes); the companies a question can name (``metadata=True``).
    """
    if not (r.document_nodes or r.metadata):
        return base_graph, None, None
    doc_meta = document_metadata(passages) if metas is None else dict(metas)
    graph = add_document_nodes(
        base_graph, passages, doc_meta, documents=bool(r.document_nodes), metadata=bool(r.metadata)
    )
    companies = CompanyIndex(c for d in doc_meta.values() for c in d.companies) if r.metadata else None
    return graph, doc_meta, companies


def pool_graph(r, corpus_idx: np.ndarray):
    """The graph of a closed pool (:meth:`GraphRetriever.pool_graph`)."""
    pids = [r.pids_[i] for i in corpus_idx]
    if r.doc_meta_ is None:
        return r.graph_.subgraph(pids)
    return add_document_nodes(
        r._base_graph.subgraph(pids),
        [r._passages[i] for i in corpus_idx],
        r.doc_meta_,
        documents=bool(r.document_nodes),
        metadata=bool(r.metadata),
    )


def doc_node(r, graph, i: int) -> int:
    """Node index (in ``graph``) of the document node of fitted passage ``i``."""
    return graph.n_passages + graph.entity_index[PREFIXES["doc"] + _slug(r.doc_ids_[i])]


def doc_nodes(r, graph, corpus_idx: np.ndarray | None) -> np.ndarray | None:
    """Node index (in ``graph``) of each candidate's document node, or None without document nodes
    (the fitted graph's whole corpus: from ``r._all_doc_nodes``, computed when the retriever is assembled)."""
    if not r.document_nodes:
        return None
    kept = getattr(r, "_all_doc_nodes", None)
    if corpus_idx is None and kept is not None and kept[0] is graph:
        return kept[1]
    idx = np.arange(len(r.pids_)) if corpus_idx is None else corpus_idx
    nodes = np.array([doc_node(r, graph, i) for i in idx], dtype=np.int64)
    if corpus_idx is None:
        nodes.setflags(write=False)
    return nodes


def fit_dense(r) -> None:
    """Fit the dense models ``r``'s settings need (from the embedding cache) and are missing."""
    if needs(r, "dense") and (r.dense_ is None or r.dense_.pooling != r.dense_pooling):
        r.dense_ = DenseRetriever(pooling=r.dense_pooling, cache=r.cache, progress=r.progress).fit(
            r._passages
        )
    if needs(r, "heading") and getattr(r, "heading_", None) is None:
        r.heading_ = DenseRetriever(pooling="heading", cache=r.cache, progress=r.progress).fit(r._passages)
    r.memo = r.memo  # the new models' memo


def query_scores(r, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """Corpus-wide ``"lexical"``, ``"dense"``, ``"heading"`` scores the seeds and ranking need, a row per question."""
    r._check_fitted()
    texts = list(texts)
    out: dict[str, np.ndarray] = {}
    if needs(r, "lexical"):
        out["lexical"] = (
            np.stack([r.bm25_.get_scores(t) for t in texts]) if texts else np.zeros((0, len(r.pids_)))
        )
    encoders = {
        name: model
        for name, model in (("dense", getattr(r, "dense_", None)), ("heading", getattr(r, "heading_", None)))
        if model is not None and needs(r, name)
    }
    if encoders and texts:
        vectors = next(iter(encoders.values())).query_vectors(
            texts
        )  # one MiniLM pass: both share the encoder
    for name, model in encoders.items():
        out[name] = model.score_vectors(vectors if texts else np.zeros((0, 0), dtype=np.float32))
    return out


def passage_vector(r, scores: np.ndarray, graph) -> np.ndarray | None:
    r"""Passage seeds from one source's scores of ``graph``'s passages, or None.

    The top :math:`K` = ``seed_depth`` passages, weighted :math:`s_i \propto x_i - x_{(K+1)}`.
    """
    n = scores.shape[0]
    depth = min(int(r.seed_depth), n)
    if depth == 0:
        return None
    order, _ = topk(scores, depth + 1)  # best first, ties by corpus order
    top = order[:depth]
    floor = scores[order[depth]] if depth < n else min(float(scores[top].min()), 0.0)
    w = np.maximum(scores[top] - floor, 0.0)
    if not w.any() or not np.isfinite(w).all():
        return None
    out = np.zeros(graph.n_nodes)
    out[top] = w / w.sum()
    return out


def metadata_fields(r, text: str) -> list[dict[str, float]]:
    """The metadata nodes a question names, one dict (node key → weight) per field: companies and, with
    period linking, periods (the latest year named weight 1, each earlier one ``period_decay`` times
    the next) and filing types; ``[]`` without ``metadata``."""
    if not r.metadata:
        return []
    companies = match_companies(text, r._companies) if r._companies is not None else {}
    fields = [{PREFIXES["company"] + _slug(c): m for c, m in companies.items()}]
    if r.period_linking:
        keys = period_keys(text)
        years = sorted({int(k[:4]) for k in keys}, reverse=True)  # the latest year named first
        decay = float(r.period_decay)
        fields.append({PREFIXES["period"] + k: decay ** years.index(int(k[:4])) for k in keys})
        fields.append({PREFIXES["type"] + k: 1.0 for k in type_keys(text)})
    return fields


def fields_vector(fields, graph) -> tuple[np.ndarray | None, dict[str, float]]:
    """Seeds on ``graph``'s metadata nodes: each field present carries equal mass, split by weight; with each node's share."""
    out = np.zeros(graph.n_nodes)
    named: dict[str, float] = {}
    n_p = graph.n_passages
    for f in fields:
        present = {k: w for k, w in f.items() if k in graph.entity_index and w > 0}
        total = sum(present.values())
        for k, w in present.items():
            out[n_p + graph.entity_index[k]] += w / total
            named[k] = w / total
    if not out.any():
        return None, {}
    return out / out.sum(), named


def seed_components(
    r,
    text: str,
    graph=None,
    corpus_idx: np.ndarray | None = None,
    *,
    scores: Mapping[str, np.ndarray] | None = None,
    mentions=None,
) -> tuple[list, dict[str, np.ndarray], dict]:
    """The question's seed vectors, one per source (:meth:`GraphRetriever.seed_components`)."""
    r._check_fitted()
    graph = r.graph_ if graph is None else graph
    idx = np.arange(len(r.pids_)) if corpus_idx is None else corpus_idx
    exps = r.expansions(text, graph, mentions=mentions)
    comps: dict[str, np.ndarray] = {}
    ent = seed_vector(exps, graph)
    if ent.any():
        comps["entity"] = ent
    meta, named = fields_vector(metadata_fields(r, text), graph)
    if meta is not None:
        comps["metadata"] = meta
    if r.passage_seeds:
        if scores is None or any(s not in scores for s in r.passage_seeds):
            scores = {k: v[0] for k, v in query_scores(r, [text]).items()}
        for source in PASSAGE_SEEDS:
            if source in r.passage_seeds:
                vec = passage_vector(r, np.asarray(scores[source], dtype=np.float64)[idx], graph)
                if vec is not None:
                    comps[source] = vec
    return exps, comps, named


def mixture(r, comps: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Each present source's share :math:`w_c / \\sum_{c'} w_{c'}` of the teleport (zero weights dropped)."""
    w = seed_weights(r)
    live = {c: w[c] for c in comps if w[c] > 0}
    total = sum(live.values())
    return {c: v / total for c, v in live.items()} if total > 0 else {}


def rank_terms(
    r, text, ppr, corpus_idx, *, lexical=None, dense=None, doc_ppr=None, heading=None
) -> dict[str, np.ndarray]:
    """The min–max normalised terms :math:`\\hat x` of :meth:`GraphRetriever.ranking_scores` over the candidates."""

    def unit(x: np.ndarray) -> np.ndarray:
        lo, hi = (float(x.min()), float(x.max())) if x.size else (0.0, 0.0)
        return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x, dtype=np.float64)

    weights = rank_weights(r) or {}
    out = {}
    if "ppr" in weights:
        out["ppr"] = unit(np.asarray(ppr, dtype=np.float64))
    if "document" in weights:
        if doc_ppr is None:
            raise ParameterError("ranking_scores: a 'document' term needs doc_ppr")
        out["document"] = unit(np.asarray(doc_ppr, dtype=np.float64))
    given = {
        "lexical": (lexical, lambda: r.bm25_.get_scores(text)),
        "dense": (dense, lambda: r.dense_.score_texts([text])[0]),
        "heading": (heading, lambda: query_scores(r, [text])["heading"][0]),
    }
    for term, (scores, compute) in given.items():
        if term in weights:
            out[term] = unit(
                np.asarray(compute() if scores is None else scores, dtype=np.float64)[corpus_idx]
            )
    return out
