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
                       (:mod:`aethel_lite.retrievers.hybrid_settings`)
``aethel-hybrid-*``    its ablations (:data:`aethel_lite.retrievers.hybrid_settings.ABLATIONS`)
``aethel-hybrid-v1``   the earlier hybrid setting (:data:`~aethel_lite.retrievers.hybrid_settings.HISTORICAL`)
``aethel-anchors``     ``aethel-hybrid`` with one PageRank per company or fiscal year the
                       question names (:mod:`aethel_lite.retrievers.anchors`)
``aethel-statements``  ``aethel-anchors`` with each anchor's first places given to the statement pages of its
                       filing that report the question's line item (:mod:`aethel_lite.retrievers.statements`)
``aethel-multihop``    beyond the paper, for open multi-hop corpora: dense and BM25 passage seeds, the passages
                       whose title the question names, and PageRank over the passages' title mentions
                       (:mod:`aethel_lite.retrievers.multihop`); ``aethel-multihop-*``: its ablations
                       (:data:`MULTIHOP_ABLATIONS`)
=====================  ======================================================================

Each name maps to a :class:`Method`: the retriever class and its settings, as plain data (:data:`METHODS`). Fused
methods (:data:`FUSIONS`) are run by :func:`aethel_lite.retrievers.fusion.fuse_runs`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ParameterError
from .bm25 import BM25Retriever
from .dense import DenseRetriever
from .graph import GraphRetriever
from .hybrid import HybridRetriever
from .hybrid_settings import ABLATIONS, ANCHORED, GRAPH, HISTORICAL, HYBRID, STATEMENTS_FIRST, HybridSettings
from .multihop import MultiHopRetriever

__all__ = [
    "Method",
    "METHODS",
    "MULTIHOP_ABLATIONS",
    "FUSIONS",
    "DEFAULT_METHODS",
    "known_methods",
    "parse_methods",
    "make_retriever",
]

#: ``aethel-multihop``'s ablations: its settings with one part taken away.
MULTIHOP_ABLATIONS: dict[str, dict[str, Any]] = {
    "aethel-multihop-no-titles": {"title_weight": 0.0},  # no passage named by the question's words
    "aethel-multihop-no-mentions": {"mentions": False},  # no walk: the seeds, then the passage score
    "aethel-multihop-no-bm25": {"bm25_weight": 0.0},  # dense passage scores alone
}

CLASSES = {"BM25Retriever": BM25Retriever, "DenseRetriever": DenseRetriever, "GraphRetriever": GraphRetriever,
           "HybridRetriever": HybridRetriever, "MultiHopRetriever": MultiHopRetriever}  # fmt: skip


@dataclass(frozen=True)
class Method:
    """A method: its retriever class (a key of ``CLASSES``), that class's settings and, for a hybrid, the paper
    retriever's settings (``graph``) and the hybrid settings."""

    cls: str
    params: Mapping[str, Any] = field(default_factory=dict)
    settings: HybridSettings | None = None

    @property
    def graph_params(self) -> dict[str, Any]:
        """The settings of the graph the method builds on (the paper retriever's; ``{}`` for BM25 and dense)."""
        return dict(self.params) if self.cls in ("GraphRetriever", "HybridRetriever") else {}


def _hybrid(graph: Mapping[str, Any] | None = None, **changes: Any) -> Method:
    return Method("HybridRetriever", {**GRAPH, **(graph or {})}, HYBRID.replace(**changes))


METHODS: dict[str, Method] = {
    "bm25": Method("BM25Retriever"),
    "dense": Method("DenseRetriever"),
    "aethel-reg": Method("GraphRetriever", {"extractor": "regex", "bct": "none"}),
    "aethel-ner": Method("GraphRetriever", {"extractor": "ner", "bct": "none"}),
    "aethel-ner3": Method("GraphRetriever", {"extractor": "ner3", "bct": "none"}),
    "aethel-bct": Method("GraphRetriever", {"extractor": "ner3", "bct": "both"}),
    "dense-max": Method("DenseRetriever", {"pooling": "max"}),
    "dense-heading": Method("DenseRetriever", {"pooling": "heading"}),
    "aethel-reg-pure": Method("GraphRetriever", {"extractor": "regex", "bct": "none", "fallback": "none"}),
    "aethel-ner3-pure": Method("GraphRetriever", {"extractor": "ner3", "bct": "none", "fallback": "none"}),
    "aethel-bct-pure": Method("GraphRetriever", {"extractor": "ner3", "bct": "both", "fallback": "none"}),
    "aethel-hybrid": _hybrid(),
    **{name: _hybrid(**change) for name, change in ABLATIONS.items()},
    **{name: _hybrid(**change) for name, change in HISTORICAL.items()},
    "aethel-anchors": _hybrid(**ANCHORED),
    "aethel-statements": _hybrid(**STATEMENTS_FIRST),
    "aethel-multihop": Method("MultiHopRetriever"),
    **{name: Method("MultiHopRetriever", change) for name, change in MULTIHOP_ABLATIONS.items()},
}
# fused method -> the methods it fuses
FUSIONS: dict[str, tuple[str, ...]] = {
    "rrf": ("bm25", "aethel-ner3"),
    "rrf-bct": ("bm25", "aethel-bct"),
    "rrf-dense": ("bm25", "dense"),
}
DEFAULT_METHODS = ("bm25", "dense", "aethel-reg", "aethel-ner3", "aethel-bct", "rrf")


def known_methods() -> list[str]:
    return list(METHODS) + list(FUSIONS)


def parse_methods(spec: str | Sequence[str] | None) -> list[str]:
    """``"bm25,dense"`` or a list → validated method names (unknown → ParameterError listing the valid ones)."""
    if spec is None:
        return list(DEFAULT_METHODS)
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    if not names:
        raise ParameterError("--methods: no method given")
    for name in names:
        if name not in METHODS and name not in FUSIONS:
            raise ParameterError(
                f"--methods: unknown method {name!r}; choose from {', '.join(known_methods())}"
            )
    return names


def make_retriever(name: str, *, graph: Mapping[str, Any] | None = None, progress: bool = False):
    """A fresh, unfitted retriever for a base method name.

    Parameters
    ----------
    name : str
        A key of :data:`METHODS`.
    graph : mapping, optional
        Settings of the paper's graph retriever that replace the method's own, for graph and hybrid methods (e.g.
        ``{"n_process": 2}`` or ``{"alias_table": ...}``); ignored by BM25 and dense methods.
    progress : bool
        Show progress bars.

    Raises
    ------
    ParameterError
        ``name`` is not a base method, or ``graph`` names a setting the graph retriever does not have.
    """
    if name not in METHODS:
        raise ParameterError(f"method {name!r} is not a base retriever; choose from {', '.join(METHODS)}")
    method = METHODS[name]
    unknown = [key for key in (graph or {}) if key not in GraphRetriever.param_names()]
    if unknown:
        raise ParameterError(f"method {name!r}: the graph retriever has no setting {unknown[0]!r}")
    cls = GraphRetriever if method.cls == "HybridRetriever" else CLASSES[method.cls]
    bad = [key for key in method.params if key not in cls.param_names()]
    if bad:
        raise ParameterError(
            f"method {name!r} needs {cls.__name__}({bad[0]}=...), which this {cls.__name__} does not accept"
        )
    if method.cls == "GraphRetriever":
        return GraphRetriever(**{**method.params, **(graph or {}), "progress": progress})
    if method.cls == "HybridRetriever":
        paper = GraphRetriever(**{**method.params, **(graph or {})})
        return HybridRetriever(paper, method.settings, progress=progress)
    return CLASSES[method.cls](**method.params, progress=progress)
