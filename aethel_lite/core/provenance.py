r"""Why was a passage retrieved? Exact per-seed shares of its PageRank, and path analysis.

Personalized PageRank (:mod:`aethel_lite.core.ppr`) is :math:`p = x / \|x\|_1` with :math:`x`
*linear* in the seeds, :math:`(I - (1-\alpha) W)\, x = s`. Split the seed vector into
non-negative parts :math:`s = \sum_j s_j` and let :math:`p^{(j)} = \mathrm{PPR}(s_j / \|s_j\|_1)`;
summing part :math:`j`'s fixed-point equation over the nodes gives
:math:`\|x(s_j / \|s_j\|_1)\|_1 = c_j = 1 / (\alpha + (1-\alpha)\, d^\top p^{(j)})` (:math:`d` the
dangling indicator), so

.. math::

    p = \sum_j \underbrace{\frac{\|s_j\|_1\, c_j}{\sum_k \|s_k\|_1\, c_k}\; p^{(j)}}_{C_{\cdot j}}

exactly: :math:`C_{ij}` is the part of passage :math:`i`'s PageRank that seed :math:`j` contributes.
When no seed reaches a dangling node, :math:`c_j = 1/\alpha` and the weights are the seed masses.

References
----------
Haveliwala, T. H. (2002). Topic-sensitive PageRank. WWW '02 (linearity of PPR in the seeds).
Jeh, G. & Widom, J. (2003). Scaling personalized web search. WWW '03 (the linearity theorem).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..errors import ParameterError
from .ppr import PPROperator

__all__ = ["SeedShare", "part_weights", "ppr_parts", "seed_contributions", "hop_distances"]

#: Columns solved per PPR batch.
_BLOCK = 64


@dataclass(frozen=True)
class SeedShare:
    """The part of a passage's PageRank that one seed contributes.

    Attributes
    ----------
    seed : str
        What the question named: a query entity key, a metadata node, or ``"bm25"`` / ``"dense"``.
    entity : str
        The seed node the teleport lands on (graph entity, metadata node or seeded passage's pid).
    via : str
        How the seed was reached: a BCT rule (``"exact"``, ``"alias"``, ``"substring"``,
        ``"token"``), ``"metadata"``, ``"lexical"``, ``"dense"`` or ``"bm25-teleport"``.
    share : float
        The seed's contribution :math:`C_{ij}`; the shares of a passage sum to its PageRank.
    """

    seed: str
    entity: str
    via: str
    share: float

    def to_dict(self) -> dict:
        return {"seed": self.seed, "entity": self.entity, "via": self.via, "share": float(self.share)}


def _operator(adjacency: Any):
    return adjacency if isinstance(adjacency, PPROperator) else PPROperator(adjacency)


def part_weights(P: Any, masses: Any, dangling: Any, alpha: float) -> np.ndarray:
    r"""Weights :math:`w_j` with :math:`\mathrm{PPR}(s) = \sum_j w_j\, p^{(j)}` for :math:`s = \sum_j m_j \hat s_j`.

    Parameters
    ----------
    P : array_like, shape (n, b)
        :math:`p^{(j)} = \mathrm{PPR}(\hat s_j)`, the PageRank of each normalised part.
    masses : array_like, shape (b,)
        The parts' masses :math:`m_j = \|s_j\|_1` (any common scale).
    dangling, alpha
        The dangling-node mask and the teleport probability.

    Returns
    -------
    numpy.ndarray, shape (b,)
        :math:`w_j = m_j c_j / \sum_k m_k c_k`; sums to 1.
    """
    P = np.asarray(P, dtype=np.float64).reshape(len(dangling), -1)
    c = 1.0 / (alpha + (1.0 - alpha) * P[np.asarray(dangling, dtype=bool)].sum(axis=0))
    w = np.asarray(masses, dtype=np.float64) * c
    return w / w.sum()


def ppr_parts(
    adjacency: Any, parts: Any, *, alpha: float, tol: float = 1e-10, max_iter: int = 1000, rows: Any = None
) -> np.ndarray:
    r"""Each part's exact contribution to the PageRank of the seed vector the parts sum to.

    Parameters
    ----------
    adjacency, alpha, tol, max_iter
        As :func:`aethel_lite.core.ppr.personalized_pagerank`; each part is solved to ``tol`` (L1).
    parts : array_like, shape (n, b)
        Non-negative parts :math:`s_j` (columns, each with positive mass) of :math:`s = \sum_j s_j`.
    rows : array_like of int, optional
        Return only these nodes' rows (default: every node).

    Returns
    -------
    numpy.ndarray, shape (len(rows) or n, b)
        :math:`C_{ij}`; ``C.sum(axis=1)`` is ``personalized_pagerank(adjacency, parts.sum(axis=1))``
        to within about ``tol`` (L1).

    Raises
    ------
    ParameterError
        Bad ``parts`` shape, a negative or non-finite entry, an all-zero column, or bad ``alpha``,
        ``tol`` or ``max_iter``.
    """
    op = _operator(adjacency)
    S = np.asarray(parts, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != op.n:
        raise ParameterError(f"parts: expected shape ({op.n}, b), got {S.shape}")
    if not np.isfinite(S).all() or (S < 0).any():
        raise ParameterError("parts: entries must be finite and >= 0")
    mass = S.sum(axis=0)
    if (mass <= 0).any():
        raise ParameterError(f"parts: column {int(np.flatnonzero(mass <= 0)[0])} has no mass")
    rows = np.arange(op.n) if rows is None else np.asarray(rows, dtype=np.int64)
    out = np.zeros((rows.size, S.shape[1]))
    dangling_mass = np.zeros(S.shape[1])
    for start in range(0, S.shape[1], _BLOCK):
        cols = slice(start, start + _BLOCK)
        P = op.run(S[:, cols], alpha=alpha, tol=tol, max_iter=max_iter).scores.reshape(op.n, -1)
        dangling_mass[cols] = P[op.dangling].sum(axis=0)
        out[:, cols] = P[rows]
    # part_weights on the dangling masses alone (a 1-node "graph" whose node is dangling)
    return out * part_weights(dangling_mass[None, :], mass, [True], alpha)


def seed_contributions(
    adjacency: Any, seeds: Any, *, alpha: float, tol: float = 1e-10, max_iter: int = 1000, rows: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    r"""Split Personalized PageRank by seed node: one PPR solve per node where the seed vector is > 0.

    Parameters
    ----------
    adjacency, alpha, tol, max_iter, rows
        As :func:`ppr_parts`.
    seeds : array_like, shape (n,)
        Non-negative personalization vector (normalised to sum 1).

    Returns
    -------
    nodes : numpy.ndarray of int
        The seed nodes (where ``seeds > 0``), ascending.
    contributions : numpy.ndarray, shape (len(rows) or n, len(nodes))
        Column ``j``: seed ``nodes[j]``'s part of each node's PageRank; columns sum to ``personalized_pagerank``.

    Raises
    ------
    ParameterError
        ``seeds`` not 1-D with one entry per node, negative or non-finite, or all zero.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0, 1.0, 0], [1.0, 0, 1.0], [0, 1.0, 0]])   # a path 0 - 1 - 2
    >>> nodes, C = seed_contributions(A, np.array([0.5, 0.0, 0.5]), alpha=0.5)
    >>> nodes.tolist(), C.sum(axis=1).round(4).tolist()
    ([0, 2], [0.3333, 0.3333, 0.3333])
    """
    op = _operator(adjacency)
    s = np.asarray(seeds, dtype=np.float64)
    if s.ndim != 1 or s.shape[0] != op.n:
        raise ParameterError(f"seeds: expected shape ({op.n},), got {s.shape}")
    if not np.isfinite(s).all() or (s < 0).any() or not s.any():
        raise ParameterError("seeds: entries must be finite, >= 0 and not all zero")
    nodes = np.flatnonzero(s)
    parts = np.zeros((op.n, nodes.size))
    parts[nodes, np.arange(nodes.size)] = s[nodes]
    return nodes, ppr_parts(op, parts, alpha=alpha, tol=tol, max_iter=max_iter, rows=rows)


def hop_distances(graph, entities, *, links: bool = True) -> np.ndarray:
    """Shortest path length (edges) from any of ``entities`` to every node of ``graph``.

    Parameters
    ----------
    graph : EntityGraph
    entities : iterable of str
        Entity keys of the graph (the seeds).
    links : bool
        Walk the graph's entity–entity links too (``False``: passage–entity mentions only).

    Returns
    -------
    numpy.ndarray of float, shape (graph.n_nodes,)
        0 on the seeds, ``inf`` where no path leads (also everywhere when there is no seed).
    """
    nodes = sorted({graph.n_passages + graph.entity_index[e] for e in entities})
    if not nodes:
        return np.full(graph.n_nodes, np.inf)
    if links or not (graph.n_entities and graph.n_passages):
        adj = graph.adjacency()
    else:
        adj = sp.bmat([[None, graph.incidence], [graph.incidence.T, None]], format="csr", dtype=np.float64)
    from scipy.sparse.csgraph import dijkstra  # scipy.linalg with it: 0.1 s a plain search does not need

    return np.asarray(dijkstra(adj, directed=False, unweighted=True, indices=nodes, min_only=True))
