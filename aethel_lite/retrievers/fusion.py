"""Reciprocal rank fusion: :func:`rrf`, and :func:`fuse_runs`, the one fusion every fused method uses
wherever it is computed (``aethel eval``, the studies, ``aethel search``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import ParameterError, check_k
from .run import RUN_DEPTH, Run

#: The smoothing constant of every fused method (Cormack, Clarke & Büttcher 2009).
RRF_K = 60


def rrf(
    runs: Sequence[Mapping[str, Sequence[tuple[str, float]]]],
    k: float = 60,
    depth: int | None = None,
    name: str = "rrf",
) -> Run:
    r"""Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009).

    .. math::  \mathrm{RRF}(d) = \sum_{r \in R} \frac{1}{k + \mathrm{rank}_r(d)}

    with 1-based ranks; a document absent from a run contributes nothing from it.

    Parameters
    ----------
    runs : sequence of Run (or mappings qid -> ranked [(pid, score), ...])
    k : float
        The smoothing constant (> 0); 60 in the original paper.
    depth : int, optional
        Use only the top ``depth`` of each input ranking. ``None``: all of it.
    name : str
        Name of the fused run.

    Returns
    -------
    Run
        Every query of any input run (first-seen order), every document any run ranks for it,
        sorted by fused score; ties keep first-appearance order (scanning the runs in the order
        given, each from rank 1 down). A pid repeated within one ranking counts once, at its first rank.
    """
    runs = list(runs)
    if not runs:
        raise ParameterError("rrf: runs is empty")
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not k > 0:
        raise ParameterError(f"rrf: k must be > 0, got {k!r}")
    if depth is not None:
        depth = check_k(depth)
    qids = dict.fromkeys(qid for run in runs for qid in run)
    fused = Run(name=name)
    for qid in qids:
        scores: dict[str, float] = {}
        for run in runs:
            ranking = run.get(qid) or []
            if depth is not None:
                ranking = ranking[:depth]
            seen: set[str] = set()
            for rank, item in enumerate(ranking, start=1):
                pid = item[0] if isinstance(item, (tuple, list)) else item
                if pid in seen:
                    continue
                seen.add(pid)
                scores[pid] = scores.get(pid, 0.0) + 1.0 / (k + rank)
        fused[qid] = [
            (pid, float(s)) for pid, s in sorted(scores.items(), key=lambda kv: -kv[1])
        ]  # stable sort
    return fused


def fuse_runs(
    runs: Sequence[Mapping[str, Sequence[tuple[str, float]]]], *, name: str, depth: int = RUN_DEPTH
) -> Run:
    r"""The project's fusion: :func:`rrf` with :math:`k` = :data:`RRF_K` (60) of the top ``depth`` of each run,
    cut to its top ``depth`` (ties keep first-appearance order, as in :func:`rrf`).

    Parameters
    ----------
    runs : sequence of Run
        The base methods' runs in :data:`~aethel_lite.retrievers.registry.FUSIONS` order, at least
        ``depth`` deep where the corpus allows (a shallower input fuses differently).
    name, depth : str, int
        Name of the fused run; depth of each input used and of the result.
    """
    depth = check_k(depth)
    fused = rrf(runs, k=RRF_K, depth=depth, name=name)
    return Run({qid: ranking[:depth] for qid, ranking in fused.items()}, name=name)
