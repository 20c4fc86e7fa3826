"""On-disk cache location: ``$AETHEL_CACHE`` if set, else ``./.aethel_cache``. Nothing in it is ever unpickled.

``store/``
    Per-passage results (spaCy or regex entity mentions, passage embeddings), one SQLite file per
    producer configuration, keyed by the SHA-256 of the passage text (:mod:`aethel_lite.caching.store`).
``results/<kind>-<key>.json``
    Results of the chapters' heavy steps, keyed by their data, parameters, the library's files and
    package versions (:mod:`aethel_lite.caching.resultcache`; ``AETHEL_RESULT_CACHE=0`` turns it off).

``models/``
    MiniLM exported for ONNX Runtime (:mod:`aethel_lite.core.encoders`), named by the model files
    and the packages' versions; ``$AETHEL_MODELS`` puts them elsewhere (``make`` keeps one folder per
    environment, ``.venv/models``, so that every cache a test or a chapter uses finds the export made once).

Deleting the folder (or any file in ``store/``) is always safe: results are recomputed.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["cache_dir", "models_dir", "MODELS_ENV"]

#: environment variable naming the folder of exported models (default: the cache's ``models/``)
MODELS_ENV = "AETHEL_MODELS"


def cache_dir(sub: str | None = None, root: str | os.PathLike | None = None) -> Path:
    """The cache folder (created on demand), optionally a named sub-folder of it."""
    base = Path(root) if root is not None else Path(os.environ.get("AETHEL_CACHE") or ".aethel_cache")
    path = base / sub if sub else base
    path.mkdir(parents=True, exist_ok=True)
    return path


def models_dir(root: str | os.PathLike | None = None) -> Path:
    """The folder of exported models (created on demand): ``root``'s ``models/`` when a cache root is given,
    else ``$AETHEL_MODELS``, else :func:`cache_dir` ``("models")``. When that last one cannot be made
    (``$AETHEL_CACHE`` names a file, or a folder where nothing can be written), a private temporary folder,
    removed at exit, with a warning that names the cache: a search needs no cache, only the exported model."""
    given = os.environ.get(MODELS_ENV) if root is None else None
    if given or root is not None:
        return cache_dir(root=given) if given else cache_dir("models", root)
    try:
        path = cache_dir("models")
        if os.access(path, os.W_OK | os.X_OK) or any(path.glob("*.onnx")):
            return path
        reason = "permission denied"
    except OSError as exc:
        reason = exc.strerror or str(exc)
    if not _PRIVATE:
        _PRIVATE.append(Path(tempfile.mkdtemp(prefix="aethel-models-")))
        atexit.register(shutil.rmtree, _PRIVATE[0], ignore_errors=True)
        base = os.environ.get("AETHEL_CACHE") or ".aethel_cache"
        logger.warning(
            "aethel: warning: the cache %s cannot hold the exported model (%s); it is exported into a "
            "temporary folder for this run (set AETHEL_CACHE to a folder to keep it)",
            base,
            reason,
        )
    return _PRIVATE[0]


_PRIVATE: list[Path] = []  # the private folder of models_dir's fallback, made once per process
logger = logging.getLogger(__name__)
