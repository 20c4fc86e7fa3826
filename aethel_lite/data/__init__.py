"""Data layer: one schema (:class:`Passage`, :class:`Query`, :class:`Dataset`), its loaders and corpus sampling,
and ranked runs with their TREC files (:mod:`~aethel_lite.data.runs`)."""

from __future__ import annotations

from .paths import data_file, data_root
from .schema import Dataset, Passage, Query

# Loaders and download helpers are imported on first use (PEP 562) to keep `import aethel_lite` fast.
# (ingest is not re-exported: its name would clash with the submodule; use aethel_lite.data.ingest.ingest.)
_LOADERS = ("load_musique", "load_2wiki", "load_financebench", "load_dataset", "available_datasets")
_LAZY = {
    **dict.fromkeys(_LOADERS, "loaders"),
    "open_corpus": "sampling",
    "sample_corpus": "sampling",
    "download_data": "download",
    "verify_data": "download",
}

__all__ = ["Dataset", "Passage", "Query", "data_root", "data_file", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
