"""Compiled conjugate gradients for one Personalized PageRank query (numba, both cores).

Solves the Jacobi-scaled system :math:`S z = b` of :class:`aethel_lite.core.ppr_reduced._Reduced` by
conjugate gradients [1]_, one iteration as three parallel loops over ``PARTS`` fixed blocks of rows
(of about equal work): :math:`q = S v`; the updates of :math:`z` and :math:`r`; the update of :math:`v`.
The blocks' partial sums (of :math:`v^\\top q`, :math:`r^\\top r` and the L1 error bound
:math:`\\mathrm{scale} \\sum_i w_i |r_i|`) are added in block order, so every run gives the same bits
whatever the number of threads. When the bound falls below ``tol`` it is confirmed on the true
residual :math:`b - S z` (one product); if that fails, CG restarts from the true residual. numba's
``workqueue`` threading layer is slower than the numpy loop, so :func:`available` says yes only for
``omp`` or ``tbb``. Compiled code is cached on disk (numba ``cache=True``).

References
----------
.. [1] M. R. Hestenes, E. Stiefel, "Methods of conjugate gradients for solving linear systems",
   J. Res. Nat. Bur. Standards 49(6), 1952.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["PARTS", "row_blocks", "available", "cg_solve"]

# Row blocks of the parallel loops: fixed (not the thread count), for the same bits everywhere.
PARTS = 2
# Work of a row in row_blocks: its nonzeros plus this many for its share of the vector updates.
ROW_COST = 4


def row_blocks(indptr: np.ndarray, parts: int = PARTS) -> np.ndarray:
    """Row boundaries ``(parts + 1,)`` splitting a CSR matrix into blocks of about equal work
    (nonzeros + ``ROW_COST`` per row), as ``uint32`` or ``uint64``."""
    n = indptr.size - 1
    work = indptr.astype(np.float64) + ROW_COST * np.arange(n + 1)
    bounds = np.searchsorted(work, np.linspace(0.0, work[-1], parts + 1))
    bounds[0], bounds[-1] = 0, n
    return bounds.astype(np.uint32 if n < 2**32 else np.uint64)


@functools.cache
def available() -> bool:
    """Whether the compiled solver is installed and runs on a fast threading layer (checked once)."""
    try:
        from . import ppr_numba  # numba: imported only here, where a large system needs it
    except ImportError:  # pragma: no cover - numba is a pinned dependency
        return False
    # the threading layer is chosen at the first parallel call: make one on a 1x1 system
    indptr = np.array([0, 1], dtype=np.uint32)
    cg_solve(
        indptr,
        np.zeros(1, dtype=np.uint32),
        np.ones(1),
        row_blocks(indptr, 1),
        np.ones(1),
        np.ones(1),
        1.0,
        1.0,
        10,
    )
    return ppr_numba.threading_layer() in ("omp", "tbb")


def cg_solve(indptr, indices, data, bounds, b, weight, scale: float, tol: float, max_iter: int):
    """Solve :math:`S z = b` (``S`` symmetric positive definite) by conjugate gradients.

    Parameters
    ----------
    indptr, indices, data : numpy.ndarray
        CSR arrays of ``S``; ``indptr`` and ``indices`` unsigned (no negative-index checks).
    bounds : numpy.ndarray
        Row blocks, from :func:`row_blocks`.
    b, weight : numpy.ndarray, shape (m,)
        Right-hand side; weights :math:`w` of the error bound ``scale * sum_i w_i |r_i|``.
    scale, tol : float
        Stop when the bound, confirmed on the true residual, is below ``tol``.
    max_iter : int
        Maximum number of products, confirmations included (a bound below ``tol`` is always
        confirmed).

    Returns
    -------
    z : numpy.ndarray, shape (m,)
    products : int
    bound : float
        The last bound; the caller raises if it is not below ``tol``.
    """
    from . import ppr_numba  # after available(): already imported

    z = np.empty_like(b)
    it, bound = ppr_numba.cg(
        indptr, indices, data, bounds, b, weight, float(scale), float(tol), int(max_iter), z
    )
    return z, int(it), float(bound)
