r"""How each chapter was made, for the reproducibility chapter (``notebooks/90_reproducibility``): its
run in this build (the notebook runner's execution record, ``results/execution.json``), the commands
that re-make it, and the data files' checksums against the packaged manifest.

The paper's numbers beside ours, with their verdicts, are the study
:mod:`aethel_lite.studies.reproducibility`; :func:`record` puts both in the chapter's result file.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..caching.versions import versions
from ..data.download import load_manifest, sha256_file
from ..data.paths import configured_root
from ..io import read_json
from ..studies.reproducibility import CHAPTERS, ReproducibilityStudy, verdict_counts
from .notebooks import EXECUTION_FILE, discover

__all__ = [
    "load_execution",
    "data_checksums",
    "checksum_table",
    "provenance_rows",
    "provenance_frames",
    "execution_rows",
    "execution_table",
    "rerun_command",
    "record",
]


def load_execution(results_dir: str | os.PathLike = "results") -> dict | None:
    """The notebook runner's execution record (``results/execution.json``), or None when there is none."""
    path = Path(results_dir) / EXECUTION_FILE.name
    return read_json(path) if path.exists() else None


# ------------------------------------------------------------------------------------ provenance
def data_checksums(folders: Sequence[str] | None = None) -> list[dict]:
    """The data files (of ``folders``; None: all) with their SHA-256 from the packaged manifest and
    their state in this build: ``ok`` / ``missing`` / ``mismatch`` (the local copy hashed), or
    ``no data configured`` when neither ``$AETHEL_DATA`` nor ``./data`` is set. No local path is returned."""
    root = configured_root()
    rows = []
    for entry in load_manifest():
        if folders is not None and entry["path"].split("/")[0] not in folders:
            continue
        if root is None:
            state = "no data configured"
        else:
            path = root / entry["path"]
            state = (
                "missing"
                if not path.is_file()
                else ("ok" if sha256_file(path) == entry["sha256"] else "mismatch")
            )
        rows.append(
            {
                "file": entry["path"],
                "sha256": entry["sha256"],
                "bytes": entry.get("size"),
                "this build": state,
            }
        )
    return rows


def rerun_command(
    notebook: str, parameters: Mapping[str, Any] | None = None, environment: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The commands that re-make a chapter (the project's runner, and papermill alone) with the ``parameters``
    and ``environment`` settings the build used (:func:`~aethel_lite.book.notebooks.record_execution`)."""
    params = dict(parameters or {})
    env = "".join(f"{k}={shlex.quote(str(v))} " for k, v in sorted((environment or {}).items()))
    runner = env + " ".join(
        ["python -m aethel_lite.book.notebooks", "--only", notebook]
        + [f"-p {k} {_quoted(json.dumps(v))}" for k, v in params.items()]
    )
    pm = env + f"papermill notebooks/{notebook}.ipynb book/executed/{notebook}.ipynb --cwd ."
    if params:
        pm += f" -y {_quoted(json.dumps(params, sort_keys=True))}"
    return {"runner": runner, "papermill": pm}


def _quoted(text: str) -> str:
    """``text`` as one POSIX shell word, always in single quotes (each ``'`` inside written ``'"'"'``)."""
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _seeds(params: Mapping[str, Any]) -> str:
    found = {k: v for k, v in params.items() if "seed" in k}
    return ", ".join(f"{k}={v}" for k, v in found.items()) if found else "0 (fixed in the code)"


def provenance_rows(
    results: Mapping[str, Mapping[str, Any] | None],
    execution: Mapping[str, Mapping[str, Any]] | None,
    chapters: Sequence[str] | None = None,
) -> list[dict]:
    """Per chapter: result files, data folders, parameters, seeds, run time and the command that re-makes it
    (``execution``: ``results/execution.json`` or None)."""
    rows = []
    for chapter in chapters or CHAPTERS:
        spec = CHAPTERS[chapter]
        saved = [results.get(stem) for stem in spec["results"]]
        main = saved[0]
        run = (execution or {}).get(chapter)
        # a result file without its own parameters (results/beyond.json): those the runner gave the chapter
        params = (main or {}).get("parameters", (run or {}).get("parameters", {}))
        cmd = rerun_command(chapter, (run or {}).get("parameters"), (run or {}).get("environment"))
        rows.append(
            {
                "chapter": chapter,
                "result files": "; ".join(
                    f"results/{s}.json" + ("" if r is not None else " (missing: not run)")
                    for s, r in zip(spec["results"], saved)
                ),
                "data folders": ", ".join(f"{d}/" for d in spec["data"])
                or "none (synthetic corpus by design)",
                "parameters": json.dumps(params, sort_keys=True) if main is not None else "(no result file)",
                "seeds": _seeds(params) if main is not None else "",
                "run time (s)": None if run is None else run["seconds"],
                "re-made by": cmd["runner"],
                "papermill": cmd["papermill"],
            }
        )
    return rows


def execution_rows(execution: Mapping[str, Mapping[str, Any]] | None, notebooks: Sequence[str]) -> list[dict]:
    """The execution statistics: one row per notebook (run time, cells, code cells, when built, UTC);
    a notebook missing from ``execution`` gets empty cells and a note."""
    rows = []
    for name in notebooks:
        run = (execution or {}).get(name)
        rows.append(
            {
                "notebook": name,
                "run time (s)": None if run is None else run["seconds"],
                "cells": None if run is None else run["cells"],
                "code cells": None if run is None else run["code_cells"],
                "built": "" if run is None else run["built"],
                "note": "" if run is not None else "no record: not run by the notebook runner in this build",
            }
        )
    return rows


def provenance_frames(
    results: Mapping[str, Mapping[str, Any] | None], execution: Mapping[str, Mapping[str, Any]] | None
) -> dict:
    """:func:`provenance_rows` as one small table per chapter (field, value), so each fits the column."""
    import pandas as pd

    return {
        row["chapter"]: pd.DataFrame({"": list(row)[1:], "value": list(row.values())[1:]})
        for row in provenance_rows(results, execution)
    }


def execution_table(execution: Mapping[str, Mapping[str, Any]] | None, root: str | os.PathLike = "."):
    """:func:`execution_rows` of every notebook under ``root`` (:func:`~aethel_lite.book.notebooks.discover`)."""
    import pandas as pd

    return pd.DataFrame(execution_rows(execution, [p.stem for p in discover(root)]))


def checksum_table(rows: Sequence[Mapping[str, Any]]):
    """:func:`data_checksums` as the chapter shows them: a file's version by the first 12 hex digits of
    its SHA-256 (``aethel data verify`` checks all 64), and a long path free to break after a folder or
    an underscore."""
    import pandas as pd

    checks = pd.DataFrame(list(rows)).sort_index(axis=1)  # the result file's order: its keys sorted
    if len(checks):
        checks["sha256"] = checks["sha256"].map(lambda h: f"{h[:12]}…" if isinstance(h, str) else h)
        checks["file"] = checks["file"].str.replace("/", "/\u200b").str.replace("_", "_\u200b")
    return checks


def record(study: ReproducibilityStudy, execution: Mapping[str, Any] | None) -> dict:
    """The chapter's result file (``results/reproducibility.json``): the paper table and its verdict
    counts, each chapter's provenance, the data files' checksums, the library versions, the bootstrap
    setting and this build's execution record."""
    return {
        "paper_table": study.rows,
        "verdicts": verdict_counts(study.rows),
        "provenance": provenance_rows(study.results, None),
        "data": data_checksums(),
        "versions": versions(),
        "parameters": {"n_resamples": study.n_resamples, "quick": study.quick},
        "timing": {"execution": execution},
    }
