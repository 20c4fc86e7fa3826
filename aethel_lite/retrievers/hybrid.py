r"""``aethel-hybrid``: the paper's graph retriever, extended by composition (:class:`HybridRetriever`).

The hybrid holds a fitted :class:`~aethel_lite.retrievers.GraphRetriever` (the passage–entity graph, BM25, the
question's entity links and BCT), dense models (:class:`~aethel_lite.retrievers.DenseRetriever`) and the
document / metadata layer (:mod:`aethel_lite.data.docmeta`), and one frozen
:class:`~aethel_lite.retrievers.hybrid_settings.HybridSettings`. Its graph is the paper's plus a node per document
and per metadata value; a question's teleport mixes the seed sources present (entity, metadata, BM25 and dense
passage seeds, :meth:`HybridRetriever.teleport`), and with ``rank_weights`` a passage scores a weighted sum of
min–max normalised terms (:meth:`HybridRetriever.rank_terms`, :mod:`aethel_lite.retrievers.hybrid_settings`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.bct import seed_vector, token_index
from ..core.ppr import PPROperator
from ..data.docmeta import (
    PREFIXES,
    CompanyIndex,
    _slug,
    add_document_nodes,
    document_metadata,
    is_meta_key,
    match_companies,
    period_keys,
    type_keys,
)
from ..errors import ParameterError
from . import anchors, graph_files
from .base import Retriever
from .dense import DenseRetriever
from .graph import GraphRetriever, score_decimals
from .graph_files import GraphParts
from .hybrid_settings import GRAPH, HYBRID, PASSAGE_SEEDS, HybridSettings
from .ranker import PageRankSearch
from .seeds import fields_vector, mixture, passage_vector
from .statements import StatementPages
from .traces import Teleport

__all__ = ["HybridRetriever", "HybridParts"]


@dataclass(frozen=True)
class HybridParts:
    """What a hybrid is made of besides its settings: the paper graph's parts, the dense models and each document's
    metadata. Given to :meth:`HybridRetriever.fit` (``parts=``), they are used as they are."""

    graph: GraphParts
    dense: DenseRetriever | None = None
    heading: DenseRetriever | None = None
    doc_meta: Mapping | None = None
    statements: StatementPages | None = None


def _unit(x: np.ndarray) -> np.ndarray:
    lo, hi = (float(x.min()), float(x.max())) if x.size else (0.0, 0.0)
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x, dtype=np.float64)


class HybridRetriever(PageRankSearch, Retriever):
    """The paper's graph retriever with document and metadata nodes, passage seeds and a fused ranking.

    Parameters
    ----------
    graph : GraphRetriever, optional
        The paper retriever's settings (default ``GraphRetriever(extractor="ner3", bct="both")``); ``fit`` fits a
        copy of it.
    settings : HybridSettings, optional
        What the hybrid adds (default :data:`~aethel_lite.retrievers.hybrid_settings.HYBRID`).
    progress : bool
        Show progress bars.

    Attributes
    ----------
    graph_retriever_ : GraphRetriever
        The fitted paper retriever (its graph, BM25 index, question linking and BCT).
    graph_, operator_ : EntityGraph, PPROperator
        The paper's graph with the document and metadata nodes, and its PageRank operator.
    dense_, heading_ : DenseRetriever or None
        The dense models the settings need.
    doc_meta_ : dict or None
        ``doc_id`` → :class:`~aethel_lite.data.docmeta.DocMeta` (with document or metadata nodes).
    companies_ : CompanyIndex or None
        The companies a question can name (``metadata``).
    doc_nodes_ : ndarray or None
        Each passage's document node in :attr:`graph_` (``document_nodes``).
    tokens_ : TokenIndex or None
        BCT's token index of :attr:`graph_`'s entities.
    statements_ : StatementPages or None
        The corpus's statement pages and their row labels (``anchor_pages="statements"``).
    """

    name = "hybrid"

    def __init__(
        self,
        graph: GraphRetriever | None = None,
        settings: HybridSettings | None = None,
        progress: bool = False,
    ):
        self.graph, self.settings, self.progress = graph, settings, progress

    # -- settings -------------------------------------------------------------------------------------------------

    @property
    def graph_settings(self) -> GraphRetriever:
        """The paper retriever's settings (``graph``, or the default)."""
        return GraphRetriever(**GRAPH) if self.graph is None else self.graph

    @property
    def hybrid_settings(self) -> HybridSettings:
        """``settings``, or the default."""
        return HYBRID if self.settings is None else self.settings

    @property
    def alpha(self) -> float:
        return self.graph_settings.alpha

    @property
    def tol(self) -> float:
        return self.graph_settings.tol

    @property
    def max_iter(self) -> int:
        return self.graph_settings.max_iter

    @property
    def is_hybrid(self) -> bool:
        """Whether any seed source beyond entities, or any document or metadata node, takes part."""
        return self.hybrid_settings.has_components

    def config(self) -> dict:
        """JSON-able settings (part of result-cache keys)."""
        g, s = self.graph_settings, self.hybrid_settings
        return {
            "name": "graph",
            **{k: v for k, v in g.config().items() if k != "name"},
            "passage_seeds": list(s.passage_seeds),
            "document_nodes": bool(s.document_nodes),
            "metadata": bool(s.metadata),
            "period_linking": bool(s.period_linking),
            "seed_weights": s.source_weights(),
            "seed_depth": s.seed_depth,
            "dense_pooling": s.dense_pooling,
            "period_decay": s.period_decay,
            "rank_weights": s.term_weights(),
            **({} if s.anchors == "joint" else {"anchors": s.anchors, "anchor_gap": s.anchor_gap}),
            **({} if s.anchor_pages == "rank" else {"anchor_pages": s.anchor_pages}),
        }

    _memo = False

    @property
    def memo(self) -> bool:
        """Share per-text work through the process-wide memos (:attr:`DenseRetriever.memo`); same results."""
        return self._memo

    @memo.setter
    def memo(self, value: bool) -> None:
        self._memo = bool(value)
        for inner in (
            getattr(self, "graph_retriever_", None),
            getattr(self, "dense_", None),
            getattr(self, "heading_", None),
        ):
            if inner is not None:
                inner.memo = self._memo

    # -- fit ------------------------------------------------------------------------------------------------------

    def fit(self, passages: Sequence, *, parts: HybridParts | None = None) -> HybridRetriever:
        """Fit the paper retriever (or take its ``parts``), the dense models the settings need, each document's
        metadata, and build the graph with document and metadata nodes and its PageRank operator."""
        g, s = self.graph_settings, self.hybrid_settings
        g.check_settings()
        passages = self._index_passages(passages)
        paper = GraphRetriever(**{**g.get_params(deep=False), "progress": g.progress or self.progress})
        paper.memo = self.memo
        paper.fit(passages, parts=None if parts is None else parts.graph)
        given = (
            (None,) * 4 if parts is None else (parts.dense, parts.heading, parts.doc_meta, parts.statements)
        )
        dense, heading, doc_meta, statements = given
        if s.needs("dense") and (dense is None or dense.pooling != s.dense_pooling):
            dense = DenseRetriever(pooling=s.dense_pooling, cache=g.cache, progress=self.progress).fit(
                passages
            )
        if s.needs("heading") and heading is None:
            heading = DenseRetriever(pooling="heading", cache=g.cache, progress=self.progress).fit(passages)
        self.graph_retriever_ = paper
        self.dense_ = dense if s.needs("dense") else None
        self.heading_ = heading if s.needs("heading") else None
        self.doc_ids_ = paper.doc_ids_
        self.passages_ = (
            passages  # add_document_nodes reads pid and doc_id; a variant's new dense model the text
        )
        if s.document_nodes or s.metadata:
            self.doc_meta_ = document_metadata(passages) if doc_meta is None else dict(doc_meta)
            self.graph_ = add_document_nodes(
                paper.graph_,
                self.passages_,
                self.doc_meta_,
                documents=bool(s.document_nodes),
                metadata=bool(s.metadata),
            )
            self.operator_ = PPROperator(self.graph_.adjacency()).prepare(g.alpha)
        else:
            self.doc_meta_ = None
            self.graph_, self.operator_ = paper.graph_, paper.operator_
        self.companies_ = (
            CompanyIndex(c for d in self.doc_meta_.values() for c in d.companies) if s.metadata else None
        )
        self.tokens_ = token_index(self.graph_) if g.bct in ("substring", "both") else None
        self.statements_ = None
        if s.anchor_pages == "statements":
            self.statements_ = StatementPages().fit(passages) if statements is None else statements
        self.doc_nodes_ = None
        if s.document_nodes:
            self.doc_nodes_ = np.array(
                [self.doc_node(self.graph_, i) for i in range(len(self.pids_))], dtype=np.int64
            )
            self.doc_nodes_.setflags(write=False)
        self.memo = self.memo  # the inner models' memo
        return self

    @property
    def parts_(self) -> HybridParts:
        """The fitted parts (what ``fit(parts=...)`` takes): a variant with other settings is fitted from them."""
        self._check_fitted()
        return HybridParts(
            self.graph_retriever_.parts_, self.dense_, self.heading_, self.doc_meta_, self.statements_
        )

    def variant(self, graph: Mapping[str, Any] | None = None, **changes: Any) -> HybridRetriever:
        """A new hybrid with the paper retriever's settings ``graph`` and the hybrid settings ``changes`` replaced,
        fitted from this one's :attr:`parts_` (nothing is extracted or encoded again)."""
        g = GraphRetriever(**{**self.graph_settings.get_params(), **(graph or {})})
        new = HybridRetriever(g, self.hybrid_settings.replace(**changes), self.progress)
        new.memo = self.memo
        return new.fit(self.passages_, parts=self.parts_)

    def save(self, folder) -> list[str]:
        """Write the fitted retriever's files (:func:`aethel_lite.retrievers.graph_files.save`)."""
        return graph_files.save(self, folder)

    @classmethod
    def load(cls, folder, graph: GraphRetriever | None = None, settings: HybridSettings | None = None):
        """The retriever :meth:`save` wrote into ``folder``, with these settings (nothing is extracted or encoded)."""
        r = cls(graph, settings)
        g, s = r.graph_settings, r.hybrid_settings
        passages, gparts = graph_files.load_parts(folder, g.extractor)
        pids = [p.pid for p in passages]
        dense = graph_files.load_dense(folder, pids, s.dense_pooling, g.cache) if s.needs("dense") else None
        heading = graph_files.load_dense(folder, pids, "heading", g.cache) if s.needs("heading") else None
        doc_meta = graph_files.load_docmeta(folder)
        statements = graph_files.load_statements(folder, pids) if s.anchor_pages == "statements" else None
        return r.fit(passages, parts=HybridParts(gparts, dense, heading, doc_meta, statements))

    # -- a question -----------------------------------------------------------------------------------------------

    def question_mentions(self, text: str) -> list:
        return self.graph_retriever_.question_mentions(text)

    def block_mentions(self, texts: Sequence[str]) -> dict:
        return self.graph_retriever_.block_mentions(texts)

    def query_key_sources(self, text: str, mentions=None) -> dict[str, str]:
        return self.graph_retriever_.query_key_sources(text, mentions)

    def query_keys(self, text: str, mentions=None) -> list[str]:
        return self.graph_retriever_.query_keys(text, mentions)

    def expansions(self, text: str, graph=None, mentions=None) -> list:
        """The BCT expansions of a question's entities over ``graph`` (default :attr:`graph_`), metadata nodes left out."""
        self._check_fitted()
        graph = self.graph_ if graph is None else graph
        tokens = self.tokens_ if graph is self.graph_ else None
        exps = self.graph_retriever_.expansions(text, graph, mentions, tokens=tokens)
        return [e for e in exps if not is_meta_key(e.entity)]

    def question_scores(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Corpus-wide ``"lexical"``, ``"dense"``, ``"heading"`` scores the seeds and ranking need, a row per question."""
        self._check_fitted()
        s, texts = self.hybrid_settings, list(texts)
        out: dict[str, np.ndarray] = {}
        if s.needs("lexical"):
            bm25 = self.graph_retriever_.bm25_
            out["lexical"] = (
                np.stack([bm25.get_scores(t) for t in texts]) if texts else np.zeros((0, len(self.pids_)))
            )
        encoders = {
            name: model
            for name, model in (("dense", self.dense_), ("heading", self.heading_))
            if model is not None and s.needs(name)
        }
        if encoders and texts:
            vectors = next(iter(encoders.values())).query_vectors(
                texts
            )  # one MiniLM pass: both share the encoder
        for name, model in encoders.items():
            out[name] = model.score_vectors(vectors if texts else np.zeros((0, 0), dtype=np.float32))
        return out

    def metadata_fields(self, text: str) -> list[dict[str, float]]:
        """The metadata nodes a question names, one dict (node key → weight) per field: companies and, with period
        linking, periods (the latest year named weight 1, each earlier one ``period_decay`` times the next) and
        filing types; ``[]`` without ``metadata``."""
        s = self.hybrid_settings
        if not s.metadata:
            return []
        companies = match_companies(text, self.companies_) if self.companies_ is not None else {}
        fields = [{PREFIXES["company"] + _slug(c): m for c, m in companies.items()}]
        if s.period_linking:
            keys = period_keys(text)
            years = sorted({int(k[:4]) for k in keys}, reverse=True)  # the latest year named first
            decay = float(s.period_decay)
            fields.append({PREFIXES["period"] + k: decay ** years.index(int(k[:4])) for k in keys})
            fields.append({PREFIXES["type"] + k: 1.0 for k in type_keys(text)})
        return fields

    def seed_components(self, text: str, graph=None, corpus_idx=None, *, scores=None, mentions=None) -> tuple:
        """``(expansions, source → seed vector, metadata node → share)`` of a question."""
        self._check_fitted()
        s = self.hybrid_settings
        graph = self.graph_ if graph is None else graph
        idx = np.arange(len(self.pids_)) if corpus_idx is None else corpus_idx
        exps = self.expansions(text, graph, mentions=mentions)
        comps: dict[str, np.ndarray] = {}
        ent = seed_vector(exps, graph)
        if ent.any():
            comps["entity"] = ent
        meta, named = fields_vector(self.metadata_fields(text), graph)
        if meta is not None:
            comps["metadata"] = meta
        if s.passage_seeds:
            if scores is None or any(x not in scores for x in s.passage_seeds):
                scores = {k: v[0] for k, v in self.question_scores([text]).items()}
            for source in PASSAGE_SEEDS:
                if source in s.passage_seeds:
                    vec = passage_vector(
                        np.asarray(scores[source], dtype=np.float64)[idx], graph, s.seed_depth
                    )
                    if vec is not None:
                        comps[source] = vec
        return exps, comps, named

    def mixture(self, comps: Mapping[str, np.ndarray]) -> dict[str, float]:
        """Each present source's share of the teleport (:func:`mixture` with the settings' weights)."""
        return mixture(self.hybrid_settings.source_weights(), comps)

    def teleport(self, text: str, graph=None, corpus_idx=None, scores=None, mentions=None) -> Teleport:
        r"""The teleport :math:`s = \sum_c \frac{w_c}{\sum_{c'} w_{c'}}\, s_c` of a question, summing to 1; without
        any source the paper retriever's BM25 teleport (or none under ``fallback="none"``)."""
        graph = self.graph_ if graph is None else graph
        exps, comps, named = self.seed_components(text, graph, corpus_idx, scores=scores, mentions=mentions)
        mix = self.mixture(comps)
        if mix:
            seeds = sum(share * comps[c] for c, share in mix.items())
            return Teleport(
                exps, seeds / seeds.sum(), False, {"components": comps, "mix": mix, "named": named}
            )
        lexical = scores.get("lexical") if scores else None
        seeds = self.graph_retriever_.fallback_teleport(text, graph, corpus_idx, lexical)
        return Teleport(exps, seeds, seeds is not None, None)

    def pool_graph(self, corpus_idx: np.ndarray):
        """The graph of a closed pool: its passages, their entities and their documents' nodes."""
        s = self.hybrid_settings
        pids = [self.pids_[i] for i in corpus_idx]
        if not (s.document_nodes or s.metadata):
            return self.graph_.subgraph(pids)
        base = self.graph_retriever_.graph_.subgraph(pids)
        members = [self.passages_[i] for i in corpus_idx]
        return add_document_nodes(
            base, members, self.doc_meta_, documents=bool(s.document_nodes), metadata=bool(s.metadata)
        )

    def doc_node(self, graph, i: int) -> int:
        """Node index (in ``graph``) of the document node of fitted passage ``i``."""
        return graph.n_passages + graph.entity_index[PREFIXES["doc"] + _slug(self.doc_ids_[i])]

    def doc_nodes(self, graph, corpus_idx: np.ndarray | None) -> np.ndarray | None:
        """Node index (in ``graph``) of each candidate's document node, or None without document nodes."""
        if not self.hybrid_settings.document_nodes:
            return None
        if corpus_idx is None and graph is self.graph_:
            return self.doc_nodes_
        idx = np.arange(len(self.pids_)) if corpus_idx is None else corpus_idx
        return np.array([self.doc_node(graph, i) for i in idx], dtype=np.int64)

    def anchor_traces(self, text: str, trace, operator, docs) -> list | None:
        """One trace per anchor the question names (:func:`aethel_lite.retrievers.anchors.solve`), or None."""
        return anchors.solve(self, text, trace, operator, docs)

    def merged_scores(self, text: str, trace) -> np.ndarray:
        """The merged scores of an anchored question (:func:`aethel_lite.retrievers.anchors.ranked`)."""
        return anchors.ranked(self, text, trace)

    def rank_terms(
        self, text, ppr, corpus_idx, *, lexical=None, dense=None, doc_ppr=None, heading=None
    ) -> dict:
        """The min–max normalised terms :math:`\\hat x` of :meth:`ranking_scores` over the candidates."""
        weights = self.hybrid_settings.term_weights() or {}
        out = {}
        if "ppr" in weights:
            out["ppr"] = _unit(np.asarray(ppr, dtype=np.float64))
        if "document" in weights:
            if doc_ppr is None:
                raise ParameterError("ranking_scores: a 'document' term needs doc_ppr")
            out["document"] = _unit(np.asarray(doc_ppr, dtype=np.float64))
        given = {
            "lexical": (lexical, lambda: self.graph_retriever_.bm25_.get_scores(text)),
            "dense": (dense, lambda: self.dense_.score_texts([text])[0]),
            "heading": (heading, lambda: self.question_scores([text])["heading"][0]),
        }
        for term, (scores, compute) in given.items():
            if term in weights:
                x = np.asarray(compute() if scores is None else scores, dtype=np.float64)[corpus_idx]
                out[term] = _unit(x)
        return out

    def ranking_scores(
        self,
        text: str,
        ppr: np.ndarray,
        corpus_idx=None,
        *,
        lexical=None,
        dense=None,
        doc_ppr=None,
        heading=None,
    ) -> np.ndarray:
        r"""Corpus-length scores that ``search`` ranks: with ``rank_weights`` :math:`\lambda` (normalised)
        :math:`\sum_t \lambda_t \hat x_t` over :meth:`rank_terms`, rounded as the paper's scores are; else the paper
        retriever's PageRank order (:meth:`GraphRetriever.ranking_scores`)."""
        weights = self.hybrid_settings.term_weights()
        if weights is None:
            return self.graph_retriever_.ranking_scores(text, ppr, corpus_idx, lexical=lexical)
        n_corpus = len(self.pids_)
        corpus_idx = np.arange(n_corpus) if corpus_idx is None else corpus_idx
        terms = self.rank_terms(
            text, ppr, corpus_idx, lexical=lexical, dense=dense, doc_ppr=doc_ppr, heading=heading
        )
        out = np.full(n_corpus, -np.inf)
        out[corpus_idx] = np.round(sum(weights[t] * terms[t] for t in weights), score_decimals(self.tol))
        return out

    # -- search ---------------------------------------------------------------------------------------------------

    @property
    def explains_documents(self) -> bool:
        """Whether :meth:`explain` splits each hit's *document node* PageRank (the graph's only ranking term: a
        ``"document"`` rank weight, no ``"ppr"`` weight) rather than its own."""
        s = self.hybrid_settings
        weights = s.term_weights() or {}
        return bool(s.document_nodes) and weights.get("document", 0) > 0 and weights.get("ppr", 0) == 0
