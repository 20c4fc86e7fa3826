"""Ranked runs (``qid -> [(pid, score), ...]``), their TREC run and qrels files, and their fusion (RRF).

The tie rule. A run's *order* is the ranking: retrievers break equal scores by corpus order
(:func:`~aethel_lite.retrievers.base.topk`), fusions by first appearance
(:func:`~aethel_lite.data.runs.rrf`), and every metric of the project reads the order as
given. trec_eval instead re-sorts each query by its 32-bit float score, breaking ties by docno, so
:meth:`Run.to_trec` writes scores that strictly decrease down each ranking (:func:`trec_scores`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from ..errors import DataError, DataNotFoundError, ParameterError, check_k
from ..io import atomic_write

#: Passages per query in every scored run (``aethel eval --depth``, ``fuse_runs``); MRR is computed over all of it.
RUN_DEPTH = 1000


class Run(dict):
    """Ranked results: ``qid -> [(pid, score), ...]`` best first; a ``dict`` (insertion order = query
    order) with a ``name`` used as the TREC run tag.

    Parameters
    ----------
    data : mapping or iterable of pairs, optional
        Initial ``qid -> ranking`` content.
    name : str
        Run name (the method that produced it).
    """

    def __init__(
        self, data: Mapping[str, Sequence[tuple[str, float]]] | Iterable | None = None, name: str = "run"
    ):
        super().__init__(data or {})
        self.name = name

    def __repr__(self) -> str:
        return f"Run(name={self.name!r}, queries={len(self)})"

    def pids(self, qid: str) -> list[str]:
        """The ranked pids of one query (``[]`` if the query is absent)."""
        return [pid for pid, _ in self.get(qid, [])]

    def to_trec(self, path: str | os.PathLike, tag: str | None = None) -> Path:
        """Write the run in TREC format, atomically: ``qid Q0 pid rank score tag`` (rank 1-based), the
        scores :func:`trec_scores` of each ranking written with ``repr`` (:meth:`from_trec` reads them back)."""
        tag = "".join((tag if tag is not None else self.name).split()) or "run"
        path = Path(path)
        with atomic_write(path) as fh:
            for qid, ranking in self.items():
                _check_token(qid, "qid")
                pids = [pid for pid, _ in ranking]
                for rank, (pid, score) in enumerate(zip(pids, trec_scores([s for _, s in ranking])), start=1):
                    _check_token(pid, "pid")
                    fh.write(f"{qid} Q0 {pid} {rank} {score!r} {tag}\n")
        return path

    @classmethod
    def from_trec(cls, path: str | os.PathLike, name: str | None = None) -> Run:
        """Read a TREC run file; rankings are ordered by the rank column.

        Raises
        ------
        DataNotFoundError
            The file does not exist.
        DataError
            A line does not have 6 fields, a rank/score does not parse, or a pid repeats within a
            query; the message is ``file:line: ...``.
        """
        path = Path(path)
        if not path.exists():
            raise DataNotFoundError(f"{path}: file not found")
        rows: dict[str, list[tuple[int, str, float]]] = {}
        seen: dict[str, set[str]] = {}
        tag = None
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                parts = line.split()
                if len(parts) != 6:
                    raise DataError(
                        f"{path}:{lineno}: expected 6 fields 'qid Q0 pid rank score tag', got {len(parts)}"
                    )
                qid, _, pid, rank_s, score_s, tag = parts
                try:
                    rank = int(rank_s)
                except ValueError:
                    raise DataError(f"{path}:{lineno}: rank {rank_s!r} is not an integer") from None
                try:
                    score = float(score_s)
                except ValueError:
                    raise DataError(f"{path}:{lineno}: score {score_s!r} is not a number") from None
                if pid in seen.setdefault(qid, set()):
                    raise DataError(f"{path}:{lineno}: pid {pid!r} appears twice for query {qid!r}")
                seen[qid].add(pid)
                rows.setdefault(qid, []).append((rank, pid, score))
        run = cls(name=name or tag or path.stem)
        for qid, items in rows.items():
            items.sort(key=lambda r: r[0])  # stable: equal ranks keep file order
            run[qid] = [(pid, score) for _, pid, score in items]
        return run


def trec_scores(scores: Sequence[float]) -> list[float]:
    r"""Scores for a TREC run file that strictly decrease in rank order as trec_eval reads them (32-bit floats).

    With :math:`s_1, s_2, \dots` the scores in rank order and :math:`f(x)` the nearest 32-bit float,
    the written values are :math:`w_1 = s_1` and, for :math:`i > 1`, :math:`w_i = s_i` if
    :math:`f(s_i) < f(w_{i-1})`, else the next 32-bit float below :math:`f(w_{i-1})`: a score is
    written unchanged wherever that keeps the order strict, and a tie moves down by the fewest
    single-precision steps. Scores that are not finite (``-inf``, NaN) are first replaced by a
    finite floor below every finite score.
    """
    values = [float(s) for s in scores]
    finite = [s for s in values if math.isfinite(s)]
    floor = min(finite, default=0.0) - 1.0 - len(values)
    down = np.float32(-np.inf)
    out: list[float] = []
    previous = np.float32(np.inf)
    for s in values:
        if math.isnan(s) or s == -math.inf:
            s = floor
        if np.float32(s) < previous:
            previous = np.float32(s)
        else:
            previous = np.nextafter(previous, down)
            s = float(previous)
        out.append(s)
    return out


def _check_token(value: str, what: str) -> None:
    if not value or any(ch.isspace() for ch in value):
        raise DataError(f"cannot write {what} {value!r} in TREC format: it is empty or contains whitespace")


def write_qrels(queries: Iterable, path: str | os.PathLike) -> Path:
    """Write the gold passages of ``queries`` as TREC qrels (``qid 0 pid 1``), atomically.

    Pids are written sorted within each query; queries keep their given order.
    """
    path = Path(path)
    with atomic_write(path) as fh:
        for q in queries:
            _check_token(q.qid, "qid")
            for pid in sorted(q.gold):
                _check_token(pid, "pid")
                fh.write(f"{q.qid} 0 {pid} 1\n")
    return path


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
