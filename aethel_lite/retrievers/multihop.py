r"""``aethel-multihop``: Personalized PageRank over passages linked by the titles they name.

A retriever for open multi-hop corpora built from the parts the project ships (MiniLM, BM25, PageRank) and no
language model. It holds a fitted :class:`~aethel_lite.retrievers.DenseRetriever` and
:class:`~aethel_lite.retrievers.BM25Retriever` and the mention graph of :mod:`aethel_lite.retrievers.titles`.
For a question :math:`q`:

1. **passage scores** — the dense and BM25 scores of every passage, each standardised over the corpus
   (:math:`z(x) = (x - \bar x)/\sigma_x`), mixed as :math:`f = z(\mathrm{dense}) + w_{\mathrm{bm25}}\, z(\mathrm{bm25})`;
2. **seeds** — the :math:`m` passages of highest :math:`f` with weights :math:`\mathrm{softmax}(f/\tau)`, plus
   :math:`w_{\mathrm{title}}` shared evenly by the passages whose title the question names
   (:func:`~aethel_lite.retrievers.titles.named_passages`, disambiguators allowed), normalised to sum 1;
3. **walk** — Personalized PageRank :math:`p = \alpha s + (1-\alpha) W p` on the mention graph
   (:func:`~aethel_lite.core.ppr.personalized_pagerank`; a passage without edges keeps its seed mass);
4. **ranking** — by :math:`p + \varepsilon\, u(f)`, :math:`u` the min–max scaling of :math:`f` to [0, 1] and
   :math:`\varepsilon` = :data:`TIE_BREAK`: passages the walk reaches rank by PageRank, the others by
   :math:`f`.

The walk is the second hop: a seed paragraph ("Forbidden Ground … directed by Pál Gábor") hands part of its mass
to the paragraph it names ("Pál Gábor"), which neither the question's words nor its vector point to.

**Bridges** (``aethel-bridges``, the stage :class:`BridgesRetriever` holding a fitted retriever): in MuSiQue the
second hop's paragraph is often not titled by the entity that joins it to the first (the work "by the Scottish
reformer John Knox" → a paragraph of *Presbyterianism* that says "John Knox (1505–1572)"), so the stage widens the
walk's graph with the spaCy entities of the passage–entity graph (:mod:`aethel_lite.core.graph`): *bridge edges*
(:func:`bridge_graph`) join passages that share entities named by at most ``max_df`` passages, weighted
:math:`\sum_e \log(N/\mathrm{df}_e)` over the shared entities and scaled to mean 1; the walk (:func:`walk_graph`)
leaves a passage that names no title by its bridges with weight :math:`w_{\mathrm{bridge}}`, one that names titles
by its mentions and by its bridges with :math:`\lambda\, w_{\mathrm{bridge}}` (on 2Wiki's comparison questions
bridges from the compared films crowd out their directors). Seeds and ranking are the held retriever's.

**The chain** (``aethel-chain``, the stage :class:`ChainRetriever` holding ``aethel-bridges``): the walk reaches
many second-hop paragraphs but ranks a seed that matches the question's words above them, since it does not read
the question's relation. The stage asks the question again after each of its first passages — the words that
passage does not hold and the names it adds (:func:`residual_question`) — and adds the best answer to the walk's
score (:func:`chain_scores`): a multi-hop retriever's second round (as in Xiong et al.'s multi-hop dense
retrieval, with an untrained encoder and the question's words instead of a trained query encoder).

References
----------
Gutiérrez et al., "From RAG to Memory" (HippoRAG 2), ICML 2025 — passage nodes seeded by dense scores.
Haveliwala, "Topic-sensitive PageRank", WWW 2002.
Xiong et al., "Answering Complex Open-Domain Questions with Multi-Hop Dense Retrieval", ICLR 2021.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..core.entities import get_extractor
from ..core.graph import EntityGraph
from ..core.ppr import PPROperator
from ..errors import DataError, ParameterError
from .base import IDS_FILE, Retriever, clone, read_ids, topk, write_ids
from .bm25 import BM25Retriever
from .dense import DenseRetriever
from .graph import entity_graph, graph_folder
from .scores import min_max, softmax_seeds, standardise
from .titles import (
    TITLES_FILE,
    load_titles,
    mention_graph,
    named_passages,
    save_titles,
    title_keys,
    title_words,
)
from .traces import BLOCK

__all__ = [
    "MultiHopRetriever",
    "BridgesRetriever",
    "ChainRetriever",
    "TIE_BREAK",
    "DECIMALS",
    "seed_matrix",
    "bridge_graph",
    "walk_graph",
    "residual_question",
    "chain_scores",
    "standardise",
    "ABLATIONS",
]

#: Weight of the min–max scaled passage score added to PageRank (orders the passages the walk does not reach).
TIE_BREAK = 1e-6

#: ``aethel-multihop``'s ablations: its settings with one part taken away (``set_params`` keys).
ABLATIONS: dict[str, dict[str, Any]] = {
    "aethel-multihop-no-titles": {"title_weight": 0.0},  # no passage named by the question's words
    "aethel-multihop-no-mentions": {"mentions": False},  # no walk: the seeds, then the passage score
    "aethel-multihop-no-bm25": {"bm25_weight": 0.0},  # dense passage scores alone
}


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _weight(x: Any) -> bool:
    return _number(x) and x >= 0


def _count(least: int):
    return lambda x: isinstance(x, int) and not isinstance(x, bool) and x >= least


def _raise_bad(owner: Retriever, **rules) -> None:
    """ParameterError naming ``owner``'s first setting ``name`` for which ``rules[name](value)`` is False."""
    bad = [name for name, ok in rules.items() if not ok(getattr(owner, name))]
    if bad:
        raise ParameterError(f"{type(owner).__name__}: bad {bad[0]}={getattr(owner, bad[0])!r}")


def seed_matrix(
    fused: np.ndarray,
    named: Sequence[Sequence[int]],
    *,
    n_seeds: int,
    temperature: float,
    title_weight: float,
) -> np.ndarray:
    """The teleport vectors, one column per question (step 2 of the module docstring).

    Parameters
    ----------
    fused : ndarray, shape (b, n)
        Each question's passage scores :math:`f`.
    named : sequence of sequences of int
        The passages each question names by title.
    n_seeds, temperature, title_weight
        :math:`m`, :math:`\\tau` and :math:`w_{\\mathrm{title}}`.

    Returns
    -------
    ndarray, shape (n, b)
        Nonnegative columns summing to 1.
    """
    b, n = fused.shape
    seeds = np.zeros((n, b))
    for j in range(b):
        idx, w = softmax_seeds(fused[j], n_seeds, temperature)
        seeds[idx, j] = w
        if named[j] and title_weight > 0:
            seeds[np.asarray(named[j]), j] += title_weight / len(named[j])
        seeds[:, j] /= seeds[:, j].sum()
    return seeds


class MultiHopRetriever(Retriever):
    """Dense and BM25 passage seeds, the question's title links, and PageRank over title mentions.

    Parameters
    ----------
    dense, bm25 : DenseRetriever, BM25Retriever, optional
        The passage scorers' settings (defaults: ``DenseRetriever()``, ``BM25Retriever()``); ``fit`` fits copies.
    bm25_weight : float, default 0.3
        :math:`w_{\\mathrm{bm25}}`, BM25's weight in the passage score (≥ 0).
    n_seeds : int, default 5
        :math:`m`, passages seeded by their score (≥ 1).
    temperature : float, default 1.0
        :math:`\\tau` of the seeds' softmax (> 0).
    title_weight : float, default 1.0
        :math:`w_{\\mathrm{title}}`, teleport mass of the passages the question names (≥ 0; 0: no title links).
    mentions : bool, default True
        Walk the mention graph (False: no edges, so the ranking is the seeds', then :math:`f`).
    alpha : float, default 0.7
        Teleport probability of the walk, in (0, 1).
    tol, max_iter
        PageRank's stopping rule (:func:`~aethel_lite.core.ppr.personalized_pagerank`).
    progress : bool
        Show progress bars while fitting.

    Attributes
    ----------
    dense_, bm25_ : DenseRetriever, BM25Retriever
        The fitted passage scorers.
    keys_ : dict
        Title words (with and without disambiguators) → passage indices.
    graph_ : scipy.sparse.csr_matrix
        The mention graph (:func:`~aethel_lite.retrievers.titles.mention_graph`; empty with ``mentions=False``).
    operator_ : PPROperator
        Its PageRank operator, prepared for ``alpha``.

    Notes
    -----
    The defaults were chosen on the development halves of 2Wiki-open and MuSiQue-open (the mean of their
    Recall@5), over ``n_seeds`` ∈ {5, 10, 20}, ``temperature`` ∈ {0.5, 1}, ``title_weight`` ∈ {0, 1, 3},
    ``alpha`` ∈ {0.3, 0.5, 0.7} and ``bm25_weight`` ∈ {0, 0.3, 0.5}.
    """

    name = "multihop"

    def __init__(
        self,
        dense: DenseRetriever | None = None,
        bm25: BM25Retriever | None = None,
        bm25_weight: float = 0.3,
        n_seeds: int = 5,
        temperature: float = 1.0,
        title_weight: float = 1.0,
        mentions: bool = True,
        alpha: float = 0.7,
        tol: float = 1e-10,
        max_iter: int = 1000,
        progress: bool = False,
    ):
        self.dense, self.bm25 = dense, bm25
        self.bm25_weight, self.n_seeds, self.temperature = bm25_weight, n_seeds, temperature
        self.title_weight, self.mentions, self.alpha = title_weight, mentions, alpha
        self.tol, self.max_iter, self.progress = tol, max_iter, progress

    def _check(self) -> None:
        _raise_bad(
            self,
            bm25_weight=_weight,
            n_seeds=_count(1),
            temperature=lambda x: _number(x) and x > 0,
            title_weight=_weight,
            alpha=lambda x: _number(x) and 0 < x < 1,
        )

    def parts(self) -> list[str]:
        """The index parts ``save`` writes (file groups an index shares between methods: :mod:`aethel_lite.search.index`)."""
        dense = self.dense if self.dense is not None else DenseRetriever()
        return ["bm25", *dense.parts(), "titles"]

    def fit(self, passages: Sequence) -> MultiHopRetriever:
        """Fit clones of the passage scorers, read the titles and build the mention graph. Returns ``self``."""
        passages = self._index_passages(passages)
        self._check()
        dense = clone(self.dense) if self.dense is not None else DenseRetriever()
        bm25 = clone(self.bm25) if self.bm25 is not None else BM25Retriever()
        for part in (dense, bm25):
            part.set_params(progress=self.progress)
        self.dense_, self.bm25_ = dense.fit(passages), bm25.fit(passages)
        titles = [p.title for p in passages]
        self._learn(titles, mention_graph(titles, (p.text for p in passages)) if self.mentions else None)
        return self

    def save(self, folder: str | os.PathLike) -> list[str]:
        """Write what ``fit`` learned into ``folder`` (no pickle): the BM25 index (``bm25/``), the dense embeddings
        (``dense-<pooling>.npy``) and ``titles.json`` (the titles and the mention graph's edges)."""
        self._check_fitted()
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        write_ids(folder / IDS_FILE, self.pids_, self.doc_ids_)
        files = [IDS_FILE, *self.dense_.save(folder)]
        self.bm25_.save(folder)
        files += [p.relative_to(folder).as_posix() for p in (folder / "bm25").rglob("*") if p.is_file()]
        save_titles(folder / TITLES_FILE, self.titles_, self.graph_)
        return sorted([*files, TITLES_FILE])

    @classmethod
    def load(cls, folder: str | os.PathLike, **params: Any) -> MultiHopRetriever:
        """The retriever :meth:`save` wrote into ``folder`` (with an ``ids.json`` of the passages' ids), with
        settings ``params``: it ranks exactly as the one saved."""
        r = cls(**params)
        r._check()
        folder = Path(folder)
        passages = read_ids(folder / IDS_FILE)
        pids = [p.pid for p in passages]
        bm25 = BM25Retriever.load(folder)
        if bm25.pids_ != pids:
            raise DataError(f"{folder / 'bm25'}: its passage ids differ from {IDS_FILE}")
        dense = r.dense if r.dense is not None else DenseRetriever()
        dense = DenseRetriever.load(folder, pooling=dense.pooling, cache=dense.cache)
        if dense.pids_ != pids:
            raise DataError(f"{folder}: the embeddings' passage ids differ from {IDS_FILE}")
        titles, graph = load_titles(folder / TITLES_FILE, len(pids))
        r._index_passages(passages)
        r.dense_, r.bm25_ = dense, bm25
        r._learn(titles, graph)
        return r

    def _learn(self, titles: list[str], graph: sp.csr_matrix | None) -> None:
        """The title keys, the mention graph (none: an empty one) and its PageRank operator."""
        n = len(titles)
        self.titles_ = titles
        self.keys_ = title_keys(titles, disambiguators=True)
        self.graph_ = (
            graph if graph is not None and self.mentions else sp.csr_matrix((n, n), dtype=np.float64)
        )
        self.operator_ = PPROperator(self.graph_).prepare(self.alpha)

    def passage_scores(self, texts: Sequence[str], bm25_weight: float | None = None) -> np.ndarray:
        r""":math:`f` of every passage for each text, shape ``(len(texts), n_passages)`` (step 1); ``bm25_weight``:
        another :math:`w_{\mathrm{bm25}}` than the setting's (the chain's second hop weighs BM25 its own way)."""
        self._check_fitted()
        dense = self.dense_.score_texts(list(texts))
        bm25 = np.stack([self.bm25_.get_scores(t) for t in texts]) if texts else dense
        weight = self.bm25_weight if bm25_weight is None else bm25_weight
        return standardise(dense) + weight * standardise(bm25)

    def named(self, text: str) -> list[int]:
        """The passages whose title the question names."""
        self._check_fitted()
        return named_passages(text, self.keys_) if self.title_weight > 0 else []

    def score_texts(self, texts: Sequence[str], operator: PPROperator | None = None) -> np.ndarray:
        """The ranking scores of every passage for each text, shape ``(len(texts), n_passages)`` (steps 1–4);
        ``operator``: the walk's PageRank operator (default ``operator_``; a stage that widens the graph passes its
        own, prepared for ``alpha``)."""
        texts = list(texts)
        fused = self.passage_scores(texts)
        seeds = seed_matrix(
            fused,
            [self.named(t) for t in texts],
            n_seeds=self.n_seeds,
            temperature=self.temperature,
            title_weight=self.title_weight,
        )
        walk = (
            (operator or self.operator_)
            .run(seeds, alpha=self.alpha, tol=self.tol, max_iter=self.max_iter)
            .scores
        )
        return walk.T + TIE_BREAK * min_max(fused)

    def _score_queries(self, queries: list, candidates: list) -> Iterator[np.ndarray]:
        for start in range(0, len(queries), BLOCK):
            yield from self.score_texts([q.text for q in queries[start : start + BLOCK]])


# -- aethel-bridges -----------------------------------------------------------------------------------------------

#: Decimals the scores are rounded to (PageRank's tolerance is 1e-10; the tie-break's steps are 1e-6 apart).
DECIMALS = 12


def bridge_graph(incidence: sp.spmatrix, max_df: int) -> sp.csr_matrix:
    r"""Passage–passage edges through shared rare entities (module docstring), symmetric, zero diagonal.

    Parameters
    ----------
    incidence : sparse matrix, shape (n_passages, n_entities)
        Nonzero where a passage names an entity.
    max_df : int
        Entities named by more passages than this link none.
    """
    b = sp.csr_matrix(incidence, dtype=np.float64)
    b.data[:] = 1.0
    n, df = b.shape[0], np.asarray(b.sum(axis=0)).ravel()
    weight = np.where((df >= 2) & (df <= max_df), np.log(n / np.maximum(df, 1)), 0.0)
    edges = (b @ sp.diags(weight) @ b.T).tocsr()
    edges.setdiag(0)
    edges.eliminate_zeros()
    if edges.nnz:
        edges.data /= edges.data.mean()
    return edges


def walk_graph(mentions: sp.spmatrix, bridges: sp.spmatrix, weight: float, beside: float) -> sp.csr_matrix:
    r"""The walk's weighted directed graph (entry :math:`(i, j)`: the weight of :math:`j \to i`): the mention
    edges, plus each passage's bridge edges times ``weight`` (``beside * weight`` when it has mention edges)."""
    named = np.asarray(abs(mentions).sum(axis=0)).ravel() > 0
    out = np.where(named, beside * weight, weight)
    return (sp.csr_matrix(mentions, dtype=np.float64) + bridges @ sp.diags(out)).tocsr()


class BridgesRetriever(Retriever):
    """``aethel-bridges``: ``aethel-multihop`` walking title mentions and bridge edges (module docstring).

    Parameters
    ----------
    multihop : aethel_lite.retrievers.multihop.MultiHopRetriever, optional
        The retriever whose walk this stage widens (default ``MultiHopRetriever()``); ``fit`` fits a clone.
    extractor : str, default "ner3"
        The entity extractor of the passage–entity graph (:func:`~aethel_lite.core.entities.get_extractor`).
    max_df, bridge_weight, beside_mentions : int, float, float; default 5, 3.0, 0.1
        Entities named by at most ``max_df`` passages make bridges (≥ 2); :math:`w_{\\mathrm{bridge}}` (≥ 0; 0:
        ``aethel-multihop``'s ranking); :math:`\\lambda`, in [0, 1].
    progress : bool
        Show progress bars while fitting.

    Attributes
    ----------
    multihop_ : aethel_lite.retrievers.multihop.MultiHopRetriever
        The fitted held retriever.
    entities_ : EntityGraph
        The passage–entity graph (an index's ``graph-<extractor>`` part).
    bridges_, operator_ : scipy.sparse.csr_matrix, PPROperator
        :func:`bridge_graph` of it; PageRank over :func:`walk_graph`, prepared for the held retriever's ``alpha``.

    Notes
    -----
    Chosen on the development halves of MuSiQue-open and 2Wiki-open (the mean of their Recall@5), among ``max_df`` ∈
    {3, 5, 8, 10, 20, 50}, ``bridge_weight`` ∈ {0.3, 1, 3, 10} and ``beside_mentions`` ∈ {0, 0.1, 0.3, 1}.
    """

    name = "bridges"

    def __init__(
        self,
        multihop: MultiHopRetriever | None = None,
        extractor: str = "ner3",
        max_df: int = 5,
        bridge_weight: float = 3.0,
        beside_mentions: float = 0.1,
        progress: bool = False,
    ):
        self.multihop, self.extractor, self.max_df = multihop, extractor, max_df
        self.bridge_weight, self.beside_mentions, self.progress = bridge_weight, beside_mentions, progress

    def _multihop(self) -> MultiHopRetriever:
        return MultiHopRetriever() if self.multihop is None else self.multihop

    def _check(self) -> None:
        _raise_bad(
            self,
            max_df=_count(2),
            bridge_weight=_weight,
            beside_mentions=lambda x: _number(x) and 0 <= x <= 1,
        )
        get_extractor(self.extractor)

    def parts(self) -> list[str]:
        """The index parts ``save`` writes: the held retriever's and the entity graph (shared with the graph methods)."""
        return [*self._multihop().parts(), graph_folder(self.extractor)]

    def fit(self, passages: Sequence) -> BridgesRetriever:
        """Fit a clone of the held retriever and build the passage–entity graph as the graph methods do. Returns ``self``."""
        self._check()
        multihop = clone(self._multihop()).set_params(progress=self.progress).fit(passages)
        return self._learn(multihop, entity_graph(passages, self.extractor, progress=self.progress))

    def _learn(self, multihop: MultiHopRetriever, entities: EntityGraph) -> BridgesRetriever:
        self.multihop_, self.entities_ = multihop, entities
        self.pids_, self.pid_index_, self.doc_ids_ = multihop.pids_, multihop.pid_index_, multihop.doc_ids_
        self.bridges_ = bridge_graph(entities.incidence, self.max_df)
        graph = walk_graph(multihop.graph_, self.bridges_, self.bridge_weight, self.beside_mentions)
        self.operator_ = PPROperator(graph).prepare(multihop.alpha)
        return self

    def save(self, folder: str | os.PathLike) -> list[str]:
        """Write the held retriever's files and ``graph-<extractor>/`` (no pickle); returns their paths."""
        self._check_fitted()
        name = graph_folder(self.extractor)
        self.entities_.save(Path(folder) / name)
        return sorted([*self.multihop_.save(folder), f"{name}/graph.json", f"{name}/graph.npz"])

    @classmethod
    def load(cls, folder: str | os.PathLike, **params: Any) -> BridgesRetriever:
        """The retriever :meth:`save` (or an index) wrote into ``folder``, with settings ``params``."""
        r = cls(**params)
        r._check()
        multihop = MultiHopRetriever.load(folder, **r._multihop().get_params(deep=False))
        entities = EntityGraph.load(Path(folder) / graph_folder(r.extractor))
        if list(entities.pids) != multihop.pids_:
            raise DataError(f"{folder}: the entity graph's passage ids differ from the index's")
        return r._learn(multihop, entities)

    def shared_names(self, a: str, b: str) -> list[str]:
        """The entities that bridge passages ``a`` and ``b`` (ids): named by both and by at most ``max_df`` passages."""
        self._check_fitted()
        inc, i, j = self.entities_.incidence, self.pid_index_[a], self.pid_index_[b]
        both = set(inc[i].indices) & set(inc[j].indices) if i != j else set()
        df = inc.getnnz(axis=0)
        return sorted(self.entities_.entities[e] for e in both if df[e] <= self.max_df)

    def score_texts(self, texts: Sequence[str]) -> np.ndarray:
        """The ranking scores of every passage for each text: the held retriever's, walked on the wider graph,
        rounded to :data:`DECIMALS` decimals (the directed walk is solved by power iteration, whose last bits
        depend on the batch: passages with the same text tie in a batch of one question or of many)."""
        self._check_fitted()
        return np.round(self.multihop_.score_texts(texts, operator=self.operator_), DECIMALS)

    _score_queries = MultiHopRetriever._score_queries  # batches of questions through ``score_texts``


# -- aethel-chain -------------------------------------------------------------------------------------------------

#: What :func:`chain_scores` adds to a walk score before its logarithm (a passage the walk leaves at 0).
LOG_FLOOR = 1e-9

_WORD = re.compile(r"\w+|[^\w\s]")


def residual_question(question: str, found: Collection[str], names: Sequence[str] = ()) -> str:
    """The question a second hop asks after a first passage: the question's words that passage does not hold
    (``found``: the lowercase words it holds), then those of ``names`` with a word the question does not hold.

    "Who is the spouse of the Green performer?" after "Green is the fourth studio album by Steve Hillage" asks
    "Who spouse performer ? steve hillage" (stop words count as held).
    """
    asked = set(title_words(question))
    words = [w for w in _WORD.findall(question) if w.lower() not in found]
    return " ".join([*words, *(n for n in names if not set(title_words(n)) <= asked)])


def chain_scores(walk: np.ndarray, hops: np.ndarray, firsts: np.ndarray, weight: float) -> np.ndarray:
    r"""The ranking scores of ``aethel-chain``: :math:`z(\log(p + \epsilon)) + w \max(0, \max_k c_k)`.

    Parameters
    ----------
    walk : ndarray, shape (b, n)
        The held retriever's scores :math:`p` (nonnegative); :math:`\epsilon` = :data:`LOG_FLOOR`; :math:`z`
        standardises each row over the corpus (:func:`~aethel_lite.retrievers.scores.standardise`).
    hops : ndarray, shape (b, K, n)
        :math:`c_k`: every passage's score for the question asked again after the :math:`k`-th first hop.
    firsts : ndarray of int, shape (b, K)
        The first hops; a first hop gains nothing from the question asked after it.
    weight : float
        :math:`w`.

    Returns
    -------
    ndarray, shape (b, n)
    """
    gain = np.zeros(walk.shape)
    rows = np.arange(walk.shape[0])
    for k in range(hops.shape[1]):
        c = hops[:, k].copy()
        c[rows, firsts[:, k]] = 0.0
        np.maximum(gain, c, out=gain)
    return standardise(np.log(walk + LOG_FLOOR)) + weight * gain


class ChainRetriever(Retriever):
    r"""``aethel-chain``: a stage holding ``aethel-bridges`` that asks the question again after its first hops.

    For each of the held ranking's ``first_hops`` best passages it writes the *residual question*
    (:func:`residual_question`: the question's words the passage does not hold, by BM25's tokens — a stop word
    counts as held — then the passage's spaCy names the question does not hold) and scores every passage for it
    as :math:`c = z(\mathrm{dense}) + w_{\mathrm{bm25}}\, z(\mathrm{BM25})`; :func:`chain_scores` adds the best
    :math:`c` above the mean to the held ranking's standardised log score. "Who is the spouse of the Green
    performer?": the first hop finds "Green … by Steve Hillage"; asked "Who spouse performer ? steve hillage",
    the passage on Steve Hillage's partner answers, which shares no word with the question but the relation.

    Parameters
    ----------
    bridges : aethel_lite.retrievers.multihop.BridgesRetriever, optional
        The held retriever (default ``BridgesRetriever()``); ``fit`` fits a clone.
    first_hops : int, default 3
        :math:`K`, the held ranking's passages each question is asked again after (≥ 1).
    chain_weight : float, default 0.5
        :math:`w` of :func:`chain_scores` (≥ 0; 0: ``aethel-bridges``' ranking).
    bm25_weight : float, default 0.5
        :math:`w_{\mathrm{bm25}}` (≥ 0).
    progress : bool
        Show progress bars while fitting.

    Attributes
    ----------
    bridges_ : aethel_lite.retrievers.multihop.BridgesRetriever
        The fitted held retriever (its ``multihop_`` gives the encoder and BM25, its ``entities_`` the names).

    Notes
    -----
    Chosen on the development halves of MuSiQue-open and 2Wiki-open (the mean of their Recall@5) among
    :math:`K` ∈ {1, 2, 3, 5}, :math:`w` ∈ {0.1, 0.2, 0.3, 0.5, 0.7, 1}, :math:`w_{\mathrm{bm25}}` ∈ {0, 0.1, 0.3,
    0.5} and other second questions (the question with the whole passage, or with its title; the residual words
    alone, or with the title; the names alone; each name asked alone of the passages naming it, which gained
    about .01 and cost twice the time).
    """

    name = "chain"

    def __init__(
        self,
        bridges: BridgesRetriever | None = None,
        first_hops: int = 3,
        chain_weight: float = 0.5,
        bm25_weight: float = 0.5,
        progress: bool = False,
    ):
        self.bridges, self.first_hops, self.chain_weight = bridges, first_hops, chain_weight
        self.bm25_weight, self.progress = bm25_weight, progress

    def _bridges(self) -> BridgesRetriever:
        return BridgesRetriever() if self.bridges is None else self.bridges

    def _check(self) -> None:
        _raise_bad(self, first_hops=_count(1), chain_weight=_weight, bm25_weight=_weight)

    def parts(self) -> list[str]:
        """The index parts ``save`` writes: the held retriever's."""
        return self._bridges().parts()

    def fit(self, passages: Sequence) -> ChainRetriever:
        """Fit a clone of the held retriever. Returns ``self``."""
        self._check()
        return self._learn(clone(self._bridges()).set_params(progress=self.progress).fit(passages))

    def _learn(self, bridges: BridgesRetriever) -> ChainRetriever:
        self.bridges_ = bridges
        self.pids_, self.pid_index_, self.doc_ids_ = bridges.pids_, bridges.pid_index_, bridges.doc_ids_
        return self

    def save(self, folder: str | os.PathLike) -> list[str]:
        """Write the held retriever's files (no pickle); returns their paths."""
        self._check_fitted()
        return self.bridges_.save(folder)

    @classmethod
    def load(cls, folder: str | os.PathLike, **params: Any) -> ChainRetriever:
        """The retriever :meth:`save` (or an index) wrote into ``folder``, with settings ``params``."""
        r = cls(**params)
        r._check()
        return r._learn(BridgesRetriever.load(folder, **r._bridges().get_params(deep=False)))

    def residual_questions(self, text: str, firsts: Sequence[int]) -> list[str]:
        """:func:`residual_question` of ``text`` after each of the passages ``firsts`` (indices)."""
        self._check_fitted()
        multihop, entities = self.bridges_.multihop_, self.bridges_.entities_
        words, rows = sorted(set(title_words(text))), np.asarray(firsts, dtype=np.int64)
        held = {
            w: multihop.bm25_.get_scores(w)[rows] > 0 if tokens else np.ones(len(rows), bool)
            for w, tokens in zip(words, multihop.bm25_.tokenize(words))  # a stop word has no token
        }
        out = []
        for k, p in enumerate(rows):
            found = {w for w in words if held[w][k]} | set(title_words(multihop.titles_[p]))
            names = [entities.entities[e] for e in entities.incidence[p].indices]
            out.append(residual_question(text, found, names))
        return out

    def score_texts(self, texts: Sequence[str]) -> np.ndarray:
        """The ranking scores of every passage for each text (:func:`chain_scores`), rounded to :data:`DECIMALS`
        decimals."""
        self._check_fitted()
        texts = list(texts)
        walk = self.bridges_.score_texts(texts)
        if not texts or self.chain_weight == 0:
            return walk
        k = min(self.first_hops, walk.shape[1])
        firsts = np.stack([topk(row, k)[0] for row in walk])
        asks = [a for text, row in zip(texts, firsts) for a in self.residual_questions(text, row)]
        hops = self.bridges_.multihop_.passage_scores(asks, bm25_weight=self.bm25_weight)
        scores = chain_scores(walk, hops.reshape(len(texts), k, -1), firsts, self.chain_weight)
        return np.round(scores, DECIMALS)

    _score_queries = MultiHopRetriever._score_queries  # batches of questions through ``score_texts``
