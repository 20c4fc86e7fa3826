"""Personalized PageRank on a (sparse) graph: exact solvers and a local forward-push approximation.

Let :math:`A` be the nonnegative adjacency matrix (:math:`A_{ij}` is the weight of the edge
:math:`j \\to i`; for an undirected graph :math:`A` is symmetric), :math:`d_j = \\sum_i A_{ij}` the
(out-)degrees and :math:`W = A D^{-1}` the column-stochastic transition matrix, whose columns for
*dangling* nodes (:math:`d_j = 0`) are zero. For a teleport probability :math:`\\alpha \\in (0, 1)`
and a seed (personalization) vector :math:`s \\ge 0`, :math:`\\|s\\|_1 = 1`, Personalized PageRank
is the unique fixed point of

.. math::

    p = \\alpha s + (1 - \\alpha)\\,\\big(W p + (\\mathbf{1}_{\\mathrm{dangling}}^\\top p)\\, s\\big),

i.e. the stationary distribution of a walk that at each step teleports to the seeds with
probability :math:`\\alpha`, else follows a random edge, and that jumps back to the seeds from a
dangling node. It is a probability vector. This equals
``networkx.pagerank(G, alpha=1 - α, personalization=s)`` (networkx's ``alpha`` is the damping
factor :math:`1-\\alpha`; its default ``dangling=None`` also returns dangling mass to the seeds).

Two exact solvers:

* ``method="power"`` -- power iteration [1]_ [2]_ on the equation above. The L1 change contracts by
  :math:`1-\\alpha` per iteration, so about :math:`\\log(\\mathrm{tol}/2) / \\log(1-\\alpha)`
  iterations are needed (146 for :math:`\\alpha = 0.15`, tol = 1e-10). Works for any graph.
* ``method="cg"`` -- for a symmetric :math:`A`. Since :math:`(I - (1-\\alpha) W) p` is a multiple of
  :math:`s`, :math:`p = x / \\|x\\|_1` with :math:`(I - (1-\\alpha) W)\\, x = s`. With
  :math:`x = D^{1/2} z` this is the symmetric positive-definite system
  :math:`(I - (1-\\alpha) D^{-1/2} A D^{-1/2})\\, z = D^{-1/2} s` (isolated nodes: :math:`d=1`), whose
  eigenvalues lie in :math:`[\\alpha, 2-\\alpha]`; conjugate gradients contract the error by about
  :math:`(\\sqrt{\\kappa}-1)/(\\sqrt{\\kappa}+1) \\approx 0.56` per matrix product for
  :math:`\\alpha = 0.15` (:math:`\\kappa = (2-\\alpha)/\\alpha`) instead of 0.85, i.e. ~3.5x fewer
  products. Before that, an independent set of low-degree nodes (isolated nodes and, in a
  passage–entity graph, the many entities mentioned by one or two passages) is eliminated exactly
  (a Schur complement that adds no fill for degree <= 2), which shrinks the vectors by half on
  FinanceBench and improves the conditioning. It stops on a rigorous bound: with residual :math:`r = s - (I - (1-\\alpha)W)x`,
  :math:`\\|p - p^*\\|_1 \\le 2\\|r\\|_1/\\alpha` (because :math:`\\|W\\|_1 \\le 1` and
  :math:`\\|x^*\\|_1 \\ge 1`).

``method="auto"`` (default) uses ``cg`` for symmetric adjacency and ``power`` otherwise.
:class:`PPROperator` precomputes the matrices once for repeated queries; seeds may be one vector
``(n,)`` or a batch ``(n, b)`` (one sparse-dense product per iteration for the whole batch).

:func:`forward_push` is the local approximation of Andersen, Chung & Lang [3]_ for top-k queries on
large graphs.

References
----------
.. [1] L. Page, S. Brin, R. Motwani, T. Winograd, "The PageRank citation ranking: bringing order to
   the Web", Stanford InfoLab Technical Report 1999-66, 1999.
.. [2] T. H. Haveliwala, "Topic-sensitive PageRank", Proc. WWW 2002, pp. 517-526.
.. [3] R. Andersen, F. Chung, K. Lang, "Local graph partitioning using PageRank vectors",
   Proc. FOCS 2006, pp. 475-486.
.. [4] M. R. Hestenes, E. Stiefel, "Methods of conjugate gradients for solving linear systems",
   J. Res. Nat. Bur. Standards 49(6), 1952.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .errors import ConvergenceError, ParameterError

__all__ = [
    "PPRResult",
    "PPROperator",
    "transition_matrix",
    "personalized_pagerank",
    "forward_push",
    "PushResult",
]

_METHODS = ("auto", "power", "cg")


@dataclass
class PPRResult:
    """Result of :func:`personalized_pagerank`.

    Attributes
    ----------
    scores : numpy.ndarray, shape (n,) or (n, b)
        PageRank vector(s); each column is nonnegative and sums to 1.
    iterations : int
        Sparse matrix products performed (iterations of the solver).
    converged : bool
        Always True for a returned result (non-convergence raises :class:`ConvergenceError`).
    error : float
        Largest over columns of: the last L1 change between iterates (``power``), or the
        upper bound :math:`2\\|r\\|_1/\\alpha` on the L1 error (``cg``).
    method : str
        ``"power"`` or ``"cg"``.
    """

    scores: np.ndarray
    iterations: int
    converged: bool
    error: float
    method: str = "power"


def _as_csr(adjacency: Any) -> sp.csr_matrix:
    """Validate an adjacency matrix and return it as float64 CSR with int32 indices when possible."""
    if sp.issparse(adjacency):
        a = sp.csr_matrix(adjacency, dtype=np.float64, copy=True)
    else:
        arr = np.asarray(adjacency)
        if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.number):
            raise ParameterError(f"adjacency: expected a 2-D numeric matrix, got shape {arr.shape} of {arr.dtype}")
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
        True where :math:`d_j = 0` (no out-edges; isolated nodes of an undirected graph).
    """
    a = _as_csr(adjacency)
    deg = np.bincount(a.indices, weights=a.data, minlength=a.shape[0]).astype(np.float64)  # column sums
    dangling = deg == 0
    inv = np.divide(1.0, deg, out=np.zeros_like(deg), where=~dangling)
    a.data *= inv[a.indices]
    return a, dangling


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


def _check_seeds(seeds: Any, n: int) -> tuple[np.ndarray, bool]:
    """Seeds as a float64 C-contiguous (n, b) array with columns summing to 1; flag if input was 1-D."""
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
    s = np.array(s.reshape(n, -1), dtype=np.float64, order="C")
    if not np.all(np.isfinite(s)):
        raise ParameterError("seeds: contain NaN or infinite values")
    if s.size and s.min() < 0:
        raise ParameterError(f"seeds: must be nonnegative, found {s.min()!r}")
    total = s.sum(axis=0)
    if np.any(total <= 0):
        bad = int(np.flatnonzero(total <= 0)[0])
        raise ParameterError(f"seeds: column {bad} is all zero (no seed node)" if not one_d else "seeds: all zero (no seed node)")
    s /= total
    return s, one_d


class PPROperator:
    """Precomputed Personalized PageRank operator for repeated queries on one graph.

    Parameters
    ----------
    adjacency : scipy.sparse matrix or array_like, shape (n, n)
        Nonnegative edge weights (:math:`A_{ij}` = weight of :math:`j \\to i`); validated once.
    eliminate_degree : int, default 2
        ``cg`` only: nodes with at most this many neighbours (an independent set of them) are
        eliminated exactly before the iteration; 0 eliminates only isolated nodes.

    Attributes
    ----------
    n : int
        Number of nodes.
    W : scipy.sparse.csr_matrix
        Column-stochastic transition matrix (see :func:`transition_matrix`).
    dangling : numpy.ndarray of bool
        Dangling (zero out-degree) nodes.
    symmetric : bool
        Whether the adjacency is symmetric (then ``method="cg"`` is available).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> op = PPROperator(sp.csr_matrix(np.array([[0, 1.0], [1.0, 0]])))
    >>> op.run(np.array([1.0, 0.0]), alpha=0.5).scores.round(4)
    array([0.6667, 0.3333])
    """

    def __init__(self, adjacency: Any, *, eliminate_degree: int = 2) -> None:
        a = _as_csr(adjacency)
        self.n = a.shape[0]
        self.symmetric = bool((a != a.T).nnz == 0)
        deg = np.bincount(a.indices, weights=a.data, minlength=self.n).astype(np.float64)
        self.degree = deg
        self.dangling = deg == 0
        self._dangling_idx = np.flatnonzero(self.dangling)
        inv = np.divide(1.0, deg, out=np.zeros_like(deg), where=~self.dangling)
        self.W = a.copy()
        self.W.data *= inv[a.indices]
        self._adj = a
        self.eliminate_degree = int(eliminate_degree)
        self._reduced_cache: dict[float, _Reduced] = {}

    def _reduced(self, beta: float) -> _Reduced:
        """The symmetric system for ``cg``, low-degree nodes eliminated exactly (cached per alpha)."""
        red = self._reduced_cache.get(beta)
        if red is None:
            red = _Reduced(self._adj, self.degree, beta, max_degree=self.eliminate_degree)
            self._reduced_cache[beta] = red
        return red

    def run(
        self,
        seeds: Any,
        alpha: float = 0.15,
        tol: float = 1e-10,
        max_iter: int = 1000,
        *,
        method: str = "auto",
    ) -> PPRResult:
        """Personalized PageRank for one seed vector ``(n,)`` or a batch ``(n, b)``.

        See :func:`personalized_pagerank` for parameters, returns and errors.
        """
        alpha = _check_alpha(alpha)
        tol, max_iter = _check_tol_iter(tol, max_iter)
        if method not in _METHODS:
            raise ParameterError(f"method must be one of {_METHODS}, got {method!r}")
        s, one_d = _check_seeds(seeds, self.n)
        if method == "auto":
            method = "cg" if self.symmetric else "power"
        if method == "cg" and not self.symmetric:
            raise ParameterError("method='cg' needs a symmetric adjacency matrix; use method='power'")
        if one_d:
            s = np.ascontiguousarray(s[:, 0])  # 1-D fast path (sparse matrix-vector products)
        if method == "cg":
            p, it, err = self._cg(s, alpha, tol, max_iter)
        else:
            p, it, err = self._power(s, alpha, tol, max_iter)
        return PPRResult(scores=p, iterations=it, converged=True, error=err, method=method)

    def _power(self, s: np.ndarray, alpha: float, tol: float, max_iter: int) -> tuple[np.ndarray, int, float]:
        beta = 1.0 - alpha
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

    def _cg(self, s: np.ndarray, alpha: float, tol: float, max_iter: int) -> tuple[np.ndarray, int, float]:
        """Jacobi-preconditioned conjugate gradients on the reduced system, all columns at once."""
        red = self._reduced(1.0 - alpha)
        one = s.ndim == 1
        if one:
            def dot(x: np.ndarray, y: np.ndarray) -> np.ndarray:
                # einsum, not BLAS ddot: a threaded BLAS call is slow for short vectors on a busy machine
                return np.array([np.einsum("i,i->", x, y)])
        else:
            def dot(x: np.ndarray, y: np.ndarray) -> np.ndarray:
                return np.einsum("ij,ij->j", x, y)
        sk = red.sqrt_diag if one else red.sqrt_diag[:, None]
        rhs = red.rhs(s)  # reduced right-hand side, y units
        b = rhs / sk  # scaled system  S z = b,  y_K = z / sk
        S = red.S
        scale = 2.0 / alpha  # ||p - p*||_1 <= 2 ||r_y||_1 / alpha
        tmp = np.empty_like(b)

        def bound_of(r_z: np.ndarray) -> np.ndarray:
            np.abs(r_z, out=tmp)
            np.multiply(tmp, sk, out=tmp)
            return np.atleast_1d(tmp.sum(axis=0)) * scale

        z = np.zeros_like(b)
        r = b.copy()
        bound = bound_of(r)
        it = 0
        while True:
            v = r.copy()
            rr = dot(r, r)
            while it < max_iter:
                active = bound >= tol
                if not active.any():
                    break
                q = S @ v
                it += 1
                vq = dot(v, q)
                a = np.divide(rr, vq, out=np.zeros_like(rr), where=active & (vq > 0))
                z += v * a
                r -= q * a
                rr_new = dot(r, r)
                bound = bound_of(r)
                beta_k = np.divide(rr_new, rr, out=np.zeros_like(rr), where=active & (rr > 0))
                v *= beta_k
                v += r
                rr = rr_new
            # confirm with the true residual (the recursive one drifts in floating point)
            r = b - S @ z
            it += 1
            bound = bound_of(r)
            if not (bound >= tol).any():
                x = red.expand(z / sk, s)
                np.maximum(x, 0.0, out=x)
                x /= x.sum(axis=0)
                return x, it, float(bound.max())
            if it >= max_iter:
                break
        raise ConvergenceError(
            f"personalized_pagerank (conjugate gradients) did not converge: L1 error bound "
            f"{float(bound.max()):.3g} >= tol={tol:g} after max_iter={max_iter} iterations (alpha={alpha:g}); "
            f"raise max_iter or tol"
        )


class _Reduced:
    """Symmetric positive-definite form of PageRank with low-degree nodes eliminated.

    With :math:`\\tilde d = \\max(d, 1)` and :math:`x = \\tilde D y`, :math:`(I - \\beta W) x = s` is
    :math:`M y = s` with :math:`M = \\tilde D - \\beta A` (symmetric, strictly diagonally dominant).
    An independent set :math:`Z` of nodes with at most ``max_degree`` neighbours and no self-loop
    (in a passage–entity graph: mostly entities mentioned by one or two passages, and isolated
    nodes) has a diagonal block :math:`M_{ZZ} = \\tilde D_Z`, so it is eliminated exactly:
    :math:`M' = M_{KK} - M_{KZ} \\tilde D_Z^{-1} M_{ZK}` on the kept nodes :math:`K`, right-hand side
    :math:`s_K - M_{KZ} \\tilde D_Z^{-1} s_Z`, and :math:`y_Z = \\tilde D_Z^{-1}(s_Z - M_{ZK} y_K)`. The
    eliminated rows are solved exactly, so the residual of :math:`M y = s` equals that of the reduced
    system. ``S`` is :math:`M'` scaled to unit diagonal (Jacobi preconditioning).
    """

    def __init__(self, adj: sp.csr_matrix, degree: np.ndarray, beta: float, max_degree: int) -> None:
        n = adj.shape[0]
        dt = np.where(degree > 0, degree, 1.0)
        n_nb = np.diff(adj.indptr)
        self_loop = adj.diagonal() != 0
        cand = (n_nb <= max_degree) & ~self_loop
        # drop candidates adjacent to another candidate, so Z is an independent set
        coo = adj.tocoo()
        clash = cand[coo.row] & cand[coo.col] & (coo.row != coo.col)
        cand[coo.row[clash]] = False
        zmask = cand
        self.n, self.beta, self.dt = n, beta, dt
        self.K = np.flatnonzero(~zmask)
        self.Z = np.flatnonzero(zmask)
        m = (sp.diags(dt) - beta * adj).tocsr()
        m_kk = m[self.K][:, self.K]
        self.m_kz = m[self.K][:, self.Z].tocsr()
        self.m_zk = self.m_kz.T.tocsr()
        self.inv_dz = 1.0 / dt[self.Z]
        reduced = (m_kk - self.m_kz @ sp.diags(self.inv_dz) @ self.m_zk).tocsr()
        reduced.sum_duplicates()
        diag = reduced.diagonal()
        self.sqrt_diag = np.sqrt(diag)
        inv_sq = 1.0 / self.sqrt_diag
        rows = np.repeat(np.arange(reduced.shape[0]), np.diff(reduced.indptr))
        reduced.data *= inv_sq[rows] * inv_sq[reduced.indices]
        if reduced.nnz < np.iinfo(np.int32).max:
            reduced.indices = reduced.indices.astype(np.int32)
            reduced.indptr = reduced.indptr.astype(np.int32)
        reduced.sort_indices()
        self.S = reduced

    def rhs(self, s: np.ndarray) -> np.ndarray:
        """Reduced right-hand side :math:`s_K - M_{KZ} \\tilde D_Z^{-1} s_Z`."""
        sz = s[self.Z] * (self.inv_dz if s.ndim == 1 else self.inv_dz[:, None])
        return s[self.K] - self.m_kz @ sz

    def expand(self, y_k: np.ndarray, s: np.ndarray) -> np.ndarray:
        """Full :math:`x = \\tilde D y` from the kept-node solution."""
        y = np.empty_like(s)
        y[self.K] = y_k
        inv = self.inv_dz if s.ndim == 1 else self.inv_dz[:, None]
        y[self.Z] = (s[self.Z] - self.m_zk @ y_k) * inv
        y *= self.dt if s.ndim == 1 else self.dt[:, None]
        return y


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
        Nonnegative adjacency (:math:`A_{ij}` = weight of edge :math:`j \\to i`; symmetric for an
        undirected graph). Pass a :class:`PPROperator` to reuse the precomputed :math:`W` across
        queries.
    seeds : array_like, shape (n,) or (n, b)
        Nonnegative personalization weights; each column is normalised to sum 1. A batch of
        ``b`` columns is solved with one sparse-dense product per iteration.
    alpha : float, default 0.15
        Teleport (restart) probability, in (0, 1). networkx's ``alpha`` is ``1 - alpha``.
    tol : float, default 1e-10
        Stop when, for every column, the L1 change between iterates (``power``) or the
        rigorous L1 error bound (``cg``) is below ``tol``.
    max_iter : int, default 1000
        Maximum number of sparse matrix products.
    method : {"auto", "power", "cg"}, default "auto"
        ``"power"``: power iteration (any graph). ``"cg"``: conjugate gradients on the
        symmetrised linear system (symmetric adjacency only; ~3.5x fewer products at
        ``alpha=0.15``). ``"auto"``: ``cg`` if the adjacency is symmetric, else ``power``.

    Returns
    -------
    PPRResult
        ``scores`` with the shape of ``seeds`` (each column nonnegative, summing to 1),
        ``iterations``, ``converged`` and ``error``.

    Raises
    ------
    ParameterError
        ``alpha`` outside (0, 1); ``tol`` not positive; ``max_iter`` < 1; non-square or negative or
        non-finite adjacency; seeds with NaN/inf/negative values, an all-zero column or a
        length different from the number of nodes; unknown ``method``.
    ConvergenceError
        Not converged within ``max_iter`` iterations.

    Notes
    -----
    Dangling nodes (zero out-degree; the isolated nodes of an undirected graph) have a zero
    column in :math:`W`; their mass :math:`d^\\top p` (``d`` the dangling indicator) returns to the
    seeds, which keeps :math:`p` a probability vector and matches networkx's default. A seed on an
    isolated node keeps its mass there (:math:`p = s` if all seeds are isolated).

    For power iteration the L1 change shrinks by a factor :math:`1-\\alpha` per iteration, and
    :math:`\\|p_k - p^*\\|_1 \\le \\frac{1-\\alpha}{\\alpha}\\|p_k - p_{k-1}\\|_1`.

    References
    ----------
    Page et al. (1999); Haveliwala (2002); see the module docstring.
    """
    op = adjacency if isinstance(adjacency, PPROperator) else PPROperator(adjacency)
    return op.run(seeds, alpha=alpha, tol=tol, max_iter=max_iter, method=method)


@dataclass
class PushResult:
    """Result of :func:`forward_push`.

    Attributes
    ----------
    scores : numpy.ndarray, shape (n,)
        Approximate PageRank :math:`\\hat p` (an under-estimate up to normalisation; sums to < 1).
    residual : numpy.ndarray, shape (n,)
        Residual mass :math:`r`, with :math:`r(u) < \\varepsilon\\, d(u)` for every node.
    pushes : int
        Number of node pushes performed.
    """

    scores: np.ndarray
    residual: np.ndarray
    pushes: int


def forward_push(
    adjacency: Any,
    seed: Any,
    alpha: float = 0.15,
    eps: float = 1e-6,
    *,
    max_rounds: int = 100_000,
) -> PushResult:
    """Local approximate Personalized PageRank by forward push (Andersen, Chung & Lang 2006).

    Keeps an estimate :math:`\\hat p` and a residual :math:`r` (initially :math:`\\hat p = 0`,
    :math:`r = s`) with the invariant :math:`q = \\hat p + \\alpha (I - (1-\\alpha)W)^{-1} r`, where
    :math:`q = \\alpha (I - (1-\\alpha)W)^{-1} s`. A push at node :math:`u` moves
    :math:`\\alpha r(u)` into :math:`\\hat p(u)` and spreads :math:`(1-\\alpha) r(u)` to the
    neighbours in proportion to the edge weights. All nodes with :math:`r(u) \\ge \\varepsilon d(u)`
    are pushed in each round (a synchronous variant; the invariant is linear, so it is unchanged),
    until none is left. The work is :math:`O(1/(\\alpha\\varepsilon))` edge updates, independent of
    the graph size.

    Error bound (symmetric :math:`A`, the undirected case). Because :math:`W d = d` on
    non-isolated nodes, :math:`\\alpha (I-(1-\\alpha)W)^{-1} d = d` and hence, componentwise,

    .. math::

        0 \\le q(v) - \\hat p(v) \\le \\varepsilon\\, d(v) \\quad \\text{for every node } v,
        \\qquad \\|q - \\hat p\\|_1 \\le \\|r\\|_1 ,

    with :math:`d(v)` the weighted degree. :math:`q` is the PageRank :math:`p^*` of
    :func:`personalized_pagerank` except that mass reaching a dangling (isolated) node is lost
    instead of returning to the seeds; in an undirected graph only seeds on isolated nodes lose
    mass, and exactly :math:`p^* = q / (1 - (1-\\alpha)\\sigma)` with :math:`\\sigma` the seed mass on
    isolated nodes. The returned ``scores`` are :math:`\\hat p / (1 - (1-\\alpha)\\sigma)`, so

    .. math::

        0 \\le p^*(v) - \\mathrm{scores}(v) \\le \\frac{\\varepsilon\\, d(v)}{1 - (1-\\alpha)\\sigma}
        \\;(= \\varepsilon\\, d(v) \\text{ when no seed is isolated}).

    Parameters
    ----------
    adjacency : scipy.sparse matrix, array_like or PPROperator, shape (n, n)
        Symmetric nonnegative adjacency (undirected graph); pass a :class:`PPROperator` to
        reuse its validation across queries.
    seed : array_like, shape (n,)
        Nonnegative seed weights (normalised to sum 1).
    alpha : float, default 0.15
        Teleport probability in (0, 1).
    eps : float, default 1e-6
        Push threshold per unit degree, > 0.
    max_rounds : int, default 100000
        Safety cap on synchronous rounds (raises :class:`ConvergenceError` if hit).

    Returns
    -------
    PushResult

    References
    ----------
    R. Andersen, F. Chung, K. Lang, "Local graph partitioning using PageRank vectors", FOCS 2006.
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
    s, one_d = _check_seeds(seed, n)
    if not one_d:
        raise ParameterError(f"seed: forward_push takes one seed vector of shape ({n},), got {np.shape(seed)}")
    s = s[:, 0]
    beta = 1.0 - alpha
    deg = op.degree
    isolated = deg == 0
    inv = np.divide(1.0, deg, out=np.zeros_like(deg), where=~isolated)
    thresh = eps * deg
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
        raise ConvergenceError(f"forward_push did not finish within max_rounds={max_rounds} rounds (eps={eps:g})")
    sigma = float(s[isolated].sum())
    norm = 1.0 - beta * sigma
    return PushResult(scores=p / norm, residual=r, pushes=pushes)
