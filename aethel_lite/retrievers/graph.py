r"""The paper's retriever: entity graph, question seeds (with or without BCT), Personalized PageRank.

:meth:`GraphRetriever.fit` builds the bipartite passage–entity graph (:func:`aethel_lite.core.graph.build_graph`)
from every passage's entities (cached on disk; ``ner3`` drops stop-entities and links entities whose names contain
one another), a BM25 index, the PageRank operator and the indexes a question is linked with. ``search`` seeds
Personalized PageRank on the question's entities (:mod:`aethel_lite.core.linking`; widened by BCT when
``bct != "none"``),

.. math:: p = \alpha s + (1 - \alpha) W p ,

and ranks passages by :math:`p`. In the closed-pool setting PPR runs on the subgraph of the question's candidate
passages and their entities (the paper's per-question graph).

**Fallback** (``fallback="bm25"``, the default): a question without graph entities teleports to its top
``fallback_depth`` BM25 passages in proportion to their scores; with ``"none"`` (the *pure graph*) it ranks nothing.

**Ordering**: with ``fallback="bm25"``, passages PPR does not reach (score 0) follow every reached passage,
ordered by BM25, with score :math:`-1 + \text{bm25}/(1 + \max \text{bm25}) \in [-1, 0)`. With
``fallback="none"`` they are left out of the run (score :math:`-\infty`): a run may hold fewer than ``k`` hits.

References
----------
Haveliwala, T. H. (2002). Topic-sensitive PageRank. WWW.
Gutiérrez, B. J. et al. (2024). HippoRAG: Neurobiologically inspired long-term memory for LLMs.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..caching.memo import is_shared
from ..core import linking
from ..core.bct import MODES, expand_seeds, seed_vector, token_index
from ..core.entities import extract_entities, get_extractor, graph_filters, normalize_entity
from ..core.graph import EntityGraph, build_graph
from ..core.ppr import PPROperator, _check_alpha
from ..data.schema import passage_text
from ..errors import DataError, ParameterError
from .base import IDS_FILE, PassageIds, Retriever, read_ids, write_ids
from .bm25 import BM25Retriever
from .traces import PageRankSearch, Teleport

__all__ = [
    "GraphRetriever",
    "entity_graph",
    "PassageIds",
    "read_ids",
    "write_ids",
    "bm25_teleport",
    "ppr_order",
    "score_decimals",
]

_FALLBACKS = ("bm25", "none")


def entity_graph(
    passages: Sequence, extractor: Any, *, cache: bool = True, n_process: int = 1, progress: bool = False
) -> EntityGraph:
    """The passage–entity graph of ``passages`` with ``extractor`` (a name or an extractor): every passage's
    entities (:func:`~aethel_lite.core.entities.extract_entities`, cached), the extractor's stop-entities and alias
    links (:func:`~aethel_lite.core.entities.graph_filters`), then :func:`~aethel_lite.core.graph.build_graph`."""
    extractor = get_extractor(extractor)
    mentions = extract_entities(
        [passage_text(p) for p in passages],
        extractor,
        cache=cache,
        n_process=n_process,
        progress=progress,
        memo=is_shared(),
    )
    stop, links = graph_filters(mentions, extractor)
    return build_graph([p.pid for p in passages], mentions, stop=stop, alias_pairs=links)


def bm25_teleport(bm25: np.ndarray, n_nodes: int, n_passages: int, depth: int) -> np.ndarray:
    """The BM25 teleport: the top ``depth`` of the candidates' ``bm25`` scores, in proportion to their scores
    (uniform over the ``n_passages`` passage nodes when none is positive), over ``n_nodes`` nodes, summing to 1."""
    top = np.argsort(-bm25, kind="stable")[: max(int(depth), 1)]
    seeds = np.zeros(n_nodes)
    seeds[top] = np.maximum(bm25[top], 0.0)
    if not seeds.any():  # nothing at all to go on: uniform over the candidate passages
        seeds[:n_passages] = 1.0
    return seeds / seeds.sum()


def ppr_order(ppr: np.ndarray, bm25: np.ndarray | None, tol: float) -> np.ndarray:
    r"""Scores of candidates in PageRank order: reached ones their PageRank rounded to ``tol / 100`` (noise between
    equivalent passages becomes exact ties, broken by corpus order), unreached ones
    :math:`-1 + \text{bm25}/(1 + \max \text{bm25})` after them, or :math:`-\infty` when ``bm25`` is None."""
    out = np.full(ppr.shape[0], -np.inf)
    reached = ppr > 0
    out[reached] = np.round(ppr[reached], score_decimals(tol))
    if bm25 is not None:
        rest = bm25[~reached]
        out[~reached] = -1.0 + rest / (1.0 + (rest.max() if rest.size else 0.0))
    return out


def score_decimals(tol: float) -> int:
    """Decimals a ranking score keeps: two more than ``tol`` resolves."""
    return max(0, math.ceil(-math.log10(tol))) + 2


class GraphRetriever(PageRankSearch, Retriever):
    r"""Entity-graph retrieval, the paper's method: question entities → seed vector (± BCT) → Personalized PageRank.

    Parameters
    ----------
    extractor : {"regex", "ner", "ner3"} or extractor
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
        Add graph entities named verbatim in the question to its seeds (:mod:`aethel_lite.core.linking`).
    fallback : {"bm25", "none"}
        ``"bm25"``: BM25 teleport for entity-less questions, BM25 order for unreached passages; ``"none"``: neither.
    fallback_depth : int
        BM25 passages seeding the teleport of a question without entities.
    n_process : int
        spaCy worker processes for entity extraction.
    cache : bool
        Cache passage entities on disk.
    progress : bool
        Show progress bars.

    Attributes
    ----------
    graph_, operator_, bm25_, extractor_ : EntityGraph, PPROperator, BM25Retriever, extractor
        The graph, its PageRank operator (prepared for ``alpha``), the BM25 index, the extractor.
    names_ : NameIndex or None
        The names a question is linked to verbatim (``None`` without ``link_query_ngrams``).
    tokens_ : TokenIndex or None
        BCT's token index of the graph's entities (substring modes).
    doc_ids_ : list of str
        The fitted passages' ``doc_id``, in corpus order.
    """

    name = "graph"

    def __init__(
        self,
        extractor: str = "ner3",
        bct: str = "none",
        alpha: float = 0.5,
        tol: float = 1e-8,
        max_iter: int = 1000,
        alias_table: Mapping[str, Sequence[str]] | None = None,
        link_query_ngrams: bool = True,
        fallback: str = "bm25",
        fallback_depth: int = 10,
        n_process: int = 1,
        cache: bool = True,
        progress: bool = False,
    ):
        self.extractor, self.bct, self.alpha, self.tol, self.max_iter = extractor, bct, alpha, tol, max_iter
        self.alias_table, self.link_query_ngrams = alias_table, link_query_ngrams
        self.fallback, self.fallback_depth = fallback, fallback_depth
        self.n_process, self.cache, self.progress = n_process, cache, progress

    def _extractor(self):
        """The entity extractor the ``extractor`` setting names (or is)."""
        return get_extractor(self.extractor) if isinstance(self.extractor, str) else self.extractor

    def _check_settings(self) -> None:
        _check_alpha(self.alpha)
        if self.bct not in MODES:
            raise ParameterError(f"bct must be one of {', '.join(MODES)}; got {self.bct!r}")
        if self.fallback not in _FALLBACKS:
            raise ParameterError(f"fallback must be one of {', '.join(_FALLBACKS)}; got {self.fallback!r}")

    def parts(self) -> list[str]:
        """The index parts ``save`` writes (file groups an index shares between methods: :mod:`aethel_lite.search.index`)."""
        return ["bm25", graph_folder(self.extractor)]

    # -- fit ------------------------------------------------------------------------------------------------------

    def fit(self, passages: Sequence) -> GraphRetriever:
        """Extract every passage's entities (:func:`~aethel_lite.core.entities.extract_entities`), build the
        bipartite graph (:func:`~aethel_lite.core.graph.build_graph`) and the BM25 index, then everything a search
        reads: the PageRank operator and the linking indexes. Returns ``self``."""
        self._check_settings()  # before the (slow) entity extraction
        passages = self._index_passages(passages)
        extractor = self._extractor()
        graph = entity_graph(
            passages, extractor, cache=self.cache, n_process=self.n_process, progress=self.progress
        )
        return self._learn(passages, graph, BM25Retriever().fit(passages), extractor)

    @classmethod
    def from_graph(
        cls, passages: Sequence, graph: EntityGraph, bm25: BM25Retriever, **params: Any
    ) -> GraphRetriever:
        """A fitted retriever with settings ``params`` over a graph and a BM25 index of ``passages`` built elsewhere
        (the agents' company-linked graph): what ``fit`` learns besides them, from them."""
        r = cls(**params)
        r._check_settings()
        passages = r._index_passages(passages)
        if list(graph.pids) != r.pids_ or bm25.pids_ != r.pids_:
            raise DataError(
                "GraphRetriever.from_graph: the graph's or BM25 index's passage ids differ from the passages'"
            )
        extractor = r._extractor()
        return r._learn(passages, graph, bm25, extractor)

    def _learn(
        self, passages: Sequence, graph: EntityGraph, bm25: BM25Retriever, extractor
    ) -> GraphRetriever:
        """The fitted attributes from the passages' ids, the graph, the BM25 index and the extractor."""
        self.doc_ids_ = [p.doc_id for p in passages]
        self.extractor_ = extractor
        self.graph_, self.bm25_ = graph, bm25
        self.operator_ = PPROperator(graph.adjacency()).prepare(self.alpha)
        self.names_ = self._names(graph) if self.link_query_ngrams else None
        self.tokens_ = token_index(graph) if self.bct in ("substring", "both") else None
        return self

    def _names(self, graph: EntityGraph) -> linking.NameIndex:
        if self.alias_table and self.bct in ("alias", "both"):
            return linking.NameIndex.of(set(graph.entities) | {normalize_entity(k) for k in self.alias_table})
        return linking.NameIndex.of(graph.entities)

    # -- files ----------------------------------------------------------------------------------------------------

    def save(self, folder: str | os.PathLike) -> list[str]:
        """Write what ``fit`` learned into ``folder`` (no pickle): ``ids.json`` (passage and document ids in corpus
        order), ``graph-<extractor>/`` (:meth:`EntityGraph.save <aethel_lite.core.graph.EntityGraph.save>`) and
        ``bm25/`` (:meth:`BM25Retriever.save`); returns the files' paths relative to ``folder``, sorted."""
        self._check_fitted()
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        write_ids(folder / IDS_FILE, self.pids_, self.doc_ids_)
        name = graph_folder(self.extractor)
        self.graph_.save(folder / name)
        self.bm25_.save(folder)
        files = [IDS_FILE, f"{name}/graph.json", f"{name}/graph.npz"]
        files += [p.relative_to(folder).as_posix() for p in (folder / "bm25").rglob("*") if p.is_file()]
        return sorted(files)

    @classmethod
    def load(cls, folder: str | os.PathLike, **params: Any) -> GraphRetriever:
        """The retriever :meth:`save` wrote into ``folder``, with settings ``params`` (nothing is extracted):
        it ranks exactly as the one saved. DataError (the file named) when a file is missing or malformed."""
        r = cls(**params)
        r._check_settings()
        folder = Path(folder)
        passages = read_ids(folder / IDS_FILE)
        graph = EntityGraph.load(folder / graph_folder(r.extractor))
        bm25 = BM25Retriever.load(folder)
        if bm25.pids_ != [p.pid for p in passages] or list(graph.pids) != bm25.pids_:
            raise DataError(f"{folder}: the graph's or BM25 index's passage ids differ from {IDS_FILE}")
        r._index_passages(passages)
        extractor = r._extractor()
        return r._learn(passages, graph, bm25, extractor)

    # -- a question -----------------------------------------------------------------------------------------------

    def question_mentions(self, text: str) -> list:
        """The extractor's mentions of one question."""
        self._check_fitted()
        return linking.question_mentions(self.extractor_, text, memo=is_shared())

    def block_mentions(self, texts: Sequence[str]) -> dict:
        """text → mentions of a block of questions, in one extractor call (``{}`` with shared memos or one text)."""
        if is_shared() or len(texts) < 2:
            return {}
        distinct = list(dict.fromkeys(texts))
        return dict(zip(distinct, self.extractor_.extract(distinct, progress=False)))

    def query_key_sources(self, text: str, mentions=None) -> dict[str, str]:
        """Each normalised entity key of a question → ``"mention"`` or ``"ngram"`` (:func:`linking.link`)."""
        self._check_fitted()
        found = self.question_mentions(text) if mentions is None else mentions
        return linking.link(text, found, self.names_)

    def query_keys(self, text: str, mentions=None) -> list[str]:
        """Normalised entity keys of a question: extractor mentions ∪ graph entities named in it."""
        return list(self.query_key_sources(text, mentions))

    def expansions(self, text: str, graph=None, mentions=None, tokens=None) -> list:
        """The BCT expansions of a question's entities over ``graph`` (default: the fitted graph); ``tokens``:
        ``graph``'s token index when the caller holds one (the fitted graph's is :attr:`tokens_`)."""
        if graph is None or graph is getattr(self, "graph_", None):
            graph, tokens = self.graph_, self.tokens_
        keys = self.query_keys(text, mentions)
        return expand_seeds(keys, graph, mode=self.bct, alias_table=self.alias_table, tokens=tokens)

    def fallback_teleport(
        self, text: str, graph, corpus_idx: np.ndarray | None, lexical=None
    ) -> np.ndarray | None:
        """The BM25 teleport over ``graph`` (``None`` under ``fallback="none"``); ``lexical``: the question's
        corpus-wide BM25 scores when the caller has them."""
        if self.fallback == "none":
            return None
        idx = np.arange(len(self.pids_)) if corpus_idx is None else corpus_idx
        bm25 = (self.bm25_.get_scores(text) if lexical is None else lexical)[idx]
        return bm25_teleport(bm25, graph.n_nodes, graph.n_passages, self.fallback_depth)

    def teleport(self, text: str, graph=None, corpus_idx=None, scores=None, mentions=None) -> Teleport:
        """The question's :class:`~aethel_lite.retrievers.traces.Teleport`: its entity seeds
        (:func:`~aethel_lite.core.bct.seed_vector`), else the BM25 teleport."""
        self._check_fitted()
        graph = self.graph_ if graph is None else graph
        exps = self.expansions(text, graph, mentions)
        ent = seed_vector(exps, graph)
        if ent.any():
            parts = {"components": {"entity": ent}, "mix": {"entity": 1.0}, "named": {}}
            return Teleport(exps, ent / ent.sum(), False, parts)
        lexical = scores.get("lexical") if scores else None
        seeds = self.fallback_teleport(text, graph, corpus_idx, lexical)
        return Teleport(exps, seeds, seeds is not None, None)

    def question_scores(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The corpus-wide scores a search needs besides PageRank: none (BM25 is scored where it is used)."""
        return {}

    def pool_graph(self, corpus_idx: np.ndarray) -> EntityGraph:
        """The graph of a closed pool: its passages and their entities."""
        return self.graph_.subgraph([self.pids_[i] for i in corpus_idx])

    def rank(self, text: str, trace) -> np.ndarray:
        """Corpus-length scores that ``search`` ranks: :func:`ppr_order` of the trace's PageRank over its
        candidates, :math:`-\\infty` elsewhere."""
        return self.ppr_scores(text, trace.extra["ppr"], trace.corpus_idx, trace.extra.get("lexical"))

    def ppr_scores(self, text: str, ppr: np.ndarray, corpus_idx=None, lexical=None) -> np.ndarray:
        """:func:`ppr_order` of ``ppr`` (aligned with ``corpus_idx``, default every passage) as corpus-length scores,
        :math:`-\\infty` off the candidates; ``lexical``: the question's BM25 scores when the caller has them."""
        n_corpus = len(self.pids_)
        corpus_idx = np.arange(n_corpus) if corpus_idx is None else corpus_idx
        bm25 = None
        if self.fallback == "bm25":
            bm25 = (self.bm25_.get_scores(text) if lexical is None else lexical)[corpus_idx]
        out = np.full(n_corpus, -np.inf)
        out[corpus_idx] = ppr_order(ppr, bm25, self.tol)
        return out


def graph_folder(extractor: Any) -> str:
    """``graph-<name>``: the folder of the graph built with ``extractor`` (a name or an extractor)."""
    return f"graph-{extractor if isinstance(extractor, str) else extractor.name}"
