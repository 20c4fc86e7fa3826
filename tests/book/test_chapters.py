"""The four real-data chapters (hybrid, scaling, open corpus, multi-hop) executed in ``quick`` mode, as
``make book`` runs them, and the chapters' shared parameter check.

With ``AETHEL_DATA`` set (CI) each chapter runs on the real corpora — a few questions over small
samples — so a broken cell fails CI. The multi-hop chapter runs twice and must write identical result files (timing
aside); the hybrid, open-corpus and scaling chapters run once, their studies' determinism tested where they are
(tests/studies/test_hybrid_study.py, test_comparisons.py, test_open_corpus.py).

The chapters use the same quick samples (``studies.open_corpus.QUICK``: the first 12 questions over
100 passages of FinanceBench, MuSiQue and 2Wiki), so they share one passage store and run one after
another in this file, on one test worker: the hybrid chapter first (its samples cover the others')
encodes and extracts entities from a cold store; the scaling, open-corpus
and multi-hop chapters then find every passage in the store. The store is the run's shared cache
(conftest ``run_cache``), which other tests of the run fill too; MiniLM's vectors on ONNX Runtime are the
same bits whatever the batch and the threads (tests/retrievers/test_encoders.py), so which process
stored a text changes no result.
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


def _beyond(results):
    # aethel-hybrid on the four study corpora, closed pools, latency
    beyond = results["beyond"]
    assert set(beyond["datasets"]) == {"financebench", "musique-open", "2wiki-open", "synthetic"}
    assert (
        set(beyond["closed"]) == {"musique", "2wiki"}
        and beyond["timing"]["latency"]["dataset"] == "financebench"
    )
    assert all(r["tests"] and r["components"] for r in beyond["datasets"].values())
    # questions that need two filings: every one anchored, both halves tested against each method
    comparisons = results["comparisons"]
    assert comparisons["anchored"]["two_or_more"] == comparisons["comparisons"]["all"]["n"] > 0
    assert all(block["tests"] for block in comparisons["comparisons"].values())


@pytest.mark.slow
@pytest.mark.realdata
def test_quick_hybrid_chapter_on_real_data(root, real_data, run_cache):
    # One run: a second one costs CI about two minutes; the chapter's studies are shown deterministic on
    # their own (tests/studies/test_hybrid_study.py, test_comparisons.py) and the chapters that read the
    # same stores back (scaling, open corpus, multi-hop) run twice below.
    run_quick_twice(
        root, real_data, "25_hybrid", ["beyond", "comparisons"], _beyond, cache=run_cache, twice=False
    )


def _scaling(results):
    assert set(results["scaling"]["runs"]) == {"financebench", "musique-open", "2wiki-open"}


@pytest.mark.slow
@pytest.mark.realdata
def test_quick_scaling_chapter_on_real_data(root, real_data, run_cache):
    # one run (CI time); the scaling run's determinism: tests/studies/test_open_corpus.py
    run_quick_twice(root, real_data, "30_scaling", ["scaling"], _scaling, cache=run_cache, twice=False)


def _open_corpus(results):
    assert not results["open_corpus"]["synthetic_only"]
    assert {"financebench", "financebench-chunk", "musique-open", "2wiki-open"} <= set(
        results["open_corpus"]["datasets"]
    )


@pytest.mark.slow
@pytest.mark.realdata
def test_quick_open_corpus_chapter_on_real_data(root, real_data, run_cache):
    # one run (CI time); evaluate_open's determinism: tests/studies/test_open_corpus.py
    run_quick_twice(
        root, real_data, "20_open_corpus", ["open_corpus"], _open_corpus, cache=run_cache, twice=False
    )


def _multihop(results):
    r = results["multihop"]
    assert set(r["datasets"]) == {"2wiki-open", "musique-open"} and not r["synthetic_only"]
    for block in r["datasets"].values():  # every method scored on both halves; the new one tested on each
        assert set(block["means"]) == set(r["methods"]) and set(block["halves"]) == {"dev", "test"}
        assert {(t["half"], t["b"]) for t in block["tests"] if t["metric"] == "Recall@5"} >= {
            (h, b) for h in ("dev", "test", "all") for b in ("bm25", "dense", "aethel-hybrid")
        }


@pytest.mark.slow
@pytest.mark.realdata
def test_quick_multihop_chapter_on_real_data_is_deterministic(root, real_data, run_cache):
    run_quick_twice(root, real_data, "27_multihop", ["multihop"], _multihop, cache=run_cache)
