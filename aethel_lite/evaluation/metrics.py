r"""Retrieval metrics with binary relevance (a passage is gold or not).

For a query with gold set :math:`G` and ranking :math:`d_1, d_2, \dots` (best first, repeats of a
pid ignored after its first position), with :math:`\mathrm{rel}_i = [d_i \in G]`:

===================  ====================================================================
``HR@k``             hit rate: 1 if some gold passage is in the top k, else 0
``AllSupport@k``     1 if *every* gold passage is in the top k, else 0 (multi-hop support)
``Recall@k``         :math:`|G \cap \mathrm{top}_k| / |G|`
``MRR``              :math:`1/\mathrm{rank}` of the first gold passage in the whole run (0 if none)
``nDCG@k``           :math:`\mathrm{DCG}_k / \mathrm{IDCG}_k`, :math:`\mathrm{DCG}_k = \sum_{i \le k} \mathrm{rel}_i / \log_2(i + 1)`,
                     :math:`\mathrm{IDCG}_k = \sum_{i \le \min(|G|, k)} 1 / \log_2(i + 1)` (Järvelin & Kekäläinen 2002)
===================  ====================================================================

``MRR`` has no cut-off: ``aethel eval``'s runs are 1,000 deep, so its ``MRR`` is over the whole
ranking up to an error below 0.001 per query. ``HR@k``, ``Recall@k``, ``MRR`` and ``nDCG@k`` equal
trec_eval's ``success_k``, ``recall_k``, ``recip_rank`` and ``ndcg_cut_k`` when the run's scores are
strictly decreasing, as in the project's run files; these functions use the run's order as given.

Ties go to the passage earlier in corpus order (:func:`gold_rank`, as
:func:`~aethel_lite.retrievers.base.topk`); means over questions are :func:`mean`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import DataError, ParameterError

__all__ = [
    "DEFAULT_METRICS",
    "Metric",
    "parse_metric",
    "per_query",
    "evaluate",
    "first_gold_rank",
    "gold_rank",
    "mean",
    "mean_metrics",
]

DEFAULT_METRICS = ("HR@1", "HR@5", "AllSupport@5", "Recall@5", "MRR", "nDCG@10")

_CUTOFF = {"hr": "HR", "allsupport": "AllSupport", "recall": "Recall", "ndcg": "nDCG"}
_PATTERN = re.compile(r"^\s*([A-Za-z]+)\s*@\s*(\d+)\s*$")


@dataclass(frozen=True)
class Metric:
    """A parsed metric: ``kind`` in {HR, AllSupport, Recall, nDCG, MRR}, cut-off ``k`` (None for MRR)."""

    name: str
    kind: str
    k: int | None

    def __call__(self, ranking: Sequence[str], gold: frozenset[str] | set[str]) -> float:
        """The metric of one ranked list of pids against a non-empty gold set."""
        if self.kind == "MRR":
            rank = first_gold_rank(ranking, gold)
            return 1.0 / rank if rank else 0.0
        top = ranking[: self.k]
        hits = sum(1 for pid in top if pid in gold)
        if self.kind == "HR":
            return 1.0 if hits else 0.0
        if self.kind == "AllSupport":
            return 1.0 if hits == len(gold) else 0.0
        if self.kind == "Recall":
            return hits / len(gold)
        # nDCG
        dcg = sum(1.0 / math.log2(i + 1) for i, pid in enumerate(top, start=1) if pid in gold)
        idcg = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(gold), self.k) + 1))
        return dcg / idcg


def first_gold_rank(ranking: Sequence[str], gold: frozenset[str] | set[str]) -> int:
    """1-based position of the first gold pid in a ranked list of pids; 0 if none is in it."""
    return next((i for i, pid in enumerate(ranking, start=1) if pid in gold), 0)


def gold_rank(scores: np.ndarray, gold: Sequence[int], among: np.ndarray | None = None) -> int:
    r"""1-based rank of the best-scored gold passage of one question, from the scores of every passage.

    With :math:`g^*` the first (in corpus order) of the gold rows with the highest score :math:`s^*`,

    .. math::  r = 1 + \#\{d : s(d) > s^*\} + \#\{d < g^* : s(d) = s^*\}

    counted over the rows ``among`` (default all): ties go to the passage earlier in corpus order,
    the rule of :func:`~aethel_lite.retrievers.base.topk`, so :math:`r` is the rank ``search`` gives.

    Parameters
    ----------
    scores : ndarray, shape (n_passages,)
        Higher is better; ``-inf`` or NaN means not ranked.
    gold : sequence of int
        Row numbers of the gold passages.
    among : ndarray of bool, shape (n_passages,), optional
        The passages that compete, the gold ones among them (e.g. the pages of the gold documents).

    Returns
    -------
    int
        The rank, or 0 (a miss) when ``gold`` is empty or its best score is ``-inf`` / NaN.
    """
    scores = np.asarray(scores, dtype=np.float64)
    gold = np.asarray(gold, dtype=np.int64)
    if gold.size == 0:
        return 0
    values = scores[gold]
    best = values.max()
    if np.isnan(best) or best == -np.inf:
        return 0
    first = int(gold[values == best].min())
    if among is None:
        ahead = np.count_nonzero(scores > best) + np.count_nonzero(scores[:first] == best)
    else:
        ahead = np.count_nonzero(among & (scores > best)) + np.count_nonzero(
            among[:first] & (scores[:first] == best)
        )
    return 1 + int(ahead)


def mean(values: Sequence[float]) -> float:
    """The mean of per-question values: ``sum(values) / len(values)``, summed in the order given
    (every mean metric the project reports, so equal inputs in equal order give the same float).

    Raises
    ------
    DataError
        ``values`` is empty.
    """
    values = list(values)
    if not values:
        raise DataError("no values to average")
    return sum(values) / len(values)


def mean_metrics(table: Mapping[str, Mapping[str, float]], names: Sequence[str]) -> dict[str, float]:
    """Mean of each metric ``names`` over the rows of a :func:`per_query` table (in its query order)."""
    rows = list(table.values())
    return {name: mean([row[name] for row in rows]) for name in names}


def parse_metric(name: str) -> Metric:
    """Parse ``"HR@5"``, ``"AllSupport@5"``, ``"Recall@10"``, ``"nDCG@10"`` or ``"MRR"`` (case-insensitive).

    Raises
    ------
    ParameterError
        Unknown metric name or a cut-off < 1.
    """
    if not isinstance(name, str):
        raise ParameterError(f"metric name must be a string, got {name!r}")
    if name.strip().casefold() in ("mrr", "rr"):
        return Metric(name, "MRR", None)
    m = _PATTERN.match(name)
    kind = _CUTOFF.get(m.group(1).casefold()) if m else None
    if kind is None:
        raise ParameterError(
            f"unknown metric {name!r}; use HR@k, AllSupport@k, Recall@k, nDCG@k or MRR "
            f"(e.g. {', '.join(DEFAULT_METRICS)})"
        )
    k = int(m.group(2))
    if k < 1:
        raise ParameterError(f"metric {name!r}: the cut-off must be >= 1")
    return Metric(name, kind, k)


def _ranked_pids(ranking: Iterable) -> list[str]:
    """The pids of a ranking (pids or ``(pid, score)`` pairs), each at its first position."""
    return list(dict.fromkeys(item if isinstance(item, str) else item[0] for item in ranking))


def per_query(
    run: Mapping[str, Sequence], queries: Sequence, metrics: Sequence[str] = DEFAULT_METRICS
) -> dict[str, dict[str, float]]:
    """Metric values per query.

    Parameters
    ----------
    run : Run or mapping qid -> ranked [(pid, score), ...] (or ranked pids), best first
    queries : sequence of Query
        Their ``gold`` sets are the relevant passages; a query absent from ``run`` scores 0.
    metrics : sequence of str
        Metric names (:func:`parse_metric`).

    Returns
    -------
    dict
        ``qid -> {metric name: value}`` in query order.

    Raises
    ------
    ParameterError, DataError
        Unknown metric name; a query without gold passages, or a repeated qid (named).
    """
    parsed = [parse_metric(m) for m in metrics]
    if not parsed:
        raise ParameterError("metrics is empty")
    out: dict[str, dict[str, float]] = {}
    for q in queries:
        if q.qid in out:
            raise DataError(f"duplicate query id {q.qid!r}")
        gold = frozenset(q.gold)
        if not gold:
            raise DataError(f"query {q.qid!r} has no gold passages: it cannot be evaluated")
        ranking = _ranked_pids(run.get(q.qid, ()))
        out[q.qid] = {m.name: float(m(ranking, gold)) for m in parsed}
    return out


def evaluate(
    run: Mapping[str, Sequence], queries: Sequence, metrics: Sequence[str] = DEFAULT_METRICS
) -> dict[str, float]:
    """Mean of each metric over ``queries`` (queries absent from the run score 0). See :func:`per_query`."""
    table = per_query(run, queries, metrics)
    if not table:
        raise DataError("no queries to evaluate")
    return mean_metrics(table, [parse_metric(m).name for m in metrics])
