"""Personalized PageRank against networkx.pagerank (the oracle), batching, errors, forward push."""

from __future__ import annotations

import gzip
import json

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from conftest import require
from hypothesis import given, settings
from hypothesis import strategies as st

from aethel_lite.core.graph import build_graph
from aethel_lite.core.ppr import (
    PPROperator,
    PPRResult,
    forward_push,
    personalized_pagerank,
    transition_matrix,
)
from aethel_lite.errors import ConvergenceError, ParameterError

METHODS = ("power", "cg")


def bipartite(
    rng: np.random.Generator, n_p: int = 40, n_e: int = 30, density: float = 0.08, n_alias: int = 0
):
    """Random bipartite adjacency (passages first) with some isolated passages and entities."""
    b = (rng.random((n_p, n_e)) < density).astype(float)
    b[: max(1, n_p // 10)] = 0.0  # isolated passages
    b[:, : max(1, n_e // 10)] = 0.0  # isolated entities
    low = np.zeros((n_e, n_e))
    for i, j in rng.integers(0, n_e, size=(n_alias, 2)):
        if i != j:
            low[i, j] = low[j, i] = 1.0
    a = np.block([[np.zeros((n_p, n_p)), b], [b.T, low]])
    return sp.csr_matrix(a)


def oracle(adjacency, seeds: np.ndarray, alpha: float) -> np.ndarray:
    """networkx.pagerank with damping 1 - alpha; edge j -> i has weight A[i, j]."""
    n = adjacency.shape[0]
    g = nx.from_scipy_sparse_array(sp.csr_matrix(adjacency).T, create_using=nx.DiGraph)
    g.add_nodes_from(range(n))
    pers = {i: float(seeds[i]) for i in range(n)}
    # networkx stops when the L1 change < n * tol: make that 1e-13 (error <= 1e-13 (1-alpha)/alpha)
    pr = nx.pagerank(g, alpha=1.0 - alpha, personalization=pers, tol=1e-13 / n, max_iter=100_000)
    return np.array([pr[i] for i in range(n)])


def isolated(adjacency) -> np.ndarray:
    return np.flatnonzero(np.asarray(abs(adjacency).sum(axis=0)).ravel() == 0)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("alpha", [0.15, 0.5])
def test_matches_networkx_random_bipartite(seed, alpha, method):
    rng = np.random.default_rng(seed)
    adj = bipartite(rng, n_alias=3 * seed)
    n = adj.shape[0]
    iso = isolated(adj)
    assert iso.size > 0
    s = np.zeros(n)
    nodes = rng.choice(n, size=4, replace=False)
    s[nodes] = rng.random(4) + 0.1  # unequal weights on several nodes
    s[iso[0]] = 0.7  # and one on an isolated node
    res = personalized_pagerank(adj, s, alpha=alpha, method=method)
    ref = oracle(adj, s, alpha)
    assert isinstance(res, PPRResult) and res.method == method and res.error < 1e-10 and res.iterations >= 1
    assert np.abs(res.scores - ref).sum() < 1e-8
    assert res.scores.min() >= 0 and abs(res.scores.sum() - 1) < 1e-12
    assert res.error < 1e-10


@pytest.mark.parametrize("method", METHODS)
def test_weighted_symmetric_graph(method):
    rng = np.random.default_rng(11)
    a = sp.random(50, 50, density=0.1, random_state=np.random.RandomState(11), format="csr")
    a = a + a.T
    s = rng.random(50)
    assert (
        np.abs(personalized_pagerank(a, s, alpha=0.2, method=method).scores - oracle(a, s, 0.2)).sum() < 1e-8
    )


def test_directed_graph_with_dangling_nodes_uses_power():
    rng = np.random.default_rng(5)
    a = (rng.random((60, 60)) < 0.05).astype(float)
    np.fill_diagonal(a, 0)
    a[:, :8] = 0.0  # columns 0..7: no out-edges (dangling), but they have in-edges below
    a[:8, 10:20] = 1.0
    op = PPROperator(a)
    assert not op.symmetric and op.dangling[:8].all()
    s = np.zeros(60)
    s[[3, 30, 40]] = [0.2, 1.0, 3.0]
    res = personalized_pagerank(op, s)
    assert res.method == "power"
    assert np.abs(res.scores - oracle(a, s, 0.15)).sum() < 1e-8
    with pytest.raises(ParameterError, match="symmetric"):
        op.run(s, method="cg")


@settings(max_examples=25, deadline=None)
@given(
    n_p=st.integers(1, 12),
    n_e=st.integers(1, 12),
    density=st.floats(0.0, 0.6),
    alpha=st.floats(0.05, 0.95),
    seed=st.integers(0, 2**32 - 1),
    method=st.sampled_from(METHODS),
)
def test_property_matches_networkx(n_p, n_e, density, alpha, seed, method):
    rng = np.random.default_rng(seed)
    adj = bipartite(rng, n_p, n_e, density, n_alias=2)
    s = rng.random(adj.shape[0]) * (rng.random(adj.shape[0]) < 0.3)
    s[rng.integers(adj.shape[0])] += 0.5
    res = personalized_pagerank(adj, s, alpha=alpha, method=method, max_iter=10_000)
    assert np.abs(res.scores - oracle(adj, s, alpha)).sum() < 1e-8
    assert res.scores.min() >= 0 and abs(res.scores.sum() - 1) < 1e-12


@pytest.mark.parametrize("method", METHODS)
def test_seed_only_on_isolated_node_stays_there(method):
    adj = bipartite(np.random.default_rng(0))
    s = np.zeros(adj.shape[0])
    s[isolated(adj)[0]] = 2.0
    res = personalized_pagerank(adj, s, method=method)
    assert np.array_equal(res.scores, s / 2.0)


@pytest.mark.parametrize("method", METHODS)
def test_batched_equals_one_at_a_time(method):
    rng = np.random.default_rng(4)
    adj = bipartite(rng, 80, 60, n_alias=5)
    n = adj.shape[0]
    seeds = rng.random((n, 7)) * (rng.random((n, 7)) < 0.05)
    seeds[0, :] += 1.0
    seeds[isolated(adj)[0], 3] = 5.0
    op = PPROperator(adj)
    batch = op.run(seeds, method=method)
    assert batch.scores.shape == (n, 7)
    for j in range(7):
        one = op.run(seeds[:, j], method=method)
        assert one.scores.shape == (n,)
        assert np.abs(batch.scores[:, j] - one.scores).sum() < 1e-10
        assert np.abs(one.scores - oracle(adj, seeds[:, j], 0.15)).sum() < 1e-8
    assert np.allclose(batch.scores.sum(axis=0), 1.0) and batch.scores.min() >= 0


def test_methods_agree_and_operator_equals_function():
    adj = bipartite(np.random.default_rng(9), 100, 80, n_alias=10)
    s = np.zeros(adj.shape[0])
    s[[120, 130]] = [1.0, 2.0]
    op = PPROperator(adj)
    a = op.run(s, method="power")
    b = personalized_pagerank(adj, s, method="cg")
    c = personalized_pagerank(op, s)
    assert c.method == "cg"
    assert np.abs(a.scores - b.scores).sum() < 1e-9
    assert np.array_equal(b.scores, c.scores)
    assert b.iterations < a.iterations  # CG needs far fewer products


def test_dense_adjacency_and_sparse_seeds_accepted():
    adj = bipartite(np.random.default_rng(2))
    s = np.zeros(adj.shape[0])
    s[45] = 1.0
    a = personalized_pagerank(adj.toarray(), sp.csr_matrix(s[:, None]))
    b = personalized_pagerank(adj, s)
    assert a.scores.shape == (adj.shape[0], 1)
    assert np.abs(a.scores[:, 0] - b.scores).sum() < 1e-12


def test_transition_matrix():
    adj = bipartite(np.random.default_rng(1))
    w, dangling = transition_matrix(adj)
    assert sp.isspmatrix_csr(w) and w.dtype == np.float64
    colsum = np.asarray(w.sum(axis=0)).ravel()
    assert np.allclose(colsum[~dangling], 1.0) and np.all(colsum[dangling] == 0)
    assert np.array_equal(np.flatnonzero(dangling), isolated(adj))
    d = np.asarray(adj.sum(axis=0)).ravel()
    assert np.allclose(w.toarray() * np.where(dangling, 0, d), adj.toarray())


def test_on_entity_graph():
    mentions = [["acme", "northriver"], ["northriver", "delaware"], [], ["acme"], ["zeta"]]
    g = build_graph([f"p{i}" for i in range(5)], mentions, alias_pairs=[("acme", "zeta")])
    s = np.zeros(g.n_nodes)
    s[g.entity_node("acme")] = 1.0
    res = personalized_pagerank(g.adjacency(), s)
    ref = nx.pagerank(
        g.to_networkx(), alpha=0.85, personalization={("e", "acme"): 1.0}, tol=1e-16, max_iter=10_000
    )
    order = [("p", p) for p in g.pids] + [("e", k) for k in g.entities]
    assert np.abs(res.scores - np.array([ref[v] for v in order])).sum() < 1e-8
    assert res.scores[g.passage_node("p2")] == 0.0  # isolated passage gets nothing


# ------------------------------------------------------------------------------------------ errors


@pytest.fixture
def adj():
    return bipartite(np.random.default_rng(0))


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5, float("nan"), float("inf"), "x"])
def test_bad_alpha(adj, alpha):
    s = np.ones(adj.shape[0])
    with pytest.raises(ParameterError, match="alpha") as exc:
        personalized_pagerank(adj, s, alpha=alpha)
    assert str(alpha) in str(exc.value)


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda s: s.__setitem__(3, np.nan), "NaN"),
        (lambda s: s.__setitem__(3, np.inf), "NaN or infinite"),
        (lambda s: s.__setitem__(3, -0.5), "nonnegative"),
        (lambda s: s.__imul__(0.0), "all zero"),
    ],
)
def test_bad_seed_values(adj, mutate, match):
    s = np.ones(adj.shape[0])
    mutate(s)
    with pytest.raises(ParameterError, match=match):
        personalized_pagerank(adj, s)


def test_bad_seed_shapes(adj):
    n = adj.shape[0]
    with pytest.raises(ParameterError, match="does not match"):
        personalized_pagerank(adj, np.ones(n + 1))
    with pytest.raises(ParameterError, match="does not match"):
        personalized_pagerank(adj, np.ones((n - 1, 2)))
    with pytest.raises(ParameterError, match="shape"):
        personalized_pagerank(adj, np.ones((n, 2, 2)))
    with pytest.raises(ParameterError, match="no columns"):
        personalized_pagerank(adj, np.ones((n, 0)))
    batch = np.ones((n, 3))
    batch[:, 1] = 0.0
    with pytest.raises(ParameterError, match="column 1 is all zero"):
        personalized_pagerank(adj, batch)
    with pytest.raises(ParameterError, match="numeric"):
        personalized_pagerank(adj, np.array(["a"] * n))


def test_bad_adjacency():
    with pytest.raises(ParameterError, match="square"):
        personalized_pagerank(sp.csr_matrix(np.ones((3, 4))), np.ones(3))
    with pytest.raises(ParameterError, match="nonnegative"):
        personalized_pagerank(np.array([[0, -1.0], [-1.0, 0]]), np.ones(2))
    with pytest.raises(ParameterError, match="NaN"):
        personalized_pagerank(np.array([[0, np.nan], [np.nan, 0]]), np.ones(2))
    with pytest.raises(ParameterError, match="2-D"):
        personalized_pagerank(np.ones(3), np.ones(3))


def test_bad_solver_settings(adj):
    s = np.ones(adj.shape[0])
    with pytest.raises(ParameterError, match="tol"):
        personalized_pagerank(adj, s, tol=0.0)
    with pytest.raises(ParameterError, match="max_iter"):
        personalized_pagerank(adj, s, max_iter=0)
    with pytest.raises(ParameterError, match="max_iter"):
        personalized_pagerank(adj, s, max_iter=2.5)
    with pytest.raises(ParameterError, match="method"):
        personalized_pagerank(adj, s, method="jacobi")


@pytest.mark.parametrize("method", METHODS)
def test_convergence_error(adj, method):
    s = np.zeros(adj.shape[0])
    s[45] = 1.0
    with pytest.raises(ConvergenceError, match="max_iter=1") as exc:
        personalized_pagerank(adj, s, max_iter=1, method=method)
    assert "did not converge" in str(exc.value)
    # and the same problem converges with the default budget, within the tolerance
    res = personalized_pagerank(adj, s, method=method)
    assert 1 < res.iterations <= 1000 and res.error < 1e-10


# ------------------------------------------------------------------------------------ forward push


@pytest.mark.parametrize("eps", [1e-3, 1e-5, 1e-7])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_forward_push_error_bound(seed, eps):
    rng = np.random.default_rng(seed)
    adj = bipartite(rng, 120, 90, density=0.04, n_alias=6)
    n = adj.shape[0]
    d = np.asarray(adj.sum(axis=0)).ravel()
    s = np.zeros(n)
    s[rng.choice(np.flatnonzero(d > 0), 3, replace=False)] = [1.0, 2.0, 0.5]
    exact = oracle(adj, s, 0.15)
    push = forward_push(adj, s, alpha=0.15, eps=eps)
    gap = exact - push.scores
    assert gap.min() >= -1e-12  # an under-estimate
    assert np.all(gap <= eps * d + 1e-12)  # |p*(v) - p^(v)| <= eps d(v)
    assert np.all(push.residual < eps * d + (d == 0))
    assert gap.sum() <= push.residual.sum() + 1e-12
    if eps == 1e-7:
        assert np.abs(gap).sum() < 1e-4


def test_forward_push_isolated_seed_normalised():
    adj = bipartite(np.random.default_rng(3), 60, 40, density=0.06)
    n = adj.shape[0]
    d = np.asarray(adj.sum(axis=0)).ravel()
    s = np.zeros(n)
    s[isolated(adj)[0]] = 1.0
    s[np.flatnonzero(d > 0)[0]] = 1.0
    sigma, beta, eps = 0.5, 0.85, 1e-6
    push = forward_push(adj, s, eps=eps)
    gap = oracle(adj, s, 0.15) - push.scores
    assert gap.min() >= -1e-12 and np.all(gap <= eps * d / (1 - beta * sigma) + 1e-12)


def test_forward_push_errors(adj):
    n = adj.shape[0]
    with pytest.raises(ParameterError, match="eps"):
        forward_push(adj, np.ones(n), eps=0)
    with pytest.raises(ParameterError, match="alpha"):
        forward_push(adj, np.ones(n), alpha=1.0)
    with pytest.raises(ParameterError, match="symmetric"):
        forward_push(np.array([[0, 1.0], [0, 0]]), np.ones(2))
    with pytest.raises(ParameterError, match="one seed vector"):
        forward_push(adj, np.ones((n, 2)))


# ------------------------------------------------------------------------------------- real data


@pytest.mark.realdata
def test_real_financebench_filing(real_data):
    """The first filing's pages in pages.jsonl.gz (regex entities) against networkx."""
    from aethel_lite.core.entities import RegexExtractor

    path = require(real_data / "financebench" / "pages.jsonl.gz")
    pids, texts = [], []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if not pids or row["doc_name"] == pids[0].split("#")[0]:
                pids.append(f"{row['doc_name']}#p{row['page']}")
                texts.append(row["text"])
            elif pids:
                break
    assert len(pids) > 50
    g = build_graph(pids, RegexExtractor().extract(texts))
    s = np.zeros(g.n_nodes)
    df = np.asarray(g.incidence.sum(axis=0)).ravel()
    s[g.n_passages + int(np.argmax(df))] = 1.0  # the filing's most frequent entity
    s[g.n_passages + int(np.argmin(df))] = 0.5
    res = personalized_pagerank(g.adjacency(), s)
    assert np.abs(res.scores - oracle(g.adjacency(), s, 0.15)).sum() < 1e-8


@pytest.mark.parametrize("eliminate_degree", [0, 1, 2, 5])
def test_cg_elimination_degree(eliminate_degree):
    rng = np.random.default_rng(21)
    adj = bipartite(rng, 70, 50, density=0.05, n_alias=8)
    adj = adj + sp.diags((rng.random(adj.shape[0]) < 0.05).astype(float))  # a few self-loops
    s = np.zeros(adj.shape[0])
    s[rng.choice(adj.shape[0], 5, replace=False)] = rng.random(5) + 0.1
    res = PPROperator(adj, eliminate_degree=eliminate_degree).run(s, method="cg")
    assert np.abs(res.scores - oracle(adj, s, 0.15)).sum() < 1e-8


# ------------------------------------------------------------------ fast paths of the CG solver

import aethel_lite.core.ppr as ppr_module  # noqa: E402
import aethel_lite.core.ppr_reduced as reduced_module  # noqa: E402


def batch_problem(seed: int = 31, n_p: int = 400, n_e: int = 300, b: int = 24):
    """A graph big enough for every solver path, with repeated and isolated seed columns."""
    rng = np.random.default_rng(seed)
    adj = bipartite(rng, n_p, n_e, density=0.02, n_alias=60)
    n = adj.shape[0]
    seeds = np.zeros((n, b))
    for j in range(b):
        seeds[rng.choice(n, size=1 + j % 3, replace=False), j] = rng.random(1 + j % 3) + 0.1
    seeds[:, 5] = seeds[:, 2]  # the same question twice (or three times)
    if b > 9:
        seeds[:, 9] = seeds[:, 2]
        seeds[isolated(adj)[0], 7] = 0.4  # seed mass on an isolated node
    return adj, seeds


@pytest.mark.parametrize("block", [32, 5])
def test_mixed_precision_batch_matches_networkx(monkeypatch, block):
    adj, seeds = batch_problem()
    calls = []
    real = ppr_module._cg_mixed
    monkeypatch.setattr(ppr_module, "_MIXED_MIN_SIZE", 1)
    monkeypatch.setattr(ppr_module, "_MIXED_BLOCK", block)
    monkeypatch.setattr(ppr_module, "_cg_mixed", lambda *a: calls.append(a[1].shape[1]) or real(*a))
    op = PPROperator(adj)
    res = op.run(seeds, alpha=0.5, tol=1e-8)
    assert calls, "the float32 + float64 refinement path was not taken"
    assert sum(calls) == seeds.shape[1] - 2 and max(calls) <= block  # repeated columns are solved once
    for j in range(seeds.shape[1]):
        assert np.abs(res.scores[:, j] - oracle(adj, seeds[:, j], 0.5)).sum() < 1e-8
    assert res.error < 1e-8 and np.allclose(res.scores.sum(axis=0), 1.0) and res.scores.min() >= 0
    # deterministic: a second run gives the same bits
    assert np.array_equal(op.run(seeds, alpha=0.5, tol=1e-8).scores, res.scores)


def test_mixed_precision_falls_back_to_double_when_float32_stalls(monkeypatch):
    import torch

    adj, seeds = batch_problem(seed=32)
    monkeypatch.setattr(ppr_module, "_MIXED_MIN_SIZE", 1)
    # a float32 inner solver that makes no progress: the refinement must finish in float64
    monkeypatch.setattr(
        reduced_module, "_cg_float32", lambda S, B, reduction, max_iter: (torch.zeros_like(B), 1)
    )
    res = PPROperator(adj).run(seeds, alpha=0.3, tol=1e-9)
    for j in (0, 7, 11):
        assert np.abs(res.scores[:, j] - oracle(adj, seeds[:, j], 0.3)).sum() < 1e-8


def test_mixed_precision_convergence_error(monkeypatch):
    adj, seeds = batch_problem(seed=33)
    monkeypatch.setattr(ppr_module, "_MIXED_MIN_SIZE", 1)
    with pytest.raises(ConvergenceError, match="max_iter=3"):
        PPROperator(adj).run(seeds, alpha=0.15, tol=1e-10, max_iter=3)


@pytest.mark.parametrize("method", METHODS)
def test_repeated_seed_columns_are_solved_once(method):
    adj, seeds = batch_problem(seed=34, b=6)
    seeds[:, 4] = seeds[:, 1] * 2.0  # another scale, the same normalised seed vector (exactly: a power of 2)
    columns, inverse = ppr_module._distinct_columns(ppr_module._check_seeds(seeds, adj.shape[0]).values)
    assert columns.tolist() == [0, 1, 2, 3] and inverse.tolist() == [0, 1, 2, 3, 1, 2]
    op = PPROperator(adj)
    res = op.run(seeds, method=method)
    for j in range(6):
        assert np.abs(res.scores[:, j] - op.run(seeds[:, j], method=method).scores).sum() < 1e-10
    assert np.array_equal(res.scores[:, 4], res.scores[:, 1])
    assert ppr_module._distinct_columns(np.eye(3)) == (None, None)


def test_sparse_first_products_equal_full_products():
    adj, _ = batch_problem(seed=35)
    S = PPROperator(adj)._reduced(0.5).S
    rng = np.random.default_rng(0)
    v = np.zeros(S.shape[0])
    v[rng.choice(S.shape[0], 2, replace=False)] = [1.0, -0.5]
    product = reduced_module._SymmetricProduct(S, v)
    for _ in range(4):  # the support grows until the product switches to the full kernel
        support = product.support
        out = np.full(S.shape[0], np.nan)
        product(v, out)
        assert np.allclose(out, S @ v, rtol=0, atol=1e-15)
        if support is not None and product.support is not None:
            assert set(np.flatnonzero(out)) <= set(product.support.tolist())
        v = out + 0.5 * v
    assert product.support is None


def test_eliminated_nodes_form_a_maximal_independent_set():
    adj, _ = batch_problem(seed=36)
    a = ppr_module._as_csr(adj)
    n_nb = np.diff(a.indptr)
    candidate = n_nb <= 4
    chosen = reduced_module._independent_low_degree(a, n_nb, candidate)
    assert chosen.sum() > 0 and not (chosen & ~candidate).any()
    coo = a.tocoo()
    assert not (chosen[coo.row] & chosen[coo.col] & (coo.row != coo.col)).any()  # independent
    blocked = np.zeros_like(chosen)
    blocked[coo.col[chosen[coo.row]]] = True
    assert (chosen | blocked | ~candidate).all()  # maximal: every other candidate touches a chosen node


def test_compiled_single_query_matches_networkx(monkeypatch):
    """With numba's omp/tbb layer the compiled solver runs; without it (e.g. no OpenMP runtime) the
    library falls back to the numpy loop by design, and the answers are the same."""
    from aethel_lite.core import ppr_kernels

    compiled = ppr_kernels.available()
    adj, seeds = batch_problem(seed=37)
    calls = []
    real = ppr_kernels.cg_solve
    monkeypatch.setattr(ppr_module, "_COMPILED_MIN_NNZ", 0)
    monkeypatch.setattr(ppr_kernels, "cg_solve", lambda *a: calls.append(a) or real(*a))
    op = PPROperator(adj)
    for j in (0, 3, 7, 9):  # column 7 has seed mass on an isolated node
        res = op.run(seeds[:, j], alpha=0.5, tol=1e-9)
        assert np.abs(res.scores - oracle(adj, seeds[:, j], 0.5)).sum() < 1e-9
        assert res.error < 1e-9 and res.scores.min() >= 0 and abs(res.scores.sum() - 1) < 1e-12
        # deterministic: the same bits again
        assert np.array_equal(op.run(seeds[:, j], alpha=0.5, tol=1e-9).scores, res.scores)
    if not compiled:
        assert calls == [], "the compiled solver ran on a slow threading layer instead of the numpy fallback"
        return
    assert len(calls) == 8, "the compiled path was not taken"
    # the same answer as the numpy loop, to the tolerance
    monkeypatch.setattr(ppr_module, "_COMPILED_MIN_NNZ", 10**15)
    numpy_res = op.run(seeds[:, 3], alpha=0.5, tol=1e-9)
    assert (
        len(calls) == 8
        and np.abs(numpy_res.scores - op.run(seeds[:, 3], alpha=0.5, tol=1e-9).scores).sum() < 2e-9
    )


def test_compiled_solver_result_does_not_depend_on_row_blocks():
    from aethel_lite.core import ppr_kernels

    adj, seeds = batch_problem(seed=38)
    red = PPROperator(adj)._reduced(0.5)
    s = ppr_module._check_seeds(seeds[:, 1], adj.shape[0])
    b = red.rhs(s)
    indptr, indices, data, _ = red.compiled_arrays()
    solutions = []
    for parts in (1, 2, 4, 7):
        blocks = ppr_kernels.row_blocks(red.S.indptr, parts)
        assert blocks[0] == 0 and blocks[-1] == red.S.shape[0] and (np.diff(blocks.astype(int)) >= 0).all()
        z, it, bound = ppr_kernels.cg_solve(indptr, indices, data, blocks, b, red.sqrt_diag, 4.0, 1e-10, 500)
        assert bound < 1e-10 and it > 1
        assert np.abs(red.S @ z - b).max() < 1e-9  # solves S z = b
        solutions.append(z)
    for z in solutions[1:]:
        assert np.abs(z - solutions[0]).max() < 1e-9  # only the summation order differs
    # the same blocks give the same bits with one thread or two
    import numba

    blocks = ppr_kernels.row_blocks(red.S.indptr, 4)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = ppr_kernels.cg_solve(indptr, indices, data, blocks, b, red.sqrt_diag, 4.0, 1e-10, 500)[0]
    finally:
        numba.set_num_threads(threads)
    two = ppr_kernels.cg_solve(indptr, indices, data, blocks, b, red.sqrt_diag, 4.0, 1e-10, 500)[0]
    assert np.array_equal(one, two)


def test_compiled_solver_stops_at_max_iter_and_handles_zero_rhs():
    from aethel_lite.core import ppr_kernels

    adj, _ = batch_problem(seed=39)
    red = PPROperator(adj)._reduced(0.15)
    indptr, indices, data, blocks = red.compiled_arrays()
    b = np.random.default_rng(0).random(red.S.shape[0])
    z, it, bound = ppr_kernels.cg_solve(indptr, indices, data, blocks, b, red.sqrt_diag, 2 / 0.15, 1e-12, 3)
    assert it == 3 and bound >= 1e-12
    z, it, bound = ppr_kernels.cg_solve(
        indptr, indices, data, blocks, np.zeros_like(b), red.sqrt_diag, 1.0, 1e-12, 50
    )
    assert bound == 0.0 and it == 1 and not z.any()  # the zero bound is confirmed on the true residual
