"""The base :class:`Retriever` (corpus bookkeeping, pools, top-k, runs) and shared helpers."""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..data.runs import Run
from ..errors import DataError, ParameterError, check_k
from ..io import atomic_write, read_json_shaped


def topk(scores: np.ndarray, k: int, candidates: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best entries of ``scores``, ties broken by smaller index (corpus order).

    Parameters
    ----------
    scores : ndarray, shape (n,)
        One score per corpus passage. NaN counts as ``-inf``.
    k : int
        How many to return (fewer if there are fewer candidates).
    candidates : ndarray of int, optional
        Corpus indices allowed in the result (closed pool); ``None`` means all.

    Returns
    -------
    indices, values : ndarray
        Corpus indices and their scores, ordered by ``(-score, index)`` (a tie at the k-th value too).
    """
    scores = np.asarray(scores, dtype=np.float64)
    idx = np.arange(scores.shape[0]) if candidates is None else np.asarray(candidates, dtype=np.int64)
    vals = scores[idx]
    vals = np.where(np.isnan(vals), -np.inf, vals)
    m = vals.shape[0]
    if k <= 0 or m == 0:
        return idx[:0], vals[:0]
    if k < m:
        part = np.argpartition(-vals, k - 1)[:k]
        threshold = vals[part].min()
        keep = np.flatnonzero(vals >= threshold)
    else:
        keep = np.arange(m)
    order = np.lexsort((idx[keep], -vals[keep]))[:k]
    chosen = keep[order]
    return idx[chosen], vals[chosen]


@dataclass(frozen=True)
class PassageIds:
    """A passage's ids, all a loaded retriever needs of it."""

    pid: str
    doc_id: str


#: the passages' and their documents' ids, in corpus order, in every folder a retriever saves
IDS_FILE = "ids.json"


def write_ids(path: Path, pids: Sequence[str], doc_ids: Sequence[str]) -> None:
    """Write ``ids.json``: the passages' and their documents' ids, in corpus order."""
    with atomic_write(path, "w") as fh:
        fh.write(json.dumps({"pids": list(pids), "doc_ids": list(doc_ids)}, ensure_ascii=False) + "\n")


def read_ids(path: Path) -> list[PassageIds]:
    """The passages' ids of ``ids.json``; DataError (the file named) when it is unreadable or malformed."""
    ids = read_json_shaped(path, {"pids": [str], "doc_ids": [str]}, "passage ids")
    pids, doc_ids = ids["pids"], ids["doc_ids"]
    if len(pids) != len(doc_ids):
        raise DataError(f"{path}: unreadable passage ids ({len(pids)} pids, {len(doc_ids)} doc_ids)")
    return [PassageIds(p, d) for p, d in zip(pids, doc_ids)]


def clone(estimator: Any) -> Any:
    """An unfitted copy with equal settings (scikit-learn's ``clone``: estimators it holds are cloned, other
    settings deep-copied)."""
    params = {
        k: clone(v) if hasattr(v, "get_params") and not isinstance(v, type) else copy.deepcopy(v)
        for k, v in estimator.get_params(deep=False).items()
    }
    return type(estimator)(**params)


def prefitted(estimator: Any, pids: Sequence[str]) -> Any:
    """``estimator`` itself when it is fitted on the passages ``pids`` (a ``prefit=True`` setting); else
    :class:`ParameterError` saying what is wrong."""
    if estimator is None or getattr(estimator, "pids_", None) is None:
        raise ParameterError(f"prefit=True needs a fitted retriever; got {estimator!r}")
    if list(estimator.pids_) != list(pids):
        raise DataError("prefit=True: the fitted retriever's passages differ from the ones given to fit")
    return estimator


def params_json(estimator: Any) -> dict:
    """An estimator's settings as JSON-able data, for cache keys, results and saved files: ``{"class": name,
    setting: value, ...}``, an estimator it holds as its own such dict, a set sorted, an object by its ``name``."""
    return {
        "class": type(estimator).__name__,
        **{k: _json_value(v) for k, v in estimator.get_params(deep=False).items()},
    }


def _json_value(v: Any) -> Any:
    if hasattr(v, "get_params") and not isinstance(v, type):
        return params_json(v)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, Mapping):
        return {str(k): _json_value(x) for k, x in v.items()}
    if isinstance(v, (set, frozenset)):
        return sorted(_json_value(x) for x in v)
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    return getattr(v, "name", None) or getattr(v, "__qualname__", type(v).__name__)


class Retriever:
    """Base class: corpus bookkeeping, pool resolution, top-k and :class:`Run` building. Subclasses implement
    ``_fit(passages)`` (``self.pids_`` is already set) and ``_score_queries(queries, candidates)``, which
    yields one ``(n_passages,)`` score array per query (entries outside its candidates are ignored).

    Attributes
    ----------
    pids_ : list of str
        Fitted passage ids in corpus order (set by ``fit``).
    pid_index_ : dict
        pid -> corpus index (set by ``fit``).
    """

    name = "retriever"
    progress: bool = False

    def fit(self, passages: Sequence) -> Retriever:
        """Index ``passages`` (sequence of :class:`Passage`); returns ``self`` (DataError: empty, or a pid repeats)."""
        self._fit(self._index_passages(passages))
        return self

    def _index_passages(self, passages: Sequence) -> list:
        """Set ``pids_`` and ``pid_index_`` from ``passages`` (checked); returns them as a list."""
        passages = list(passages)
        if not passages:
            raise DataError(f"{type(self).__name__}.fit: empty corpus (no passages)")
        index: dict[str, int] = {}
        for i, p in enumerate(passages):
            if p.pid in index:
                raise DataError(f"{type(self).__name__}.fit: duplicate passage pid {p.pid!r}")
            index[p.pid] = i
        self.pids_ = [p.pid for p in passages]
        self.pid_index_ = index
        self.doc_ids_ = [p.doc_id for p in passages]
        return passages

    def search(
        self, queries: Sequence, k: int = 10, pool: None | str | Mapping[str, Sequence[str]] = None
    ) -> Run:
        """Rank passages for each query.

        Parameters
        ----------
        queries : sequence of Query
        k : int
            Depth of each ranking.
        pool : None, "query" or mapping qid -> pids
            ``None``: open corpus. ``"query"``: each ``Query.pool``. A mapping: those candidates.

        Returns
        -------
        Run
            ``qid -> [(pid, score), ...]`` best first, ties by corpus order, scores ``float``.

        Raises
        ------
        RuntimeError
            ``search`` was called before ``fit``.
        ParameterError
            Bad ``k`` or ``pool``, or a query has empty text (the qid is named).
        DataError
            A duplicate qid, a query without a pool, or a pool pid that was not fitted (named).
        """
        queries, k, candidates = self._checked(queries, k, pool)
        return self._collect(queries, candidates, self._score_queries(queries, candidates), k)

    def corpus_scores(self, queries: Sequence) -> Iterator[np.ndarray]:
        """Each open-corpus query's corpus-length scores, in order (what ``search`` ranks)."""
        self._check_fitted()
        queries = list(queries)
        return self._score_queries(queries, [None] * len(queries))

    def _checked(self, queries: Sequence, k: int, pool) -> tuple[list, int, list]:
        """``search``'s checks: the queries as a list, ``k`` as an int and each query's candidates."""
        self._check_fitted()
        k = check_k(k)
        queries = list(queries)
        seen: set[str] = set()
        for q in queries:
            if q.qid in seen:
                raise DataError(f"{type(self).__name__}.search: duplicate query id {q.qid!r}")
            seen.add(q.qid)
            if not isinstance(q.text, str) or not q.text.strip():
                raise ParameterError(f"{type(self).__name__}.search: query {q.qid!r} has empty text")
        return queries, k, [self.resolve_pool(q, pool) for q in queries]

    def _collect(self, queries: list, candidates: list, scores: Iterator[np.ndarray], k: int) -> Run:
        """The :class:`Run` of each query's top ``k`` candidates by ``scores`` (one array per query)."""
        run = Run(name=self.name)
        pid_of = self.pids_.__getitem__
        for q, cand, row in zip(queries, candidates, scores):
            idx, vals = topk(row, k, cand)
            run[q.qid] = list(zip(map(pid_of, idx.tolist()), np.asarray(vals, dtype=np.float64).tolist()))
        return run

    @classmethod
    def _get_param_names(cls) -> list[str]:
        """The settings of ``__init__``, in signature order: the keys of :meth:`get_params`."""
        return [
            n
            for n, p in inspect.signature(cls.__init__).parameters.items()
            if n != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Setting → value, as scikit-learn's ``BaseEstimator.get_params``: ``type(self)(**get_params(deep=False))``
        is an unfitted copy; with ``deep``, a setting that is itself an estimator adds its settings as
        ``name__setting``."""
        out = {n: getattr(self, n) for n in self._get_param_names()}
        if deep:
            for n, value in list(out.items()):
                if hasattr(value, "get_params") and not isinstance(value, type):
                    out.update({f"{n}__{k}": v for k, v in value.get_params(deep=True).items()})
        return out

    def set_params(self, **params: Any) -> Retriever:
        """Change settings in place, as scikit-learn's ``set_params`` (``name__setting`` reaches a setting of an
        estimator it holds); the retriever is then unfitted: ``fit`` again before searching. Returns ``self``.

        Raises
        ------
        ParameterError
            An unknown setting (named, with the ones there are).
        """
        known = self._get_param_names()
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, _, inner = key.partition("__")
            if name not in known:
                raise ParameterError(
                    f"set_params: unknown setting {name!r}; {type(self).__name__} has {', '.join(known)}"
                )
            if inner:
                nested.setdefault(name, {})[inner] = value
            else:
                setattr(self, name, value)
        for name, inner in nested.items():
            sub = getattr(self, name)
            if not hasattr(sub, "set_params"):
                raise ParameterError(f"set_params: {name!r} is not an estimator; cannot set {name}__...")
            sub.set_params(**inner)
        for attr in [a for a in vars(self) if a.endswith("_") and not a.startswith("_")]:
            delattr(self, attr)  # what fit learned no longer matches the settings
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params(deep=False).items())
        return f"{type(self).__name__}({args})"

    @property
    def is_fitted(self) -> bool:
        return getattr(self, "pids_", None) is not None

    def _check_fitted(self) -> None:
        if not self.is_fitted:
            raise RuntimeError(f"{type(self).__name__} is not fitted: call fit(passages) before search()")

    def resolve_pool(self, query, pool) -> np.ndarray | None:
        """Corpus indices of ``query``'s candidates (first occurrence order), or ``None`` (open corpus)."""
        if pool is None:
            return None
        if isinstance(pool, str):
            if pool != "query":
                raise ParameterError(f"pool must be None, 'query' or a mapping qid -> pids, got {pool!r}")
            pids = query.pool
            if pids is None:
                raise DataError(
                    f"query {query.qid!r} has no closed pool (Query.pool is None) but pool='query' was asked for"
                )
        elif isinstance(pool, Mapping):
            if query.qid not in pool:
                raise DataError(f"pool mapping has no entry for query {query.qid!r}")
            pids = pool[query.qid]
            if isinstance(pids, str):
                raise DataError(f"pool of query {query.qid!r} must be a sequence of pids, got a string")
        else:
            raise ParameterError(
                f"pool must be None, 'query' or a mapping qid -> pids, got {type(pool).__name__}"
            )
        out: dict[int, None] = {}  # first occurrence order
        for pid in pids:
            i = self.pid_index_.get(pid)
            if i is None:
                raise DataError(f"query {query.qid!r}: pool pid {pid!r} is not in the fitted corpus")
            out[i] = None
        if not out:
            raise DataError(f"query {query.qid!r} has an empty pool")
        return np.asarray(list(out), dtype=np.int64)

    def _fit(self, passages: list) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _score_queries(
        self, queries: list, candidates: list[np.ndarray | None]
    ) -> Iterator[np.ndarray]:  # pragma: no cover
        raise NotImplementedError
