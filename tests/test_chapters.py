"""The open-corpus chapter executed in ``quick`` mode, as ``make book`` runs it, and the chapters'
shared parameter check.

With ``AETHEL_DATA`` set (CI) the chapter runs on the real corpora — a few questions over small
samples — so a broken cell fails CI; two runs must write identical result files (timing aside).
The hybrid and scaling chapters have their own files (``test_chapters_hybrid.py``,
``test_chapters_scaling.py``) so that the three run on different test workers.
"""

from __future__ import annotations

import os

import pytest

from chapters import copy_notebooks, run_chapters, run_quick_twice

CHAPTERS = ("20_open_corpus", "25_hybrid", "30_scaling")


@pytest.fixture
def root(tmp_path):
    return copy_notebooks(tmp_path)


def test_unknown_data_set_stops_at_the_parameters(root):
    env = {**os.environ, "AETHEL_CACHE": str(root / "cache")}
    run = run_chapters(root, env, CHAPTERS, "-p", "datasets", '["financebench", "nope"]')
    assert run.returncode == 1
    assert "datasets: unknown ['nope']" in run.stderr
    for name in CHAPTERS:
        assert not (root / "book" / "executed" / f"{name}.ipynb").exists()


def _open_corpus(results):
    assert not results["open_corpus"]["synthetic_only"]
    assert {"financebench", "financebench-chunk", "musique-open", "2wiki-open"} <= set(results["open_corpus"]["datasets"])


@pytest.mark.slow
@pytest.mark.realdata
def test_quick_open_corpus_chapter_on_real_data_is_deterministic(root, real_data):
    run_quick_twice(root, real_data, "20_open_corpus", ["open_corpus"], _open_corpus)
