"""The open-corpus, hybrid and scaling chapters executed in ``quick`` mode, as ``make book`` runs them.

With ``AETHEL_DATA`` set (CI) they run on the real corpora — a few questions over small samples —
so a broken cell fails CI; two runs must write identical result files (timing aside).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aethel_lite.evaluation.runner import without_timing
from aethel_lite.io import read_json

REPO = Path(__file__).resolve().parents[1]
CHAPTERS = ("20_open_corpus", "25_hybrid", "30_scaling")


def _run(root: Path, env: dict, *params: str) -> subprocess.CompletedProcess:
    only = [arg for name in CHAPTERS for arg in ("--only", name)]
    return subprocess.run([sys.executable, "-m", "aethel_lite.book.notebooks", "--root", str(root), "--no-progress", *only, *params],
                          env=env, capture_output=True, text=True, cwd=root)


@pytest.fixture
def root(tmp_path, monkeypatch):
    shutil.copytree(REPO / "notebooks", tmp_path / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return tmp_path


def test_unknown_data_set_stops_at_the_parameters(root):
    env = {**os.environ, "AETHEL_CACHE": str(root / "cache")}
    run = _run(root, env, "-p", "datasets", '["financebench", "nope"]')
    assert run.returncode == 1
    assert "datasets: unknown ['nope']" in run.stderr
    for name in CHAPTERS:
        assert not (root / "book" / "executed" / f"{name}.ipynb").exists()


@pytest.mark.slow
@pytest.mark.realdata
def test_quick_chapters_on_real_data_are_deterministic(root, real_data):
    for sub in ("financebench", "musique", "2wikimultihopqa"):
        if not (real_data / sub).is_dir():
            pytest.fail(f"AETHEL_DATA is set but {real_data / sub} is missing")
    env = {**os.environ, "AETHEL_DATA": str(real_data), "AETHEL_CACHE": str(root / "cache")}
    first = _run(root, env, "-p", "quick", "true", "-p", "n_resamples", "300")
    assert first.returncode == 0, first.stderr[-4000:]
    results = {n: read_json(root / "results" / f"{n}.json") for n in ("open_corpus", "scaling", "beyond", "comparisons")}
    assert not results["open_corpus"]["synthetic_only"]
    assert {"financebench", "financebench-chunk", "musique-open", "2wiki-open"} <= set(results["open_corpus"]["datasets"])
    assert set(results["scaling"]["runs"]) == {"financebench", "musique-open", "2wiki-open"}
    # "Beyond the paper" (25_hybrid): aethel-hybrid on the four study corpora, closed pools, latency
    beyond = results["beyond"]
    assert set(beyond["datasets"]) == {"financebench", "musique-open", "2wiki-open", "synthetic"}
    assert set(beyond["closed"]) == {"musique", "2wiki"} and beyond["timing"]["latency"]["dataset"] == "financebench"
    assert all(r["tests"] and r["components"] for r in beyond["datasets"].values())
    # questions that need two filings: every one anchored, both halves tested against each method
    assert results["comparisons"]["anchored"]["two_or_more"] == results["comparisons"]["comparisons"]["all"]["n"] > 0
    assert all(block["tests"] for block in results["comparisons"]["comparisons"].values())
    for name in CHAPTERS:
        executed = json.dumps(json.loads((root / "book" / "executed" / f"{name}.ipynb").read_text()))
        assert "Traceback" not in executed, name
    for name in CHAPTERS:  # the published pages hold no local path (the data folder, the checkout)
        page = (root / "book" / "executed" / f"{name}.ipynb").read_text()
        assert str(real_data) not in page and str(root) not in page and str(REPO) not in page, name
    second = _run(root, env, "-p", "quick", "true", "-p", "n_resamples", "300")  # warm caches now
    assert second.returncode == 0, second.stderr[-4000:]
    for n, before in results.items():
        assert without_timing(read_json(root / "results" / f"{n}.json")) == without_timing(before), n
