"""The "Beyond the paper" chapter (``25_hybrid``) executed in ``quick`` mode on the real data, twice:
a broken cell fails CI, and the two runs must write identical result files (timing aside)."""

from __future__ import annotations

import pytest

from chapters import copy_notebooks, run_quick_twice


def _beyond(results):
    # aethel-hybrid on the four study corpora, closed pools, latency
    beyond = results["beyond"]
    assert set(beyond["datasets"]) == {"financebench", "musique-open", "2wiki-open", "synthetic"}
    assert set(beyond["closed"]) == {"musique", "2wiki"} and beyond["timing"]["latency"]["dataset"] == "financebench"
    assert all(r["tests"] and r["components"] for r in beyond["datasets"].values())
    # questions that need two filings: every one anchored, both halves tested against each method
    comparisons = results["comparisons"]
    assert comparisons["anchored"]["two_or_more"] == comparisons["comparisons"]["all"]["n"] > 0
    assert all(block["tests"] for block in comparisons["comparisons"].values())


@pytest.mark.slow
@pytest.mark.realdata
def test_quick_hybrid_chapter_on_real_data_is_deterministic(tmp_path, real_data):
    run_quick_twice(copy_notebooks(tmp_path), real_data, "25_hybrid", ["beyond", "comparisons"], _beyond)
