"""Bootstrap intervals against scipy.stats.bootstrap; randomization test against exact enumeration; Holm by hand."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.stats

from aethel_lite.errors import ParameterError
from aethel_lite.evaluation.stats import (
    BootstrapResult,
    ConfidenceInterval,
    RandomizationResult,
    bootstrap_ci,
    holm,
    paired_bootstrap,
    randomization_test,
)


def _scipy_ci(a, b, seed, confidence=0.95):
    res = scipy.stats.bootstrap(
        (a, b),
        statistic=lambda x, y, axis=-1: np.mean(x - y, axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=10_000,
        confidence_level=confidence,
        rng=np.random.default_rng(seed),
    )
    return res.confidence_interval.low, res.confidence_interval.high


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bootstrap_ci_matches_scipy_continuous(seed):
    rng = np.random.default_rng(100 + seed)
    a = rng.uniform(0, 1, 40)
    b = np.clip(a - 0.05 + rng.normal(0, 0.2, 40), 0, 1)
    ours = paired_bootstrap(a, b, seed=seed)
    lo, hi = _scipy_ci(a, b, seed + 1000)
    assert ours.mean_diff == pytest.approx(np.mean(a - b))
    # Monte-Carlo error of a 2.5% percentile with B = 10,000 here is ~0.003
    assert ours.ci_low == pytest.approx(lo, abs=0.01)
    assert ours.ci_high == pytest.approx(hi, abs=0.01)


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_bootstrap_ci_matches_scipy_binary(confidence):
    rng = np.random.default_rng(7)
    a = (rng.random(40) < 0.6).astype(float)
    b = (rng.random(40) < 0.45).astype(float)
    ours = paired_bootstrap(a, b, seed=3, confidence=confidence)
    lo, hi = _scipy_ci(a, b, 4, confidence)
    # binary metrics: the resampled mean lives on a 1/40 lattice, so an endpoint may move one step
    step = 1 / 40
    assert abs(ours.ci_low - lo) <= step + 1e-9
    assert abs(ours.ci_high - hi) <= step + 1e-9
    assert ours.ci_low <= ours.mean_diff <= ours.ci_high


def test_p_values_at_the_extremes():
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 1, 50)
    same_b = paired_bootstrap(a, a.copy())
    same_r = randomization_test(a, a.copy())
    assert same_b.p_value == 1.0 and same_r.p_value == 1.0
    assert same_b.mean_diff == 0.0 and same_b.ci_low == 0.0 == same_b.ci_high
    better = a + 0.5
    assert paired_bootstrap(better, a).p_value < 0.001
    assert randomization_test(better, a).p_value < 0.001
    big = (rng.random(60) < 0.9).astype(float)
    small = (rng.random(60) < 0.1).astype(float)
    assert paired_bootstrap(big, small).p_value < 0.001
    assert randomization_test(small, big).p_value < 0.001


def _exact_randomization_p(d):
    observed = abs(d.mean())
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=d.size)))
    return float(np.mean(np.abs((signs * d).mean(axis=1)) >= observed - 1e-12))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_randomization_matches_exact_enumeration(seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0, 1, 10)
    b = a - rng.normal(0.15, 0.3, 10)
    exact = _exact_randomization_p(a - b)
    res = randomization_test(a, b, n_resamples=20_000, seed=seed)
    se = np.sqrt(max(exact * (1 - exact), 1e-4) / 20_000)
    assert abs(res.p_value - exact) <= 4 * se + 1 / 20_000
    assert res.mean_diff == pytest.approx(np.mean(a - b))


def test_randomization_exact_on_binary_ties():
    # binary metrics produce many tied permutation means: the >= must count them
    a = np.array([1, 1, 1, 0, 1, 1, 0, 1, 1, 0], dtype=float)
    b = np.array([0, 1, 0, 0, 1, 0, 0, 1, 0, 1], dtype=float)
    exact = _exact_randomization_p(a - b)
    res = randomization_test(a, b, n_resamples=20_000, seed=5)
    assert abs(res.p_value - exact) <= 4 * np.sqrt(exact * (1 - exact) / 20_000) + 1 / 20_000


def test_p_values_agree_with_paired_t_test_for_large_n():
    """Both resampling p-values approximate the paired t-test's for a smooth metric and n = 300."""
    rng = np.random.default_rng(11)
    a = rng.uniform(0, 1, 300)
    b = a - rng.normal(0.02, 0.2, 300)
    t_p = scipy.stats.ttest_rel(a, b).pvalue
    assert 0.02 < t_p < 0.5  # a regime where the comparison is informative
    assert paired_bootstrap(a, b).p_value == pytest.approx(t_p, abs=0.03)
    assert randomization_test(a, b).p_value == pytest.approx(t_p, abs=0.03)


def test_determinism_and_seed_dependence():
    rng = np.random.default_rng(1)
    a, b = rng.uniform(size=30), rng.uniform(size=30)
    assert paired_bootstrap(a, b, seed=4) == paired_bootstrap(a, b, seed=4)
    assert randomization_test(a, b, seed=4) == randomization_test(a, b, seed=4)
    assert paired_bootstrap(a, b, seed=4).ci_low != paired_bootstrap(a, b, seed=5).ci_low


def test_chunked_resampling_is_consistent(monkeypatch):
    import aethel_lite.evaluation.stats as stats

    rng = np.random.default_rng(2)
    a, b = rng.uniform(size=25), rng.uniform(size=25)
    full = paired_bootstrap(a, b, n_resamples=2000, seed=0)
    monkeypatch.setattr(stats, "_CHUNK_ENTRIES", 25 * 7)  # 7 rows per block
    chunked = paired_bootstrap(a, b, n_resamples=2000, seed=0)
    # the same generator stream is consumed row by row, so blocks do not change the draws
    assert chunked == full
    assert randomization_test(a, b, n_resamples=2000, seed=0).n_resamples == 2000


def test_mappings_are_aligned_by_qid():
    a = {"q1": 1.0, "q2": 0.0, "q3": 1.0}
    b = {"q3": 0.0, "q1": 1.0, "q2": 0.0}
    res = paired_bootstrap(a, b, n_resamples=100)
    assert res.mean_diff == pytest.approx(1 / 3)
    with pytest.raises(ParameterError, match="'q3'"):
        paired_bootstrap({"q1": 1.0, "q3": 0.0}, {"q1": 1.0, "q2": 0.0})


def test_results_serialise():
    res = paired_bootstrap([1, 0, 1], [0, 0, 1], n_resamples=50, seed=2)
    d = res.to_dict()
    assert isinstance(res, BootstrapResult)
    assert set(d) >= {"mean_diff", "ci_low", "ci_high", "p_value", "n"} and d["n"] == 3
    r = randomization_test([1, 0, 1], [0, 0, 1], n_resamples=50)
    assert isinstance(r, RandomizationResult) and set(r.to_dict()) >= {"mean_diff", "p_value", "n"}


@pytest.mark.parametrize(
    "a,b,kw,match",
    [
        ([1, 2, 3], [1, 2], {}, "equal length"),
        ([1], [0], {}, "at least 2"),
        ([1, np.nan], [0, 1], {}, "NaN"),
        ([1, 2], [0, np.inf], {}, r"b\[1\]"),
        ([1, 2], [0, 1], {"confidence": 1.0}, "confidence"),
        ([1, 2], [0, 1], {"confidence": 0}, "confidence"),
        ([1, 2], [0, 1], {"n_resamples": 0}, "n_resamples"),
        ([[1, 2]], [[0, 1]], {}, "1-D"),
    ],
)
def test_bad_input(a, b, kw, match):
    with pytest.raises(ParameterError, match=match):
        paired_bootstrap(a, b, **kw)
    if "confidence" not in kw:
        with pytest.raises(ParameterError, match=match):
            randomization_test(a, b, **kw)


# ------------------------------------------------------------------------------ bootstrap_ci
def _scipy_one_sample_ci(x, seed, confidence=0.95):
    res = scipy.stats.bootstrap(
        (x,),
        statistic=np.mean,
        vectorized=True,
        method="percentile",
        n_resamples=10_000,
        confidence_level=confidence,
        rng=np.random.default_rng(seed),
    )
    return res.confidence_interval.low, res.confidence_interval.high


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bootstrap_ci_matches_scipy_percentile_continuous(seed):
    x = np.random.default_rng(200 + seed).uniform(0, 1, 50)
    ours = bootstrap_ci(x, seed=seed)
    lo, hi = _scipy_one_sample_ci(x, seed + 1000)
    assert ours.mean == pytest.approx(x.mean())
    # the Monte-Carlo error of a 2.5% percentile with B = 10,000 is ~0.002 here
    assert ours.ci_low == pytest.approx(lo, abs=0.01) and ours.ci_high == pytest.approx(hi, abs=0.01)
    assert ours.ci_low < ours.mean < ours.ci_high


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_bootstrap_ci_matches_scipy_percentile_binary(confidence):
    x = (np.random.default_rng(8).random(60) < 0.55).astype(float)
    ours = bootstrap_ci(x, seed=1, confidence=confidence)
    lo, hi = _scipy_one_sample_ci(x, 2, confidence)
    step = 1 / 60  # the resampled mean of 0/1 values lives on a 1/60 lattice
    assert abs(ours.ci_low - lo) <= step + 1e-9 and abs(ours.ci_high - hi) <= step + 1e-9
    assert ours.n == 60 and ours.confidence == confidence


def test_bootstrap_ci_is_paired_bootstrap_against_zero():
    """One sample's resamples are drawn like the paired bootstrap's, so b = 0 gives the same interval."""
    x = np.random.default_rng(3).uniform(size=30)
    one, paired = (
        bootstrap_ci(x, n_resamples=3000, seed=7),
        paired_bootstrap(x, np.zeros(30), n_resamples=3000, seed=7),
    )
    assert (one.mean, one.ci_low, one.ci_high) == (paired.mean_diff, paired.ci_low, paired.ci_high)


def test_bootstrap_ci_deterministic_constant_and_mapping():
    x = {"q1": 1.0, "q2": 0.0, "q3": 1.0, "q4": 1.0}
    assert bootstrap_ci(x, seed=4) == bootstrap_ci(list(x.values()), seed=4)
    smooth = np.random.default_rng(1).uniform(size=30)
    assert bootstrap_ci(smooth, seed=4).ci_low != bootstrap_ci(smooth, seed=5).ci_low
    const = bootstrap_ci([0.5] * 10)
    assert const.mean == const.ci_low == const.ci_high == 0.5
    res = bootstrap_ci([1, 0, 1], n_resamples=50)
    assert isinstance(res, ConfidenceInterval) and set(res.to_dict()) >= {"mean", "ci_low", "ci_high", "n"}


@pytest.mark.parametrize(
    "values,kw,match",
    [
        ([1.0], {}, "at least 2"),
        ([1.0, np.nan], {}, r"values\[1\]"),
        ([[1.0, 2.0]], {}, "1-D"),
        (["a", "b"], {}, "numeric"),
        ([1.0, 2.0], {"confidence": 1.5}, "confidence"),
        ([1.0, 2.0], {"n_resamples": 0}, "n_resamples"),
    ],
)
def test_bootstrap_ci_bad_input(values, kw, match):
    with pytest.raises(ParameterError, match=match):
        bootstrap_ci(values, **kw)


# ------------------------------------------------------------------------------------- holm
@pytest.mark.parametrize(
    "p,expected",
    [
        # sorted 0.005, 0.01, 0.03, 0.04 -> 4*0.005, 3*0.01, 2*0.03, 1*0.04 -> running max 0.02 0.03 0.06 0.06
        ([0.01, 0.04, 0.03, 0.005], [0.03, 0.06, 0.06, 0.02]),
        ([0.5, 0.2], [0.5, 0.4]),  # 2*0.2 = 0.4, then max(0.4, 0.5)
        ([0.3, 0.4, 0.9], [0.9, 0.9, 0.9]),  # 0.9, 0.8 -> 0.9 (monotone), 0.9
        ([0.6, 0.7], [1.0, 1.0]),  # capped at 1
        ([0.02, 0.02, 0.5], [0.06, 0.06, 0.5]),  # ties: 3*0.02, max(0.06, 2*0.02), max(0.06, 0.5)
        ([0.042], [0.042]),  # one test: unchanged
        ([], []),
    ],
)
def test_holm_hand_computed(p, expected):
    assert holm(p).tolist() == pytest.approx(expected, abs=1e-12)


def test_holm_properties_on_random_p_values():
    rng = np.random.default_rng(0)
    for m in (2, 5, 17, 60):
        p = rng.uniform(0, 0.2, m) ** 2
        adj = holm(p)
        assert adj.shape == p.shape and np.all(adj >= p) and np.all(adj <= 1)
        order = np.argsort(p)
        assert np.all(np.diff(adj[order]) >= 0)  # monotone in the raw p-values, input order kept
        assert adj[order[0]] == pytest.approx(min(1.0, m * p.min()))  # smallest: Bonferroni
        assert np.all(adj <= np.minimum(1, m * p) + 1e-15)  # never above Bonferroni
        perm = rng.permutation(m)
        assert np.array_equal(holm(p[perm]), adj[perm])  # permutation equivariant


@pytest.mark.parametrize(
    "p,match",
    [([0.1, 1.2], r"p_values\[1\] is 1.2"), ([-0.1], "outside"), ([np.nan], "NaN"), ([[0.1]], "1-D")],
)
def test_holm_bad_input(p, match):
    with pytest.raises(ParameterError, match=match):
        holm(p)


def test_format_estimate_is_the_one_way_an_interval_is_written():
    from aethel_lite.evaluation.stats import ConfidenceInterval, format_estimate, format_interval

    assert format_estimate(0.9051, 0.8612, 0.9388) == "0.905 [0.86, 0.94]"
    assert format_estimate(0.0581, 0.0119, 0.1043, signed=True) == "+0.058 [+0.01, +0.10]"
    assert (
        format_estimate(0.0581, -0.0119, 0.1043, signed=True, interval_decimals=3)
        == "+0.058 [-0.012, +0.104]"
    )
    # a record: a mean's, or a difference's
    assert format_estimate({"mean": 0.5, "ci_low": 0.25, "ci_high": 0.75}) == "0.500 [0.25, 0.75]"
    row = {"mean_a": 0.6, "mean_b": 0.5, "diff": 0.1, "ci_low": 0.02, "ci_high": 0.18}
    assert format_estimate(row, signed=True) == "+0.100 [+0.02, +0.18]"
    ci = ConfidenceInterval(0.75, 0.5, 0.875, n=8)
    assert format_estimate(ci, interval_decimals=3) == "0.750 [0.500, 0.875]"
    assert format_interval(-0.0125, 0.25, signed=True) == "[-0.013, +0.250]"
    assert format_interval(0.125, 0.25, decimals=2) == "[0.12, 0.25]"  # round half to even, as format does
