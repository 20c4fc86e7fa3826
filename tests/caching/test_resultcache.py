"""The on-disk result cache (aethel_lite.caching.resultcache): hits equal computations, and every input is in the key."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import pytest

from aethel_lite.caching import resultcache as RC
from aethel_lite.studies.open_corpus import error_analysis, evaluate_open, load_open
from aethel_lite.studies.scaling import scaling_run


@pytest.fixture()
def on(tmp_path, monkeypatch):
    """The result cache switched on, in a fresh folder."""
    monkeypatch.setenv("AETHEL_RESULT_CACHE", "1")
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path))
    return tmp_path


def counter():
    calls = []

    def compute():
        calls.append(1)
        return {"a": (1, 2), "b": {3: 0.1 + 0.2}, "c": {"x", "y"} and sorted({"x", "y"})}

    return calls, compute


def test_a_hit_equals_the_computation_and_computes_nothing(on):
    calls, compute = counter()
    first = RC.cached("unit", {"p": 1}, compute)
    second = RC.cached("unit", {"p": 1}, compute)
    assert (
        first == second == {"a": [1, 2], "b": {"3": 0.30000000000000004}, "c": ["x", "y"]}
    )  # the JSON round trip
    assert len(calls) == 1
    assert len(list((on / "results").glob("unit-*.json"))) == 1


def test_parameters_code_versions_and_environment_are_in_the_key(on, monkeypatch):
    calls, compute = counter()
    RC.cached("unit", {"p": 1}, compute)
    RC.cached("unit", {"p": 2}, compute)
    RC.cached("other", {"p": 1}, compute)
    monkeypatch.setattr(RC, "code_digest", lambda: "edited library")
    RC.cached("unit", {"p": 1}, compute)
    monkeypatch.setenv("AETHEL_DENSE_PRECISION", "bfloat16")
    RC.cached("unit", {"p": 1}, compute)
    monkeypatch.setattr(RC, "versions", lambda: {"torch": "another"})
    RC.cached("unit", {"p": 1}, compute)
    assert len(calls) == 6


def test_code_digest_covers_every_library_file_in_every_layer(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "core").mkdir(parents=True)
    (pkg / "core" / "a.py").write_text("x = 1\n")
    before = RC.tree_digest(pkg)
    (pkg / "core" / "a.py").write_text("x = 2\n")
    edited = RC.tree_digest(pkg)
    assert edited != before
    (pkg / "core" / "a.py").rename(pkg / "a.py")  # the same bytes, moved to another layer
    assert RC.tree_digest(pkg) not in (before, edited)
    # the library's digest is that of the whole package folder, not of the caching layer alone
    import aethel_lite

    assert RC.package_root() == Path(aethel_lite.__file__).resolve().parent
    assert RC.code_digest() == RC.tree_digest(RC.package_root())


@pytest.mark.parametrize("damage", ["not json", "other key", "no result"])
def test_a_damaged_entry_is_warned_about_and_recomputed(on, damage):
    calls, compute = counter()
    RC.cached("unit", {"p": 1}, compute)
    (path,) = (on / "results").glob("unit-*.json")
    entry = json.loads(path.read_text())
    text = {
        "not json": "{",
        "other key": json.dumps({**entry, "key": "0" * 64}),
        "no result": json.dumps({"key": entry["key"]}),
    }[damage]
    path.write_text(text)
    with pytest.warns(RuntimeWarning, match="recomputing"):
        again = RC.cached("unit", {"p": 1}, compute)
    assert again == entry["result"] and len(calls) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RC.cached("unit", {"p": 1}, compute)  # rewritten: a clean hit
    assert len(calls) == 2


def test_switched_off_it_computes_every_time_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path))
    monkeypatch.setenv("AETHEL_RESULT_CACHE", "0")
    calls, compute = counter()
    assert RC.cached("unit", {"p": 1}, compute) == RC.cached("unit", {"p": 1}, compute)
    assert len(calls) == 2 and not (tmp_path / "results").exists()
    with pytest.raises(Exception, match="kind must be"):
        RC.cached("bad kind/", {}, compute)


@pytest.fixture(scope="module")
def small():
    return load_open("synthetic", limit=8, corpus_size=150, seed=0)


def test_dataset_digest_sees_every_field(small):
    base = RC.dataset_digest(small)
    assert RC.dataset_digest(dataclasses.replace(small)) == base
    p0, q0 = small.passages[0], small.queries[0]
    changed = [
        dataclasses.replace(
            small, passages=[dataclasses.replace(p0, text=p0.text + " "), *small.passages[1:]]
        ),
        dataclasses.replace(
            small, passages=[dataclasses.replace(p0, title=p0.title + "x"), *small.passages[1:]]
        ),
        dataclasses.replace(
            small, passages=[dataclasses.replace(p0, meta={**p0.meta, "k": 1}), *small.passages[1:]]
        ),
        dataclasses.replace(small, passages=small.passages[::-1]),
        dataclasses.replace(small, queries=[dataclasses.replace(q0, text=q0.text + "?"), *small.queries[1:]]),
        dataclasses.replace(small, queries=small.queries[1:]),
        dataclasses.replace(small, meta={**small.meta, "aliases": {}}),
    ]
    assert len({base, *(RC.dataset_digest(d) for d in changed)}) == len(changed) + 1


def test_scaling_rerun_fits_nothing_and_returns_the_same(on, small, monkeypatch):
    import aethel_lite.studies.scaling as S

    real, fits = S.run_methods, []

    def counted(*a, **kw):
        fits.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(S, "run_methods", counted)
    kw = dict(sizes=[60, "full"], seeds=[0, 1], n_resamples=100, progress=False, measure_memory=False)
    first = scaling_run(small, ["bm25"], **kw)
    n = len(fits)
    assert n == 3  # sizes 60 (two seeds) and full (one sample)
    assert scaling_run(small, ["bm25"], **kw) == first  # timing included: measured when computed
    assert len(fits) == n
    scaling_run(small, ["bm25"], **{**kw, "sizes": [70, "full"]})
    assert len(fits) == n + 2  # only the new size's two samples


def test_open_evaluation_hit_has_no_outcomes_and_the_error_analysis_fits_what_it_needs(on, small):
    first, outcomes = evaluate_open(small, ["bm25", "aethel-ner3"], n_resamples=100)
    assert set(outcomes) == {"bm25", "aethel-ner3"}
    errors = error_analysis(small, "aethel-ner3", outcomes=outcomes)
    again, none = evaluate_open(small, ["bm25", "aethel-ner3"], n_resamples=100)
    assert again == first and none == {}
    for path in (on / "results").glob("open-errors-*.json"):
        path.unlink()
    assert error_analysis(small, "aethel-ner3", outcomes=none) == errors  # fitted here: the same analysis
