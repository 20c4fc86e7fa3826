"""Acceptance on real data: MuSiQue-200 closed pool with real spaCy NER and real MiniLM.

The paper reports graph HR@5 88.5% on MuSiQue's closed pool and a drop of HR@1 with BCT
(63.0% → 57.0%). Here: the graph retriever with BCT must reach HR@5 ≥ 0.85 and put *all* the
supporting paragraphs in the top 5 more often than BM25 and dense retrieval do (AllSupport@5);
BCT's HR@1 change against plain PPR is printed (the book's closed-pool chapter tabulates it).
"""

from __future__ import annotations

import pytest
from conftest import require

from aethel_lite.data.loaders import load_musique
from aethel_lite.evaluation.runner import run_methods, score_runs


@pytest.fixture(scope="module")
def scores(real_data, run_cache):
    # The run's shared cache: the hybrid chapter's test and the teaching chapters tag and encode some of the
    # same paragraphs. The setting is undone when the module ends.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AETHEL_CACHE", str(run_cache))
        ds = load_musique(require(real_data / "musique" / "musique_ans_dev_sample200.jsonl"))
        outcomes = run_methods(
            ds,
            ["bm25", "dense", "aethel-ner3", "aethel-bct"],
            setting="closed",
            progress=False,
            log=None,
            graph={"n_process": 2},
        )
    return score_runs(outcomes, ds.queries, k=5)


def test_graph_bct_hr5_at_least_085(scores, capsys):
    plain, bct = scores["aethel-ner3"]["HR@1"], scores["aethel-bct"]["HR@1"]
    with capsys.disabled():  # BCT's HR@1 change, reported in the CI log (the book tabulates it too)
        print(
            f"\nMuSiQue closed pool: HR@5 BCT {scores['aethel-bct']['HR@5']:.3f}; HR@1 plain PPR {plain:.3f} -> "
            f"BCT {bct:.3f} ({bct - plain:+.3f}); paper: 0.630 -> 0.570"
        )
    assert scores["aethel-bct"]["HR@5"] >= 0.85


def test_graph_bct_all_support_beats_bm25_and_dense(scores):
    bct = scores["aethel-bct"]["AllSupport@5"]
    assert bct > scores["bm25"]["AllSupport@5"]
    assert bct > scores["dense"]["AllSupport@5"]
