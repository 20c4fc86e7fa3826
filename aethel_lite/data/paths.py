"""Where data lives: ``$AETHEL_DATA``, else ``./data``."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import DataConfigError, DataNotFoundError

__all__ = ["data_root", "data_file", "configured_root", "check_data_root", "HOW_TO_GET_DATA"]

HOW_TO_GET_DATA = (
    "Point AETHEL_DATA at the folder that holds musique/, 2wikimultihopqa/ and financebench/ "
    "(export AETHEL_DATA=/path/to/data), or run `make data` to download the public sources into ./data."
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


def configured_root() -> Path | None:
    """``$AETHEL_DATA`` when set (even if missing), else ``./data`` if it exists, else None: the only
    case in which a chapter may fall back to the synthetic corpus."""
    env = os.environ.get("AETHEL_DATA")
    if env:
        return Path(env)
    default = Path("data")
    return default if default.is_dir() else None


def check_data_root() -> None:
    """Raise :class:`DataConfigError`, naming the folder, when ``$AETHEL_DATA`` is set but is not a folder."""
    env = os.environ.get("AETHEL_DATA")
    if env and not Path(env).is_dir():
        raise DataConfigError(
            f"AETHEL_DATA={env}: no such folder. {HOW_TO_GET_DATA} "
            "Unset AETHEL_DATA to build on the synthetic corpus instead."
        )
