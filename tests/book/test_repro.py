"""The reproducibility chapter's library (aethel_lite.book.repro): one row per paper number, verdicts, provenance."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from aethel_lite.book import repro
from aethel_lite.io import write_json
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


def test_provenance_rows_and_commands():
    results = {
        "quickstart": {"parameters": {"n_passages": 300, "seed": 0}, "versions": {"numpy": "2.0"}},
        "closed_pool": None,
        "open_corpus": {"parameters": {"quick": True}, "versions": {"numpy": "2.1"}},
        "beyond": None,
    }
    execution = {
        "00_quickstart": {
            "seconds": 3.5,
            "cells": 12,
            "code_cells": 7,
            "built": "2026-01-01 00:00 UTC",
            "parameters": {"n_passages": 300},
        },
        "10_closed_pool": {
            "seconds": 9.0,
            "cells": 20,
            "code_cells": 9,
            "built": "2026-01-01 00:00 UTC",
            "parameters": {},
            "environment": {"AETHEL_DENSE_PRECISION": "bfloat16"},
        },
    }
    rows = {r["chapter"]: r for r in repro.provenance_rows(results, execution)}
    assert rows["00_quickstart"]["seeds"] == "seed=0" and rows["00_quickstart"]["run time (s)"] == 3.5
    assert (
        rows["00_quickstart"]["re-made by"]
        == "python -m aethel_lite.book.notebooks --only 00_quickstart -p n_passages '300'"
    )
    assert rows["00_quickstart"]["papermill"].endswith("""-y '{"n_passages": 300}'""")
    assert (
        rows["10_closed_pool"]["re-made by"]
        == "AETHEL_DENSE_PRECISION=bfloat16 python -m aethel_lite.book.notebooks --only 10_closed_pool"
    )
    assert (
        "missing: not run" in rows["10_closed_pool"]["result files"]
        and rows["10_closed_pool"]["parameters"] == "(no result file)"
    )
    assert rows["20_open_corpus"]["result files"] == "results/open_corpus.json"
    assert rows["25_hybrid"]["result files"] == (
        "results/beyond.json (missing: not run); "
        "results/own_files.json (missing: not run); "
        "results/comparisons.json (missing: not run)"
    )
    assert json.loads(rows["20_open_corpus"]["parameters"]) == {"quick": True}
    # results/beyond.json keeps no parameters of its own: the row shows those the runner gave 25_hybrid
    hybrid_run = {
        "25_hybrid": {
            "seconds": 1.0,
            "cells": 30,
            "code_cells": 15,
            "built": "",
            "parameters": {"quick": True},
        }
    }
    (row,) = repro.provenance_rows({**results, "beyond": {"datasets": {}}}, hybrid_run, ["25_hybrid"])
    assert json.loads(row["parameters"]) == {"quick": True}
    assert row["result files"] == (
        "results/beyond.json; results/own_files.json (missing: not run); "
        "results/comparisons.json (missing: not run)"
    )
    assert repro.version_table(results) == {"numpy": {"quickstart": "2.0", "open_corpus": "2.1"}}
    stats = {
        r["notebook"]: r for r in repro.execution_rows(execution, ["00_quickstart", "90_reproducibility"])
    }
    assert stats["00_quickstart"]["cells"] == 12 and stats["90_reproducibility"]["note"].startswith(
        "no record"
    )


def test_rerun_commands_survive_the_shell_whatever_a_parameter_holds():
    """A parameter value with a single quote, spaces or $ must reach the notebook unchanged:
    the shell's own word splitting (shlex.split, POSIX rules) is the oracle."""
    import shlex

    params = {"target": "O'Brien & Sons $HOME", "sizes": [100, "full"], "quick": True}
    cmd = repro.rerun_command("30_scaling", params, {"AETHEL_DENSE_PRECISION": "bfloat16"})
    words = shlex.split(cmd["runner"])
    assert words[0] == "AETHEL_DENSE_PRECISION=bfloat16"
    got = {words[i + 1]: json.loads(words[i + 2]) for i, w in enumerate(words) if w == "-p"}
    assert got == params
    words = shlex.split(cmd["papermill"])
    assert json.loads(words[words.index("-y") + 1]) == params


def test_data_checksums_against_the_manifest(tmp_path, monkeypatch):

    root = tmp_path / "data-root"
    (root / "musique").mkdir(parents=True)
    (root / "musique" / "good.jsonl").write_bytes(b"good")
    (root / "musique" / "bad.jsonl").write_bytes(b"tampered")
    entries = [
        {"path": "musique/good.jsonl", "sha256": hashlib.sha256(b"good").hexdigest(), "size": 4},
        {"path": "musique/bad.jsonl", "sha256": hashlib.sha256(b"bad").hexdigest(), "size": 3},
        {"path": "musique/gone.jsonl", "sha256": "0" * 64, "size": 1},
        {"path": "financebench/x.jsonl", "sha256": "1" * 64, "size": 1},
    ]
    monkeypatch.setattr(repro, "load_manifest", lambda manifest=None: entries)
    monkeypatch.setenv("AETHEL_DATA", str(root))
    got = {r["file"]: r["this build"] for r in repro.data_checksums(["musique"])}
    assert got == {
        "musique/good.jsonl": "ok",
        "musique/bad.jsonl": "mismatch",
        "musique/gone.jsonl": "missing",
    }
    assert not any(str(root) in json.dumps(r) for r in repro.data_checksums())  # no local path
    monkeypatch.delenv("AETHEL_DATA")
    monkeypatch.chdir(tmp_path)
    assert {r["this build"] for r in repro.data_checksums()} == {"no data configured"}


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
