"""The swarm chapter's study: its headline and the sentences and tables it reads from its record
(the chapter itself runs in tests/swarm/test_swarm.py)."""

from __future__ import annotations

import pytest

from aethel_lite.errors import ParameterError
from aethel_lite.evaluation.stats import format_estimate as fmt_ci
from aethel_lite.evaluation.stats import wilson
from aethel_lite.studies.swarm import SwarmStudy, swarm_headline, swarm_study


def _source(tp, gold, found, planted_found, planted):
    return {
        "facts": {"tp": tp, "n_gold": gold, "n_found": found},
        "conflicts": {"found": planted_found, "n_planted": planted},
    }


def test_swarm_headline():
    saved = {
        "synthetic": {"scores": {"graph": _source(90, 100, 95, 18, 20), "bm25": _source(40, 100, 60, 5, 20)}},
        "audit": {"n_figures": 120, "n_memos": 6},
    }
    shown, verdict = swarm_headline(saved)
    assert shown.loc[0, "fact recall [95% CI]"] == fmt_ci(0.9, *wilson(90, 100))
    assert "do not overlap" in verdict and "90 of 100" in verdict and "120 figures" in verdict
    saved["synthetic"]["scores"]["bm25"] = _source(88, 100, 95, 18, 20)
    assert "overlap: this run does not separate" in swarm_headline(saved)[1]
    assert SwarmStudy(saved, None, None).headline()[1] == swarm_headline(saved)[1]


def _graph_scores():
    per_fund = [
        {
            "entity": f"fund{i}",
            "name": f"Fund {i}",
            "precision": 1.0,
            "recall": 0.5,
            "n_found": 2,
            "n_gold": 4,
            "n_conflicts": 1,
            "n_passages": 3 + i,
        }
        for i in range(2)
    ]
    return {
        "facts": {
            "precision": 1.0,
            "recall": 0.5,
            "n_gold": 8,
            "n_found": 4,
            "missed": [["fund0", "nav", "2024Q1"]],
        },
        "conflicts": {"recall": None, "precision": None, "n_planted": 0, "missed": [], "unplanted": [1]},
        "per_fund": per_fund,
    }


def test_tables_and_sentences_from_the_record():
    record = {
        "parameters": {"k": 10},
        "synthetic": {
            "scores": {"graph": _graph_scores()},
            "alias_invariance": {
                "n_funds": 2,
                "n_identical": 2,
                "n_names": 7,
                "per_fund": [{"entity": "fund0", "aliases": ["A", "B"], "identical": True}],
            },
            "missing_target": {"memo": "# Memo\nNo evidence found."},
        },
        "financebench": None,
        "financebench_missing": "no real data configured",
        "audit": {"n_figures": 12, "n_memos": 3},
    }
    study = SwarmStudy(record, None, None)
    row = study.table().iloc[0]
    assert (row["evidence"], row["recall"], row["passages read per fund"]) == ("graph", 0.5, 3.5)
    assert list(study.per_fund_table().columns) == [
        "name",
        "gold facts",
        "facts found",
        "precision",
        "recall",
        "conflicts",
        "passages read",
    ]
    assert study.misses() == (
        "Missed gold facts: 1 — first: `fund0` nav 2024Q1\n\n"
        "Planted contradictions not reported: 0; conflicts that were not planted: 1."
    )
    assert study.invariance_note().startswith("**2 of 2 funds** get the identical memo under all 7 names")
    assert study.invariance_table().to_dict("records") == [
        {"fund": "fund0", "names": "A · B", "identical": True}
    ]
    assert study.missing_memo() == "> # Memo\n> No evidence found."
    assert study.financebench_note() == "Not run: no real data configured."
    assert study.financebench_missing == "no real data configured"
    assert study.audit_note().startswith("12 figures in 3 memos checked")
    with pytest.raises(ParameterError, match="no 'financebench' memo"):
        study.memo_view("financebench")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"evidence": ["bm25"]}, "'graph' is required"),
        ({"evidence": ["graph", "tfidf"]}, r"unknown \['tfidf'\]"),
        ({"real_dataset": "musique"}, "real_dataset must be"),
    ],
)
def test_parameters_are_checked_before_any_work(kwargs, message, tmp_path):
    with pytest.raises(ParameterError, match=message):
        swarm_study(100, 0, results_dir=tmp_path, **kwargs)
    assert not any(tmp_path.iterdir())
