"""The closed-pool study (aethel_lite.studies.closed_pool) and the record a study writes (.record)."""

from __future__ import annotations

import json

import pytest

from aethel_lite.io import read_json
from aethel_lite.studies.closed_pool import ClosedPoolStudy, closed_pool_headline
from aethel_lite.studies.paper import paper_rows
from aethel_lite.studies.record import as_record


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
    frame, verdict = closed_pool_headline(_closed([1, 1, 1, 0], [1, 0, 1, 0]), n_resamples=200)
    assert list(frame.columns) == ["data set", "method", "HR@5 [95% CI]", "AllSupport@5 [95% CI]"]
    row = frame[frame["method"] == "bm25"].iloc[0]
    assert row["HR@5 [95% CI]"].startswith("0.500 [") and row["AllSupport@5 [95% CI]"] == "0.500 [0.50, 0.50]"
    assert "`aethel-bct` ranks a supporting paragraph in the top 5 most often (HR@5 0.750)" in verdict
    assert "+0.250 [+0.10, +0.40], the interval excludes zero" in verdict and "4 questions" in verdict
    saved = _closed([1, 0], [1, 0])
    saved["synthetic_fallback"]["musique"] = True
    frame, verdict = closed_pool_headline(saved, n_resamples=200)
    assert list(frame["data set"]) == ["musique (synthetic)", ""]  # named once per group
    assert (
        "`aethel-bct` and `bm25` share the highest HR@5 (0.500)" in verdict
        and "not the paper's data" in verdict
    )


def test_the_study_shows_what_it_saves(tmp_path):
    saved = _closed([1, 1, 1, 0], [1, 0, 1, 0])
    saved["parameters"] = {"methods": ["bm25", "aethel-bct"], "limit": None, "n_resamples": 200}
    saved["bct_ablation"] = {
        "musique": {m: {"HR@1": 0.5, "HR@5": 0.75, "AllSupport@5": 0.5} for m in ("both", "none")}
    }
    saved["paired_tests"]["musique"][0].update(
        n=4, mean_a=0.75, mean_b=0.5, p_bootstrap=0.3, p_randomization=0.4
    )
    study = ClosedPoolStudy(as_record(saved))
    study.save(tmp_path)
    assert read_json(tmp_path / "closed_pool.json") == study.result
    frame, verdict = study.headline()
    from_file = closed_pool_headline(read_json(tmp_path / "closed_pool.json"), n_resamples=200)
    assert frame.equals(from_file[0]) and verdict == from_file[1]
    assert list(study.metrics_tables()) == ["**musique** (4 questions)"]
    tests = study.tests_table()
    assert list(tests.index.names) == ["data set", None] and tests["95% CI"].tolist() == ["[+0.100, +0.400]"]
    assert len(study.paper_comparison()) == len(paper_rows("closed_pool"))
    reading = study.reading()
    assert (
        "`aethel-bct` 0.500" in reading and "BCT (`aethel-bct` against" not in reading
    )  # no ner3: no ablation
    assert len(study.ablation_figures()) == 1


def test_as_record_is_what_the_file_gives_back(tmp_path):
    result = {"b": (1, 2.5), "a": {3: {"z": None, "y": [float("inf")]}}, "c": {True: 0.1 + 0.2}}
    record = as_record(result)
    assert list(record) == ["a", "b", "c"] and record["a"] == {"3": {"y": [float("inf")], "z": None}}
    assert record == json.loads(json.dumps(result, sort_keys=True))
    assert list(record) == list(json.loads(json.dumps(result, sort_keys=True)))
    assert record["c"]["true"] == pytest.approx(0.3)
