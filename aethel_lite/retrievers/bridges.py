r"""``aethel-bridges``: ``aethel-multihop``'s walk also crosses the rare entities two passages share.

In MuSiQue the paragraph of a chain's second hop is often not titled by the entity that links it to the first
("The First Blast of the Trumpet … by the Scottish reformer John Knox" → a paragraph of *Presbyterianism* that
says "John Knox (1505–1572)"): no title mention joins them, but both name John Knox. The stage
:class:`BridgesRetriever` holds a fitted :class:`~aethel_lite.retrievers.MultiHopRetriever` and walks a wider
graph, built from the spaCy entities of the project's passage–entity graph (:mod:`aethel_lite.core.graph`):

* **bridge edges** (:func:`bridge_graph`): passages :math:`i \ne j` that share entities named by at most
  ``max_df`` passages, weighted :math:`\sum_e \log(N/\mathrm{df}_e)` over the shared entities :math:`e` (a
  rare name is a strong link, a common one none), scaled to mean 1;
* **the walk** (:func:`walk_graph`): from a passage whose text names no title, the walk leaves by its bridge
  edges with weight :math:`w_{\mathrm{bridge}}`; from one that names titles, by its title mentions and by its
  bridge edges with weight :math:`\lambda\, w_{\mathrm{bridge}}` (a title mention is the better link where there
  is one: on 2Wiki's comparison questions bridges from the compared films crowd out their directors).

Seeds, PageRank and the ranking are the held retriever's (:meth:`MultiHopRetriever.score_texts`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..caching.memo import is_shared
from ..core.entities import extract_entities, get_extractor, graph_filters
from ..core.graph import EntityGraph, build_graph
from ..core.ppr import PPROperator
from ..errors import DataError, ParameterError
from .base import Retriever, clone, passage_text
from .graph import graph_folder
from .multihop import BLOCK, MultiHopRetriever

__all__ = ["BridgesRetriever", "DECIMALS", "bridge_graph", "walk_graph"]

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
    multihop : MultiHopRetriever, optional
        The retriever whose seeds and walk this stage widens (default ``MultiHopRetriever()``); ``fit`` fits a
        clone of it.
    extractor : str, default "ner3"
        The entity extractor of the passage–entity graph (:func:`~aethel_lite.core.entities.get_extractor`).
    max_df : int, default 5
        Entities named by at most this many passages make bridges (≥ 2).
    bridge_weight : float, default 3.0
        :math:`w_{\\mathrm{bridge}}` (≥ 0; 0: ``aethel-multihop``'s ranking).
    beside_mentions : float, default 0.1
        :math:`\\lambda`, in [0, 1].
    progress : bool
        Show progress bars while fitting.

    Attributes
    ----------
    multihop_ : MultiHopRetriever
        The fitted held retriever.
    entities_ : EntityGraph
        The passage–entity graph (an index's ``graph-<extractor>`` part).
    bridges_ : scipy.sparse.csr_matrix
        :func:`bridge_graph` of it.
    operator_ : PPROperator
        PageRank over :func:`walk_graph`, prepared for the held retriever's ``alpha``.

    Notes
    -----
    ``max_df`` ∈ {3, 5, 8, 10, 20}, ``bridge_weight`` ∈ {1, 3, 10} and ``beside_mentions`` ∈ {0, 0.1, 0.3, 1} were
    chosen on the development halves of MuSiQue-open and 2Wiki-open (the mean of their Recall@5).
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
        checks = {
            "max_df": isinstance(self.max_df, int) and not isinstance(self.max_df, bool) and self.max_df >= 2,
            "bridge_weight": isinstance(self.bridge_weight, (int, float)) and self.bridge_weight >= 0,
            "beside_mentions": isinstance(self.beside_mentions, (int, float))
            and 0 <= self.beside_mentions <= 1,
        }
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            raise ParameterError(f"BridgesRetriever: bad {bad[0]}={getattr(self, bad[0])!r}")
        get_extractor(self.extractor)

    def parts(self) -> list[str]:
        """The index parts ``save`` writes: the held retriever's and the entity graph (shared with the graph methods)."""
        return [*self._multihop().parts(), graph_folder(self.extractor)]

    def fit(self, passages: Sequence) -> BridgesRetriever:
        """Fit a clone of the held retriever and build the passage–entity graph as the graph methods do. Returns ``self``."""
        self._check()
        multihop = clone(self._multihop()).set_params(progress=self.progress)
        multihop.fit(passages)
        extractor = get_extractor(self.extractor)
        mentions = extract_entities(
            [passage_text(p) for p in passages], extractor, progress=self.progress, memo=is_shared()
        )
        stop, links = graph_filters(mentions, extractor)
        return self._learn(multihop, build_graph(multihop.pids_, mentions, stop=stop, alias_pairs=links))

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
        df = np.diff(inc.tocsc().indptr)
        return sorted(self.entities_.entities[e] for e in both if df[e] <= self.max_df)

    def score_texts(self, texts: Sequence[str]) -> np.ndarray:
        """The ranking scores of every passage for each text: the held retriever's, walked on the wider graph,
        rounded to :data:`DECIMALS` decimals (the directed walk is solved by power iteration, whose last bits
        depend on the batch: passages with the same text tie in a batch of one question or of many)."""
        self._check_fitted()
        return np.round(self.multihop_.score_texts(texts, operator=self.operator_), DECIMALS)

    def _score_queries(self, queries: list, candidates: list) -> Iterator[np.ndarray]:
        for start in range(0, len(queries), BLOCK):
            yield from self.score_texts([q.text for q in queries[start : start + BLOCK]])
