"""Schema: Passage/Query/Dataset JSONL round trip, subset, validate errors."""

from __future__ import annotations

import json

import pytest
from conftest import require
from hypothesis import given, settings
from hypothesis import strategies as st

from aethel_lite.data.schema import Dataset, Passage, Query
from aethel_lite.errors import DataError


def _toy() -> Dataset:
    passages = [
        Passage("d1#0", "d1", "Title ü", "NorthRiver IV LP — €5m", {"page": 0, "tags": ["a", "b"]}),
        Passage("d1#1", "d1", "", "second", {}),
        Passage("d2#0", "d2", "Other", "third", {"nested": {"x": 1.5}}),
    ]
    queries = [
        Query(
            "q1", "Who?", frozenset({"d1#0"}), hops=1, pool=("d1#0", "d1#1"), meta={"answer": "NorthRiver"}
        ),
        Query("q2", "What?", {"d2#0", "d1#1"}, hops=2, pool=None),
        Query("q3", "Where?", frozenset({"d2#0"}), hops=1, pool=["d2#0", "d1#1"]),
    ]
    return Dataset("toy", passages, queries, {"source": "test", "skipped": {"x": 1}})


def test_jsonl_round_trip(tmp_path):
    ds = _toy()
    ds.to_jsonl(tmp_path / "out")
    back = Dataset.from_jsonl(tmp_path / "out")
    assert back.name == "toy" and back.meta == ds.meta
    assert back.passages == ds.passages
    assert back.queries == ds.queries
    assert back.queries[2].pool == ("d2#0", "d1#1") and back.queries[1].pool is None
    assert isinstance(back.queries[1].gold, frozenset)
    # deterministic bytes: writing the read-back copy gives identical files
    back.to_jsonl(tmp_path / "again")
    for name in ("passages.jsonl", "queries.jsonl", "dataset.json"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "again" / name).read_bytes()


@settings(max_examples=30, deadline=None)
@given(
    texts=st.lists(st.text(min_size=0, max_size=40), min_size=1, max_size=6),
    page=st.integers(-5, 10_000),
)
def test_round_trip_any_text(tmp_path_factory, texts, page):
    passages = [Passage(f"p{i}", "doc", t[:5], t, {"page": page}) for i, t in enumerate(texts)]
    ds = Dataset("h", passages, [Query("q", texts[0], {"p0"}, pool=[p.pid for p in passages])])
    folder = ds.to_jsonl(tmp_path_factory.mktemp("rt"))
    back = Dataset.from_jsonl(folder)
    assert back.passages == passages and back.queries == ds.queries


def test_from_jsonl_without_queries_or_info(tmp_path):
    (tmp_path / "passages.jsonl").write_text(json.dumps({"pid": "a", "text": "t"}) + "\n")
    ds = Dataset.from_jsonl(tmp_path)
    assert ds.name == tmp_path.name and ds.queries == []
    assert ds.passages[0] == Passage("a", "a", "", "t", {})


def test_from_jsonl_errors_name_file_and_line(tmp_path):
    (tmp_path / "passages.jsonl").write_text(json.dumps({"pid": "a", "text": "t"}) + "\n" + "{broken\n")
    with pytest.raises(DataError, match=r"passages\.jsonl:2: malformed JSON"):
        Dataset.from_jsonl(tmp_path)
    (tmp_path / "passages.jsonl").write_text(
        json.dumps({"pid": "a", "text": "t"}) + "\n" + json.dumps({"pid": "b"}) + "\n"
    )
    with pytest.raises(DataError, match=r"passages\.jsonl: record 2: missing or bad field"):
        Dataset.from_jsonl(tmp_path)


def test_subset():
    ds = _toy()
    sub = ds.subset(["q3", "q1"])
    assert [q.qid for q in sub.queries] == ["q1", "q3"]  # data-set order, not argument order
    assert sub.passages == ds.passages and sub.meta == ds.meta and sub.meta is not ds.meta
    assert [q.qid for q in ds.subset(limit=2).queries] == ["q1", "q2"]
    assert ds.subset(limit=-1).queries == []
    small = ds.subset(["q1"], keep_all_passages=False)
    assert [p.pid for p in small.passages] == ["d1#0", "d1#1"]
    small.validate()
    q2 = ds.subset(["q2"], keep_all_passages=False)
    assert [p.pid for p in q2.passages] == ["d1#1", "d2#0"]  # corpus order kept
    assert len(ds.queries) == 3  # the original is untouched


def test_by_pid_and_texts():
    ds = _toy()
    assert ds.by_pid["d2#0"].text == "third"
    ds.passages.append(Passage("new", "n", "", "x"))
    assert "new" in ds.by_pid  # rebuilt after the list grows
    assert ds.passage_texts()[:2] == ["Title ü\nNorthRiver IV LP — €5m", "second"]


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda ds: ds.passages.clear(), "empty corpus"),
        (lambda ds: ds.passages.append(Passage("d1#0", "d1", "", "dup")), "duplicate passage pid 'd1#0'"),
        (
            lambda ds: ds.queries.append(Query("q9", "?", {"ghost"})),
            "query 'q9' has gold pid 'ghost' not in the corpus",
        ),
        (
            lambda ds: ds.queries.append(Query("q9", "?", {"d1#0"}, pool=("d1#0", "ghost"))),
            "query 'q9' has pool pid 'ghost'",
        ),
        (
            lambda ds: ds.queries.append(Query("q9", "?", {"d2#0"}, pool=("d1#0",))),
            "query 'q9' has gold pid 'd2#0' outside its pool",
        ),
    ],
)
def test_validate_errors(mutate, match):
    ds = _toy()
    assert ds.validate() is ds
    mutate(ds)
    with pytest.raises(DataError, match=match):
        ds.validate()


def test_real_dataset_round_trip(real_data, tmp_path):
    from aethel_lite.data.loaders import load_2wiki

    require(real_data / "2wikimultihopqa" / "2wiki_dev_sample200.jsonl")
    ds = load_2wiki()
    back = Dataset.from_jsonl(ds.to_jsonl(tmp_path / "2wiki"))
    assert back.passages == ds.passages and back.queries == ds.queries and back.meta == ds.meta
    back.validate()
