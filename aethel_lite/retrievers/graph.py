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
_FALLBACKS = ("bm25", "none")
# open-corpus questions are solved as batches of this many PPR columns
_BLOCK = 64


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
        After ``search``: qid → pid → list of :class:`~aethel_lite.bct.Expansion` (seed entity,
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

    def __init__(self, extractor: str = "ner3", bct: str = "none", alpha: float = 0.5, tol: float = 1e-8,
                 max_iter: int = 1000, alias_table: Mapping[str, Sequence[str]] | None = None,
                 link_query_ngrams: bool = True, fallback: str = "bm25", fallback_depth: int = 10,
                 n_process: int = 1, cache: bool = True, progress: bool = False):
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
                "alias_table": self.alias_table is not None}

    # -- fit -------------------------------------------------------------------------------------
    def _fit(self, passages: list) -> None:
        from ..entities import extract_entities, get_extractor, graph_filters
        from ..graph import build_graph
        from ..ppr import _check_alpha

        _check_alpha(self.alpha)  # fail before the (slow) entity extraction
        self._check_modes()
        self.doc_ids_ = [p.doc_id for p in passages]
        self.extractor_ = get_extractor(self.extractor) if isinstance(self.extractor, str) else self.extractor
        mentions = extract_entities([passage_text(p) for p in passages], self.extractor_, cache=self.cache,
                                    n_process=self.n_process, progress=self.progress)
        stop, links = graph_filters(mentions, self.extractor_)
        self.graph_ = build_graph(self.pids_, mentions, stop=stop, alias_pairs=links)
        self.bm25_ = BM25Retriever().fit(passages)
        self._set_operator()

    def _check_modes(self) -> None:
        """Raise :class:`ParameterError` for an unknown ``bct`` or ``fallback`` (both may be reset after fit)."""
        if self.bct not in _BCT_MODES:
            raise ParameterError(f"bct must be one of {', '.join(_BCT_MODES)}; got {self.bct!r}")
        if self.fallback not in _FALLBACKS:
            raise ParameterError(f"fallback must be one of {', '.join(_FALLBACKS)}; got {self.fallback!r}")

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
        return list(self.query_key_sources(text))

    def query_key_sources(self, text: str) -> dict[str, str]:
        """Each normalised entity key of a question → how it was found, in :meth:`query_keys` order.

        ``"mention"``: the extractor found it in the question (it may not be a graph entity).
        ``"ngram"``: a graph (or alias-table) entity named verbatim in the question
        (``link_query_ngrams``) that the extractor missed.
        """
        from ..entities import normalize_entity

        self._check_fitted()
        keys = {m.key: "mention" for m in self.extractor_.extract([text], progress=False)[0] if m.key}
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

    def personalization(self, text: str, graph=None, corpus_idx: np.ndarray | None = None) -> tuple:
        r"""The teleport vector :math:`s` of a question, as :meth:`search` builds it.

        :math:`s` is :func:`~aethel_lite.bct.seed_vector` of the question's expansions; without
        any, it is the BM25-seeded teleport (``fallback="bm25"``) or nothing (``"none"``).

        Parameters
        ----------
        text : str
            The question.
        graph : EntityGraph, optional
            Default: the fitted graph (open corpus).
        corpus_idx : ndarray of int, optional
            Corpus indices of ``graph``'s passages (default: all, for the fitted graph).

        Returns
        -------
        expansions : list of Expansion
            The seeds (empty when the question names no graph entity).
        seeds : ndarray, shape (graph.n_nodes,), or None
            Sums to 1; ``None`` when there is no seed and no fallback.
        fallback : bool
            Whether ``seeds`` is the BM25 teleport.
        """
        from ..bct import seed_vector

        self._check_fitted()
        graph = self.graph_ if graph is None else graph
        exps = self.expansions(text, graph)
        seeds = seed_vector(exps, graph)
        if seeds.any():
            return exps, seeds, False
        if self.fallback == "none":
            return exps, None, False
        idx = np.arange(len(self.pids_)) if corpus_idx is None else corpus_idx
        return exps, self._teleport(text, graph, idx), True

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
        self._check_fitted()
        self._check_modes()
        P = np.zeros((self.graph_.n_nodes, len(texts)))
        found = [self.personalization(t) for t in texts]
        live = [j for j, (_, seeds, _) in enumerate(found) if seeds is not None]
        if live:
            cols = np.stack([found[j][1] for j in live], axis=1)
            P[:, live] = self.operator_.run(cols, alpha=self.alpha, tol=self.tol, max_iter=self.max_iter).scores
        return P, [f[0] for f in found], [f[2] for f in found]

    def ranking_scores(self, text: str, ppr: np.ndarray, corpus_idx: np.ndarray | None = None) -> np.ndarray:
        r"""Corpus-length scores that :meth:`search` ranks: PPR where reached, the fallback's below it.

        Parameters
        ----------
        text : str
            The question (for the BM25 order of unreached passages).
        ppr : ndarray
            PPR of the passages at ``corpus_idx`` (default: every passage, in corpus order).
        corpus_idx : ndarray of int, optional

        Returns
        -------
        ndarray, shape (n_corpus,)
            Reached passages (PPR > 0): PPR rounded to ``tol / 100`` -- PPR is only accurate to
            ``tol`` (L1), and rounding turns floating-point noise between equivalent passages
            (same entities, so equal PPR) into exact ties, which :func:`topk` breaks by corpus
            order, the same whether the query was solved alone or in a batch. Unreached
            candidates: :math:`-1 + \text{bm25}/(1 + \max \text{bm25}) \in [-1, 0)` with
            ``fallback="bm25"``, :math:`-\infty` (unranked) with ``"none"``. Non-candidates:
            :math:`-\infty`.
        """
        n_corpus = len(self.pids_)
        corpus_idx = np.arange(n_corpus) if corpus_idx is None else corpus_idx
        out = np.full(n_corpus, -np.inf)
        reached = ppr > 0
        decimals = max(0, math.ceil(-math.log10(self.tol))) + 2
        out[corpus_idx[reached]] = np.round(ppr[reached], decimals)
        if self.fallback == "bm25":
            bm25 = self.bm25_.get_scores(text)[corpus_idx[~reached]]
            out[corpus_idx[~reached]] = -1.0 + bm25 / (1.0 + (bm25.max() if bm25.size else 0.0))
        return out

    def _note(self, qid: str, exps: list, fallback: bool, graph, ppr: np.ndarray) -> None:
        """Record a query's seeds, graph and diagnostics (``bm25_ordered_top5`` is set by search)."""
        self.seeds_[qid] = exps
        self._graphs[qid] = graph
        self.diagnostics_[qid] = {"fallback": bool(fallback), "n_seed_entities": len(exps),
                                  "n_reached": int(np.count_nonzero(ppr > 0)), "bm25_ordered_top5": 0}

    def _score_queries(self, queries, candidates):
        from ..ppr import PPROperator
        from tqdm.auto import tqdm

        self._check_modes()
        self.seeds_, self._graphs, self.diagnostics_ = {}, {}, {}
        n_p = self.graph_.n_passages
        # open-corpus queries: one batched PPR (in blocks) on the full graph
        open_q = [q for q, c in zip(queries, candidates) if c is None]
        open_scores: dict[str, np.ndarray] = {}
        for start in range(0, len(open_q), _BLOCK):
            chunk = open_q[start:start + _BLOCK]
            P, exps, used = self.ppr([q.text for q in chunk])
            for j, q in enumerate(chunk):
                open_scores[q.qid] = P[:n_p, j]
                self._note(q.qid, exps[j], used[j], self.graph_, open_scores[q.qid])
        for q, cand in tqdm(list(zip(queries, candidates)), desc=f"{self.name} search", disable=not self.progress, leave=False):
            if cand is None:
                yield self.ranking_scores(q.text, open_scores.pop(q.qid))
                continue
            graph = self.graph_.subgraph([self.pids_[i] for i in cand])
            exps, seeds, used = self.personalization(q.text, graph, cand)
            ppr = np.zeros(graph.n_passages)
            if seeds is not None:
                op = PPROperator(graph.adjacency())
                ppr = op.run(seeds, alpha=self.alpha, tol=self.tol, max_iter=self.max_iter).scores[: graph.n_passages]
            self._note(q.qid, exps, used, graph, ppr)
            yield self.ranking_scores(q.text, ppr, cand)

    def search(self, queries, k: int = 10, pool=None) -> Run:
        r"""As :meth:`Retriever.search`; also fills :attr:`provenance_`, :attr:`seeds_` and :attr:`diagnostics_`.

        With ``fallback="none"`` unranked passages (score :math:`-\infty`) are left out, so a
        ranking may hold fewer than ``k`` hits.
        """
        from ..bct import provenance

        run = super().search(queries, k=k, pool=pool)
        run.name = self.name
        self.provenance_ = {}
        self._top5_slots = min(int(k), 5)
        for qid, hits in run.items():
            hits = run[qid] = [(pid, score) for pid, score in hits if score != -math.inf]
            self.diagnostics_[qid]["bm25_ordered_top5"] = sum(1 for _, score in hits[:5] if score < 0)
            graph = self._graphs[qid]
            exps = self.seeds_.get(qid, [])
            self.provenance_[qid] = {pid: provenance(pid, exps, graph) for pid, _ in hits[: self.provenance_depth]}
        self._graphs = {}
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
