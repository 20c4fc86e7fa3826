"""The paper's method: entity graph, query seeds (with or without BCT), Personalized PageRank."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..caching.memo import TextMemo
from ..core.bct import Expansion, expand_seeds, provenance, seed_vector
from ..core.docmeta import (
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
from ..core.entities import (
    REGEX_STOP,
    extract_entities,
    get_extractor,
    graph_filters,
    normalize_entity,
)
from ..core.graph import build_graph
from ..core.ppr import PPROperator, _check_alpha
from ..core.provenance import SeedShare, part_weights, ppr_parts
from ..data.schema import Query
from ..errors import ParameterError
from .base import Retriever, passage_text, topk
from .bm25 import BM25Retriever
from .dense import DenseRetriever
from .run import Run

_BCT_MODES = ("none", "alias", "substring", "both")
_FALLBACKS = ("bm25", "none")
_PASSAGE_SEEDS = ("lexical", "dense")
#: Seed components of the personalization vector, in the order they are reported.
SOURCES = ("entity", "metadata", "lexical", "dense")
DEFAULT_SEED_WEIGHTS = {"entity": 1.0, "metadata": 1.0, "lexical": 1.0, "dense": 1.0}
#: Terms of the hybrid ranking score (see :meth:`GraphRetriever.ranking_scores`).
RANK_TERMS = ("ppr", "document", "lexical", "dense", "heading")
#: the seed source a ranking term's share of a hit is credited to (provenance); the rest are their own
_TERM_SOURCE = {"heading": "dense"}
# open-corpus questions are solved as batches of this many PPR columns
_BLOCK = 64


def _proper_tokens(text: str) -> frozenset[str]:
    """Normalised words of ``text`` written with a capital letter or a digit, minus function words
    (:data:`aethel_lite.core.entities.REGEX_STOP`, e.g. a sentence-initial "What")."""

    out: set[str] = set()
    for raw in text.split():
        word = raw.strip(".,;:!?()[]{}\"'“”‘’")
        if word and word not in REGEX_STOP and any(c.isupper() or c.isdigit() for c in word):
            out.update(normalize_entity(word).split())
    return frozenset(out)


_QUESTION_MENTIONS = TextMemo("question mentions", 100_000)  # see GraphRetriever.memo


class GraphRetriever(Retriever):
    r"""Entity-graph retrieval: query entities → seed vector (± BCT) → Personalized PageRank.

    ``fit`` extracts entities from every passage (cached on disk), drops stop-entities (``ner3``:
    entities in more than ``max_df`` of the passages), links entities whose names contain one
    another (``ner3``'s substring adjacency) and builds the bipartite passage–entity graph
    (:func:`aethel_lite.core.graph.build_graph`). ``search`` seeds Personalized PageRank on the query's
    entities (widened by BCT when ``bct != "none"``),

    .. math:: p = \alpha s + (1 - \alpha) W p ,

    and ranks passages by :math:`p`. In the closed-pool setting PPR runs on the subgraph of the
    query's candidate passages and their entities (the paper's per-question graph).

    **Query entities** are the extractor's mentions in the question plus every graph entity (and,
    when BCT uses an alias table, every alias-table name) whose normalised name occurs in the
    normalised question as a whole-token n-gram with at least one word written with a capital
    letter or a digit in the question ("3M", "NRCP IV", "Helios Fleet"; not "capital" or "in"),
    other than a sentence-initial function word (exact entity linking; ``link_query_ngrams``).
    NER on short questions misses entities that the corpus vocabulary knows, and NER on long
    filings yields junk keys that a lowercase question word would otherwise link to.

    **Fallback** (``fallback="bm25"``, the default) when a query has no entity in the graph: a
    *BM25-seeded teleport* — the personalization vector is put on the query's top
    ``fallback_depth`` BM25 passages in proportion to their BM25 scores, and PPR spreads it
    through their entities. With ``fallback="none"`` (the *pure graph*) such a query gets no
    teleport and ranks nothing.

    **Ordering**: with ``fallback="bm25"``, passages PPR does not reach (score 0) follow every
    reached passage, ordered by BM25; their reported score is
    :math:`-1 + \text{bm25}/(1 + \max \text{bm25}) \in [-1, 0)`. With ``fallback="none"`` they
    are not ranked at all (score :math:`-\infty`, left out of the run), so a run may hold fewer
    than ``k`` hits, or none. :attr:`diagnostics_` measures how much of a run BM25 supplied.

    Parameters
    ----------
    extractor : {"regex", "ner", "ner3"}
        Entity extractor (:mod:`aethel_lite.core.entities`).
    bct : {"none", "alias", "substring", "both"}
        Seed expansion (:mod:`aethel_lite.core.bct`); ``"none"`` is plain PPR on exact entity matches.
    alpha : float
        Teleport (restart) probability :math:`\alpha \in (0, 1)`.
    tol, max_iter : float, int
        PPR convergence (L1) and iteration cap.
    alias_table : mapping, optional
        Normalised entity → normalised aliases, for BCT's alias matching.
    link_query_ngrams : bool
        Add graph entities named verbatim in the question to its seeds.
    fallback : {"bm25", "none"}
        ``"bm25"``: BM25-seeded teleport for entity-less queries and BM25 order for unreached
        passages. ``"none"``: neither (the pure graph).
    fallback_depth : int
        BM25 passages seeding the teleport of a query without entities.
    n_process : int
        spaCy worker processes for entity extraction.
    cache : bool
        Cache passage entities on disk.

    Attributes
    ----------
    graph_ : EntityGraph
    provenance_ : dict
        After ``search``: qid → pid → list of :class:`~aethel_lite.core.bct.Expansion` (seed entity,
        graph entity reached, how, weight) that tie each of the query's first
        :attr:`provenance_depth` hits (default 100) to its seeds. Evaluation runs are 1,000 deep;
        explaining every one of those hits would cost more than the search itself.
    seeds_ : dict
        After ``search``: qid → the query's expansions (empty list = no seed entity: the BM25
        teleport was used, or nothing was ranked under ``fallback="none"``).
    diagnostics_ : dict
        After ``search``: qid → ``{"fallback": bool`` (the BM25 teleport was used),
        ``"n_seed_entities": int`` (graph entities in the seed vector, after BCT),
        ``"n_reached": int`` (candidate passages with PPR > 0),
        ``"bm25_ordered_top5": int}`` (top-5 hits that are unreached passages ordered by BM25).
        :meth:`diagnostics_summary` aggregates it.
    doc_ids_ : list of str
        The fitted passages' ``doc_id``, in corpus order.

    References
    ----------
    Haveliwala, T. H. (2002). Topic-sensitive PageRank. WWW.
    Gutiérrez, B. J. et al. (2024). HippoRAG: Neurobiologically inspired long-term memory for LLMs.
    """

    name = "graph"
    provenance_depth = 100  # hits per query whose provenance search() records
    _memo = False

    @property
    def memo(self) -> bool:
        """Evaluation option, as :attr:`DenseRetriever.memo`: passages' decoded entities, questions'
        mentions and the inner BM25 / dense models' per-text work come from process-wide memos
        (:mod:`aethel_lite.caching.memo`); setting it sets theirs. Results do not depend on it."""
        return self._memo

    @memo.setter
    def memo(self, value: bool) -> None:
        self._memo = bool(value)
        for inner in (getattr(self, "bm25_", None), getattr(self, "dense_", None), getattr(self, "heading_", None)):
            if inner is not None:
                inner.memo = self._memo

    def __init__(self, extractor: str = "ner3", bct: str = "none", alpha: float = 0.5, tol: float = 1e-8,
                 max_iter: int = 1000, alias_table: Mapping[str, Sequence[str]] | None = None,
                 link_query_ngrams: bool = True, fallback: str = "bm25", fallback_depth: int = 10,
                 n_process: int = 1, cache: bool = True, progress: bool = False,
                 passage_seeds: Sequence[str] = (), document_nodes: bool = False, metadata: bool = False,
                 period_linking: bool = False, seed_weights: Mapping[str, float] | None = None,
                 seed_depth: int = 20, dense_pooling: str = "first",
                 rank_weights: Mapping[str, float] | None = None, period_decay: float = 1.0):
        self.passage_seeds = passage_seeds
        self.document_nodes = document_nodes
        self.metadata = metadata
        self.period_linking = period_linking
        self.seed_weights = seed_weights
        self.seed_depth = seed_depth
        self.dense_pooling = dense_pooling
        self.rank_weights = rank_weights
        self.period_decay = period_decay
        self.extractor = extractor
        self.bct = bct
        self.alpha = alpha
        self.tol = tol
        self.max_iter = max_iter
        self.alias_table = alias_table
        self.link_query_ngrams = link_query_ngrams
        self.fallback = fallback
        self.fallback_depth = fallback_depth
        self.n_process = n_process
        self.cache = cache
        self.progress = progress

    def config(self) -> dict:
        return {"name": self.name, "extractor": self.extractor, "bct": self.bct, "alpha": self.alpha, "tol": self.tol,
                "link_query_ngrams": self.link_query_ngrams, "fallback": self.fallback,
                "fallback_depth": self.fallback_depth,
                "alias_table": self.alias_table is not None,
                "passage_seeds": list(self.passage_seeds), "document_nodes": bool(self.document_nodes),
                "metadata": bool(self.metadata), "period_linking": bool(self.period_linking),
                "seed_weights": self._weights(), "seed_depth": self.seed_depth, "dense_pooling": self.dense_pooling,
                "period_decay": self.period_decay,
                "rank_weights": None if self.rank_weights is None else self._rank_weights()}

    @property
    def is_hybrid(self) -> bool:
        """Whether any of the hybrid components (passage seeds, document or metadata nodes) is on."""
        return bool(self.passage_seeds) or bool(self.document_nodes) or bool(self.metadata)

    def _weights(self) -> dict[str, float]:
        w = dict(DEFAULT_SEED_WEIGHTS)
        w.update(self.seed_weights or {})
        return {k: float(w[k]) for k in SOURCES}

    def _rank_weights(self) -> dict[str, float] | None:
        """The ranking terms' weights normalised to sum 1 (zero ones dropped), or None (PPR order)."""
        if self.rank_weights is None:
            return None
        live = {t: float(self.rank_weights.get(t, 0.0)) for t in RANK_TERMS}
        total = sum(live.values())
        return {t: v / total for t, v in live.items() if v > 0}

    def _needs(self, source: str) -> bool:
        """Whether searching needs corpus-wide ``"lexical"``, ``"dense"`` or ``"heading"`` scores of each question."""
        rw = self._rank_weights() or {}
        return source in self.passage_seeds or source in rw

    # -- fit -------------------------------------------------------------------------------------
    def _fit(self, passages: list) -> None:

        _check_alpha(self.alpha)  # fail before the (slow) entity extraction
        self._check_modes()
        self.doc_ids_ = [p.doc_id for p in passages]
        self.extractor_ = get_extractor(self.extractor) if isinstance(self.extractor, str) else self.extractor
        mentions = extract_entities([passage_text(p) for p in passages], self.extractor_, cache=self.cache,
                                    n_process=self.n_process, progress=self.progress, memo=self.memo)
        stop, links = graph_filters(mentions, self.extractor_)
        self._base_graph = build_graph(self.pids_, mentions, stop=stop, alias_pairs=links)
        self._passages = list(passages)
        self._structure()
        self.bm25_ = BM25Retriever()
        self.bm25_.memo = self.memo
        self.bm25_.fit(passages)
        self.dense_ = self.heading_ = None
        self._fit_dense()

    def _structure(self, metas: Mapping[str, Any] | None = None) -> None:
        """``graph_`` = the entity graph plus the document / metadata nodes the settings ask for.

        ``metas``: the documents' :class:`~aethel_lite.core.docmeta.DocMeta` when already known (an
        index stores them); otherwise :func:`~aethel_lite.core.docmeta.document_metadata` of the passages.
        """
        self.graph_ = self._base_graph
        self.doc_meta_ = None
        self._companies = None
        if self.document_nodes or self.metadata:

            self.doc_meta_ = document_metadata(self._passages) if metas is None else dict(metas)
            self.graph_ = add_document_nodes(self._base_graph, self._passages, self.doc_meta_,
                                             documents=bool(self.document_nodes), metadata=bool(self.metadata))
            if self.metadata:

                self._companies = CompanyIndex(c for d in self.doc_meta_.values() for c in d.companies)
        self._set_operator()

    def _fit_dense(self) -> None:

        if self._needs("dense") and (self.dense_ is None or self.dense_.pooling != self.dense_pooling):
            self.dense_ = DenseRetriever(pooling=self.dense_pooling, cache=self.cache, progress=self.progress).fit(self._passages)
        if self._needs("heading") and getattr(self, "heading_", None) is None:
            self.heading_ = DenseRetriever(pooling="heading", cache=self.cache, progress=self.progress).fit(self._passages)
        for inner in (self.dense_, getattr(self, "heading_", None)):
            if inner is not None:
                inner.memo = self.memo

    def with_settings(self, **changes: Any) -> "GraphRetriever":
        """A fitted copy with some settings changed, redoing only the part of the fit they touch.

        Query-side settings (``bct``, ``alpha``, seeds, weights, ``period_linking``, ranking)
        cost nothing; ``document_nodes``/``metadata`` rebuild the graph's extra nodes from the
        stored entity graph; a dense model is fitted (from the embedding cache) when newly needed.
        The copy ranks exactly as a fresh ``GraphRetriever(**settings).fit(passages)`` would.
        Changing ``extractor``, ``alias_table``, ``cache`` or ``n_process`` refits from scratch.

        Raises
        ------
        ParameterError
            An unknown setting, or an invalid value.
        """
        import copy
        import inspect

        self._check_fitted()
        known = set(inspect.signature(GraphRetriever.__init__).parameters) - {"self"}
        bad = [k for k in changes if k not in known]
        if bad:
            raise ParameterError(f"with_settings: unknown setting {bad[0]!r}")
        new = copy.copy(self)
        for key, value in changes.items():
            setattr(new, key, value)
        new._check_modes()
        if any(k in changes for k in ("extractor", "alias_table", "cache", "n_process")):
            return new.fit(self._passages)
        if bool(new.document_nodes) != bool(self.document_nodes) or bool(new.metadata) != bool(self.metadata):
            new._structure(self.doc_meta_)  # None: computed from the passages
        new._fit_dense()
        return new

    def _check_modes(self) -> None:
        """Raise :class:`ParameterError` for an unknown ``bct`` or ``fallback`` (both may be reset after fit)."""
        if self.bct not in _BCT_MODES:
            raise ParameterError(f"bct must be one of {', '.join(_BCT_MODES)}; got {self.bct!r}")
        if self.fallback not in _FALLBACKS:
            raise ParameterError(f"fallback must be one of {', '.join(_FALLBACKS)}; got {self.fallback!r}")
        if isinstance(self.passage_seeds, str) or any(x not in _PASSAGE_SEEDS for x in self.passage_seeds):
            raise ParameterError(f"passage_seeds must be a sequence of {', '.join(_PASSAGE_SEEDS)}; got {self.passage_seeds!r}")
        unknown = [k for k in (self.seed_weights or {}) if k not in SOURCES]
        if unknown:
            raise ParameterError(f"seed_weights: unknown source {unknown[0]!r}; choose from {', '.join(SOURCES)}")
        if any(not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0) for v in self._weights().values()):
            raise ParameterError(f"seed_weights must be finite and >= 0; got {self.seed_weights!r}")
        if not (isinstance(self.period_decay, (int, float)) and 0 <= self.period_decay <= 1):
            raise ParameterError(f"period_decay must be in [0, 1]; got {self.period_decay!r}")
        if isinstance(self.seed_depth, bool) or not isinstance(self.seed_depth, int) or self.seed_depth < 1:
            raise ParameterError(f"seed_depth must be a positive integer; got {self.seed_depth!r}")
        if self.rank_weights is not None:
            bad = [t for t in self.rank_weights if t not in RANK_TERMS]
            if bad:
                raise ParameterError(f"rank_weights: unknown term {bad[0]!r}; choose from {', '.join(RANK_TERMS)}")
            vals = list(self.rank_weights.values())
            if any(not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0) for v in vals) or not sum(vals) > 0:
                raise ParameterError(f"rank_weights must be finite, >= 0 and not all 0; got {self.rank_weights!r}")
            if self.rank_weights.get("document", 0) > 0 and not self.document_nodes:
                raise ParameterError("rank_weights: a 'document' term needs document_nodes=True")

    def _set_operator(self) -> None:

        self.operator_ = PPROperator(self.graph_.adjacency())
        self._linkable = {False: self._ngram_index(self.graph_.entities), True: None}

    @staticmethod
    def _ngram_index(names) -> tuple[frozenset, tuple[int, ...]]:
        names = frozenset(n for n in names if n)
        return names, tuple(sorted({len(n.split()) for n in names}))

    def _linkable_names(self) -> tuple[frozenset, tuple[int, ...]]:
        """Names a question can be linked to verbatim: graph entities and, when BCT may use an
        alias table, its names too (a question says "NRCP IV" where the filings spell it out)."""
        with_aliases = bool(self.alias_table) and self.bct in ("alias", "both")
        if with_aliases and self._linkable[True] is None:

            extra = {normalize_entity(k) for k in self.alias_table}
            self._linkable[True] = self._ngram_index(set(self.graph_.entities) | extra)
        return self._linkable[with_aliases]

    # -- query side ------------------------------------------------------------------------------
    def query_keys(self, text: str) -> list[str]:
        """Normalised entity keys of a question: extractor mentions ∪ graph entities named in it."""
        return list(self.query_key_sources(text))

    def _question_mentions(self, text: str) -> list:
        """The extractor's mentions of one question (from the process-wide memo when :attr:`memo`)."""
        block = getattr(self, "_block_mentions", None)
        if block is not None and text in block:  # analysed with the rest of its block (_ppr_block)
            return block[text]
        if not self.memo:
            return self.extractor_.extract([text], progress=False)[0]
        settings = getattr(self, "_mention_settings", None)
        if settings is None or settings[0] is not self.extractor_:  # the extractor's configuration, once per fit
            self._mention_settings = settings = (self.extractor_, json.dumps(self.extractor_.config(), sort_keys=True, default=str))
        settings = settings[1]
        return list(_QUESTION_MENTIONS.map(settings, [text], lambda todo: [tuple(ms) for ms in self.extractor_.extract(todo, progress=False)])[0])

    def query_key_sources(self, text: str) -> dict[str, str]:
        """Each normalised entity key of a question → how it was found, in :meth:`query_keys` order.

        ``"mention"``: the extractor found it in the question (it may not be a graph entity).
        ``"ngram"``: a graph (or alias-table) entity named verbatim in the question
        (``link_query_ngrams``) that the extractor missed.
        """

        self._check_fitted()
        keys = {m.key: "mention" for m in self._question_mentions(text) if m.key}
        if self.link_query_ngrams:
            names, sizes = self._linkable_names()
            tokens = normalize_entity(text).split()
            proper = _proper_tokens(text)
            for n in sizes:
                for i in range(len(tokens) - n + 1):
                    span = tokens[i:i + n]
                    if not any(t in proper for t in span):
                        continue  # no capital letter or digit in the question's words: not a name
                    gram = " ".join(span)
                    if gram in names:
                        keys.setdefault(gram, "ngram")
        return keys

    def expansions(self, text: str, graph=None) -> list:
        """The BCT expansions of a question's entities over ``graph`` (default: the fitted graph)."""

        exps = expand_seeds(self.query_keys(text), self.graph_ if graph is None else graph, mode=self.bct,
                            alias_table=self.alias_table)
        return [e for e in exps if not is_meta_key(e.entity)]

    def _teleport(self, qtext: str, graph, corpus_idx: np.ndarray, bm25: np.ndarray | None = None) -> np.ndarray:
        """BM25-seeded personalization over ``graph``'s passage nodes (fallback for entity-less queries)."""
        bm25 = (self.bm25_.get_scores(qtext) if bm25 is None else bm25)[corpus_idx]
        top = np.argsort(-bm25, kind="stable")[: max(int(self.fallback_depth), 1)]
        seeds = np.zeros(graph.n_nodes)
        seeds[top] = np.maximum(bm25[top], 0.0)
        if not seeds.any():  # nothing at all to go on: uniform over the candidate passages
            seeds[: graph.n_passages] = 1.0
        return seeds / seeds.sum()

    # -- hybrid seeds ----------------------------------------------------------------------------
    def query_scores(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Corpus-wide passage scores the seeds need, one row per question.

        Returns
        -------
        dict
            ``"lexical"``: BM25, shape ``(len(texts), n_corpus)`` (when ``passage_seeds`` holds
            ``"lexical"`` or ``rank_weights`` a lexical term); ``"dense"``: cosine similarity
            (likewise; the questions are encoded as one batch); ``"heading"``: cosine similarity
            with each passage's heading (:func:`~aethel_lite.retrievers.passage_heading`;
            when ``rank_weights`` has a heading term), from the same question vectors.
        """
        self._check_fitted()
        texts = list(texts)
        out: dict[str, np.ndarray] = {}
        if self._needs("lexical"):
            out["lexical"] = np.stack([self.bm25_.get_scores(t) for t in texts]) if texts else np.zeros((0, len(self.pids_)))
        encoders = {name: model for name, model in (("dense", getattr(self, "dense_", None)),
                                                     ("heading", getattr(self, "heading_", None)))
                    if model is not None and self._needs(name)}
        if encoders and texts:
            vectors = next(iter(encoders.values())).query_vectors(texts)  # one MiniLM pass: both share the encoder
        for name, model in encoders.items():
            out[name] = model.score_vectors(vectors if texts else np.zeros((0, 0), dtype=np.float32))
        return out

    def _passage_vector(self, scores: np.ndarray, graph) -> np.ndarray | None:
        r"""Passage seeds from one source's scores of ``graph``'s passages (module formula), or None."""

        n = scores.shape[0]
        depth = min(int(self.seed_depth), n)
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

    def _metadata_vector(self, text: str, graph) -> tuple[np.ndarray | None, dict[str, float]]:
        """Seeds on the metadata nodes a question names (companies, periods, filing types)."""

        if not self.metadata:
            return None, {}
        fields = []
        companies = match_companies(text, self._companies) if self._companies is not None else {}
        fields.append({PREFIXES["company"] + _slug(c): m for c, m in companies.items()})
        if self.period_linking:
            keys = period_keys(text)
            years = sorted({int(k[:4]) for k in keys}, reverse=True)  # the latest year named first
            decay = float(self.period_decay)
            fields.append({PREFIXES["period"] + k: decay ** years.index(int(k[:4])) for k in keys})
            fields.append({PREFIXES["type"] + k: 1.0 for k in type_keys(text)})
        out = np.zeros(graph.n_nodes)
        named: dict[str, float] = {}
        n_p = graph.n_passages
        for f in fields:
            present = {k: w for k, w in f.items() if k in graph.entity_index and w > 0}
            total = sum(present.values())
            for k, w in present.items():  # each field (company, period, type) carries equal mass
                out[n_p + graph.entity_index[k]] += w / total
                named[k] = w / total
        if not out.any():
            return None, {}
        return out / out.sum(), named

    def seed_components(self, text: str, graph=None, corpus_idx: np.ndarray | None = None, *,
                        scores: Mapping[str, np.ndarray] | None = None) -> tuple[list, dict[str, np.ndarray], dict]:
        r"""The question's seed vectors, one per source, each summing to 1 (absent sources left out).

        * ``"entity"``: :func:`~aethel_lite.core.bct.seed_vector` of the question's entity expansions.
        * ``"metadata"`` (``metadata=True``): the company nodes :func:`~aethel_lite.core.docmeta.match_companies`
          links, weighted by their match, and with ``period_linking`` the period and filing-type nodes of
          :func:`~aethel_lite.core.docmeta.period_keys` and :func:`~aethel_lite.core.docmeta.type_keys`, a period
          of the :math:`r`-th latest year the question names (:math:`r = 0, 1, \dots`) weighted
          :math:`\rho^r` (``period_decay``; a filing reports its own year and the years before it);
          each field that names a node carries the same mass.
        * ``"lexical"`` / ``"dense"`` (``passage_seeds``): the top :math:`K` = ``seed_depth``
          candidate passages by BM25 / cosine similarity :math:`x`, weighted by how far each stands
          above the :math:`(K{+}1)`-th, :math:`s_i \propto x_i - x_{(K+1)}`.

        Parameters
        ----------
        text : str
        graph : EntityGraph, optional
            Default: the fitted graph.
        corpus_idx : ndarray of int, optional
            Corpus indices of ``graph``'s passages (default: all).
        scores : mapping, optional
            Corpus-wide scores of this question (a row of :meth:`query_scores`); computed when missing.

        Returns
        -------
        expansions : list of Expansion
        components : dict
            Source → vector over ``graph``'s nodes.
        named : dict
            Metadata node → its share of the metadata seeds.
        """

        self._check_fitted()
        graph = self.graph_ if graph is None else graph
        idx = np.arange(len(self.pids_)) if corpus_idx is None else corpus_idx
        exps = self.expansions(text, graph)
        comps: dict[str, np.ndarray] = {}
        ent = seed_vector(exps, graph)
        if ent.any():
            comps["entity"] = ent
        meta, named = self._metadata_vector(text, graph)
        if meta is not None:
            comps["metadata"] = meta
        if self.passage_seeds:
            if scores is None or any(s not in scores for s in self.passage_seeds):
                scores = {k: v[0] for k, v in self.query_scores([text]).items()}
            for source in _PASSAGE_SEEDS:
                if source in self.passage_seeds:
                    vec = self._passage_vector(np.asarray(scores[source], dtype=np.float64)[idx], graph)
                    if vec is not None:
                        comps[source] = vec
        return exps, comps, named

    def _mixture(self, comps: Mapping[str, np.ndarray]) -> dict[str, float]:
        """Each present source's share :math:`w_c / \\sum_{c'} w_{c'}` of the teleport (zero weights dropped)."""
        w = self._weights()
        live = {c: w[c] for c in comps if w[c] > 0}
        total = sum(live.values())
        return {c: v / total for c, v in live.items()} if total > 0 else {}

    def personalization(self, text: str, graph=None, corpus_idx: np.ndarray | None = None, *,
                        scores: Mapping[str, np.ndarray] | None = None) -> tuple:
        r"""The teleport vector :math:`s` of a question, as :meth:`search` builds it.

        .. math:: s = \sum_{c} \frac{w_c}{\sum_{c'} w_{c'}}\, s_c

        over the sources :math:`c` the question has (:meth:`seed_components`; weights
        ``seed_weights``). Without hybrid settings the only source is the entity seeds, so
        :math:`s` is :func:`~aethel_lite.core.bct.seed_vector` of the question's expansions. Without
        any source, :math:`s` is the BM25-seeded teleport (``fallback="bm25"``) or nothing (``"none"``).

        Parameters
        ----------
        text : str
            The question.
        graph : EntityGraph, optional
            Default: the fitted graph (open corpus).
        corpus_idx : ndarray of int, optional
            Corpus indices of ``graph``'s passages (default: all, for the fitted graph).
        scores : mapping, optional
            This question's row of :meth:`query_scores` (computed when needed and missing).

        Returns
        -------
        expansions : list of Expansion
            The entity seeds (empty when the question names no graph entity).
        seeds : ndarray, shape (graph.n_nodes,), or None
            Sums to 1; ``None`` when there is no seed and no fallback.
        fallback : bool
            Whether ``seeds`` is the BM25 teleport.
        """
        exps, seeds, fallback, _ = self._personalize(text, graph, corpus_idx, scores)
        return exps, seeds, fallback

    def _personalize(self, text, graph=None, corpus_idx=None, scores=None) -> tuple:
        """:meth:`personalization` plus the components and their shares (for attribution)."""
        self._check_fitted()
        graph = self.graph_ if graph is None else graph
        exps, comps, named = self.seed_components(text, graph, corpus_idx, scores=scores)
        mix = self._mixture(comps)
        if mix:
            seeds = sum(share * comps[c] for c, share in mix.items())
            return exps, seeds / seeds.sum(), False, {"components": comps, "mix": mix, "named": named}
        if self.fallback == "none":
            return exps, None, False, None
        idx = np.arange(len(self.pids_)) if corpus_idx is None else corpus_idx
        bm25 = scores.get("lexical") if scores else None
        return exps, self._teleport(text, graph, idx, bm25), True, None

    def ppr(self, texts: Sequence[str]) -> tuple:
        r"""Personalized PageRank over every node of the fitted graph, one column per question.

        Solves :math:`p = \alpha s + (1 - \alpha) W p` with the retriever's operator,
        ``alpha``, ``tol`` and ``max_iter`` for each question's :meth:`personalization` :math:`s`,
        all questions as one batch (callers pass blocks; :meth:`search` passes 64).

        Returns
        -------
        P : ndarray, shape (graph_.n_nodes, len(texts))
            Passages first, then entities (the graph's node order). A column is all zero when
            its question has no seed and ``fallback="none"``.
        expansions : list of list of Expansion
        fallback : list of bool
            Whether each question used the BM25 teleport.
        """
        P, exps, used, _, _ = self._ppr_block(texts)
        return P, exps, used

    def _ppr_block(self, texts: Sequence[str]) -> tuple:
        self._check_fitted()
        self._check_modes()
        texts = list(texts)
        scores = self.query_scores(texts)
        rows = [{k: v[j] for k, v in scores.items()} for j in range(len(texts))]
        P = np.zeros((self.graph_.n_nodes, len(texts)))
        if not self.memo and len(texts) > 1:  # one spaCy call for the block, not one per question
            distinct = list(dict.fromkeys(texts))
            self._block_mentions = dict(zip(distinct, self.extractor_.extract(distinct, progress=False)))
        try:
            found = [self._personalize(t, None, None, rows[j]) for j, t in enumerate(texts)]
        finally:
            self._block_mentions = None
        live = [j for j, f in enumerate(found) if f[1] is not None]
        if live:
            cols = np.stack([found[j][1] for j in live], axis=1)
            P[:, live] = self.operator_.run(cols, alpha=self.alpha, tol=self.tol, max_iter=self.max_iter).scores
        return P, [f[0] for f in found], [f[2] for f in found], [f[3] for f in found], rows

    def ranking_scores(self, text: str, ppr: np.ndarray, corpus_idx: np.ndarray | None = None, *,
                       lexical: np.ndarray | None = None, dense: np.ndarray | None = None,
                       doc_ppr: np.ndarray | None = None, heading: np.ndarray | None = None) -> np.ndarray:
        r"""Corpus-length scores that :meth:`search` ranks.

        Parameters
        ----------
        text : str
            The question (for the BM25 order of unreached passages).
        ppr : ndarray
            PPR of the passages at ``corpus_idx`` (default: every passage, in corpus order).
        corpus_idx : ndarray of int, optional
        lexical, dense, heading : ndarray, optional
            The question's corpus-wide BM25 / dense / heading scores (computed when needed and missing).
        doc_ppr : ndarray, optional
            PPR of each candidate's document node, aligned with ``ppr`` (needed by a
            ``"document"`` ranking term).

        Returns
        -------
        ndarray, shape (n_corpus,)
            Without ``rank_weights`` (PageRank order): reached passages (PPR > 0) score their PPR
            rounded to ``tol / 100`` -- PPR is only accurate to ``tol`` (L1), and rounding turns
            floating-point noise between equivalent passages (same entities, so equal PPR) into
            exact ties, which :func:`topk` breaks by corpus order, the same whether the query was
            solved alone or in a batch. Unreached candidates:
            :math:`-1 + \text{bm25}/(1 + \max \text{bm25}) \in [-1, 0)` with ``fallback="bm25"``,
            :math:`-\infty` (unranked) with ``"none"``. Non-candidates: :math:`-\infty`.

            With ``rank_weights`` :math:`\lambda` (normalised to sum 1) every candidate :math:`d` scores

            .. math::

                r(d) = \lambda_\text{ppr}\, \hat p_d + \lambda_\text{document}\, \hat\pi_{D(d)}
                     + \lambda_\text{lexical}\, \hat b_d + \lambda_\text{dense}\, \hat c_d
                     + \lambda_\text{heading}\, \hat h_d ,
                \qquad \hat x_d = \frac{x_d - \min_{d'} x_{d'}}{\max_{d'} x_{d'} - \min_{d'} x_{d'}}

            (:math:`p` the passage's PPR, :math:`\pi_{D(d)}` the PPR of its document node,
            :math:`b` BM25, :math:`c` the dense cosine, :math:`h` the dense cosine with the
            passage's heading; min and max over the candidates, a term
            with :math:`\max = \min` contributes 0), rounded the same way.
        """
        n_corpus = len(self.pids_)
        corpus_idx = np.arange(n_corpus) if corpus_idx is None else corpus_idx
        out = np.full(n_corpus, -np.inf)
        decimals = max(0, math.ceil(-math.log10(self.tol))) + 2
        weights = self._rank_weights()
        if weights is not None:
            terms = self._rank_terms(text, ppr, corpus_idx, lexical=lexical, dense=dense, doc_ppr=doc_ppr,
                                     heading=heading)
            mixed = sum(weights[t] * terms[t] for t in weights)
            out[corpus_idx] = np.round(mixed, decimals)
            return out
        reached = ppr > 0
        out[corpus_idx[reached]] = np.round(ppr[reached], decimals)
        if self.fallback == "bm25":
            bm25 = (self.bm25_.get_scores(text) if lexical is None else lexical)[corpus_idx[~reached]]
            out[corpus_idx[~reached]] = -1.0 + bm25 / (1.0 + (bm25.max() if bm25.size else 0.0))
        return out

    def _rank_terms(self, text, ppr, corpus_idx, *, lexical=None, dense=None, doc_ppr=None,
                    heading=None) -> dict[str, np.ndarray]:
        """The min–max normalised terms :math:`\\hat x` of :meth:`ranking_scores` over the candidates."""

        def unit(x: np.ndarray) -> np.ndarray:
            lo, hi = (float(x.min()), float(x.max())) if x.size else (0.0, 0.0)
            return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x, dtype=np.float64)

        weights = self._rank_weights() or {}
        out = {}
        if "ppr" in weights:
            out["ppr"] = unit(np.asarray(ppr, dtype=np.float64))
        if "document" in weights:
            if doc_ppr is None:
                raise ParameterError("ranking_scores: a 'document' term needs doc_ppr")
            out["document"] = unit(np.asarray(doc_ppr, dtype=np.float64))
        if "lexical" in weights:
            out["lexical"] = unit((self.bm25_.get_scores(text) if lexical is None else lexical)[corpus_idx])
        if "dense" in weights:
            if dense is None:
                dense = self.dense_.score_texts([text])[0]
            out["dense"] = unit(np.asarray(dense, dtype=np.float64)[corpus_idx])
        if "heading" in weights:
            if heading is None:
                heading = self.query_scores([text])["heading"][0]
            out["heading"] = unit(np.asarray(heading, dtype=np.float64)[corpus_idx])
        return out

    def _doc_nodes(self, graph, corpus_idx: np.ndarray | None) -> np.ndarray | None:
        """Node index (in ``graph``) of each candidate's document node, or None without document nodes.

        The whole corpus's (``corpus_idx`` None) is computed once per fitted graph and kept: a
        search would otherwise spend ~10 ms re-deriving 10,000 node names.
        """
        if not self.document_nodes:
            return None
        kept = getattr(self, "_all_doc_nodes", None)
        if corpus_idx is None and kept is not None and kept[0] is graph:
            return kept[1]
        idx = np.arange(len(self.pids_)) if corpus_idx is None else corpus_idx
        nodes = np.array([self._doc_node(graph, i) for i in idx], dtype=np.int64)
        if corpus_idx is None:
            nodes.setflags(write=False)
            self._all_doc_nodes = (graph, nodes)
        return nodes

    def _note(self, qid: str, exps: list, fallback: bool, graph, ppr: np.ndarray, parts=None, corpus_idx=None,
              extra=None) -> None:
        """Record a query's seeds, graph and diagnostics (``bm25_ordered_top5`` is set by search)."""
        self.seeds_[qid] = exps
        self._graphs[qid] = graph
        if parts is not None:
            self._parts[qid] = (parts, corpus_idx, extra)
        self.diagnostics_[qid] = {"fallback": bool(fallback), "n_seed_entities": len(exps),
                                  "n_reached": int(np.count_nonzero(ppr > 0)), "bm25_ordered_top5": 0}
        if self.is_hybrid:
            self.diagnostics_[qid]["sources"] = sorted(parts["mix"]) if parts else []

    def _score_queries(self, queries, candidates):
        from tqdm.auto import tqdm


        self._check_modes()
        self.seeds_, self._graphs, self.diagnostics_, self._parts = {}, {}, {}, {}
        n_p = self.graph_.n_passages
        docs_all = self._doc_nodes(self.graph_, None)
        # open-corpus queries: one batched PPR (in blocks) on the full graph
        open_q = [q for q, c in zip(queries, candidates) if c is None]
        open_scores: dict[str, dict] = {}
        for start in range(0, len(open_q), _BLOCK):
            chunk = open_q[start:start + _BLOCK]
            P, exps, used, parts, rows = self._ppr_block([q.text for q in chunk])
            for j, q in enumerate(chunk):
                extra = {"ppr": P[:n_p, j], "lexical": rows[j].get("lexical"), "dense": rows[j].get("dense"),
                         "heading": rows[j].get("heading"), "doc_ppr": None if docs_all is None else P[docs_all, j]}
                open_scores[q.qid] = extra
                self._note(q.qid, exps[j], used[j], self.graph_, P[:n_p, j], parts[j], None, extra)
        for q, cand in tqdm(list(zip(queries, candidates)), desc=f"{self.name} search", disable=not self.progress, leave=False):
            if cand is None:
                e = open_scores.pop(q.qid)
                yield self.ranking_scores(q.text, e["ppr"], lexical=e["lexical"], dense=e["dense"], doc_ppr=e["doc_ppr"],
                                          heading=e["heading"])
                continue
            graph = self.pool_graph(cand)
            row = {k: v[0] for k, v in self.query_scores([q.text]).items()}
            exps, seeds, used, parts = self._personalize(q.text, graph, cand, row)
            full = np.zeros(graph.n_nodes)
            if seeds is not None:
                op = PPROperator(graph.adjacency())
                full = op.run(seeds, alpha=self.alpha, tol=self.tol, max_iter=self.max_iter).scores
            ppr = full[: graph.n_passages]
            docs = self._doc_nodes(graph, cand)
            extra = {"ppr": ppr, "lexical": row.get("lexical"), "dense": row.get("dense"),
                     "heading": row.get("heading"), "doc_ppr": None if docs is None else full[docs]}
            self._note(q.qid, exps, used, graph, ppr, parts, cand, extra)
            yield self.ranking_scores(q.text, ppr, cand, lexical=extra["lexical"], dense=extra["dense"],
                                      doc_ppr=extra["doc_ppr"], heading=extra["heading"])

    def pool_graph(self, corpus_idx: np.ndarray):
        """The graph of a closed pool: its passages, their entities and (hybrid) their documents' nodes.

        Without document or metadata nodes this is ``graph_.subgraph`` of the pool. With them, the
        entity subgraph of the pool gets :func:`~aethel_lite.core.docmeta.add_document_nodes` for the
        pool's passages, so the metadata nodes (joined to documents, not passages) stay in it.
        """
        pids = [self.pids_[i] for i in corpus_idx]
        if self.doc_meta_ is None:
            return self.graph_.subgraph(pids)

        return add_document_nodes(self._base_graph.subgraph(pids), [self._passages[i] for i in corpus_idx],
                                  self.doc_meta_, documents=bool(self.document_nodes), metadata=bool(self.metadata))

    def _attribute(self, run: Run) -> None:
        r"""Fill :attr:`sources_`: each explained hit's score split by seed source.

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

        self.sources_ = {}
        todo = [qid for qid in run if qid in self._parts]
        weights = self._rank_weights() or {"ppr": 1.0}

        def solve(graph, op, cols):
            return op.run(np.stack(cols, axis=1), alpha=self.alpha, tol=self.tol, max_iter=self.max_iter).scores

        solved: dict[tuple[str, str], np.ndarray] = {}
        open_cols, owners = [], []
        for qid in todo:
            parts, cand, _ = self._parts[qid]
            if cand is None:
                for c in parts["mix"]:
                    open_cols.append(parts["components"][c])
                    owners.append((qid, c))
        def weigh(qid, names, columns, dangling):
            # the operator normalises each seed column to sum 1: weigh the solutions exactly (linearity)
            mix = self._parts[qid][0]["mix"]
            w = part_weights(np.stack(columns, axis=1), [mix[c] for c in names], dangling, self.alpha)
            for c, col, wc in zip(names, columns, w):
                solved[(qid, c)] = wc * col

        raw: dict[str, dict[str, np.ndarray]] = {}
        for start in range(0, len(open_cols), _BLOCK):
            P = solve(self.graph_, self.operator_, open_cols[start:start + _BLOCK])
            for j, (qid, c) in enumerate(owners[start:start + _BLOCK]):
                raw.setdefault(qid, {})[c] = P[:, j]
        for qid, cols in raw.items():
            weigh(qid, list(cols), list(cols.values()), self.operator_.dangling)
        for qid in todo:
            parts, cand, extra = self._parts[qid]
            graph = self._graphs[qid]
            if cand is not None:
                names = list(parts["mix"])
                op = PPROperator(graph.adjacency())
                P = solve(graph, op, [parts["components"][c] for c in names])
                weigh(qid, names, [P[:, j] for j in range(len(names))], op.dangling)
            idx = np.arange(len(self.pids_)) if cand is None else cand
            terms = self._rank_terms("", extra["ppr"], idx, lexical=extra["lexical"], dense=extra["dense"],
                                     doc_ppr=extra["doc_ppr"], heading=extra["heading"]) if self.rank_weights is not None else {}
            docs = self._doc_nodes(graph, cand)
            out = {}
            for pid, _ in run[qid][: self.provenance_depth]:
                i = graph.pid_index[pid]
                share = dict.fromkeys(SOURCES, 0.0)
                for t, w in weights.items():
                    size = w * (float(terms[t][i]) if terms else 1.0)
                    if size <= 0:
                        continue
                    if t in ("ppr", "document"):
                        node = i if t == "ppr" else int(docs[i])
                        parts_at = {c: max(float(solved[(qid, c)][node]), 0.0) for c in parts["mix"]}
                        total = sum(parts_at.values())
                        for c, v in parts_at.items():
                            share[c] += size * v / total if total > 0 else 0.0
                    else:
                        share[_TERM_SOURCE.get(t, t)] += size
                total = sum(share.values())
                out[pid] = {c: v / total for c, v in sorted(share.items(), key=lambda kv: (-kv[1], SOURCES.index(kv[0])))
                            if v > 0 and total > 0}
            self.sources_[qid] = out

    def _source_records(self, qid: str, pid: str, exps: list, graph) -> list:
        """Provenance records of a hybrid hit: one per seed source, largest share first."""

        parts = self._parts[qid][0]
        shares = self.sources_.get(qid, {}).get(pid, {})
        out = []
        for c, share in shares.items():
            if c == "entity":
                mentioned = provenance(pid, exps, graph)
                best = mentioned[0] if mentioned else (exps[0] if exps else None)
                seed, node = (best.seed, best.entity) if best else ("", "")
            elif c == "metadata":
                named = parts["named"]
                seed = max(named, key=lambda k: (named[k], k)) if named else ""
                node = seed
                if self.doc_meta_ is not None:

                    d = self.doc_meta_.get(self._doc_of(pid))
                    if d is not None:
                        mine = [k for k in d.keys() if k in named]
                        if mine:
                            seed = max(mine, key=lambda k: (named[k], k))
                        node = PREFIXES["doc"] + _slug(d.doc_id) if self.document_nodes else seed
            else:
                seed, node = ("bm25" if c == "lexical" else "dense"), pid
            out.append(Expansion(seed, node, c, round(float(share), 6)))
        return out

    def seed_pieces(self, text: str, graph=None, corpus_idx: np.ndarray | None = None, *,
                    scores: Mapping[str, np.ndarray] | None = None) -> tuple[np.ndarray | None, list]:
        """The question's teleport vector and, for every seed node, what put mass there.

        Returns
        -------
        seeds : ndarray, shape (graph.n_nodes,), or None
            The teleport :math:`s` that :meth:`search` uses (:meth:`personalization`); ``None``
            without seeds and with ``fallback="none"``.
        pieces : list of (node, mass, seed, entity, via)
            One per (seed node, label); the masses at a node sum to its ``seeds`` value. Entity
            seeds carry their BCT expansion (query key, graph entity, rule); metadata nodes
            ``via="metadata"``; hybrid passage seeds ``("bm25" | "dense", pid, "lexical" | "dense")``;
            the BM25 fallback ``("bm25", pid, "bm25-teleport")``.
        """
        self._check_fitted()
        graph = self.graph_ if graph is None else graph
        if scores is None:
            scores = {k: v[0] for k, v in self.query_scores([text]).items()}
        exps, seeds, fallback, parts = self._personalize(text, graph, corpus_idx, scores)
        pieces: list = []
        if seeds is None:
            return None, pieces
        n_p = graph.n_passages
        if fallback:
            for i in np.flatnonzero(seeds):
                pieces.append((int(i), float(seeds[i]), "bm25", graph.pids[int(i)], "bm25-teleport"))
            return seeds, pieces
        mix, comps = parts["mix"], parts["components"]
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
                for node in np.flatnonzero(vec):
                    node = int(node)
                    if c == "metadata":
                        key = graph.entities[node - n_p]
                        pieces.append((node, share * float(vec[node]), key, key, "metadata"))
                    else:
                        pieces.append((node, share * float(vec[node]), "bm25" if c == "lexical" else "dense",
                                       graph.pids[node], c))
        return seeds, pieces

    def explain(self, text: str, pids, pool: Sequence[str] | None = None) -> dict:
        r"""Exact per-seed shares of each passage's PageRank for one question.

        The teleport :math:`s` of the question (as :meth:`search` builds it) is split by seed
        node and PageRank is solved once per seed node; by linearity the contributions sum to the
        passage's PageRank (:func:`aethel_lite.core.provenance.ppr_parts`). A node seeded by two
        sources (a passage that is both a BM25 and a dense seed) splits its contribution in
        proportion to their masses.

        Parameters
        ----------
        text : str
            The question.
        pids : iterable of str
            Passages to explain (e.g. a ranking's hits); each must be in the graph searched.
        pool : sequence of str, optional
            The closed pool (candidate pids) the question was ranked in, as given to
            :meth:`search`; default: the whole fitted corpus.

        Returns
        -------
        dict
            pid → list of :class:`~aethel_lite.core.provenance.SeedShare`, largest share first (ties:
            seed, entity), seeds contributing nothing left out. The shares of a passage sum to
            its PageRank :math:`p_i` (to within ``tol``); a passage PPR does not reach (ranked
            by BM25) has an empty list. Without rank weights a reached passage's :meth:`search`
            score is :math:`p_i` rounded; with them it mixes normalised terms, and the shares
            explain its PageRank term. When the graph enters the ranking only through the
            document term (a ``"document"`` rank weight and no ``"ppr"`` weight, as in
            ``aethel-hybrid``; :attr:`explains_documents`), the shares explain the PageRank
            :math:`\pi_{D(i)}` of the passage's *document node* instead, and sum to it.

        References
        ----------
        Jeh, G. & Widom, J. (2003). Scaling personalized web search. WWW '03.
        """

        self._check_fitted()
        pids = list(pids)
        corpus_idx = None
        if pool is not None:

            corpus_idx = self._resolve_pool(Query(qid="explain", text=text, gold=frozenset()), {"explain": pool})
        graph = self.graph_ if corpus_idx is None else self.pool_graph(corpus_idx)
        rows = np.array([self._explained_node(graph, pid) for pid in pids], dtype=np.int64)
        seeds, pieces = self.seed_pieces(text, graph, corpus_idx)
        out: dict = {pid: [] for pid in pids}
        if seeds is None or not pieces or not pids:
            return out
        nodes = sorted({p[0] for p in pieces})
        col = {node: j for j, node in enumerate(nodes)}
        parts = np.zeros((graph.n_nodes, len(nodes)))
        for node, mass, *_ in pieces:
            parts[node, col[node]] += mass
        op = self.operator_ if graph is self.graph_ else PPROperator(graph.adjacency())
        C = ppr_parts(op, parts, alpha=self.alpha, tol=self.tol, max_iter=self.max_iter, rows=rows)
        at_node = parts.sum(axis=0)
        for r, pid in enumerate(pids):
            shares = []
            for node, mass, seed, entity, via in pieces:
                v = float(C[r, col[node]]) * mass / at_node[col[node]]
                if v > 0:
                    shares.append(SeedShare(str(seed), str(entity), via, v))
            out[pid] = sorted(shares, key=lambda s: (-s.share, s.seed, s.entity, s.via))
        return out

    def _doc_of(self, pid: str) -> str:
        return self.doc_ids_[self.pid_index_[pid]]

    @property
    def explains_documents(self) -> bool:
        """Whether :meth:`explain` splits each hit's *document node* PageRank (the graph's only
        ranking term: a ``"document"`` rank weight, no ``"ppr"`` weight) rather than its own."""
        weights = self._rank_weights() or {}
        return bool(self.document_nodes) and weights.get("document", 0) > 0 and weights.get("ppr", 0) == 0

    def _doc_node(self, graph, i: int) -> int:
        """Node index (in ``graph``) of the document node of fitted passage ``i``."""

        return graph.n_passages + graph.entity_index[PREFIXES["doc"] + _slug(self.doc_ids_[i])]

    def _explained_node(self, graph, pid: str) -> int:
        node = graph.passage_node(pid)  # a pid outside the graph searched is an error either way
        return self._doc_node(graph, self.pid_index_[pid]) if self.explains_documents else node

    def search(self, queries, k: int = 10, pool=None) -> Run:
        r"""As :meth:`Retriever.search`; also fills :attr:`provenance_`, :attr:`seeds_` and :attr:`diagnostics_`.

        With ``fallback="none"`` unranked passages (score :math:`-\infty`) are left out, so a
        ranking may hold fewer than ``k`` hits. With hybrid seeds, :attr:`sources_` splits each
        explained hit's score by seed source (:meth:`_attribute`), and its provenance starts with
        one record per source (``via`` = ``"entity"``, ``"metadata"``, ``"lexical"`` or
        ``"dense"``; ``weight`` = the source's share), largest first, before the entity expansions.
        """

        run = super().search(queries, k=k, pool=pool)
        run.name = self.name
        self.provenance_ = {}
        self._top5_slots = min(int(k), 5)
        for qid, hits in run.items():
            run[qid] = [(pid, score) for pid, score in hits if score != -math.inf]
        if self.is_hybrid and self.provenance_depth > 0:
            self._attribute(run)
        else:
            self.sources_ = {}
        for qid, hits in run.items():
            self.diagnostics_[qid]["bm25_ordered_top5"] = sum(1 for _, score in hits[:5] if score < 0)
            graph = self._graphs[qid]
            exps = self.seeds_.get(qid, [])
            prov = {}
            for pid, _ in hits[: self.provenance_depth]:
                records = self._source_records(qid, pid, exps, graph) if qid in self.sources_ else []
                prov[pid] = records + provenance(pid, exps, graph)
            self.provenance_[qid] = prov
        self._graphs, self._parts = {}, {}
        return run

    def diagnostics_summary(self) -> dict:
        """How much of the last :meth:`search` came from the BM25 fallback rather than the graph.

        Returns
        -------
        dict
            ``"fallback_share"``: share of the questions whose teleport was the BM25 fallback;
            ``"bm25_top5_share"``: share of all top-5 slots (``min(k, 5)`` per question) filled by
            unreached passages in BM25 order; ``"n_queries"``. Shares are ``None`` without queries.

        Raises
        ------
        RuntimeError
            :meth:`search` has not been called.
        """
        diag = getattr(self, "diagnostics_", None)
        if diag is None or not hasattr(self, "_top5_slots"):
            raise RuntimeError("GraphRetriever.diagnostics_summary: call search() first")
        n = len(diag)
        slots = n * self._top5_slots
        return {"fallback_share": sum(d["fallback"] for d in diag.values()) / n if n else None,
                "bm25_top5_share": sum(d["bm25_ordered_top5"] for d in diag.values()) / slots if slots else None,
                "n_queries": n}
