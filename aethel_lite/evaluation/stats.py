r"""Confidence intervals and paired significance tests for per-query metric vectors.

The paired tests work on the per-query differences :math:`d_i = a_i - b_i`: :func:`paired_bootstrap`
(used for IR by Sakai 2006 and Smucker, Allan & Carterette 2007) and :func:`randomization_test` (with
the +1 correction of Phipson & Smyth 2010). Resampling is fully determined by ``seed``.

References
----------
B. Efron & R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993.
T. Sakai, "Evaluating evaluation metrics based on the bootstrap", SIGIR 2006.
M. D. Smucker, J. Allan & B. Carterette, "A comparison of statistical significance tests for
information retrieval evaluation", CIKM 2007.
B. Phipson & G. K. Smyth, "Permutation p-values should never be zero", SAGMB 9(1), 2010.
S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6(2), 1979.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..errors import ParameterError

__all__ = [
    "wilson",
    "format_share",
    "format_difference",
    "BootstrapResult",
    "RandomizationResult",
    "ConfidenceInterval",
    "paired_bootstrap",
    "randomization_test",
    "bootstrap_ci",
    "holm",
    "format_estimate",
    "format_interval",
]

_CHUNK_ENTRIES = 1 << 22  # entries of one (rows, n) resampling block


@dataclass(frozen=True, kw_only=True)
class _Resampled:
    """What every resampling result records: the sample size and the settings that reproduce it."""

    n: int
    n_resamples: int = 10_000
    seed: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class BootstrapResult(_Resampled):
    """Paired bootstrap of :math:`\\bar a - \\bar b`: percentile CI and shift-method two-sided p-value."""

    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float
    confidence: float = 0.95


@dataclass(frozen=True)
class RandomizationResult(_Resampled):
    """Paired sign-flip randomization test of :math:`\\bar a - \\bar b`: two-sided p-value."""

    mean_diff: float
    p_value: float


@dataclass(frozen=True)
class ConfidenceInterval(_Resampled):
    """Mean of one metric vector with its bootstrap percentile confidence interval."""

    mean: float
    ci_low: float
    ci_high: float
    confidence: float = 0.95


def _vector(values, name: str) -> np.ndarray:
    """``values`` as a finite 1-D float64 array, else a :class:`ParameterError` naming ``name``."""
    try:
        x = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{name} must be a numeric vector ({exc})") from exc
    if x.ndim != 1:
        raise ParameterError(f"{name} must be 1-D, got shape {x.shape}")
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        raise ParameterError(f"{name}[{bad[0]}] is {x[bad[0]]} (NaN or infinite values are not allowed)")
    return x


def _differences(a, b) -> np.ndarray:
    """``a - b`` as float64, after checking shapes and values. Mappings are aligned by key."""
    if isinstance(a, Mapping) or isinstance(b, Mapping):
        if not (isinstance(a, Mapping) and isinstance(b, Mapping)):
            raise ParameterError("a and b must both be sequences or both be mappings qid -> value")
        missing = [k for k in a if k not in b] or [k for k in b if k not in a]
        if missing:
            raise ParameterError(
                f"a and b must cover the same queries; {missing[0]!r} is in only one of them"
            )
        a, b = [a[k] for k in a], [b[k] for k in a]
    x, y = _vector(a, "a"), _vector(b, "b")
    if x.shape != y.shape:
        raise ParameterError(
            f"a and b must have equal length (paired by query), got {x.shape[0]} and {y.shape[0]}"
        )
    _check_n(x.shape[0], "paired values")
    return x - y


def _check_n(n: int, what: str) -> None:
    if n < 2:
        raise ParameterError(f"need at least 2 {what}, got n={n}")


def _check_settings(n_resamples, confidence=None) -> int:
    """``n_resamples`` as an int, after checking it (and ``confidence`` unless None)."""
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ParameterError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if confidence is not None and (
        isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1
    ):
        raise ParameterError(f"confidence must be in (0, 1), got {confidence!r}")
    return int(n_resamples)


def _blocks(n_resamples: int, n: int) -> Iterator[int]:
    rows = max(1, _CHUNK_ENTRIES // n)
    for start in range(0, n_resamples, rows):
        yield min(rows, n_resamples - start)


def _tolerance(d: np.ndarray) -> float:
    # resampled means equal to the observed one in exact arithmetic may differ in the last bits
    return 1e-12 * max(1.0, float(np.abs(d).max()))


def paired_bootstrap(
    a, b, n_resamples: int = 10_000, seed: int = 0, confidence: float = 0.95
) -> BootstrapResult:
    r"""Paired bootstrap of the mean difference :math:`\bar d = \overline{a - b}`.

    Parameters
    ----------
    a, b : array-like of shape (n,) or mappings qid -> value
        Per-query metric values of systems A and B on the same queries (mappings are aligned by key).
    n_resamples : int
        Number of bootstrap resamples :math:`B`.
    seed : int
        Seed of ``numpy.random.default_rng``.
    confidence : float
        Confidence level :math:`c` of the two-sided percentile interval, in (0, 1).

    Returns
    -------
    BootstrapResult
        ``mean_diff`` :math:`\bar d`; ``ci_low``/``ci_high``, the :math:`(1-c)/2` and :math:`(1+c)/2`
        percentiles of the resampled means :math:`\bar d^*_1..\bar d^*_B` (linear interpolation);
        ``p_value`` :math:`(1 + \#\{|\bar d^* - \bar d| \ge |\bar d|\})/(B + 1)`, the shift method
        (Efron & Tibshirani 1993, §16.4). Identical systems get ``p_value == 1``.

    Raises
    ------
    ParameterError
        Unequal lengths, n < 2, NaN/infinite values, ``confidence`` outside (0, 1), bad ``n_resamples``.
    """
    d = _differences(a, b)
    n_resamples = _check_settings(n_resamples, confidence)
    observed = float(d.mean())
    means = _resampled_means(d, n_resamples, seed)
    lo, hi = _percentile_interval(means, confidence)
    extreme = np.count_nonzero(np.abs(means - observed) >= abs(observed) - _tolerance(d))
    p = (1 + extreme) / (n_resamples + 1)
    return BootstrapResult(
        mean_diff=observed,
        ci_low=lo,
        ci_high=hi,
        p_value=float(p),
        confidence=float(confidence),
        n=d.shape[0],
        n_resamples=n_resamples,
        seed=seed,
    )


def bootstrap_ci(
    values, n_resamples: int = 10_000, seed: int = 0, confidence: float = 0.95
) -> ConfidenceInterval:
    r"""Mean of one system's per-query metric with a bootstrap percentile confidence interval.

    The :math:`n` values :math:`x_1..x_n` are resampled with replacement :math:`B` times; with
    :math:`\bar x^*_b` the mean of resample :math:`b`, the interval is

    .. math:: \bigl[\, Q_{(1-c)/2}(\bar x^*),\; Q_{(1+c)/2}(\bar x^*) \,\bigr]

    (:math:`Q_p` the :math:`p`-quantile, linear interpolation): the percentile interval of Efron &
    Tibshirani (1993, §13.3), as ``scipy.stats.bootstrap(..., method="percentile")`` up to
    Monte-Carlo error.

    Parameters
    ----------
    values : array-like of shape (n,) or mapping qid -> value
        Per-query metric values (a mapping's values are used in its order).
    n_resamples, seed, confidence
        As in :func:`paired_bootstrap` (the resamples are drawn the same way).

    Returns
    -------
    ConfidenceInterval
        ``mean`` :math:`\bar x`, ``ci_low``, ``ci_high``, ``n`` and the settings.

    Raises
    ------
    ParameterError
        n < 2, NaN/infinite values, not 1-D, ``confidence`` outside (0, 1), bad ``n_resamples``.
    """
    x = _vector(list(values.values()) if isinstance(values, Mapping) else values, "values")
    _check_n(x.shape[0], "values")
    n_resamples = _check_settings(n_resamples, confidence)
    lo, hi = _percentile_interval(_resampled_means(x, n_resamples, seed), confidence)
    return ConfidenceInterval(
        mean=float(x.mean()),
        ci_low=lo,
        ci_high=hi,
        confidence=float(confidence),
        n=int(x.shape[0]),
        n_resamples=n_resamples,
        seed=seed,
    )


def _resampled_means(x: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Means of ``n_resamples`` resamples of ``x`` with replacement (``default_rng(seed)``, block by block)."""
    n = x.shape[0]
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples, dtype=np.float64)
    pos = 0
    for rows in _blocks(n_resamples, n):
        idx = rng.integers(0, n, size=(rows, n))
        means[pos : pos + rows] = x[idx].mean(axis=1)
        pos += rows
    return means


def _percentile_interval(means: np.ndarray, confidence: float) -> tuple[float, float]:
    alpha = 1.0 - confidence
    lo, hi = np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(lo), float(hi)


def randomization_test(a, b, n_resamples: int = 10_000, seed: int = 0) -> RandomizationResult:
    r"""Paired randomization (sign-flip permutation) test of :math:`H_0`: A and B are exchangeable per query.

    Each resample multiplies every :math:`d_i` by an independent random sign; the two-sided p-value
    is :math:`(1 + \#\{|\bar d^{\pm}| \ge |\bar d|\}) / (B + 1)`, an estimate of the exact test's
    (the fraction of all :math:`2^n` sign patterns at least as extreme).

    Parameters
    ----------
    a, b, n_resamples, seed
        As in :func:`paired_bootstrap`.

    Returns
    -------
    RandomizationResult
        ``mean_diff`` :math:`\bar d`, ``p_value``, ``n``.

    Raises
    ------
    ParameterError
        Unequal lengths, n < 2, NaN/infinite values, bad ``n_resamples``.
    """
    d = _differences(a, b)
    n_resamples = _check_settings(n_resamples)
    n = d.shape[0]
    observed = float(d.mean())
    threshold = abs(observed) - _tolerance(d)
    rng = np.random.default_rng(seed)
    extreme = 0
    for rows in _blocks(n_resamples, n):
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(rows, n))
        extreme += int(np.count_nonzero(np.abs((signs * d).mean(axis=1)) >= threshold))
    p = (1 + extreme) / (n_resamples + 1)
    return RandomizationResult(mean_diff=observed, p_value=float(p), n=n, n_resamples=n_resamples, seed=seed)


def holm(p_values) -> np.ndarray:
    r"""Holm–Bonferroni step-down adjusted p-values, in the input order.

    With the :math:`m` p-values sorted ascending, :math:`p_{(1)} \le \dots \le p_{(m)}`,

    .. math:: \tilde p_{(i)} = \min\Bigl(1,\; \max_{j \le i}\, (m - j + 1)\, p_{(j)}\Bigr),

    so rejecting every hypothesis with :math:`\tilde p \le \alpha` controls the family-wise
    error rate at :math:`\alpha` under any dependence between the tests. Tied raw p-values get equal
    adjusted values.

    Parameters
    ----------
    p_values : array-like of shape (m,)
        Raw p-values in [0, 1] (``m = 0`` gives an empty array).

    Returns
    -------
    ndarray of float64, shape (m,)
        Adjusted p-values, aligned with ``p_values``.

    Raises
    ------
    ParameterError
        Not 1-D, NaN/infinite, or a value outside [0, 1] (its index is named).
    """
    p = _vector(p_values, "p_values")
    outside = np.flatnonzero((p < 0) | (p > 1))
    if outside.size:
        raise ParameterError(f"p_values[{outside[0]}] is {p[outside[0]]}, outside [0, 1]")
    m = p.shape[0]
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    adjusted = np.empty(m, dtype=np.float64)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return adjusted


def format_interval(low: float, high: float, *, signed: bool = False, decimals: int = 3) -> str:
    """``[0.861, 0.943]`` (``signed``: ``[+0.012, +0.104]``, as a difference's interval): the one way the book
    writes an interval."""
    sign = "+" if signed else ""
    return f"[{low:{sign}.{decimals}f}, {high:{sign}.{decimals}f}]"


def format_estimate(
    value: Any,
    low: float | None = None,
    high: float | None = None,
    *,
    signed: bool = False,
    decimals: int = 3,
    interval_decimals: int = 2,
) -> str:
    """An estimate with its 95% interval, the one way the book writes one: ``0.905 [0.86, 0.94]``; ``signed``
    for a difference: ``+0.058 [+0.01, +0.10]``.

    Parameters
    ----------
    value : float, mapping or ConfidenceInterval
        The estimate; or a record holding it (``mean``, else ``diff``; ``diff`` first when ``signed``) with
        ``ci_low`` and ``ci_high``.
    low, high : float, optional
        The interval, when ``value`` is a number.
    signed, decimals, interval_decimals
        A ``+`` on positive numbers; the estimate's decimals and the interval's.
    """
    if low is None and high is None:
        get = value.get if isinstance(value, Mapping) else lambda k, d=None: getattr(value, k, d)
        value, low, high = (
            get("diff") if signed and get("diff") is not None else get("mean", get("diff")),
            get("ci_low"),
            get("ci_high"),
        )
    sign = "+" if signed else ""
    return f"{value:{sign}.{decimals}f} " + format_interval(
        low, high, signed=signed, decimals=interval_decimals
    )


Z95 = 1.959963984540054  # the normal quantile of 0.975


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    r"""Wilson score interval of a share :math:`k/n` (Wilson 1927): :math:`\frac{\hat p + z^2/2n \pm
    z\sqrt{\hat p(1-\hat p)/n + z^2/4n^2}}{1 + z^2/n}`; ``None`` when ``n == 0``."""
    if n <= 0:
        return None
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def format_share(k: int, n: int) -> str:
    """A share ``k/n`` with its Wilson interval, as :func:`format_estimate` writes it; ``""`` when ``n == 0``."""
    ci = wilson(k, n)
    return "" if ci is None else format_estimate(k / n, *ci)


def format_difference(
    t: Mapping[str, Any], *, interval: str = "the interval", interval_decimals: int = 2
) -> str:
    """A paired difference record (``diff``, ``ci_low``, ``ci_high``) in words: ``+0.058 [+0.01, +0.10], the
    interval excludes zero`` (``interval`` names the interval: "the interval", "the CI")."""
    spans = t["ci_low"] <= 0 <= t["ci_high"]
    return (
        format_estimate(t, signed=True, interval_decimals=interval_decimals)
        + f", {interval} "
        + ("spans zero" if spans else "excludes zero")
    )
