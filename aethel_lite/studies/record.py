"""A study's result as its file holds it, so that a chapter shows exactly the numbers it writes.

:func:`aethel_lite.io.write_json` sorts keys and JSON knows only strings as keys and lists as
sequences; :func:`as_record` gives an in-memory result that shape (no file is read), and
:func:`save_record` writes it under ``results/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..io import write_json

__all__ = ["as_record", "save_record"]


def _key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if k is None or isinstance(k, bool):
        return {None: "null", True: "true", False: "false"}[k]
    return str(k) if isinstance(k, int) else repr(float(k))


def as_record(result: Any) -> Any:
    """``result`` in the shape :func:`~aethel_lite.io.write_json` stores and
    :func:`~aethel_lite.io.read_json` gives back: mappings with string keys in sorted order, tuples as
    lists; every other value unchanged (floats are stored exactly)."""
    if isinstance(result, Mapping):
        items = {_key(k): as_record(v) for k, v in result.items()}
        return {k: items[k] for k in sorted(items)}
    if isinstance(result, (list, tuple)):
        return [as_record(v) for v in result]
    return result


def save_record(record: Mapping[str, Any], results_dir: str | Path, name: str) -> Path:
    """Write ``record`` to ``results_dir/name.json`` and return the path."""
    path = Path(results_dir) / f"{name}.json"
    write_json(path, record)
    return path
