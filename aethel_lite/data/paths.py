"""Where data lives: ``$AETHEL_DATA``, else ``./data``."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import DataNotFoundError

__all__ = ["data_root", "data_file", "HOW_TO_GET_DATA"]

HOW_TO_GET_DATA = (
    "Point AETHEL_DATA at the folder that holds musique/, 2wikimultihopqa/ and financebench/ "
    "(for example AETHEL_DATA=../shared/data), or run `make data` to download the public sources into ./data."
)


def data_root() -> Path:
    """The data folder: ``$AETHEL_DATA`` if set, else ``./data``."""
    return Path(os.environ.get("AETHEL_DATA") or "data")


def data_file(*parts: str, root: str | os.PathLike | None = None) -> Path:
    """Path of a file under the data root; raises :class:`DataNotFoundError` (saying how to get it) if absent."""
    base = Path(root) if root is not None else data_root()
    path = base.joinpath(*parts)
    if not path.exists():
        raise DataNotFoundError(f"{path}: data file not found. {HOW_TO_GET_DATA}")
    return path
