"""The method registry: every method name ``aethel eval``, ``aethel search`` and the book know, and a fresh retriever for each.

Method names are a public interface (the CLI and its JSON output depend on them):

=====================  ======================================================================
``bm25``               BM25 (bm25s, Lucene variant), :class:`~aethel_lite.retrievers.BM25Retriever`
``dense``              all-MiniLM-L6-v2 cosine, :class:`~aethel_lite.retrievers.DenseRetriever`
``dense-max``          ``dense`` with ``pooling="max"``: a page scores its best ~200-word chunk
``dense-heading``      ``dense`` with ``pooling="heading"``: a page scores its first 200 characters
``aethel-reg``         entity graph from capitalised spans (the paper's Aethel-Reg) + PPR
``aethel-ner``         entity graph from raw spaCy NER + PPR
``aethel-ner3``        entity graph from filtered NER (the paper's NER3) + PPR
``aethel-bct``         ``aethel-ner3`` with BCT (alias and substring seed expansion)
``aethel-*-pure``      ``aethel-reg``, ``aethel-ner3``, ``aethel-bct`` with ``fallback="none"``: the graph alone
``rrf``                reciprocal rank fusion of ``bm25`` and ``aethel-ner3`` (k = 60)
``rrf-bct``            reciprocal rank fusion of ``bm25`` and ``aethel-bct``
``rrf-dense``          reciprocal rank fusion of ``bm25`` and ``dense``
``aethel-hybrid``      beyond the paper: :class:`~aethel_lite.retrievers.HybridRetriever`, the NER3 + BCT graph with
                       document and metadata nodes, passage seeds and a fused ranking
                       (:data:`aethel_lite.retrievers.hybrid.ABLATIONS`)
``aethel-hybrid-*``    its ablations (:data:`aethel_lite.retrievers.hybrid.ABLATIONS`)
``aethel-hybrid-v1``   the earlier hybrid setting (:data:`~aethel_lite.retrievers.hybrid.HISTORICAL`)
``aethel-anchors``     a stage holding ``aethel-hybrid``: one PageRank per company or fiscal year the
                       question names (:mod:`aethel_lite.retrievers.anchors`)
``aethel-statements``  a stage holding ``aethel-anchors``: each anchor's first places (a question with one anchor: the
                       first places) given to the statement pages of its filing (of its company and year) that report
                       the question's line item, named in the filing's or an analyst's words
                       (:mod:`aethel_lite.retrievers.statements`); the default of ``aethel index`` and ``aethel search``
``aethel-multihop``    beyond the paper, for open multi-hop corpora: dense and BM25 passage seeds, the passages
                       whose title the question names, and PageRank over the passages' title mentions
                       (:mod:`aethel_lite.retrievers.multihop`); ``aethel-multihop-*``: its ablations
                       (:data:`aethel_lite.retrievers.multihop.ABLATIONS`)
``aethel-bridges``     a stage holding ``aethel-multihop``: its walk also crosses the rare spaCy entities two passages
                       share (:mod:`aethel_lite.retrievers.multihop`)
``aethel-chain``       a stage holding ``aethel-bridges``: the question asked again after its first passages, without
                       the words they hold and with the names they add (:mod:`aethel_lite.retrievers.multihop`)
=====================  ======================================================================

Each name maps to an unfitted estimator (:data:`METHODS`), cloned on use (:func:`make_retriever`): its settings are
its ``get_params(deep=True)``. Fused methods (:data:`FUSIONS`) are run by :func:`aethel_lite.data.runs.fuse_runs`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ParameterError
from .anchors import AnchorsRetriever
from .base import Retriever, clone
from .bm25 import BM25Retriever
from .dense import DenseRetriever
from .graph import GraphRetriever
from .hybrid import ABLATION_LABELS, ABLATIONS, GRAPH, HISTORICAL, HybridRetriever
from .multihop import ABLATIONS as MULTIHOP_ABLATIONS
from .multihop import BridgesRetriever, ChainRetriever, MultiHopRetriever
from .statements import StatementsRetriever

__all__ = [
    "METHODS",
    "SUMMARIES",
    "MULTIHOP_ABLATIONS",
    "FUSIONS",
    "DEFAULT_METHODS",
    "DEFAULT_METHOD",
    "known_methods",
    "parse_methods",
    "make_retriever",
    "graph_path",
]


def _hybrid(**changes: Any) -> HybridRetriever:
    """``aethel-hybrid`` (the paper retriever of :data:`~aethel_lite.retrievers.hybrid.GRAPH` it holds) with
    ``changes`` (``set_params`` keys)."""
    return HybridRetriever(graph=GraphRetriever(**GRAPH)).set_params(**changes)


def _multihop(**changes: Any) -> MultiHopRetriever:
    return MultiHopRetriever(dense=DenseRetriever(), bm25=BM25Retriever()).set_params(**changes)


METHODS: dict[str, Retriever] = {
    "bm25": BM25Retriever(),
    "dense": DenseRetriever(),
    "aethel-reg": GraphRetriever(extractor="regex", bct="none"),
    "aethel-ner": GraphRetriever(extractor="ner", bct="none"),
    "aethel-ner3": GraphRetriever(extractor="ner3", bct="none"),
    "aethel-bct": GraphRetriever(extractor="ner3", bct="both"),
    "dense-max": DenseRetriever(pooling="max"),
    "dense-heading": DenseRetriever(pooling="heading"),
    "aethel-reg-pure": GraphRetriever(extractor="regex", bct="none", fallback="none"),
    "aethel-ner3-pure": GraphRetriever(extractor="ner3", bct="none", fallback="none"),
    "aethel-bct-pure": GraphRetriever(extractor="ner3", bct="both", fallback="none"),
    "aethel-hybrid": _hybrid(),
    **{name: _hybrid(**change) for name, change in ABLATIONS.items()},
    **{name: _hybrid(**change) for name, change in HISTORICAL.items()},
    "aethel-anchors": AnchorsRetriever(_hybrid(), anchor_gap=2),
    "aethel-statements": StatementsRetriever(AnchorsRetriever(_hybrid(), anchor_gap=2), unanchored=True),
    "aethel-multihop": _multihop(),
    **{name: _multihop(**change) for name, change in MULTIHOP_ABLATIONS.items()},
    "aethel-bridges": BridgesRetriever(_multihop()),
    "aethel-chain": ChainRetriever(BridgesRetriever(_multihop())),
}
# fused method -> the methods it fuses
FUSIONS: dict[str, tuple[str, ...]] = {
    "rrf": ("bm25", "aethel-ner3"),
    "rrf-bct": ("bm25", "aethel-bct"),
    "rrf-dense": ("bm25", "dense"),
}
#: what ``aethel eval`` runs unless ``--methods`` says otherwise (:func:`parse_methods` of None)
DEFAULT_METHODS = ("bm25", "dense", "aethel-reg", "aethel-ner3", "aethel-bct", "rrf")
#: what ``aethel index`` builds and ``aethel search`` answers with unless told otherwise: the best method measured
#: on FinanceBench's filings (the hybrid chapter's single-filing check and comparison questions); its index parts
#: are BM25, the NER3 graph, two dense parts, the documents' metadata and the statement pages
DEFAULT_METHOD = "aethel-statements"
#: every method in one line, for ``--help`` (a test keeps it complete)
SUMMARIES: dict[str, str] = {
    "bm25": "BM25 (bm25s, Lucene variant)",
    "dense": "all-MiniLM-L6-v2 cosine of the passage",
    "aethel-reg": "the paper's graph on capitalised spans, Personalized PageRank",
    "aethel-ner": "the paper's graph on spaCy entities",
    "aethel-ner3": "the paper's graph on filtered spaCy entities (NER3)",
    "aethel-bct": "aethel-ner3 with BCT: seeds widened to aliases and name variants",
    "dense-max": "dense: a page scores its best ~200-word window",
    "dense-heading": "dense: a page scores its first 200 characters",
    "aethel-reg-pure": "aethel-reg without the BM25 fallback (the graph alone)",
    "aethel-ner3-pure": "aethel-ner3 without the BM25 fallback",
    "aethel-bct-pure": "aethel-bct without the BM25 fallback",
    "aethel-hybrid": "the NER3 + BCT graph with document and metadata nodes, passage seeds and a fused ranking",
    **{name: f"aethel-hybrid, {ABLATION_LABELS[name]}" for name in (*ABLATIONS, *HISTORICAL)},
    "aethel-anchors": "aethel-hybrid with one PageRank per company or fiscal year the question names",
    "aethel-statements": "aethel-anchors with the statement pages that report the line item first",
    "aethel-multihop": "PageRank over passages linked by the titles they name, dense and BM25 seeds",
    "aethel-multihop-no-titles": "aethel-multihop without the passages the question names by title",
    "aethel-multihop-no-mentions": "aethel-multihop without the walk (its seeds, then the passage score)",
    "aethel-multihop-no-bm25": "aethel-multihop with dense passage scores alone",
    "aethel-bridges": "aethel-multihop walking also between passages that share a rare spaCy entity",
    "aethel-chain": "aethel-bridges, then the question asked again after its first passages (a second hop)",
    "rrf": "reciprocal rank fusion of bm25 and aethel-ner3",
    "rrf-bct": "reciprocal rank fusion of bm25 and aethel-bct",
    "rrf-dense": "reciprocal rank fusion of bm25 and dense",
}


def known_methods() -> list[str]:
    return list(METHODS) + list(FUSIONS)


def parse_methods(spec: str | Sequence[str] | None, flag: str = "--methods") -> list[str]:
    """``"bm25,dense"`` or a list → validated method names (unknown → ParameterError naming ``flag`` and listing the
    valid ones)."""
    if spec is None:
        return list(DEFAULT_METHODS)
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    if not names:
        raise ParameterError(f"{flag}: no method given")
    for name in names:
        if name not in METHODS and name not in FUSIONS:
            raise ParameterError(f"{flag}: unknown method {name!r}; choose from {', '.join(known_methods())}")
    return names


def graph_path(estimator: Any) -> str | None:
    """The ``set_params`` prefix of the paper's :class:`GraphRetriever` an estimator holds (``""``: it is one;
    ``"hybrid__graph__"`` for ``aethel-anchors``), or None when it holds none."""
    if isinstance(estimator, GraphRetriever):
        return ""
    for name, value in estimator.get_params(deep=False).items():
        if hasattr(value, "get_params") and not isinstance(value, type):
            inner = graph_path(value)
            if inner is not None:
                return f"{name}__{inner}"
    return None


def make_retriever(name: str, *, graph: Mapping[str, Any] | None = None, progress: bool = False) -> Retriever:
    """A fresh, unfitted retriever for a base method name (a clone of :data:`METHODS` ``[name]``).

    Parameters
    ----------
    name : str
        A key of :data:`METHODS`.
    graph : mapping, optional
        Settings of the paper's graph retriever the method holds that replace its own (e.g. ``{"n_process": 2}``
        or ``{"alias_table": ...}``); ignored by methods without one (BM25, dense, multi-hop).
    progress : bool
        Show progress bars.

    Raises
    ------
    ParameterError
        ``name`` is not a base method, or ``graph`` names a setting the graph retriever does not have.
    """
    if name not in METHODS:
        raise ParameterError(f"method {name!r} is not a base retriever; choose from {', '.join(METHODS)}")
    unknown = [key for key in (graph or {}) if key not in GraphRetriever._get_param_names()]
    if unknown:
        raise ParameterError(f"method {name!r}: the graph retriever has no setting {unknown[0]!r}")
    r = clone(METHODS[name])
    prefix = graph_path(r)
    if prefix is not None and graph:
        r.set_params(**{prefix + k: v for k, v in graph.items()})
    r.set_params(progress=progress)
    return r
