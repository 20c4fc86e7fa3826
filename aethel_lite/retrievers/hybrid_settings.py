r"""``aethel-hybrid``'s settings: the chosen weights (:data:`HYBRID`) and its ablations (:data:`ABLATIONS`).

``aethel-hybrid`` is a :class:`~aethel_lite.retrievers.GraphRetriever` setting (no new class):
the passage–entity graph (filtered NER, BCT) gains a node per document and per metadata value
(:mod:`aethel_lite.retrievers.docmeta`), the teleport mixes entity, metadata, BM25 and dense seeds
(:mod:`aethel_lite.retrievers.hybrid`), and a passage scores

.. math::

    r(d) = \lambda_\text{ppr}\, \hat p_d + \lambda_\text{document}\, \hat\pi_{D(d)}
         + \lambda_\text{lexical}\, \hat b_d + \lambda_\text{dense}\, \hat c_d
         + \lambda_\text{heading}\, \hat h_d ,

its own PageRank, its document node's PageRank, BM25, the dense cosine and the dense cosine
with the passage's heading, each min–max normalised over the candidates. Every weight was chosen
on the *development* halves of the four open corpora by :func:`~aethel_lite.studies.tuning.tune`
(``aethel_lite/manifests/hybrid_tuning.json``); the test halves never take part.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The chosen setting of ``aethel-hybrid`` (GraphRetriever keyword arguments; a test checks the tuning record).
HYBRID: dict[str, Any] = {
    "extractor": "ner3",
    "bct": "both",
    "alpha": 0.5,
    "passage_seeds": ("lexical", "dense"),
    "document_nodes": True,
    "metadata": True,
    "period_linking": True,
    "dense_pooling": "first",
    "seed_depth": 30,
    "period_decay": 0.5,
    "seed_weights": {"entity": 1.0, "metadata": 3.0, "lexical": 0.5, "dense": 0.5},
    "rank_weights": {"document": 0.3, "lexical": 0.2, "dense": 0.3, "heading": 0.2},
}

#: Ablation name → what changes (one component off at a time).
ABLATIONS: dict[str, dict[str, Any]] = {
    "aethel-hybrid-no-passage-seeds": {"passage_seeds": ()},
    "aethel-hybrid-no-lexical-seeds": {"passage_seeds": ("dense",)},
    "aethel-hybrid-no-dense-seeds": {"passage_seeds": ("lexical",)},
    "aethel-hybrid-no-documents": {"document_nodes": False},
    "aethel-hybrid-no-metadata": {"metadata": False},
    "aethel-hybrid-no-period-linking": {"period_linking": False},
    "aethel-hybrid-no-bct": {"bct": "none"},
    "aethel-hybrid-ppr-only": {"rank_weights": None},
    "aethel-hybrid-no-heading": {"rank_weights": "no-heading"},
    "aethel-hybrid-no-graph": {"rank_weights": "text-only"},
    # the setting tuned (and its test half seen) before the heading term existed, for comparison
    "aethel-hybrid-v1": {
        "seed_depth": 30,
        "period_decay": 0.5,
        "seed_weights": {"entity": 1.0, "metadata": 3.0, "lexical": 0.5, "dense": 0.5},
        "rank_weights": {"document": 0.5, "lexical": 0.1, "dense": 0.4},
    },
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
#: ``aethel-anchors``: ``aethel-hybrid`` with one PageRank per company or fiscal year a question names
#: (:mod:`aethel_lite.retrievers.anchors`); ``anchor_gap`` 2: a 10-K holds its fiscal year and the one before
ANCHORED: dict[str, Any] = {"anchors": "each", "anchor_gap": 2}
#: ranking terms that read the text alone (kept by the ``"text-only"`` ablation)
_TEXT_TERMS = ("lexical", "dense", "heading")


def _variant(base: Mapping[str, Any], change: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    for key, value in change.items():
        if key == "rank_weights" and value in ("text-only", "no-heading"):
            keeps = (lambda t: t in _TEXT_TERMS) if value == "text-only" else (lambda t: t != "heading")
            rw = {t: w for t, w in (base.get("rank_weights") or {}).items() if keeps(t) and w > 0}
            out["rank_weights"] = rw or {"lexical": 1.0}
        else:
            out[key] = value
    rw = out.get("rank_weights")
    if rw is not None and not out.get("document_nodes"):
        out["rank_weights"] = {t: w for t, w in rw.items() if t != "document"}
    return out


def hybrid_methods() -> dict[str, tuple[str, dict[str, Any]]]:
    """``aethel-hybrid``, its ablations and ``aethel-anchors`` as :data:`aethel_lite.retrievers.registry.METHODS` entries."""
    changes = {"aethel-hybrid": {}, **ABLATIONS, "aethel-anchors": ANCHORED}
    return {name: ("GraphRetriever", _variant(HYBRID, change)) for name, change in changes.items()}
