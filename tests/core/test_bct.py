"""BCT seed expansion, seed vector and provenance on hand-made graphs and against a brute-force oracle."""

from __future__ import annotations

import random

import numpy as np
import pytest

from aethel_lite.core.bct import TOKEN_STOP, BCTWeights, Expansion, expand_seeds, provenance, seed_vector
from aethel_lite.core.entities import substring_links
from aethel_lite.core.graph import build_graph
from aethel_lite.errors import DataError, ParameterError

W = BCTWeights()

PASSAGES = {
    "p0": ["northriver capital partners iv", "boston"],
    "p1": ["northriver iv", "acme"],
    "p2": ["nrcp"],
    "p3": ["river"],
    "p4": ["northriver"],
    "p5": ["acme"],
    "p6": [],
}
ALIASES = {"NorthRiver": ["NRCP"]}


def make_graph(alias_pairs=None):
    pids = list(PASSAGES)
    return build_graph(pids, [PASSAGES[p] for p in pids], alias_pairs=alias_pairs)


def as_tuples(exps):
    return [(e.seed, e.entity, e.via, round(e.weight, 12)) for e in exps]


def test_modes_on_hand_made_graph():
    g = make_graph()
    w = BCTWeights()
    assert as_tuples(expand_seeds(["northriver"], g, mode="none", alias_table=ALIASES)) == [
        ("northriver", "northriver", "exact", 1.0)
    ]
    assert as_tuples(expand_seeds(["northriver"], g, mode="alias", alias_table=ALIASES)) == [
        ("northriver", "northriver", "exact", 1.0),
        ("northriver", "nrcp", "alias", w.alias),
    ]
    # "river" is inside "northriver" but not on a token boundary: never matched
    assert as_tuples(expand_seeds(["northriver"], g, mode="substring", alias_table=ALIASES)) == [
        ("northriver", "northriver", "exact", 1.0),
        ("northriver", "northriver capital partners iv", "substring", w.substring),
        ("northriver", "northriver iv", "substring", w.substring),
    ]
    assert as_tuples(expand_seeds(["northriver"], g, mode="both", alias_table=ALIASES)) == [
        ("northriver", "northriver", "exact", 1.0),
        ("northriver", "nrcp", "alias", w.alias),
        ("northriver", "northriver capital partners iv", "substring", w.substring),
        ("northriver", "northriver iv", "substring", w.substring),
    ]


def test_token_overlap_and_contained_keys():
    g = make_graph()
    # "northriver fund" is not a graph entity; "northriver" is inside it, "northriver iv" shares a token
    got = as_tuples(expand_seeds(["NorthRiver Fund"], g, mode="substring"))
    assert got == [
        ("northriver fund", "northriver", "substring", W.substring),
        # Jaccard {northriver, fund} vs {northriver, iv} = 1/3
        ("northriver fund", "northriver iv", "token", round(W.token / 3, 12)),
        # Jaccard {northriver, fund} vs {northriver, capital, partners, iv} = 1/5
        ("northriver fund", "northriver capital partners iv", "token", round(W.token / 5, 12)),
    ]
    # generic tokens never match on their own
    assert "capital" in TOKEN_STOP
    assert expand_seeds(["capital one"], g, mode="substring") == []


def test_graph_alias_edges_and_best_expansion_kept():
    keys = sorted({k for ks in PASSAGES.values() for k in ks})
    g = make_graph(alias_pairs=substring_links(keys))
    exps = expand_seeds(["northriver"], g, mode="alias")
    # substring adjacency in the graph makes the longer names aliases (the alias weight beats the substring weight)
    assert as_tuples(exps) == [
        ("northriver", "northriver", "exact", 1.0),
        ("northriver", "northriver capital partners iv", "alias", W.alias),
        ("northriver", "northriver iv", "alias", W.alias),
    ]
    both = expand_seeds(["northriver", "northriver iv"], g, mode="both", alias_table=ALIASES)
    assert len({e.entity for e in both}) == len(both)  # one expansion per entity
    by_entity = {e.entity: e for e in both}
    assert by_entity["northriver iv"] == Expansion("northriver iv", "northriver iv", "exact", 1.0)
    assert by_entity["nrcp"].via == "alias"


def test_alias_table_is_symmetric_and_transitive():
    g = make_graph()
    table = {"northriver capital": ["nrcp", "NorthRiver IV LP"]}
    # query an alias: reaches its siblings through the canonical name
    got = as_tuples(expand_seeds(["nrcp"], g, mode="alias", alias_table=table))
    assert got == [("nrcp", "nrcp", "exact", 1.0), ("nrcp", "northriver iv", "alias", W.alias)]


def test_seed_vector_and_provenance():
    g = make_graph()
    exps = expand_seeds(["northriver"], g, mode="both", alias_table=ALIASES)
    s = seed_vector(exps, g)
    assert s.shape == (g.n_nodes,)
    assert s.sum() == pytest.approx(1.0)
    assert np.all(s[: g.n_passages] == 0)
    # oracle: each (seed, rule) group shares at most that rule's weight
    budget = {"exact": W.exact, "alias": W.alias, "substring": W.substring, "token": W.token}
    raw = {}
    for e in exps:
        group = [x.weight for x in exps if (x.seed, x.via) == (e.seed, e.via)]
        raw[e.entity] = e.weight * min(1.0, budget[e.via] / sum(group))
    total = sum(raw.values())
    for e in exps:
        assert s[g.n_passages + g.entity_index[e.entity]] == pytest.approx(raw[e.entity] / total)
    assert np.count_nonzero(s) == len(exps)
    # provenance names the alias that brought each passage
    assert provenance("p2", exps, g) == [Expansion("northriver", "nrcp", "alias", W.alias)]
    assert [e.entity for e in provenance("p0", exps, g)] == ["northriver capital partners iv"]
    assert provenance("p3", exps, g) == []
    assert provenance("p6", exps, g) == []
    with pytest.raises(DataError, match="nope"):
        provenance("nope", exps, g)


def test_no_query_entity():
    g = make_graph()
    for mode in ("none", "alias", "substring", "both"):
        assert expand_seeds([], g, mode=mode, alias_table=ALIASES) == []
        assert expand_seeds(["", "unknown corp"], g, mode=mode, alias_table=ALIASES) == []
    s = seed_vector([], g)
    assert s.shape == (g.n_nodes,) and not s.any()


def test_bad_parameters():
    g = make_graph()
    with pytest.raises(ParameterError, match="mode"):
        expand_seeds(["northriver"], g, mode="fuzzy")
    with pytest.raises(ParameterError, match="query_keys"):
        expand_seeds("northriver", g)
    with pytest.raises(ParameterError, match="alias"):
        BCTWeights(alias=-1)
    with pytest.raises(ParameterError, match="exact"):
        BCTWeights(exact=0)
    with pytest.raises(ParameterError, match="token"):
        BCTWeights(token=float("nan"))
    with pytest.raises(ParameterError, match="not in the graph"):
        seed_vector([Expansion("x", "x", "exact", 1.0)], g)


def oracle(query_keys, entities, mode, weights, min_chars=4):
    """Direct transcription of the rules, O(queries x entities)."""
    best = {}
    prio = {"exact": 3, "alias": 2, "substring": 1, "token": 0}
    for q in query_keys:
        qt = set(q.split())
        for e in entities:
            et = set(e.split())
            cands = []
            if e == q:
                cands.append(("exact", weights.exact))
            elif mode in ("substring", "both"):
                shorter, longer = (q, e) if len(q) <= len(e) else (e, q)
                if len(shorter) >= min_chars and f" {shorter} " in f" {longer} ":
                    cands.append(("substring", weights.substring))
                elif any(len(t) >= 4 and t not in TOKEN_STOP for t in qt & et):
                    cands.append(("token", weights.token * len(qt & et) / len(qt | et)))
            for via, w in cands:
                key = (-w, -prio[via], e, q)
                if w > 0 and (e not in best or key < best[e]):
                    best[e] = key
    return sorted((k[3], k[2], [v for v, p in prio.items() if p == -k[1]][0], -k[0]) for k in best.values())


@pytest.mark.parametrize("seed", range(6))
def test_substring_and_token_rules_match_oracle(seed):
    rng = random.Random(seed)
    vocab = ["north", "river", "northriver", "iv", "capital", "acme", "holdings", "boston", "fund", "bank"]
    keys = sorted({" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 3))) for _ in range(60)})
    pids = [f"p{i}" for i in range(len(keys))]
    g = build_graph(pids, [[k] for k in keys])
    queries = sorted({" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 3))) for _ in range(5)})
    for mode in ("none", "substring"):
        got = sorted((e.seed, e.entity, e.via, e.weight) for e in expand_seeds(queries, g, mode=mode))
        want = oracle(queries, keys, mode, BCTWeights())
        assert [g_[:3] for g_ in got] == [w_[:3] for w_ in want]
        assert np.allclose([g_[3] for g_ in got], [w_[3] for w_ in want])


def test_rule_budget_keeps_the_named_entity_dominant():
    """Many substring neighbours of one seed share one budget: the exact match keeps the largest share."""
    from aethel_lite.core.graph import build_graph

    keys = ["china"] + [
        f"china {w}" for w in ("daily", "mobile", "airlines", "telecom", "railway", "southern")
    ]
    g = build_graph([f"p{i}" for i in range(len(keys))], [[k] for k in keys])
    exps = expand_seeds(["china"], g, mode="substring")
    assert len(exps) == len(keys)
    s = seed_vector(exps, g)
    n_p = g.n_passages
    exact = s[n_p + g.entity_index["china"]]
    others = [s[n_p + g.entity_index[k]] for k in keys[1:]]
    assert exact == pytest.approx(W.exact / (W.exact + W.substring))
    assert sum(others) == pytest.approx(W.substring / (W.exact + W.substring))
