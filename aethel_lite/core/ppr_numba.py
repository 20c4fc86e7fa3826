"""The compiled kernels of :mod:`aethel_lite.core.ppr_kernels` (numba, ``parallel=True``).

Kept in their own module so that importing the package does not import numba (about 0.3 s of every
command's start-up): :func:`aethel_lite.core.ppr_kernels.available` imports this module the first
time a system is large enough to need it. It imports nothing from the package.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["cg", "threading_layer"]


def threading_layer() -> str:
    """The threading layer numba chose at the first parallel call."""
    return numba.threading_layer()


@numba.njit(inline="always")
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


@numba.njit(inline="always")
def _ordered_sum(partial):  # pragma: no cover - compiled
    """Sum of the blocks' partial sums in block order (the same bits for any thread count)."""
    total = 0.0
    for t in range(partial.shape[0]):
        total += partial[t]
    return total


@numba.njit(parallel=True, cache=True, nogil=True)
def cg(indptr, indices, data, bounds, b, weight, scale, tol, max_iter, z):  # pragma: no cover - compiled
    """Conjugate gradients on :math:`S z = b`, writing ``z``; returns ``(products, bound)``
    (:func:`aethel_lite.core.ppr_kernels.cg_solve` states the arguments)."""
    n = b.shape[0]
    parts = bounds.shape[0] - 1
    r = b.copy()
    v = b.copy()
    q = np.empty(n)
    sum_a = np.zeros(parts)
    sum_b = np.zeros(parts)
    for t in numba.prange(parts):
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
            for t in numba.prange(parts):
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
        for t in numba.prange(parts):  # q = S v, v'q
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
        for t in numba.prange(parts):  # z += a v, r -= a q, r'r, bound
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
            for t in numba.prange(parts):  # v = r + g v
                for i in range(bounds[t], bounds[t + 1]):
                    v[i] = r[i] + g * v[i]
    return it, bound
