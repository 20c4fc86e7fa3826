"""The book's answer-first headlines and readable tables (aethel_lite.book.headlines, .report.table)."""

from __future__ import annotations

import pandas as pd
import pytest

from aethel_lite.book.headlines import (
    closed_pool_headline,
    scaling_verdict,
    swarm_headline,
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


def _closed(hr5_a, hr5_b):
    def entry(values):
        return {
            "HR@5": sum(values) / len(values),
            "AllSupport@5": 0.5,
            "per_query_metrics": {f"q{i}": {"HR@5": v, "AllSupport@5": 0.5} for i, v in enumerate(values)},
        }

    return {
        "methods": {"musique": {"bm25": entry(hr5_b), "aethel-bct": entry(hr5_a)}},
        "datasets": {"musique": {"n_queries": len(hr5_a)}},
        "synthetic_fallback": {"musique": False},
        "paired_tests": {
            "musique": [
                {
                    "a": "aethel-bct",
                    "b": "bm25",
                    "metric": "HR@5",
                    "diff": 0.25,
                    "ci_low": 0.1,
                    "ci_high": 0.4,
                }
            ]
        },
    }


def test_closed_pool_headline_reads_the_result_file():
    shown, verdict = closed_pool_headline(_closed([1, 1, 1, 0], [1, 0, 1, 0]), n_resamples=200)
    frame = shown.frame
    assert list(frame.columns) == ["data set", "method", "HR@5 [95% CI]", "AllSupport@5 [95% CI]"]
    row = frame[frame["method"] == "bm25"].iloc[0]
    assert row["HR@5 [95% CI]"].startswith("0.500 [") and row["AllSupport@5 [95% CI]"] == "0.500 [0.50, 0.50]"
    assert "`aethel-bct` ranks a supporting paragraph in the top 5 most often (HR@5 0.750)" in verdict
    assert "+0.250 [+0.10, +0.40], the interval excludes zero" in verdict and "4 questions" in verdict
    saved = _closed([1, 0], [1, 0])
    saved["synthetic_fallback"]["musique"] = True
    shown, verdict = closed_pool_headline(saved, n_resamples=200)
    assert list(shown.frame["data set"]) == ["musique (synthetic)", ""]  # named once per group
    assert (
        "`aethel-bct` and `bm25` share the highest HR@5 (0.500)" in verdict
        and "not the paper's data" in verdict
    )


def test_swarm_headline():
    def source(tp, gold, found, planted_found, planted):
        return {
            "facts": {"tp": tp, "n_gold": gold, "n_found": found},
            "conflicts": {"found": planted_found, "n_planted": planted},
        }

    saved = {
        "synthetic": {"scores": {"graph": source(90, 100, 95, 18, 20), "bm25": source(40, 100, 60, 5, 20)}},
        "audit": {"n_figures": 120, "n_memos": 6},
    }
    shown, verdict = swarm_headline(saved)
    assert shown.frame.loc[0, "fact recall [95% CI]"] == fmt_ci(0.9, *wilson(90, 100))
    assert "do not overlap" in verdict and "90 of 100" in verdict and "120 figures" in verdict
    saved["synthetic"]["scores"]["bm25"] = source(88, 100, 95, 18, 20)
    assert "overlap: this run does not separate" in swarm_headline(saved)[1]


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
    from aethel_lite.book.headlines import open_corpus_verdict

    ci = {
        m: {"all": {"MRR": {"mean": v, "ci_low": v - 0.1, "ci_high": v + 0.1}}}
        for m, v in (("bm25", 0.6), ("aethel-ner3", 0.4), ("rrf", 0.7))
    }
    verdict = open_corpus_verdict({"datasets": {"fb": {"ci": ci}}, "verdicts": [{"verdict": "differs"}] * 2})
    assert verdict == (
        "On fb, the best MRR is `rrf`'s, 0.700 [0.60, 0.80]; `aethel-ner3` 0.400 [0.30, 0.50]; "
        "`bm25` 0.600 [0.50, 0.70]. Of the paper's 2 open-corpus numbers: 2 differs."
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


def test_hybrid_headline_and_takeaways_read_the_result_file():
    from aethel_lite.book.headlines import hybrid_headline, hybrid_takeaways

    saved = _hybrid_result()
    shown, verdict = hybrid_headline(saved, n_resamples=200)
    row = shown.frame.to_dict("records")[0]
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


def test_ci_figure_sets_six_corpora_in_two_rows_of_three():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from aethel_lite.book.report import ci_figure

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
