"""On-disk cache location for entity extraction and passage embeddings.

``$AETHEL_CACHE`` if set, else ``./.aethel_cache``. Nothing in it is ever unpickled.

``store/``
    Per-passage results, content-addressed: one SQLite file per producer configuration,
    ``store/<kind>-<name>-<fingerprint[:16]>.sqlite`` (:class:`aethel_lite.caching.store.PassageStore`),
    shared by every corpus. ``entities-ner-*`` holds spaCy mentions (``ner3`` filters them),
    ``entities-regex-*`` the regex extractor's, ``embeddings-<model>-*`` passage embeddings. An
    entry's key is the SHA-256 of the passage text, so a sub-corpus, a closed pool or a
    re-ordered corpus reuses every passage already processed. The fingerprint covers the
    producer's configuration (extractor settings and versions plus the entity normalisation
    rules; model files, ``max_seq_length``, ``normalize`` and library versions): changing any of
    them opens a new file and the old one is never read again. A file that is corrupt or holds
    another configuration, and an entry that does not fit its text, are rebuilt with a
    ``RuntimeWarning``.
``results/<kind>-<key>.json``
    Results of the chapters' heavy steps (a scaling job, an open-corpus evaluation, one data set of
    the "Beyond the paper" study), keyed by the SHA-256 of their data, parameters, the library's
    own files, package versions and ``AETHEL_DENSE_PRECISION`` (:mod:`aethel_lite.caching.resultcache`):
    editing the library, the data or a parameter is a miss. ``AETHEL_RESULT_CACHE=0`` turns it off.
``entities/*.json.gz``, ``embeddings/*.npy``
    Whole-corpus cache files of earlier versions (keyed by a hash of all the texts). They are
    ignored, never read; delete them to reclaim the space.

Deleting the folder (or any file in ``store/``) is always safe: results are recomputed.
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
