"""The reproducibility study (aethel_lite.studies.reproducibility): one row per paper number, beside ours,
with a verdict; the chapter's headline, figure and takeaways."""

from __future__ import annotations

import numpy as np
import pytest

from aethel_lite.io import write_json
from aethel_lite.studies import reproducibility as repro
from aethel_lite.studies.paper import PAPER_CROSSOVERS, PAPER_DIFFERENCES, PAPER_ROWS, PAPER_TESTS
from aethel_lite.studies.scaling import crossovers

N = 200


def _per_query(values: dict[str, list[float]]) -> dict:
    """A methods entry whose per-question metrics are ``values`` (metric → one value per question)."""
    n = len(next(iter(values.values())))
    return {
        **{m: float(np.mean(v)) for m, v in values.items()},
        "per_query_metrics": {f"q{i}": {m: v[i] for m, v in values.items()} for i in range(n)},
    }


def _ones(k: int, n: int = N) -> list[float]:
    return [1.0] * k + [0.0] * (n - k)


def _closed(synthetic: bool = False, limit=None) -> dict:
    # musique: ner3 HR@5 = .885 (the paper's value: inside any CI around it); HR@1 .630 -> .570 with BCT (the paper's -.060)
    ner3 = _per_query({"HR@1": _ones(126), "HR@5": _ones(177)})
    bct = _per_query({"HR@1": _ones(114), "HR@5": _ones(177)})
    dense = _per_query({"HR@1": _ones(100), "HR@5": _ones(100)})  # .500 against the paper's .960: outside
    wiki = _per_query({"HR@1": _ones(50, 100), "HR@5": _ones(50, 100)})  # 2wiki ner3 HR@5 .5 against 1.0
    return {
        "methods": {
            "musique": {"aethel-ner3": ner3, "aethel-bct": bct, "dense": dense},
            "2wiki": {"aethel-ner3": wiki},
        },
        "datasets": {"musique": {"n_queries": N}, "2wiki": {"n_queries": 100}},
        "synthetic_fallback": {"musique": synthetic, "2wiki": False},
        "parameters": {"limit": limit},
    }


def _cell(mean: float, lo: float, hi: float) -> dict:
    return {"mean": mean, "ci_low": lo, "ci_high": hi, "n": 40}


def _open(quick: bool = False) -> dict:
    ci = {
        "bm25": {"all": {"HR@5": _cell(0.68, 0.55, 0.80), "MRR": _cell(0.47, 0.40, 0.55)}, "groups": {}},
        "aethel-ner3": {
            "all": {"HR@5": _cell(0.20, 0.10, 0.30)},
            "groups": {
                "several evidence pages": {"HR@5": _cell(0.6, 0.5, 0.7)},
                "one evidence page": {"HR@5": _cell(0.1, 0.0, 0.2)},
            },
        },
    }
    other = {"bm25": {"all": {"HR@5": _cell(0.1, 0.0, 0.2)}, "groups": {}}}
    return {
        "datasets": {"musique-open": {"ci": other}, "financebench": {"ci": ci}},
        "tests": [
            {
                "dataset": "financebench",
                "a": "rrf",
                "b": "bm25",
                "metric": "MRR",
                "diff": 0.02,
                "ci_low": -0.03,
                "ci_high": 0.06,
                "n": 129,
            }
        ],
        "parameters": {"quick": quick},
        "synthetic_only": False,
    }


def _curve(points: dict[int, float]) -> list[dict]:
    return [
        {"size": s, "mean": m, "ci_low": m - 0.05, "ci_high": m + 0.05, "n_seeds": 3}
        for s, m in sorted(points.items())
    ]


def _scaling() -> dict:
    curves = {
        "dense": {"HR@5": _curve({100: 0.84, 500: 0.50, 2000: 0.40})},
        "aethel-ner3": {"HR@5": _curve({100: 0.60, 500: 0.55, 2000: 0.50})},
        "bm25": {"HR@5": _curve({100: 0.50, 500: 0.60, 2000: 0.70})},
    }
    return {
        "runs": {
            "2wiki-open": {"curves": {}, "sizes": []},
            "financebench": {"curves": curves, "sizes": [100, 500, 2000]},
        },
        "parameters": {"quick": False},
        "synthetic_only": False,
    }


def _by_number(rows):
    return {r["paper's number"]: r for r in rows}


def test_one_row_per_paper_number_even_with_no_results():
    rows = repro.paper_table({"closed_pool": None, "open_corpus": None, "scaling": None})
    expected = len(PAPER_ROWS) + len(PAPER_TESTS) + len(PAPER_DIFFERENCES) + len(PAPER_CROSSOVERS)
    assert len(rows) == expected == repro.paper_number_count()
    assert all(r["verdict"] == "not comparable" and r["ours"] is None for r in rows)
    assert all("not found" in r["why"] and "results/" in r["why"] for r in rows)
    # the paper's values appear in paper.py's order, each exactly once
    values = [r["paper"] for r in rows]
    closed = [r["value"] for r in PAPER_ROWS if r["section"] == "closed_pool"] + [
        d["value"] for d in PAPER_DIFFERENCES
    ]
    assert values[: len(closed)] == closed
    assert values[-2:] == [c["value"] for c in PAPER_CROSSOVERS.values()]


def test_closed_pool_verdicts_follow_our_intervals():
    rows = _by_number(repro.paper_table({"closed_pool": _closed()}, n_resamples=2000))
    assert rows["Aethel graph (PPR), HR@5, musique"]["verdict"] == "reproduced"
    assert rows["Aethel graph (PPR), HR@5, musique"]["ours"] == pytest.approx(0.885)
    assert rows["Aethel graph (PPR), HR@5, 2wiki"]["verdict"] == "differs"
    assert rows["dense, HR@5, musique"]["verdict"] == "differs"
    drop = rows["aethel-bct − aethel-ner3, HR@1, musique"]
    assert drop["ours"] == pytest.approx(-0.06) and drop["verdict"] == "reproduced" and drop["paper"] == -0.06
    assert drop["ci_low"] < -0.06 < drop["ci_high"]
    # the interval is the percentile bootstrap of the mean (independent check: a normal approximation)
    hr5 = rows["Aethel graph (PPR), HR@5, musique"]
    se = np.sqrt(0.885 * 0.115 / N)
    assert hr5["ci_low"] == pytest.approx(0.885 - 1.96 * se, abs=0.01) and hr5["ci_high"] == pytest.approx(
        0.885 + 1.96 * se, abs=0.01
    )


def test_synthetic_stand_in_and_limited_runs_are_not_comparable():
    rows = _by_number(repro.paper_table({"closed_pool": _closed(synthetic=True)}, n_resamples=500))
    mus = rows["Aethel graph (PPR), HR@5, musique"]
    assert mus["verdict"] == "not comparable" and mus["ours"] is None and "synthetic" in mus["why"]
    assert rows["Aethel graph (PPR), HR@5, 2wiki"]["verdict"] == "differs"  # 2wiki ran on real data
    rows = _by_number(repro.paper_table({"closed_pool": _closed(limit=8)}, n_resamples=500))
    assert rows["Aethel graph (PPR), HR@5, musique"]["verdict"] == "not comparable"
    assert "first 8 questions" in rows["Aethel graph (PPR), HR@5, musique"]["why"]


def test_open_corpus_rows_use_the_financebench_corpus_and_paper_verdicts():
    rows = _by_number(repro.paper_table({"open_corpus": _open()}))
    bm25 = rows["BM25, HR@5"]
    assert bm25["our data"] == "financebench" and bm25["ours"] == 0.68 and bm25["verdict"] == "reproduced"
    assert rows["graph, filtered NER (NER3), HR@5"]["verdict"] == "differs"
    assert (
        rows["graph, filtered NER (NER3), HR@5 (multi-hop questions)"]["ours"] == 0.6
    )  # the several-pages group
    assert rows["dense, HR@5"]["verdict"] == "not comparable" and "not run" in rows["dense, HR@5"]["why"]
    test = next(r for k, r in rows.items() if k.startswith("rrf − bm25"))
    assert test["paper"] == pytest.approx(0.011) and test["ours"] == 0.02 and test["verdict"] == "reproduced"
    assert "our CI spans zero, the paper's spans it" in test["why"]
    quick = _by_number(repro.paper_table({"open_corpus": _open(quick=True)}))
    assert {r["verdict"] for k, r in quick.items() if r["chapter"] == "20_open_corpus"} == {"not comparable"}


def test_scaling_points_and_crossings():
    saved = _scaling()
    rows = _by_number(repro.paper_table({"scaling": saved}))
    assert (
        rows["dense, HR@5 at 100 passages"]["verdict"] == "reproduced"
        and rows["dense, HR@5 at 100 passages"]["ours"] == 0.84
    )
    assert rows["BM25, HR@5 at 100 passages"]["verdict"] == "differs"
    missing = rows["dense, HR@5 at 4,123 passages"]
    assert missing["verdict"] == "not comparable" and "size 4123 not run" in missing["why"]
    dense_cross = rows[PAPER_CROSSOVERS["graph_passes_dense_from"]["note"]]
    expected = crossovers(saved["runs"]["financebench"]["curves"], "aethel-ner3", "dense")["passes_from"]
    assert dense_cross["ours"] == expected == 500 and dense_cross["verdict"] == "reproduced"
    bm25_cross = rows[PAPER_CROSSOVERS["graph_passes_bm25"]["note"]]
    assert bm25_cross["ours"] is True and bm25_cross["verdict"] == "differs"  # graph .60 > bm25 .50 at 100


def test_takeaways_count_the_verdicts():
    rows = repro.paper_table(
        {"closed_pool": _closed(), "open_corpus": None, "scaling": _scaling()}, n_resamples=500
    )
    counts = repro.verdict_counts(rows)
    assert sum(counts.values()) == len(rows)
    text = repro.takeaways(rows)
    assert f"{counts['reproduced']} are reproduced" in text and f"{counts['differs']} differ" in text
    assert "results/open_corpus.json not found" in text


def test_load_results_reads_present_files_and_marks_missing(tmp_path):
    write_json(tmp_path / "closed_pool.json", {"x": 1})
    got = repro.load_results(tmp_path)
    assert got["closed_pool"] == {"x": 1} and got["scaling"] is None and got["open_corpus"] is None


def test_synthetic_only_chapters_say_so_in_every_row():
    open_ = {
        "datasets": {"synthetic": {"ci": {}}},
        "tests": [],
        "parameters": {"quick": True},
        "synthetic_only": True,
    }
    scaling = {
        "runs": {"synthetic": _scaling()["runs"]["financebench"]},
        "parameters": {"quick": True},
        "synthetic_only": True,
    }
    rows = [
        r
        for r in repro.paper_table({"open_corpus": open_, "scaling": scaling})
        if r["chapter"] != "10_closed_pool"
    ]
    assert rows and all(r["verdict"] == "not comparable" and r["ours"] is None for r in rows)
    assert all("synthetic" in r["why"] or "not tested" in r["why"] for r in rows), {r["why"] for r in rows}
    # a paired test that did run on the synthetic stand-in is not set beside the paper's either
    p = PAPER_TESTS[0]
    open_["tests"] = [
        {
            "dataset": "synthetic",
            "a": p["a"],
            "b": p["b"],
            "metric": p["metric"],
            "diff": 0.05,
            "ci_low": -0.02,
            "ci_high": 0.11,
            "n": 40,
        }
    ]
    tested = [
        r for r in repro.paper_table({"open_corpus": open_}) if "paired bootstrap" in r["paper's number"]
    ]
    assert tested and all(r["ours"] is None and "synthetic" in r["why"] for r in tested)


def test_takeaways_say_never_for_a_crossing_that_never_happens():
    rows = [
        {
            "paper's number": "graph passes dense from (size)",
            "paper": 500,
            "ours": None,
            "ci_low": None,
            "ci_high": None,
            "verdict": "differs",
            "why": "",
            "chapter": "30_scaling",
            "data": "financebench",
        }
    ]
    assert "paper 500, ours never" in repro.takeaways(rows)


def test_headline_counts_the_verdicts_per_chapter():
    rows = [
        {"chapter": "closed pool", "verdict": "reproduced", "paper's number": "a", "why": "same method"},
        {
            "chapter": "closed pool",
            "verdict": "differs",
            "paper's number": "HR@5 on MuSiQue",
            "why": "same method",
        },
        {"chapter": "scaling", "verdict": "not comparable", "paper's number": "c", "why": "size 100 not run"},
        {"chapter": "scaling", "verdict": "not comparable", "paper's number": "d", "why": "size 100 not run"},
    ]
    shown, verdict = repro.repro_headline(rows)
    assert shown.to_dict("records") == [
        {"chapter": "closed pool", "reproduced": 1, "differs": 1, "not comparable": 0},
        {"chapter": "scaling", "reproduced": 0, "differs": 0, "not comparable": 2},
    ]
    assert verdict.startswith("Of the paper's 4 numbers, 1 are reproduced") and "HR@5 on MuSiQue" in verdict
    assert "2 cannot be compared in this build: size 100 not run." in verdict  # the rows' own reason, once
    assert repro.repro_headline(rows[:2])[1].count("cannot be compared in this build.") == 1


def test_paper_figure_shows_each_rate_with_ours_and_the_paper_s():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [
        {
            "paper's number": "graph, HR@5",
            "paper": 0.6,
            "ours": 0.41,
            "ci_low": 0.3,
            "ci_high": 0.5,
            "verdict": "differs",
        },
        {
            "paper's number": "dense, HR@5",
            "paper": 0.45,
            "ours": 0.47,
            "ci_low": 0.39,
            "ci_high": 0.55,
            "verdict": "reproduced",
        },
        {
            "paper's number": "crossing",
            "paper": 500.0,
            "ours": 250.0,
            "ci_low": None,
            "ci_high": None,
            "verdict": "differs",
        },
        {
            "paper's number": "passes BM25",
            "paper": False,
            "ours": True,
            "ci_low": None,
            "ci_high": None,
            "verdict": "differs",
        },
    ]
    fig = repro.paper_figure(rows)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "graph, HR@5",
        "dense, HR@5",
    ]  # top to bottom; non-rates left out
    crosses = [line for line in ax.get_lines() if line.get_marker() == "x"]
    assert sorted(float(line.get_xdata()[0]) for line in crosses) == [0.45, 0.6]
    bars = [c for c in ax.containers]  # errorbar containers: ours with the interval
    assert [float(b.lines[0].get_xdata()[0]) for b in bars] == [0.41, 0.47]
    assert ax.get_xlabel() and ax.get_ylabel()
    plt.close(fig)


def test_the_study_reads_a_build_s_result_files(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    write_json(tmp_path / "scaling.json", {**_scaling(), "versions": {"numpy": "2.0"}})
    write_json(tmp_path / "quickstart.json", {"versions": {"numpy": "2.0"}})
    study = repro.reproducibility_study(tmp_path, n_resamples=5000, quick=True)
    assert study.n_resamples == 1000 and study.quick  # quick: at most 1,000 resamples
    assert len(study.rows) == repro.paper_number_count() == len(study.table())
    shown = study.table().set_index("paper's number")
    assert shown.loc["dense, HR@5 at 100 passages", "ours [95% CI]"] == "0.840 [0.79, 0.89]"
    assert shown.loc["dense, HR@5 at 100 passages", "paper"] == "0.840"
    crossing = PAPER_CROSSOVERS["graph_passes_bm25"]["note"]
    assert shown.loc[crossing, "ours [95% CI]"] == "True"  # not a rate: no interval
    assert "`quickstart.json`, `scaling.json`; missing: `graph_construction.json`" in study.found()
    counts = repro.verdict_counts(study.rows)
    assert study.counts() == (
        f"**{len(study.rows)} numbers:** reproduced: {counts['reproduced']}, "
        f"differs: {counts['differs']}, not comparable: {counts['not comparable']}."
    )
    assert study.headline()[1] == repro.repro_headline(study.rows)[1]
    assert study.takeaways() == repro.takeaways(study.rows)
    assert study.versions().to_dict("records") == [
        {"package": "numpy", "version": "2.0", "recorded by": "every chapter"}
    ]
    plt.close(study.figure())
