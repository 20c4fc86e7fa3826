"""Package hygiene: cheap import, no data files committed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HEAVY = (
    "torch",
    "spacy",
    "sentence_transformers",
    "transformers",
    "bm25s",
    "matplotlib",
    "pandas",
    "papermill",
    "dask",
    "distributed",
)


def test_import_pulls_in_no_heavy_dependency():
    """`import aethel_lite` (and its light modules) must stay fast: heavy libraries load on first use."""
    code = (
        "import sys, aethel_lite, aethel_lite.data, aethel_lite.retrievers, aethel_lite.core.graph, aethel_lite.core.ppr, "
        "aethel_lite.core.bct, aethel_lite.core.entities, aethel_lite.evaluation.metrics, aethel_lite.evaluation.stats, aethel_lite.cli, "
        "aethel_lite.experiment\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "", f"imported at package import time: {out}"


def test_main_names_are_exported_lazily():
    """`from aethel_lite import GraphRetriever, ...` works, yet `import aethel_lite` loads no numpy/scipy/torch/spacy."""
    code = (
        "import sys, aethel_lite\n"
        "print(','.join(m for m in ('numpy', 'scipy', 'torch', 'spacy', 'sklearn') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "", f"imported by `import aethel_lite`: {out}"
    import importlib

    import aethel_lite

    assert set(aethel_lite.__all__) <= set(dir(aethel_lite))
    for name in aethel_lite.__all__:  # every exported name resolves to the object its module defines
        value = getattr(aethel_lite, name)
        if name != "__version__":
            assert value is getattr(importlib.import_module(f"aethel_lite.{aethel_lite._LAZY[name]}"), name)
    from aethel_lite import GraphRetriever, load_musique, personalized_pagerank  # noqa: F401

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        aethel_lite.nope  # noqa: B018


def test_no_data_file_is_committed():
    files = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    data_like = [
        f for f in files if f.endswith((".jsonl.gz", ".pdf", ".npy", ".npz", ".pkl", ".pickle", ".parquet"))
    ]
    assert data_like == []
    shared = REPO.parent / "shared" / "data"
    if shared.is_dir():
        names = {
            p.name for p in shared.rglob("*") if p.is_file() and p.name not in ("README.md", "SHA256SUMS")
        }
        assert not names & {Path(f).name for f in files}


def test_no_lazy_name_is_also_a_submodule():
    """A lazily exported name that is also a submodule's name is replaced by the module as soon as
    the submodule is imported (``import aethel_lite.studies.open_corpus`` sets the package attribute)."""
    import pkgutil

    import aethel_lite

    submodules = {m.name for m in pkgutil.iter_modules(aethel_lite.__path__)}
    assert not submodules & set(aethel_lite._LAZY)


def test_old_module_paths_still_import():
    """Module paths from before the layers keep working (aethel_lite.MOVED): a moved module is the new
    module itself, a split one re-exports its parts' names, and ``python -m`` runs the new module."""
    import importlib

    import aethel_lite

    for old, new in aethel_lite.MOVED.items():
        module = importlib.import_module(f"aethel_lite.{old}")
        parts = (new,) if isinstance(new, str) else new
        if isinstance(new, str):
            assert module is importlib.import_module(f"aethel_lite.{new}")
            assert module.__spec__.name == f"aethel_lite.{new}"  # its own spec, not the old name's
        for part in parts:
            real = importlib.import_module(f"aethel_lite.{part}")
            public = [n for n in vars(real) if not n.startswith("_")]
            assert all(getattr(module, n) is getattr(real, n) for n in public), (old, part)
    from aethel_lite.experiment import METHODS, make_retriever, run_methods, versions  # noqa: F401
    from aethel_lite.provenance import gold_reach, seed_contributions  # noqa: F401

    out = subprocess.run(
        [sys.executable, "-m", "aethel_lite.notebooks", "--list"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    ).stdout
    assert "10_closed_pool" in out
