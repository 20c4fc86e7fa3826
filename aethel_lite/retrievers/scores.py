r"""Small pieces of arithmetic the retrievers built on the paper's share: normalised scores and passage seeds.

* :func:`min_max` — :math:`(x - \min x)/(\max x - \min x)` per row (a constant row → zeros), the hybrid's ranking
  terms and the multi-hop tie-break;
* :func:`standardise` — :math:`(x - \bar x)/\sigma_x` per row, the multi-hop passage score;
* :func:`passage_vector` — the hybrid's passage seeds from one source's scores;
* :func:`softmax_seeds` — the multi-hop seeds, a softmax over the best passages;
* :func:`fields_vector` and :func:`mixture` — seeds on metadata nodes and each source's share of a teleport,

.. math:: s = \sum_c \frac{w_c}{\sum_{c'} w_{c'}}\, s_c .
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .base import topk

__all__ = ["min_max", "standardise", "passage_vector", "softmax_seeds", "fields_vector", "mixture"]


def min_max(x: np.ndarray) -> np.ndarray:
    """Each row (the last axis) scaled to [0, 1] by its minimum and maximum; a constant row → zeros."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return np.zeros_like(x)
    lo, hi = x.min(axis=-1, keepdims=True), x.max(axis=-1, keepdims=True)
    span = hi - lo
    return np.divide(x - lo, span, out=np.zeros_like(x), where=span > 0)


def standardise(scores: np.ndarray) -> np.ndarray:
    """Each row as standard scores over its entries, :math:`(x - \\bar x)/\\sigma_x` (a constant row → zeros)."""
    scores = np.asarray(scores, dtype=np.float64)
    sd = scores.std(axis=1, keepdims=True)
    centred = scores - scores.mean(axis=1, keepdims=True)
    return np.divide(centred, sd, out=np.zeros_like(centred), where=sd > 0)


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


def softmax_seeds(scores: np.ndarray, n_seeds: int, temperature: float) -> tuple[np.ndarray, np.ndarray]:
    r"""``(indices, weights)``: the ``n_seeds`` passages of highest score, weighted
    :math:`\mathrm{softmax}(x/\tau)` over them (summing to 1)."""
    idx, vals = topk(scores, n_seeds)
    w = np.exp((vals - vals.max()) / temperature)
    return idx, w / w.sum()


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
