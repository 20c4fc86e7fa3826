"""The book's answer-first headlines and readable tables (aethel_lite.book.headlines, .report.table)."""

from __future__ import annotations

import pandas as pd
import pytest

from aethel_lite.book.headlines import (
    repro_headline,
)
from aethel_lite.book.report import summary_table, table
from aethel_lite.evaluation.stats import format_estimate as fmt_ci
from aethel_lite.evaluation.stats import wilson


def test_table_drops_the_counter_index_and_flattens_dicts():
    df = pd.DataFrame([{"method": "bm25", "HR@5": 0.90512, "hops": {"2": 145, "3": 32}}]).set_index("method")
    shown = table(df)
    assert list(shown.frame.columns) == ["method", "HR@5", "hops"]  # the named index is a column
    assert shown.frame.loc[0, "hops"] == "2: 145 · 3: 32"
    html = shown._repr_html_()
    assert "0.905" in html and "0.90512" not in html and "{" not in html
    assert "0.905 [0.86,&nbsp;0.94]" in table(pd.DataFrame([{"x": fmt_ci(0.905, 0.86, 0.94)}]))._repr_html_()
    assert "<th></th>" not in html and "<th>0</th>" not in html  # no pandas counter column
    stacked = table(pd.concat({"musique": pd.DataFrame([{"a": 1.5}])}, names=["data set"]))
    assert list(stacked.frame.columns) == ["data set", "a"]  # the unnamed counter level is dropped
    assert (
        table(pd.DataFrame([{"ours": None, "paper": 0.885}]))._repr_html_().count("None") == 0
    )  # not computed: empty
    flipped = table(
        pd.DataFrame([{"method": "bm25", "MRR": 0.5}]).set_index("method").T.rename_axis("metric")
    )
    assert (
        list(flipped.frame.columns) == ["metric", "bm25"] and "<th>method</th>" not in flipped._repr_html_()
    )
    halves = pd.DataFrame(
        [[0.5, 0.25]], index=["bm25"], columns=pd.MultiIndex.from_tuples([("MRR", "dev"), ("MRR", "test")])
    )
    assert list(table(halves).frame.columns) == ["", "MRR: dev", "MRR: test"]
    wide = table(pd.DataFrame([{"name": "m", "x": 1.0}, {"name": "w", "x": 2.0}]), transpose=True)
    assert list(wide.frame.columns) == ["", "m", "w"] and wide.frame.iloc[0, 0] == "x"


def test_summary_table_has_one_row_per_field():
    shown = summary_table(
        [
            {"name": "musique", "n_passages": 3, "hops": {"2": 145}, "mean_passage_words": 87.123},
            {"name": "2wiki", "n_passages": 5, "hops": {"2": 1}, "mean_passage_words": 60.0},
        ]
    )
    assert list(shown.frame.columns) == ["", "musique", "2wiki"]
    assert list(shown.frame[""]) == ["passages", "questions by hop count", "mean passage length (words)"]
    assert "87.12" in shown._repr_html_()


def test_wilson_matches_the_published_interval():
    # Wilson (1927) score interval; 8 of 10 at 95%: [0.4902, 0.9433] (Newcombe 1998, table I)
    lo, hi = wilson(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4) and hi == pytest.approx(0.9433, abs=1e-4)
    assert wilson(0, 10)[0] == 0.0 and wilson(0, 10)[1] == pytest.approx(0.2775, abs=1e-4)
    assert wilson(0, 0) is None
    assert fmt_ci(0.9051, 0.8612, 0.9388) == "0.905 [0.86, 0.94]"


def test_repro_headline():
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
    shown, verdict = repro_headline(rows)
    assert shown.frame.to_dict("records") == [
        {"chapter": "closed pool", "reproduced": 1, "differs": 1, "not comparable": 0},
        {"chapter": "scaling", "reproduced": 0, "differs": 0, "not comparable": 2},
    ]
    assert verdict.startswith("Of the paper's 4 numbers, 1 are reproduced") and "HR@5 on MuSiQue" in verdict
    assert "2 cannot be compared in this build: size 100 not run." in verdict  # the rows' own reason, once
    assert repro_headline(rows[:2])[1].count("cannot be compared in this build.") == 1


def test_graph_provenance_and_open_corpus_headlines():
    from aethel_lite.book.headlines import graph_headline, provenance_headline

    modes = {m: [["g1", 1.0], ["x", 0.5], ["g2", 0.2]] for m in ("none", "alias", "substring", "both")}
    alias_modes = {
        **{m: [["x", 1.0], ["y", 0.5], ["a", 0.2]] for m in ("none", "substring")},
        **{m: [["a", 1.0], ["x", 0.5]] for m in ("alias", "both")},
    }
    saved = {
        "question": {"qid": "q1", "gold": ["g1", "g2"]},
        "walk": {"modes": modes},
        "alias": {"qid": "q2", "gold": ["a"], "mention": "NRCP IV", "walk": {"modes": alias_modes}},
        "parameters": {"bct": "both", "alpha": 0.5},
    }
    shown, verdict = graph_headline(saved)
    assert shown.frame.to_dict("records")[0] == {
        "BCT mode": "none",
        "q1: first gold rank": 1,
        "q1: gold in top 5": "2 of 2",
        "q2: first gold rank": 3,
        "q2: gold in top 5": "1 of 1",
    }
    assert "“NRCP IV”" in verdict and "ranks 3 without BCT and 1 with it" in verdict
    report = {
        "gold_reach": {"direct": 8, "bct": 1, "unreached": 1, "two-hop": 0},
        "n_gold": 10,
        "bct_only": 1,
        "k": 5,
        "n_queries": 4,
        "intrusions": {"n_questions": 1},
    }
    shown, verdict = provenance_headline(
        {"reports": {"musique": report}, "datasets": {"musique": {"name": "musique"}}}
    )
    assert list(shown.frame["gold passage"]) == [
        "names an exact seed",
        "names a BCT seed only",
        "not reached",
    ]
    assert shown.frame.loc[0, "musique [95% CI]"] == fmt_ci(0.8, *wilson(8, 10))
    assert "8 of 10 gold passages name an exact seed, 1 are reached only through a BCT expansion" in verdict


def test_paper_figure_shows_each_rate_with_ours_and_the_paper_s():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from aethel_lite.book.report import paper_figure

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
    fig = paper_figure(rows)
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
