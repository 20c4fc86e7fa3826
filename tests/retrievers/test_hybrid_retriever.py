"""HybridRetriever's settings (passage seeds, document and metadata nodes, period linking, the fused
ranking, attribution by seed source), checked against networkx PageRank on the same graph with a
personalization vector built by hand from the documented formulas; its estimator protocol (settings
checked in ``fit``, ``set_params``/``clone``, ``prefit`` over a fitted paper retriever, save and load)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from builders import OFF  # every hybrid setting off: a hybrid so set holds the paper retriever alone

from aethel_lite.data.schema import Passage, Query
from aethel_lite.errors import DataError, ParameterError
from aethel_lite.explain import explained_search
from aethel_lite.retrievers import BM25Retriever, GraphRetriever, HybridRetriever, clone, params_json


def _page(doc, page, text, company, year, kind="10k"):
    return Passage(
        f"{doc}#p{page}",
        doc,
        doc,
        text,
        {"page": page, "company": company, "doc_period": year, "doc_type": kind},
    )


PASSAGES = [
    _page("ACME_2018", 0, "Acme Widgets annual report. Risk factors for Acme Widgets.", "Acme Widgets", 2018),
    _page(
        "ACME_2018", 1, "Cash flow statement: capital expenditures were 120 in 2018.", "Acme Widgets", 2018
    ),
    _page(
        "ACME_2019", 0, "Acme Widgets annual report. Risk factors and Zenith Supply.", "Acme Widgets", 2019
    ),
    _page(
        "ACME_2019", 1, "Cash flow statement: capital expenditures were 150 in 2019.", "Acme Widgets", 2019
    ),
    _page("BOLT_2019", 0, "Bolt Motors annual report. Zenith Supply is a supplier.", "Bolt Motors", 2019),
    _page(
        "BOLT_2019",
        1,
        "Cash flow statement: capital expenditures of Bolt Motors were 90.",
        "Bolt Motors",
        2019,
    ),
]
QUESTION = "What were Acme Widgets' FY2019 capital expenditures?"

#: the paper retriever the hybrids of these tests hold
PAPER = {"extractor": "regex", "bct": "none"}
#: the fixture's hybrid settings
SETTINGS = {
    "passage_seeds": ("lexical",),
    "document_nodes": True,
    "metadata": True,
    "period_linking": True,
    "seed_depth": 3,
    "seed_weights": {"entity": 1.0, "metadata": 2.0, "lexical": 1.0},
    "rank_weights": {"ppr": 0.2, "document": 0.5, "lexical": 0.3},
}


def hybrid_of(graph=None, **settings) -> HybridRetriever:
    """An unfitted HybridRetriever over ``GraphRetriever(**PAPER, **graph)``: :data:`OFF` with ``settings``."""
    return HybridRetriever(graph=GraphRetriever(**{**PAPER, **(graph or {})}), **{**OFF, **settings})


def derive(r: HybridRetriever, **changes) -> HybridRetriever:
    """A fitted variant of the fitted hybrid ``r`` with ``changes`` (``set_params`` keys; ``graph__x`` for the paper
    retriever's) that reuses its fitted paper retriever's graph and BM25 index: ``prefit`` over ``r``'s paper
    retriever, or over :meth:`GraphRetriever.from_graph` of its graph when a paper setting changes."""
    paper = r.graph_retriever_
    inner = {k.removeprefix("graph__"): v for k, v in changes.items() if k.startswith("graph__")}
    own = {k: v for k, v in changes.items() if not k.startswith("graph__")}
    if inner:
        params = {**paper.get_params(deep=False), **inner}
        paper = GraphRetriever.from_graph(PASSAGES, paper.graph_, paper.bm25_, **params)
    return clone(r).set_params(graph=paper, prefit=True, **own).fit(PASSAGES)


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory):
    import os

    os.environ["AETHEL_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    return hybrid_of(**SETTINGS).fit(PASSAGES)


def _by_hand(r) -> tuple[np.ndarray, dict]:
    """The personalization of QUESTION from the documented formulas, without the library's seed code."""
    g = r.graph_
    n_p = g.n_passages
    comps = {}
    ent = np.zeros(g.n_nodes)  # bct="none": uniform over the graph entities the question names
    keys = [k for k in r.graph_retriever_.query_keys(QUESTION) if k in g.entity_index]
    assert keys == ["acme widgets"]
    ent[n_p + g.entity_index["acme widgets"]] = 1.0
    comps["entity"] = ent
    meta = np.zeros(g.n_nodes)  # one field each: the company, the period
    meta[n_p + g.entity_index["company:acme_widgets"]] = 0.5
    meta[n_p + g.entity_index["period:2019"]] = 0.5
    comps["metadata"] = meta
    bm = BM25Retriever().fit(PASSAGES).get_scores(QUESTION)
    order = sorted(range(n_p), key=lambda i: (-bm[i], i))
    lex = np.zeros(g.n_nodes)
    for i in order[:3]:
        lex[i] = bm[i] - bm[order[3]]
    comps["lexical"] = lex / lex.sum()
    w = {"entity": 1.0, "metadata": 2.0, "lexical": 1.0}
    s = sum(w[c] * comps[c] for c in comps) / sum(w.values())
    return s, comps


def _nx_ppr(graph, s, alpha):
    G = nx.from_scipy_sparse_array(graph.adjacency())
    pr = nx.pagerank(
        G,
        alpha=1 - alpha,
        personalization={i: v for i, v in enumerate(s) if v > 0},
        tol=1e-14,
        max_iter=100_000,
        dangling={i: v for i, v in enumerate(s) if v > 0},
    )
    return np.array([pr[i] for i in range(graph.n_nodes)])


def test_graph_has_document_and_metadata_nodes(hybrid):
    ents = hybrid.graph_.entities
    for key in (
        "doc:ACME_2018",
        "doc:BOLT_2019",
        "company:acme_widgets",
        "company:bolt_motors",
        "period:2018",
        "period:2019",
        "type:10k",
    ):
        assert key in ents


def test_personalization_is_the_weighted_mixture_of_sources(hybrid):
    s_hand, _ = _by_hand(hybrid)
    exps, s, fallback = hybrid.personalization(QUESTION)
    assert not fallback and [e.entity for e in exps] == ["acme widgets"]
    np.testing.assert_allclose(s, s_hand, atol=1e-12)


def test_ppr_and_fused_ranking_equal_networkx_and_the_formula(hybrid):
    s_hand, _ = _by_hand(hybrid)
    g = hybrid.graph_
    pr = _nx_ppr(g, s_hand, hybrid.alpha)
    P, _, _ = hybrid.ppr([QUESTION])
    np.testing.assert_allclose(P[:, 0], pr, atol=1e-8)
    unit = lambda x: (x - x.min()) / (x.max() - x.min())
    docs = [g.n_passages + g.entity_index[f"doc:{p.doc_id}"] for p in PASSAGES]
    bm = BM25Retriever().fit(PASSAGES).get_scores(QUESTION)
    expected = 0.2 * unit(pr[: g.n_passages]) + 0.5 * unit(pr[docs]) + 0.3 * unit(bm)
    hits = hybrid.search([Query("q", QUESTION, frozenset({"ACME_2019#p1"}))], k=6)["q"]
    got = {pid: score for pid, score in hits}
    for i, p in enumerate(PASSAGES):
        assert got[p.pid] == pytest.approx(expected[i], abs=1e-6)
    # company and period meet at the right filing: its document node holds the most mass
    assert (
        max(
            ("ACME_2018", "ACME_2019", "BOLT_2019"),
            key=lambda d: pr[g.n_passages + g.entity_index[f"doc:{d}"]],
        )
        == "ACME_2019"
    )


def test_attribution_splits_each_hit_by_source_exactly(hybrid):
    _, comps = _by_hand(hybrid)
    g = hybrid.graph_
    w = {"entity": 0.25, "metadata": 0.5, "lexical": 0.25}
    parts = {c: _nx_ppr(g, comps[c], hybrid.alpha) * w[c] for c in comps}  # linearity: p = sum of the parts
    total = sum(parts.values())
    unit = lambda x: (x - x.min()) / (x.max() - x.min())
    docs = [g.n_passages + g.entity_index[f"doc:{p.doc_id}"] for p in PASSAGES]
    bm = BM25Retriever().fit(PASSAGES).get_scores(QUESTION)
    pn, dn, bn = unit(total[: g.n_passages]), unit(total[docs]), unit(bm)
    result = explained_search(hybrid, [Query("q", QUESTION, frozenset({"ACME_2019#p1"}))], k=6)
    for i, p in enumerate(PASSAGES):
        share = {
            c: 0.2 * pn[i] * parts[c][i] / total[i] + 0.5 * dn[i] * parts[c][docs[i]] / total[docs[i]]
            for c in parts
        }
        share["lexical"] += 0.3 * bn[i]
        z = sum(share.values())
        got = result.sources["q"][p.pid]
        assert sum(got.values()) == pytest.approx(1.0)
        for c in share:
            assert got.get(c, 0.0) == pytest.approx(share[c] / z, abs=1e-6)
        prov = result.provenance["q"][p.pid]
        assert prov[0].via == max(got, key=got.get) and prov[0].weight == pytest.approx(
            max(got.values()), abs=1e-6
        )


def test_heading_term_ranks_by_the_cosine_with_each_page_heading_and_counts_as_dense(hybrid):
    """rank_weights with a "heading" term: the score adds w_h times the min–max normalised cosine
    between the question and each passage's first 200 characters (MiniLM called directly here),
    and attribution credits that part of each hit to the dense source."""
    from aethel_lite.retrievers import DenseRetriever

    weights = {"ppr": 0.2, "document": 0.4, "lexical": 0.2, "heading": 0.2}
    r = derive(hybrid, rank_weights=weights)
    assert r.heading_ is not None and r.heading_.pooling == "heading" and r.dense_ is None
    s_hand, comps = _by_hand(r)
    g = r.graph_
    pr = _nx_ppr(g, s_hand, r.alpha)
    unit = lambda x: (x - x.min()) / (x.max() - x.min())
    docs = [g.n_passages + g.entity_index[f"doc:{p.doc_id}"] for p in PASSAGES]
    bm = BM25Retriever().fit(PASSAGES).get_scores(QUESTION)
    model = DenseRetriever(precision="float32").model  # the oracle: sentence-transformers on PyTorch
    cos = (
        model.encode([" ".join(p.text.split())[:200] for p in PASSAGES], normalize_embeddings=True)
        @ model.encode([QUESTION], normalize_embeddings=True)[0]
    )
    expected = (
        0.2 * unit(pr[: g.n_passages])
        + 0.4 * unit(pr[docs])
        + 0.2 * unit(bm)
        + 0.2 * unit(cos.astype(np.float64))
    )
    result = explained_search(r, [Query("q", QUESTION, frozenset({"ACME_2019#p1"}))], k=6)
    got = dict(result.run["q"])
    for i, p in enumerate(PASSAGES):
        assert got[p.pid] == pytest.approx(expected[i], abs=1e-5)
    hn = unit(cos.astype(np.float64))
    for i, p in enumerate(PASSAGES):
        assert (
            result.sources["q"][p.pid].get("dense", 0.0) > 0 or hn[i] == 0
        )  # the heading's part, under "dense"
        assert "heading" not in result.sources["q"][p.pid]
    fresh = hybrid_of(**{**SETTINGS, "rank_weights": weights}).fit(PASSAGES)
    q = [Query("q", QUESTION, frozenset({"ACME_2019#p1"}))]
    assert fresh.search(q, k=6) == r.search(q, k=6)


def test_heading_term_in_a_closed_pool_is_normalised_over_the_pool(hybrid):
    """In a closed pool the heading term is the cosine with each candidate's heading, min–max
    normalised over the pool's candidates only, beside the dense term (MiniLM called directly as
    the oracle)."""
    from aethel_lite.retrievers import DenseRetriever

    r = derive(hybrid, rank_weights={"dense": 0.5, "heading": 0.5})
    pool = ("BOLT_2019#p1", "ACME_2019#p0", "ACME_2018#p1")
    hits = dict(
        r.search([Query("q", QUESTION, frozenset({"ACME_2019#p1"}), pool=pool)], k=5, pool="query")["q"]
    )
    by_pid = {p.pid: p for p in PASSAGES}
    model = DenseRetriever(precision="float32").model  # the oracle: sentence-transformers on PyTorch
    q = model.encode([QUESTION], normalize_embeddings=True)[0]
    unit = lambda x: (x - x.min()) / (x.max() - x.min())
    head = (
        model.encode([" ".join(by_pid[pid].text.split())[:200] for pid in pool], normalize_embeddings=True)
        @ q
    )
    whole = (
        model.encode([f"{by_pid[pid].title}\n{by_pid[pid].text}" for pid in pool], normalize_embeddings=True)
        @ q
    )
    expected = 0.5 * unit(whole.astype(np.float64)) + 0.5 * unit(head.astype(np.float64))
    assert set(hits) == set(pool)
    for pid, e in zip(pool, expected):
        assert hits[pid] == pytest.approx(e, abs=1e-5)


def test_provenance_names_the_metadata_and_lexical_seeds(hybrid):
    result = explained_search(hybrid, [Query("q", QUESTION, frozenset({"ACME_2019#p1"}))], k=3)
    records = {e.via: e for e in result.provenance["q"]["ACME_2019#p1"]}
    assert records["metadata"].entity == "doc:ACME_2019" and records["metadata"].seed in (
        "company:acme_widgets",
        "period:2019",
    )
    assert records["lexical"].seed == "bm25" and records["lexical"].entity == "ACME_2019#p1"
    assert result.diagnostics["q"]["sources"] == ["entity", "lexical", "metadata"]


def test_closed_pool_ranks_only_the_pool_with_its_document_nodes(hybrid):
    q = Query(
        "q", QUESTION, frozenset({"ACME_2019#p1"}), pool=("BOLT_2019#p1", "ACME_2019#p1", "ACME_2018#p1")
    )
    hits = hybrid.search([q], k=5, pool="query")["q"]
    assert sorted(p for p, _ in hits) == sorted(q.pool)
    assert [p for p, _ in hits][:2] == ["ACME_2019#p1", "ACME_2018#p1"]  # Acme's pages before Bolt's


def test_without_hybrid_settings_nothing_changes(tmp_path_factory):
    """The paper retriever alone, and a hybrid with every setting off holding it, rank alike and explain
    with entity provenance only."""
    plain = GraphRetriever(**PAPER).fit(PASSAGES)
    off = hybrid_of().fit(PASSAGES)
    assert not off.is_hybrid and not any(":" in e for e in off.graph_.entities)
    assert off.graph_ == plain.graph_
    queries = [
        Query("q", QUESTION, frozenset({"ACME_2019#p1"})),
        Query("n", "what about cash flow?", frozenset()),
    ]
    assert off.search(queries, k=6) == plain.search(queries, k=6)
    for r in (plain, off):
        result = explained_search(r, queries[:1], k=6)
        assert result.sources == {} and all(
            e.via == "exact" for recs in result.provenance["q"].values() for e in recs
        )
        assert result.run["q"]


def test_question_without_any_seed_falls_back_to_bm25_teleport():
    r = hybrid_of(document_nodes=True, metadata=True).fit(PASSAGES)
    exps, s, fallback = r.personalization("what about capital expenditures?")
    assert fallback and exps == [] and s[: r.graph_.n_passages].sum() == pytest.approx(1.0)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"passage_seeds": ("bm25",)},
        {"passage_seeds": "lexical"},
        {"seed_weights": {"graph": 1.0}},
        {"seed_weights": {"entity": -1.0}},
        {"seed_depth": 0},
        {"rank_weights": {"pagerank": 1.0}},
        {"rank_weights": {"ppr": 0.0}},
        {"rank_weights": {"document": 1.0}},
        {"dense_pooling": "mean"},
        {"period_decay": 1.5},
        {"graph__bct": "everything"},
        {"graph__alpha": 1.5},
        {"graph__fallback": "dense"},
    ],
)
def test_bad_hybrid_settings_are_refused_by_fit(kwargs):
    """A bad setting (the hybrid's, or the paper retriever's it holds) is taken as given by the constructor and by
    ``set_params``; ``fit`` refuses it, naming it, before any work (nothing fitted)."""
    ((key, value),) = kwargs.items()
    name = key.removeprefix("graph__")
    built = hybrid_of({name: value}) if key.startswith("graph__") else hybrid_of(**kwargs)  # not checked here
    changed = hybrid_of().set_params(**kwargs)  # nor here
    for r in (built, changed):
        with pytest.raises(ParameterError, match=name):
            r.fit(PASSAGES)
        assert not r.is_fitted and not hasattr(r, "graph_retriever_")


def test_save_and_load_rank_as_the_fitted_retriever(hybrid, tmp_path):
    """``save`` writes the index parts its settings need (:meth:`HybridRetriever.parts`) and ``load`` with the same
    settings ranks and explains exactly as the fitted retriever; ``load`` checks the settings as ``fit`` does and
    names a part the settings need that the folder lacks."""
    files = hybrid.save(tmp_path)
    assert files == sorted(files) and {"ids.json", "docmeta.json", "graph-regex/graph.json"} <= set(files)
    assert {f.split("/")[0].removesuffix(".json") for f in files} - {"ids"} == set(hybrid.parts())
    assert hybrid.parts() == ["bm25", "graph-regex", "docmeta"]  # no dense model: no embeddings
    params = clone(hybrid).get_params(deep=False)
    back = HybridRetriever.load(tmp_path, **params)
    assert back.graph_ == hybrid.graph_ and back.doc_meta_ == hybrid.doc_meta_
    queries = [Query("q", QUESTION, frozenset({"ACME_2019#p1"})), Query("r", "Zenith Supply", frozenset())]
    pool = {q.qid: [p.pid for p in PASSAGES[1:5]] for q in queries}
    assert back.search(queries, k=6) == hybrid.search(queries, k=6)
    assert back.search(queries, k=6, pool=pool) == hybrid.search(queries, k=6, pool=pool)
    a, b = explained_search(back, queries, k=6), explained_search(hybrid, queries, k=6)
    assert (a.sources, a.provenance) == (b.sources, b.provenance)
    with pytest.raises(ParameterError, match="period_decay"):
        HybridRetriever.load(tmp_path, **{**params, "period_decay": 1.5})
    with pytest.raises(DataError, match="dense-first"):
        HybridRetriever.load(tmp_path, **{**params, "passage_seeds": ("lexical", "dense")})


def test_clone_and_params_as_scikit_learn(hybrid):
    """``get_params(deep=True)`` reaches the paper retriever's settings (``graph__x``); ``clone`` (the package's and
    scikit-learn's) is an unfitted copy with equal settings; ``set_params`` reaches nested settings and unfits."""
    from sklearn.base import clone as sk_clone

    deep = hybrid.get_params(deep=True)
    assert deep["graph__extractor"] == "regex" and deep["seed_depth"] == 3
    assert set(HybridRetriever._get_param_names()) <= set(deep)
    for copy in (clone(hybrid), sk_clone(hybrid)):
        assert type(copy) is HybridRetriever and not copy.is_fitted and not copy.graph.is_fitted
        assert params_json(copy) == params_json(hybrid) and copy.graph is not hybrid.graph
    changed = clone(hybrid).fit(PASSAGES)
    assert changed.is_fitted and changed.search([Query("q", QUESTION, frozenset())], k=6) == hybrid.search(
        [Query("q", QUESTION, frozenset())], k=6
    )
    changed.set_params(graph__bct="both", seed_depth=2)
    assert changed.graph.bct == "both" and changed.seed_depth == 2
    assert (
        not changed.is_fitted and not hasattr(changed, "graph_retriever_") and not hasattr(changed, "graph_")
    )


@pytest.mark.parametrize(
    "changes",
    [
        {"document_nodes": False, "rank_weights": {"ppr": 0.5, "lexical": 0.5}},
        {"metadata": False},
        {"period_linking": False, "bct": "both", "seed_depth": 2},
        {"passage_seeds": (), "rank_weights": None},
    ],
)
def test_set_params_ranks_as_a_fresh_fit(hybrid, changes):
    """The same settings reached three ways rank alike: ``set_params`` on a clone then ``fit``; ``prefit`` over the
    fixture's fitted paper retriever (or over its graph with other paper settings, ``from_graph``); a retriever
    built with them."""
    changes = {("graph__bct" if k == "bct" else k): v for k, v in changes.items()}
    refit = clone(hybrid).set_params(**changes).fit(PASSAGES)
    derived = derive(hybrid, **changes)
    own = {k: v for k, v in changes.items() if not k.startswith("graph__")}
    paper = {k.removeprefix("graph__"): v for k, v in changes.items() if k.startswith("graph__")}
    fresh = hybrid_of(paper, **{**SETTINGS, **own}).fit(PASSAGES)
    q = [Query("q", QUESTION, frozenset({"ACME_2019#p1"}))]
    pool = {"q": [p.pid for p in PASSAGES[1:5]]}
    for r in (refit, derived):
        assert r.search(q, k=6) == fresh.search(q, k=6)
        assert r.search(q, k=6, pool=pool) == fresh.search(q, k=6, pool=pool)
        assert r.graph_ == fresh.graph_
    if not paper:  # the fitted paper retriever is shared as it is
        assert derived.graph_retriever_ is hybrid.graph_retriever_
    assert params_json(refit) == params_json(fresh)
    with pytest.raises(ParameterError, match="colour"):
        clone(hybrid).set_params(colour="blue")
    with pytest.raises(ParameterError, match="colour"):
        clone(hybrid).set_params(graph__colour="blue")


def test_period_decay_weights_the_latest_year_named_most(hybrid):
    r = derive(hybrid, period_decay=0.5)
    g = r.graph_
    _, comps, named = r.seed_components("Acme Widgets capex from FY2018 to FY2019?")
    assert named == {
        "company:acme_widgets": 1.0,
        "period:2019": pytest.approx(1 / 1.5),
        "period:2018": pytest.approx(0.5 / 1.5),
    }
    m = comps["metadata"]
    assert m[g.n_passages + g.entity_index["period:2019"]] == pytest.approx(
        2 * m[g.n_passages + g.entity_index["period:2018"]]
    )
    assert m.sum() == pytest.approx(1.0)
    bad = clone(hybrid).set_params(period_decay=1.5)  # taken as given; fit refuses it
    with pytest.raises(ParameterError, match="period_decay"):
        bad.fit(PASSAGES)
