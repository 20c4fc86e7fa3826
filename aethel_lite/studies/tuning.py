"""Choosing ``aethel-hybrid``'s weights on the development halves (``python -m aethel_lite.studies.tuning``).

:func:`tune` scores every seed setting of :data:`SEED_GRID` and every ranking-weight vector on a
:data:`RANK_GRID` simplex by the mean development MRR over the corpora, and :func:`main` keeps
the grid and its scores in ``aethel_lite/manifests/hybrid_tuning.json``; the test halves never
take part. The chosen setting is the defaults of :class:`~aethel_lite.retrievers.HybridRetriever`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..caching.memo import shared
from ..core.encoders import resolve_precision
from ..evaluation.metrics import gold_rank
from ..evaluation.splits import split
from ..io import read_json, write_json
from ..retrievers import GraphRetriever, HybridRetriever, clone
from ..retrievers.hybrid import GRAPH, RANK_TERMS
from ..retrievers.traces import BLOCK, ppr_block
from .open_corpus import load_open

TUNING_PATH = Path(__file__).resolve().parent.parent / "manifests" / "hybrid_tuning.json"


# ------------------------------------------------------------------------------------ halves
def halves(dataset) -> dict[str, list]:
    """The development and test questions of a data set (:func:`aethel_lite.evaluation.splits.split`), as Query lists."""
    parts = split(dataset.name, [q.qid for q in dataset.queries])
    by_id = {q.qid: q for q in dataset.queries}
    return {"dev": [by_id[q] for q in parts["dev"]], "test": [by_id[q] for q in parts["test"]]}


# ------------------------------------------------------------------------------------ tuning
#: Seed-side settings tried by :func:`tune` (each needs its own PageRank solves); dense pooling stays
#: ``"first"``: ``"max"`` multiplies each query's dense part by the windows per page (20 ms target).
SEED_GRID: dict[str, Sequence[Any]] = {
    "dense_pooling": ("first",),
    "seed_depth": (10, 30),
    "metadata": (1.0, 3.0),
    "passages": (0.5, 1.0, 2.0),  # weight of the lexical and of the dense passage seeds (entity = 1)
    "period_decay": (1.0, 0.5),
}
#: the settings the grid chooses (not recorded as fixed)
_TUNED = ("seed_weights", "rank_weights", "dense_pooling", "seed_depth", "period_decay")
#: Step of the simplex grid over the ranking weights of RANK_TERMS (each a multiple of it, summing to 1).
RANK_GRID = 0.1


def _simplex(step: float, k: int = 4) -> list[tuple[float, ...]]:
    n = int(round(1 / step))
    return [
        tuple(round(c / n, 10) for c in combo)
        for combo in itertools.product(range(n + 1), repeat=k)
        if sum(combo) == n
    ]


def _rank_of_gold(S: np.ndarray, gold: list[np.ndarray]) -> np.ndarray:
    """:func:`~aethel_lite.evaluation.metrics.gold_rank` of each column; a miss ranks ``n_rows + 1``."""
    return np.array([gold_rank(S[:, j], g) or S.shape[0] + 1 for j, g in enumerate(gold)], dtype=np.int64)


def _terms_for(retriever, queries) -> tuple[np.ndarray, list[np.ndarray]]:
    """Normalised ranking terms of a fitted open-corpus hybrid, shape (len(RANK_TERMS), n_passages, n_queries), and
    gold rows; every term its parts allow is measured (an unavailable one stays 0)."""
    n_p = len(retriever.pids_)
    T = np.zeros((len(RANK_TERMS), n_p, len(queries)))
    probe = retriever  # its rank_weights name every available term (tune fits it so)
    docs = probe.doc_nodes(probe.graph_, None)
    idx = np.arange(n_p)
    for start in range(0, len(queries), BLOCK):
        chunk = queries[start : start + BLOCK]
        P, _, rows = ppr_block(probe, [q.text for q in chunk])
        for j, q in enumerate(chunk):
            terms = probe.rank_terms(
                q.text,
                P[:n_p, j],
                idx,
                lexical=rows[j].get("lexical"),
                dense=rows[j].get("dense"),
                heading=rows[j].get("heading"),
                doc_ppr=None if docs is None else P[docs, j],
            )
            for t, v in terms.items():
                T[RANK_TERMS.index(t), :, start + j] = v
    gold = [
        np.array(sorted(retriever.pid_index_[p] for p in q.gold if p in retriever.pid_index_), dtype=np.int64)
        for q in queries
    ]
    return T, gold


def tune(
    datasets: Mapping[str, Any],
    *,
    seed_grid: Mapping[str, Sequence[Any]] | None = None,
    rank_step: float = RANK_GRID,
    base: HybridRetriever | None = None,
    graph: Mapping[str, Any] | None = None,
    depth: int = 1000,
    log: Callable[[str], None] | None = None,
) -> dict:
    r"""Choose the seed and ranking weights of ``aethel-hybrid`` on development questions only.

    For every seed-side setting of ``seed_grid`` each corpus's PageRank is solved for the development
    questions and every ranking weight vector :math:`\lambda` on the simplex grid of step ``rank_step``
    is scored by the mean over corpora of the development MRR (gold beyond rank ``depth`` counts 0);
    ties go to the earlier setting in grid order.

    Parameters
    ----------
    datasets : mapping
        Corpus name → Dataset holding **only development questions** (:func:`halves`).
    seed_grid : mapping, optional
        Default :data:`SEED_GRID`.
    rank_step : float
        Simplex grid step of the ranking weights.
    base : HybridRetriever, optional
        The fixed settings (default ``HybridRetriever()``; its ``graph`` is replaced by ``graph``'s).
    graph : mapping, optional
        The paper retriever's settings (default :data:`~aethel_lite.retrievers.hybrid.GRAPH`).

    Returns
    -------
    dict
        ``{"best": {"setting", "dev_mrr", "per_dataset"}, "rows": [...], "n_settings",
        "datasets": {name: n_dev_questions}, "grid": {...}}``; each row is one seed setting with
        its best ranking weights and that point's per-corpus development MRR and HR@5.
    """
    base = HybridRetriever() if base is None else base
    paper = {**GRAPH, **(graph or {})}
    grid = dict(SEED_GRID if seed_grid is None else seed_grid)
    # every term the structure allows is measured; the document term without document nodes keeps weight 0
    usable = [t for t in RANK_TERMS if t != "document" or base.document_nodes]
    simplex = np.array(
        [
            lam
            for lam in _simplex(rank_step, len(RANK_TERMS))
            if all(w == 0 for t, w in zip(RANK_TERMS, lam) if t not in usable)
        ]
    )
    rows = []
    fitted: dict[tuple[str, str], Any] = {}
    for pooling, depth_k, w_meta, w_pass, decay in itertools.product(
        grid["dense_pooling"],
        grid["seed_depth"],
        grid["metadata"],
        grid["passages"],
        grid.get("period_decay", (1.0,)),
    ):
        seed_w = {"entity": 1.0, "metadata": float(w_meta), "lexical": float(w_pass), "dense": float(w_pass)}
        per = {}
        for name, ds in datasets.items():
            key = (name, pooling)
            if key not in fitted:
                with shared():
                    fitted[key] = GraphRetriever(**paper).fit(ds.passages)
            r = clone(base).set_params(
                graph=fitted[key], prefit=True, dense_pooling=pooling, rank_weights={t: 1.0 for t in usable},
                seed_depth=int(depth_k), seed_weights=seed_w, period_decay=float(decay),
            )  # fmt: skip
            with shared():
                T, gold = _terms_for(r.fit(ds.passages), list(ds.queries))
            mrr, hr5 = np.zeros(len(simplex)), np.zeros(len(simplex))
            for i, lam in enumerate(simplex):
                rank = _rank_of_gold(np.tensordot(lam, T, axes=1), gold)
                mrr[i] = np.where(rank <= depth, 1.0 / rank, 0.0).mean()
                hr5[i] = (rank <= 5).mean()
            per[name] = {"mrr": mrr, "hr5": hr5}
        mean = np.mean([per[n]["mrr"] for n in per], axis=0)
        i = int(np.argmax(mean))
        setting = {
            "dense_pooling": pooling,
            "seed_depth": int(depth_k),
            "period_decay": float(decay),
            "seed_weights": seed_w,
            "rank_weights": {t: float(simplex[i][k]) for k, t in enumerate(RANK_TERMS)},
        }
        rows.append(
            {
                "setting": setting,
                "dev_mrr": round(float(mean[i]), 6),
                "per_dataset": {
                    n: {"MRR": round(float(per[n]["mrr"][i]), 6), "HR@5": round(float(per[n]["hr5"][i]), 6)}
                    for n in per
                },
            }
        )
        if log:
            log(f"{json.dumps(setting)}: mean dev MRR {mean[i]:.4f}")
    best = max(range(len(rows)), key=lambda j: (rows[j]["dev_mrr"], -j))
    return {
        "best": rows[best],
        "rows": rows,
        "n_settings": len(rows) * len(simplex),
        "precision": resolve_precision(
            None
        ),  # MiniLM arithmetic of the dense scores ($AETHEL_DENSE_PRECISION)
        "datasets": {n: len(ds.queries) for n, ds in datasets.items()},
        "grid": {
            **{k: list(v) for k, v in grid.items()},
            "rank_step": rank_step,
            "objective": "mean development MRR",
        },
        "base": {
            k: (list(v) if isinstance(v, tuple) else v)
            for k, v in sorted({**paper, **base.get_params(deep=False)}.items())
            if k not in _TUNED + ("graph", "prefit", "progress")
        },
    }


def read_tuning(path: str | Path | None = None) -> dict:
    """The stored tuning result (``python -m aethel_lite.studies.tuning`` writes it)."""
    return read_json(Path(path) if path is not None else TUNING_PATH)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m aethel_lite.studies.tuning``: tune on the development halves of the four open corpora and
    write ``manifests/hybrid_tuning.json`` (needs ``AETHEL_DATA``)."""
    import argparse

    ap = argparse.ArgumentParser(description="tune aethel-hybrid on development halves")
    ap.add_argument("--datasets", default="financebench,musique-open,2wiki-open,synthetic")
    ap.add_argument("--out", default=None, help=f"default {TUNING_PATH}")
    args = ap.parse_args(argv)
    dev = {}
    for name in args.datasets.split(","):
        ds = load_open(name)
        dev[name] = ds.subset([q.qid for q in halves(ds)["dev"]])
    result = tune(dev, log=print)
    path = Path(args.out) if args.out is not None else TUNING_PATH
    write_json(path, result)
    print(f"best: {json.dumps(result['best'])}\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
