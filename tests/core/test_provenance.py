"""Exact per-seed shares of Personalized PageRank (aethel_lite.core.provenance, explain.attribution) and how gold
passages are reached (explain.reach), against networkx and a direct solve."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from aethel_lite.core.ppr import personalized_pagerank
from aethel_lite.core.provenance import SeedShare, ppr_parts, seed_contributions
from aethel_lite.data.schema import Query
from aethel_lite.data.synthetic import alias_table, make_synthetic
from aethel_lite.errors import ParameterError
from aethel_lite.explain import explain, explained_search
from aethel_lite.retrievers import clone
from aethel_lite.retrievers.graph import GraphRetriever
from aethel_lite.retrievers.hybrid import DEFAULT_SEED_WEIGHTS, HybridRetriever

#: every hybrid addition off (HybridRetriever's settings): a test names the ones it uses
OFF = {
    "passage_seeds": (),
    "document_nodes": False,
    "metadata": False,
    "period_linking": False,
    "seed_weights": DEFAULT_SEED_WEIGHTS,
    "seed_depth": 20,
    "rank_weights": None,
    "period_decay": 1.0,
}


def nx_ppr(adjacency, seeds: dict[int, float], alpha: float) -> np.ndarray:
    """networkx.pagerank (damping 1 - alpha), edge j -> i of weight A[i, j]: the independent oracle."""
    n = adjacency.shape[0]
    g = nx.from_scipy_sparse_array(sp.csr_matrix(adjacency).T, create_using=nx.DiGraph)
    g.add_nodes_from(range(n))
    pers = {i: float(seeds.get(i, 0.0)) for i in range(n)}
    pr = nx.pagerank(g, alpha=1.0 - alpha, personalization=pers, tol=1e-14 / n, max_iter=100_000)
    return np.array([pr[i] for i in range(n)])


def random_bipartite(seed: int, n_p: int = 30, n_e: int = 20) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    b = (rng.random((n_p, n_e)) < 0.12).astype(float)
    b[:3] = 0.0  # isolated passages (dangling nodes: their PageRank returns to the seeds)
    a = np.block([[np.zeros((n_p, n_p)), b], [b.T, np.zeros((n_e, n_e))]])
    return sp.csr_matrix(a)


@pytest.mark.parametrize("alpha", [0.15, 0.5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shares_sum_to_the_direct_solve_and_to_networkx(seed, alpha):
    adj = random_bipartite(seed)
    rng = np.random.default_rng(100 + seed)
    s = np.zeros(adj.shape[0])
    nodes = rng.choice(adj.shape[0], size=6, replace=False)
    nodes[0] = 0  # one seed on an isolated passage: the naive weights (the seed masses) are then wrong
    s[nodes] = rng.random(6) + 0.1
    got_nodes, C = seed_contributions(adj, s, alpha=alpha, tol=1e-13)
    assert sorted(got_nodes.tolist()) == sorted(nodes.tolist())
    direct = personalized_pagerank(adj, s, alpha=alpha, tol=1e-13).scores
    np.testing.assert_allclose(C.sum(axis=1), direct, atol=1e-11)
    oracle = nx_ppr(adj, {int(i): s[i] for i in nodes}, alpha)
    np.testing.assert_allclose(C.sum(axis=1), oracle, atol=1e-10)
    # each column is (a multiple of) the PageRank of its seed alone, as networkx computes it
    for j, node in enumerate(got_nodes):
        alone = nx_ppr(adj, {int(node): 1.0}, alpha)
        np.testing.assert_allclose(C[:, j] / C[:, j].sum(), alone, atol=1e-10)
    # and the naive split (seed mass x its own PageRank) does not add up here: the test can fail
    naive = sum(s[n] / s.sum() * nx_ppr(adj, {int(n): 1.0}, alpha) for n in got_nodes)
    assert np.abs(naive - direct).sum() > 1e-3


def test_directed_graph_with_dangling_nodes_against_networkx():
    rng = np.random.default_rng(7)
    a = (rng.random((25, 25)) < 0.1).astype(float)
    np.fill_diagonal(a, 0.0)
    a[:, :4] = 0.0  # nodes 0-3 have no out-edges (dangling) but may have in-edges
    s = np.zeros(25)
    s[[0, 5, 9, 17]] = [0.4, 0.3, 0.2, 0.1]
    _, C = seed_contributions(a, s, alpha=0.3, tol=1e-13)
    np.testing.assert_allclose(C.sum(axis=1), nx_ppr(a, {0: 0.4, 5: 0.3, 9: 0.2, 17: 0.1}, 0.3), atol=1e-10)


def test_parts_group_seeds_and_rows_select_nodes():
    adj = random_bipartite(3)
    n = adj.shape[0]
    parts = np.zeros((n, 2))
    parts[[31, 33], 0] = [1.0, 2.0]  # entities
    parts[[0, 40], 1] = [0.5, 0.5]  # an isolated passage and an entity
    C = ppr_parts(adj, parts, alpha=0.5, tol=1e-13, rows=[5, 31, 0])
    direct = personalized_pagerank(adj, parts.sum(axis=1), alpha=0.5, tol=1e-13).scores
    np.testing.assert_allclose(C.sum(axis=1), direct[[5, 31, 0]], atol=1e-11)
    # a group's contribution equals the sum of its nodes' contributions
    _, per_node = seed_contributions(adj, parts.sum(axis=1), alpha=0.5, tol=1e-13, rows=[5, 31, 0])
    nodes = np.flatnonzero(parts.sum(axis=1))
    first = np.isin(nodes, [31, 33])
    np.testing.assert_allclose(per_node[:, first].sum(axis=1), C[:, 0], atol=1e-11)


@pytest.mark.parametrize(
    "bad, message",
    [
        (np.zeros(4), "not all zero"),
        (np.array([1.0, -1.0, 0.0, 0.0]), ">= 0"),
        (np.array([1.0, np.nan, 0.0, 0.0]), "finite"),
        (np.ones(3), "shape"),
    ],
)
def test_bad_seeds_are_clear_errors(bad, message):
    a = np.ones((4, 4)) - np.eye(4)
    with pytest.raises(ParameterError, match=message):
        seed_contributions(a, bad, alpha=0.5)


def test_part_without_mass_is_an_error():
    a = np.ones((3, 3)) - np.eye(3)
    with pytest.raises(ParameterError, match="column 1 has no mass"):
        ppr_parts(a, np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]), alpha=0.5)


# -- GraphRetriever.explain --------------------------------------------------------------------
@pytest.fixture(scope="module")
def synthetic():
    return make_synthetic(300, seed=0)


@pytest.fixture(scope="module")
def bct(synthetic):
    return GraphRetriever(
        extractor="regex", bct="both", alias_table=alias_table(synthetic), tol=1e-12, cache=False
    ).fit(synthetic.passages)


def test_explain_shares_sum_to_each_hits_score_open_corpus(bct, synthetic):
    queries = synthetic.queries[:6]
    result = explained_search(bct, queries, k=8)
    run = result.run
    for q in queries:
        hits = run[q.qid]
        shares = explain(bct, q.text, [pid for pid, _ in hits])
        for pid, score in hits:
            if score > 0:
                assert shares[pid], pid
                assert sum(s.share for s in shares[pid]) == pytest.approx(score, abs=1e-9)
            else:  # ranked by BM25: PPR never reached it
                assert shares[pid] == []
        # every entity seed is one of the question's BCT expansions, with its rule
        exps = {(e.seed, e.entity, e.via) for e in result.seeds[q.qid]}
        assert {(s.seed, s.entity, s.via) for v in shares.values() for s in v} <= exps


def test_explain_in_a_closed_pool_matches_networkx(bct, synthetic):
    q = synthetic.queries[1]
    gold = sorted(q.gold)
    pool_pids = gold + [p.pid for p in synthetic.passages if p.pid not in q.gold][:25]
    pool = np.array(sorted(bct.pid_index_[p] for p in pool_pids))
    run = bct.search([q], k=len(pool), pool={q.qid: [bct.pids_[i] for i in pool]})
    shares = explain(bct, q.text, [pid for pid, _ in run[q.qid]], pool=[bct.pids_[i] for i in pool])
    graph = bct.pool_graph(pool)
    _, seeds, _ = bct.personalization(q.text, graph, pool)
    oracle = nx_ppr(graph.adjacency(), {int(i): seeds[i] for i in np.flatnonzero(seeds)}, bct.alpha)
    for pid, score in run[q.qid]:  # noqa: B007
        assert sum(s.share for s in shares[pid]) == pytest.approx(oracle[graph.passage_node(pid)], abs=1e-9)


def test_explain_of_a_question_without_entities_splits_the_bm25_teleport(bct, synthetic):
    q = Query(qid="plain", text="what was the unfunded commitment of the fund", gold=frozenset())
    result = explained_search(bct, [q], k=5)
    run = result.run
    assert result.diagnostics["plain"]["fallback"]
    shares = explain(bct, q.text, [pid for pid, _ in run["plain"]])
    for pid, score in run["plain"]:
        assert all(s.seed == "bm25" and s.via == "bm25-teleport" for s in shares[pid])
        assert sum(s.share for s in shares[pid]) == pytest.approx(score, abs=1e-9)


def test_explain_of_a_hybrid_retriever_covers_every_source(synthetic):
    r = HybridRetriever(
        graph=GraphRetriever(
            extractor="regex", bct="both", alias_table=alias_table(synthetic), tol=1e-12, cache=False
        ),
        **{**OFF, "passage_seeds": ("lexical",), "seed_depth": 5},
    ).fit(synthetic.passages)
    q = synthetic.queries[2]
    run = r.search([q], k=5)
    shares = explain(r, q.text, [pid for pid, _ in run[q.qid]])
    P, _, _ = r.ppr([q.text])
    vias = set()
    for pid, _ in run[q.qid]:
        vias |= {s.via for s in shares[pid]}
        assert sum(s.share for s in shares[pid]) == pytest.approx(P[r.pid_index_[pid], 0], abs=1e-9)
    assert "lexical" in vias and vias & {"exact", "alias", "substring", "token"}


def test_seed_share_is_plain_json():
    assert SeedShare("a", "b", "exact", 0.25).to_dict() == {
        "seed": "a",
        "entity": "b",
        "via": "exact",
        "share": 0.25,
    }


# -- how gold passages are reached; BCT intrusions --------------------------------------------------
CHAIN = [
    "Northwind Trading bought Baxter Mills last year.",
    "Baxter Mills is based in Gamma City.",
    "Gamma City hosts Delta Works.",
    "Delta Works employs many.",
    "Northwind Trading Europe reported growth.",
    "Omega Labs sold Zeta Group.",
]
EXPECTED = {"p0": "direct", "p1": "two-hop", "p2": "longer", "p3": "longer", "p4": "bct", "p5": "unreached"}


def chain_passages():
    from aethel_lite.data.schema import Passage

    return [Passage(f"p{i}", f"d{i}", "", t) for i, t in enumerate(CHAIN)]


@pytest.fixture(scope="module")
def chain():
    return GraphRetriever(extractor="regex", bct="both", cache=False).fit(chain_passages())


def exact_seeds(r):
    """``r`` fitted again with ``bct="none"`` (a fresh fit: independent of ``reach.without_bct``)."""
    return clone(r).set_params(bct="none").fit(chain_passages())


def test_gold_reach_categories_against_networkx_path_lengths(chain):
    from aethel_lite.explain.reach import gold_reach

    pool = tuple(f"p{i}" for i in range(6))
    q = Query("q", "Who owns Northwind Trading?", frozenset(pool), pool=pool)
    got = gold_reach(chain, q)
    assert {pid: g["category"] for pid, g in got.items()} == EXPECTED
    g = chain.graph_.to_networkx()
    seeds = [("e", e.entity) for e in chain.expansions(q.text)]
    exact = [("e", "northwind trading")]
    for pid, found in got.items():
        lengths = [nx.shortest_path_length(g, s, ("p", pid)) for s in seeds if nx.has_path(g, s, ("p", pid))]
        assert found["distance"] == (min(lengths) if lengths else None), pid
        assert found["bct_only"] == (bool(lengths) and not any(nx.has_path(g, s, ("p", pid)) for s in exact))
    assert got["p4"]["via"] == [["northwind trading", "northwind trading europe", "substring"]]
    # without BCT the Europe passage is not reached at all
    plain = gold_reach(exact_seeds(chain), q)
    assert plain["p4"]["category"] == "unreached" and plain["p0"]["category"] == "direct"


def test_bct_intrusion_names_the_rule_and_the_displaced_gold(chain):
    from aethel_lite.explain.reach import bct_intrusions, provenance_report

    pool = tuple(f"p{i}" for i in range(6))
    q = Query("q2", "Who owns Northwind Trading?", frozenset({"p1"}), pool=pool)
    (row,) = bct_intrusions(chain, q, k=2)
    assert row == {
        "pid": "p4",
        "rank": 2,
        "bct_fraction": pytest.approx(1.0),
        "seed": "northwind trading",
        "entity": "northwind trading europe",
        "via": "substring",
        "displaced_gold": ["p1"],
    }
    assert bct_intrusions(exact_seeds(chain), q, k=2) == []
    report = provenance_report(
        chain, [q, Query("q3", "Where is Gamma City?", frozenset({"p2"}), pool=pool)], k=2
    )
    assert report["n_queries"] == 2 and report["n_gold"] == 2
    assert report["gold_reach"]["two-hop"] == 1 and report["gold_reach"]["direct"] == 1
    assert report["intrusions"] == {"n_passages": 1, "n_questions": 1, "n_questions_displacing_gold": 1}
    assert report["intrusion_rows"][0]["qid"] == "q2"


def test_hit_chains_shares_add_up_and_say_whether_the_passage_names_the_seed(chain):
    from aethel_lite.explain.reach import hit_chains

    pool = tuple(f"p{i}" for i in range(6))
    q = Query("q", "Who owns Northwind Trading?", frozenset({"p1"}), pool=pool)
    hits = hit_chains(chain, q, k=3)
    assert [h["pid"] for h in hits][:2] == ["p0", "p4"]
    for h in hits:
        assert h["ppr"] == pytest.approx(h["score"], abs=1e-8)
        assert sum(c["fraction"] for c in h["chains"]) == pytest.approx(1.0)
    top = hits[0]["chains"][0]
    assert (top["seed"], top["entity"], top["via"], top["mentioned"]) == ("northwind trading",) * 2 + (
        "exact",
        True,
    )
    p1 = next(h for h in hits if h["pid"] == "p1")
    assert p1["gold"] and not any(c["mentioned"] for c in p1["chains"])  # reached by a two-hop path


def test_hybrid_source_split_is_exact_when_a_passage_seed_has_no_entities():
    """attribution.source_shares weighs each source's PageRank exactly (part_weights), also when a BM25 seed is
    an isolated passage (a dangling node, whose mass returns to the seeds): it agrees with explain(), which is
    checked against networkx above, and not with the naive split by seed mass."""
    from aethel_lite.data.schema import Passage

    texts = [
        "Northwind Trading bought Baxter Mills.",
        "Baxter Mills is based in Gamma City.",
        "the quarterly report of the trading desk was late",
        "Gamma City hosts Delta Works.",
    ]
    passages = [Passage(f"p{i}", f"d{i}", "", t) for i, t in enumerate(texts)]
    r = HybridRetriever(
        graph=GraphRetriever(extractor="regex", bct="none", cache=False, tol=1e-12),
        **{**OFF, "passage_seeds": ("lexical",), "seed_depth": 2},
    ).fit(passages)
    assert r.graph_.incidence[2].nnz == 0  # p2 mentions no entity: an isolated node
    q = Query("q", "Which trading report did Northwind Trading file?", frozenset({"p0"}))
    result = explained_search(r, [q], k=4)
    run = result.run
    shares = explain(r, q.text, [pid for pid, _ in run["q"]])
    assert any(s.via == "lexical" and s.entity == "p2" for v in shares.values() for s in v)
    for pid, _ in run["q"]:
        total = sum(s.share for s in shares[pid])
        by_source = {}
        for s in shares[pid]:
            src = "lexical" if s.via == "lexical" else "entity"
            by_source[src] = by_source.get(src, 0.0) + s.share / total
        got = result.sources["q"][pid]
        assert set(got) == set(by_source)
        for src, v in by_source.items():
            assert got[src] == pytest.approx(v, abs=1e-8), (pid, src)
    # the naive split (source mass x its PageRank) gives other shares here: the test can fail
    exps, comps, _ = r.seed_components(q.text)
    mix = r.mixture(comps)
    naive = {c: mix[c] * r.operator_.run(comps[c], alpha=r.alpha, tol=1e-12).scores for c in comps}
    i = r.pid_index_["p0"]
    naive_share = naive["lexical"][i] / (naive["lexical"][i] + naive["entity"][i])
    assert abs(naive_share - result.sources["q"]["p0"]["lexical"]) > 1e-3


def test_explain_of_a_document_ranked_hybrid_splits_the_document_nodes_pagerank():
    from conftest import toy_filings

    toy = toy_filings()
    graph = GraphRetriever(extractor="regex", bct="both", tol=1e-12, cache=False)
    settings = {
        **OFF,
        "passage_seeds": ("lexical",),
        "seed_depth": 3,
        "document_nodes": True,
        "metadata": True,
        "period_linking": True,
    }
    r = HybridRetriever(graph=graph, **{**settings, "rank_weights": {"document": 0.6, "lexical": 0.4}}).fit(
        toy.passages
    )
    assert r.explains_documents
    q = toy.queries[1]
    hits = [pid for pid, _ in r.search([q], k=6)[q.qid]]
    shares = explain(r, q.text, hits)
    P, _, _ = r.ppr([q.text])
    docs = r.doc_nodes(r.graph_, None)
    for pid in hits:
        doc_ppr = P[docs[r.pid_index_[pid]], 0]
        assert doc_ppr > 0 and sum(s.share for s in shares[pid]) == pytest.approx(doc_ppr, abs=1e-9)
    from aethel_lite.errors import DataError

    with pytest.raises(DataError):  # as for any graph method: a pid outside the graph searched
        explain(r, q.text, ["no-such-page"])
    same = HybridRetriever(graph=graph, **{**settings, "rank_weights": {"ppr": 0.5, "document": 0.5}}).fit(
        toy.passages
    )
    assert not same.explains_documents  # a passage-PageRank term: its own PageRank is explained
    for pid, found in explain(same, q.text, hits).items():
        assert sum(s.share for s in found) == pytest.approx(P[r.pid_index_[pid], 0], abs=1e-9)
