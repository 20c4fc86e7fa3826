"""Retrievers (BM25, dense, the paper's graph retriever and the hybrid built on it), ranked runs in TREC format, and reciprocal rank fusion.

Every retriever follows the scikit-learn convention: settings go to ``__init__``, the work is done
in :meth:`Retriever.fit` (index a corpus of :class:`~aethel_lite.data.schema.Passage`), and
:meth:`Retriever.search` ranks passages for each :class:`~aethel_lite.data.schema.Query`, returning
a :class:`Run`. The ``pool`` argument of ``search`` chooses the setting: open corpus (``None``: every
fitted passage is a candidate) or closed pool (``"query"`` or a mapping ``qid -> pids``: only the
query's candidates are ranked, while corpus statistics such as BM25's idf still come from the whole
fitted corpus). Ties are broken by corpus order (the order of the passages given to ``fit``).

Heavy libraries (bm25s, torch, sentence-transformers) are imported inside the methods that use them.
"""

from __future__ import annotations

from .base import Retriever, passage_text, topk
from .bm25 import BM25Retriever
from .dense import DenseRetriever, passage_heading
from .fusion import rrf
from .graph import GraphRetriever
from .hybrid import HybridRetriever
from .hybrid_settings import HybridSettings
from .run import Run, write_qrels

__all__ = [
    "Run",
    "write_qrels",
    "topk",
    "passage_text",
    "passage_heading",
    "Retriever",
    "BM25Retriever",
    "DenseRetriever",
    "GraphRetriever",
    "HybridRetriever",
    "HybridSettings",
    "rrf",
]
