r"""The paper's method: entity graph, query seeds (with or without BCT), Personalized PageRank.

:class:`GraphRetriever`'s ``fit`` builds the bipartite passage–entity graph (:func:`aethel_lite.core.graph.build_graph`)
from every passage's entities (cached on disk; ``ner3`` drops stop-entities and links entities whose names contain
one another). ``search`` seeds Personalized PageRank on the query's entities (widened by BCT when ``bct != "none"``),

.. math:: p = \alpha s + (1 - \alpha) W p ,

and ranks passages by :math:`p`. In the closed-pool setting PPR runs on the subgraph of the query's candidate
passages and their entities (the paper's per-question graph).

**Query entities** are the extractor's mentions in the question plus every graph entity (and, when BCT uses an
alias table, every alias-table name) whose normalised name occurs in the normalised question as a whole-token
n-gram with a word written with a capital letter or a digit ("3M", "NRCP IV"; not "capital"), other than a
sentence-initial function word (``link_query_ngrams``).

**Fallback** (``fallback="bm25"``, the default): a query without graph entities teleports to its top
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

import copy
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..caching.memo import TextMemo
from ..core.bct import expand_seeds
from ..core.entities import REGEX_STOP, extract_entities, get_extractor, graph_filters, normalize_entity
from ..core.graph import build_graph
from ..core.ppr import PPROperator, _check_alpha
from ..errors import DataError, ParameterError
from . import anchors, attribution, graph_files, hybrid
from .attribution import QueryTrace, SearchResult
from .base import Retriever, passage_text
from .bm25 import BM25Retriever
from .docmeta import is_meta_key
from .hybrid import _BLOCK, DEFAULT_SEED_WEIGHTS, RANK_TERMS, SOURCES  # noqa: F401  (the last three re-exported)
from .run import Run

__all__ = ["GraphRetriever", "SearchResult", "SOURCES", "RANK_TERMS", "DEFAULT_SEED_WEIGHTS"]

_BCT_MODES = ("none", "alias", "substring", "both")
_FALLBACKS = ("bm25", "none")
# settings whose change needs a new fit (GraphRetriever.set_params)
_REFIT = ("extractor", "alias_table", "cache", "n_process")


def _proper_tokens(text: str) -> frozenset[str]:
    """Normalised words of ``text`` written with a capital letter or a digit, minus function words (``REGEX_STOP``)."""
    out: set[str] = set()
    for raw in text.split():
        word = raw.strip(".,;:!?()[]{}\"'“”‘’")
        if word and word not in REGEX_STOP and any(c.isupper() or c.isdigit() for c in word):
            out.update(normalize_entity(word).split())
    return frozenset(out)


def _ngram_index(names) -> tuple[frozenset, tuple[int, ...]]:
    names = frozenset(n for n in names if n)
    return names, tuple(sorted({len(n.split()) for n in names}))


def _named_ngrams(text: str, names: frozenset, sizes: tuple[int, ...]) -> list[str]:
    """The ``names`` that occur in ``text`` as whole-token n-grams with a word written with a capital or a digit."""
    tokens = normalize_entity(text).split()
    proper = _proper_tokens(text)
    out = []
    for n in sizes:
        for i in range(len(tokens) - n + 1):
            gram = " ".join(tokens[i : i + n])
            if gram in names and any(t in proper for t in tokens[i : i + n]):
                out.append(gram)
    return out


_QUESTION_MENTIONS = TextMemo("question mentions", 100_000)  # see GraphRetriever.memo


def _trace(
    r, text: str, exps, used, parts, row: Mapping, full: np.ndarray, graph, cand, op, docs
) -> QueryTrace:
    """A question's :class:`QueryTrace` from its seeds and its PageRank ``full`` over ``graph``'s nodes."""
    extra = {
        "ppr": full[: graph.n_passages],
        "lexical": row.get("lexical"),
        "dense": row.get("dense"),
        "heading": row.get("heading"),
        "doc_ppr": None if docs is None else full[docs],
    }
    trace = QueryTrace(exps, used, graph, int(np.count_nonzero(extra["ppr"] > 0)), parts, cand, extra)
    extra["anchors"] = anchors.solve(r, text, trace, op, docs)
    return trace


def _open_traces(r, queries) -> dict:
    """qid → :class:`QueryTrace` of open-corpus ``queries``, solved as one PPR batch on the fitted graph."""
    docs = hybrid.doc_nodes(r, r.graph_, None)
    P, exps, used, parts, rows = r._ppr_block([q.text for q in queries])
    return {
        q.qid: _trace(
            r, q.text, exps[j], used[j], parts[j], rows[j], P[:, j], r.graph_, None, r.operator_, docs
        )
        for j, q in enumerate(queries)
    }


def _pool_trace(r, text: str, cand: np.ndarray) -> QueryTrace:
    """The :class:`QueryTrace` of one closed-pool question: PPR on the pool's graph (``pool_graph``)."""
    graph = r.pool_graph(cand)
    row = {k: v[0] for k, v in hybrid.query_scores(r, [text]).items()}
    exps, seeds, used, parts = r._personalize(text, graph, cand, row)
    full = np.zeros(graph.n_nodes)
    op = PPROperator(graph.adjacency())
    if seeds is not None:
        full = op.run(seeds, alpha=r.alpha, tol=r.tol, max_iter=r.max_iter).scores
    return _trace(r, text, exps, used, parts, row, full, graph, cand, op, hybrid.doc_nodes(r, graph, cand))


class GraphRetriever(Retriever):
    r"""Entity-graph retrieval: query entities → seed vector (± BCT) → Personalized PageRank (module docstring).

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
        ``"bm25"``: BM25 teleport for entity-less queries, BM25 order for unreached passages; ``"none"``: neither.
    fallback_depth : int
        BM25 passages seeding the teleport of a query without entities.
    n_process : int
        spaCy worker processes for entity extraction.
    cache : bool
        Cache passage entities on disk.
    progress : bool
    passage_seeds, document_nodes, metadata, period_linking, seed_weights, seed_depth, dense_pooling, rank_weights, period_decay
        The hybrid's settings (:mod:`aethel_lite.retrievers.hybrid`, ``aethel-hybrid``).
    anchors, anchor_gap : {"joint", "each"}, int
        ``"each"``: one PageRank per company or fiscal year a question names (:mod:`aethel_lite.retrievers.anchors`).

    Attributes
    ----------
    graph_, operator_, bm25_ : EntityGraph, PPROperator, BM25Retriever
        The graph searched (with the hybrid's nodes), its PPR operator, the BM25 index.
    dense_, heading_, doc_meta_ : DenseRetriever, DenseRetriever, dict, or None
        The hybrid's dense models and ``doc_id`` → :class:`~aethel_lite.retrievers.docmeta.DocMeta`.
    doc_ids_ : list of str
        The fitted passages' ``doc_id``, in corpus order.
    """

    name = "graph"
    provenance_depth = 100  # hits per query that search(explain=True) explains by default
    _memo = False

    @property
    def memo(self) -> bool:
        """Evaluation option (:attr:`DenseRetriever.memo`), passed on to the inner models; same results either way."""
        return self._memo

    @memo.setter
    def memo(self, value: bool) -> None:
        self._memo = bool(value)
        for inner in (
            getattr(self, "bm25_", None),
            getattr(self, "dense_", None),
            getattr(self, "heading_", None),
        ):
            if inner is not None:
                inner.memo = self._memo
        if self._memo and getattr(self, "extractor_", None) is not None:
            self._mention_settings = json.dumps(self.extractor_.config(), sort_keys=True, default=str)

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
        passage_seeds: Sequence[str] = (),
        document_nodes: bool = False,
        metadata: bool = False,
        period_linking: bool = False,
        seed_weights: Mapping[str, float] | None = None,
        seed_depth: int = 20,
        dense_pooling: str = "first",
        rank_weights: Mapping[str, float] | None = None,
        period_decay: float = 1.0,
        anchors: str = "joint",
        anchor_gap: int = 2,
    ):
        self.extractor, self.bct, self.alpha, self.tol, self.max_iter = extractor, bct, alpha, tol, max_iter
        self.alias_table, self.link_query_ngrams = alias_table, link_query_ngrams
        self.fallback, self.fallback_depth = fallback, fallback_depth
        self.n_process, self.cache, self.progress = n_process, cache, progress
        self.passage_seeds, self.document_nodes, self.metadata = passage_seeds, document_nodes, metadata
        self.period_linking, self.seed_weights, self.seed_depth = period_linking, seed_weights, seed_depth
        self.dense_pooling, self.rank_weights, self.period_decay = dense_pooling, rank_weights, period_decay
        self.anchors, self.anchor_gap = anchors, anchor_gap

    def set_params(self, **changes: Any) -> GraphRetriever:
        """A copy with some settings changed (scikit-learn's ``set_params``, but ``self`` is left unchanged).

        A fitted retriever's copy is fitted, redoing only what the changes touch; it ranks as
        ``GraphRetriever(**copy.get_params()).fit(passages)``. Unknown settings (named) or invalid
        values raise :class:`ParameterError`.
        """
        known = self.param_names()
        bad = [k for k in changes if k not in known]
        if bad:
            raise ParameterError(
                f"set_params: unknown setting {bad[0]!r}; {type(self).__name__} has {', '.join(known)}"
            )
        new = copy.copy(self)
        for key, value in changes.items():
            setattr(new, key, value)
        new._check_modes()
        if not self.is_fitted:
            return new
        if any(k in changes for k in _REFIT):
            return new.fit(self._passages)
        if bool(new.document_nodes) != bool(self.document_nodes) or bool(new.metadata) != bool(self.metadata):
            new._structure(self.doc_meta_)  # None: computed from the passages
        hybrid.fit_dense(new)
        return new

    def config(self) -> dict:
        """JSON-able settings: part of result-cache keys (``studies.anchoring``), so kept byte-identical."""
        return {
            "name": self.name,
            "extractor": self.extractor,
            "bct": self.bct,
            "alpha": self.alpha,
            "tol": self.tol,
            "link_query_ngrams": self.link_query_ngrams,
            "fallback": self.fallback,
            "fallback_depth": self.fallback_depth,
            "alias_table": self.alias_table is not None,
            "passage_seeds": list(self.passage_seeds),
            "document_nodes": bool(self.document_nodes),
            "metadata": bool(self.metadata),
            "period_linking": bool(self.period_linking),
            "seed_weights": hybrid.seed_weights(self),
            "seed_depth": self.seed_depth,
            "dense_pooling": self.dense_pooling,
            "period_decay": self.period_decay,
            "rank_weights": None if self.rank_weights is None else hybrid.rank_weights(self),
            **({} if self.anchors == "joint" else {"anchors": self.anchors, "anchor_gap": self.anchor_gap}),
        }

    @property
    def is_hybrid(self) -> bool:
        """Whether any of the hybrid components (passage seeds, document or metadata nodes) is on."""
        return bool(self.passage_seeds) or bool(self.document_nodes) or bool(self.metadata)

    def _check_modes(self) -> None:
        """Raise :class:`ParameterError` for an invalid mode or hybrid setting (all may be reset after fit)."""
        if self.bct not in _BCT_MODES:
            raise ParameterError(f"bct must be one of {', '.join(_BCT_MODES)}; got {self.bct!r}")
        if self.fallback not in _FALLBACKS:
            raise ParameterError(f"fallback must be one of {', '.join(_FALLBACKS)}; got {self.fallback!r}")
        hybrid.check(self)
        anchors.check(self)

    def _fit(self, passages: list) -> None:
        _check_alpha(self.alpha)  # fail before the (slow) entity extraction
        self._check_modes()
        extractor = get_extractor(self.extractor) if isinstance(self.extractor, str) else self.extractor
        mentions = extract_entities(
            [passage_text(p) for p in passages],
            extractor,
            cache=self.cache,
            n_process=self.n_process,
            progress=self.progress,
            memo=self.memo,
        )
        stop, links = graph_filters(mentions, extractor)
        graph = build_graph(self.pids_, mentions, stop=stop, alias_pairs=links)
        bm25 = BM25Retriever()
        bm25.memo = self.memo
        self._assemble(passages, graph, bm25.fit(passages), extractor=extractor)
        hybrid.fit_dense(self)

    @classmethod
    def from_parts(
        cls,
        params: Mapping[str, Any],
        passages: Sequence,
        graph,
        bm25,
        *,
        extractor=None,
        doc_meta: Mapping | None = None,
        dense=None,
        heading=None,
    ) -> GraphRetriever:
        """A fitted retriever from its parts (what ``fit`` computes), extracting and fitting nothing.

        ``params``: :meth:`get_params` keys; ``passages``: the corpus in order, with ``pid`` and ``doc_id``
        (and ``text``/``title``/``meta`` for document or metadata nodes without ``doc_meta``);
        ``graph``: their passage–entity graph (same pids in order, else :class:`DataError`).
        """
        r = cls(**params)
        r._check_modes()
        passages = r._index_passages(passages)
        if list(graph.pids) != r.pids_:
            raise DataError("GraphRetriever.from_parts: the graph's passage ids differ from the passages'")
        r._assemble(
            passages, graph, bm25, extractor=extractor, doc_meta=doc_meta, dense=dense, heading=heading
        )
        return r

    def save(self, folder) -> list[str]:
        """Write the fitted retriever's files (:func:`aethel_lite.retrievers.graph_files.save`)."""
        return graph_files.save(self, folder)

    @classmethod
    def load(cls, folder, **params: Any) -> GraphRetriever:
        """The retriever :meth:`save` wrote into ``folder``, with settings ``params`` (:func:`~aethel_lite.retrievers.graph_files.load`)."""
        return graph_files.load(cls, folder, **params)

    def _assemble(
        self, passages, graph, bm25, *, extractor=None, doc_meta=None, dense=None, heading=None
    ) -> None:
        """Every fitted attribute, from the parts (the one assembly path of ``fit`` and :meth:`from_parts`)."""
        self.doc_ids_ = [p.doc_id for p in passages]
        self.extractor_ = get_extractor(self.extractor) if extractor is None else extractor
        self._base_graph, self._passages = graph, list(passages)
        self.bm25_, self.dense_, self.heading_ = bm25, dense, heading
        self.memo = self.memo  # the inner models' memo, the question-mention memo's key
        self._structure(doc_meta)

    def _structure(self, metas: Mapping[str, Any] | None = None) -> None:
        """``graph_`` (+ the hybrid's nodes), the PPR operator and the name indexes that questions link to."""
        self.graph_, self.doc_meta_, self._companies = hybrid.structure(
            self, self._base_graph, self._passages, metas
        )
        self.operator_ = PPROperator(self.graph_.adjacency())
        names = _ngram_index(self.graph_.entities)
        aliases = (
            _ngram_index(set(self.graph_.entities) | {normalize_entity(k) for k in self.alias_table})
            if self.alias_table
            else names
        )
        self._linkable = {False: names, True: aliases}
        self._all_doc_nodes = (self.graph_, hybrid.doc_nodes(self, self.graph_, None))

    def query_keys(self, text: str, mentions=None) -> list[str]:
        """Normalised entity keys of a question: extractor mentions ∪ graph entities named in it."""
        return list(self.query_key_sources(text, mentions))

    def _question_mentions(self, text: str) -> list:
        """The extractor's mentions of one question (from the process-wide memo when :attr:`memo`)."""
        if not self.memo:
            return self.extractor_.extract([text], progress=False)[0]
        return list(
            _QUESTION_MENTIONS.map(
                self._mention_settings,
                [text],
                lambda todo: [tuple(ms) for ms in self.extractor_.extract(todo, progress=False)],
            )[0]
        )

    def query_key_sources(self, text: str, mentions=None) -> dict[str, str]:
        """Each normalised entity key of a question → ``"mention"`` (the extractor found it) or ``"ngram"``
        (``link_query_ngrams`` found it), in :meth:`query_keys` order."""
        self._check_fitted()
        found = self._question_mentions(text) if mentions is None else mentions
        keys = {m.key: "mention" for m in found if m.key}
        if self.link_query_ngrams:
            for gram in _named_ngrams(
                text, *self._linkable[bool(self.alias_table) and self.bct in ("alias", "both")]
            ):
                keys.setdefault(gram, "ngram")
        return keys

    def expansions(self, text: str, graph=None, mentions=None) -> list:
        """The BCT expansions of a question's entities over ``graph`` (default: the fitted graph)."""
        exps = expand_seeds(
            self.query_keys(text, mentions),
            self.graph_ if graph is None else graph,
            mode=self.bct,
            alias_table=self.alias_table,
        )
        return [e for e in exps if not is_meta_key(e.entity)]

    def seed_components(
        self,
        text: str,
        graph=None,
        corpus_idx: np.ndarray | None = None,
        *,
        scores: Mapping[str, np.ndarray] | None = None,
        mentions=None,
    ) -> tuple:
        """``(expansions, source → seed vector, metadata node → share)`` of a question."""
        return hybrid.seed_components(self, text, graph, corpus_idx, scores=scores, mentions=mentions)

    def personalization(
        self,
        text: str,
        graph=None,
        corpus_idx: np.ndarray | None = None,
        *,
        scores: Mapping[str, np.ndarray] | None = None,
    ) -> tuple:
        r"""``(expansions, s, fallback)``: the teleport :math:`s = \sum_c \frac{w_c}{\sum_{c'} w_{c'}}\, s_c`
        of a question as ``search`` builds it (without hybrid settings the entity seeds'
        :func:`~aethel_lite.core.bct.seed_vector`; without any source the BM25 teleport, ``fallback``
        True, or ``None`` under ``fallback="none"``), summing to 1."""
        return self._personalize(text, graph, corpus_idx, scores)[:3]

    def _personalize(self, text, graph=None, corpus_idx=None, scores=None, mentions=None) -> tuple:
        """:meth:`personalization` plus the components and their shares (for attribution)."""
        self._check_fitted()
        graph = self.graph_ if graph is None else graph
        exps, comps, named = hybrid.seed_components(
            self, text, graph, corpus_idx, scores=scores, mentions=mentions
        )
        mix = hybrid.mixture(self, comps)
        if mix:
            seeds = sum(share * comps[c] for c, share in mix.items())
            return exps, seeds / seeds.sum(), False, {"components": comps, "mix": mix, "named": named}
        if self.fallback == "none":
            return exps, None, False, None
        idx = np.arange(len(self.pids_)) if corpus_idx is None else corpus_idx
        bm25 = scores.get("lexical") if scores else None
        bm25 = (self.bm25_.get_scores(text) if bm25 is None else bm25)[idx]
        top = np.argsort(-bm25, kind="stable")[: max(int(self.fallback_depth), 1)]  # the BM25 teleport
        seeds = np.zeros(graph.n_nodes)
        seeds[top] = np.maximum(bm25[top], 0.0)
        if not seeds.any():  # nothing at all to go on: uniform over the candidate passages
            seeds[: graph.n_passages] = 1.0
        return exps, seeds / seeds.sum(), True, None

    def ppr(self, texts: Sequence[str]) -> tuple:
        r"""``(P, expansions, fallback)``: PPR over the fitted graph's nodes (passages first), one column
        per question (all zero without seed under ``fallback="none"``), each question's expansions and
        whether it used the BM25 teleport."""
        return self._ppr_block(texts)[:3]

    def _ppr_block(self, texts: Sequence[str]) -> tuple:
        self._check_fitted()
        self._check_modes()
        texts = list(texts)
        scores = hybrid.query_scores(self, texts)
        rows = [{k: v[j] for k, v in scores.items()} for j in range(len(texts))]
        P = np.zeros((self.graph_.n_nodes, len(texts)))
        block = {}
        if not self.memo and len(texts) > 1:  # one spaCy call for the block, not one per question
            distinct = list(dict.fromkeys(texts))
            block = dict(zip(distinct, self.extractor_.extract(distinct, progress=False)))
        found = [self._personalize(t, None, None, rows[j], block.get(t)) for j, t in enumerate(texts)]
        live = [j for j, f in enumerate(found) if f[1] is not None]
        if live:
            cols = np.stack([found[j][1] for j in live], axis=1)
            P[:, live] = self.operator_.run(
                cols, alpha=self.alpha, tol=self.tol, max_iter=self.max_iter
            ).scores
        return P, [f[0] for f in found], [f[2] for f in found], [f[3] for f in found], rows

    def ranking_scores(
        self,
        text: str,
        ppr: np.ndarray,
        corpus_idx: np.ndarray | None = None,
        *,
        lexical: np.ndarray | None = None,
        dense: np.ndarray | None = None,
        doc_ppr: np.ndarray | None = None,
        heading: np.ndarray | None = None,
    ) -> np.ndarray:
        r"""Corpus-length scores that ``search`` ranks: reached passages their PPR rounded to ``tol / 100``
        (noise between equivalent passages becomes exact ties, broken by corpus order), unreached ones
        the BM25 order of the module docstring, non-candidates :math:`-\infty`; with ``rank_weights``
        :math:`\lambda` (normalised) :math:`\sum_t \lambda_t \hat x_t` over
        :func:`aethel_lite.retrievers.hybrid.rank_terms`, rounded the same way. ``ppr`` and ``doc_ppr``
        are aligned with ``corpus_idx`` (default: every passage)."""
        n_corpus = len(self.pids_)
        corpus_idx = np.arange(n_corpus) if corpus_idx is None else corpus_idx
        out = np.full(n_corpus, -np.inf)
        decimals = max(0, math.ceil(-math.log10(self.tol))) + 2
        weights = hybrid.rank_weights(self)
        if weights is not None:
            terms = hybrid.rank_terms(
                self, text, ppr, corpus_idx, lexical=lexical, dense=dense, doc_ppr=doc_ppr, heading=heading
            )
            out[corpus_idx] = np.round(sum(weights[t] * terms[t] for t in weights), decimals)
            return out
        reached = ppr > 0
        out[corpus_idx[reached]] = np.round(ppr[reached], decimals)
        if self.fallback == "bm25":
            bm25 = (self.bm25_.get_scores(text) if lexical is None else lexical)[corpus_idx[~reached]]
            out[corpus_idx[~reached]] = -1.0 + bm25 / (1.0 + (bm25.max() if bm25.size else 0.0))
        return out

    def _rank_terms(self, text, ppr, corpus_idx, **scores) -> dict[str, np.ndarray]:
        return hybrid.rank_terms(self, text, ppr, corpus_idx, **scores)

    def _doc_nodes(self, graph, corpus_idx: np.ndarray | None) -> np.ndarray | None:
        return hybrid.doc_nodes(self, graph, corpus_idx)

    def _score_queries(self, queries, candidates, traces: dict | None = None):
        """Each query's corpus-length scores; ``traces`` (when given) receives qid → :class:`QueryTrace`."""
        from tqdm.auto import tqdm

        self._check_modes()
        traces = {} if traces is None else traces
        open_q = [q for q, c in zip(queries, candidates) if c is None]
        for start in range(
            0, len(open_q), _BLOCK
        ):  # open corpus: one batched PPR (in blocks) on the full graph
            traces.update(_open_traces(self, open_q[start : start + _BLOCK]))
        for q, cand in tqdm(
            list(zip(queries, candidates)), desc=f"{self.name} search", disable=not self.progress, leave=False
        ):
            if cand is not None:
                traces[q.qid] = _pool_trace(self, q.text, cand)
            e = traces[q.qid].extra
            if e.get("anchors"):  # one ranking per anchor, merged (retrievers.anchors)
                yield anchors.ranked(self, q.text, traces[q.qid])
                continue
            yield self.ranking_scores(
                q.text,
                e["ppr"],
                cand,
                lexical=e["lexical"],
                dense=e["dense"],
                doc_ppr=e["doc_ppr"],
                heading=e["heading"],
            )

    def pool_graph(self, corpus_idx: np.ndarray):
        """The graph of a closed pool: its passages, their entities and (hybrid) their documents' nodes."""
        return hybrid.pool_graph(self, corpus_idx)

    def search(
        self, queries, k: int = 10, pool=None, *, explain: bool = False, explain_depth: int | None = None
    ) -> Run | SearchResult:
        r"""As :meth:`Retriever.search`, leaving out passages scored :math:`-\infty` (``fallback="none"``).

        Parameters
        ----------
        explain : bool
            Return a :class:`~aethel_lite.retrievers.attribution.SearchResult` explaining each query's
            first ``explain_depth`` hits (default :attr:`provenance_depth`).
        """
        queries, k, candidates = self._checked(queries, k, pool)
        traces: dict[str, QueryTrace] = {}
        run = self._collect(queries, candidates, self._score_queries(queries, candidates, traces), k)
        for qid, hits in run.items():
            run[qid] = [(pid, score) for pid, score in hits if score != -math.inf]
        if not explain:
            return run
        depth = self.provenance_depth if explain_depth is None else int(explain_depth)
        return attribution.attribute(self, run, traces, k=k, depth=depth)

    def seed_pieces(
        self,
        text: str,
        graph=None,
        corpus_idx: np.ndarray | None = None,
        *,
        scores: Mapping[str, np.ndarray] | None = None,
    ) -> tuple[np.ndarray | None, list]:
        """The teleport vector and what put mass on each seed node (:func:`aethel_lite.retrievers.attribution.seed_pieces`)."""
        return attribution.seed_pieces(self, text, graph, corpus_idx, scores=scores)

    def explain(self, text: str, pids, pool: Sequence[str] | None = None) -> dict:
        """pid → exact per-seed shares of its PageRank (:func:`aethel_lite.retrievers.attribution.explain`)."""
        return attribution.explain(self, text, pids, pool)

    @property
    def explains_documents(self) -> bool:
        """Whether :meth:`explain` splits each hit's document node's PageRank (:func:`~aethel_lite.retrievers.attribution.explains_documents`)."""
        return attribution.explains_documents(self)
