r"""The hybrid's seed vectors besides the paper's entity seeds, and how the sources mix.

Passage seeds from one source's scores (:func:`passage_vector`), seeds on the metadata nodes a question names
(:func:`fields_vector`) and each source's share of the teleport (:func:`mixture`),

.. math:: s = \sum_c \frac{w_c}{\sum_{c'} w_{c'}}\, s_c .
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .base import topk

__all__ = ["passage_vector", "fields_vector", "mixture"]


def passage_vector(scores: np.ndarray, graph, depth: int) -> np.ndarray | None:
    r"""Passage seeds from one source's scores of ``graph``'s passages, or None: the top :math:`K` = ``depth``
    passages, weighted :math:`s_i \propto x_i - x_{(K+1)}`."""
    n = scores.shape[0]
    depth = min(int(depth), n)
    if depth == 0:
        return None
    order, _ = topk(scores, depth + 1)  # best first, ties by corpus order
    top = order[:depth]
    floor = scores[order[depth]] if depth < n else min(float(scores[top].min()), 0.0)
    w = np.maximum(scores[top] - floor, 0.0)
    if not w.any() or not np.isfinite(w).all():
        return None
    out = np.zeros(graph.n_nodes)
    out[top] = w / w.sum()
    return out


def fields_vector(fields, graph) -> tuple[np.ndarray | None, dict[str, float]]:
    """Seeds on ``graph``'s metadata nodes: each field present carries equal mass, split by weight; with each node's
    share."""
    out = np.zeros(graph.n_nodes)
    named: dict[str, float] = {}
    n_p = graph.n_passages
    for f in fields:
        present = {k: w for k, w in f.items() if k in graph.entity_index and w > 0}
        total = sum(present.values())
        for k, w in present.items():
            out[n_p + graph.entity_index[k]] += w / total
            named[k] = w / total
    if not out.any():
        return None, {}
    return out / out.sum(), named


def mixture(weights: Mapping[str, float], comps: Mapping[str, np.ndarray]) -> dict[str, float]:
    r"""Each present source's share :math:`w_c / \sum_{c'} w_{c'}` of the teleport (zero weights dropped)."""
    live = {c: weights[c] for c in comps if weights[c] > 0}
    total = sum(live.values())
    return {c: v / total for c, v in live.items()} if total > 0 else {}
