"""On-disk cache location for entity extraction, embeddings and graphs.

``$AETHEL_CACHE`` if set, else ``./.aethel_cache``. Cache files are keyed by a hash of the input
texts and the producing configuration (:func:`aethel_lite.io.text_hash`), stored as ``.npy``/``.npz``/JSON
(never pickle), and rebuilt, with a warning, when a file is found corrupt.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir(sub: str | None = None, root: str | os.PathLike | None = None) -> Path:
    """The cache folder (created on demand), optionally a named sub-folder of it."""
    base = Path(root) if root is not None else Path(os.environ.get("AETHEL_CACHE") or ".aethel_cache")
    path = base / sub if sub else base
    path.mkdir(parents=True, exist_ok=True)
    return path
