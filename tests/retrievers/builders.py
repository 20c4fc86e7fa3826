"""Building the retrievers of the tests from one flat dict of settings, as the single class of before held them,
and the titled passages of the multi-hop tests (:func:`titled_passages`).

The flat keys are the paper retriever's settings (:class:`GraphRetriever`), the hybrid's (:class:`HybridRetriever`),
and two switches for the stages built on it: ``anchors="each"`` wraps the hybrid in an :class:`AnchorsRetriever`
(with ``anchor_gap``), ``anchor_pages="statements"`` wraps that in a :class:`StatementsRetriever` (with
``min_docs``, ``min_word``, ``order``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aethel_lite.data.schema import Passage
from aethel_lite.errors import ParameterError
from aethel_lite.retrievers import (
    AnchorsRetriever,
    GraphRetriever,
    HybridRetriever,
    StatementsRetriever,
    clone,
)


def titled_passages(rows: Sequence[tuple[str, str]]) -> list[Passage]:
    """One passage per ``(title, text)``, ids ``p0, p1, …`` in a document of its own (``d0, d1, …``)."""
    return [Passage(f"p{i}", f"d{i}", title, text) for i, (title, text) in enumerate(rows)]


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
#: the stage switches and their values (the first: no stage)
STAGES = {"anchors": ("joint", "each"), "anchor_pages": ("rank", "statements")}
GRAPH_KEYS = frozenset(GraphRetriever._get_param_names())
HYBRID_KEYS = frozenset(HybridRetriever._get_param_names()) - {"graph"}
ANCHOR_KEYS = frozenset(AnchorsRetriever._get_param_names()) - {"hybrid", "prefit", "progress"}
STATEMENT_KEYS = frozenset(StatementsRetriever._get_param_names()) - {"anchors", "prefit", "progress"}


def _stage(settings: dict[str, Any]) -> tuple[str, str]:
    """The stage switches of ``settings`` (removed from it), checked."""
    out = []
    for key, values in STAGES.items():
        value = settings.pop(key, values[0])
        if value not in values:
            raise ParameterError(f"{key} must be one of {', '.join(values)}; got {value!r}")
        out.append(value)
    anchors, pages = out
    if pages != "rank" and anchors != "each":
        raise ParameterError(f"anchor_pages={pages!r} needs anchors='each'")
    return anchors, pages


def build(**settings: Any):
    """The paper's GraphRetriever, or a HybridRetriever composed over it when a hybrid setting is given (the hybrid
    settings not given are :data:`OFF`), held by the anchors and statements stages when their switch says so."""
    anchors, pages = _stage(settings)
    unknown = sorted(set(settings) - GRAPH_KEYS - HYBRID_KEYS - ANCHOR_KEYS - STATEMENT_KEYS)
    if unknown:
        raise ParameterError(f"build: unknown setting {unknown[0]!r}")
    graph = GraphRetriever(**{k: v for k, v in settings.items() if k in GRAPH_KEYS})
    hybrid = {k: v for k, v in settings.items() if k in HYBRID_KEYS and k not in GRAPH_KEYS}
    if not hybrid and anchors == "joint":
        return graph
    r = HybridRetriever(graph=graph, **{**OFF, **hybrid})
    if anchors == "each":
        r = AnchorsRetriever(hybrid=r, **{k: v for k, v in settings.items() if k in ANCHOR_KEYS})
    if pages == "statements":
        r = StatementsRetriever(anchors=r, **{k: v for k, v in settings.items() if k in STATEMENT_KEYS})
    return r


def _param_path(r, key: str) -> str:
    """The ``set_params`` key of the flat setting ``key`` in ``r``: the outermost estimator that has it (the stages
    first, the paper retriever last); ``key`` itself when none has it (``set_params`` names it)."""
    prefix, est = "", r
    while est is not None:
        names = type(est)._get_param_names()
        inner = [n for n in names if hasattr(getattr(est, n), "get_params")]
        if key in names and key not in inner:
            return prefix + key
        if not inner:
            break
        prefix, est = f"{prefix}{inner[0]}__", getattr(est, inner[0])
    return key


def derive(r, passages: Sequence, **changes: Any):
    """A new retriever fitted on ``passages``: ``r``'s settings with ``changes`` (flat keys, as :func:`build`),
    ``clone(r).set_params(...).fit(passages)``; ``anchors="each"`` (and ``anchor_pages="statements"``) wraps a
    clone of ``r`` in the stage. ``r`` is left as it was."""
    changes = dict(changes)
    new = clone(r)
    anchored, paged = (
        isinstance(r, (AnchorsRetriever, StatementsRetriever)),
        isinstance(r, StatementsRetriever),
    )
    now = {"anchors": "each" if anchored else "joint", "anchor_pages": "statements" if paged else "rank"}
    anchors, pages = _stage({**now, **{k: changes.pop(k) for k in STAGES if k in changes}})
    if (anchors == "joint" and anchored) or (pages == "rank" and paged):
        raise ParameterError("derive: a stage is not taken off; build the retriever it holds")
    if anchors == "each" and not anchored:
        new = AnchorsRetriever(hybrid=new)
    if pages == "statements" and not paged:
        new = StatementsRetriever(anchors=new)
    return new.set_params(**{_param_path(new, k): v for k, v in changes.items()}).fit(passages)
