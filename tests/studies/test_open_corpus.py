"""The open-corpus and scaling studies (aethel_lite.studies.open_corpus, aethel_lite.studies.scaling) on small corpora."""

from __future__ import annotations

import pytest

from aethel_lite.data.synthetic import make_synthetic
from aethel_lite.errors import ParameterError
from aethel_lite.evaluation.runner import without_timing
from aethel_lite.studies.open_corpus import (
    OPEN_DATASETS,
    check_parameters,
    evaluate_open,
    group_of,
    load_open,
    metric_cis,
    paper_verdicts,
)
from aethel_lite.studies.open_corpus_study import ci_figure, open_corpus_verdict
from aethel_lite.studies.paper import PAPER_CROSSOVERS, paper_rows
from aethel_lite.studies.scaling import (
    check_sizes,
    crossover_rows,
    crossovers,
    resolve_sizes,
    scaling_grid,
    scaling_run,
    scaling_takeaways,
    scaling_verdict,
)


@pytest.fixture(scope="module")
def small():
    ds = make_synthetic(n_passages=300, seed=0)
    return ds.subset(limit=20, keep_all_passages=True)


def test_check_parameters_names_the_bad_value():
    check_parameters(["financebench", "synthetic"], ["bm25", "rrf"])
    with pytest.raises(ParameterError, match="datasets: unknown.*'nope'"):
        check_parameters(["nope"], ["bm25"])
    with pytest.raises(ParameterError, match="methods: unknown.*'bm26'"):
        check_parameters(["synthetic"], ["bm26"])
    with pytest.raises(ParameterError, match="lists of names"):
        check_parameters("synthetic", ["bm25"])


def test_group_of_per_data_set(small):
    q = small.queries[0]
    assert group_of("synthetic", q) in ("single-hop", "multi-hop")
    assert group_of("financebench", q) == ("one evidence page" if q.hops == 1 else "several evidence pages")
    assert group_of("musique-open", q) == f"{q.hops}-hop"


def test_metric_cis_match_bootstrap_and_groups(small):
    from aethel_lite.evaluation.stats import bootstrap_ci

    block = {
        "m": {
            "per_query_metrics": {
                q.qid: {"HR@5": float(i % 2), "MRR": 1 / (i + 1)} for i, q in enumerate(small.queries)
            }
        }
    }
    groups = {q.qid: ("a" if i < 5 else "b") for i, q in enumerate(small.queries)}
    out = metric_cis(block, small.queries, groups, metrics=("HR@5", "MRR"), n_resamples=500, seed=3)
    ref = bootstrap_ci([float(i % 2) for i in range(len(small.queries))], n_resamples=500, seed=3)
    assert out["m"]["all"]["HR@5"]["ci_low"] == pytest.approx(ref.ci_low, abs=1e-6)
    assert out["m"]["all"]["HR@5"]["mean"] == pytest.approx(0.5)
    assert out["m"]["groups"]["a"]["HR@5"]["n"] == 5 and out["m"]["groups"]["b"]["HR@5"]["n"] == 15


def test_evaluate_open_on_synthetic_is_deterministic(small):
    a, _ = evaluate_open(small, ["bm25"], n_resamples=200)
    b, _ = evaluate_open(small, ["bm25"], n_resamples=200)
    assert without_timing(a) == without_timing(b)
    cell = a["ci"]["bm25"]["all"]["HR@5"]
    assert cell["ci_low"] <= a["methods"]["bm25"]["HR@5"] <= cell["ci_high"]
    assert set(a["groups"].values()) <= {"single-hop", "multi-hop"}


def test_load_open_synthetic_and_sample():
    ds = load_open("synthetic", limit=10, corpus_size=200, seed=1)
    assert len(ds.passages) == 200 and len(ds.queries) == 10
    assert all(q.pool is None for q in ds.queries)
    assert set().union(*(q.gold for q in ds.queries)) <= {p.pid for p in ds.passages}
    with pytest.raises(ParameterError):
        load_open("nope")


def test_paper_verdicts_inside_outside_and_synthetic():
    res = {
        "financebench": {
            "ci": {
                "bm25": {
                    "all": {"HR@5": {"mean": 0.14, "ci_low": 0.09, "ci_high": 0.2, "n": 129}},
                    "groups": {},
                },
                "dense": {
                    "all": {"HR@5": {"mean": 0.4, "ci_low": 0.3, "ci_high": 0.5, "n": 129}},
                    "groups": {},
                },
            }
        },
        "synthetic": {
            "ci": {
                "bm25": {"all": {"HR@5": {"mean": 0.7, "ci_low": 0.6, "ci_high": 0.8, "n": 9}}, "groups": {}}
            }
        },
    }
    rows = paper_verdicts(res, paper_rows("open_corpus"), synthetic=["synthetic"])
    by = {(r["dataset"], r["ours_method"], r["metric"]): r for r in rows}
    assert by[("financebench", "bm25", "HR@5")]["verdict"] == "outside our CI"
    assert by[("financebench", "dense", "HR@5")]["verdict"] == "inside our CI"  # paper .450 in [.3, .5]
    assert by[("synthetic", "bm25", "HR@5")]["verdict"] == "not comparable"
    assert by[("financebench", "aethel-ner3", "HR@5")]["verdict"] == "not comparable"  # not run


def _curves(a, b):
    sizes = [100, 500, 1000, 4000]
    return {
        "g": {"HR@5": [{"size": s, "mean": v} for s, v in zip(sizes, a)]},
        "d": {"HR@5": [{"size": s, "mean": v} for s, v in zip(sizes, b)]},
    }


def test_crossovers_computed_not_eyeballed():
    c = crossovers(_curves([0.1, 0.5, 0.6, 0.6], [0.8, 0.5, 0.4, 0.3]), "g", "d")
    assert (
        c["passes_from"] == 1000 and c["ever_above"] and c["sizes_above"] == [1000, 4000]
    )  # a tie is no pass
    c = crossovers(_curves([0.9, 0.1, 0.9, 0.1], [0.5] * 4), "g", "d")
    assert c["passes_from"] is None and c["ever_above"]
    c = crossovers(_curves([0.1] * 4, [0.5] * 4), "g", "d")
    assert c == {
        "a": "g",
        "b": "d",
        "metric": "HR@5",
        "passes_from": None,
        "ever_above": False,
        "sizes_above": [],
    }
    with pytest.raises(ParameterError, match="not in the scaling curves"):
        crossovers(_curves([0.1] * 4, [0.5] * 4), "g", "x")


def test_resolve_and_check_sizes():
    assert resolve_sizes([100, "full", 250, 5000, 3], 1000, 10) == [100, 250, 1000]
    with pytest.raises(ParameterError, match="sizes"):
        resolve_sizes([0], 1000, 10)
    check_sizes([100, "full"], [0, 1])
    for bad in ([], "full", [1.5], [True]):
        with pytest.raises(ParameterError, match="sizes"):
            check_sizes(bad, [0])
    with pytest.raises(ParameterError, match="seeds"):
        check_sizes([100], [])


def test_scaling_run_keeps_gold_and_is_deterministic(small):
    kw = dict(sizes=[60, 120, "full"], seeds=[0, 1], n_resamples=200, progress=False)
    a = scaling_run(small, ["bm25"], **kw)
    b = scaling_run(small, ["bm25"], **kw)
    assert without_timing(a) == without_timing(b)
    assert a["sizes"] == [60, 120, len(small.passages)]
    pts = a["curves"]["bm25"]["HR@5"]
    assert [p["n_seeds"] for p in pts] == [2, 2, 1]
    assert all(p["seed_min"] <= p["seed_max"] and p["ci_low"] <= p["mean"] <= p["ci_high"] for p in pts)
    assert [t["size"] for t in a["timing"]["bm25"]] == a["sizes"]
    assert all(t["peak_mib"] > 0 for t in a["timing"]["bm25"])


def test_crossover_rows_and_takeaways_read_the_result():
    runs = {
        "c": {
            "sizes": [100, 500, 1000, 4000],
            "curves": {
                "aethel-ner3": _curves([0.1, 0.5, 0.6, 0.6], [0.8, 0.5, 0.4, 0.3])["g"],
                "dense": _curves([0.1, 0.5, 0.6, 0.6], [0.8, 0.5, 0.4, 0.3])["d"],
                "bm25": {"HR@5": [{"size": s, "mean": 0.9} for s in (100, 500, 1000, 4000)]},
            },
        }
    }
    rows = crossover_rows(runs, PAPER_CROSSOVERS)
    assert [r["ours"] for r in rows] == [1000, "no"]
    synthetic = crossover_rows({"synthetic": runs["c"]}, PAPER_CROSSOVERS)
    assert [r["ours"] for r in synthetic] == ["", ""] and all(
        "not comparable" in r["note"] for r in synthetic
    )
    assert [r["sizes where graph > it"] for r in synthetic] == [r["sizes where graph > it"] for r in rows]
    text = scaling_takeaways({"runs": {"synthetic": runs["c"]}, "synthetic_only": True}, PAPER_CROSSOVERS)
    assert "from 1,000 passages on." in text and "paper:" not in text and "synthetic corpus" in text
    text = scaling_takeaways({"runs": runs}, PAPER_CROSSOVERS)
    assert "from 1,000 passages on" in text and "never above BM25" in text and "0.80 → 0.30" in text


def test_open_datasets_documented():
    for spec in OPEN_DATASETS.values():
        assert {"format", "label", "stands_for"} <= set(spec)


def test_verdict_table_sets_no_synthetic_number_beside_the_papers():
    from aethel_lite.studies.open_corpus import paper_verdicts
    from aethel_lite.studies.open_corpus_study import verdict_table
    from aethel_lite.studies.paper import paper_rows

    cell = {"mean": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n": 12}
    res = {"ci": {"bm25": {"all": {"HR@5": cell, "MRR": cell}, "groups": {}}}}
    verdicts = paper_verdicts(
        {"synthetic": res, "musique-open": res}, paper_rows("open_corpus"), synthetic=["synthetic"]
    )
    table = verdict_table(verdicts)
    bm25 = table[(table["paper's method"] == "BM25") & (table["metric"] == "HR@5")].set_index("our data set")
    assert (
        bm25.loc["synthetic", "ours [95% CI]"] == "" and bm25.loc["synthetic", "verdict"] == "not comparable"
    )
    assert bm25.loc["musique-open", "ours [95% CI]"] == "0.500 [0.400, 0.600]"


def test_scaling_verdict():
    def pts(*means):
        return [
            {"size": s, "mean": m, "ci_low": m - 0.1, "ci_high": m + 0.1} for s, m in zip((100, 1000), means)
        ]

    saved = {
        "runs": {
            "fb": {
                "sizes": [100, 1000],
                "curves": {"aethel-ner3": {"HR@5": pts(0.5, 0.6)}, "dense": {"HR@5": pts(0.7, 0.4)}},
            }
        }
    }
    crossings = [
        {
            "corpus": "fb",
            "claim": "aethel-ner3 passes dense from size …",
            "ours": 1000,
            "sizes where graph > it": [1000],
        }
    ]
    verdict = scaling_verdict(saved, crossings)
    assert (
        "On fb (100 to 1,000 passages), at the largest size `aethel-ner3` has HR@5 0.600 [0.50, 0.70]"
        in verdict
    )
    assert (
        "against `dense`'s 0.400 [0.30, 0.50]" in verdict
        and "the graph is above `dense` at 1,000 passages (for good from 1,000)." in verdict
    )
    assert scaling_verdict({**saved, "synthetic_only": True}, crossings).startswith(
        "These curves come from the synthetic"
    )


def test_open_corpus_verdict():
    ci = {
        m: {"all": {"MRR": {"mean": v, "ci_low": v - 0.1, "ci_high": v + 0.1}}}
        for m, v in (("bm25", 0.6), ("aethel-ner3", 0.4), ("rrf", 0.7))
    }
    verdict = open_corpus_verdict({"datasets": {"fb": {"ci": ci}}, "verdicts": [{"verdict": "differs"}] * 2})
    assert verdict == (
        "On fb, the best MRR is `rrf`'s, 0.700 [0.60, 0.80]; `aethel-ner3` 0.400 [0.30, 0.50]; "
        "`bm25` 0.600 [0.50, 0.70]. Of the paper's 2 open-corpus numbers: 2 differs."
    )


def test_ci_figure_sets_six_corpora_in_two_rows_of_three():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cell = {"mean": 0.5, "ci_low": 0.4, "ci_high": 0.6}
    results = {
        f"corpus-{i}": {"ci": {"bm25": {"all": {"HR@5": cell}}, "dense": {"all": {"HR@5": cell}}}}
        for i in range(5)
    }
    fig = ci_figure(results)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(fig.axes) == 6 and len(visible) == 5  # 2 x 3, the sixth panel hidden
    assert [ax.get_title() for ax in visible] == list(results)
    assert len({round(ax.get_position().y0, 3) for ax in visible}) == 2  # two rows
    assert fig.get_figwidth() == pytest.approx(3 * 3.2)
    plt.close(fig)


def test_scaling_grid_checks_and_resolves_quick_and_extended():
    assert scaling_grid([100, "full"], [0, 1, 2]) == ([100, "full"], [0, 1, 2])
    assert scaling_grid([100, "full"], [0, 1, 2], quick=True) == ([60, 80, "full"], [0, 1])
    assert scaling_grid([100, 500, "full"], [0], extended=True) == ([100, 500, 10206, 20000, "full"], [0])
    with pytest.raises(ParameterError, match="sizes"):
        scaling_grid([0], [0])
