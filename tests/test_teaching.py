"""The teaching chapters (graph construction, provenance) executed in ``quick`` mode, as ``make book`` runs them.

With ``AETHEL_DATA`` set (CI) they run on the real MuSiQue and 2Wiki pools, else on the synthetic
corpus (and must say so). Every count the provenance chapter prints must be the one in
``results/provenance.json``, and two runs must write identical result files.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from aethel_lite.io import read_json
from conftest import warm_cache

REPO = Path(__file__).resolve().parents[1]


def _run(root: Path, env: dict, name: str, *params: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aethel_lite.notebooks", "--root", str(root), "--no-progress",
                           "--only", name, "-p", "quick", "true", *params], env=env, capture_output=True, text=True, cwd=root)


@pytest.fixture
def root(tmp_path):
    shutil.copytree(REPO / "notebooks", tmp_path / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return tmp_path


def _env(real: bool) -> dict:
    env = {**os.environ, "AETHEL_CACHE": str(warm_cache())}
    if not real:
        env.pop("AETHEL_DATA", None)
    return env


def _outputs(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return json.dumps([c.get("outputs", []) for c in nb.cells], ensure_ascii=False)


def _check_provenance(root: Path, env: dict, *params: str) -> dict:
    first = _run(root, env, "40_provenance", *params)
    assert first.returncode == 0, first.stderr[-4000:]
    saved = read_json(root / "results" / "provenance.json")
    shown = _outputs(root / "book" / "executed" / "40_provenance.ipynb")
    assert "Traceback" not in shown
    for report in saved["reports"].values():
        reach = report["gold_reach"]
        assert sum(reach.values()) == report["n_gold"] > 0
        # every count printed is the result file's
        assert (f"{reach['direct']} gold passages name an exact seed, {reach['bct']} only a BCT seed, "
                f"{reach['two-hop']} are reached through a two-hop path and {reach['unreached']} not at all; "
                f"{report['bct_only']} would get no PageRank") in shown
        i = report["intrusions"]
        assert f"{i['n_passages']} wrong passages in {i['n_questions']} of {report['n_queries']} questions" in shown
    for hit in saved["example"]["hits"]:  # the worked example's shares add up to each reached hit's score
        if hit["score"] > 0:
            assert abs(sum(c["share"] for c in hit["chains"]) - hit["score"]) < 1e-8
    second = _run(root, env, "40_provenance", *params)
    assert second.returncode == 0, second.stderr[-4000:]
    assert read_json(root / "results" / "provenance.json") == saved
    return saved


def test_provenance_chapter_without_data_says_synthetic(root):
    saved = _check_provenance(root, _env(real=False), "-p", "synthetic_size", "300")
    assert all(saved["synthetic_fallback"].values())
    assert "SYNTHETIC corpus" in _outputs(root / "book" / "executed" / "40_provenance.ipynb")


@pytest.mark.realdata
def test_provenance_chapter_on_real_data(root, real_data):
    saved = _check_provenance(root, _env(real=True))
    assert not any(saved["synthetic_fallback"].values())
    assert set(saved["reports"]) == {"musique", "2wiki"}
    assert all(r["n_queries"] == 20 for r in saved["reports"].values())
