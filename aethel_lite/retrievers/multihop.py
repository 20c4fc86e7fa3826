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

References
----------
Gutiérrez et al., "From RAG to Memory" (HippoRAG 2), ICML 2025 — passage nodes seeded by dense scores.
Haveliwala, "Topic-sensitive PageRank", WWW 2002.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..core.ppr import PPROperator
from ..errors import ParameterError
from .base import Retriever, topk
from .bm25 import BM25Retriever
from .dense import DenseRetriever
from .titles import mention_graph, named_passages, title_keys

__all__ = ["MultiHopRetriever", "MultiHopParts", "TIE_BREAK", "standardise", "seed_matrix"]

#: Weight of the min–max scaled passage score added to PageRank (orders the passages the walk does not reach).
TIE_BREAK = 1e-6
_BLOCK = 64  # questions per PageRank batch


@dataclass(frozen=True)
class MultiHopParts:
    """What :meth:`MultiHopRetriever.fit` otherwise computes from the passages, made elsewhere (an index):
    the fitted scorers, the passages' titles and the mention graph. Used as they are."""

    dense: DenseRetriever
    bm25: BM25Retriever
    titles: Sequence[str]
    graph: sp.csr_matrix


def standardise(scores: np.ndarray) -> np.ndarray:
    """Each row as standard scores over its entries, :math:`(x - \\bar x)/\\sigma_x` (a constant row → zeros)."""
    scores = np.asarray(scores, dtype=np.float64)
    sd = scores.std(axis=1, keepdims=True)
    centred = scores - scores.mean(axis=1, keepdims=True)
    return np.divide(centred, sd, out=np.zeros_like(centred), where=sd > 0)


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
        idx, vals = topk(fused[j], n_seeds)
        w = np.exp((vals - vals.max()) / temperature)
        seeds[idx, j] = w / w.sum()
        if named[j] and title_weight > 0:
            seeds[np.asarray(named[j]), j] += title_weight / len(named[j])
        seeds[:, j] /= seeds[:, j].sum()
    return seeds


def _unit(x: np.ndarray) -> np.ndarray:
    lo, hi = x.min(axis=1, keepdims=True), x.max(axis=1, keepdims=True)
    span = hi - lo
    return np.divide(x - lo, span, out=np.zeros_like(x), where=span > 0)


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
    memo = False  # evaluation option, passed on to the scorers (as DenseRetriever.memo)

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

    def config(self) -> dict:
        """JSON-able settings (part of result-cache keys)."""
        parts = {
            "dense": self._part(self.dense, DenseRetriever),
            "bm25": self._part(self.bm25, BM25Retriever),
        }
        own = {n: getattr(self, n) for n in self.param_names() if n not in ("dense", "bm25", "progress")}
        return {"name": self.name, **own, **{k: v.config() for k, v in parts.items()}}

    @staticmethod
    def _part(given, cls):
        """An unfitted copy of a scorer's settings (``cls()`` when none was given)."""
        return cls() if given is None else type(given)(**given.get_params(deep=False))

    def _check(self) -> None:
        checks = {
            "bm25_weight": isinstance(self.bm25_weight, (int, float)) and self.bm25_weight >= 0,
            "n_seeds": isinstance(self.n_seeds, int)
            and not isinstance(self.n_seeds, bool)
            and self.n_seeds >= 1,
            "temperature": isinstance(self.temperature, (int, float)) and self.temperature > 0,
            "title_weight": isinstance(self.title_weight, (int, float)) and self.title_weight >= 0,
            "alpha": isinstance(self.alpha, (int, float)) and 0 < self.alpha < 1,
        }
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            raise ParameterError(f"MultiHopRetriever: bad {bad[0]}={getattr(self, bad[0])!r}")

    def fit(self, passages: Sequence, parts: MultiHopParts | None = None) -> MultiHopRetriever:
        """Index ``passages``; with ``parts`` (an index's), only their ids are read and the parts are used as
        they are (the mention graph dropped when ``mentions=False``). Returns ``self``."""
        passages = self._index_passages(passages)
        self._check()
        if parts is None:
            self._fit(passages)
            return self
        if len(parts.titles) != len(passages) or parts.graph.shape != (len(passages),) * 2:
            raise ParameterError("MultiHopRetriever.fit: the parts do not fit the passages")
        self.dense_, self.bm25_ = parts.dense, parts.bm25
        self._learn(list(parts.titles), parts.graph)
        return self

    def _fit(self, passages: list) -> None:  # the settings were checked by fit
        self.dense_ = self._part(self.dense, DenseRetriever)
        self.bm25_ = self._part(self.bm25, BM25Retriever)
        for part in (self.dense_, self.bm25_):
            part.progress, part.memo = self.progress, self.memo
            part.fit(passages)
        titles = [p.title for p in passages]
        self._learn(titles, mention_graph(titles, (p.text for p in passages)) if self.mentions else None)

    def _learn(self, titles: list[str], graph: sp.csr_matrix | None) -> None:
        """The title keys, the mention graph (none: an empty one) and its PageRank operator."""
        n = len(titles)
        self.keys_ = title_keys(titles, disambiguators=True)
        self.graph_ = (
            graph if graph is not None and self.mentions else sp.csr_matrix((n, n), dtype=np.float64)
        )
        self.operator_ = PPROperator(self.graph_).prepare(self.alpha)

    def passage_scores(self, texts: Sequence[str]) -> np.ndarray:
        """:math:`f` of every passage for each text, shape ``(len(texts), n_passages)`` (step 1)."""
        self._check_fitted()
        dense = self.dense_.score_texts(list(texts))
        bm25 = np.stack([self.bm25_.get_scores(t) for t in texts]) if texts else dense
        return standardise(dense) + self.bm25_weight * standardise(bm25)

    def named(self, text: str) -> list[int]:
        """The passages whose title the question names."""
        self._check_fitted()
        return named_passages(text, self.keys_) if self.title_weight > 0 else []

    def score_texts(self, texts: Sequence[str]) -> np.ndarray:
        """The ranking scores of every passage for each text, shape ``(len(texts), n_passages)`` (steps 1–4)."""
        texts = list(texts)
        fused = self.passage_scores(texts)
        seeds = seed_matrix(
            fused,
            [self.named(t) for t in texts],
            n_seeds=self.n_seeds,
            temperature=self.temperature,
            title_weight=self.title_weight,
        )
        walk = self.operator_.run(seeds, alpha=self.alpha, tol=self.tol, max_iter=self.max_iter).scores
        return walk.T + TIE_BREAK * _unit(fused)

    def _score_queries(self, queries: list, candidates: list) -> Iterator[np.ndarray]:
        for start in range(0, len(queries), _BLOCK):
            yield from self.score_texts([q.text for q in queries[start : start + _BLOCK]])
