"""The scaling chapter (``30_scaling``) executed in ``quick`` mode on the real data, twice: a broken
cell fails CI, and the two runs must write identical result files (timing aside)."""

from __future__ import annotations

import pytest

from chapters import copy_notebooks, run_quick_twice


def _scaling(results):
    assert set(results["scaling"]["runs"]) == {"financebench", "musique-open", "2wiki-open"}


@pytest.mark.slow
@pytest.mark.realdata
def test_quick_scaling_chapter_on_real_data_is_deterministic(tmp_path, real_data):
    run_quick_twice(copy_notebooks(tmp_path), real_data, "30_scaling", ["scaling"], _scaling)
