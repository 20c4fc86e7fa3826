"""Development / test halves: the packaged manifest, the seeded hash rule, subsets and unknown data sets."""

from __future__ import annotations

import hashlib

import pytest

from aethel_lite.errors import DataError
from aethel_lite.evaluation.splits import (
    MANIFEST,
    load_manifest,
    rule_split,
    split,
    split_name,
    write_manifest,
)


def test_rule_is_the_documented_hash_order():
    qids = [f"q{i}" for i in range(11)]
    got = rule_split(qids, seed=3)
    ranked = sorted(qids, key=lambda q: hashlib.sha256(f"3:{q}".encode()).hexdigest())
    assert set(got["dev"]) == set(ranked[:5]) and set(got["test"]) == set(ranked[5:])
    assert got["dev"] == [q for q in qids if q in got["dev"]]  # input order kept


def test_rule_rejects_repeated_ids():
    with pytest.raises(DataError):
        rule_split(["a", "a"])


def test_packaged_manifest_matches_the_rule_and_halves_every_data_set():
    data = load_manifest()
    assert MANIFEST.exists() and set(data["datasets"]) == {"financebench", "musique", "2wiki", "synthetic"}
    for name, entry in data["datasets"].items():
        qids = entry["dev"] + entry["test"]
        assert len(qids) == entry["n"] == len(set(qids))
        assert len(entry["dev"]) == entry["n"] // 2
        again = rule_split(sorted(qids), data["seed"])
        assert set(again["dev"]) == set(entry["dev"]), name


def test_financebench_manifest_holds_the_129_kept_questions():
    kept = [
        line.strip()
        for line in open(MANIFEST.parent / "financebench_queries.txt")
        if line.strip() and not line.startswith(("#", "-"))
    ]
    entry = load_manifest()["datasets"]["financebench"]
    assert sorted(entry["dev"] + entry["test"]) == sorted(kept) and len(kept) == 129


def test_subset_keeps_each_question_in_its_manifest_half():
    entry = load_manifest()["datasets"]["musique"]
    some = entry["test"][:3] + entry["dev"][:4]
    got = split("musique-open", some)
    assert got == {"dev": entry["dev"][:4], "test": entry["test"][:3]}
    assert split_name("financebench-chunk") == "financebench"


def test_unknown_questions_and_data_sets_fall_back_to_the_rule(tmp_path):
    path = write_manifest({"toy": ["a", "b", "c", "d"]}, tmp_path / "m.json")
    manifest = load_manifest(path)
    got = split("toy", ["a", "b", "c", "d", "x", "y"], manifest=manifest)
    assert sorted(got["dev"] + got["test"]) == ["a", "b", "c", "d", "x", "y"]
    rest = rule_split(["x", "y"])
    assert set(got["dev"]) == set(manifest["datasets"]["toy"]["dev"]) | set(rest["dev"])
    assert split("other", ["p", "q"], manifest=manifest) == rule_split(["p", "q"])
