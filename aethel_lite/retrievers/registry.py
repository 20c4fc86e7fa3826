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
``aethel-hybrid``      beyond the paper: the NER3 + BCT graph with document and metadata nodes, passage seeds
                       and a fused ranking (:mod:`aethel_lite.retrievers.hybrid_settings`)
``aethel-hybrid-*``    its ablations (:data:`aethel_lite.retrievers.hybrid_settings.ABLATIONS`)
``aethel-anchors``     ``aethel-hybrid`` with one PageRank per company or fiscal year the
                       question names (:mod:`aethel_lite.retrievers.anchors`)
=====================  ======================================================================

Fused methods (:data:`FUSIONS`) are run by :func:`aethel_lite.retrievers.fusion.fuse_runs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import retrievers
from ..errors import ParameterError
from .hybrid_settings import hybrid_methods

# name -> keyword arguments of the retriever that implements it
METHODS: dict[str, tuple[str, dict[str, Any]]] = {
    "bm25": ("BM25Retriever", {}),
    "dense": ("DenseRetriever", {}),
    "aethel-reg": ("GraphRetriever", {"extractor": "regex", "bct": "none"}),
    "aethel-ner": ("GraphRetriever", {"extractor": "ner", "bct": "none"}),
    "aethel-ner3": ("GraphRetriever", {"extractor": "ner3", "bct": "none"}),
    "aethel-bct": ("GraphRetriever", {"extractor": "ner3", "bct": "both"}),
    "dense-max": ("DenseRetriever", {"pooling": "max"}),
    "dense-heading": ("DenseRetriever", {"pooling": "heading"}),
    "aethel-reg-pure": ("GraphRetriever", {"extractor": "regex", "bct": "none", "fallback": "none"}),
    "aethel-ner3-pure": ("GraphRetriever", {"extractor": "ner3", "bct": "none", "fallback": "none"}),
    "aethel-bct-pure": ("GraphRetriever", {"extractor": "ner3", "bct": "both", "fallback": "none"}),
}
METHODS.update(hybrid_methods())
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


def make_retriever(name: str, **overrides: Any):
    """A fresh, unfitted retriever for a base method name.

    Parameters
    ----------
    name : str
        A key of :data:`METHODS`.
    **overrides : mapping
        Retriever class name → keyword arguments that override the method's own (e.g.
        ``GraphRetriever={"alias_table": ...}``).

    Raises
    ------
    ParameterError
        ``name`` is not a base method, or the retriever class does not accept one of its settings (named).
    """
    if name not in METHODS:
        raise ParameterError(f"method {name!r} is not a base retriever; choose from {', '.join(METHODS)}")
    cls_name, kwargs = METHODS[name]
    cls = getattr(retrievers, cls_name)
    merged = {**kwargs, **overrides.get(cls_name, {})}
    known = cls.param_names()  # the keys of cls.get_params()
    unknown = [key for key in merged if key not in known]
    if unknown:
        raise ParameterError(
            f"method {name!r} needs {cls_name}({unknown[0]}=...), which this {cls_name} does not accept"
        )
    return cls(**merged)
