"""The `aethel` command line: flags and JSON keys are a public interface."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from aethel_lite.cli import main
from conftest import require

EVAL_KEYS = {"dataset", "setting", "n_queries", "methods", "config", "versions", "seconds"}
METHOD_KEYS = {"HR@1", "HR@5", "AllSupport@5", "Recall@5", "MRR", "per_query"}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cache"))


def test_eval_synthetic_writes_the_documented_keys(tmp_path):
    out = tmp_path / "r.json"
    rc = main(["eval", "--format", "synthetic", "--size", "150", "--methods", "bm25,aethel-reg,rrf",
               "--limit", "8", "--out", str(out), "--quiet"])
    assert rc == 0
    result = json.loads(out.read_text())
    assert EVAL_KEYS <= set(result)
    assert result["setting"] == "open" and result["n_queries"] == 8
    assert set(result["methods"]) == {"bm25", "aethel-reg", "rrf"}
    for name, entry in result["methods"].items():
        assert METHOD_KEYS <= set(entry), name
        assert len(entry["per_query"]) == 8
        assert all(len(pids) <= 10 for pids in entry["per_query"].values())
        for m in ("HR@1", "HR@5", "AllSupport@5", "Recall@5", "MRR"):
            assert 0.0 <= entry[m] <= 1.0
        assert entry["HR@1"] <= entry["HR@5"] and entry["AllSupport@5"] <= entry["HR@5"]


def test_eval_is_deterministic_apart_from_timing(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for out in (a, b):
        assert main(["eval", "--format", "synthetic", "--size", "120", "--methods", "bm25,aethel-reg",
                     "--limit", "5", "--out", str(out), "--quiet"]) == 0
    ra, rb = (json.loads(p.read_text()) for p in (a, b))
    for r in (ra, rb):
        r.pop("seconds"), r.pop("timing")
    assert ra == rb


def test_eval_musique_closed_pool(real_data, tmp_path):
    path = require(real_data / "musique" / "musique_ans_dev_sample200.jsonl")
    out = tmp_path / "m.json"
    assert main(["eval", "--data", str(path), "--format", "musique", "--methods", "bm25,aethel-reg",
                 "--limit", "10", "--out", str(out), "--quiet"]) == 0
    result = json.loads(out.read_text())
    assert result["setting"] == "closed" and result["n_queries"] == 10
    # closed pool: every returned pid belongs to the question's own 20 paragraphs
    for pids in result["methods"]["aethel-reg"]["per_query"].values():
        assert len(pids) == 10


@pytest.mark.parametrize("argv, message", [
    (["eval", "--format", "synthetic", "--methods", "bm25,nope", "--out", "x.json"], "unknown method 'nope'"),
    (["eval", "--format", "synthetic", "--k", "0", "--out", "x.json"], "--k"),
    (["eval", "--format", "synthetic", "--setting", "closed", "--size", "100", "--out", "x.json"], "no candidate pool"),
])
def test_eval_bad_arguments_exit_2_with_a_clear_message(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_index_and_search_own_files(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "letter.txt").write_text(
        "NorthRiver Capital Partners IV reported a net IRR of 14.2% as of September 30, 2024.\n\n"
        "The Fund's unfunded commitment was $41.5 million.\n")
    (docs / "press.md").write_text("# Press release\n\nNRCP IV completed its acquisition of Helios Fleet Solutions.\n\n"
                                   "Orion Labs hired a new chief executive.\n")
    index = tmp_path / "idx"
    assert main(["index", str(docs), "--out", str(index), "--methods", "bm25,aethel-reg", "--quiet"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["n_passages"] == 5 and info["n_documents"] == 2
    assert main(["search", str(index), "Who acquired Helios Fleet Solutions?", "-k", "2", "--method", "aethel-reg", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert "Helios" in hits[0]["text"]
    assert hits[0]["provenance"] and hits[0]["provenance"][0]["seed"] == "helios fleet solutions"
    assert {"rank", "pid", "doc_id", "page", "score", "text", "provenance"} <= set(hits[0])
    assert main(["search", str(index), "Who acquired Helios Fleet Solutions?", "--method", "aethel-reg"]) == 0
    assert "via 'helios fleet solutions'" in capsys.readouterr().out
    assert any((index / "cache").rglob("*.json.gz")), "the index keeps its own entity cache"
    assert os.environ["AETHEL_CACHE"] == str(tmp_path / "cache"), "the caller's cache setting is restored"


def test_search_missing_index_is_a_clear_error(tmp_path, capsys):
    assert main(["search", str(tmp_path / "none"), "question"]) == 2
    assert "not an aethel index" in capsys.readouterr().err


def test_console_script_is_installed():
    out = subprocess.run([sys.executable, "-m", "aethel_lite.cli", "--help"], capture_output=True, text=True, check=True)
    for command in ("eval", "index", "search", "data"):
        assert command in out.stdout
