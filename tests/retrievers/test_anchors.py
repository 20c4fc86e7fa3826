"""One PageRank per anchor (:class:`AnchorsRetriever`, ``aethel-anchors``): the anchors a question names, each
anchor's PageRank against networkx with its teleport built by hand, the merged ranking against a
round-robin written out here, single-anchor questions unchanged, provenance naming the anchor, the stage's
settings checked in ``fit``, and the stage over a fitted hybrid (``prefit``) ranking as the registry's."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from test_hybrid_retriever import _page, hybrid_of  # one filing page with the loader's metadata

from aethel_lite.data.schema import Query
from aethel_lite.errors import DataError, ParameterError
from aethel_lite.explain import explained_search
from aethel_lite.retrievers import AnchorsRetriever, HybridRetriever, anchors, clone, params_json
from aethel_lite.retrievers.registry import METHODS, graph_path, make_retriever

PASSAGES = [
    _page("ACME_2015", 0, "Acme Widgets annual report 2015. Risk factors.", "Acme Widgets", 2015),
    _page("ACME_2015", 1, "Balance sheet: total assets of Acme Widgets were 700.", "Acme Widgets", 2015),
    _page(
        "ACME_2019",
        0,
        "Acme Widgets annual report 2019. Risk factors and Zenith Supply.",
        "Acme Widgets",
        2019,
    ),
    _page("ACME_2019", 1, "Balance sheet: total assets were 900 at year end.", "Acme Widgets", 2019),
    _page(
        "ACME_2019", 2, "Balance sheet (continued): total assets and total liabilities.", "Acme Widgets", 2019
    ),
    _page("ACME_2019", 3, "Total assets by segment: total assets of each segment.", "Acme Widgets", 2019),
    _page(
        "ACME_2019", 4, "Total assets grew; total assets per share; total assets ratio.", "Acme Widgets", 2019
    ),
    _page("ACME_2019", 5, "Notes on total assets and goodwill.", "Acme Widgets", 2019),
    _page(
        "BOLT_2019", 0, "Bolt Motors annual report 2019. Zenith Supply is a supplier.", "Bolt Motors", 2019
    ),
    _page("BOLT_2019", 1, "Statement of financial position: assets of 400.", "Bolt Motors", 2019),
    _page("CORA_2019", 0, "Cora Foods annual report 2019.", "Cora Foods", 2019),
]
COMPARE = "Which had more total assets in FY2019, Acme Widgets or Bolt Motors?"
TWO_YEARS = "How did Acme Widgets' total assets change from FY2015 to FY2019?"
ONE = "What were Acme Widgets' total assets in FY2019?"
ADJACENT = "How did Acme Widgets' total assets change from FY2018 to FY2019?"
SETTINGS = dict(  # over hybrid_of's paper retriever (regex entities, no BCT) and every other setting off
    passage_seeds=("lexical",),
    document_nodes=True,
    metadata=True,
    period_linking=True,
    seed_depth=3,
    seed_weights={"entity": 1.0, "metadata": 3.0, "lexical": 1.0},
    rank_weights={"document": 0.4, "lexical": 0.6},
)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    import os

    os.environ["AETHEL_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    joint = hybrid_of(**SETTINGS).fit(PASSAGES)
    return joint, AnchorsRetriever(hybrid=joint, prefit=True).fit(PASSAGES)


def _q(qid, text):
    return Query(qid=qid, text=text, gold=frozenset())


def test_anchors_of_a_question(pair):
    joint, each = pair
    got = each.anchors(COMPARE)
    assert [(a.key, a.kind) for a in got] == [
        ("company:acme_widgets", "company"),
        ("company:bolt_motors", "company"),
    ]
    assert got[0].fields[0] == {"company:acme_widgets": 1.0} and got[0].fields[1] == {"period:2019": 1.0}
    years = each.anchors(TWO_YEARS)
    assert [(a.key, a.kind) for a in years] == [("period:2019", "period"), ("period:2015", "period")]
    assert all(a.fields[0] == {"company:acme_widgets": 1.0} for a in years)
    assert each.anchors(ONE) == []
    assert each.anchors(ADJACENT) == []  # one 10-K holds both years: one anchor
    assert AnchorsRetriever(hybrid=joint, anchor_gap=1, prefit=True).fit(PASSAGES).anchors(ADJACENT) != []
    # the hybrid alone ranks jointly: its search records no anchors
    _, traces = joint.traced_search([_q("c", COMPARE)], k=3)
    assert "anchors" not in traces["c"].extra
    _, traces = each.traced_search([_q("c", COMPARE)], k=3)
    assert [a.key for a, _ in traces["c"].extra["anchors"]] == [a.key for a in got]


@pytest.mark.parametrize(
    "stage, match",
    [
        (dict(anchor_gap=0), "anchor_gap"),
        (dict(anchor_gap=True), "anchor_gap"),
        (dict(anchor_gap="2"), "anchor_gap"),
        (dict(hybrid=hybrid_of(**{**SETTINGS, "metadata": False})), "metadata=True"),
        (dict(hybrid=hybrid_of(**{**SETTINGS, "period_decay": 1.5})), "period_decay"),
        (dict(hybrid=hybrid_of({"bct": "everything"}, **SETTINGS)), "bct"),
    ],
)
def test_settings_are_checked_by_fit(stage, match):
    """A bad setting of the stage, or of the hybrid it holds, is taken as given by the constructor and by
    ``set_params``; ``fit`` refuses it, naming it, before fitting anything."""
    built = AnchorsRetriever(**{"hybrid": hybrid_of(**SETTINGS), **stage})  # not checked here
    changed = AnchorsRetriever(hybrid=hybrid_of(**SETTINGS)).set_params(**stage)  # nor here
    for r in (built, changed):
        with pytest.raises(ParameterError, match=match):
            r.fit(PASSAGES)
        assert not r.is_fitted and not hasattr(r, "hybrid_") and not r.hybrid.is_fitted


def test_prefit_needs_the_hybrid_fitted_on_the_same_passages(pair):
    joint, _ = pair
    with pytest.raises(ParameterError, match="prefit=True needs a fitted retriever"):
        AnchorsRetriever(hybrid=hybrid_of(**SETTINGS), prefit=True).fit(PASSAGES)
    with pytest.raises(DataError, match="passages differ"):
        AnchorsRetriever(hybrid=joint, prefit=True).fit(PASSAGES[:-1])
    with pytest.raises(ParameterError, match="anchor_gap"):  # checked with prefit too
        AnchorsRetriever(hybrid=joint, prefit=True, anchor_gap=0).fit(PASSAGES)


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


COMPANIES = ("company:acme_widgets", "company:bolt_motors")


def _rows_by_hand(joint, each):
    """Each anchor's ranking scores from the documented formulas: anchor a's teleport (the question's entity
    and BM25 seeds; its metadata seeds replaced by the anchor's company and the question's period, one
    field each, equal mass) → networkx PageRank → a passage's score 0.4 x its document node's PageRank
    + 0.6 x BM25 (each min-max normalised)."""
    g = each.hybrid_.graph_
    n_p = g.n_passages
    _, comps, _ = joint.seed_components(COMPARE)
    bm = joint.graph_retriever_.bm25_.get_scores(COMPARE)
    unit = lambda x: (x - x.min()) / (x.max() - x.min())  # noqa: E731
    rows = []
    for company in COMPANIES:
        meta = np.zeros(g.n_nodes)
        meta[n_p + g.entity_index[company]] = 0.5
        meta[n_p + g.entity_index["period:2019"]] = 0.5
        own = dict(comps, metadata=meta)
        w = {"entity": 1.0, "metadata": 3.0, "lexical": 1.0}
        s = sum(w[c] * own[c] for c in own) / sum(w[c] for c in own)
        pr = _nx_ppr(g, s, each.hybrid_.alpha)
        doc = np.array([pr[n_p + g.entity_index["doc:" + p.doc_id]] for p in PASSAGES])
        rows.append(np.round(0.4 * unit(doc) + 0.6 * unit(bm), 8))
    return rows


def test_ranking_against_networkx_by_hand(pair):
    """The anchors' rankings by hand (:func:`_rows_by_hand`), taken in turns, are the search's ranking."""
    want = _round_robin(_rows_by_hand(*pair))
    got = [pid for pid, _ in pair[1].search([_q("c", COMPARE)], k=len(PASSAGES))["c"]]
    assert got == [PASSAGES[i].pid for i in want]


def _round_robin(rows):
    """The merged order written out: anchor lists (best first, ties by index), first items, then second ones..."""
    lists = [sorted(range(len(r)), key=lambda i: (-r[i], i)) for r in rows]
    placed, order = set(), []
    for depth in range(len(rows[0])):
        layer = sorted({lst[depth] for lst in lists} - placed)  # one round; ties by corpus order
        order.extend(layer)
        placed.update(layer)
    return order


def test_merge_is_interleaving():
    rng = np.random.default_rng(0)
    for _ in range(50):
        n, m = int(rng.integers(3, 12)), int(rng.integers(2, 4))
        rows = [np.round(rng.random(n), 1) for _ in range(m)]  # ties
        score, best = anchors.merge(rows)
        order = sorted(range(n), key=lambda i: (-score[i], i))
        assert order == _round_robin(rows)
        for i in range(n):
            ranks = [sorted(range(n), key=lambda j: (-r[j], j)).index(i) for r in rows]
            assert best[i] == int(np.argmin(ranks)) and score[i] == 1.0 / (1 + min(ranks))


def test_merge_keeps_non_candidates_out():
    rows = [np.array([0.5, -np.inf, 0.2]), np.array([0.1, -np.inf, 0.9])]
    score, best = anchors.merge(rows)
    assert score[1] == -np.inf and best[1] == -1
    assert list(np.argsort(-score, kind="stable")[:2]) == [0, 2]


def test_single_anchor_questions_rank_as_before(pair):
    joint, each = pair
    qs = [
        _q("one", ONE),
        _q("adj", ADJACENT),
        _q("none", "what about risk factors?"),
        _q("z", "Zenith Supply"),
    ]
    a, b = joint.search(qs, k=len(PASSAGES)), each.search(qs, k=len(PASSAGES))
    assert dict(a) == dict(b)
    pool = {q.qid: [p.pid for p in PASSAGES[:6]] for q in qs}
    assert dict(joint.search(qs, k=5, pool=pool)) == dict(each.search(qs, k=5, pool=pool))


def test_comparison_gets_both_filings(pair):
    """The first place of each anchor's ranking opens the merged one: each company's FY2019 filing in the top 2."""
    _, each = pair
    top = [pid for pid, _ in each.search([_q("c", COMPARE)], k=2)["c"]]
    assert {pid.split("#")[0] for pid in top} == {"ACME_2019", "BOLT_2019"}
    years = [pid for pid, _ in each.search([_q("y", TWO_YEARS)], k=4)["y"]]
    assert {pid.split("#")[0] for pid in years} == {"ACME_2019", "ACME_2015"}


def test_provenance_names_the_anchor(pair):
    """Each hit's first provenance record is the anchor whose ranking (by hand) places it best, and its
    seed-source shares are those of that anchor's teleport (only that company's metadata node is seeded)."""
    _, each = pair
    rows = _rows_by_hand(*pair)
    ranks = [
        {PASSAGES[i].pid: n for n, i in enumerate(sorted(range(len(r)), key=lambda i: (-r[i], i)))}
        for r in rows
    ]
    result = explained_search(each, [_q("c", COMPARE)], k=6)
    for pid, _ in result.run["c"]:
        records = result.provenance["c"][pid]
        best = min(range(len(COMPANIES)), key=lambda a: (ranks[a][pid], a))
        assert records[0] == type(records[0])(COMPANIES[best], COMPANIES[best], "anchor", 1.0)
        assert abs(sum(result.sources["c"][pid].values()) - 1.0) < 1e-9
        meta = [e for e in records if e.via == "metadata"]
        other = COMPANIES[1 - best]
        assert all(e.seed != other for e in meta)
    joint_result = explained_search(pair[0], [_q("c", COMPARE)], k=6)
    assert all(rec.via != "anchor" for recs in joint_result.provenance["c"].values() for rec in recs)


def test_registry_method():
    """``aethel-anchors`` is the stage (anchor years 2 apart) over ``aethel-hybrid``'s settings, fitting its own
    hybrid; ``make_retriever``'s graph settings reach the paper retriever inside."""
    r = make_retriever("aethel-anchors")
    assert isinstance(r, AnchorsRetriever) and r.anchor_gap == 2 and not r.prefit
    assert isinstance(r.hybrid, HybridRetriever) and r.hybrid.document_nodes and r.hybrid.metadata
    base = make_retriever("aethel-hybrid")
    assert params_json(r.hybrid) == params_json(base)
    assert r.hybrid.graph.get_params() == base.graph.get_params()
    assert graph_path(r) == "hybrid__graph__"
    linked = make_retriever("aethel-anchors", graph={"n_process": 2})
    assert linked.hybrid.graph.n_process == 2 and METHODS["aethel-anchors"].hybrid.graph.n_process == 1
    assert r.parts() == base.parts()  # the stage saves its hybrid's parts and nothing of its own


def test_prefit_stage_over_a_fitted_hybrid_ranks_as_the_registry_method():
    """``AnchorsRetriever(prefit=True)`` over ``aethel-hybrid`` fitted on the same passages ranks exactly as
    ``aethel-anchors`` fitted from scratch (open corpus and closed pools), using the hybrid as it is."""
    hybrid = make_retriever("aethel-hybrid").fit(PASSAGES)
    stage = AnchorsRetriever(hybrid=hybrid, anchor_gap=2, prefit=True).fit(PASSAGES)
    assert stage.hybrid_ is hybrid and stage.ranker_ is hybrid
    fresh = make_retriever("aethel-anchors").fit(PASSAGES)
    assert (
        fresh.hybrid_ is not fresh.hybrid and not fresh.hybrid.is_fitted
    )  # it fitted a clone of its setting
    qs = [_q(qid, text) for qid, text in (("c", COMPARE), ("y", TWO_YEARS), ("one", ONE), ("adj", ADJACENT))]
    got, want = stage.search(qs, k=len(PASSAGES)), fresh.search(qs, k=len(PASSAGES))
    assert got == want and got.name == want.name
    pool = {q.qid: [p.pid for p in PASSAGES if p.doc_id != "ACME_2015"] for q in qs}
    assert stage.search(qs, k=5, pool=pool) == fresh.search(qs, k=5, pool=pool)
    assert (
        [a.key for a in stage.anchors(COMPARE)] == [a.key for a in fresh.anchors(COMPARE)] == list(COMPANIES)
    )


def test_save_and_load_rank_as_the_fitted_stage(pair, tmp_path):
    """The stage saves its hybrid's files and loads over them with its settings, ranking as the fitted one."""
    _, each = pair
    files = each.save(tmp_path)
    assert files == each.hybrid_.save(tmp_path / "hybrid")
    back = AnchorsRetriever.load(tmp_path, hybrid=hybrid_of(**SETTINGS))
    qs = [_q("c", COMPARE), _q("y", TWO_YEARS), _q("one", ONE)]
    assert back.search(qs, k=len(PASSAGES)) == each.search(qs, k=len(PASSAGES))
    with pytest.raises(ParameterError, match="anchor_gap"):
        AnchorsRetriever.load(tmp_path, hybrid=hybrid_of(**SETTINGS), anchor_gap=0)


def test_clone_is_an_unfitted_copy_of_the_setting(pair):
    _, each = pair
    copy = clone(AnchorsRetriever(hybrid=hybrid_of(**SETTINGS), anchor_gap=3))
    assert (
        copy.anchor_gap == 3
        and not copy.is_fitted
        and params_json(copy.hybrid) == params_json(hybrid_of(**SETTINGS))
    )
    assert each.get_params(deep=True)["hybrid__graph__extractor"] == "regex"


def test_search_equals_eval_and_names_the_anchor(tmp_path, capsys, monkeypatch):
    """``aethel index`` + ``aethel search --method aethel-anchors`` rank as the retriever ``aethel eval`` fits
    (the registry's), and the JSON's provenance of every hit starts with its anchor."""
    import json

    from aethel_lite.cli import main
    from aethel_lite.core.encoders import INDEX_PRECISION, PRECISION_ENV

    monkeypatch.setenv(PRECISION_ENV, INDEX_PRECISION)  # the registry's retriever embeds as the index does
    passages = tmp_path / "passages.jsonl"
    passages.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in PASSAGES))
    out = tmp_path / "index"
    assert main(["index", str(passages), "--out", str(out), "--methods", "aethel-anchors", "--quiet"]) == 0
    fitted = make_retriever("aethel-anchors").fit(PASSAGES)
    for qid, text in (("c", COMPARE), ("y", TWO_YEARS), ("one", ONE)):
        capsys.readouterr()
        assert main(["search", str(out), text, "-k", "6", "--method", "aethel-anchors", "--json"]) == 0
        hits = json.loads(capsys.readouterr().out)["hits"]
        want = fitted.search([_q(qid, text)], k=6)[qid]
        assert [h["pid"] for h in hits] == [pid for pid, _ in want]
        anchored = fitted.anchors(text)
        assert bool(anchored) == (qid != "one")
        firsts = {h["provenance"][0]["via"] for h in hits}
        assert firsts == ({"anchor"} if anchored else firsts - {"anchor"})
