r"""``aethel-hybrid``: the paper's graph retriever, extended by composition (:class:`HybridRetriever`).

The hybrid holds a :class:`~aethel_lite.retrievers.GraphRetriever` (the passage–entity graph, BM25, the question's
entity links and BCT), dense models (:class:`~aethel_lite.retrievers.DenseRetriever`) and the document / metadata
layer (:mod:`aethel_lite.data.docmeta`). Its graph is the paper's plus a node per document and per metadata value;
a question's teleport mixes the seed sources present (entity, metadata, BM25 and dense passage seeds),

.. math:: s = \sum_c \frac{w_c}{\sum_{c'} w_{c'}}\, s_c , \qquad c \in \{\text{entity}, \text{metadata},
          \text{lexical}, \text{dense}\},

and with ``rank_weights`` a passage scores

.. math::

    r(d) = \lambda_\text{ppr}\, \hat p_d + \lambda_\text{document}\, \hat\pi_{D(d)}
         + \lambda_\text{lexical}\, \hat b_d + \lambda_\text{dense}\, \hat c_d
         + \lambda_\text{heading}\, \hat h_d ,

its own PageRank, its document node's PageRank, BM25, the dense cosine and the dense cosine with the passage's
heading, each min–max normalised over the candidates (:func:`~aethel_lite.retrievers.scores.min_max`).

Every default was chosen on the *development* halves of the four open corpora by
:func:`~aethel_lite.studies.tuning.tune` (``aethel_lite/manifests/hybrid_tuning.json``); the test halves never take
part. Each ablation (:data:`ABLATIONS`) is that setting with named settings replaced (``set_params`` keys).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
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
    question_fields,
    read_docmeta,
    write_docmeta,
)
from ..data.fiscal import FiscalCalendars
from ..errors import DataError, ParameterError
from .base import IDS_FILE, PassageIds, Retriever, clone, prefitted
from .dense import DenseRetriever
from .graph import GraphRetriever, score_decimals
from .scores import fields_vector, min_max, mixture, passage_vector
from .traces import PageRankSearch, Teleport

__all__ = [
    "HybridRetriever", "PASSAGE_SEEDS", "SOURCES", "DEFAULT_SEED_WEIGHTS", "RANK_TERMS", "TERM_SOURCE", "GRAPH",
    "SEED_WEIGHTS", "RANK_WEIGHTS", "ABLATIONS", "ABLATION_LABELS", "HISTORICAL", "DOCMETA_FILE",
]  # fmt: skip

PASSAGE_SEEDS = ("lexical", "dense")
#: Seed components of the personalization vector, in the order they are reported.
SOURCES = ("entity", "metadata", "lexical", "dense")
DEFAULT_SEED_WEIGHTS = {"entity": 1.0, "metadata": 1.0, "lexical": 1.0, "dense": 1.0}
#: Terms of the hybrid ranking score.
RANK_TERMS = ("ppr", "document", "lexical", "dense", "heading")
#: the seed source a ranking term's share of a hit is credited to (provenance); the rest are their own
TERM_SOURCE = {"heading": "dense"}
#: the paper retriever ``aethel-hybrid`` holds: filtered NER and BCT
GRAPH: dict[str, Any] = {"extractor": "ner3", "bct": "both", "alpha": 0.5}
#: the chosen seed-source weights and ranking weights (``aethel_lite/manifests/hybrid_tuning.json``)
SEED_WEIGHTS = {"entity": 1.0, "metadata": 3.0, "lexical": 0.5, "dense": 0.5}
RANK_WEIGHTS = {"document": 0.3, "lexical": 0.2, "dense": 0.3, "heading": 0.2}
DOCMETA_FILE = "docmeta.json"
_NO_DOCUMENT = {"lexical": 0.2, "dense": 0.3, "heading": 0.2}

#: Ablation name → the settings of ``aethel-hybrid`` it replaces (one component off at a time; ``set_params`` keys)
ABLATIONS: dict[str, dict[str, Any]] = {
    "aethel-hybrid-no-passage-seeds": {"passage_seeds": ()},
    "aethel-hybrid-no-lexical-seeds": {"passage_seeds": ("dense",)},
    "aethel-hybrid-no-dense-seeds": {"passage_seeds": ("lexical",)},
    "aethel-hybrid-no-documents": {"document_nodes": False, "rank_weights": _NO_DOCUMENT},
    "aethel-hybrid-no-metadata": {"metadata": False},
    "aethel-hybrid-no-period-linking": {"period_linking": False},
    "aethel-hybrid-no-bct": {"graph__bct": "none"},
    "aethel-hybrid-ppr-only": {"rank_weights": None},
    "aethel-hybrid-no-heading": {"rank_weights": {"document": 0.3, "lexical": 0.2, "dense": 0.3}},
    "aethel-hybrid-no-graph": {"rank_weights": {"lexical": 0.2, "dense": 0.3, "heading": 0.2}},
}
ABLATION_LABELS = {
    "aethel-hybrid": "all components",
    "aethel-hybrid-no-passage-seeds": "no passage seeds (entity + metadata seeds only)",
    "aethel-hybrid-no-lexical-seeds": "no BM25 passage seeds",
    "aethel-hybrid-no-dense-seeds": "no dense passage seeds",
    "aethel-hybrid-no-documents": "no document nodes (metadata joined to passages; no document term)",
    "aethel-hybrid-no-metadata": "no metadata nodes (company, period, filing type)",
    "aethel-hybrid-no-period-linking": "no period linking (question periods and filing types not seeded)",
    "aethel-hybrid-no-bct": "no BCT (exact entity seeds only)",
    "aethel-hybrid-ppr-only": "ranked by PageRank alone (no fused ranking)",
    "aethel-hybrid-no-heading": "no heading term (the page's first 200 characters)",
    "aethel-hybrid-no-graph": "no graph: the same BM25 + dense + heading terms, PageRank terms dropped",
    "aethel-hybrid-v1": "the earlier setting, tuned before the heading term existed",
}
#: Earlier settings kept under their method names so that their numbers can be set beside today's:
#: ``aethel-hybrid-v1`` was tuned (and its test half seen) before the heading term existed
HISTORICAL: dict[str, dict[str, Any]] = {
    "aethel-hybrid-v1": {"rank_weights": {"document": 0.5, "lexical": 0.1, "dense": 0.4}},
}


def _weights_ok(values) -> bool:
    return all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in values)


def _positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


class HybridRetriever(PageRankSearch, Retriever):
    """The paper's graph retriever with document and metadata nodes, passage seeds and a fused ranking.

    Parameters
    ----------
    graph : GraphRetriever, optional
        The paper retriever it holds (default ``GraphRetriever(extractor="ner3", bct="both")``); ``fit`` fits a
        clone of it.
    passage_seeds : tuple of {"lexical", "dense"}
        Passage seeds from the question's BM25 and dense scores (the top ``seed_depth`` of each).
    document_nodes, metadata : bool
        A node per document; nodes per company, fiscal period and filing type (:mod:`aethel_lite.data.docmeta`).
    period_linking : bool
        Seed the fiscal periods and filing types a question names (with ``metadata``).
    seed_weights : mapping
        Source → weight :math:`w_c` over :data:`DEFAULT_SEED_WEIGHTS`.
    seed_depth : int
        Passages seeded per passage source.
    dense_pooling : {"first", "max"}
        How the dense model scores a passage (:class:`~aethel_lite.retrievers.DenseRetriever`).
    rank_weights : mapping or None
        Ranking term → weight :math:`\\lambda_t` (normalised to sum 1); ``None``: rank by PageRank.
    period_decay : float
        Weight of each earlier year a question names, relative to the next.
    fiscal_calendar : bool
        Read a question's dates in the fiscal calendar of the company it names, where documents state it
        (:func:`~aethel_lite.data.fiscal.read_periods`); else, or ``False``: as calendar quarters.
    prefit : bool
        ``graph`` is already fitted on the same passages: ``fit`` uses it as it is (as scikit-learn's
        ``SelectFromModel(prefit=True)``), so that several hybrids share one paper retriever.
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
    calendars_ : FiscalCalendars
        The companies' fiscal calendars, where their documents state them (``metadata``).
    doc_nodes_ : ndarray or None
        Each passage's document node in :attr:`graph_` (``document_nodes``).
    tokens_ : TokenIndex or None
        BCT's token index of :attr:`graph_`'s entities.
    """

    name = "hybrid"

    def __init__(
        self,
        graph: GraphRetriever | None = None,
        passage_seeds: Sequence[str] = PASSAGE_SEEDS,
        document_nodes: bool = True,
        metadata: bool = True,
        period_linking: bool = True,
        seed_weights: Mapping[str, float] = SEED_WEIGHTS,
        seed_depth: int = 30,
        dense_pooling: str = "first",
        rank_weights: Mapping[str, float] | None = RANK_WEIGHTS,
        period_decay: float = 0.5,
        fiscal_calendar: bool = True,
        prefit: bool = False,
        progress: bool = False,
    ):
        self.graph, self.passage_seeds, self.document_nodes = graph, passage_seeds, document_nodes
        self.metadata, self.period_linking, self.seed_weights = metadata, period_linking, seed_weights
        self.seed_depth, self.dense_pooling, self.rank_weights = seed_depth, dense_pooling, rank_weights
        self.period_decay, self.fiscal_calendar = period_decay, fiscal_calendar
        self.prefit, self.progress = prefit, progress

    # -- settings -------------------------------------------------------------------------------------------------

    def _check_settings(self) -> None:
        _check_settings(self)
        self._paper()._check_settings()

    def _paper(self) -> GraphRetriever:
        """The paper retriever's settings (``graph``, or the default)."""
        return GraphRetriever(**GRAPH) if self.graph is None else self.graph

    @property
    def alpha(self) -> float:
        return self._paper().alpha

    @property
    def tol(self) -> float:
        return self._paper().tol

    @property
    def max_iter(self) -> int:
        return self._paper().max_iter

    def source_weights(self) -> dict[str, float]:
        """Each seed source's weight :math:`w_c` (``seed_weights`` over :data:`DEFAULT_SEED_WEIGHTS`)."""
        w = {**DEFAULT_SEED_WEIGHTS, **(self.seed_weights or {})}
        return {k: float(w[k]) for k in SOURCES}

    def term_weights(self) -> dict[str, float] | None:
        """The ranking terms' weights normalised to sum 1 (zero ones dropped), or None (PageRank order)."""
        if self.rank_weights is None:
            return None
        live = {t: float(self.rank_weights.get(t, 0.0)) for t in RANK_TERMS}
        total = sum(live.values())
        return {t: v / total for t, v in live.items() if v > 0}

    def needs(self, source: str) -> bool:
        """Whether searching needs corpus-wide ``"lexical"``, ``"dense"`` or ``"heading"`` scores of a question."""
        return source in self.passage_seeds or source in (self.term_weights() or {})

    @property
    def is_hybrid(self) -> bool:
        """Whether any seed source beyond entities, or any document or metadata node, takes part."""
        return bool(self.passage_seeds) or bool(self.document_nodes) or bool(self.metadata)

    @property
    def explains_documents(self) -> bool:
        """Whether an explanation splits each hit's *document node* PageRank (the graph's only ranking term: a
        ``"document"`` rank weight, no ``"ppr"`` weight) rather than its own."""
        weights = self.term_weights() or {}
        return bool(self.document_nodes) and weights.get("document", 0) > 0 and weights.get("ppr", 0) == 0

    def parts(self) -> list[str]:
        """The index parts ``save`` writes (file groups an index shares between methods: :mod:`aethel_lite.search.index`)."""
        out = self._paper().parts()
        if self.needs("dense"):
            out.append(f"dense-{self.dense_pooling}")
        if self.needs("heading"):
            out.append("dense-heading")
        if self.document_nodes or self.metadata:
            out.append("docmeta")
        return out

    # -- fit ------------------------------------------------------------------------------------------------------

    def fit(self, passages: Sequence) -> HybridRetriever:
        """Fit a clone of the paper retriever, the dense models the settings need and each document's metadata,
        then build the graph with document and metadata nodes and its PageRank operator. Returns ``self``."""
        self._check_settings()
        passages = self._index_passages(passages)
        paper = prefitted(self.graph, self.pids_) if self.prefit else clone(self._paper())
        if not self.prefit:
            paper.set_params(progress=paper.progress or self.progress)
            paper.fit(passages)
        cache = paper.cache
        dense = heading = None
        if self.needs("dense"):
            dense = DenseRetriever(pooling=self.dense_pooling, cache=cache, progress=self.progress).fit(
                passages
            )
        if self.needs("heading"):
            heading = DenseRetriever(pooling="heading", cache=cache, progress=self.progress).fit(passages)
        metas = document_metadata(passages) if (self.document_nodes or self.metadata) else None
        return self._learn(passages, paper, dense, heading, metas)

    def _learn(self, passages, paper: GraphRetriever, dense, heading, metas) -> HybridRetriever:
        """The fitted attributes from the fitted parts (``fit`` and :meth:`load`)."""
        self.graph_retriever_, self.dense_, self.heading_ = paper, dense, heading
        self.doc_ids_ = paper.doc_ids_
        self.passages_ = list(passages)  # add_document_nodes reads pid and doc_id (a closed pool's graph)
        if self.document_nodes or self.metadata:
            self.doc_meta_ = dict(metas)
            self.graph_ = add_document_nodes(
                paper.graph_, self.passages_, self.doc_meta_, documents=bool(self.document_nodes),
                metadata=bool(self.metadata),
            )  # fmt: skip
            self.operator_ = PPROperator(self.graph_.adjacency()).prepare(paper.alpha)
        else:
            self.doc_meta_ = None
            self.graph_, self.operator_ = paper.graph_, paper.operator_
        companies = (c for d in (self.doc_meta_ or {}).values() for c in d.companies)
        self.companies_ = CompanyIndex(companies) if self.metadata else None
        self.calendars_ = FiscalCalendars.of(self.doc_meta_) if self.metadata else FiscalCalendars()
        self.tokens_ = token_index(self.graph_) if paper.bct in ("substring", "both") else None
        self.doc_nodes_ = None
        if self.document_nodes:
            self.doc_nodes_ = np.array(
                [self.doc_node(self.graph_, i) for i in range(len(self.pids_))], dtype=np.int64
            )
            self.doc_nodes_.setflags(write=False)
        return self

    # -- files ----------------------------------------------------------------------------------------------------

    def save(self, folder: str | os.PathLike) -> list[str]:
        """Write what ``fit`` learned into ``folder`` (no pickle): the paper retriever's files
        (:meth:`GraphRetriever.save`), ``docmeta.json`` with document or metadata nodes, and the dense models'
        embeddings (``dense-<pooling>.npy``, :meth:`DenseRetriever.save`); returns their paths, sorted."""
        self._check_fitted()
        files = self.graph_retriever_.save(folder)
        if self.doc_meta_ is not None:
            write_docmeta(Path(folder) / DOCMETA_FILE, self.doc_meta_)
            files.append(DOCMETA_FILE)
        for model in (self.dense_, self.heading_):
            if model is not None:
                files += model.save(folder)
        return sorted(files)

    @classmethod
    def load(cls, folder: str | os.PathLike, **params: Any) -> HybridRetriever:
        """The retriever :meth:`save` wrote into ``folder``, with settings ``params`` (nothing is extracted or
        encoded): it ranks exactly as the one saved."""
        r = cls(**params)
        r._check_settings()
        p = r._paper()
        paper = GraphRetriever.load(folder, **p.get_params(deep=False))
        passages = [PassageIds(pid, doc) for pid, doc in zip(paper.pids_, paper.doc_ids_)]
        r._index_passages(passages)
        load = DenseRetriever.load
        dense = load(folder, pooling=r.dense_pooling, cache=p.cache) if r.needs("dense") else None
        heading = load(folder, pooling="heading", cache=p.cache) if r.needs("heading") else None
        for model in (dense, heading):
            if model is not None and model.pids_ != paper.pids_:
                raise DataError(f"{folder}: the embeddings' passage ids differ from {IDS_FILE}")
        metas = None
        if r.document_nodes or r.metadata:
            metas = read_docmeta(Path(folder) / DOCMETA_FILE)
        return r._learn(passages, paper, dense, heading, metas)

    # -- a question -----------------------------------------------------------------------------------------------

    def block_mentions(self, texts: Sequence[str]) -> dict:
        """text → mentions of a block of questions (:meth:`GraphRetriever.block_mentions`)."""
        return self.graph_retriever_.block_mentions(texts)

    def expansions(self, text: str, graph=None, mentions=None) -> list:
        """The BCT expansions of a question's entities over ``graph`` (default :attr:`graph_`), metadata nodes left
        out."""
        self._check_fitted()
        graph = self.graph_ if graph is None else graph
        tokens = self.tokens_ if graph is self.graph_ else None
        exps = self.graph_retriever_.expansions(text, graph, mentions, tokens=tokens)
        return [e for e in exps if not is_meta_key(e.entity)]

    def question_scores(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Corpus-wide ``"lexical"``, ``"dense"``, ``"heading"`` scores the seeds and ranking need, a row per
        question."""
        self._check_fitted()
        texts = list(texts)
        out: dict[str, np.ndarray] = {}
        if self.needs("lexical"):
            bm25 = self.graph_retriever_.bm25_
            out["lexical"] = (
                np.stack([bm25.get_scores(t) for t in texts]) if texts else np.zeros((0, len(self.pids_)))
            )
        encoders = {
            name: model
            for name, model in (("dense", self.dense_), ("heading", self.heading_))
            if model is not None and self.needs(name)
        }
        if encoders and texts:  # one MiniLM pass: both share the encoder
            vectors = next(iter(encoders.values())).query_vectors(texts)
        for name, model in encoders.items():
            out[name] = model.score_vectors(vectors if texts else np.zeros((0, 0), dtype=np.float32))
        return out

    def metadata_fields(self, text: str) -> list[dict[str, float]]:
        """The metadata nodes a question names (:func:`~aethel_lite.data.docmeta.question_fields`); ``[]`` without
        ``metadata``."""
        if not self.metadata:
            return []
        linking = self.period_linking and {"decay": self.period_decay, "fiscal": self.fiscal_calendar}
        return question_fields(text, self.companies_, self.calendars_, periods=linking or None)

    def seed_components(self, text: str, graph=None, corpus_idx=None, *, scores=None, mentions=None) -> tuple:
        """``(expansions, source → seed vector, metadata node → share)`` of a question."""
        self._check_fitted()
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
        if self.passage_seeds:
            if scores is None or any(x not in scores for x in self.passage_seeds):
                scores = {k: v[0] for k, v in self.question_scores([text]).items()}
            for source in PASSAGE_SEEDS:
                if source in self.passage_seeds:
                    vec = passage_vector(
                        np.asarray(scores[source], dtype=np.float64)[idx], graph, self.seed_depth
                    )
                    if vec is not None:
                        comps[source] = vec
        return exps, comps, named

    def mixture(self, comps: Mapping[str, np.ndarray]) -> dict[str, float]:
        """Each present source's share of the teleport (:func:`~aethel_lite.retrievers.scores.mixture`)."""
        return mixture(self.source_weights(), comps)

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
        pids = [self.pids_[i] for i in corpus_idx]
        if not (self.document_nodes or self.metadata):
            return self.graph_.subgraph(pids)
        base = self.graph_retriever_.graph_.subgraph(pids)
        members = [self.passages_[i] for i in corpus_idx]
        return add_document_nodes(
            base, members, self.doc_meta_, documents=bool(self.document_nodes), metadata=bool(self.metadata)
        )

    def doc_node(self, graph, i: int) -> int:
        """Node index (in ``graph``) of the document node of fitted passage ``i``."""
        return graph.n_passages + graph.entity_index[PREFIXES["doc"] + _slug(self.doc_ids_[i])]

    def doc_nodes(self, graph, corpus_idx: np.ndarray | None) -> np.ndarray | None:
        """Node index (in ``graph``) of each candidate's document node, or None without document nodes."""
        if not self.document_nodes:
            return None
        if corpus_idx is None and graph is self.graph_:
            return self.doc_nodes_
        idx = np.arange(len(self.pids_)) if corpus_idx is None else corpus_idx
        return np.array([self.doc_node(graph, i) for i in idx], dtype=np.int64)

    # -- ranking --------------------------------------------------------------------------------------------------

    def rank(self, text: str, trace) -> np.ndarray:
        """The corpus-length scores ``search`` ranks for a question's trace (:meth:`ranking_scores`); records its
        document nodes' PageRank in ``trace.extra["doc_ppr"]``."""
        e = trace.extra
        docs = self.doc_nodes(trace.graph, trace.corpus_idx)
        e["doc_ppr"] = None if docs is None else e["nodes"][docs]
        return self.ranking_scores(
            text, e["ppr"], trace.corpus_idx, lexical=e.get("lexical"), dense=e.get("dense"),
            doc_ppr=e["doc_ppr"], heading=e.get("heading"),
        )  # fmt: skip

    def rank_terms(
        self, text, ppr, corpus_idx, *, lexical=None, dense=None, doc_ppr=None, heading=None
    ) -> dict:
        """The min–max normalised terms :math:`\\hat x` of :meth:`ranking_scores` over the candidates."""
        weights = self.term_weights() or {}
        out = {}
        if "ppr" in weights:
            out["ppr"] = min_max(ppr)
        if "document" in weights:
            if doc_ppr is None:
                raise ParameterError("ranking_scores: a 'document' term needs doc_ppr")
            out["document"] = min_max(doc_ppr)
        given = {
            "lexical": (lexical, lambda: self.graph_retriever_.bm25_.get_scores(text)),
            "dense": (dense, lambda: self.dense_.score_texts([text])[0]),
            "heading": (heading, lambda: self.question_scores([text])["heading"][0]),
        }
        for term, (scores, compute) in given.items():
            if term in weights:
                out[term] = min_max(
                    np.asarray(compute() if scores is None else scores, dtype=np.float64)[corpus_idx]
                )
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
        retriever's PageRank order (:meth:`GraphRetriever.ppr_scores`)."""
        weights = self.term_weights()
        if weights is None:
            return self.graph_retriever_.ppr_scores(text, ppr, corpus_idx, lexical)
        n_corpus = len(self.pids_)
        corpus_idx = np.arange(n_corpus) if corpus_idx is None else corpus_idx
        terms = self.rank_terms(
            text, ppr, corpus_idx, lexical=lexical, dense=dense, doc_ppr=doc_ppr, heading=heading
        )
        out = np.full(n_corpus, -np.inf)
        out[corpus_idx] = np.round(sum(weights[t] * terms[t] for t in weights), score_decimals(self.tol))
        return out


def _check_settings(h: HybridRetriever) -> None:
    """ParameterError for an invalid hybrid setting (``fit`` and ``load`` check first)."""
    seeds = h.passage_seeds
    if isinstance(seeds, str) or any(x not in PASSAGE_SEEDS for x in seeds):
        raise ParameterError(f"passage_seeds must be a sequence of {', '.join(PASSAGE_SEEDS)}; got {seeds!r}")
    unknown = [k for k in (h.seed_weights or {}) if k not in SOURCES]
    if unknown:
        raise ParameterError(f"seed_weights: unknown source {unknown[0]!r}; choose from {', '.join(SOURCES)}")
    if not _weights_ok(h.source_weights().values()):
        raise ParameterError(f"seed_weights must be finite and >= 0; got {h.seed_weights!r}")
    if not (isinstance(h.period_decay, (int, float)) and 0 <= h.period_decay <= 1):
        raise ParameterError(f"period_decay must be in [0, 1]; got {h.period_decay!r}")
    if not _positive_int(h.seed_depth):
        raise ParameterError(f"seed_depth must be a positive integer; got {h.seed_depth!r}")
    if h.dense_pooling not in ("first", "max"):
        raise ParameterError(f"dense_pooling must be 'first' or 'max'; got {h.dense_pooling!r}")
    if h.rank_weights is not None:
        bad = [t for t in h.rank_weights if t not in RANK_TERMS]
        if bad:
            raise ParameterError(
                f"rank_weights: unknown term {bad[0]!r}; choose from {', '.join(RANK_TERMS)}"
            )
        vals = list(h.rank_weights.values())
        if not _weights_ok(vals) or not sum(vals) > 0:
            raise ParameterError(f"rank_weights must be finite, >= 0 and not all 0; got {h.rank_weights!r}")
        if h.rank_weights.get("document", 0) > 0 and not h.document_nodes:
            raise ParameterError("rank_weights: a 'document' term needs document_nodes=True")
