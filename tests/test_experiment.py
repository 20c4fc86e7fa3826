"""Experiment helpers the CLI and the notebooks share: loading, fallback, ablation, paired tests, tables."""

from __future__ import annotations

import numpy as np
import pytest

from aethel_lite.data.synthetic import make_synthetic
from aethel_lite.errors import ParameterError
from aethel_lite.experiment import (
    bct_ablation,
    load_or_synthetic,
    paired_comparisons,
    parse_methods,
    run_methods,
    score_runs,
    without_timing,
)
from aethel_lite.paper import PAPER_ROWS, paper_rows
from aethel_lite.report import ablation_figure, comparisons_table, metrics_table, paper_comparison
from aethel_lite.stats import paired_bootstrap


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def small():
    return make_synthetic(200, seed=3).subset(limit=12).with_random_pools(10, seed=1)


def test_random_pools_hold_gold_and_are_deterministic(small):
    again = make_synthetic(200, seed=3).subset(limit=12).with_random_pools(10, seed=1)
    for q, q2 in zip(small.queries, again.queries):
        assert q.gold <= set(q.pool) and len(q.pool) == max(10, len(q.gold)) and len(set(q.pool)) == len(q.pool)
        assert q.pool == q2.pool
    other = make_synthetic(200, seed=3).subset(limit=12).with_random_pools(10, seed=2)
    assert any(a.pool != b.pool for a, b in zip(small.queries, other.queries))
    small.validate()
    with pytest.raises(ParameterError, match="size"):
        small.with_random_pools(0)


def test_load_or_synthetic_falls_back_loudly(tmp_path, capsys):
    ds = load_or_synthetic("musique", data=str(tmp_path / "missing.jsonl"), size=150, setting="closed")
    out = capsys.readouterr().out
    assert "SYNTHETIC" in out and "NOT comparable" in out
    assert ds.meta["fallback_from"] == "musique" and ds.name.startswith("synthetic")
    assert all(q.pool is not None for q in ds.queries)


def test_load_or_synthetic_uses_real_data_when_present(real_data):
    ds = load_or_synthetic("musique", data=str(real_data))
    assert ds.name != "synthetic" and "fallback_from" not in ds.meta and len(ds.queries) == 200


def test_parse_methods():
    assert parse_methods("bm25, rrf") == ["bm25", "rrf"]
    with pytest.raises(ParameterError, match="unknown method 'x'"):
        parse_methods("bm25,x")


def test_closed_pool_run_and_scores_consistent_with_runs(small):
    outcomes = run_methods(small, ["bm25", "aethel-reg", "rrf"], setting="closed", k=10, progress=False, log=None)
    block = score_runs(outcomes, small.queries, k=5)
    for name, entry in block.items():
        for q in small.queries:
            assert set(entry["per_query"][q.qid]) <= set(q.pool)
            top5 = entry["per_query"][q.qid][:5]
            assert entry["per_query_metrics"][q.qid]["HR@5"] == float(bool(q.gold & set(top5)))
        assert entry["HR@5"] == pytest.approx(np.mean([v["HR@5"] for v in entry["per_query_metrics"].values()]))


def test_bct_ablation_none_equals_plain_graph(small):
    ab = bct_ablation(small, modes=("none", "both"), extractor="regex")
    plain = score_runs(run_methods(small, ["aethel-reg"], setting="closed", k=10, progress=False, log=None), small.queries, k=5)
    for m in ("HR@1", "HR@5", "MRR"):
        assert ab["none"][m] == pytest.approx(plain["aethel-reg"][m])
    assert set(ab) == {"none", "both"}


def test_paired_comparisons_match_stats_module():
    rng = np.random.default_rng(0)
    qids = [f"q{i}" for i in range(30)]
    a = {q: {"HR@5": float(v)} for q, v in zip(qids, rng.integers(0, 2, 30))}
    b = {q: {"HR@5": float(v)} for q, v in zip(qids, rng.integers(0, 2, 30))}
    rows = paired_comparisons({"A": {"per_query_metrics": a}, "B": {"per_query_metrics": b}}, [("A", "B")], ["HR@5"],
                              n_resamples=2000, seed=1)
    order = sorted(qids)  # paired_comparisons orders queries by qid
    ref = paired_bootstrap([a[q]["HR@5"] for q in order], [b[q]["HR@5"] for q in order], n_resamples=2000, seed=1)
    assert rows[0]["ci_low"] == pytest.approx(ref.ci_low, abs=1e-6) and rows[0]["ci_high"] == pytest.approx(ref.ci_high, abs=1e-6)
    table = comparisons_table(rows)
    assert bool(table["CI excludes 0"].iloc[0]) == (ref.ci_low > 0 or ref.ci_high < 0)


def test_without_timing_strips_nested_keys():
    r = {"seconds": 1.0, "timing": {"a": 1}, "methods": {"x": {"HR@5": 0.5, "seconds": 3}}, "rows": [{"seconds": 1, "v": 2}]}
    assert without_timing(r) == {"methods": {"x": {"HR@5": 0.5}}, "rows": [{"v": 2}]}


def test_paper_comparison_places_our_numbers_beside_the_papers():
    results = {"musique": {"aethel-ner3": {"HR@5": 0.9, "HR@1": 0.5}, "aethel-bct": {"HR@1": 0.45}}}
    table = paper_comparison(results, paper_rows("closed_pool"))
    row = table[(table["data set"] == "musique") & (table["metric"] == "HR@5") & (table["our method"] == "aethel-ner3")].iloc[0]
    assert row["paper"] == 0.885 and row["ours"] == 0.9 and row["ours − paper"] == pytest.approx(0.015)
    missing = table[table["data set"] == "2wiki"].iloc[0]
    assert missing["ours"] is None or np.isnan(missing["ours"])
    assert all(r["section"] in ("closed_pool", "open_corpus") for r in PAPER_ROWS)


def test_tables_and_figure_are_built_from_results(small):
    block = {"bm25": {"HR@5": 0.5, "MRR": 0.3, "per_query": {}}, "dense": {"HR@5": 0.6, "MRR": 0.4, "per_query": {}}}
    df = metrics_table(block)
    assert list(df.index) == ["bm25", "dense"] and list(df.columns) == ["HR@5", "MRR"]
    fig = ablation_figure({"both": {"HR@1": 0.4, "HR@5": 0.9, "AllSupport@5": 0.4}, "none": {"HR@1": 0.5, "HR@5": 0.8, "AllSupport@5": 0.3}})
    ax = fig.axes[0]
    assert ax.get_xlabel() and ax.get_ylabel() and len(ax.patches) == 6
    assert [t.get_text() for t in ax.get_xticklabels()] == ["BCT: none", "BCT: both"]  # canonical, not file, order
