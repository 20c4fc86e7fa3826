"""Package hygiene: cheap import, no data files committed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "spacy", "sentence_transformers", "transformers", "bm25s", "matplotlib", "pandas", "papermill")


def test_import_pulls_in_no_heavy_dependency():
    """`import aethel_lite` (and its light modules) must stay fast: heavy libraries load on first use."""
    code = (
        "import sys, aethel_lite, aethel_lite.data, aethel_lite.retrievers, aethel_lite.graph, aethel_lite.ppr, "
        "aethel_lite.bct, aethel_lite.entities, aethel_lite.metrics, aethel_lite.stats, aethel_lite.cli, "
        "aethel_lite.experiment\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"imported at package import time: {out}"


def test_no_data_file_is_committed():
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    data_like = [f for f in files if f.endswith((".jsonl.gz", ".pdf", ".npy", ".npz", ".pkl", ".pickle", ".parquet"))]
    assert data_like == []
    shared = REPO.parent / "shared" / "data"
    if shared.is_dir():
        names = {p.name for p in shared.rglob("*") if p.is_file() and p.name not in ("README.md", "SHA256SUMS")}
        assert not names & {Path(f).name for f in files}
