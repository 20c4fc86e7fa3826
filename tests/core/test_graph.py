"""EntityGraph / build_graph: structure, alias edges, stop-entities, subgraphs, networkx view, save/load."""

from __future__ import annotations

import zipfile
from dataclasses import dataclass

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from aethel_lite.core.entities import Mention
from aethel_lite.core.graph import EntityGraph, build_graph
from aethel_lite.errors import DataError, DataNotFoundError, ParameterError


@dataclass(frozen=True)
class FakeMention:  # any object with .key and .text is accepted
    text: str
    key: str


def m(text: str, key: str | None = None) -> Mention:
    return Mention(
        text=text, key=key if key is not None else text.lower(), label="ORG", start=0, end=len(text)
    )


@pytest.fixture
def small() -> EntityGraph:
    mentions = [
        [m("NorthRiver"), m("Acme"), m("NorthRiver"), m("NORTHRIVER", "northriver")],
        [m("NorthRiver IV LP", "northriver iv"), m("Delaware")],
        [],  # isolated passage
        [m("Acme"), m("The Company", "company"), FakeMention("ZZ", "zz")],
        ["delaware", "company"],  # plain strings are keys
    ]
    return build_graph(
        ["d#1", "d#2", "d#3", "e#1", "e#2"],
        mentions,
        stop={"company"},
        alias_pairs=[("northriver", "northriver iv"), ("acme", "not-an-entity"), ("acme", "acme")],
    )


def random_graph(rng: np.random.Generator, n_p: int = 30, n_e: int = 20) -> EntityGraph:
    keys = [f"ent{j:02d}" for j in range(n_e)]
    mentions = [[keys[j] for j in np.flatnonzero(rng.random(n_e) < 0.15)] for _ in range(n_p)]
    pairs = [(keys[a], keys[b]) for a, b in rng.integers(0, n_e, size=(5, 2))]
    return build_graph([f"p{i}" for i in range(n_p)], mentions, alias_pairs=pairs)


def test_structure_sorted_binary_isolated(small):
    g = small
    assert g.entities == sorted(g.entities)
    assert g.entities == [
        "acme",
        "delaware",
        "northriver",
        "northriver iv",
        "zz",
    ]  # "company" is a stop entity
    assert g.n_passages == 5 and g.n_entities == 5 and g.n_nodes == 10
    inc = g.incidence
    assert sp.isspmatrix_csr(inc) and inc.dtype == np.float64
    assert set(np.unique(inc.data)) == {1.0}  # repeated mentions give one edge
    dense = inc.toarray()
    assert dense[g.pid_index["d#1"]].tolist() == [1, 0, 1, 0, 0]
    assert dense[g.pid_index["d#3"]].sum() == 0  # passage without entities is an isolated node
    assert dense[g.pid_index["e#2"]].tolist() == [0, 1, 0, 0, 0]
    assert g.surface["northriver"] == "NorthRiver"  # most frequent surface form
    assert g.surface["zz"] == "ZZ"
    assert "company" not in g.entity_index


def test_alias_edges(small):
    g = small
    a = g.alias
    assert a is not None and (a != a.T).nnz == 0
    i, j = g.entity_index["northriver"], g.entity_index["northriver iv"]
    assert a[i, j] == 1.0 and a[j, i] == 1.0
    assert a.nnz == 2  # unknown key and self pair ignored
    assert a.diagonal().sum() == 0
    assert build_graph(["p"], [["x"]]).alias is None
    assert build_graph(["p"], [["x"]], alias_pairs=[("x", "y")]).alias.nnz == 0


def test_adjacency_symmetric_blocks_cached(small):
    g = small
    adj = g.adjacency()
    assert adj is g.adjacency()
    assert adj.shape == (g.n_nodes, g.n_nodes) and adj.dtype == np.float64
    assert (adj != adj.T).nnz == 0
    d = adj.toarray()
    n_p = g.n_passages
    assert np.array_equal(d[:n_p, :n_p], np.zeros((n_p, n_p)))
    assert np.array_equal(d[:n_p, n_p:], g.incidence.toarray())
    assert np.array_equal(d[n_p:, n_p:], g.alias.toarray())
    assert g.degrees().tolist() == d.sum(axis=1).tolist()
    assert g.passage_node("e#1") == 3 and g.entity_node("acme") == n_p
    with pytest.raises(DataError, match="nope"):
        g.entity_node("nope")


def test_adjacency_equals_networkx_view(small):
    g = small
    G = g.to_networkx()
    order = [("p", p) for p in g.pids] + [("e", k) for k in g.entities]
    ref = nx.to_scipy_sparse_array(G, nodelist=order, weight="weight")
    assert (sp.csr_matrix(ref) != g.adjacency()).nnz == 0
    assert G.nodes[("e", "northriver")]["label"] == "NorthRiver"
    assert G.edges[("e", "northriver"), ("e", "northriver iv")]["kind"] == "alias"
    assert nx.degree(G, ("p", "d#3")) == 0


def test_to_networkx_neighbourhood(small):
    G = small.to_networkx(["d#2", "e#1"])
    assert {n for n in G if n[0] == "p"} == {("p", "d#2"), ("p", "e#1")}
    assert {n[1] for n in G if n[0] == "e"} == {"northriver iv", "delaware", "acme", "zz"}
    assert not G.has_node(("e", "northriver"))
    with pytest.raises(DataError, match="missing#1"):
        small.to_networkx(["missing#1"])


def test_subgraph(small):
    g = small
    sub = g.subgraph(["e#2", "d#1", "d#3"])
    assert sub.pids == ["e#2", "d#1", "d#3"]
    assert sub.entities == ["acme", "delaware", "northriver"]  # touched entities, in graph order
    for pid in sub.pids:
        got = {sub.entities[j] for j in sub.incidence[sub.pid_index[pid]].indices}
        want = {g.entities[j] for j in g.incidence[g.pid_index[pid]].indices}
        assert got == want
    assert sub.alias is not None and sub.alias.nnz == 0  # the alias partner is not in the pool
    both = g.subgraph(["d#1", "d#2"])
    assert both.alias.nnz == 2
    assert set(sub.surface) == set(sub.entities)
    with pytest.raises(DataError, match="ghost#9"):
        g.subgraph(["d#1", "ghost#9"])
    with pytest.raises(DataError, match="duplicate"):
        g.subgraph(["d#1", "d#1"])


def test_subgraph_of_random_graph_matches_dense_slice():
    rng = np.random.default_rng(7)
    g = random_graph(rng)
    pids = [g.pids[i] for i in rng.permutation(g.n_passages)[:12]]
    sub = g.subgraph(pids)
    rows = [g.pid_index[p] for p in pids]
    cols = [g.entity_index[k] for k in sub.entities]
    assert np.array_equal(sub.incidence.toarray(), g.incidence.toarray()[np.ix_(rows, cols)])
    assert np.array_equal(sub.alias.toarray(), g.alias.toarray()[np.ix_(cols, cols)])
    assert all(g.incidence[rows][:, [g.entity_index[k] for k in sub.entities]].sum(axis=0).A1 > 0)


def test_build_graph_errors():
    with pytest.raises(DataError, match="2 pids but 1"):
        build_graph(["a", "b"], [["x"]])
    with pytest.raises(DataError, match="'a'"):
        build_graph(["a", "a"], [["x"], ["y"]])
    with pytest.raises(ParameterError, match="int"):
        build_graph(["a"], [[3]])


def test_save_load_round_trip(tmp_path, small):
    small.save(tmp_path / "g")
    back = EntityGraph.load(tmp_path / "g")
    assert back == small
    assert back.pids == small.pids and back.entities == small.entities and back.surface == small.surface
    assert (back.adjacency() != small.adjacency()).nnz == 0
    no_alias = build_graph(["a", "b"], [["x"], []])
    no_alias.save(tmp_path / "h")
    assert EntityGraph.load(tmp_path / "h").alias is None
    assert EntityGraph.load(tmp_path / "h") == no_alias
    assert EntityGraph.load(tmp_path / "h") != small


def test_save_is_deterministic(tmp_path):
    g = random_graph(np.random.default_rng(3))
    g.save(tmp_path / "a")
    random_graph(np.random.default_rng(3)).save(tmp_path / "b")
    for name in ("graph.npz", "graph.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert not [p for p in (tmp_path / "a").iterdir() if p.name.startswith(".")]  # no temp files left


def test_load_missing_files(tmp_path, small):
    with pytest.raises(DataNotFoundError, match="graph.json"):
        EntityGraph.load(tmp_path / "nowhere")
    small.save(tmp_path / "g")
    (tmp_path / "g" / "graph.npz").unlink()
    with pytest.raises(DataNotFoundError, match="graph.npz"):
        EntityGraph.load(tmp_path / "g")


def test_load_corrupt_files(tmp_path, small):
    small.save(tmp_path / "g")
    npz = tmp_path / "g" / "graph.npz"
    good = npz.read_bytes()
    npz.write_bytes(good[: len(good) // 2])
    with pytest.raises(DataError, match="graph.npz"):
        EntityGraph.load(tmp_path / "g")
    npz.write_bytes(b"not a zip file at all")
    with pytest.raises(DataError, match="graph.npz"):
        EntityGraph.load(tmp_path / "g")
    # a valid zip without the expected arrays
    with zipfile.ZipFile(npz, "w") as zf:
        zf.writestr("x.npy", b"")
    with pytest.raises(DataError, match="graph.npz"):
        EntityGraph.load(tmp_path / "g")
    # valid arrays, out-of-range column indices
    npz.write_bytes(good)
    with np.load(npz, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["incidence_indices"] = arrays["incidence_indices"] + 100
    np.savez(npz, **arrays)
    with pytest.raises(DataError, match="graph.npz"):
        EntityGraph.load(tmp_path / "g")
    npz.write_bytes(good)
    js = tmp_path / "g" / "graph.json"
    js.write_text('{"format": "aethel-entity-graph", "version": 1, "pids": [', encoding="utf-8")
    with pytest.raises(DataError, match="graph.json"):
        EntityGraph.load(tmp_path / "g")
    js.write_text('{"format": "something-else"}', encoding="utf-8")
    with pytest.raises(DataError, match="graph.json"):
        EntityGraph.load(tmp_path / "g")


def test_load_inconsistent_pair(tmp_path, small):
    small.save(tmp_path / "g")
    build_graph(["a"], [["x", "y"]]).save(tmp_path / "other")
    (tmp_path / "g" / "graph.npz").write_bytes((tmp_path / "other" / "graph.npz").read_bytes())
    with pytest.raises(DataError, match="graph.npz"):
        EntityGraph.load(tmp_path / "g")


def test_constructor_validation():
    inc = sp.csr_matrix(np.ones((2, 2)))
    with pytest.raises(ParameterError, match="incidence"):
        EntityGraph(pids=["a"], entities=["x", "y"], incidence=inc)
    with pytest.raises(ParameterError, match="symmetric"):
        EntityGraph(
            pids=["a", "b"],
            entities=["x", "y"],
            incidence=inc,
            alias=sp.csr_matrix(np.array([[0, 1.0], [0, 0]])),
        )
    with pytest.raises(DataError, match="'x'"):
        EntityGraph(pids=["a", "b"], entities=["x", "x"], incidence=inc)
