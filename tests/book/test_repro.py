"""How each chapter was made (aethel_lite.book.repro): provenance rows, re-run commands, data checksums,
the execution record and the reproducibility chapter's result file."""

from __future__ import annotations

import hashlib
import json

from aethel_lite.book import repro
from aethel_lite.studies.reproducibility import version_table


def test_provenance_rows_and_commands():
    results = {
        "quickstart": {"parameters": {"n_passages": 300, "seed": 0}, "versions": {"numpy": "2.0"}},
        "closed_pool": None,
        "open_corpus": {"parameters": {"quick": True}, "versions": {"numpy": "2.1"}},
        "beyond": None,
    }
    execution = {
        "00_quickstart": {
            "seconds": 3.5,
            "cells": 12,
            "code_cells": 7,
            "built": "2026-01-01 00:00 UTC",
            "parameters": {"n_passages": 300},
        },
        "10_closed_pool": {
            "seconds": 9.0,
            "cells": 20,
            "code_cells": 9,
            "built": "2026-01-01 00:00 UTC",
            "parameters": {},
            "environment": {"AETHEL_DENSE_PRECISION": "bfloat16"},
        },
    }
    rows = {r["chapter"]: r for r in repro.provenance_rows(results, execution)}
    assert rows["00_quickstart"]["seeds"] == "seed=0" and rows["00_quickstart"]["run time (s)"] == 3.5
    assert (
        rows["00_quickstart"]["re-made by"]
        == "python -m aethel_lite.book.notebooks --only 00_quickstart -p n_passages '300'"
    )
    assert rows["00_quickstart"]["papermill"].endswith("""-y '{"n_passages": 300}'""")
    assert (
        rows["10_closed_pool"]["re-made by"]
        == "AETHEL_DENSE_PRECISION=bfloat16 python -m aethel_lite.book.notebooks --only 10_closed_pool"
    )
    assert (
        "missing: not run" in rows["10_closed_pool"]["result files"]
        and rows["10_closed_pool"]["parameters"] == "(no result file)"
    )
    assert rows["20_open_corpus"]["result files"] == "results/open_corpus.json"
    assert rows["25_hybrid"]["result files"] == (
        "results/beyond.json (missing: not run); "
        "results/own_files.json (missing: not run); "
        "results/comparisons.json (missing: not run)"
    )
    assert json.loads(rows["20_open_corpus"]["parameters"]) == {"quick": True}
    # results/beyond.json keeps no parameters of its own: the row shows those the runner gave 25_hybrid
    hybrid_run = {
        "25_hybrid": {
            "seconds": 1.0,
            "cells": 30,
            "code_cells": 15,
            "built": "",
            "parameters": {"quick": True},
        }
    }
    (row,) = repro.provenance_rows({**results, "beyond": {"datasets": {}}}, hybrid_run, ["25_hybrid"])
    assert json.loads(row["parameters"]) == {"quick": True}
    assert row["result files"] == (
        "results/beyond.json; results/own_files.json (missing: not run); "
        "results/comparisons.json (missing: not run)"
    )
    assert version_table(results) == {"numpy": {"quickstart": "2.0", "open_corpus": "2.1"}}
    stats = {
        r["notebook"]: r for r in repro.execution_rows(execution, ["00_quickstart", "90_reproducibility"])
    }
    assert stats["00_quickstart"]["cells"] == 12 and stats["90_reproducibility"]["note"].startswith(
        "no record"
    )


def test_rerun_commands_survive_the_shell_whatever_a_parameter_holds():
    """A parameter value with a single quote, spaces or $ must reach the notebook unchanged:
    the shell's own word splitting (shlex.split, POSIX rules) is the oracle."""
    import shlex

    params = {"target": "O'Brien & Sons $HOME", "sizes": [100, "full"], "quick": True}
    cmd = repro.rerun_command("30_scaling", params, {"AETHEL_DENSE_PRECISION": "bfloat16"})
    words = shlex.split(cmd["runner"])
    assert words[0] == "AETHEL_DENSE_PRECISION=bfloat16"
    got = {words[i + 1]: json.loads(words[i + 2]) for i, w in enumerate(words) if w == "-p"}
    assert got == params
    words = shlex.split(cmd["papermill"])
    assert json.loads(words[words.index("-y") + 1]) == params


def test_data_checksums_against_the_manifest(tmp_path, monkeypatch):

    root = tmp_path / "data-root"
    (root / "musique").mkdir(parents=True)
    (root / "musique" / "good.jsonl").write_bytes(b"good")
    (root / "musique" / "bad.jsonl").write_bytes(b"tampered")
    entries = [
        {"path": "musique/good.jsonl", "sha256": hashlib.sha256(b"good").hexdigest(), "size": 4},
        {"path": "musique/bad.jsonl", "sha256": hashlib.sha256(b"bad").hexdigest(), "size": 3},
        {"path": "musique/gone.jsonl", "sha256": "0" * 64, "size": 1},
        {"path": "financebench/x.jsonl", "sha256": "1" * 64, "size": 1},
    ]
    monkeypatch.setattr(repro, "load_manifest", lambda manifest=None: entries)
    monkeypatch.setenv("AETHEL_DATA", str(root))
    got = {r["file"]: r["this build"] for r in repro.data_checksums(["musique"])}
    assert got == {
        "musique/good.jsonl": "ok",
        "musique/bad.jsonl": "mismatch",
        "musique/gone.jsonl": "missing",
    }
    assert not any(str(root) in json.dumps(r) for r in repro.data_checksums())  # no local path
    monkeypatch.delenv("AETHEL_DATA")
    monkeypatch.chdir(tmp_path)
    assert {r["this build"] for r in repro.data_checksums()} == {"no data configured"}


def test_the_chapter_s_record_and_tables(tmp_path, monkeypatch):
    from aethel_lite.book.notebooks import EXECUTION_FILE
    from aethel_lite.io import write_json
    from aethel_lite.studies.reproducibility import CHAPTERS, reproducibility_study, verdict_counts

    assert repro.load_execution(tmp_path) is None
    run = {"seconds": 2.0, "cells": 5, "code_cells": 3, "built": "2026-01-01 00:00 UTC", "parameters": {}}
    write_json(tmp_path / EXECUTION_FILE.name, {"00_quickstart": run})
    execution = repro.load_execution(tmp_path)
    assert execution == {"00_quickstart": run}
    entries = [{"path": "musique/a_b.jsonl", "sha256": "ab" * 32, "size": 4}]
    monkeypatch.setattr(repro, "load_manifest", lambda manifest=None: entries)
    monkeypatch.delenv("AETHEL_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    study = reproducibility_study(tmp_path, n_resamples=100)
    record = repro.record(study, execution)
    assert record["paper_table"] == study.rows and record["verdicts"] == verdict_counts(study.rows)
    assert record["provenance"] == repro.provenance_rows(study.results, None)
    assert record["parameters"] == {"n_resamples": 100, "quick": False}
    assert record["timing"] == {"execution": execution} and record["data"] == repro.data_checksums()
    checks = repro.checksum_table(record["data"])
    assert list(checks.columns) == ["bytes", "file", "sha256", "this build"]  # as the result file keeps them
    assert (
        checks.loc[0, "sha256"] == "ab" * 6 + "…" and checks.loc[0, "file"] == "musique/\u200ba_\u200bb.jsonl"
    )
    frames = repro.provenance_frames(study.results, execution)
    assert list(frames) == list(CHAPTERS)
    quick = frames["00_quickstart"].set_index("")
    assert quick.loc["run time (s)", "value"] == 2.0 and "value" in frames["00_quickstart"]
    (tmp_path / "notebooks").mkdir()
    for name in ("00_quickstart", "10_closed_pool"):
        (tmp_path / "notebooks" / f"{name}.ipynb").write_text("{}")
    stats = repro.execution_table(execution, tmp_path)
    assert list(stats["notebook"]) == ["00_quickstart", "10_closed_pool"] and stats.loc[0, "cells"] == 5
