r"""One PageRank per anchor: questions whose answer needs a filing for each company or year they name.

"Which had more total assets at the end of FY2019, PepsiCo or Costco?" needs a page of PepsiCo's 10-K *and* one
of Costco's, but in the hybrid's joint teleport the filing that wins the document vote crowds the other out of the
top :math:`k`. The stage :class:`AnchorsRetriever` (``aethel-anchors``) holds a :class:`~aethel_lite.retrievers.HybridRetriever` and
gives each *anchor* the question names its own PageRank.

**Anchors** (:meth:`AnchorsRetriever.anchors`) are the metadata nodes a question names that pick out different filings:
two or more companies (one anchor each, keeping the question's periods and filing types); else two or more fiscal
years at least ``anchor_gap`` apart (one anchor each, keeping the companies and types; latest first, a year within
the gap of a kept one joins it, as a 10-K also reports the year before). A question with fewer than two anchors is
ranked exactly as without the setting.

**One PageRank per anchor.** Anchor :math:`a`'s teleport is the question's mixture, its metadata component
replaced by the anchor's; the anchors' columns are solved in one batch; each ranks by the hybrid's :math:`r_a(d)`.

**The merged ranking** (:func:`merge`) takes each passage's best place in any anchor's ranking,

.. math:: \rho(d) = \min_a \operatorname{rank}_a(d), \qquad \text{score}(d) = \frac{1}{1 + \rho(d)},

(rank 0 is the best), ties by corpus order: the anchors' first passages, then their second ones, and so on, so the
top :math:`k` holds about :math:`k/m` passages of each of :math:`m` anchors. A hit's anchor (provenance) is the one
that ranks it best, the first in :meth:`AnchorsRetriever.anchors` order on a tie; its seed-source shares are that anchor's
(:func:`aethel_lite.explain.attribution.attribute`). ``HybridRetriever.explain`` splits the joint teleport.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data.docmeta import PREFIXES
from ..errors import ParameterError
from .base import Retriever, clone, prefitted, topk
from .hybrid import HybridRetriever
from .scores import fields_vector
from .traces import QueryTrace, RankingStage

__all__ = ["AnchorsRetriever", "Anchor", "merge"]


@dataclass(frozen=True)
class Anchor:
    """A metadata node a question names (``key``: ``company:pepsico``, ``period:2019``; ``kind``: company or
    period) and the metadata fields its teleport seeds (node key → weight per field, for ``fields_vector``)."""

    key: str
    kind: str
    fields: tuple


def _year_groups(period: Mapping[str, float], gap: int) -> list[tuple[int, list[str]]]:
    """Period node keys grouped into anchor years: the latest first, a year within ``gap`` of a kept one joins it."""
    years: dict[int, list[str]] = {}
    for key in period:
        years.setdefault(int(key[len(PREFIXES["period"]) :][:4]), []).append(key)
    kept: list[tuple[int, list[str]]] = []
    for year in sorted(years, reverse=True):
        near = [group for group in kept if group[0] - year < gap]
        if near:
            near[-1][1].extend(years[year])
        else:
            kept.append((year, list(years[year])))
    return kept


class AnchorsRetriever(RankingStage, Retriever):
    """``aethel-anchors``: a fitted hybrid's search with one PageRank per anchor a question names (module docstring).

    Parameters
    ----------
    hybrid : HybridRetriever, optional
        The retriever whose ranking this stage refines (default ``HybridRetriever()``; it needs ``metadata=True``,
        the anchors being metadata nodes); ``fit`` fits a clone of it.
    anchor_gap : int
        Years within ``anchor_gap`` of a kept anchor year join it (a 10-K holds its fiscal year and the one before).
    prefit : bool
        ``hybrid`` is already fitted on the same passages: ``fit`` uses it as it is.
    progress : bool
        Show progress bars.

    Attributes
    ----------
    hybrid_ : HybridRetriever
        The fitted hybrid.
    """

    name = "anchors"

    def __init__(
        self,
        hybrid: HybridRetriever | None = None,
        anchor_gap: int = 2,
        prefit: bool = False,
        progress: bool = False,
    ):
        self.hybrid, self.anchor_gap, self.prefit, self.progress = hybrid, anchor_gap, prefit, progress

    def _hybrid(self) -> HybridRetriever:
        return HybridRetriever() if self.hybrid is None else self.hybrid

    def parts(self) -> list[str]:
        """The index parts ``save`` writes (file groups an index shares between methods: :mod:`aethel_lite.search.index`)."""
        return self._hybrid().parts()

    def _check_settings(self) -> None:
        gap = self.anchor_gap
        if isinstance(gap, bool) or not isinstance(gap, int) or gap < 1:
            raise ParameterError(f"anchor_gap must be a positive integer; got {gap!r}")
        if not self._hybrid().metadata:
            raise ParameterError(
                "AnchorsRetriever needs a hybrid with metadata=True (the anchors are metadata nodes)"
            )
        self._hybrid()._check_settings()

    def fit(self, passages: Sequence) -> AnchorsRetriever:
        """Fit a clone of the hybrid (with ``prefit``, take the fitted one). Returns ``self``."""
        self._check_settings()
        if self.prefit:
            return self._learn(prefitted(self.hybrid, [p.pid for p in passages]))
        hybrid = clone(self._hybrid())
        hybrid.set_params(progress=hybrid.progress or self.progress)
        return self._learn(hybrid.fit(passages))

    def _learn(self, hybrid: HybridRetriever) -> AnchorsRetriever:
        self.hybrid_ = hybrid
        self.pids_, self.pid_index_, self.doc_ids_ = hybrid.pids_, hybrid.pid_index_, hybrid.doc_ids_
        return self

    @property
    def ranker_(self) -> HybridRetriever:
        """The fitted retriever that runs the PageRank search (:mod:`aethel_lite.retrievers.traces`)."""
        return self.hybrid_

    def save(self, folder: str | os.PathLike) -> list[str]:
        """Write the hybrid's files (:meth:`HybridRetriever.save`): this stage learns nothing of its own."""
        self._check_fitted()
        return self.hybrid_.save(folder)

    @classmethod
    def load(cls, folder: str | os.PathLike, **params: Any) -> AnchorsRetriever:
        """The stage over the hybrid :meth:`save` wrote into ``folder``, with settings ``params``."""
        r = cls(**params)
        r._check_settings()
        return r._learn(HybridRetriever.load(folder, **r._hybrid().get_params(deep=False)))

    # -- search ---------------------------------------------------------------------------------------------------

    @property
    def inner_(self) -> HybridRetriever:
        """The fitted retriever whose search this stage ranks (:class:`~aethel_lite.retrievers.traces.RankingStage`)."""
        return self.hybrid_

    def anchors(self, text: str) -> list[Anchor]:
        """The anchors of a question (module docstring), in order: companies best match first, years latest first;
        ``[]`` with fewer than two (one company and one year, say)."""
        self._check_fitted()
        company, period, types = (list(self.hybrid_.metadata_fields(text)) + [{}, {}])[:3]
        if len(company) >= 2:
            return [Anchor(key, "company", ({key: 1.0}, period, types)) for key in company]
        groups = _year_groups(period, int(self.anchor_gap))
        if len(groups) < 2:
            return []
        return [
            Anchor(min(keys, key=len), "period", (company, dict.fromkeys(keys, 1.0), types))
            for _, keys in groups
        ]

    def anchor_parts(self, anchor: Anchor, parts: Mapping, graph) -> dict:
        """The seed parts (``components``, ``mix``, ``named``; as :attr:`~aethel_lite.retrievers.traces.Teleport.parts`)
        of one anchor's teleport: the question's components with the anchor's metadata seeds."""
        comps = dict(parts["components"])
        vec, named = fields_vector(anchor.fields, graph)
        if vec is None:
            comps.pop("metadata", None)
        else:
            comps["metadata"] = vec
        return {"components": comps, "mix": self.hybrid_.mixture(comps), "named": named}

    def anchor_traces(self, text: str, trace: QueryTrace) -> list | None:
        """``[(Anchor, QueryTrace), ...]``: each anchor's PageRank of a question (one batch on the operator of the
        question's graph), or None with fewer than two anchors or no seed sources."""
        if trace.parts is None:
            return None
        found = self.anchors(text)
        if len(found) < 2:
            return None
        h, graph = self.hybrid_, trace.graph
        n_p = graph.n_passages
        parts = [self.anchor_parts(a, trace.parts, graph) for a in found]
        cols = [sum(w * p["components"][c] for c, w in p["mix"].items()) for p in parts]
        P = (
            trace.extra["operator"]
            .run(np.stack([c / c.sum() for c in cols], axis=1), alpha=h.alpha, tol=h.tol, max_iter=h.max_iter)
            .scores
        )
        out = []
        for j, (anchor, part) in enumerate(zip(found, parts)):
            extra = {
                **{k: trace.extra.get(k) for k in ("lexical", "dense", "heading")},
                "nodes": P[:, j],
                "ppr": P[:n_p, j],
                "operator": trace.extra["operator"],
            }
            n_reached = int(np.count_nonzero(extra["ppr"] > 0))
            out.append(
                (anchor, QueryTrace(trace.expansions, False, graph, n_reached, part, trace.corpus_idx, extra))
            )
        return out

    def rank(self, text: str, trace: QueryTrace, refine: Callable | None = None) -> np.ndarray:
        """The corpus-length scores of a question: the hybrid's own when it names fewer than two anchors, else the
        :func:`merge` of each anchor's (each first passed through ``refine(scores, anchor)`` when given). Records
        ``trace.extra["anchors"]`` and, when anchored, which anchor ranks each passage best (``"anchor_of"``)."""
        anchored = trace.extra["anchors"] = self.anchor_traces(text, trace)
        if not anchored:
            return self.hybrid_.rank(text, trace)
        rows = [self.hybrid_.rank(text, t) for _, t in anchored]
        if refine is not None:
            rows = [refine(row, anchor) for row, (anchor, _) in zip(rows, anchored)]
        scores, trace.extra["anchor_of"] = merge(rows, trace.corpus_idx)
        return scores


def merge(
    scores: Sequence[np.ndarray], corpus_idx: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    r"""The merged ranking of the anchors' corpus-length scores (module docstring).

    Returns
    -------
    score : ndarray
        :math:`1 / (1 + \min_a \operatorname{rank}_a(d))` for every candidate, ``-inf`` elsewhere.
    anchor : ndarray of int
        The index of the anchor that ranks each passage best (first on a tie; ``-1`` off the candidates).
    """
    n = len(scores[0])
    idx = np.arange(n) if corpus_idx is None else np.asarray(corpus_idx, dtype=np.int64)
    best = np.full(n, np.inf)
    anchor = np.full(n, -1, dtype=np.int64)
    for a, row in enumerate(scores):
        order, vals = topk(row, idx.size, idx)  # best first, ties by corpus order
        order = order[vals > -np.inf]  # a passage no anchor ranks stays unranked
        rank = np.full(n, np.inf)
        rank[order] = np.arange(order.size)
        better = rank < best
        best[better], anchor[better] = rank[better], a
    out = np.full(n, -np.inf)
    live = np.isfinite(best)
    out[live] = 1.0 / (1.0 + best[live])
    return out, anchor
