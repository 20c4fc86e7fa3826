"""The symmetric, reduced form of Personalized PageRank and the conjugate-gradient solvers on it.

:class:`_Reduced` builds the system; :func:`_cg_vector` (one query), :func:`_cg_double` (a batch,
float64) and :func:`_cg_mixed` (a large batch, float32 CG in float64 iterative refinement) solve it
to the L1 error bound derived in :mod:`aethel_lite.core.ppr`.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from . import ppr_kernels

# The float32 inner solve of _cg_mixed stops when every column's residual 2-norm fell by this factor.
_MIXED_INNER_REDUCTION = 1e-5

try:  # scipy's CSR matrix-vector kernel (y += A x), called without the allocation of ``A @ x``
    from scipy.sparse._sparsetools import csr_matvec as _csr_matvec
except ImportError:  # pragma: no cover - private scipy API; fall back to ``S @ v``
    _csr_matvec = None


def _independent_low_degree(adj: sp.csr_matrix, n_nb: np.ndarray, candidate: np.ndarray) -> np.ndarray:
    """Greedy independent set among the candidate nodes, lowest degree first (a boolean mask)."""
    chosen = np.zeros(adj.shape[0], dtype=bool)
    blocked = np.zeros(adj.shape[0], dtype=bool)
    indptr, indices = adj.indptr, adj.indices
    order = np.flatnonzero(candidate)
    for i in order[np.argsort(n_nb[order], kind="stable")].tolist():
        if not blocked[i]:
            chosen[i] = True
            blocked[indices[indptr[i] : indptr[i + 1]]] = True
    return chosen


class _Reduced:
    """Symmetric positive-definite form of PageRank with low-degree nodes eliminated.

    With :math:`\\tilde d = \\max(d, 1)` and :math:`x = \\tilde D y`, :math:`(I - \\beta W) x = s` is
    :math:`M y = s` with :math:`M = \\tilde D - \\beta A` (symmetric, strictly diagonally dominant).
    An independent set :math:`Z` of nodes with at most ``max_degree`` neighbours and no self-loop has
    a diagonal block :math:`M_{ZZ} = \\tilde D_Z`, so it is eliminated exactly:
    :math:`M' = M_{KK} - M_{KZ} \\tilde D_Z^{-1} M_{ZK}` on the kept nodes :math:`K`, right-hand side
    :math:`s_K - M_{KZ} \\tilde D_Z^{-1} s_Z`, and :math:`y_Z = \\tilde D_Z^{-1}(s_Z - M_{ZK} y_K)`, so the
    residual of :math:`M y = s` equals that of the reduced system. ``S`` is :math:`M'` scaled to unit
    diagonal (Jacobi preconditioning): :math:`S z = b` with :math:`y_K = z / \\sqrt{\\mathrm{diag}(M')}`.
    """

    def __init__(self, adj: sp.csr_matrix, degree: np.ndarray, beta: float, max_degree: int) -> None:
        n = adj.shape[0]
        dt = np.where(degree > 0, degree, 1.0)
        n_nb = np.diff(adj.indptr)
        self_loop = adj.diagonal() != 0
        zmask = _independent_low_degree(adj, n_nb, (n_nb <= max_degree) & ~self_loop)
        self.n = n
        kept = np.flatnonzero(~zmask)
        # kept nodes by decreasing degree: the hubs' entries of the vectors share cache lines
        self.K = kept[np.argsort(-n_nb[kept], kind="stable")]
        self.Z = np.flatnonzero(zmask)
        self.k_pos = np.full(n, -1)
        self.k_pos[self.K] = np.arange(self.K.size)
        self.z_pos = np.full(n, -1)
        self.z_pos[self.Z] = np.arange(self.Z.size)
        m = (sp.diags(dt) - beta * adj).tocsr()
        m_kk = m[self.K][:, self.K]
        m_kz = m[self.K][:, self.Z].tocsr()
        m_zk = m_kz.T.tocsr()
        self.inv_dz = 1.0 / dt[self.Z]
        reduced = (m_kk - m_kz @ sp.diags(self.inv_dz) @ m_zk).tocsr()
        reduced.sum_duplicates()
        self.sqrt_diag = np.sqrt(reduced.diagonal())
        inv_sq = 1.0 / self.sqrt_diag
        rows = np.repeat(np.arange(reduced.shape[0]), np.diff(reduced.indptr))
        reduced.data *= inv_sq[rows] * inv_sq[reduced.indices]
        if reduced.nnz < np.iinfo(np.int32).max:
            reduced.indices = reduced.indices.astype(np.int32)
            reduced.indptr = reduced.indptr.astype(np.int32)
        reduced.sort_indices()
        self.S = reduced
        self.k_scale = dt[self.K] * inv_sq  # x_K = k_scale * z
        self.m_zk_scaled = (m_zk @ sp.diags(inv_sq)).tocsr()  # M_ZK diag(1/sqrt(diag))
        self.m_zk_scaled.sort_indices()
        self._torch = None
        self._compiled = None

    def prepare(self, *, compiled: bool, torch: bool) -> None:
        """Build the compiled kernels' arrays and the torch tensors ahead of the solves that use them.

        A solve never stores anything on the system: what :meth:`prepare` did not build is built for
        that solve alone (:meth:`compiled_arrays`, :meth:`torch_matrices`).
        """
        if compiled and self._compiled is None:
            self._compiled = self._compiled_arrays()
        if torch and self._torch is None:
            self._torch = self._torch_matrices()

    def compiled_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``S`` as unsigned CSR arrays and its row blocks, for :func:`ppr_kernels.cg_solve`."""
        return self._compiled if self._compiled is not None else self._compiled_arrays()

    def _compiled_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        S = self.S
        index = np.uint32 if S.nnz < 2**32 else np.uint64
        return (S.indptr.astype(index), S.indices.astype(index), S.data, ppr_kernels.row_blocks(S.indptr))

    def rhs(self, seeds: Any) -> np.ndarray:
        """Right-hand side :math:`b = (s_K - M_{KZ} \\tilde D_Z^{-1} s_Z) / \\sqrt{\\mathrm{diag}}`."""
        v = seeds.values
        one = v.ndim == 1
        b = np.zeros((self.K.size,) + v.shape[1:])
        k = self.k_pos[seeds.rows]
        kk = k[k >= 0]
        b[kk] = v[k >= 0] / (self.sqrt_diag[kk] if one else self.sqrt_diag[kk, None])
        z = self.z_pos[seeds.rows]
        if (z >= 0).any():
            zi = z[z >= 0]
            sz = v[z >= 0] * (self.inv_dz[zi] if one else self.inv_dz[zi, None])
            b -= self.m_zk_scaled[zi].T @ sz
        return b

    def expand(self, z: np.ndarray, seeds: Any) -> np.ndarray:
        """Unnormalised PageRank :math:`x = \\tilde D y` on all nodes from the solution of :math:`S z = b`."""
        one = z.ndim == 1
        x = np.empty((self.n,) + z.shape[1:])
        x[self.K] = z * (self.k_scale if one else self.k_scale[:, None])
        x_z = _product_into(self.m_zk_scaled, z, np.empty((self.Z.size,) + z.shape[1:]))
        np.negative(x_z, out=x_z)
        x[self.Z] = x_z
        on_z = self.z_pos[seeds.rows] >= 0
        if on_z.any():
            x[seeds.rows[on_z]] += seeds.values[on_z]
        return x

    def torch_matrices(self):
        """``S`` as torch sparse CSR tensors in float64 and float32 (those :meth:`prepare` built, if it did)."""
        return self._torch if self._torch is not None else self._torch_matrices()

    def _torch_matrices(self):
        import torch

        index = torch.int32 if self.S.indices.dtype == np.int32 else torch.int64
        crow = torch.from_numpy(self.S.indptr).to(index)
        col = torch.from_numpy(self.S.indices).to(index)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "sparse CSR support is in beta state"
            s64 = torch.sparse_csr_tensor(crow, col, torch.from_numpy(self.S.data), size=self.S.shape)
            s32 = torch.sparse_csr_tensor(
                crow, col, torch.from_numpy(self.S.data.astype(np.float32)), size=self.S.shape
            )
        return s64, s32


def _product_into(S: sp.csr_matrix, v: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out = S @ v``; for one vector through scipy's CSR kernel, without allocating."""
    if v.ndim == 1 and _csr_matvec is not None:
        out.fill(0.0)
        _csr_matvec(S.shape[0], S.shape[1], S.indptr, S.indices, S.data, v, out)
    else:
        out[...] = S @ v
    return out


def _torch_available() -> bool:
    try:
        import torch  # noqa: F401  (a core dependency; imported lazily: its import is slow)
    except ImportError:  # pragma: no cover - torch is pinned in pyproject.toml
        return False
    return True


class _SymmetricProduct:
    """``q = S v`` for a symmetric CSR ``S``, written into ``out``; cheap while ``v`` is sparse.

    While the rows :math:`J` of ``v``'s support (a query's first Krylov vectors live near its seeds)
    hold few nonzeros, :math:`S v = S_{J,:}^\\top v_J` is gathered from those rows alone, and the next
    support is :math:`J` plus their neighbours.
    """

    def __init__(self, S: sp.csr_matrix, v: np.ndarray) -> None:
        self.S = S
        self.support = (v != 0).nonzero()[0] if v.ndim == 1 else None

    def __call__(self, v: np.ndarray, out: np.ndarray) -> np.ndarray:
        S, support = self.S, self.support
        if support is not None:
            starts = S.indptr[support]
            lengths = S.indptr[support + 1] - starts
            total = int(lengths.sum())
            if total * 16 < S.nnz:
                offsets = np.cumsum(lengths) - lengths
                entries = np.arange(total) + np.repeat(starts - offsets, lengths)
                cols = S.indices[entries]
                out[...] = np.bincount(
                    cols, weights=S.data[entries] * np.repeat(v[support], lengths), minlength=S.shape[0]
                )
                mask = np.zeros(S.shape[0], dtype=bool)
                mask[support] = True
                mask[cols] = True
                self.support = mask.nonzero()[0]
                return out
            self.support = None  # dense from now on
        return _product_into(S, v, out)


def _dot1(x: np.ndarray, y: np.ndarray) -> float:
    """Dot product without BLAS (a threaded BLAS ``ddot`` can wait milliseconds for its threads)."""
    return float(np.einsum("i,i->", x, y))


def _cg_vector(
    S: sp.csr_matrix, b: np.ndarray, weight: np.ndarray, scale: float, tol: float, max_iter: int
) -> tuple[np.ndarray, int, float]:
    """:func:`_cg_double` for one right-hand side, with scalar coefficients and reused buffers."""
    z = np.zeros_like(b)
    r = b.copy()
    q = np.empty_like(b)
    tmp = np.empty_like(b)
    product = _SymmetricProduct(S, r)
    bound = scale * _dot1(np.abs(r, out=tmp), weight)
    # sum_i |r_i| w_i >= min(w) ||r||_2: while that lower bound is >= tol, skip the exact bound
    low = scale * float(weight.min(initial=np.inf))
    it = 0
    while bound >= tol and it < max_iter:
        v = r.copy()
        rr = _dot1(r, r)
        while bound >= tol and it < max_iter:
            product(v, q)
            it += 1
            vq = _dot1(v, q)
            if not vq > 0:  # r == 0 exactly
                break
            a = rr / vq
            z += np.multiply(v, a, out=tmp)
            r -= np.multiply(q, a, out=tmp)
            rr_new = _dot1(r, r)
            bound = low * math.sqrt(rr_new)
            if bound < tol:
                bound = scale * _dot1(np.abs(r, out=tmp), weight)
            v *= rr_new / rr
            v += r
            rr = rr_new
        if bound >= tol and it >= max_iter:
            return z, it, float(scale * _dot1(np.abs(r, out=tmp), weight))
        np.subtract(b, product(z, q), out=r)  # confirm on the true residual
        it += 1
        bound = scale * _dot1(np.abs(r, out=tmp), weight)
    return z, it, float(bound)


def _cg_double(
    S: sp.csr_matrix,
    b: np.ndarray,
    weight: np.ndarray,
    scale: np.ndarray,
    tol: float,
    max_iter: int,
    z0: np.ndarray | None = None,
    it0: int = 0,
) -> tuple[np.ndarray, int, float]:
    """Conjugate gradients in float64 for a batch ``S Z = B`` (all columns at once).

    Stops when every column's L1 error bound ``scale * sum_i |r_i| weight_i`` is below ``tol``,
    confirmed on the true residual :math:`B - S Z`, or after ``max_iter`` products in total (counting
    ``it0`` already spent). Returns ``(Z, products, largest bound)``. Column sums use einsum, not BLAS.
    """

    def dot(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.einsum("ij,ij->j", x, y)

    tmp = np.empty_like(b)

    def error_bound(r: np.ndarray) -> np.ndarray:
        return scale * np.einsum("ij,i->j", np.abs(r, out=tmp), weight)

    it = it0
    q = np.empty_like(b)
    if z0 is None:
        z, r = np.zeros_like(b), b.copy()
    else:
        z = z0.copy()
        r = b - S @ z
        it += 1
    bound = error_bound(r)
    product = _SymmetricProduct(S, r)
    while (bound >= tol).any() and it < max_iter:
        v = r.copy()
        rr = dot(r, r)
        while it < max_iter:
            active = bound >= tol
            if not active.any():
                break
            product(v, q)
            it += 1
            vq = dot(v, q)
            a = np.divide(rr, vq, out=np.zeros_like(rr), where=active & (vq > 0))
            z += np.multiply(v, a, out=tmp)
            r -= np.multiply(q, a, out=tmp)
            bound = error_bound(r)
            rr_new = dot(r, r)
            v *= np.divide(rr_new, rr, out=np.zeros_like(rr), where=active & (rr > 0))
            v += r
            rr = rr_new
        if it >= max_iter and (bound >= tol).any():
            break
        np.subtract(b, product(z, q), out=r)  # confirm on the true residual
        it += 1
        bound = error_bound(r)
    return z, it, float(bound.max())


def _cg_mixed(
    red: _Reduced, b: np.ndarray, scale: np.ndarray, tol: float, max_iter: int
) -> tuple[np.ndarray, int, float]:
    """Mixed-precision iterative refinement for a batch: float32 CG inside float64 residuals.

    Each round solves :math:`S d = r` in float32 (torch) until every column's residual fell by
    ``_MIXED_INNER_REDUCTION``, adds :math:`d` to the float64 solution and recomputes the true
    residual :math:`r = b - S z` in float64; it stops on the float64 bound of :func:`_cg_double`.
    Only columns still above ``tol`` take part in the next round; should a round fail to halve the
    largest bound, :func:`_cg_double` finishes, warm-started.
    """
    import torch

    S64, S32 = red.torch_matrices()
    weight = torch.from_numpy(red.sqrt_diag)
    B = torch.from_numpy(b)
    Z = torch.zeros_like(B)
    R = B.clone()
    it = 0
    bound = torch.from_numpy(scale) * (R.abs().T @ weight)
    previous = math.inf
    while True:
        active = torch.nonzero(bound >= tol).ravel()
        largest = float(bound.max())
        if active.numel() == 0 or it >= max_iter:
            return Z.numpy(), it, largest
        if largest > 0.5 * previous:  # no progress in float32: finish in float64
            return _cg_double(red.S, b, red.sqrt_diag, scale, tol, max_iter, z0=Z.numpy(), it0=it)
        previous = largest
        every = active.numel() == B.shape[1]
        Ra = (R if every else R[:, active]).to(torch.float32)
        D, k = _cg_float32(S32, Ra, _MIXED_INNER_REDUCTION, max_iter - it)
        it += k
        Za = (Z if every else Z[:, active]) + D.to(torch.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # torch: "sparse CSR support is in beta"
            Ra = (B if every else B[:, active]) - torch.mm(S64, Za)
        it += 1
        if every:
            Z, R = Za, Ra
        else:
            Z[:, active] = Za
            R[:, active] = Ra
        bound[active] = torch.from_numpy(scale)[active] * (Ra.abs().T @ weight)


def _cg_float32(S, B, reduction: float, max_iter: int):
    """Batched CG in float32 (torch) for ``S D = B``; stops when each column's residual 2-norm
    fell by ``reduction``, or after ``max_iter`` products. Returns ``(D, products)``."""
    import torch

    D = torch.zeros_like(B)
    R = B.clone()
    V = B.clone()
    Q = torch.empty_like(B)
    work = torch.empty_like(B)
    ones = torch.ones(B.shape[0], dtype=B.dtype)

    def coldot(x, y):  # column-wise dot products, written into one buffer, summed by a BLAS gemv
        return torch.mv(torch.mul(x, y, out=work).T, ones)

    rr = coldot(R, R)
    stop = rr * reduction**2
    zero = torch.zeros_like(rr)
    k = 0
    while k < max_iter:
        torch.mm(S, V, out=Q)
        k += 1
        vq = coldot(V, Q)
        a = torch.where(vq > 0, rr / vq, zero)
        D.addcmul_(V, a)
        R.addcmul_(Q, a, value=-1.0)
        rn = coldot(R, R)
        if bool((rn <= stop).all()):
            break
        V.mul_(torch.where(rr > 0, rn / rr, zero)).add_(R)
        rr = rn
    return D, k
