"""Error analysis of the graph retriever on a hand-built corpus whose answers are known.

The corpus mimics a filing set: "Acme" is on every page of two Acme filings (a hub), the
capital-expenditure pages of both years mention the same entities (so PPR ties them), and a
page without entities can only be found through BM25.
"""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest

from aethel_lite.data.schema import Passage, Query
from aethel_lite.errors import DataError, ParameterError
from aethel_lite.retrievers import BM25Retriever, GraphRetriever, topk
from aethel_lite.studies import analysis as A

PASSAGES = [
    Passage("a0", "ACME_2018", "", "Acme Corp annual report."),  # acme
    Passage(
        "a1", "ACME_2018", "", "Acme Corp cash flow: Capital Expenditure was 12 million."
    ),  # acme, capital expenditure
    Passage("a2", "ACME_2018", "", "Acme Corp balance sheet."),  # acme
    Passage("b0", "ACME_2019", "", "Acme Corp annual report."),  # acme
    Passage(
        "b1", "ACME_2019", "", "Acme Corp cash flow: Capital Expenditure was 15 million."
    ),  # acme, capital expenditure
    Passage("z0", "ZETA_2018", "", "Zeta Labs reported revenue."),  # zeta labs
    Passage("z1", "ZETA_2018", "", "no names here at all."),  # (none)
    Passage("z2", "ZETA_2018", "", "Zeta Labs bought Orion Labs."),  # zeta labs, orion labs
    Passage("z3", "ZETA_2018", "", "Orion Labs makes sensors."),  # orion labs
]
N_EDGES = 11

CAPEX = Query("capex", "What was the 2018 capital expenditure of Acme Corp?", frozenset({"a1"}))
CAPEX19 = Query("capex19", "What was the capital expenditure of Acme Corp in 2019?", frozenset({"b1"}))
ZETA = Query("zeta", "What did Zeta Labs report?", frozenset({"z1"}))  # gold page has no entity
NOSEED = Query("noseed", "what happened to revenue?", frozenset({"z0"}))  # no capital letter: no seed
ORION = Query("orion", "Who bought Orion Labs?", frozenset({"z2"}))
SENSORS = Query(
    "sensors", "Who makes sensors for Zeta Labs?", frozenset({"z3"})
)  # gold reached via orion labs
QUERIES = [CAPEX, CAPEX19, ZETA, NOSEED, ORION, SENSORS]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("AETHEL_CACHE", str(tmp_path_factory.mktemp("cache")))
    yield
    mp.undo()


@pytest.fixture(scope="module")
def bm25(cache):
    return GraphRetriever(extractor="regex", fallback="bm25").fit(PASSAGES)


@pytest.fixture(scope="module")
def pure(cache):
    return GraphRetriever(extractor="regex", fallback="none").fit(PASSAGES)


def nx_ppr(retriever, seeds: dict[str, float]) -> np.ndarray:
    """Independent oracle: networkx PageRank with a personalization vector on the same graph."""
    graph = retriever.graph_
    G = nx.from_scipy_sparse_array(graph.adjacency())
    pers = {graph.entity_node(e): w for e, w in seeds.items()}
    pr = nx.pagerank(G, alpha=1 - retriever.alpha, personalization=pers, tol=1e-13, max_iter=10_000)
    return np.array([pr[i] for i in range(graph.n_nodes)])


def oracle_rank(values: np.ndarray, i: int) -> int | None:
    """Rank of passage i in a brute-force sort by (-value, index); None if it has no mass."""
    if values[i] <= 1e-12:
        return None
    order = sorted(range(len(values)), key=lambda j: (-round(values[j], 10), j))
    return order.index(i) + 1


# ----------------------------------------------------------------------------------- gold_rank
@pytest.mark.parametrize("seed", range(10))
def test_gold_rank_matches_topk_order_with_ties_and_unranked(seed):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 4, size=30).astype(float)
    scores[rng.random(30) < 0.2] = -np.inf
    gold = rng.choice(30, size=3, replace=False).tolist()
    order = topk(scores, 30)[0].tolist()
    ranked = [order.index(g) + 1 for g in gold if scores[g] != -np.inf]
    assert A.gold_rank(scores, gold) == (min(ranked) if ranked else None)


def test_gold_rank_edge_cases():
    assert A.gold_rank(np.array([1.0, 2.0]), []) is None
    assert A.gold_rank(np.array([1.0, 1.0, 1.0]), [2]) == 3  # ties by corpus order
    assert A.gold_rank(np.array([np.nan, 1.0]), [0]) is None
    with pytest.raises(ParameterError, match="outside"):
        A.gold_rank(np.array([1.0]), [3])


def test_gold_ranks_pure_graph_equal_networkx_ranks(pure):
    ranks = A.gold_ranks(pure, QUERIES)
    graph = pure.graph_
    for q in QUERIES:
        keys = [e.entity for e in pure.expansions(q.text)]
        (gold,) = q.gold
        expected = None
        if keys:
            p = nx_ppr(pure, {k: 1.0 for k in keys})[: graph.n_passages]
            expected = oracle_rank(p, graph.pid_index[gold])
        assert ranks[q.qid] == expected, q.qid
    assert ranks == {"capex": 1, "capex19": 2, "zeta": None, "noseed": None, "orion": 1, "sensors": 3}


def test_gold_ranks_with_bm25_fallback_rank_every_gold(bm25):
    ranks = A.gold_ranks(bm25, QUERIES)
    assert all(isinstance(r, int) for r in ranks.values())
    # the unreached gold z1 follows the reached passages z0, z2, z3
    assert ranks["zeta"] > 3 and ranks["capex"] == 1 and ranks["capex19"] == 2


# -------------------------------------------------------------------------------- seed_report
def test_seed_report_hub_seed_degree_documents_and_gold(bm25):
    rep = A.seed_report(bm25, CAPEX)
    assert rep["seeds"] == [
        {
            "entity": "acme",
            "degree": 5,
            "n_documents": 2,
            "query_key": "acme",
            "found_by": "mention",
            "weight": 1.0,
            "on_gold": True,
        }
    ]
    # "capital expenditure" is a graph entity, but the question writes it in lowercase: never a seed
    assert [k["key"] for k in rep["query_keys"]] == ["acme"]
    assert rep["n_seeds"] == 1 and rep["gold_has_seed"] is True and rep["fallback"] is False
    rep = A.seed_report(bm25, SENSORS)
    assert [s["entity"] for s in rep["seeds"]] == ["zeta labs"] and rep["gold_has_seed"] is False


def test_seed_report_names_ngram_links_and_bct_rules(cache):
    q = Query("q", "When was the Zeta Labs Orion Labs deal closed?", frozenset({"z2"}))
    rep = A.seed_report(GraphRetriever(extractor="regex").fit(PASSAGES), q)
    assert rep["query_keys"] == [
        {"key": "zeta labs orion labs", "found_by": "mention", "in_graph": False},
        {"key": "zeta labs", "found_by": "ngram", "in_graph": True},
        {"key": "orion labs", "found_by": "ngram", "in_graph": True},
    ]
    assert {s["entity"]: s["found_by"] for s in rep["seeds"]} == {"orion labs": "ngram", "zeta labs": "ngram"}
    assert sum(s["weight"] for s in rep["seeds"]) == pytest.approx(1.0)
    sub = GraphRetriever(extractor="regex", bct="substring").fit(PASSAGES)
    rep = A.seed_report(sub, Query("q", "Who owns Orion?", frozenset({"z3"})))
    assert [(s["entity"], s["query_key"], s["found_by"]) for s in rep["seeds"]] == [
        ("orion labs", "orion", "bct-substring")
    ]


def test_hub_entities(bm25):
    hubs = A.hub_entities(bm25, top=3)
    assert hubs == [
        {"entity": "acme", "degree": 5, "n_documents": 2, "surface": "Acme Corp", "edge_share": 5 / N_EDGES},
        {
            "entity": "capital expenditure",
            "degree": 2,
            "n_documents": 2,
            "surface": "Capital Expenditure",
            "edge_share": 2 / N_EDGES,
        },
        {
            "entity": "orion labs",
            "degree": 2,
            "n_documents": 1,
            "surface": "Orion Labs",
            "edge_share": 2 / N_EDGES,
        },
    ]
    assert len(A.hub_entities(bm25, top=100)) == bm25.graph_.n_entities
    with pytest.raises(ParameterError, match="top"):
        A.hub_entities(bm25, top=0)


# -------------------------------------------------------------------------------- mass_report
def test_mass_report_vector_equals_networkx_pagerank(bm25):
    rep = A.mass_report(bm25, CAPEX)
    graph = bm25.graph_
    p = np.array(rep["ppr"])
    expected = nx_ppr(bm25, {"acme": 1.0})
    np.testing.assert_allclose(p, expected, atol=1e-8)
    n_p = graph.n_passages
    assert rep["n_passages"] == n_p
    assert rep["passage_share"] == pytest.approx(expected[:n_p].sum(), abs=1e-8)
    assert rep["passage_share"] + rep["entity_share"] == pytest.approx(1.0)
    mass = expected[:n_p].sum()
    assert rep["gold_share"] == pytest.approx(expected[graph.pid_index["a1"]] / mass, abs=1e-8)
    acme18 = [graph.pid_index[pid] for pid in ("a0", "a1", "a2")]
    assert rep["gold_doc_share"] == pytest.approx(expected[acme18].sum() / mass, abs=1e-8)
    assert rep["gold_documents"] == ["ACME_2018"]


def test_mass_report_passage_score_is_a_function_of_its_entities(bm25):
    # p_i = (1 - alpha) * sum_e B_ie p_e / d_e for every non-seed passage (the module docstring)
    graph = bm25.graph_
    p = np.array(A.mass_report(bm25, ORION)["ppr"])
    n_p = graph.n_passages
    deg = np.asarray(graph.incidence.sum(axis=0)).ravel()
    np.testing.assert_allclose(p[:n_p], (1 - bm25.alpha) * graph.incidence @ (p[n_p:] / deg), atol=1e-8)


def test_mass_report_counts_ties_and_top_entities(bm25):
    rep = A.mass_report(bm25, CAPEX, top=2)
    assert rep["n_tied_top"] == 2  # a1 and b1 mention the same entities: PPR cannot separate them
    assert rep["n_reached"] == 5
    scores = {pid: s for pid, s in bm25.search([CAPEX], k=9)["capex"]}
    assert rep["top_score"] == scores["a1"] == scores["b1"]
    assert [(e["entity"], e["is_seed"], e["degree"]) for e in rep["top_entities"]] == [
        ("acme", True, 5),
        ("capital expenditure", False, 2),
    ]
    assert rep["top_entities"][0]["mass"] > rep["top_entities"][1]["mass"]


def test_mass_report_without_seed_under_pure_graph_is_empty(pure):
    rep = A.mass_report(pure, NOSEED)
    assert not any(rep["ppr"]) and rep["n_reached"] == 0 and rep["n_tied_top"] == 0
    assert rep["passage_share"] is None and rep["gold_share"] is None and rep["top_score"] is None
    assert rep["top_entities"] == []


# ----------------------------------------------------------------------------- worked_example
@pytest.mark.parametrize(
    "which, query, reason",
    [
        ("pure", NOSEED, "no seed entity in the question: the pure graph ranks nothing"),
        (
            "bm25",
            NOSEED,
            "no seed entity in the question: gold ranked 1st, reached by the BM25-seeded teleport",
        ),
        (
            "pure",
            ZETA,
            "gold not reached: no seed entity on the gold page and no path to it from the seeds (unranked)",
        ),
        (
            "bm25",
            SENSORS,
            "gold reached only through other entities (no seed entity on the gold page): ranked 3rd",
        ),
        (
            "pure",
            CAPEX19,
            "gold reached but tied with 1 other page at the same PPR score: ranked 2nd by corpus order",
        ),
        ("pure", ORION, "gold ranked 1st: its seed 'orion labs' is also on 1 other page of 1 document"),
    ],
)
def test_worked_example_reason(request, which, query, reason):
    assert A.worked_example(request.getfixturevalue(which), query)["reason"] == reason


def test_worked_example_joins_seeds_hits_and_gold(bm25):
    ex = A.worked_example(bm25, CAPEX, k=3)
    assert [s["entity"] for s in ex["seeds"]] == ["acme"]
    assert [(h["rank"], h["pid"], h["doc_id"], h["seed_entities"]) for h in ex["hits"]] == [
        (1, "a1", "ACME_2018", ["acme"]),
        (2, "b1", "ACME_2019", ["acme"]),
        (3, "a0", "ACME_2018", ["acme"]),
    ]
    assert [h["score"] for h in ex["hits"]] == [s for _, s in bm25.search([CAPEX], k=3)["capex"]]
    (gold,) = ex["gold"]
    assert gold["pid"] == "a1" and gold["rank"] == 1 and gold["n_tied"] == 1 and gold["reached"]
    assert gold["entities"] == ["acme", "capital expenditure"] and gold["seed_entities"] == ["acme"]
    assert ex["gold_rank"] == 1 and ex["n_tied_top"] == 2
    assert len(ex["mass"]["top_entities"]) == 2  # only two entities carry mass
    assert A.worked_example(bm25, CAPEX, k=3) == ex  # deterministic


def test_worked_example_pure_graph_lists_only_reached_hits(pure):
    ex = A.worked_example(pure, SENSORS, k=9)
    assert {h["pid"] for h in ex["hits"]} == {"z0", "z2", "z3"} and all(h["reached"] for h in ex["hits"])
    assert A.worked_example(pure, NOSEED)["hits"] == []


# --------------------------------------------------------------------------- aggregate_report
def test_aggregate_report_hand_counted(bm25, pure):
    rep = A.aggregate_report(pure, QUERIES)
    assert rep["n_queries"] == rep["n_with_gold"] == 6
    assert rep["no_seed_share"] == pytest.approx(1 / 6) and rep["fallback_share"] == 0.0
    assert rep["median_seed_degree"] == 2.0  # seeds: acme 5, acme 5, zeta labs 2, orion labs 2, zeta labs 2
    assert rep["median_seed_documents"] == 1.0
    assert rep["gold_has_seed_share"] == 0.5  # capex, capex19, orion
    assert rep["gold_reached_share"] == pytest.approx(4 / 6)  # not: zeta (no entity), noseed (no seed)
    ranks = A.gold_ranks(pure, QUERIES)
    assert rep["n_gold_ranked"] == 4
    assert rep["median_gold_rank"] == float(np.median([r for r in ranks.values() if r is not None]))
    # top ties: capex 2 (a1, b1), capex19 2, zeta 1, orion 1, sensors 1
    assert rep["mean_tied_top"] == pytest.approx(7 / 5)
    assert [r["qid"] for r in rep["per_query"]] == [q.qid for q in QUERIES]
    assert rep["per_query"][0] == {
        "qid": "capex",
        "n_seeds": 1,
        "fallback": False,
        "seed_degrees": [5],
        "seed_documents": [2],
        "has_gold": True,
        "gold_has_seed": True,
        "gold_reached": True,
        "gold_rank": 1,
        "n_reached": 5,
        "n_tied_top": 2,
    }
    rep = A.aggregate_report(bm25, QUERIES)
    assert rep["fallback_share"] == pytest.approx(1 / 6)
    assert rep["gold_reached_share"] == pytest.approx(5 / 6)  # the BM25 teleport reaches z0
    assert rep["n_gold_ranked"] == 6


def test_aggregate_report_matches_the_single_question_functions(bm25):
    rep = A.aggregate_report(bm25, QUERIES)
    for q, row in zip(QUERIES, rep["per_query"]):
        ex = A.worked_example(bm25, q)
        assert row["gold_rank"] == ex["gold_rank"] and row["n_tied_top"] == ex["n_tied_top"]
        assert row["seed_degrees"] == [s["degree"] for s in ex["seeds"]]


def test_results_are_json_able(bm25, pure):
    for r in (bm25, pure):
        for value in (
            A.seed_report(r, CAPEX),
            A.mass_report(r, NOSEED),
            A.worked_example(r, ZETA),
            A.aggregate_report(r, QUERIES),
            A.hub_entities(r),
            A.gold_ranks(r, QUERIES),
        ):
            json.dumps(value, allow_nan=False)


# ------------------------------------------------------------------------------------ errors
def test_errors_name_the_problem(bm25):
    with pytest.raises(ParameterError, match="GraphRetriever"):
        A.seed_report(BM25Retriever().fit(PASSAGES), CAPEX)
    with pytest.raises(RuntimeError, match="not fitted"):
        A.hub_entities(GraphRetriever(extractor="regex"))
    with pytest.raises(DataError, match="'nope'"):
        A.mass_report(bm25, Query("q", "Acme", frozenset({"nope"})))
    with pytest.raises(ParameterError, match="k must"):
        A.worked_example(bm25, CAPEX, k=0)


# ------------------------------------------------------------------------------------- hub_mass
def test_hub_mass_equals_mean_networkx_share(pure):
    """Mean share of the PPR mass per entity, against networkx PageRank per question (seeded questions only)."""
    graph = pure.graph_
    qs = [CAPEX, ORION, NOSEED]  # NOSEED has no seed under the pure graph: left out of the mean
    vectors = []
    for q in qs:
        exps = pure.expansions(q.text)
        if exps:
            from aethel_lite.core.bct import seed_vector

            s = seed_vector(exps, graph)
            seeds = {
                graph.entities[j]: s[graph.n_passages + j] for j in np.flatnonzero(s[graph.n_passages :])
            }
            v = nx_ppr(pure, seeds)
            vectors.append(v / v.sum())
    assert len(vectors) == 2
    expected = np.mean([v[graph.n_passages :] for v in vectors], axis=0)
    rows = A.hub_mass(pure, qs, top=3)
    assert [r["entity"] for r in rows] == [
        graph.entities[j] for j in np.argsort(-expected, kind="stable")[:3]
    ]
    for r in rows:
        assert r["mean_mass_share"] == pytest.approx(expected[graph.entities.index(r["entity"])], abs=1e-7)
    assert sum(r["n_questions_top"] for r in A.hub_mass(pure, qs, top=len(graph.entities))) <= 2
    with pytest.raises(ParameterError):
        A.hub_mass(pure, qs, top=0)
