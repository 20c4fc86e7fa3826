"""One PageRank per anchor (``anchors="each"``, ``aethel-anchors``): the anchors a question names, each
anchor's PageRank against networkx with its teleport built by hand, the merged ranking against a
round-robin written out here, single-anchor questions unchanged, and provenance naming the anchor."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from builders import build, derive
from test_hybrid_retriever import _page  # one filing page with the loader's metadata

from aethel_lite.data.schema import Query
from aethel_lite.errors import ParameterError
from aethel_lite.explain import explained_search
from aethel_lite.retrievers import anchors
from aethel_lite.retrievers.registry import make_retriever

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
SETTINGS = dict(
    extractor="regex",
    bct="none",
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
    joint = build(**SETTINGS).fit(PASSAGES)
    return joint, derive(joint, anchors="each")


def _q(qid, text):
    return Query(qid=qid, text=text, gold=frozenset())


def test_anchors_of_a_question(pair):
    _, each = pair
    got = anchors.question_anchors(each, COMPARE)
    assert [(a.key, a.kind) for a in got] == [
        ("company:acme_widgets", "company"),
        ("company:bolt_motors", "company"),
    ]
    assert got[0].fields[0] == {"company:acme_widgets": 1.0} and got[0].fields[1] == {"period:2019": 1.0}
    years = anchors.question_anchors(each, TWO_YEARS)
    assert [(a.key, a.kind) for a in years] == [("period:2019", "period"), ("period:2015", "period")]
    assert all(a.fields[0] == {"company:acme_widgets": 1.0} for a in years)
    assert anchors.question_anchors(each, ONE) == []
    assert anchors.question_anchors(each, ADJACENT) == []  # one 10-K holds both years: one anchor
    assert anchors.question_anchors(derive(each, anchor_gap=1), ADJACENT) != []
    assert anchors.question_anchors(pair[0], COMPARE) == []  # anchors="joint"


def test_settings_are_checked(pair):
    joint, _ = pair
    with pytest.raises(ParameterError, match="anchors must be one of"):
        derive(joint, anchors="both")
    with pytest.raises(ParameterError, match="anchor_gap"):
        derive(joint, anchors="each", anchor_gap=0)
    with pytest.raises(ParameterError, match="needs metadata=True"):
        build(extractor="regex", anchors="each").fit(PASSAGES)


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
    g = each.graph_
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
        pr = _nx_ppr(g, s, each.alpha)
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
    r = make_retriever("aethel-anchors")
    s = r.hybrid_settings
    assert s.anchors == "each" and s.anchor_gap == 2 and s.document_nodes and s.metadata
    base = make_retriever("aethel-hybrid")
    assert r.graph.get_params() == base.graph.get_params()
    assert s.replace(anchors="joint") == base.hybrid_settings


def test_search_equals_eval_and_names_the_anchor(tmp_path, capsys, monkeypatch):
    """``aethel index`` + ``aethel search --method aethel-anchors`` rank as the retriever ``aethel eval`` fits
    (the registry's), and the JSON's provenance of every hit starts with its anchor."""
    import json

    from aethel_lite.cli import main
    from aethel_lite.retrievers.dense import INDEX_PRECISION, PRECISION_ENV

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
        anchored = anchors.question_anchors(fitted, text)
        assert bool(anchored) == (qid != "one")
        firsts = {h["provenance"][0]["via"] for h in hits}
        assert firsts == ({"anchor"} if anchored else firsts - {"anchor"})
