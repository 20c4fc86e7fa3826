r"""The settings of :class:`~aethel_lite.retrievers.HybridRetriever`: one frozen value, its chosen setting and ablations.

A passage scores

.. math::

    r(d) = \lambda_\text{ppr}\, \hat p_d + \lambda_\text{document}\, \hat\pi_{D(d)}
         + \lambda_\text{lexical}\, \hat b_d + \lambda_\text{dense}\, \hat c_d
         + \lambda_\text{heading}\, \hat h_d ,

its own PageRank, its document node's PageRank, BM25, the dense cosine and the dense cosine with the passage's
heading, each min–max normalised over the candidates; the teleport mixes the seed sources present,

.. math:: s = \sum_c \frac{w_c}{\sum_{c'} w_{c'}}\, s_c , \qquad c \in \{\text{entity}, \text{metadata},
          \text{lexical}, \text{dense}\}.

Every weight of the chosen setting (:data:`HYBRID`, the defaults of :class:`HybridSettings`) was chosen on the
*development* halves of the four open corpora by :func:`~aethel_lite.studies.tuning.tune`
(``aethel_lite/manifests/hybrid_tuning.json``); the test halves never take part. Each ablation
(:data:`ABLATIONS`) is that setting with named fields replaced.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ParameterError

__all__ = [
    "PASSAGE_SEEDS", "SOURCES", "DEFAULT_SEED_WEIGHTS", "RANK_TERMS", "TERM_SOURCE", "ANCHOR_MODES",
    "HybridSettings", "HYBRID", "GRAPH", "ABLATIONS", "ABLATION_LABELS", "HISTORICAL", "ANCHORED",
    "ANCHOR_PAGES", "STATEMENTS_FIRST",
]  # fmt: skip

PASSAGE_SEEDS = ("lexical", "dense")
#: Seed components of the personalization vector, in the order they are reported.
SOURCES = ("entity", "metadata", "lexical", "dense")
DEFAULT_SEED_WEIGHTS = {"entity": 1.0, "metadata": 1.0, "lexical": 1.0, "dense": 1.0}
#: Terms of the hybrid ranking score.
RANK_TERMS = ("ppr", "document", "lexical", "dense", "heading")
#: the seed source a ranking term's share of a hit is credited to (provenance); the rest are their own
TERM_SOURCE = {"heading": "dense"}
#: ``"joint"``: every anchor in one teleport; ``"each"``: one PageRank per anchor (:mod:`aethel_lite.retrievers.anchors`)
ANCHOR_MODES = ("joint", "each")
#: ``"rank"``: an anchor's places in its own order; ``"statements"``: its filing's statement pages that report the
#: question's line item first (:mod:`aethel_lite.retrievers.statements`)
ANCHOR_PAGES = ("rank", "statements")


def _weights_ok(values) -> bool:
    return all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in values)


@dataclass(frozen=True)
class HybridSettings:
    r"""What the hybrid adds to the paper's graph, as one frozen value (the defaults are ``aethel-hybrid``).

    Parameters
    ----------
    passage_seeds : tuple of {"lexical", "dense"}
        Passage seeds from the question's BM25 and dense scores (the top ``seed_depth`` of each).
    document_nodes, metadata : bool
        A node per document; nodes per company, fiscal period and filing type
        (:mod:`aethel_lite.data.docmeta`).
    period_linking : bool
        Seed the fiscal periods and filing types a question names (with ``metadata``).
    seed_weights : mapping
        Source → weight :math:`w_c` over :data:`DEFAULT_SEED_WEIGHTS`.
    seed_depth : int
        Passages seeded per passage source.
    dense_pooling : {"first", "max"}
        How the dense model scores a passage (:class:`~aethel_lite.retrievers.DenseRetriever`).
    rank_weights : mapping or None
        Ranking term → weight :math:`\lambda_t` (normalised to sum 1); ``None``: rank by PageRank.
    period_decay : float
        Weight of each earlier year a question names, relative to the next.
    anchors : {"joint", "each"}
        ``"each"``: one PageRank per company or fiscal year a question names (``aethel-anchors``).
    anchor_gap : int
        Years within ``anchor_gap`` of a kept anchor year join it.
    anchor_pages : {"rank", "statements"}
        With ``anchors="each"``: ``"statements"`` gives each anchor's first places to the statement pages of its
        filing that report the line item the question names (``aethel-statements``).
    """

    passage_seeds: tuple = ("lexical", "dense")
    document_nodes: bool = True
    metadata: bool = True
    period_linking: bool = True
    seed_weights: Mapping = field(
        default_factory=lambda: {"entity": 1.0, "metadata": 3.0, "lexical": 0.5, "dense": 0.5}
    )
    seed_depth: int = 30
    dense_pooling: str = "first"
    rank_weights: Mapping | None = field(
        default_factory=lambda: {"document": 0.3, "lexical": 0.2, "dense": 0.3, "heading": 0.2}
    )
    period_decay: float = 0.5
    anchors: str = "joint"
    anchor_gap: int = 2
    anchor_pages: str = "rank"

    def __post_init__(self) -> None:
        if isinstance(self.passage_seeds, str) or any(x not in PASSAGE_SEEDS for x in self.passage_seeds):
            raise ParameterError(
                f"passage_seeds must be a sequence of {', '.join(PASSAGE_SEEDS)}; got {self.passage_seeds!r}"
            )
        object.__setattr__(self, "passage_seeds", tuple(self.passage_seeds))
        unknown = [k for k in (self.seed_weights or {}) if k not in SOURCES]
        if unknown:
            raise ParameterError(
                f"seed_weights: unknown source {unknown[0]!r}; choose from {', '.join(SOURCES)}"
            )
        if not _weights_ok(self.source_weights().values()):
            raise ParameterError(f"seed_weights must be finite and >= 0; got {self.seed_weights!r}")
        if not (isinstance(self.period_decay, (int, float)) and 0 <= self.period_decay <= 1):
            raise ParameterError(f"period_decay must be in [0, 1]; got {self.period_decay!r}")
        if isinstance(self.seed_depth, bool) or not isinstance(self.seed_depth, int) or self.seed_depth < 1:
            raise ParameterError(f"seed_depth must be a positive integer; got {self.seed_depth!r}")
        if self.rank_weights is not None:
            bad = [t for t in self.rank_weights if t not in RANK_TERMS]
            if bad:
                raise ParameterError(
                    f"rank_weights: unknown term {bad[0]!r}; choose from {', '.join(RANK_TERMS)}"
                )
            vals = list(self.rank_weights.values())
            if not _weights_ok(vals) or not sum(vals) > 0:
                raise ParameterError(
                    f"rank_weights must be finite, >= 0 and not all 0; got {self.rank_weights!r}"
                )
            if self.rank_weights.get("document", 0) > 0 and not self.document_nodes:
                raise ParameterError("rank_weights: a 'document' term needs document_nodes=True")
        if self.anchors not in ANCHOR_MODES:
            raise ParameterError(f"anchors must be one of {', '.join(ANCHOR_MODES)}; got {self.anchors!r}")
        if self.anchors == "each" and not self.metadata:
            raise ParameterError("anchors='each' needs metadata=True (the anchors are metadata nodes)")
        if isinstance(self.anchor_gap, bool) or not isinstance(self.anchor_gap, int) or self.anchor_gap < 1:
            raise ParameterError(f"anchor_gap must be a positive integer; got {self.anchor_gap!r}")
        if self.anchor_pages not in ANCHOR_PAGES:
            raise ParameterError(
                f"anchor_pages must be one of {', '.join(ANCHOR_PAGES)}; got {self.anchor_pages!r}"
            )
        if self.anchor_pages != "rank" and self.anchors != "each":
            raise ParameterError(f"anchor_pages={self.anchor_pages!r} needs anchors='each'")

    def replace(self, **changes: Any) -> HybridSettings:
        """These settings with the named fields replaced (unknown names: :class:`ParameterError`)."""
        known = [f.name for f in dataclasses.fields(self)]
        bad = [k for k in changes if k not in known]
        if bad:
            raise ParameterError(f"HybridSettings: unknown setting {bad[0]!r}; it has {', '.join(known)}")
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """Field → value."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def source_weights(self) -> dict[str, float]:
        """Each seed source's weight :math:`w_c` (``seed_weights`` over :data:`DEFAULT_SEED_WEIGHTS`)."""
        w = {**DEFAULT_SEED_WEIGHTS, **(self.seed_weights or {})}
        return {k: float(w[k]) for k in SOURCES}

    def term_weights(self) -> dict[str, float] | None:
        """The ranking terms' weights normalised to sum 1 (zero ones dropped), or None (PageRank order)."""
        if self.rank_weights is None:
            return None
        live = {t: float(self.rank_weights.get(t, 0.0)) for t in RANK_TERMS}
        total = sum(live.values())
        return {t: v / total for t, v in live.items() if v > 0}

    def needs(self, source: str) -> bool:
        """Whether searching needs corpus-wide ``"lexical"``, ``"dense"`` or ``"heading"`` scores of a question."""
        return source in self.passage_seeds or source in (self.term_weights() or {})

    @property
    def has_components(self) -> bool:
        """Whether any seed source beyond entities, or any document or metadata node, takes part."""
        return bool(self.passage_seeds) or bool(self.document_nodes) or bool(self.metadata)


#: ``aethel-hybrid``: the paper's graph (filtered NER, BCT) and the chosen hybrid settings (a test checks the record)
GRAPH: dict[str, Any] = {"extractor": "ner3", "bct": "both", "alpha": 0.5}
HYBRID = HybridSettings()
_NO_DOCUMENT = {"lexical": 0.2, "dense": 0.3, "heading": 0.2}

#: Ablation name → the fields of :data:`HYBRID` it replaces (one component off at a time); ``"graph"``: the
#: paper retriever's settings it replaces
ABLATIONS: dict[str, dict[str, Any]] = {
    "aethel-hybrid-no-passage-seeds": {"passage_seeds": ()},
    "aethel-hybrid-no-lexical-seeds": {"passage_seeds": ("dense",)},
    "aethel-hybrid-no-dense-seeds": {"passage_seeds": ("lexical",)},
    "aethel-hybrid-no-documents": {"document_nodes": False, "rank_weights": _NO_DOCUMENT},
    "aethel-hybrid-no-metadata": {"metadata": False},
    "aethel-hybrid-no-period-linking": {"period_linking": False},
    "aethel-hybrid-no-bct": {"graph": {"bct": "none"}},
    "aethel-hybrid-ppr-only": {"rank_weights": None},
    "aethel-hybrid-no-heading": {"rank_weights": {"document": 0.3, "lexical": 0.2, "dense": 0.3}},
    "aethel-hybrid-no-graph": {"rank_weights": {"lexical": 0.2, "dense": 0.3, "heading": 0.2}},
}
ABLATION_LABELS = {
    "aethel-hybrid": "all components",
    "aethel-hybrid-no-passage-seeds": "no passage seeds (entity + metadata seeds only)",
    "aethel-hybrid-no-lexical-seeds": "no BM25 passage seeds",
    "aethel-hybrid-no-dense-seeds": "no dense passage seeds",
    "aethel-hybrid-no-documents": "no document nodes (metadata joined to passages; no document term)",
    "aethel-hybrid-no-metadata": "no metadata nodes (company, period, filing type)",
    "aethel-hybrid-no-period-linking": "no period linking (question periods and filing types not seeded)",
    "aethel-hybrid-no-bct": "no BCT (exact entity seeds only)",
    "aethel-hybrid-ppr-only": "ranked by PageRank alone (no fused ranking)",
    "aethel-hybrid-no-heading": "no heading term (the page's first 200 characters)",
    "aethel-hybrid-no-graph": "no graph: the same BM25 + dense + heading terms, PageRank terms dropped",
    "aethel-hybrid-v1": "the earlier setting, tuned before the heading term existed",
}
#: Earlier settings kept under their method names so that their numbers can be set beside today's:
#: ``aethel-hybrid-v1`` was tuned (and its test half seen) before the heading term existed
HISTORICAL: dict[str, dict[str, Any]] = {
    "aethel-hybrid-v1": {"rank_weights": {"document": 0.5, "lexical": 0.1, "dense": 0.4}},
}
#: ``aethel-anchors``: ``aethel-hybrid`` with one PageRank per company or fiscal year a question names;
#: ``anchor_gap`` 2: a 10-K holds its fiscal year and the one before
ANCHORED: dict[str, Any] = {"anchors": "each", "anchor_gap": 2}
#: ``aethel-statements``: ``aethel-anchors`` with each anchor's filing's statement pages for the question's line item
#: first
STATEMENTS_FIRST: dict[str, Any] = {**ANCHORED, "anchor_pages": "statements"}
