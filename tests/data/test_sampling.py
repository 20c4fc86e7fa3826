"""open_corpus (pool-free, duplicates merged) and sample_corpus (gold kept, seeded, nested)."""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import require

from aethel_lite.data import open_corpus, sample_corpus
from aethel_lite.data.schema import Dataset, Passage, Query
from aethel_lite.data.synthetic import make_synthetic
from aethel_lite.errors import ParameterError


@pytest.fixture(scope="module")
def synthetic():
    return make_synthetic(300, seed=5)


def _pooled():
    """Two questions whose pools repeat one paragraph ("Paris") under two pids, plus one exact
    text repeated under another title (not a duplicate)."""
    france, italy, germany = (
        f"{c} is the capital of {n}."
        for c, n in (("Paris", "France"), ("Rome", "Italy"), ("Berlin", "Germany"))
    )
    rows = {
        "a#0": ("Paris", france),
        "a#1": ("Rome", italy),
        "b#0": ("Berlin", germany),
        "b#1": ("Paris", france),
        "b#2": ("Lyon", france),
    }
    passages = [Passage(pid, title, title, text) for pid, (title, text) in rows.items()]
    queries = [
        Query("a", "capital of France?", {"a#0"}, pool=("a#0", "a#1")),
        Query("b", "capital of France or Germany?", {"b#1", "b#2"}, hops=2, pool=("b#0", "b#1", "b#2")),
    ]
    return Dataset("toy", passages, queries, {"setting": "closed-pool"}).validate()


# ------------------------------------------------------------------------------- open_corpus
def test_open_corpus_merges_duplicates_into_the_first_pid_and_remaps_gold():
    ds = _pooled()
    out = open_corpus(ds)
    assert [p.pid for p in out.passages] == ["a#0", "a#1", "b#0", "b#2"]
    assert out.meta["duplicates_merged"] == 1 and out.meta["setting"] == "open-corpus"
    assert all(q.pool is None for q in out.queries)
    assert out.queries[0].gold == {"a#0"}
    assert out.queries[1].gold == {"a#0", "b#2"} and out.queries[1].hops == 2
    # the input is untouched
    assert len(ds.passages) == 5 and ds.queries[1].pool is not None and ds.meta["setting"] == "closed-pool"


def test_open_corpus_without_duplicates_only_drops_pools(synthetic):
    out = open_corpus(synthetic.with_random_pools(10, seed=0))
    assert out.meta["duplicates_merged"] == 0
    assert [p.pid for p in out.passages] == [p.pid for p in synthetic.passages]
    assert [q.gold for q in out.queries] == [q.gold for q in synthetic.queries]


@pytest.mark.realdata
def test_open_corpus_musique_has_unique_texts_and_the_same_queries(real_data):
    from aethel_lite.data.loaders import load_musique

    ds = load_musique(require(real_data / "musique" / "musique_ans_dev_sample200.jsonl"))
    out = open_corpus(ds)
    keys = Counter((p.title, p.text) for p in out.passages)
    assert max(keys.values()) == 1
    assert len(out.passages) + out.meta["duplicates_merged"] == len(ds.passages) == 4000
    assert out.meta["duplicates_merged"] > 0
    text = {p.pid: (p.title, p.text) for p in ds.passages}
    for before, after in zip(ds.queries, out.queries):
        assert before.qid == after.qid and after.pool is None
        assert {text[g] for g in before.gold} == {text[g] for g in after.gold}


# ----------------------------------------------------------------------------- sample_corpus
def _gold(ds):
    return set().union(*(q.gold for q in ds.queries))


def test_sample_keeps_every_gold_passage_and_the_corpus_order(synthetic):
    gold = _gold(synthetic)
    out = sample_corpus(synthetic, len(gold) + 40, seed=1)
    pids = [p.pid for p in out.passages]
    assert len(pids) == len(gold) + 40 and gold <= set(pids)
    order = {p.pid: i for i, p in enumerate(synthetic.passages)}
    assert pids == sorted(pids, key=order.get)
    assert out.meta["sample"] == {"size": len(gold) + 40, "seed": 1, "n_gold": len(gold), "n_corpus": 300}
    assert [q.qid for q in out.queries] == [q.qid for q in synthetic.queries]


def test_sample_is_deterministic_and_seed_dependent(synthetic):
    size = len(_gold(synthetic)) + 50
    a, b = (sample_corpus(synthetic, size, seed=3) for _ in range(2))
    c = sample_corpus(synthetic, size, seed=4)
    assert [p.pid for p in a.passages] == [p.pid for p in b.passages]
    assert [p.pid for p in a.passages] != [p.pid for p in c.passages]


def test_samples_of_growing_size_are_nested(synthetic):
    n_gold = len(_gold(synthetic))
    small, large = (
        set(p.pid for p in sample_corpus(synthetic, n_gold + n, seed=2).passages) for n in (20, 80)
    )
    assert small < large


def test_sample_of_the_whole_corpus_is_the_corpus(synthetic):
    out = sample_corpus(synthetic, len(synthetic.passages), seed=9)
    assert [p.pid for p in out.passages] == [p.pid for p in synthetic.passages]


def test_sample_of_exactly_the_gold(synthetic):
    gold = _gold(synthetic)
    assert {p.pid for p in sample_corpus(synthetic, len(gold)).passages} == gold


@pytest.mark.parametrize("size", [0, -3, 2.5, "100", True, None])
def test_sample_size_must_be_a_positive_int(synthetic, size):
    with pytest.raises(ParameterError, match="size must be a positive integer"):
        sample_corpus(synthetic, size)


@pytest.mark.parametrize("seed", [-1, 1.0, "0"])
def test_sample_seed_must_be_a_non_negative_int(synthetic, seed):
    with pytest.raises(ParameterError, match="seed"):
        sample_corpus(synthetic, 250, seed=seed)


def test_sample_size_out_of_range_names_both_numbers(synthetic):
    with pytest.raises(ParameterError, match=r"size=301 is larger than the corpus .*\(300 passages\)"):
        sample_corpus(synthetic, 301)
    n_gold = len(_gold(synthetic))
    with pytest.raises(
        ParameterError, match=rf"size={n_gold - 1} is smaller than the {n_gold} gold passages"
    ):
        sample_corpus(synthetic, n_gold - 1)


def test_sample_refuses_closed_pools(synthetic):
    with pytest.raises(ParameterError, match="closed pool.*open_corpus"):
        sample_corpus(synthetic.with_random_pools(10), 250)
    out = sample_corpus(open_corpus(_pooled()), 3, seed=0)
    assert {"a#0", "b#2"} <= {p.pid for p in out.passages} and len(out.passages) == 3
