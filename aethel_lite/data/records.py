"""Reading the records of a data set's JSONL file: each value checked for its type, every error naming ``file:line``.

No other JSON type is turned into text with ``str()`` (a ``null`` question would become "None").
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import DataError


@contextlib.contextmanager
def guard(path: Path, index: int):
    """Turn any other failure while reading one record into a :class:`DataError` naming file and record."""
    try:
        yield
    except DataError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
        raise DataError(f"{path}:{index}: malformed record ({type(exc).__name__}: {exc})") from exc


def field_of(row: Mapping[str, Any], key: str, path: Path, index: int, kind: type | tuple = object) -> Any:
    """``row[key]``, or a :class:`DataError` naming ``file:line`` and the field."""
    if key not in row:
        raise DataError(f"{path}:{index}: missing field {key!r}")
    value, kinds = row[key], kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise DataError(f"{path}:{index}: field {key!r} has type {type(value).__name__}")
    return value


def text_of(value: Any, what: str, path: Path, index: int, *, empty: bool = False) -> str:
    """``value`` if it is a string (non-blank unless ``empty``), else a :class:`DataError` naming ``what``."""
    if not isinstance(value, str):
        raise DataError(f"{path}:{index}: {what} must be a string, got {json_type(value)}")
    if not empty and not value.strip():
        raise DataError(f"{path}:{index}: {what} is empty")
    return value


def ident_of(value: Any, what: str, path: Path, index: int) -> str:
    """An id: a non-empty string or an integer (not a bool), as a string."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return text_of(value, what, path, index)


def json_type(value: Any) -> str:
    return {
        type(None): "null",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def new_qid(row: Mapping[str, Any], key: str, path: Path, index: int, seen: set[str]) -> str:
    """The record's question id as a string, added to ``seen``; a repeated id is a :class:`DataError`."""
    qid = ident_of(field_of(row, key, path, index), f"field {key!r}", path, index)
    if qid in seen:
        raise DataError(f"{path}:{index}: duplicate question id {qid!r}")
    seen.add(qid)
    return qid


def literal_of(value: Any, path: Path, index: int, key: str) -> Any:
    """Some 2Wiki dumps store lists as Python-literal strings; parse them safely (no eval)."""
    if isinstance(value, str):
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError) as exc:
            raise DataError(f"{path}:{index}: field {key!r} is a string that is not a list literal") from exc
    return value


def empty_error(path: Path, what: str) -> DataError:
    return DataError(f"{path}: no {what} found (empty file?)")
