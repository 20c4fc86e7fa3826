"""Compiled conjugate gradients for one Personalized PageRank query (numba, both cores).

Solves the Jacobi-scaled system :math:`S z = b` of :class:`aethel_lite.core.ppr_reduced._Reduced` by
conjugate gradients [1]_, one iteration as three parallel loops over ``PARTS`` fixed blocks of rows
(of about equal work): :math:`q = S v`; the updates of :math:`z` and :math:`r`; the update of :math:`v`.
The blocks' partial sums (of :math:`v^\\top q`, :math:`r^\\top r` and the L1 error bound
:math:`\\mathrm{scale} \\sum_i w_i |r_i|`) are added in block order, so every run gives the same bits
whatever the number of threads. When the bound falls below ``tol`` it is confirmed on the true
residual :math:`b - S z` (one product); if that fails, CG restarts from the true residual. numba's
``workqueue`` threading layer is slower than the numpy loop, so :func:`available` says yes only for
``omp`` or ``tbb``. Compiled code is cached on disk (numba ``cache=True``). numba is imported, and the kernels below
compiled, the first time :func:`available` is asked (:func:`_compiled`): importing numba is about
0.3 s of every command's start-up, and only systems of 50,000 nonzeros or more use it.

References
----------
.. [1] M. R. Hestenes, E. Stiefel, "Methods of conjugate gradients for solving linear systems",
   J. Res. Nat. Bur. Standards 49(6), 1952.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np

#: the parallel loop of the kernels: ``range`` as plain Python, ``numba.prange`` once compiled
prange = range

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
    compiled = _compiled()
    if compiled is None:
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
    return compiled.threading_layer() in ("omp", "tbb")


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
    z = np.empty_like(b)
    it, bound = _compiled().cg(
        indptr, indices, data, bounds, b, weight, float(scale), float(tol), int(max_iter), z
    )
    return z, int(it), float(bound)


@functools.cache
def _compiled():
    """numba and the compiled ``_cg`` (``SimpleNamespace(cg, threading_layer)``), built once per
    process; ``None`` without numba. The kernels' helpers and ``prange`` are rebound to their
    compiled forms first, as numba resolves a kernel's globals when it compiles it."""
    try:
        import numba
    except ImportError:  # pragma: no cover - numba is a pinned dependency
        return None
    global prange, _row_dot, _ordered_sum
    prange = numba.prange
    _row_dot = numba.njit(inline="always")(_row_dot)
    _ordered_sum = numba.njit(inline="always")(_ordered_sum)
    cg = numba.njit(parallel=True, cache=True, nogil=True)(_cg)
    return SimpleNamespace(cg=cg, threading_layer=numba.threading_layer)


def _row_dot(indptr, indices, data, x, i):  # pragma: no cover - compiled
    """:math:`(S x)_i` with four accumulators (shorter floating-point dependency chains)."""
    k = indptr[i]
    end = indptr[i + 1]
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    while k + 4 <= end:
        a0 += data[k] * x[indices[k]]
        a1 += data[k + 1] * x[indices[k + 1]]
        a2 += data[k + 2] * x[indices[k + 2]]
        a3 += data[k + 3] * x[indices[k + 3]]
        k += 4
    while k < end:
        a0 += data[k] * x[indices[k]]
        k += 1
    return (a0 + a1) + (a2 + a3)


def _ordered_sum(partial):  # pragma: no cover - compiled
    """Sum of the blocks' partial sums in block order (the same bits for any thread count)."""
    total = 0.0
    for t in range(partial.shape[0]):
        total += partial[t]
    return total


def _cg(indptr, indices, data, bounds, b, weight, scale, tol, max_iter, z):  # pragma: no cover - compiled
    n = b.shape[0]
    parts = bounds.shape[0] - 1
    r = b.copy()
    v = b.copy()
    q = np.empty(n)
    sum_a = np.zeros(parts)
    sum_b = np.zeros(parts)
    for t in prange(parts):
        s_rr = 0.0
        s_l1 = 0.0
        for i in range(bounds[t], bounds[t + 1]):
            z[i] = 0.0
            s_rr += r[i] * r[i]
            s_l1 += abs(r[i]) * weight[i]
        sum_a[t] = s_rr
        sum_b[t] = s_l1
    rr = _ordered_sum(sum_a)
    bound = scale * _ordered_sum(sum_b)
    it = 0
    while True:
        if bound < tol:  # confirm on the true residual r = b - S z; restart CG from it
            for t in prange(parts):
                s_rr = 0.0
                s_l1 = 0.0
                for i in range(bounds[t], bounds[t + 1]):
                    ri = b[i] - _row_dot(indptr, indices, data, z, i)
                    r[i] = ri
                    v[i] = ri
                    s_rr += ri * ri
                    s_l1 += abs(ri) * weight[i]
                sum_a[t] = s_rr
                sum_b[t] = s_l1
            it += 1
            rr = _ordered_sum(sum_a)
            bound = scale * _ordered_sum(sum_b)
            if bound < tol:
                break
        if it >= max_iter:
            break
        for t in prange(parts):  # q = S v, v'q
            s_vq = 0.0
            for i in range(bounds[t], bounds[t + 1]):
                qi = _row_dot(indptr, indices, data, v, i)
                q[i] = qi
                s_vq += v[i] * qi
            sum_a[t] = s_vq
        it += 1
        vq = _ordered_sum(sum_a)
        if not vq > 0:  # v == 0, so r == 0 exactly: confirm
            bound = 0.0
            continue
        a = rr / vq
        for t in prange(parts):  # z += a v, r -= a q, r'r, bound
            s_rr = 0.0
            s_l1 = 0.0
            for i in range(bounds[t], bounds[t + 1]):
                z[i] += a * v[i]
                ri = r[i] - a * q[i]
                r[i] = ri
                s_rr += ri * ri
                s_l1 += abs(ri) * weight[i]
            sum_a[t] = s_rr
            sum_b[t] = s_l1
        rr_new = _ordered_sum(sum_a)
        bound = scale * _ordered_sum(sum_b)
        g = rr_new / rr
        rr = rr_new
        if bound >= tol:
            for t in prange(parts):  # v = r + g v
                for i in range(bounds[t], bounds[t + 1]):
                    v[i] = r[i] + g * v[i]
    return it, bound
