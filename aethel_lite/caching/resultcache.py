r"""On-disk cache of evaluation results, keyed by everything that decides them.

The chapters' heavy steps (a scaling job, an open-corpus evaluation, one data set of the "Beyond
the paper" study) are pure functions of their data, parameters and the library's code.
:func:`cached` stores each step's JSON result under the SHA-256 of

.. math:: \text{key} = \mathrm{SHA256}\big(\text{kind} \,\Vert\, \text{parameters} \,\Vert\,
          \mathrm{digest}(\text{data}) \,\Vert\, \mathrm{digest}(\texttt{aethel\_lite}) \,\Vert\,
          \text{versions} \,\Vert\, \text{environment}\big)

with :func:`dataset_digest` over every field of every passage and question, :func:`code_digest`
over every file of the package (any edit to the library is a miss), the versions of
:func:`aethel_lite.caching.versions.versions` and ``AETHEL_DENSE_PRECISION``. A hit's timing
fields are those measured when it was computed. Files: ``cache_dir("results") / "<kind>-<key[:40]>.json"``;
one that cannot be read or does not hold its key is warned about and recomputed.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import DataError, ParameterError
from ..io import read_json, write_json
from .locations import cache_dir
from .versions import versions

__all__ = ["cached", "dataset_digest", "code_digest", "result_cache_enabled", "CACHE_FORMAT"]

CACHE_FORMAT = 1
#: Environment variables that change results (the paths AETHEL_DATA / AETHEL_CACHE do not).
_ENV = ("AETHEL_DENSE_PRECISION",)


def result_cache_enabled() -> bool:
    """False when ``$AETHEL_RESULT_CACHE`` is ``0``, ``false``, ``no`` or ``off``."""
    return os.environ.get("AETHEL_RESULT_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def package_root() -> Path:
    """The ``aethel_lite`` package folder (found from the package, not from this module's folder)."""
    return Path(importlib.util.find_spec("aethel_lite").origin).resolve().parent


def tree_digest(root: str | os.PathLike) -> str:
    """Hex SHA-256 over the relative names and bytes of every file below ``root`` (``__pycache__``
    skipped), in sorted order: an edit, a new file and a file moved or renamed all change it."""
    root = Path(root)
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        rel = path.relative_to(root).as_posix().encode("utf-8")
        h.update(len(rel).to_bytes(8, "little"))
        h.update(rel)
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """:func:`tree_digest` of the whole package (:func:`package_root`), computed once per process."""
    return tree_digest(package_root())


def _json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=_default)


def _default(obj: Any) -> Any:
    return sorted(obj, key=str) if isinstance(obj, (set, frozenset)) else str(obj)


def dataset_digest(dataset) -> str:
    """Hex SHA-256 of a :class:`~aethel_lite.data.schema.Dataset`: its name and meta, every passage
    (pid, document, title, text, meta) and every question (qid, text, gold, hops, pool, meta), in order."""
    h = hashlib.sha256()
    h.update(_json({"name": dataset.name, "meta": dataset.meta}).encode("utf-8"))
    for p in dataset.passages:
        h.update(b"\x1ep")
        h.update(_json([p.pid, p.doc_id, p.title, p.text, p.meta]).encode("utf-8"))
    for q in dataset.queries:
        h.update(b"\x1eq")
        h.update(
            _json(
                [q.qid, q.text, sorted(q.gold), q.hops, None if q.pool is None else list(q.pool), q.meta]
            ).encode("utf-8")
        )
    return h.hexdigest()


def _key(kind: str, parameters: Mapping[str, Any]) -> tuple[str, str]:
    described = {
        "format": CACHE_FORMAT,
        "kind": kind,
        "parameters": parameters,
        "code": code_digest(),
        "versions": versions(),
        "env": {name: os.environ.get(name) for name in _ENV},
    }
    text = _json(described)
    return hashlib.sha256(text.encode("utf-8")).hexdigest(), text


def cached(
    kind: str,
    parameters: Mapping[str, Any],
    compute: Callable[[], Any],
    *,
    root: str | os.PathLike | None = None,
    enabled: bool | None = None,
) -> Any:
    """``compute()``'s JSON result, from the cache when the same step was computed before.

    Parameters
    ----------
    kind : str
        Names the step (letters, digits, ``-``, ``_``); part of the key and of the file name.
    parameters : mapping
        Everything besides the library's code that decides the result (data digests, method names,
        settings), JSON-serialisable (sets sorted, tuples as lists, anything else by ``str``).
    compute : callable
        Returns a JSON-serialisable result.
    root : path, optional
        Cache root (default ``$AETHEL_CACHE``).
    enabled : bool, optional
        Default :func:`result_cache_enabled`.

    Returns
    -------
    The result as read back from JSON (identical whether it was computed now or before).
    ``AETHEL_RESULT_CACHE=0`` (:func:`result_cache_enabled`) turns the cache off.
    """
    if not kind or not all(c.isalnum() or c in "-_" for c in kind):
        raise ParameterError(f"cached: kind must be letters, digits, '-' or '_', got {kind!r}")
    if not (result_cache_enabled() if enabled is None else enabled):
        return json.loads(_json(compute()))
    key, described = _key(kind, parameters)
    path = cache_dir("results", root) / f"{kind}-{key[:40]}.json"
    if path.exists():
        try:
            entry = read_json(path)
            if not isinstance(entry, dict) or entry.get("key") != key or "result" not in entry:
                raise DataError(f"{path}: not a result of this step (key mismatch or no result)")
            return entry["result"]
        except DataError as exc:
            warnings.warn(f"{exc}; recomputing it", RuntimeWarning, stacklevel=2)
    result = json.loads(_json(compute()))
    write_json(path, {"key": key, "described": json.loads(described), "result": result}, indent=None)
    return result
