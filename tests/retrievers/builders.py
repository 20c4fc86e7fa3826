"""Building the retrievers of the tests from one flat dict of settings, as the single class of before held them."""

from __future__ import annotations

from aethel_lite.retrievers import GraphRetriever, HybridRetriever, HybridSettings

#: the hybrid settings off, as the one retriever class that held them had them by default
OFF = {
    "passage_seeds": (),
    "document_nodes": False,
    "metadata": False,
    "period_linking": False,
    "seed_weights": None,
    "seed_depth": 20,
    "dense_pooling": "first",
    "rank_weights": None,
    "period_decay": 1.0,
}


def build(**settings):
    """The paper's GraphRetriever, or a HybridRetriever composed over it when a hybrid setting is given."""
    graph = {k: v for k, v in settings.items() if k in GraphRetriever.param_names()}
    hybrid = {k: v for k, v in settings.items() if k not in graph}
    if not hybrid:
        return GraphRetriever(**graph)
    return HybridRetriever(GraphRetriever(**graph), HybridSettings(**{**OFF, **hybrid}))


def derive(r, **changes):
    """A fitted variant of ``r`` with ``changes`` (paper or hybrid settings)."""
    graph = {k: v for k, v in changes.items() if k in GraphRetriever.param_names()}
    rest = {k: v for k, v in changes.items() if k not in graph}
    if isinstance(r, HybridRetriever):
        return r.variant(graph=graph, **rest)
    return r.variant(**graph, **rest)
