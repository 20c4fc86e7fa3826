"""Process-wide memos (aethel_lite.caching.memo): compute once, bounded, and never change a result."""

from __future__ import annotations

import pytest

from aethel_lite.caching.memo import TextMemo, is_shared, shared
from aethel_lite.data.sampling import sample_corpus
from aethel_lite.retrievers.registry import make_retriever
from aethel_lite.studies.open_corpus import load_open


def test_text_memo_computes_each_distinct_text_once_per_settings():
    calls: list[list[str]] = []

    def upper(todo):
        calls.append(list(todo))
        return [t.upper() for t in todo]

    memo = TextMemo("test", max_items=10)
    assert memo.map("a", ["x", "y", "x"], upper) == ["X", "Y", "X"]
    assert memo.map("a", ["y", "z"], upper) == ["Y", "Z"]
    assert memo.map("b", ["x"], upper) == ["X"]  # other settings: another key
    assert calls == [["x", "y"], ["z"], ["x"]]
    assert len(memo) == 4


def test_text_memo_is_bounded_and_still_answers_when_emptied():
    memo = TextMemo("test", max_items=3)
    assert memo.map("s", ["a", "b", "c"], lambda todo: [t * 2 for t in todo]) == ["aa", "bb", "cc"]
    assert memo.map("s", ["a", "d"], lambda todo: [t * 2 for t in todo]) == ["aa", "dd"]  # emptied before "d"
    assert len(memo) <= 3
    assert memo.map("s", list("wxyz"), lambda todo: [t * 2 for t in todo]) == [
        "ww",
        "xx",
        "yy",
        "zz",
    ]  # more than fits
    assert len(memo) <= 3


def test_shared_is_a_context_off_by_default_and_nests():
    assert not is_shared()
    with shared():
        assert is_shared()
        with shared(False):
            assert not is_shared()
        assert is_shared()
    assert not is_shared()
    with pytest.raises(KeyError), shared():  # left on an exception too
        raise KeyError("x")
    assert not is_shared()


def test_text_memo_rejects_a_compute_returning_the_wrong_count():
    with pytest.raises(RuntimeError, match="returned 1 values for 2 texts"):
        TextMemo("test").map("s", ["a", "b"], lambda todo: ["only one"])


@pytest.fixture(scope="module")
def corpus():
    return load_open("synthetic", limit=12, corpus_size=300, seed=0)


@pytest.mark.parametrize("method", ["bm25", "dense-max", "aethel-ner3", "aethel-hybrid"])
def test_memo_changes_no_ranking(corpus, method, run_cache, monkeypatch):
    """Fits on two samples and the whole corpus, with the memos and without: identical runs (the passage store
    is the run's: the memos under test are the process's, not the store)."""
    monkeypatch.setenv("AETHEL_CACHE", str(run_cache))
    samples = [sample_corpus(corpus, 150, 0), sample_corpus(corpus, 150, 1), corpus]
    for sample in samples:
        runs = []
        for memo in (False, True, True):  # the second memo pass is served from the memos
            retriever = make_retriever(method)
            with shared(memo):
                assert is_shared() is memo
                runs.append(retriever.fit(sample.passages).search(sample.queries, k=20))
        assert runs[1] == runs[0] and runs[2] == runs[0]
