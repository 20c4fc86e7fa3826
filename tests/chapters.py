"""Run book chapters in a scratch copy of the notebooks, as ``make book`` runs them (shared by the chapter tests)."""

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


def copy_notebooks(tmp_path: Path) -> Path:
    """A scratch book root holding a copy of the project's notebooks."""
    shutil.copytree(
        REPO / "notebooks", tmp_path / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints")
    )
    return tmp_path


def run_chapters(root: Path, env: dict, chapters, *params: str) -> subprocess.CompletedProcess:
    """The notebook runner on ``chapters`` (names without ``.ipynb``) in ``root``, with ``-p`` parameters."""
    only = [arg for name in chapters for arg in ("--only", name)]
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "aethel_lite.book.notebooks",
            "--root",
            str(root),
            "--no-progress",
            *only,
            *params,
        ],
        env=env,
        capture_output=True,
        text=True,
        cwd=root,
    )


def run_quick_twice(
    root: Path,
    real_data: Path,
    chapter: str,
    result_names,
    check,
    cache: Path | None = None,
    twice: bool = True,
) -> None:
    """Run ``chapter`` in quick mode on the real data twice (the second time with warm stores), with
    ``$AETHEL_CACHE`` at ``cache`` (default: ``root / "cache"``).

    ``check`` receives the first run's result files (name -> dict) and asserts what the chapter
    must hold. The executed notebook must hold no traceback and no local path; the second run must
    write the same result files, timing fields aside (``twice=False``: one run, for a chapter whose
    parts are shown deterministic by their own tests).
    """
    for sub in ("financebench", "musique", "2wikimultihopqa"):
        if not (real_data / sub).is_dir():
            pytest.fail(f"AETHEL_DATA is set but {real_data / sub} is missing")
    env = {**os.environ, "AETHEL_DATA": str(real_data), "AETHEL_CACHE": str(cache or root / "cache")}
    params = ("-p", "quick", "true", "-p", "n_resamples", "300")
    first = run_chapters(root, env, [chapter], *params)
    assert first.returncode == 0, first.stderr[-4000:]
    results = {n: read_json(root / "results" / f"{n}.json") for n in result_names}
    check(results)
    page = (root / "book" / "executed" / f"{chapter}.ipynb").read_text()
    assert "Traceback" not in json.dumps(json.loads(page)), chapter
    # the published page holds no local path (the data folder, the checkout)
    assert str(real_data) not in page and str(root) not in page and str(REPO) not in page, chapter
    if not twice:
        return
    second = run_chapters(root, env, [chapter], *params)  # warm stores now
    assert second.returncode == 0, second.stderr[-4000:]
    for n, before in results.items():
        assert without_timing(read_json(root / "results" / f"{n}.json")) == without_timing(before), n


def check_provenance_counts(saved: dict, shown: str) -> None:
    """The provenance chapter's printed counts are its result file's (``saved``: results/provenance.json,
    ``shown``: the executed notebook's outputs as JSON text), and each reached hit's chain shares add up to
    its score."""
    for report in saved["reports"].values():
        reach = report["gold_reach"]
        assert sum(reach.values()) == report["n_gold"] > 0
        assert (
            f"{reach['direct']} gold passages name an exact seed, {reach['bct']} only a BCT seed, "
            f"{reach['two-hop']} are reached through a two-hop path and {reach['unreached']} not at all; "
            f"{report['bct_only']} would get no PageRank"
        ) in shown
        i = report["intrusions"]
        assert (
            f"{i['n_passages']} wrong passages in {i['n_questions']} of {report['n_queries']} questions"
            in shown
        )
    for hit in saved["example"]["hits"]:  # the worked example's shares add up to each reached hit's score
        if hit["score"] > 0:
            assert abs(sum(c["share"] for c in hit["chains"]) - hit["score"]) < 1e-8
