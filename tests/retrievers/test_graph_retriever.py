"""GraphRetriever: entity graph + PPR (± BCT) behind the common Retriever interface."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from builders import build

from aethel_lite.data.schema import Passage, Query
from aethel_lite.errors import DataError, ParameterError
from aethel_lite.explain import explained_search
from aethel_lite.explain.diagnostics import reliance, summarize
from aethel_lite.retrievers import GraphRetriever, params_json

PASSAGES = [
    Passage("p0", "d0", "", "NorthRiver Capital Partners IV reported a net IRR of 14.2% for the quarter."),
    Passage("p1", "d1", "", "Helios Fleet was acquired by NorthRiver Capital Partners IV in 2021."),
    Passage("p2", "d2", "", "Helios Fleet operates delivery vans across Ohio and Michigan."),
    Passage("p3", "d3", "", "Blue Harbor Fund III holds stakes in Vesta Foods and Orion Labs."),
    Passage("p4", "d4", "", "Orion Labs makes sensors; Vesta Foods makes soup."),
    Passage("p5", "d5", "", "the weather was pleasant and nobody mentioned anything in particular."),
]


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:  # restored when the module's tests end
        mp.setenv("AETHEL_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield build(extractor="regex", bct="none").fit(PASSAGES)


def test_ranking_equals_networkx_ppr_on_the_same_graph(fitted):
    q = Query("q1", "What did Helios Fleet report?", frozenset({"p2"}))
    result = explained_search(fitted, [q], k=6)
    run = result.run
    graph = fitted.graph_
    exps = result.seeds["q1"]
    assert exps, "the question names Helios Fleet, which the graph knows"
    G = nx.from_scipy_sparse_array(graph.adjacency())
    seeds = {graph.n_passages + graph.entity_index[e.entity]: e.weight for e in exps}
    pr = nx.pagerank(G, alpha=1 - fitted.alpha, personalization=seeds, tol=1e-13, max_iter=10_000)
    reached = sorted((i for i in range(graph.n_passages) if pr[i] > 1e-12), key=lambda i: (-pr[i], i))
    got = [pid for pid, score in run["q1"] if score > 0]
    assert got == [graph.pids[i] for i in reached]
    for pid, score in run["q1"]:
        if score > 0:
            assert score == pytest.approx(pr[graph.pid_index[pid]], abs=1e-7)


def test_unreached_passages_follow_reached_ones_ordered_by_bm25(fitted):
    q = Query("q1", "Which fund acquired Helios Fleet?", frozenset({"p1"}))
    hits = fitted.search([q], k=6)["q1"]
    scores = [s for _, s in hits]
    assert len(hits) == 6
    assert all(scores[i] >= scores[i + 1] for i in range(5))
    reached = [s for s in scores if s > 0]
    assert reached and all(-1 <= s < 0 for s in scores[len(reached) :])


def test_multi_hop_passage_reached_through_shared_entity(fitted):
    # The question names only Helios Fleet; p0 (the IRR) is reachable only through NorthRiver in p1.
    q = Query("q1", "Who owns Helios Fleet?", frozenset({"p0", "p1"}))
    pids = [pid for pid, s in fitted.search([q], k=6)["q1"] if s > 0]
    assert {"p1", "p2"} <= set(pids[:2]) and "p0" in pids


def test_closed_pool_ranks_only_the_pool_and_unknown_pid_is_named(fitted):
    q = Query("q1", "Helios Fleet", frozenset({"p2"}), pool=("p2", "p3", "p5"))
    hits = fitted.search([q], k=10, pool="query")["q1"]
    assert {pid for pid, _ in hits} == {"p2", "p3", "p5"}
    assert hits[0][0] == "p2"
    bad = Query("q2", "Helios Fleet", frozenset({"p2"}), pool=("p2", "nope"))
    with pytest.raises(DataError, match="nope"):
        fitted.search([bad], pool="query")


def test_query_without_entity_uses_bm25_teleport(fitted):
    q = Query("q1", "was the weather pleasant?", frozenset({"p5"}))
    result = explained_search(fitted, [q], k=3)
    hits = result.run["q1"]
    assert result.seeds["q1"] == []
    assert hits[0][0] == "p5"


def test_provenance_names_the_seed_entity(fitted):
    q = Query("q1", "Helios Fleet", frozenset({"p2"}))
    prov = explained_search(fitted, [q], k=3).provenance["q1"]
    assert any(e.seed == "helios fleet" for e in prov["p2"])


def test_batched_open_search_equals_one_at_a_time(fitted):
    qs = [
        Query(f"q{i}", t, frozenset({"p0"}))
        for i, t in enumerate(["Helios Fleet", "Orion Labs", "Vesta Foods soup", "nothing here"])
    ]
    together = fitted.search(qs, k=6)
    for q in qs:
        alone = fitted.search([q], k=6)
        assert [p for p, _ in alone[q.qid]] == [p for p, _ in together[q.qid]]
        np.testing.assert_allclose([s for _, s in alone[q.qid]], [s for _, s in together[q.qid]], atol=1e-9)


@pytest.mark.parametrize(
    "kwargs, match", [({"alpha": 0.0}, "alpha"), ({"alpha": 1.5}, "alpha"), ({"bct": "maybe"}, "bct")]
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        build(extractor="regex", **kwargs).fit(PASSAGES)


def test_empty_query_and_empty_corpus(fitted):
    with pytest.raises(ParameterError, match="q9"):
        fitted.search([Query("q9", "  ", frozenset({"p0"}))])
    with pytest.raises(DataError, match="empty corpus"):
        build(extractor="regex").fit([])


def test_bct_reaches_alias_that_plain_ppr_cannot(tmp_path, monkeypatch):
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path))
    passages = [
        Passage("a", "a", "", "NRCP IV reported unfunded commitments of 12 million."),
        Passage("b", "b", "", "Blue Harbor Fund reported unfunded commitments of 9 million."),
    ]
    table = {"northriver capital partners iv": ["nrcp iv"], "nrcp iv": ["northriver capital partners iv"]}
    q = Query("q", "What are the unfunded commitments of NorthRiver Capital Partners IV?", frozenset({"a"}))
    plain = build(extractor="regex", bct="none", alias_table=table).fit(passages)
    bct = build(extractor="regex", bct="alias", alias_table=table).fit(passages)
    plain_result = explained_search(plain, [q], k=2)
    assert plain_result.run["q"][0][1] <= 0 or plain_result.seeds["q"] == []
    result = explained_search(bct, [q], k=2)
    top = result.run["q"][0]
    assert top[0] == "a" and top[1] > 0
    assert any(e.via == "alias" for e in result.provenance["q"]["a"])


def test_query_linking_needs_a_capital_or_digit(tmp_path, monkeypatch):
    """Lowercase question words never link to graph entities (NER on filings yields junk keys)."""
    from aethel_lite.core.graph import build_graph

    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path))
    passages = [
        Passage("a", "a", "", "3M reported capital expenditures."),
        Passage("b", "b", "", "In Orion Labs news."),
    ]
    g = build(extractor="regex").fit(passages)
    # plant junk keys, as a noisy NER would: "in" and "capital"
    junk = build_graph(["a", "b"], [["3m", "capital"], ["in", "orion labs"]])
    g = GraphRetriever.from_graph(passages, junk, g.bm25_, **g.get_params())
    assert set(g.graph_.entities) == {"3m", "capital", "in", "orion labs"}
    keys = g.query_keys("What was the capital expenditure of 3M in 2018?")
    assert "3m" in keys and "in" not in keys and "capital" not in keys
    assert g.query_keys("In which year did Orion Labs launch?") == ["orion labs"]


# ----------------------------------------------------------------------------------------------
# fallback="none" (the pure graph) and the diagnostics of how much BM25 supplied
# ----------------------------------------------------------------------------------------------
HELIOS = Query("qh", "Helios Fleet", frozenset({"p2"}))  # seeds helios fleet: reaches p1, p2 and (via p1) p0
WEATHER = Query("qw", "pleasant weather", frozenset({"p5"}))  # no entity; only p5 has these words


@pytest.fixture(scope="module")
def pure(fitted):  # after `fitted`, which points the entity cache at a temporary folder
    return build(extractor="regex", bct="none", fallback="none").fit(PASSAGES)


def test_pure_graph_returns_only_reached_passages(pure):
    hits = pure.search([HELIOS], k=6)["qh"]
    graph = pure.graph_
    G = nx.from_scipy_sparse_array(graph.adjacency())
    seeds = {graph.n_passages + graph.entity_index["helios fleet"]: 1.0}
    pr = nx.pagerank(G, alpha=1 - pure.alpha, personalization=seeds, tol=1e-13, max_iter=10_000)
    reached = {graph.pids[i] for i in range(graph.n_passages) if pr[i] > 1e-12}
    assert reached == {"p0", "p1", "p2"}
    assert {pid for pid, _ in hits} == reached and len(hits) == 3
    assert all(score > 0 for _, score in hits)


def test_pure_graph_closed_pool_ranks_only_reached_candidates(pure):
    q = Query("q1", "Helios Fleet", frozenset({"p2"}), pool=("p2", "p3", "p5"))
    assert [pid for pid, _ in pure.search([q], k=10, pool="query")["q1"]] == ["p2"]


def test_entity_less_question_empty_under_none_bm25_seeded_under_bm25(fitted, pure):
    result = explained_search(pure, [WEATHER], k=5)
    assert result.run["qw"] == []
    assert result.diagnostics["qw"] == {
        "fallback": False,
        "n_seed_entities": 0,
        "n_reached": 0,
        "bm25_ordered_top5": 0,
    }
    result = explained_search(fitted, [WEATHER], k=5)
    hits = result.run["qw"]
    assert hits[0][0] == "p5" and hits[0][1] > 0  # the BM25 teleport lands on p5
    assert result.diagnostics["qw"]["fallback"] is True


def test_diagnostics_count_seeds_reach_and_bm25_slots(fitted, pure):
    result = explained_search(fitted, [HELIOS, WEATHER], k=5)
    # HELIOS: one seed, reaches p0-p2; the two other top-5 slots are unreached passages in BM25 order
    assert result.diagnostics["qh"] == {
        "fallback": False,
        "n_seed_entities": 1,
        "n_reached": 3,
        "bm25_ordered_top5": 2,
    }
    # WEATHER: the BM25 teleport lands on p5 only (no entity, isolated): 1 reached, 4 BM25-ordered
    assert result.diagnostics["qw"] == {
        "fallback": True,
        "n_seed_entities": 0,
        "n_reached": 1,
        "bm25_ordered_top5": 4,
    }
    assert result.summary() == {"fallback_share": 0.5, "bm25_top5_share": 0.6, "n_queries": 2}
    assert reliance(fitted, [HELIOS, WEATHER], result.run, 5) == result.summary()
    assert explained_search(fitted, [HELIOS], k=3).summary() == {
        "fallback_share": 0.0,
        "bm25_top5_share": 0.0,
        "n_queries": 1,
    }
    result = explained_search(pure, [HELIOS, WEATHER], k=5)
    assert result.diagnostics["qh"] == {
        "fallback": False,
        "n_seed_entities": 1,
        "n_reached": 3,
        "bm25_ordered_top5": 0,
    }
    assert result.summary() == {"fallback_share": 0.0, "bm25_top5_share": 0.0, "n_queries": 2}


def test_fallback_setting_is_in_the_settings_and_checked():
    assert params_json(build(extractor="regex"))["fallback"] == "bm25"
    assert params_json(build(extractor="regex", fallback="none"))["fallback"] == "none"
    with pytest.raises(ParameterError, match="fallback"):
        build(extractor="regex", fallback="dense").fit(PASSAGES)
    assert summarize({}, 5) == {"fallback_share": None, "bm25_top5_share": None, "n_queries": 0}


def test_a_setting_changed_after_fit_needs_a_new_fit(pure):
    """set_params (scikit-learn's) unfits the retriever: a search before the next fit is refused, and the next fit
    checks the setting."""
    r = GraphRetriever(**pure.get_params())
    r.fit(PASSAGES)
    r.set_params(fallback="maybe")
    with pytest.raises(RuntimeError, match="not fitted"):
        r.search([HELIOS])
    with pytest.raises(ParameterError, match="fallback"):
        r.fit(PASSAGES)
