"""Package hygiene: cheap import, no data files committed."""

from __future__ import annotations

import re
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


def _old_paths() -> dict[str, list[str]]:
    """README's table "Module paths from before the layers": old path -> its new homes."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("### Module paths from before the layers", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(aethel_lite\.\w+)` \| (.+) \|$", section, flags=re.M)
    return {old: re.findall(r"`(aethel_lite\.[\w.]+)`", homes) for old, homes in rows}


def test_old_module_paths_are_gone_and_the_readme_names_real_homes():
    """No import hook serves the flat package's paths: each old path in README's table fails to
    import, and each new home it names exists; the notebook runner starts under its new path."""
    import importlib.util

    old = _old_paths()
    assert len(old) >= 29 and all(old.values())
    assert [name for name in old if importlib.util.find_spec(name) is not None] == []
    assert [h for homes in old.values() for h in homes if importlib.util.find_spec(h) is None] == []
    out = subprocess.run(
        [sys.executable, "-m", "aethel_lite.book.notebooks", "--list"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    ).stdout
    assert "10_closed_pool" in out
