"""Retrievers: BM25, dense, the paper's graph retriever, and the stages built on it, as estimators.

Every retriever follows scikit-learn's estimator protocol: settings go to ``__init__`` and are stored as given
(``get_params``/``set_params``, nested ``a__b`` for an estimator it holds, ``clone``), the work is done in
:meth:`Retriever.fit` (index a corpus of :class:`~aethel_lite.data.schema.Passage`), which alone sets the
trailing-underscore attributes, and :meth:`Retriever.search` ranks passages for each
:class:`~aethel_lite.data.schema.Query`, returning a :class:`Run` and changing nothing on the retriever. The ``pool``
argument of ``search`` chooses the setting: open corpus (``None``: every fitted passage is a candidate) or closed pool
(``"query"`` or a mapping ``qid -> pids``). Ties are broken by corpus order. Each retriever saves what ``fit``
learned (``save(folder)``, arrays as ``.npy``/``.npz``, the rest JSON, nothing pickled) and loads it back
(``load(folder, **settings)``).

An extension holds what it extends, as PyTerrier's stages do::

    paper = GraphRetriever(extractor="ner3", bct="both")       # the paper: entities, graph, BCT, PageRank
    hybrid = HybridRetriever(graph=paper)                      # + document/metadata nodes, passage seeds, fusion
    anchors = AnchorsRetriever(hybrid=hybrid)                  # + one PageRank per company or year named
    statements = StatementsRetriever(anchors=anchors)          # + each filing's statement pages first
    statements.fit(passages).search(queries, k=10)

Heavy libraries (bm25s, onnxruntime, torch, sentence-transformers) are imported inside the methods that use them.
"""

from __future__ import annotations

from ..imports import lazy_names

#: name → the module that defines it, imported when the name is first used: ``import
#: aethel_lite.retrievers.graph`` loads the paper's retriever alone, not the stages built on it
_LAZY = {
    "Run": ".data.runs", "write_qrels": ".data.runs", "rrf": ".data.runs", "topk": "base", "clone": "base", "params_json": "base",
    "passage_text": ".data.schema", "Retriever": "base", "passage_heading": "dense", "BM25Retriever": "bm25",
    "DenseRetriever": "dense", "GraphRetriever": "graph", "HybridRetriever": "hybrid",
    "AnchorsRetriever": "anchors", "StatementsRetriever": "statements", "MultiHopRetriever": "multihop",
    "BridgesRetriever": "multihop", "ChainRetriever": "multihop",
}  # fmt: skip

__all__ = list(_LAZY)


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
