"""aethel-hybrid: method registry and ablations, the development-only tuning (scores checked
against the library's metrics on real runs), the halves' scores, and the stored tuning record."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import toy_filings

from aethel_lite.caching.memo import is_shared, shared
from aethel_lite.core.encoders import resolve_precision
from aethel_lite.data.schema import Dataset, Query
from aethel_lite.errors import ParameterError
from aethel_lite.evaluation.metrics import evaluate
from aethel_lite.retrievers import GraphRetriever, HybridRetriever, clone, params_json
from aethel_lite.retrievers.hybrid import (
    ABLATION_LABELS,
    ABLATIONS,
    GRAPH,
    HISTORICAL,
    RANK_TERMS,
    RANK_WEIGHTS,
)
from aethel_lite.retrievers.registry import METHODS, make_retriever, parse_methods
from aethel_lite.studies import beyond_report  # (its tests_table, imported by name, would be collected)
from aethel_lite.studies.beyond import (
    BASELINES,
    beyond_study,
    closed_pool_check,
    latency,
    load_study,
    score_halves,
)
from aethel_lite.studies.beyond_report import (
    ablation_columns,
    ablation_table,
    composition,
    difference_figure,
    halves_table,
    hybrid_headline,
    hybrid_takeaways,
    targets,
    targets_summary,
    tuning_sentences,
    what_did_not_work,
)
from aethel_lite.studies.open_corpus import QUICK
from aethel_lite.studies.tuning import _rank_of_gold, _simplex, read_tuning, tune


def _method_settings(name: str) -> dict:
    """A hybrid method's settings as one mapping of ``set_params`` keys: the hybrid's and its paper retriever's
    (``graph__x``), the estimator it holds left out (its settings are there)."""
    return {k: v for k, v in METHODS[name].get_params(deep=True).items() if not hasattr(v, "get_params")}


def test_hybrid_and_ablations_are_registered_methods():
    names = ["aethel-hybrid", *ABLATIONS, *HISTORICAL]
    assert parse_methods(",".join(names)) == names
    base = _method_settings("aethel-hybrid")
    for name, change in {**ABLATIONS, **HISTORICAL}.items():
        kwargs = _method_settings(name)
        differing = {k for k in set(base) | set(kwargs) if base.get(k) != kwargs.get(k)}
        changed = set(change)  # set_params keys: the hybrid's own, graph__x for the paper retriever's
        assert differing, name
        assert differing <= changed | {"rank_weights"}, name  # one component (and the ranking terms it needs)
        assert set(ABLATION_LABELS) >= {name}
    rank_weights = {name: METHODS[name].rank_weights for name in names}
    assert "document" not in rank_weights["aethel-hybrid-no-documents"]
    assert set(rank_weights["aethel-hybrid-no-graph"]) <= {"lexical", "dense", "heading"}
    assert "heading" in rank_weights["aethel-hybrid"]
    assert "heading" not in rank_weights["aethel-hybrid-no-heading"]
    no_heading = {t: w for t, w in rank_weights["aethel-hybrid"].items() if t != "heading"}
    assert rank_weights["aethel-hybrid-no-heading"] == no_heading
    assert rank_weights["aethel-hybrid-ppr-only"] is None
    r = make_retriever("aethel-hybrid", graph={"n_process": 2})
    assert isinstance(r, HybridRetriever) and r.is_hybrid and r.graph.n_process == 2
    assert METHODS["aethel-hybrid"].graph.n_process == 1 and r.graph is not METHODS["aethel-hybrid"].graph
    for name in names:  # every registered hybrid is unfitted, and make_retriever gives a fresh copy
        assert not METHODS[name].is_fitted and params_json(make_retriever(name)) == params_json(METHODS[name])


def test_chosen_setting_is_the_stored_tuning_result():
    best = read_tuning()["best"]["setting"]
    hybrid = HybridRetriever()  # the chosen setting is its defaults
    assert hybrid.dense_pooling == best["dense_pooling"]
    assert hybrid.seed_depth == best["seed_depth"]
    assert hybrid.seed_weights == best["seed_weights"]
    assert hybrid.rank_weights == {k: v for k, v in best["rank_weights"].items() if v > 0}
    # aethel-hybrid is those defaults over the paper retriever of GRAPH
    assert params_json(METHODS["aethel-hybrid"]) == params_json(
        HybridRetriever(graph=GraphRetriever(**GRAPH))
    )
    assert set(read_tuning()["datasets"]) == {"financebench", "musique-open", "2wiki-open", "synthetic"}


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    import os

    os.environ["AETHEL_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    return toy_filings()


@pytest.mark.parametrize(
    "rank_weights",
    [RANK_WEIGHTS, {"document": 0.5, "lexical": 0.1, "dense": 0.4}],
    ids=["base-with-heading", "base-without-heading"],
)
def test_tune_scores_equal_the_library_metrics_of_the_chosen_setting(toy, rank_weights):
    """Whatever ranking weights the base holds, every term tune may choose is measured: the
    chosen setting, fitted afresh by the library, scores what tune said."""
    base = HybridRetriever(passage_seeds=("lexical",), rank_weights=rank_weights)
    graph = {"extractor": "regex"}
    grid = {"dense_pooling": ("first",), "seed_depth": (2, 5), "metadata": (1.0,), "passages": (0.5, 2.0)}
    res = tune({"toy": toy}, seed_grid=grid, rank_step=0.25, base=base, graph=graph)
    from math import comb

    n_simplex = comb(4 + len(RANK_TERMS) - 1, len(RANK_TERMS) - 1)  # weight vectors of step 1/4 summing to 1
    assert len(res["rows"]) == 4 and res["n_settings"] == 4 * n_simplex and res["datasets"] == {"toy": 6}
    assert res["precision"] == resolve_precision(None)  # the record names the arithmetic of its dense scores
    best = res["best"]
    assert best["dev_mrr"] == max(r["dev_mrr"] for r in res["rows"])
    s = best["setting"]
    chosen = clone(base).set_params(
        graph=GraphRetriever(**{**GRAPH, **graph}),
        dense_pooling=s["dense_pooling"],
        seed_depth=s["seed_depth"],
        seed_weights=s["seed_weights"],
        period_decay=s["period_decay"],
        rank_weights={k: v for k, v in s["rank_weights"].items() if v > 0},
    )
    r = chosen.fit(toy.passages)
    assert base.graph is None and not base.is_fitted  # tune changed nothing on its base
    m = evaluate(r.search(toy.queries, k=1000), toy.queries, ["MRR", "HR@5"])
    assert m["MRR"] == pytest.approx(best["per_dataset"]["toy"]["MRR"], abs=1e-6)
    assert m["HR@5"] == pytest.approx(best["per_dataset"]["toy"]["HR@5"], abs=1e-6)


def test_rank_of_gold_breaks_ties_by_corpus_order():
    S = np.array([[1.0, 0.2], [3.0, 0.2], [3.0, 0.1], [0.0, 0.2]])
    ranks = _rank_of_gold(S, [np.array([2]), np.array([3, 1])])
    assert ranks.tolist() == [2, 2]


def test_simplex_grid():
    pts = _simplex(0.5, 3)
    assert sorted(pts) == sorted(
        [(0, 0, 1), (0, 0.5, 0.5), (0, 1, 0), (0.5, 0, 0.5), (0.5, 0.5, 0), (1, 0, 0)]
    )


def test_score_halves():
    block = {"m": {"per_query_metrics": {"a": {"MRR": 1.0}, "b": {"MRR": 0.0}, "c": {"MRR": 0.5}}}}
    got = score_halves(block, {"dev": ["a"], "test": ["b", "c"]}, metrics=("MRR",))
    assert got == {"m": {"dev": {"MRR": 1.0}, "test": {"MRR": 0.25}, "all": {"MRR": 0.5}}}


def _with_pools(ds):
    by_doc = {}
    for p in ds.passages:
        by_doc.setdefault(p.doc_id, []).append(p.pid)
    queries = []
    for q in ds.queries:
        doc = next(iter(q.gold)).split("#")[0]
        other = next(d for d in by_doc if d != doc)
        queries.append(Query(q.qid, q.text, q.gold, pool=tuple(by_doc[doc] + by_doc[other])))
    return Dataset("toy", ds.passages, queries, {})


def test_beyond_study_and_closed_pool_check_on_a_toy_corpus(toy):
    from aethel_lite.evaluation.runner import run_methods, score_runs, without_timing

    chapter = score_runs(
        run_methods(toy, ["bm25", "dense"], setting="open", progress=False, log=None), toy.queries, k=5
    )

    def study():
        return beyond_study(
            {"toy": toy},
            baselines={"toy": chapter},
            variants=["aethel-hybrid", "aethel-hybrid-no-graph"],
            n_resamples=200,
        )["toy"]

    res = study()
    assert without_timing(study()) == without_timing(res)  # deterministic: the chapter runs it once in CI
    assert set(res["metrics"]) == {*BASELINES, "aethel-hybrid", "aethel-hybrid-no-graph"}
    assert res["metrics"]["bm25"]["all"]["MRR"] == chapter["bm25"]["MRR"]  # reused, not re-run
    assert "bm25" not in res["timing"] and "dense-max" in res["timing"]
    assert sorted(res["halves"]["dev"] + res["halves"]["test"]) == sorted(q.qid for q in toy.queries)
    tests = {(t["half"], t["b"], t["metric"]) for t in res["tests"]}
    assert ("test", "bm25", "MRR") in tests and ("all", "dense", "HR@5") in tests
    for t in res["tests"]:
        assert t["excludes_zero"] == (t["ci_low"] > 0 or t["ci_high"] < 0)
    assert sum(res["sources"].values()) == pytest.approx(1.0)
    # the chapter's tables and generated text come from this structure alone
    table = halves_table(res, ["bm25", "aethel-hybrid"])
    assert table.loc["bm25", ("MRR", "all")] == res["metrics"]["bm25"]["all"]["MRR"]
    assert len(beyond_report.tests_table(res["tests"])) == sum(
        t["metric"] in ("MRR", "HR@5") for t in res["tests"]
    )
    abl = ablation_table({"toy": res}, "MRR")
    assert abl.loc["aethel-hybrid-no-graph", ("toy", "Δ")] == pytest.approx(
        res["metrics"]["aethel-hybrid-no-graph"]["all"]["MRR"]
        - res["metrics"]["aethel-hybrid"]["all"]["MRR"],
        abs=1e-3,
    )
    narrow = ablation_columns({"toy": res}, "MRR")  # the chapter's table: value and (change) in one cell
    assert list(narrow.columns) == ["variant (component switched off)", "toy"]
    no_graph = res["metrics"]["aethel-hybrid-no-graph"]["all"]["MRR"]
    full = res["metrics"]["aethel-hybrid"]["all"]["MRR"]
    assert narrow["toy"][0] == f"{full:.3f}"
    assert narrow["toy"][2] == "–"  # a variant this run did not include
    row = ["aethel-hybrid", *ABLATIONS].index("aethel-hybrid-no-graph")
    assert narrow["toy"][row] == f"{no_graph:.3f} ({round(no_graph - full, 3):+.3f})".replace("-", "−")
    assert any("graph's own contribution" in line for line in what_did_not_work({"datasets": {"toy": res}}))
    # the graph's part is tested against the same dense + BM25 sum without the graph (its own family)
    comp = {(t["half"], t["b"], t["metric"]): t for t in res["components"]}
    assert ("all", "aethel-hybrid-no-graph", "MRR") in comp and (
        "test",
        "aethel-hybrid-no-graph",
        "HR@5",
    ) in comp
    t = comp[("all", "aethel-hybrid-no-graph", "MRR")]
    assert t["mean_a"] == pytest.approx(res["metrics"]["aethel-hybrid"]["all"]["MRR"], abs=1e-6)
    assert t["mean_b"] == pytest.approx(res["metrics"]["aethel-hybrid-no-graph"]["all"]["MRR"], abs=1e-6)
    assert t["ci_low"] <= t["diff"] <= t["ci_high"]
    import matplotlib.pyplot as plt

    plt.close(difference_figure({"toy": res}))
    closed = closed_pool_check({"toy": _with_pools(toy)}, n_resamples=200)["toy"]
    assert {t["b"] for t in closed["tests"]} == {"aethel-bct"}
    assert closed["passes"] == all(t["ci_high"] >= 0 for t in closed["tests"] if t["half"] == "all")


def _row(half, b, metric, a_mean, b_mean, lo, hi):
    return {
        "half": half,
        "a": "aethel-hybrid",
        "b": b,
        "metric": metric,
        "n": 10,
        "mean_a": a_mean,
        "mean_b": b_mean,
        "diff": a_mean - b_mean,
        "ci_low": lo,
        "ci_high": hi,
        "p_bootstrap": 0.01,
        "excludes_zero": lo > 0 or hi < 0,
    }


def test_targets_are_read_off_the_numbers():
    fb_tests = [
        _row(h, b, m, 0.4, 0.3, 0.02, 0.2)
        for h in ("test", "all")
        for b in ("bm25", "dense")
        for m in ("MRR", "HR@5")
    ]
    fb_tests[0] = _row("test", "bm25", "MRR", 0.4, 0.35, -0.01, 0.1)  # CI reaches zero: fails
    means = lambda r, a: {"all": {"Recall@5": r, "AllSupport@5": a}}
    saved = {
        "datasets": {
            "financebench": {"tests": fb_tests},
            "musique-open": {
                "metrics": {
                    "bm25": means(0.5, 0.2),
                    "dense": means(0.6, 0.25),
                    "aethel-hybrid": means(0.6, 0.3),
                }
            },
            "2wiki-open": {
                "metrics": {
                    "bm25": means(0.5, 0.2),
                    "dense": means(0.6, 0.25),
                    "aethel-hybrid": means(0.7, 0.25),
                }
            },
        },
        "closed": {
            "musique": {"tests": [_row("all", "aethel-bct", "MRR", 0.5, 0.52, -0.05, 0.01)], "passes": True}
        },
        "timing": {
            "latency": {
                "dataset": "financebench",
                "n_passages": 10206,
                "aethel-hybrid": {"single_ms": 12.0, "batched_ms": 6.0},
                "aethel-hybrid (question analysed)": {"single_ms": 8.0, "batched_ms": 3.0},
                "bm25": {"single_ms": 1.0, "batched_ms": 1.0},
                "dense": {"single_ms": 9.0, "batched_ms": 4.0},
            }
        },
    }
    rows = targets(saved)
    holds = [r["met"] for r in rows]
    assert holds == [False, True, True, True, True, False, True, False, True]  # end to end: batched 6 ms > 5
    assert rows[-2]["target"].startswith("latency") and "6.0 ms" in rows[-2]["measured"]
    assert targets({"datasets": {}})[0]["met"] is None
    summary = targets_summary(rows)
    assert summary.startswith(f"**{sum(holds)} of the {len(holds)} targets measured here are met.**")
    assert summary.count(" on `") == holds.count(False) and "diff +0.050 [-0.010, +0.100]" in summary
    assert targets_summary(targets({"datasets": {}})) == "**0 of the 0 targets measured here are met.**"


def test_latency_reports_every_row(toy, monkeypatch):
    lat = latency(toy, repeats=1)
    assert lat["n_queries"] == len(toy.queries) and lat["n_passages"] == len(toy.passages)
    for row in (
        "bm25",
        "dense",
        "aethel-hybrid",
        "aethel-hybrid (question analysed)",
        "aethel-hybrid (explain)",
    ):
        assert lat[row]["single_ms"] > 0 and lat[row]["batched_ms"] > 0
    # retrievers the chapter already fitted are timed as they are, not fitted again
    given = {
        "bm25": make_retriever("bm25").fit(toy.passages),
        "dense": make_retriever("dense").fit(toy.passages),
        "aethel-hybrid": make_retriever("aethel-hybrid").fit(toy.passages),
    }
    for cls in (GraphRetriever, HybridRetriever):
        monkeypatch.setattr(cls, "fit", lambda *a, **k: pytest.fail("refitted"))
    hybrid = given["aethel-hybrid"]
    memos = []  # whether the memos were shared at each search of the hybrid, in order

    def traced_search(*args, **kwargs):
        memos.append(is_shared())
        return type(hybrid).traced_search(hybrid, *args, **kwargs)

    monkeypatch.setattr(hybrid, "traced_search", traced_search)
    with shared():  # the chapter's setting: the timed rows are run without the memos, then it is given back
        again = latency(toy, repeats=1, fitted=given)
        assert is_shared()
    assert not is_shared()
    assert set(again) == set(lat) and params_json(hybrid) == params_json(make_retriever("aethel-hybrid"))
    # end to end without memos, then "question analysed" with them, then "explain" without
    runs = [m for i, m in enumerate(memos) if i == 0 or memos[i - 1] != m]
    assert runs == [False, True, False]
    with pytest.raises(ParameterError, match="not fitted on 'toy'"):
        latency(toy, repeats=1, fitted={"bm25": make_retriever("bm25").fit(toy.passages[:3])})


def test_composition_splits_the_gain_into_fusion_and_graph():
    """The generated account of what aethel-hybrid is made of: the tuned formula (terms of weight 0
    named) and, per corpus, gain = fusion part + graph part, with the graph part's CI."""
    m = lambda v: {"all": {"MRR": v}}
    saved = {
        "tuning": {
            "best": {"setting": {"rank_weights": {"ppr": 0.0, "document": 0.5, "lexical": 0.1, "dense": 0.4}}}
        },
        "datasets": {
            "fb": {
                "metrics": {
                    "bm25": m(0.12),
                    "dense": m(0.25),
                    "aethel-hybrid-no-graph": m(0.27),
                    "aethel-hybrid": m(0.35),
                    "aethel-hybrid-no-metadata": m(0.30),
                },
                "components": [
                    {
                        "half": "all",
                        "b": "aethel-hybrid-no-graph",
                        "metric": "MRR",
                        "ci_low": 0.03,
                        "ci_high": 0.13,
                    },
                    {
                        "half": "all",
                        "b": "aethel-hybrid-no-metadata",
                        "metric": "MRR",
                        "ci_low": -0.01,
                        "ci_high": 0.1,
                    },
                ],
            }
        },
    }
    first, fb = composition(saved)
    assert "0.50 × its document node's PageRank + 0.40 × the dense cosine + 0.10 × BM25" in first
    assert "the passage's own PageRank and the heading's dense cosine got weight 0" in first
    assert "only through the PageRank of the passage's document" in first
    assert "(`dense`) 0.250, so a gain of +0.100" in fb
    assert "without a graph brings +0.020 and the graph +0.080 [+0.030, +0.130]" in fb
    assert "metadata nodes' part: +0.050 [-0.010, +0.100]" in fb
    assert "heading" not in fb.split("without a graph")[1]  # no heading variant run: nothing said of it
    saved["datasets"]["fb"]["metrics"].update(
        {"aethel-hybrid-no-heading": m(0.31), "aethel-hybrid-v1": m(0.29)}
    )
    saved["datasets"]["fb"]["components"].append(
        {"half": "all", "b": "aethel-hybrid-no-heading", "metric": "MRR", "ci_low": 0.01, "ci_high": 0.07}
    )
    fb = composition(saved)[1]
    assert "Without the heading term: 0.310 (the heading's part: +0.040 [+0.010, +0.070])" in fb
    assert "(`aethel-hybrid-v1`): 0.290" in fb
    saved["tuning"]["best"]["setting"]["rank_weights"].update({"ppr": 0.2, "heading": 0.1})
    assert "only through" not in composition(saved)[0] and "got weight 0" not in composition(saved)[0]


def test_method_page_says_what_the_tuned_ranking_is_made_of():
    """book/method.md states in words that the tuned ranking gives the passage's own PageRank weight 0;
    the stored tuning record must agree (if a re-tuning changes it, the page must change too)."""
    from pathlib import Path

    text = " ".join((Path(__file__).resolve().parents[2] / "book" / "method.md").read_text().split())
    claims_zero = "set $\\lambda_\\text{ppr} = 0$" in text
    rw = read_tuning()["best"]["setting"]["rank_weights"]
    assert claims_zero == (rw["ppr"] == 0.0) and (rw["document"] > 0 or not claims_zero)
    assert "aethel-hybrid-no-graph" in text


def test_tuning_sentences_report_the_spread_of_the_best_settings_and_the_rescored_choice():
    def row(mean, fb, mu):
        return {"dev_mrr": mean, "per_dataset": {"financebench": {"MRR": fb}, "musique-open": {"MRR": mu}}}

    tuning = {
        "rows": [row(0.50, 0.20, 0.80), row(0.58, 0.30, 0.78), row(0.57, 0.25, 0.83), row(0.10, 0.0, 0.1)],
        "best": row(0.58, 0.30, 0.78),
        "datasets": {"financebench": 2, "musique-open": 3},
    }

    def built(mrr, n_dev):
        return {
            "metrics": {"aethel-hybrid": {"dev": {"MRR": mrr}}},
            "halves": {"dev": [f"q{i}" for i in range(n_dev)]},
        }

    saved = {"datasets": {"financebench": built(0.29, 2), "musique-open": built(0.78, 3)}}
    spread, rescored = tuning_sentences(tuning, saved, top=3)
    assert "3 best of the 4 seed settings" in spread and "0.5000–0.5800" in spread
    assert "`financebench` 0.200–0.300" in spread and "`musique-open` 0.780–0.830" in spread
    assert "widest: `financebench`" in spread
    assert (
        "`financebench` 0.300 → 0.290" in rescored
        and "not recorded" in rescored
        and "identical" not in rescored
    )
    saved["datasets"]["financebench"]["metrics"]["aethel-hybrid"]["dev"]["MRR"] = 0.30
    assert "identical" in tuning_sentences({**tuning, "precision": "float32"}, saved, top=3)[1]
    assert (
        len(tuning_sentences({"rows": tuning["rows"][:1], "best": tuning["best"]})) == 0
    )  # nothing to compare
    # other development questions (a quick build) or an empty half: not set beside the record
    quick = {"datasets": {"financebench": built(0.9, 1), "musique-open": built(None, 0)}}
    assert len(tuning_sentences(tuning, quick, top=3)) == 1


def test_tune_scores_a_question_whose_gold_is_not_in_the_corpus_as_zero():
    S = np.array([[0.1, 0.9], [0.5, 0.2]])
    assert _rank_of_gold(S, [np.array([], dtype=np.int64), np.array([1])]).tolist() == [3, 2]


def test_latency_needs_questions(toy):
    with pytest.raises(ParameterError, match="no questions"):
        latency(Dataset("empty", toy.passages, [], {}))
    with pytest.raises(ParameterError, match="n_queries"):
        latency(toy, n_queries=0)


def test_load_study_names_an_unknown_data_set_before_loading():
    for bad, said in (
        (["financebench", "nope"], "['nope']"),
        ("financebench", "['financebench']"),
        ([], "empty list"),
    ):
        with pytest.raises(
            ParameterError,
            match=rf"datasets: unknown {said.replace('[', '.').replace(']', '.')}; choose from financebench",
        ):
            load_study(bad)
    loaded, missing = load_study(["synthetic"], quick=True)
    assert (
        list(loaded) == ["synthetic"] and missing == {} and len(loaded["synthetic"].queries) <= QUICK["limit"]
    )


def _hybrid_result():
    """A ``results/beyond.json`` of one corpus: six questions, three of them the test half."""
    qids = [f"q{i}" for i in range(6)]
    per_query = {
        "aethel-hybrid": [1, 1, 0.5, 1, 1, 0.5],
        "bm25": [0.5, 0.5, 0.5, 0.5, 1, 0.5],
        "dense": [1, 0, 0, 1, 0.5, 0],
        "aethel-hybrid-no-graph": [1, 0.5, 0.5, 0.5, 1, 0.5],
    }
    pqm = {m: {q: {"MRR": v} for q, v in zip(qids, vals)} for m, vals in per_query.items()}
    halves = {"dev": qids[:3], "test": qids[3:]}
    metrics = {
        m: {
            h: {"MRR": sum(pqm[m][q]["MRR"] for q in qs) / len(qs)}
            for h, qs in (*halves.items(), ("all", qids))
        }
        for m in pqm
    }

    def row(b, half, lo, hi):
        a, z = metrics["aethel-hybrid"][half]["MRR"], metrics[b][half]["MRR"]
        return {
            "half": half,
            "a": "aethel-hybrid",
            "b": b,
            "metric": "MRR",
            "n": 3,
            "mean_a": a,
            "mean_b": z,
            "diff": a - z,
            "ci_low": lo,
            "ci_high": hi,
        }

    return {
        "datasets": {
            "fb": {
                "metrics": metrics,
                "halves": halves,
                "per_query_metrics": pqm,
                "tests": [row("bm25", "test", 0.1, 0.5), row("dense", "test", -0.2, 0.9)],
                "components": [row("aethel-hybrid-no-graph", "test", -0.1, 0.4)],
            }
        },
        "closed": {"musique": {"tests": [], "passes": True}, "2wiki": {"tests": [], "passes": False}},
        "synthetic_only": False,
    }


def test_hybrid_headline_and_takeaways_read_the_result():
    saved = _hybrid_result()
    shown, verdict = hybrid_headline(saved, n_resamples=200)
    row = shown.to_dict("records")[0]
    assert row["data set"] == "fb" and row["test questions"] == 3
    assert row["aethel-hybrid [95% CI]"].startswith("0.833 [") and row["bm25 [95% CI]"].startswith("0.667 [")
    assert (
        row["hybrid − better [95% CI]"] == "+0.167 [+0.10, +0.50] (bm25)"
    )  # bm25 (0.667) is the better baseline
    assert "on fb (3 questions) +0.167 [+0.10, +0.50], the interval excludes zero" in verdict
    assert "not worse than `aethel-bct` beyond the interval on musique, and worse on 2wiki" in verdict
    text = hybrid_takeaways(saved)
    assert "**fb**, MRR on the 3 test questions: `aethel-hybrid` 0.833, `bm25` 0.667" in text
    assert "(`aethel-hybrid-no-graph`): +0.167 [-0.10, +0.40], the interval spans zero" in text
    saved["synthetic_only"] = True
    assert hybrid_headline(saved, n_resamples=200)[1].startswith("Only the synthetic corpus ran")


def test_the_chapter_s_study_shows_what_its_file_holds(tmp_path):
    """HybridStudy keeps the result as its file holds it (keys sorted, lists for tuples) and writes it
    once; its headline and takeaways are those of the result; the chosen setting comes from the record."""
    import json

    from aethel_lite.studies.hybrid_study import HybridStudy, chosen_setting
    from aethel_lite.studies.record import as_record as as_written

    assert list(as_written({"b": (1, 2), "a": {"d": 1, "c": 2}})) == ["a", "b"]
    assert as_written({"b": (1, 2)}) == {"b": [1, 2]}
    saved = _hybrid_result()
    study = HybridStudy(saved, n_resamples=200)
    study.save(tmp_path)
    assert json.loads((tmp_path / "beyond.json").read_text()) == study.result
    assert list(study.result["closed"]) == ["2wiki", "musique"]  # the file's order
    frame, verdict = study.headline()
    expected = hybrid_headline(as_written(saved), n_resamples=200)
    assert frame.equals(expected[0]) and verdict == expected[1]
    assert study.takeaways() == hybrid_takeaways(saved)
    said, per_corpus = chosen_setting()
    tuning = read_tuning()
    assert f"mean development MRR {tuning['best']['dev_mrr']:.3f}." in said
    assert list(per_corpus["data set"]) == list(tuning["best"]["per_dataset"])


def test_own_files_and_comparisons_say_when_they_did_not_run(tmp_path):
    """Without the real FinanceBench pages neither runs: the chapter says so, and an earlier build's
    own-files result is removed rather than shown beside this build's."""
    import json

    from aethel_lite.studies import comparisons, own_files

    own = own_files.run({"synthetic": None})
    (tmp_path / "own_files.json").write_text("{}")
    own.save(tmp_path)
    assert not (tmp_path / "own_files.json").exists()
    assert own.metadata_tables()[0].startswith("*Not run in this build") and own.tables() == []
    comparison = comparisons.run({"synthetic": None})
    comparison.save(tmp_path)
    assert json.loads((tmp_path / "comparisons.json").read_text()) == {"missing": comparisons.MISSING}
    assert comparison.tables() == [f"Not run in this build: it needs {comparisons.MISSING}."]
