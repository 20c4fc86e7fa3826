"""JSON-able counts that describe a :class:`~aethel_lite.data.schema.Dataset` (the chapters' data boxes)."""

from __future__ import annotations

from collections import Counter
from typing import Any


def dataset_summary(dataset) -> dict[str, Any]:
    """The counts of ``dataset``: ``name``, ``n_passages``, ``n_documents``, ``n_queries``, ``hops`` (hop count ->
    number of queries, keys as strings), ``mean_gold`` (gold passages per query), ``mean_passage_chars``,
    ``closed_pool`` (number of queries with a candidate pool)."""
    passages, queries = dataset.passages, dataset.queries
    hops = Counter(str(q.hops) for q in queries)
    return {
        "name": dataset.name,
        "n_passages": len(passages),
        "n_documents": len({p.doc_id for p in passages}),
        "n_queries": len(queries),
        "hops": dict(sorted(hops.items(), key=lambda kv: int(kv[0]))),
        "mean_gold": round(sum(len(q.gold) for q in queries) / len(queries), 4) if queries else 0.0,
        "mean_passage_chars": round(sum(len(p.text) for p in passages) / len(passages), 2)
        if passages
        else 0.0,
        "closed_pool": sum(q.pool is not None for q in queries),
    }
