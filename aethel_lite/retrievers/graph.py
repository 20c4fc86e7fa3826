"""The paper's method: entity graph, query seeds (with or without BCT), Personalized PageRank."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import ParameterError
from .base import Retriever, passage_text
from .bm25 import BM25Retriever
from .run import Run


_BCT_MODES = ("none", "alias", "substring", "both")


def _proper_tokens(text: str) -> frozenset[str]:
    """Normalised words of ``text`` written with a capital letter or a digit, minus function words
    (:data:`aethel_lite.entities.REGEX_STOP`, e.g. a sentence-initial "What")."""
    from ..entities import REGEX_STOP, normalize_entity

    out: set[str] = set()
    for raw in text.split():
        word = raw.strip(".,;:!?()[]{}\"'“”‘’")
        if word and word not in REGEX_STOP and any(c.isupper() or c.isdigit() for c in word):
            out.update(normalize_entity(word).split())
    return frozenset(out)


class GraphRetriever(Retriever):
    r"""Entity-graph retrieval: query entities → seed vector (± BCT) → Personalized PageRank.

    ``fit`` extracts entities from every passage (cached on disk), drops stop-entities (``ner3``:
    entities in more than ``max_df`` of the passages), links entities whose names contain one
    another (``ner3``'s substring adjacency) and builds the bipartite passage–entity graph
    (:func:`aethel_lite.graph.build_graph`). ``search`` seeds Personalized PageRank on the query's
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

    **Fallback** when a query has no entity in the graph: a *BM25-seeded teleport* — the
    personalization vector is put on the query's top ``fallback_depth`` BM25 passages in
    proportion to their BM25 scores, and PPR spreads it through their entities.

    **Ordering**: passages PPR does not reach (score 0) follow every reached passage, ordered by
    BM25; their reported score is :math:`-1 + \text{bm25}/(1 + \max \text{bm25}) \in [-1, 0)`.

    Parameters
    ----------
    extractor : {"regex", "ner", "ner3"}
        Entity extractor (:mod:`aethel_lite.entities`).
    bct : {"none", "alias", "substring", "both"}
        Seed expansion (:mod:`aethel_lite.bct`); ``"none"`` is plain PPR on exact entity matches.
    alpha : float
        Teleport (restart) probability :math:`\alpha \in (0, 1)`.
    tol, max_iter : float, int
        PPR convergence (L1) and iteration cap.
    alias_table : mapping, optional
        Normalised entity → normalised aliases, for BCT's alias matching.
    link_query_ngrams : bool
        Add graph entities named verbatim in the question to its seeds.
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
        After ``search``: qid → pid → list of :class:`~aethel_lite.bct.Expansion` (seed entity,
        graph entity reached, how, weight) that tie each returned passage to the query's seeds.
    seeds_ : dict
        After ``search``: qid → the query's expansions (empty list = BM25 fallback was used).

    References
    ----------
    Haveliwala, T. H. (2002). Topic-sensitive PageRank. WWW.
    Gutiérrez, B. J. et al. (2024). HippoRAG: Neurobiologically inspired long-term memory for LLMs.
    """

    name = "graph"

    def __init__(self, extractor: str = "ner3", bct: str = "none", alpha: float = 0.5, tol: float = 1e-8,
                 max_iter: int = 1000, alias_table: Mapping[str, Sequence[str]] | None = None,
                 link_query_ngrams: bool = True, fallback_depth: int = 10, n_process: int = 1,
                 cache: bool = True, progress: bool = False):
        self.extractor = extractor
        self.bct = bct
        self.alpha = alpha
        self.tol = tol
        self.max_iter = max_iter
        self.alias_table = alias_table
        self.link_query_ngrams = link_query_ngrams
        self.fallback_depth = fallback_depth
        self.n_process = n_process
        self.cache = cache
        self.progress = progress

    def config(self) -> dict:
        return {"name": self.name, "extractor": self.extractor, "bct": self.bct, "alpha": self.alpha, "tol": self.tol,
                "link_query_ngrams": self.link_query_ngrams, "fallback_depth": self.fallback_depth,
                "alias_table": self.alias_table is not None}

    # -- fit -------------------------------------------------------------------------------------
    def _fit(self, passages: list) -> None:
        from ..entities import extract_entities, get_extractor, graph_filters
        from ..graph import build_graph
        from ..ppr import _check_alpha

        _check_alpha(self.alpha)  # fail before the (slow) entity extraction
        if self.bct not in _BCT_MODES:
            raise ParameterError(f"bct must be one of {', '.join(_BCT_MODES)}; got {self.bct!r}")
        self.extractor_ = get_extractor(self.extractor) if isinstance(self.extractor, str) else self.extractor
        mentions = extract_entities([passage_text(p) for p in passages], self.extractor_, cache=self.cache,
                                    n_process=self.n_process, progress=self.progress)
        stop, links = graph_filters(mentions, self.extractor_)
        self.graph_ = build_graph(self.pids_, mentions, stop=stop, alias_pairs=links)
        self.bm25_ = BM25Retriever().fit(passages)
        self._set_operator()

    def _set_operator(self) -> None:
        from ..ppr import PPROperator

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
            from ..entities import normalize_entity

            extra = {normalize_entity(k) for k in self.alias_table}
            self._linkable[True] = self._ngram_index(set(self.graph_.entities) | extra)
        return self._linkable[with_aliases]

    # -- query side ------------------------------------------------------------------------------
    def query_keys(self, text: str) -> list[str]:
        """Normalised entity keys of a question: extractor mentions ∪ graph entities named in it."""
        from ..entities import normalize_entity

        self._check_fitted()
        keys = [m.key for m in self.extractor_.extract([text], progress=False)[0]]
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
                        keys.append(gram)
        return list(dict.fromkeys(k for k in keys if k))

    def expansions(self, text: str, graph=None) -> list:
        """The BCT expansions of a question's entities over ``graph`` (default: the fitted graph)."""
        from ..bct import expand_seeds

        return expand_seeds(self.query_keys(text), self.graph_ if graph is None else graph, mode=self.bct,
                            alias_table=self.alias_table)

    def _teleport(self, qtext: str, graph, corpus_idx: np.ndarray) -> np.ndarray:
        """BM25-seeded personalization over ``graph``'s passage nodes (fallback for entity-less queries)."""
        bm25 = self.bm25_.get_scores(qtext)[corpus_idx]
        top = np.argsort(-bm25, kind="stable")[: max(int(self.fallback_depth), 1)]
        seeds = np.zeros(graph.n_nodes)
        seeds[top] = np.maximum(bm25[top], 0.0)
        if not seeds.any():  # nothing at all to go on: uniform over the candidate passages
            seeds[: graph.n_passages] = 1.0
        return seeds / seeds.sum()

    def _final_scores(self, qtext: str, ppr: np.ndarray, corpus_idx: np.ndarray, n_corpus: int) -> np.ndarray:
        """Corpus-length scores: PPR where reached, BM25-ordered negatives below it elsewhere.

        PPR scores are rounded to ``tol / 100``: they are only accurate to ``tol`` (L1), and the
        rounding turns floating-point noise between equivalent passages (same entities, so equal
        PPR) into exact ties, which :func:`topk` breaks by corpus order -- the same whether the
        query was solved alone or in a batch.
        """
        out = np.full(n_corpus, -np.inf)
        reached = ppr > 0
        bm25 = self.bm25_.get_scores(qtext)[corpus_idx[~reached]]
        decimals = max(0, math.ceil(-math.log10(self.tol))) + 2
        out[corpus_idx[reached]] = np.round(ppr[reached], decimals)
        out[corpus_idx[~reached]] = -1.0 + bm25 / (1.0 + (bm25.max() if bm25.size else 0.0))
        return out

    def _score_queries(self, queries, candidates):
        from ..bct import seed_vector
        from ..ppr import PPROperator
        from tqdm.auto import tqdm

        n = len(self.pids_)
        self.seeds_ = {}
        self._graphs = {}
        all_idx = np.arange(n)
        # open-corpus queries: one batched PPR (in blocks) on the full graph
        open_q = [q for q, c in zip(queries, candidates) if c is None]
        open_scores: dict[str, np.ndarray] = {}
        block = 64
        for start in range(0, len(open_q), block):
            chunk = open_q[start:start + block]
            cols = []
            for q in chunk:
                exps = self.expansions(q.text)
                self.seeds_[q.qid] = exps
                self._graphs[q.qid] = self.graph_
                seeds = seed_vector(exps, self.graph_)
                cols.append(seeds if seeds.any() else self._teleport(q.text, self.graph_, all_idx))
            P = self.operator_.run(np.stack(cols, axis=1), alpha=self.alpha, tol=self.tol, max_iter=self.max_iter).scores
            for j, q in enumerate(chunk):
                open_scores[q.qid] = P[: self.graph_.n_passages, j]
        for q, cand in tqdm(list(zip(queries, candidates)), desc=f"{self.name} search", disable=not self.progress, leave=False):
            if cand is None:
                yield self._final_scores(q.text, open_scores[q.qid], all_idx, n)
                continue
            graph = self.graph_.subgraph([self.pids_[i] for i in cand])
            exps = self.expansions(q.text, graph)
            self.seeds_[q.qid] = exps
            self._graphs[q.qid] = graph
            seeds = seed_vector(exps, graph)
            if not seeds.any():
                seeds = self._teleport(q.text, graph, cand)
            ppr = PPROperator(graph.adjacency()).run(seeds, alpha=self.alpha, tol=self.tol, max_iter=self.max_iter).scores
            yield self._final_scores(q.text, ppr[: graph.n_passages], cand, n)

    def search(self, queries, k: int = 10, pool=None) -> Run:
        """As :meth:`Retriever.search`; also fills :attr:`provenance_` and :attr:`seeds_`."""
        from ..bct import provenance

        run = super().search(queries, k=k, pool=pool)
        run.name = self.name
        self.provenance_ = {}
        for qid, hits in run.items():
            graph = self._graphs[qid]
            exps = self.seeds_.get(qid, [])
            self.provenance_[qid] = {pid: provenance(pid, exps, graph) for pid, _ in hits}
        self._graphs = {}
        return run
