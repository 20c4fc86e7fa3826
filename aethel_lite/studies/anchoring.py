r"""Where the open-corpus error lies: choosing the document, or ranking the pages inside it.

On long documents (FinanceBench: 74 filings of ~140 pages each) a retriever misses the evidence
page by looking in the wrong filing, or by ranking the wrong page of the right one first.
:func:`anchoring_study` measures both for ``aethel-hybrid`` and the text baselines, per question:

* the **document rank** :math:`r_D(q)` (:func:`document_rank`) of the gold document among all
  documents by ``aethel-hybrid``'s document-node PageRank :math:`\pi_D`;
* the **within-document reciprocal rank** of each ranker,

  .. math::

      \mathrm{RR}_\text{in}(q) = \frac{1}{1 + \#\{d \in \mathcal D_q : s_q(d) > s_q(g^*)\}
                                         + \#\{d \in \mathcal D_q : d < g^*,\ s_q(d) = s_q(g^*)\}} ,

  its score :math:`s_q` restricted to the pages :math:`\mathcal D_q` of the gold documents
  (:math:`g^*` the first of the best-scored gold pages; :func:`reciprocal_rank`'s ties): the MRR
  with a perfect choice of filing. Restricting removes competitors only, so
  :math:`\mathrm{RR}_\text{in} \ge \mathrm{RR}` for every ranker and question.

References
----------
Islam et al., "FinanceBench: A New Benchmark for Financial Question Answering", 2023 (search
restricted to the right filing). Dai & Callan, SIGIR 2019 (page scored by its best passage).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..caching.memo import shared
from ..caching.resultcache import cached, dataset_digest
from ..errors import ParameterError
from ..evaluation.metrics import gold_rank
from ..retrievers import params_json
from ..retrievers.registry import make_retriever
from ..retrievers.traces import BLOCK

__all__ = [
    "within_document_rr",
    "reciprocal_rank",
    "document_rank",
    "anchoring_study",
    "anchoring_sentences",
    "RANKERS",
]

#: Rankers whose within-document RR is measured beside ``aethel-hybrid``.
RANKERS = ("bm25", "dense", "dense-max", "dense-heading")
#: Corpora with fewer passages per document than this are skipped (choosing the document is choosing the passage).
MIN_PASSAGES_PER_DOCUMENT = 2.0
#: Within-document MRR differences under this are reported as "about as well as" in the generated text.
SAME_MRR = 0.02


def within_document_rr(scores: np.ndarray, gold: Sequence[int], doc_index: np.ndarray) -> float:
    r""":math:`\mathrm{RR}_\text{in}` (see the module): :func:`reciprocal_rank` among the gold documents' passages.

    Parameters
    ----------
    scores : ndarray, shape (n_passages,)
        One question's scores of every passage (higher is better; ``-inf`` = not ranked).
    gold : sequence of int
        Row numbers of the gold passages.
    doc_index : ndarray of int, shape (n_passages,)
        Document number of every passage.

    Returns
    -------
    float
        0 if no gold passage is ranked.
    """
    gold = np.asarray(list(gold), dtype=np.int64)
    if gold.size == 0:
        raise ParameterError("within_document_rr: the question has no gold passage in the corpus")
    inside = np.isin(doc_index, np.unique(doc_index[gold]))
    return reciprocal_rank(scores, gold, inside)


def reciprocal_rank(scores: np.ndarray, gold: Sequence[int], among: np.ndarray | None = None) -> float:
    """1 / :func:`~aethel_lite.evaluation.metrics.gold_rank` of the best gold passage among the passages ``among``
    (a mask; default all): ties go to the earlier passage in corpus order, as in ``search``; 0 if unranked."""
    rank = gold_rank(scores, list(gold), among)
    return 1.0 / rank if rank else 0.0


def document_rank(document_scores: np.ndarray, gold_documents: Sequence[int]) -> int:
    """1-based rank of the best gold document by ``document_scores`` (ties share the lower rank)."""
    document_scores = np.asarray(document_scores, dtype=np.float64)
    best = document_scores[np.asarray(list(gold_documents), dtype=np.int64)].max()
    return 1 + int(np.count_nonzero(document_scores > best))


def anchoring_study(
    dataset,
    *,
    fitted: Mapping[str, Any] | None = None,
    halves: Mapping[str, Sequence[str]] | None = None,
    rankers: Sequence[str] = RANKERS,
) -> dict:
    """Document ranks and within-document reciprocal ranks on one open corpus (see the module).

    Parameters
    ----------
    dataset : Dataset
        An open corpus whose passages carry ``doc_id``.
    fitted : mapping, optional
        Method name → a retriever already fitted on ``dataset``'s passages; the others are fitted here.
    halves : mapping, optional
        Half name → qids (e.g. :func:`aethel_lite.studies.tuning.halves`); means per half and ``"all"``.
    rankers : sequence of str
        Baselines measured beside ``aethel-hybrid``.

    Returns
    -------
    dict
        ``{"skipped": reason, ...}`` when the corpus has under :data:`MIN_PASSAGES_PER_DOCUMENT`
        passages per document; else ``n_documents``, ``passages_per_document``, ``methods``,
        ``per_query`` (qid → ``document_rank`` and ``rr`` / ``rr_within`` per method) and ``means``
        (half → ``n``, ``document_at_1``, ``document_at_3``, ``median_document_rank``, and per method
        ``MRR`` and ``MRR_within``).
    """
    given = dict(fitted or {})
    models = {
        name: given[name] if name in given else make_retriever(name) for name in ("aethel-hybrid", *rankers)
    }
    parts = {h: list(ids) for h, ids in (halves or {}).items()}
    return cached(
        "anchoring",
        {
            "dataset": dataset_digest(dataset),
            "methods": {n: params_json(r) for n, r in models.items()},
            "halves": parts,
        },
        lambda: _anchoring(dataset, models, fitted=set(given), halves=parts),
    )


def _anchoring(dataset, models: dict, *, fitted: set, halves: dict) -> dict:
    passages = list(dataset.passages)
    docs, first_page, doc_index = np.unique(
        [p.doc_id for p in passages], return_index=True, return_inverse=True
    )
    per_doc = len(passages) / max(len(docs), 1)
    size = {"n_documents": len(docs), "passages_per_document": round(per_doc, 3)}
    if len(docs) < 2 or per_doc < MIN_PASSAGES_PER_DOCUMENT:
        why = (
            f"{len(docs)} document: nothing to choose between"
            if len(docs) < 2
            else f"{per_doc:.2f} passages per document, fewer than {MIN_PASSAGES_PER_DOCUMENT:g}"
        )
        return {"skipped": why, **size}
    row = {p.pid: i for i, p in enumerate(passages)}
    queries = [q for q in dataset.queries if any(g in row for g in q.gold)]
    if not queries:
        return {"skipped": "no question has a gold passage in the corpus", **size}
    for name, r in models.items():
        if name not in fitted:
            with shared():
                r.fit(passages)
        elif list(r.pids_) != [p.pid for p in passages]:
            raise ParameterError(
                f"anchoring_study: the fitted {name!r} retriever was not fitted on {dataset.name!r}'s passages"
            )
    methods = list(models)
    hybrid = models["aethel-hybrid"]
    if not hybrid.document_nodes:
        raise ParameterError("anchoring_study: aethel-hybrid must have document nodes (document_nodes=True)")
    # corpus-length scores of every question, shape (n_queries, n_passages)
    scores = {name: np.stack(list(models[name].corpus_scores(queries))) for name in methods}
    document_nodes = hybrid.doc_nodes(hybrid.graph_, None)[
        first_page
    ]  # one node per document, in `docs` order
    per_query = {}
    for start in range(0, len(queries), BLOCK):
        chunk = queries[start : start + BLOCK]
        P = hybrid.ppr([q.text for q in chunk])[0]
        for j, q in enumerate(chunk):
            i = start + j
            gold = [row[g] for g in q.gold if g in row]
            entry = {"document_rank": document_rank(P[document_nodes, j], np.unique(doc_index[gold]))}
            for name in methods:
                s = scores[name][i]
                entry[name] = {
                    "rr": reciprocal_rank(s, gold),
                    "rr_within": within_document_rr(s, gold, doc_index),
                }
            per_query[q.qid] = entry
    parts = {
        "all": [q.qid for q in queries],
        **{h: [x for x in ids if x in per_query] for h, ids in halves.items()},
    }
    means = {}
    for half, ids in parts.items():
        if not ids:
            continue
        ranks = np.array([per_query[x]["document_rank"] for x in ids])
        m = {
            "n": len(ids),
            "document_at_1": round(float(np.mean(ranks == 1)), 6),
            "document_at_3": round(float(np.mean(ranks <= 3)), 6),
            "median_document_rank": float(np.median(ranks)),
        }
        for name in methods:
            m[name] = {
                "MRR": round(float(np.mean([per_query[x][name]["rr"] for x in ids])), 6),
                "MRR_within": round(float(np.mean([per_query[x][name]["rr_within"] for x in ids])), 6),
            }
        means[half] = m
    return {**size, "methods": methods, "per_query": per_query, "means": means}


def anchoring_sentences(
    results: Mapping[str, Mapping[str, Any]], half: str = "all", *, skipped: bool = True
) -> list[str]:
    """Generated bullets: per corpus, how often the filing is right and what ranking inside it allows
    (``skipped``: also one bullet per corpus that was not measured, and why)."""
    out = []
    for corpus, res in results.items():
        if "skipped" in res:
            if skipped:
                out.append(f"* `{corpus}`: not measured ({res['skipped']}).")
            continue
        m = res["means"].get(half)
        if not m:
            continue
        rankers = [n for n in res["methods"] if n != "aethel-hybrid"]
        best = max(rankers, key=lambda n: (m[n]["MRR_within"], n))
        h = m["aethel-hybrid"]
        share = h["MRR"] / h["MRR_within"] if h["MRR_within"] > 0 else 0.0
        gap = h["MRR_within"] - m[best]["MRR_within"]
        out.append(
            f"* `{corpus}` ({half} questions: {m['n']}; {res['n_documents']} documents of "
            f"{res['passages_per_document']:.0f} passages on average): `aethel-hybrid`'s document nodes rank the gold "
            f"document first for {100 * m['document_at_1']:.0f}% of the questions and in the top 3 for "
            f"{100 * m['document_at_3']:.0f}%. Inside the gold document the evidence passage's MRR is "
            + ", ".join(f"{m[n]['MRR_within']:.3f} for `{n}`" for n in rankers)
            + f" and {h['MRR_within']:.3f} for `aethel-hybrid` ({gap:+.3f} against the best text ranker, `{best}`): "
            + (
                "it orders a document's passages about as well as that ranker"
                if abs(gap) < SAME_MRR
                else "it orders a document's passages better than that ranker"
                if gap > 0
                else "it orders a document's passages worse than that ranker"
            )
            + (
                f", so what it gains over the whole corpus (MRR {h['MRR']:.3f} against {m[best]['MRR']:.3f}) comes from "
                "choosing the document. "
                if abs(gap) < SAME_MRR and h["MRR"] > m[best]["MRR"]
                else f" (MRR over the whole corpus {h['MRR']:.3f} against {m[best]['MRR']:.3f}). "
            )
            + f"It reaches {100 * share:.0f}% of its own within-document MRR: a perfect choice of document "
            f"would add at most {h['MRR_within'] - h['MRR']:.3f}; beyond that only a better passage ranker helps."
        )
    return out
