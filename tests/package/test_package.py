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
        "aethel_lite.retrievers.registry, aethel_lite.evaluation.runner, aethel_lite.data.select, "
        "aethel_lite.caching.versions, aethel_lite.cli_eval, aethel_lite.cli_index, aethel_lite.cli_search, "
        "aethel_lite.cli_data, aethel_lite.cli_memo\n"
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


#: The flat package's module paths (before the layers), the modules moved since, and each one's new home; a split
#: module lists its parts.
#: README points here for readers with code that imports an old path.
OLD_PATHS: dict[str, tuple[str, ...]] = {
    "aethel_lite.cache": ("aethel_lite.caching.locations",),
    "aethel_lite.store": ("aethel_lite.caching.store",),
    "aethel_lite.memo": ("aethel_lite.caching.memo",),
    "aethel_lite.resultcache": ("aethel_lite.caching.resultcache",),
    "aethel_lite.graph": ("aethel_lite.core.graph",),
    "aethel_lite.entities": ("aethel_lite.core.entities",),
    "aethel_lite.bct": ("aethel_lite.core.bct",),
    "aethel_lite.docmeta": ("aethel_lite.data.docmeta",),
    "aethel_lite.ppr": ("aethel_lite.core.ppr",),
    "aethel_lite.ppr_kernels": ("aethel_lite.core.ppr_kernels",),
    "aethel_lite.provenance": ("aethel_lite.core.provenance", "aethel_lite.explain.reach"),
    "aethel_lite.metrics": ("aethel_lite.evaluation.metrics",),
    "aethel_lite.stats": ("aethel_lite.evaluation.stats",),
    "aethel_lite.splits": ("aethel_lite.evaluation.splits",),
    "aethel_lite.index": ("aethel_lite.search.index",),
    "aethel_lite.open_corpus": ("aethel_lite.studies.open_corpus",),
    "aethel_lite.scaling": ("aethel_lite.studies.scaling",),
    "aethel_lite.anchoring": ("aethel_lite.studies.anchoring",),
    "aethel_lite.analysis": ("aethel_lite.studies.analysis",),
    "aethel_lite.teaching": ("aethel_lite.studies.teaching",),
    "aethel_lite.paper": ("aethel_lite.studies.paper",),
    "aethel_lite.notebooks": ("aethel_lite.book.notebooks",),
    "aethel_lite.report": ("aethel_lite.book.report",),
    "aethel_lite.repro": ("aethel_lite.book.repro", "aethel_lite.studies.reproducibility"),
    "aethel_lite.claims": ("aethel_lite.book.claims",),
    "aethel_lite.bookcheck": ("aethel_lite.book.bookcheck",),
    "aethel_lite.sphinxext": ("aethel_lite.book.sphinxext",),
    "aethel_lite.experiment": (
        "aethel_lite.retrievers.registry",
        "aethel_lite.evaluation.runner",
        "aethel_lite.data.select",
        "aethel_lite.caching.versions",
    ),
    "aethel_lite.hybrid": (
        "aethel_lite.retrievers.hybrid",
        "aethel_lite.studies.tuning",
        "aethel_lite.studies.beyond",
        "aethel_lite.studies.beyond_report",
    ),
    "aethel_lite.retrievers.run": ("aethel_lite.data.runs",),
}


def test_old_module_paths_are_gone_and_their_new_homes_exist():
    """No import hook serves the flat package's paths: each old path of :data:`OLD_PATHS` fails to
    import, and each new home it names exists; the notebook runner starts under its new path. README
    names this list."""
    import importlib.util

    assert len(OLD_PATHS) >= 29 and all(OLD_PATHS.values())
    assert [name for name in OLD_PATHS if importlib.util.find_spec(name) is not None] == []
    assert [h for homes in OLD_PATHS.values() for h in homes if importlib.util.find_spec(h) is None] == []
    assert "tests/package/test_package.py" in (REPO / "README.md").read_text(encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "aethel_lite.book.notebooks", "--list"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    ).stdout
    assert "10_closed_pool" in out
