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

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..core.ppr import PPROperator
from ..errors import DataError, ParameterError
from .base import IDS_FILE, Retriever, clone, read_ids, write_ids
from .bm25 import BM25Retriever
from .dense import DenseRetriever
from .scores import min_max, softmax_seeds, standardise
from .titles import TITLES_FILE, load_titles, mention_graph, named_passages, save_titles, title_keys
from .traces import BLOCK

__all__ = ["MultiHopRetriever", "TIE_BREAK", "seed_matrix", "standardise", "ABLATIONS"]

#: Weight of the min–max scaled passage score added to PageRank (orders the passages the walk does not reach).
TIE_BREAK = 1e-6

#: ``aethel-multihop``'s ablations: its settings with one part taken away (``set_params`` keys).
ABLATIONS: dict[str, dict[str, Any]] = {
    "aethel-multihop-no-titles": {"title_weight": 0.0},  # no passage named by the question's words
    "aethel-multihop-no-mentions": {"mentions": False},  # no walk: the seeds, then the passage score
    "aethel-multihop-no-bm25": {"bm25_weight": 0.0},  # dense passage scores alone
}


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
