r"""One PageRank per anchor: questions whose answer needs a filing for each company or year they name.

"Which had more total assets at the end of FY2019, PepsiCo or Costco?" needs a page of PepsiCo's 10-K *and* one
of Costco's, but in the hybrid's joint teleport the filing that wins the document vote crowds the other out of the
top :math:`k`. With ``anchors="each"`` (``aethel-anchors``) each *anchor* the question names gets its own PageRank.

**Anchors** (:func:`question_anchors`) are the metadata nodes a question names that pick out different filings:
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
that ranks it best, the first in :func:`question_anchors` order on a tie; its seed-source shares are that anchor's
(:func:`aethel_lite.explain.attribution.attribute`). ``HybridRetriever.explain`` splits the joint teleport.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..data.docmeta import PREFIXES
from .base import topk
from .hybrid_settings import ANCHOR_MODES
from .seeds import fields_vector
from .statements import statements_first
from .traces import QueryTrace

__all__ = ["ANCHOR_MODES", "Anchor", "question_anchors", "anchor_parts", "solve", "ranked", "merge"]


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


def question_anchors(r, text: str) -> list[Anchor]:
    """The anchors of a question (module docstring), in order: companies best match first, years latest first;
    ``[]`` with fewer than two (one company and one year, say)."""
    if r.hybrid_settings.anchors != "each":
        return []
    company, period, types = (list(r.metadata_fields(text)) + [{}, {}])[:3]
    if len(company) >= 2:
        return [Anchor(key, "company", ({key: 1.0}, period, types)) for key in company]
    groups = _year_groups(period, int(r.hybrid_settings.anchor_gap))
    if len(groups) < 2:
        return []
    return [
        Anchor(min(keys, key=len), "period", (company, dict.fromkeys(keys, 1.0), types)) for _, keys in groups
    ]


def anchor_parts(r, anchor: Anchor, parts: Mapping, graph) -> dict:
    """The seed parts (``components``, ``mix``, ``named``; as :attr:`~aethel_lite.retrievers.traces.Teleport.parts`) of one anchor's teleport:
    the question's components with the anchor's metadata seeds."""
    comps = dict(parts["components"])
    vec, named = fields_vector(anchor.fields, graph)
    if vec is None:
        comps.pop("metadata", None)
    else:
        comps["metadata"] = vec
    return {"components": comps, "mix": r.mixture(comps), "named": named}


def solve(r, text: str, trace: QueryTrace, operator, docs: np.ndarray | None) -> list | None:
    """``[(Anchor, QueryTrace), ...]``: each anchor's PageRank of a question (one batch), or None with fewer than
    two; ``trace`` is the question's own, ``operator`` that of ``trace.graph``, ``docs`` its document nodes."""
    if trace.parts is None:
        return None
    found = question_anchors(r, text)
    if len(found) < 2:
        return None
    graph, n_p = trace.graph, trace.graph.n_passages
    parts = [anchor_parts(r, a, trace.parts, graph) for a in found]
    cols = [sum(w * p["components"][c] for c, w in p["mix"].items()) for p in parts]
    P = operator.run(
        np.stack([c / c.sum() for c in cols], axis=1), alpha=r.alpha, tol=r.tol, max_iter=r.max_iter
    ).scores
    out = []
    for j, (anchor, part) in enumerate(zip(found, parts)):
        extra = {
            **{k: trace.extra[k] for k in ("lexical", "dense", "heading")},
            "ppr": P[:n_p, j],
            "doc_ppr": None if docs is None else P[docs, j],
        }
        out.append(
            (
                anchor,
                QueryTrace(
                    trace.expansions,
                    False,
                    graph,
                    int(np.count_nonzero(extra["ppr"] > 0)),
                    part,
                    trace.corpus_idx,
                    extra,
                ),
            )
        )
    return out


def ranked(r, text: str, trace: QueryTrace) -> np.ndarray:
    """The merged corpus-length scores of an anchored question (:func:`merge` of each anchor's ``ranking_scores``,
    with its filing's statement pages first under ``anchor_pages="statements"``:
    :func:`~aethel_lite.retrievers.statements.statements_first`); records which anchor ranks each passage best in ``trace.extra["anchor_of"]``."""
    rows = []
    for _, t in trace.extra["anchors"]:
        e = t.extra
        rows.append(
            r.ranking_scores(
                text,
                e["ppr"],
                t.corpus_idx,
                lexical=e["lexical"],
                dense=e["dense"],
                doc_ppr=e["doc_ppr"],
                heading=e["heading"],
            )
        )
    if r.hybrid_settings.anchor_pages == "statements":
        rows = [statements_first(row, trace.corpus_idx, r.statements_, r.doc_ids_, text) for row in rows]
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
