"""The book's readable tables (aethel_lite.book.report.table, summary_table) and the Wilson interval."""

from __future__ import annotations

import pandas as pd
import pytest

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
