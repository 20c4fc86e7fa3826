"""Personalized PageRank on a (sparse) graph: exact solvers and a local forward-push approximation.

Let :math:`A` be the nonnegative adjacency matrix (:math:`A_{ij}` is the weight of the edge
:math:`j \\to i`; symmetric for an undirected graph), :math:`d_j = \\sum_i A_{ij}` the
(out-)degrees and :math:`W = A D^{-1}` the column-stochastic transition matrix, whose columns for
*dangling* nodes (:math:`d_j = 0`) are zero. For a teleport probability :math:`\\alpha \\in (0, 1)`
and a seed (personalization) vector :math:`s \\ge 0`, :math:`\\|s\\|_1 = 1`, Personalized PageRank
is the unique fixed point of

.. math::

    p = \\alpha s + (1 - \\alpha)\\,\\big(W p + (\\mathbf{1}_{\\mathrm{dangling}}^\\top p)\\, s\\big),

as networkx's ``pagerank(G, alpha=1 - α, personalization=s)`` with its default ``dangling=None``.

* ``method="power"`` -- power iteration [1]_ [2]_, any graph.
* ``method="cg"`` -- symmetric :math:`A` only. :math:`p = x / \\|x\\|_1` with
  :math:`(I - (1-\\alpha) W)\\, x = s`; with :math:`x = D^{1/2} z` this is the symmetric positive-definite
  system :math:`(I - (1-\\alpha) D^{-1/2} A D^{-1/2})\\, z = D^{-1/2} s` (isolated nodes: :math:`d=1`)
  with eigenvalues in :math:`[\\alpha, 2-\\alpha]`, solved by conjugate gradients [4]_ after a greedy
  independent set of low-degree nodes is eliminated exactly (a Schur complement). It stops on the bound
  :math:`\\|p - p^*\\|_1 \\le 2\\|r\\|_1/(1 - (1-\\alpha)\\sigma)`, with :math:`r = s - (I - (1-\\alpha)W)x`
  the true residual and :math:`\\sigma` the seed mass on isolated nodes, because
  :math:`\\|(I - (1-\\alpha)W)^{-1}\\|_1 \\le 1/\\alpha`, :math:`\\|x^*\\|_1 = (1 - (1-\\alpha)\\sigma)/\\alpha`
  (sum the equation over the nodes; an isolated node keeps :math:`x^*_i = s_i`) and
  :math:`\\|x/\\|x\\|_1 - x^*/\\|x^*\\|_1\\|_1 \\le 2\\|x - x^*\\|_1/\\|x^*\\|_1`.

A batch ``(n, b)`` is solved once per distinct column, with one sparse-dense product per iteration;
large batches run CG in float32 inside float64 iterative refinement [5]_ to the same float64 bound.
:func:`forward_push` is the local approximation of [3]_.

References
----------
.. [1] L. Page, S. Brin, R. Motwani, T. Winograd, "The PageRank citation ranking: bringing order to
   the Web", Stanford InfoLab Technical Report 1999-66, 1999.
.. [2] T. H. Haveliwala, "Topic-sensitive PageRank", Proc. WWW 2002, pp. 517-526.
.. [3] R. Andersen, F. Chung, K. Lang, "Local graph partitioning using PageRank vectors",
   Proc. FOCS 2006, pp. 475-486.
.. [4] M. R. Hestenes, E. Stiefel, "Methods of conjugate gradients for solving linear systems",
   J. Res. Nat. Bur. Standards 49(6), 1952.
.. [5] J. H. Wilkinson, "Rounding Errors in Algebraic Processes", 1963 (iterative refinement);
   A. Haidar, S. Tomov, J. Dongarra, N. J. Higham, SC18, 2018 (its mixed-precision use).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..errors import ConvergenceError, ParameterError
from . import ppr_kernels
from .ppr_reduced import _cg_double, _cg_mixed, _cg_vector, _Reduced, _torch_available

__all__ = [
    "PPRResult",
    "PPROperator",
    "transition_matrix",
    "personalized_pagerank",
    "forward_push",
    "PushResult",
]

_METHODS = ("auto", "power", "cg")
# Batches with at least this many unknowns (kept nodes x columns) use _cg_mixed, this many columns at a time.
_MIXED_MIN_SIZE = 1 << 18
_MIXED_BLOCK = 32
# Single queries on reduced systems with at least this many nonzeros use the compiled solver.
_COMPILED_MIN_NNZ = 50_000


@dataclass
class PPRResult:
    """Result of :func:`personalized_pagerank`.

    Attributes
    ----------
    scores : numpy.ndarray, shape (n,) or (n, b)
        PageRank vector(s); each column is nonnegative and sums to 1.
    iterations : int
        Sparse matrix products performed.
    error : float
        Largest over columns of the last L1 change (``power``) or of the L1 error bound (``cg``).
    method : str
        ``"power"`` or ``"cg"``.
    """

    scores: np.ndarray
    iterations: int
    error: float
    method: str = "power"


def _as_csr(adjacency: Any) -> sp.csr_matrix:
    """Validated float64 CSR copy, with int32 indices when possible."""
    if sp.issparse(adjacency):
        a = sp.csr_matrix(adjacency, dtype=np.float64, copy=True)
    else:
        arr = np.asarray(adjacency)
        if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.number):
            raise ParameterError(
                f"adjacency: expected a 2-D numeric matrix, got shape {arr.shape} of {arr.dtype}"
            )
        a = sp.csr_matrix(arr.astype(np.float64))
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ParameterError(f"adjacency: must be square, got shape {a.shape}")
    a.sum_duplicates()
    a.eliminate_zeros()
    if a.nnz and not np.all(np.isfinite(a.data)):
        raise ParameterError("adjacency: contains NaN or infinite weights")
    if a.nnz and a.data.min() < 0:
        raise ParameterError(f"adjacency: weights must be nonnegative, found {a.data.min()!r}")
    if a.nnz < np.iinfo(np.int32).max:
        a.indices = a.indices.astype(np.int32, copy=False)
        a.indptr = a.indptr.astype(np.int32, copy=False)
    a.sort_indices()
    return a


def transition_matrix(adjacency: Any) -> tuple[sp.csr_matrix, np.ndarray]:
    """Column-stochastic transition matrix :math:`W = A D^{-1}` and the dangling-node mask.

    Parameters
    ----------
    adjacency : scipy.sparse matrix or array_like, shape (n, n)
        Nonnegative weights; :math:`A_{ij}` is the weight of edge :math:`j \\to i`.

    Returns
    -------
    W : scipy.sparse.csr_matrix, shape (n, n)
        float64; column :math:`j` is :math:`A_{:,j}/d_j`, or zero if :math:`d_j = 0`.
    dangling : numpy.ndarray of bool, shape (n,)
        True where :math:`d_j = 0`.
    """
    a = _as_csr(adjacency)
    _, dangling, inv = _degrees(a)
    a.data *= inv[a.indices]
    return a, dangling


def _degrees(a: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Column sums, the dangling mask and the inverse degrees (0 where dangling)."""
    deg = np.bincount(a.indices, weights=a.data, minlength=a.shape[0]).astype(np.float64)
    dangling = deg == 0
    return deg, dangling, np.divide(1.0, deg, out=np.zeros_like(deg), where=~dangling)


def _check_alpha(alpha: float) -> float:
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise ParameterError(f"alpha must be a number in (0, 1), got {alpha!r}") from None
    if not (0.0 < a < 1.0):  # also rejects NaN
        raise ParameterError(f"alpha must be in (0, 1) (teleport probability), got {alpha!r}")
    return a


def _check_tol_iter(tol: float, max_iter: int) -> tuple[float, int]:
    try:
        t = float(tol)
    except (TypeError, ValueError):
        raise ParameterError(f"tol must be a positive number, got {tol!r}") from None
    if not (t > 0.0 and math.isfinite(t)):
        raise ParameterError(f"tol must be a positive finite number, got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ParameterError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    return t, int(max_iter)


@dataclass
class _Seeds:
    """Normalised seed vector(s) ``(r,)`` or ``(r, b)`` stored by their nonzero rows: ``dense()[rows] == values``."""

    n: int
    rows: np.ndarray
    values: np.ndarray

    @property
    def batch(self) -> bool:
        return self.values.ndim == 2

    def dense(self) -> np.ndarray:
        out = np.zeros((self.n,) + self.values.shape[1:])
        out[self.rows] = self.values
        return out


def _check_seeds(seeds: Any, n: int) -> _Seeds:
    """Validate seeds ``(n,)`` or ``(n, b)`` and normalise each column to sum 1."""
    if sp.issparse(seeds):
        seeds = seeds.toarray()
    s = np.asarray(seeds)
    if s.dtype == object or not (np.issubdtype(s.dtype, np.number) or s.dtype == bool):
        raise ParameterError(f"seeds: expected a numeric array, got dtype {s.dtype}")
    if s.ndim not in (1, 2):
        raise ParameterError(f"seeds: expected shape (n,) or (n, b), got {s.shape}")
    if s.shape[0] != n:
        raise ParameterError(f"seeds: shape {s.shape} does not match the graph's {n} nodes")
    if s.ndim == 2 and s.shape[1] == 0:
        raise ParameterError("seeds: batch has no columns")
    one_d = s.ndim == 1
    rows = (s != 0 if one_d else s.any(axis=1)).nonzero()[0]  # NaN, inf and negative values count
    values = np.array(s[rows], dtype=np.float64)
    if not np.all(np.isfinite(values)):
        raise ParameterError("seeds: contain NaN or infinite values")
    if values.size and values.min() < 0:
        raise ParameterError(f"seeds: must be nonnegative, found {values.min()!r}")
    total = values.sum(axis=0)
    if np.any(total <= 0):
        bad = int(np.flatnonzero(np.atleast_1d(total) <= 0)[0])
        raise ParameterError(
            "seeds: all zero (no seed node)" if one_d else f"seeds: column {bad} is all zero (no seed node)"
        )
    values /= total
    return _Seeds(n, rows, values)


def _distinct_columns(values: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(columns, inverse)`` with ``values[:, columns][:, inverse] == values`` when a batch repeats a
    seed vector, else ``(None, None)``."""
    if values.ndim == 1 or values.shape[1] == 1:
        return None, None
    _, first, inverse = np.unique(values.T, axis=0, return_index=True, return_inverse=True)
    if first.size == values.shape[1]:
        return None, None
    order = np.argsort(first)  # keep the batch's column order
    position = np.empty_like(order)
    position[order] = np.arange(order.size)
    return first[order], position[np.ravel(inverse)]


class PPROperator:
    """Precomputed Personalized PageRank operator for repeated queries on one graph.

    Parameters
    ----------
    adjacency : scipy.sparse matrix or array_like, shape (n, n)
        Nonnegative edge weights (:math:`A_{ij}` = weight of :math:`j \\to i`).
    eliminate_degree : int, default 6
        ``cg`` only: a greedy independent set of nodes with at most this many neighbours (lowest
        degree first) is eliminated exactly before the iteration; 0 eliminates only isolated nodes.

    Attributes
    ----------
    n : int
    W : scipy.sparse.csr_matrix
        Column-stochastic transition matrix (:func:`transition_matrix`).
    dangling : numpy.ndarray of bool
    symmetric : bool
        Whether ``method="cg"`` is available.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> op = PPROperator(sp.csr_matrix(np.array([[0, 1.0], [1.0, 0]])))
    >>> op.run(np.array([1.0, 0.0]), alpha=0.5).scores.round(4)
    array([0.6667, 0.3333])
    """

    def __init__(self, adjacency: Any, *, eliminate_degree: int = 6) -> None:
        a = _as_csr(adjacency)
        self.n = a.shape[0]
        self.symmetric = bool((a != a.T).nnz == 0)
        self.degree, self.dangling, self._inv_degree = _degrees(a)
        self._dangling_idx = np.flatnonzero(self.dangling)
        self.W = a.copy()
        self.W.data *= self._inv_degree[a.indices]
        self._adj = a
        self.eliminate_degree = int(eliminate_degree)
        self._reduced_cache: dict[float, _Reduced] = {}

    def prepare(self, alpha: float) -> PPROperator:
        """Build, ahead of the solves, what ``method="cg"`` needs for teleport probability ``alpha``: the reduced
        system, its compiled kernels' arrays and, when torch is already imported, its mixed-precision tensors.
        A solve never stores anything on the operator: what was not prepared is built for that solve alone,
        with the same result. Returns ``self``."""
        beta = 1.0 - _check_alpha(alpha)
        if self.symmetric:
            red = self._reduced_cache.get(beta)
            if red is None:
                red = self._reduced_cache[beta] = self._reduced(beta)
            red.prepare(
                compiled=red.S.nnz >= _COMPILED_MIN_NNZ and ppr_kernels.available(),
                torch="torch" in sys.modules,
            )
        return self

    def _reduced(self, beta: float) -> _Reduced:
        """The reduced symmetric system for ``cg``: the prepared one (:meth:`prepare`), else a new one."""
        red = self._reduced_cache.get(beta)
        return (
            red
            if red is not None
            else _Reduced(self._adj, self.degree, beta, max_degree=self.eliminate_degree)
        )

    def run(
        self,
        seeds: Any,
        alpha: float = 0.15,
        tol: float = 1e-10,
        max_iter: int = 1000,
        *,
        method: str = "auto",
    ) -> PPRResult:
        """Personalized PageRank for one seed vector ``(n,)`` or a batch ``(n, b)``; see
        :func:`personalized_pagerank` for parameters, returns and errors."""
        alpha = _check_alpha(alpha)
        tol, max_iter = _check_tol_iter(tol, max_iter)
        if method not in _METHODS:
            raise ParameterError(f"method must be one of {_METHODS}, got {method!r}")
        s = _check_seeds(seeds, self.n)
        if method == "auto":
            method = "cg" if self.symmetric else "power"
        if method == "cg" and not self.symmetric:
            raise ParameterError("method='cg' needs a symmetric adjacency matrix; use method='power'")
        solve = self._cg if method == "cg" else self._power
        columns, inverse = _distinct_columns(s.values)
        if columns is not None:  # PPR is solved once per distinct seed vector of the batch
            p, it, err = solve(
                _Seeds(s.n, s.rows, np.ascontiguousarray(s.values[:, columns])), alpha, tol, max_iter
            )
            p = np.take(p, inverse, axis=1)
        else:
            p, it, err = solve(s, alpha, tol, max_iter)
        return PPRResult(scores=p, iterations=it, error=err, method=method)

    def _power(self, seeds: _Seeds, alpha: float, tol: float, max_iter: int) -> tuple[np.ndarray, int, float]:
        beta = 1.0 - alpha
        s = seeds.dense()
        W, dang = self.W, self._dangling_idx
        p = s.copy()
        err = math.inf
        for it in range(1, max_iter + 1):
            new = W @ p
            new *= beta
            coef = alpha + beta * p[dang].sum(axis=0) if dang.size else alpha
            new += s * coef
            err = float(np.abs(new - p).sum(axis=0).max())
            p = new
            if err < tol:
                return p, it, err
        raise ConvergenceError(
            f"personalized_pagerank (power iteration) did not converge: L1 change {err:.3g} >= tol={tol:g} "
            f"after max_iter={max_iter} iterations (alpha={alpha:g}); raise max_iter or tol"
        )

    def _cg(self, s: _Seeds, alpha: float, tol: float, max_iter: int) -> tuple[np.ndarray, int, float]:
        """Conjugate gradients on the reduced, Jacobi-scaled system :math:`S z = b` (see :class:`_Reduced`);
        the residual in unscaled units is :math:`r = (b - S z) \\odot \\sqrt{\\mathrm{diag}}`."""
        beta = 1.0 - alpha
        red = self._reduced(beta)
        one = not s.batch
        b = red.rhs(s)
        sigma = s.values[self.dangling[s.rows]].sum(axis=0)  # seed mass on isolated nodes
        scale = np.atleast_1d(2.0 / (1.0 - beta * sigma))
        if not one and b.size >= _MIXED_MIN_SIZE and _torch_available():
            # blocks of columns, so that the dense blocks stay in cache
            z, it, err = np.empty_like(b), 0, 0.0
            for start in range(0, b.shape[1], _MIXED_BLOCK):
                cols = slice(start, start + _MIXED_BLOCK)
                z[:, cols], it_block, err_block = _cg_mixed(
                    red, np.ascontiguousarray(b[:, cols]), scale[cols], tol, max_iter
                )
                it, err = max(it, it_block), max(err, err_block)
                if not (err < tol):
                    break
        elif one and red.S.nnz >= _COMPILED_MIN_NNZ and ppr_kernels.available():
            z, it, err = ppr_kernels.cg_solve(
                *red.compiled_arrays(), b, red.sqrt_diag, float(scale[0]), tol, max_iter
            )
        elif one:
            z, it, err = _cg_vector(red.S, b, red.sqrt_diag, float(scale[0]), tol, max_iter)
        else:
            z, it, err = _cg_double(red.S, b, red.sqrt_diag, scale, tol, max_iter)
        if not (err < tol):
            raise ConvergenceError(
                f"personalized_pagerank (conjugate gradients) did not converge: L1 error bound {err:.3g} >= "
                f"tol={tol:g} after max_iter={max_iter} iterations (alpha={alpha:g}); raise max_iter or tol"
            )
        x = red.expand(z, s)
        np.maximum(x, 0.0, out=x)
        x /= x.sum(axis=0)
        return x, it, err


def personalized_pagerank(
    adjacency: Any,
    seeds: Any,
    alpha: float = 0.15,
    tol: float = 1e-10,
    max_iter: int = 1000,
    *,
    method: str = "auto",
) -> PPRResult:
    """Personalized PageRank :math:`p = \\alpha s + (1-\\alpha)(W p + (d^\\top p) s)`.

    Parameters
    ----------
    adjacency : scipy.sparse matrix, array_like or PPROperator, shape (n, n)
        Nonnegative adjacency (:math:`A_{ij}` = weight of edge :math:`j \\to i`). Pass a
        :class:`PPROperator` to reuse the precomputed :math:`W` across queries.
    seeds : array_like, shape (n,) or (n, b)
        Nonnegative personalization weights; each column is normalised to sum 1.
    alpha : float, default 0.15
        Teleport probability, in (0, 1) (networkx's ``alpha`` is ``1 - alpha``).
    tol : float, default 1e-10
        Stop when, in every column, the L1 change (``power``) or the L1 error bound (``cg``) is below.
    max_iter : int, default 1000
        Maximum number of sparse matrix products.
    method : {"auto", "power", "cg"}, default "auto"
        ``"power"``: power iteration (any graph). ``"cg"``: conjugate gradients (symmetric
        adjacency only). ``"auto"``: ``cg`` if the adjacency is symmetric, else ``power``.

    Returns
    -------
    PPRResult
        ``scores`` with the shape of ``seeds`` (each column nonnegative, summing to 1),
        ``iterations``, ``error`` and ``method``.

    Raises
    ------
    ParameterError
        Bad ``alpha``, ``tol``, ``max_iter`` or ``method``; a non-square, negative or non-finite
        adjacency; seeds of the wrong length, negative or non-finite, or with an all-zero column.
    ConvergenceError
        Not converged within ``max_iter`` iterations.

    Notes
    -----
    The mass of dangling nodes returns to the seeds (module docstring); a seed on an isolated node
    keeps its mass there (:math:`p = s` if all seeds are isolated). For power iteration
    :math:`\\|p_k - p^*\\|_1 \\le \\frac{1-\\alpha}{\\alpha}\\|p_k - p_{k-1}\\|_1`.
    """
    op = adjacency if isinstance(adjacency, PPROperator) else PPROperator(adjacency)
    return op.run(seeds, alpha=alpha, tol=tol, max_iter=max_iter, method=method)


@dataclass
class PushResult:
    """Result of :func:`forward_push`.

    Attributes
    ----------
    scores : numpy.ndarray, shape (n,)
        Approximate PageRank (an under-estimate; sums to < 1).
    residual : numpy.ndarray, shape (n,)
        Residual mass :math:`r`, with :math:`r(u) < \\varepsilon\\, d(u)` for every node.
    pushes : int
    """

    scores: np.ndarray
    residual: np.ndarray
    pushes: int


def forward_push(
    adjacency: Any, seed: Any, alpha: float = 0.15, eps: float = 1e-6, *, max_rounds: int = 100_000
) -> PushResult:
    """Local approximate Personalized PageRank by forward push (Andersen, Chung & Lang 2006).

    Starting from :math:`\\hat p = 0` and the residual :math:`r = s`, a push at node :math:`u` moves
    :math:`\\alpha r(u)` into :math:`\\hat p(u)` and spreads :math:`(1-\\alpha) r(u)` to its neighbours
    by edge weight; each round pushes all nodes with :math:`r(u) \\ge \\varepsilon d(u)`, until none is
    left (:math:`O(1/(\\alpha\\varepsilon))` edge updates). With
    :math:`q = \\alpha (I - (1-\\alpha)W)^{-1} s` and a symmetric :math:`A`, componentwise

    .. math::

        0 \\le q(v) - \\hat p(v) \\le \\varepsilon\\, d(v) \\quad \\text{for every node } v,
        \\qquad \\|q - \\hat p\\|_1 \\le \\|r\\|_1 ,

    with :math:`d(v)` the weighted degree. :math:`p^* = q / (1 - (1-\\alpha)\\sigma)`, :math:`\\sigma` the
    seed mass on isolated nodes, and ``scores`` are :math:`\\hat p / (1 - (1-\\alpha)\\sigma)`, so

    .. math::

        0 \\le p^*(v) - \\mathrm{scores}(v) \\le \\frac{\\varepsilon\\, d(v)}{1 - (1-\\alpha)\\sigma}
        \\;(= \\varepsilon\\, d(v) \\text{ when no seed is isolated}).

    Parameters
    ----------
    adjacency : scipy.sparse matrix, array_like or PPROperator, shape (n, n)
        Symmetric nonnegative adjacency.
    seed : array_like, shape (n,)
        Nonnegative seed weights (normalised to sum 1).
    alpha : float, default 0.15
    eps : float, default 1e-6
        Push threshold per unit degree, > 0.
    max_rounds : int, default 100000
        Cap on rounds (raises :class:`ConvergenceError` if hit).

    Returns
    -------
    PushResult
    """
    alpha = _check_alpha(alpha)
    try:
        eps = float(eps)
    except (TypeError, ValueError):
        raise ParameterError(f"eps must be a positive number, got {eps!r}") from None
    if not (eps > 0 and math.isfinite(eps)):
        raise ParameterError(f"eps must be a positive finite number, got {eps!r}")
    op = adjacency if isinstance(adjacency, PPROperator) else PPROperator(adjacency)
    a, n = op._adj, op.n
    if not op.symmetric:
        raise ParameterError("forward_push: adjacency must be symmetric (undirected graph)")
    checked = _check_seeds(seed, n)
    if checked.batch:
        raise ParameterError(
            f"seed: forward_push takes one seed vector of shape ({n},), got {np.shape(seed)}"
        )
    s = checked.dense()
    beta = 1.0 - alpha
    inv = op._inv_degree
    thresh = eps * op.degree
    p = np.zeros(n)
    r = s.copy()
    pushes = 0
    for _ in range(max_rounds):
        active = np.flatnonzero((r >= thresh) & (r > 0))
        if active.size == 0:
            break
        ra = r[active]
        pushes += active.size
        p[active] += alpha * ra
        r[active] = 0.0
        sub = a[active]  # rows == columns (symmetric): neighbours of the pushed nodes
        r += sub.T @ (beta * ra * inv[active])
    else:
        raise ConvergenceError(
            f"forward_push did not finish within max_rounds={max_rounds} rounds (eps={eps:g})"
        )
    sigma = float(s[op.dangling].sum())
    return PushResult(scores=p / (1.0 - beta * sigma), residual=r, pushes=pushes)
