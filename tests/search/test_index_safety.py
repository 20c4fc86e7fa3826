"""`aethel index` never deletes a file it did not write; a symlinked --out stays a link.

Each test here failed on the code before the fix (the numbered cases of the index-safety issue):
1. an input inside an existing index was deleted by the rebuild; 2. other files inside an index
folder were deleted without --force; 3. a symlinked --out bypassed the lock and was replaced by a
real folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from aethel_lite.cli import main

TEXT = "Acme Corp bought Beta LLC in 2021.\n\nBeta LLC is based in Oslo.\n"


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def idx(tmp_path) -> Path:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text(TEXT)
    out = tmp_path / "idx"
    assert index(tmp_path / "in", out) == 0
    return out


def index(*args) -> int:
    *paths, out = args
    return main(["index", *map(str, paths), "--out", str(out), "--methods", "bm25", "--quiet"])


def files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


# ----------------------------------------------------------------------- 1. inputs inside the index
@pytest.mark.parametrize("how", ["rebuild", "add"])
def test_an_input_inside_an_existing_index_is_refused_naming_both(idx, tmp_path, capsys, how):
    (idx / "docs").mkdir()
    (idx / "docs" / "a.txt").write_text("only-copy\n")
    before = files(idx)
    capsys.readouterr()
    args = ["--add"] if how == "add" else ["--methods", "bm25"]
    assert main(["index", str(idx / "docs"), "--out", str(idx), "--quiet", *args]) == 2
    err = capsys.readouterr().err
    assert f"--out {idx}" in err and f"the input {idx / 'docs'} lies inside it" in err
    assert files(idx) == before


def test_a_file_of_the_index_named_as_input_is_refused(idx, capsys):
    before = files(idx)
    assert index(idx / "passages.jsonl", idx) == 2
    assert "passages.jsonl lies inside it" in capsys.readouterr().err
    assert files(idx) == before


def test_an_input_inside_the_index_through_a_link_is_refused(idx, tmp_path, capsys):
    (idx / "docs").mkdir()
    (idx / "docs" / "a.txt").write_text("only-copy\n")
    (tmp_path / "alias").symlink_to(idx / "docs")
    assert index(tmp_path / "alias", idx) == 2
    assert "lies inside it" in capsys.readouterr().err
    assert (idx / "docs" / "a.txt").read_text() == "only-copy\n"


# --------------------------------------------------------------- 2. files the index did not write
def test_a_users_file_in_an_index_folder_stops_the_rebuild_and_force_says_what_it_deletes(
    idx, tmp_path, capsys
):
    (idx / "my_notes.txt").write_text("notes\n")
    (idx / "bm25" / "extra.bin").write_bytes(b"x")
    before = files(idx)
    capsys.readouterr()
    assert index(tmp_path / "in", idx) == 2
    err = capsys.readouterr().err
    assert (
        "aethel index, with files it did not write" in err
        and "bm25/extra.bin, my_notes.txt" in err
        and "--force" in err
    )
    assert files(idx) == before
    assert main(["index", str(tmp_path / "in"), "--out", str(idx), "--methods", "bm25", "--force"]) == 0
    err = capsys.readouterr().err
    assert "--force: deleting 2 entries of" in err and "bm25/extra.bin, my_notes.txt" in err
    assert not (idx / "my_notes.txt").exists() and not (idx / "bm25" / "extra.bin").exists()
    assert index(tmp_path / "in", idx) == 0  # the rebuilt index holds only its own files: no --force needed


def test_an_own_empty_folder_in_the_index_counts_as_foreign(idx, tmp_path, capsys):
    (idx / "keep").mkdir()
    assert index(tmp_path / "in", idx) == 2
    assert "(keep)" in capsys.readouterr().err and (idx / "keep").is_dir()


# ------------------------------------------------------------------------ 3. a symlinked --out
def test_a_symlinked_out_is_written_at_its_target_and_stays_a_link(idx, tmp_path, capsys):
    link = tmp_path / "link"
    link.symlink_to(idx)
    (tmp_path / "in" / "b.txt").write_text("Gamma Inc sold Delta Ltd.\n")
    assert index(tmp_path / "in", link) == 0
    assert link.is_symlink() and os.readlink(link) == str(idx)
    manifest = json.loads((idx / "index.json").read_text())
    assert [s["id"] for s in manifest["sources"]] == ["a", "b"]  # the target holds the new index
    assert not any(p.name.startswith((".link.", ".idx.")) for p in tmp_path.iterdir())


def test_a_symlinked_out_takes_the_targets_lock(idx, tmp_path, capsys):
    from aethel_lite.search.atomic import IndexLock

    link = tmp_path / "link"
    link.symlink_to(idx)
    with IndexLock(idx):  # another writer of the target
        assert index(tmp_path / "in", link) == 2
    assert "another `aethel index`" in capsys.readouterr().err


# --------------------------------------------------------------------- 10. a shared index is readable
def test_every_folder_of_an_index_has_the_permissions_of_a_plain_mkdir(idx, tmp_path):
    probe = tmp_path / "probe"
    probe.mkdir()  # the oracle: what the umask gives a new folder
    mode = probe.stat().st_mode & 0o777
    folders = [idx, *(p for p in idx.rglob("*") if p.is_dir())]
    assert idx / "bm25" in folders
    assert {p.relative_to(idx).as_posix(): p.stat().st_mode & 0o777 for p in folders} == {
        p.relative_to(idx).as_posix(): mode for p in folders
    }


# ------------------------------------------------------------------- 8. errors name the right line
def test_a_bad_byte_in_a_passage_file_is_reported_on_its_line(tmp_path):
    from aethel_lite.errors import DataError
    from aethel_lite.io import read_jsonl

    path = tmp_path / "p.jsonl"
    lines = [json.dumps({"pid": f"p{i}", "text": "Acme Corp " * 20}).encode() for i in range(100)]
    lines[60] = lines[60].replace(b"Acme", b"Ac\xffme", 1)
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(DataError, match=r"p\.jsonl:61: not UTF-8 text"):
        list(read_jsonl(path))


def test_a_bad_byte_in_a_text_file_names_its_line(tmp_path, capsys):
    (tmp_path / "t.txt").write_bytes(b"line one\n\nline two\nthree \xff\n")
    assert index(tmp_path / "t.txt", tmp_path / "idx") == 2
    assert "t.txt: not UTF-8 text on line 4 (byte 25)" in capsys.readouterr().err


def test_universal_newlines_are_kept(tmp_path):
    from aethel_lite.io import read_jsonl

    path = tmp_path / "p.jsonl"
    path.write_bytes(b'{"a": 1}\r{"a": 2}\r\n\r\n{"a": "\xc2\x85 \xe2\x80\xa8"}\n')
    assert list(read_jsonl(path, numbered=True)) == [(1, {"a": 1}), (2, {"a": 2}), (4, {"a": "\x85 \u2028"})]


def test_a_duplicate_pid_within_one_file_names_both_lines(tmp_path, capsys):
    rows = [
        {"pid": "a", "text": "Acme Corp."},
        {"pid": "b", "text": "Beta LLC."},
        {"pid": "a", "text": "Gamma."},
    ]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert index(tmp_path / "p.jsonl", tmp_path / "idx") == 2
    assert "p.jsonl:3: duplicate passage pid 'a' (first on line 1)" in capsys.readouterr().err


# -------------------------------------------------------------- 6. non-finite numbers, NUL-only text
@pytest.mark.parametrize("value", ["Infinity", "NaN", "-Infinity", "1e999", '[1, {"x": NaN}]'])
def test_a_non_finite_number_in_meta_is_an_error_naming_the_line(tmp_path, capsys, value):
    (tmp_path / "p.jsonl").write_text(
        '{"pid": "a", "text": "Acme Corp."}\n'
        f'{{"pid": "b", "text": "Beta LLC.", "meta": {{"rate": {value}}}}}\n'
    )
    assert index(tmp_path / "p.jsonl", tmp_path / "idx") == 2
    err = capsys.readouterr().err
    assert "p.jsonl:2: field 'meta' holds a non-finite number at meta['rate']" in err
    assert not (tmp_path / "idx").exists()


def test_a_nul_only_text_file_is_not_a_passage(tmp_path, capsys):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "nul.txt").write_bytes(b"\x00" * 64)
    (tmp_path / "in" / "a.txt").write_text(TEXT)
    assert index(tmp_path / "in", tmp_path / "idx") == 0
    ids = [json.loads(line)["pid"] for line in (tmp_path / "idx" / "passages.jsonl").read_text().splitlines()]
    assert ids == ["a#0", "a#1"]
    (tmp_path / "nul.txt").write_bytes(b"\x00\n\x00 \x00")
    assert index(tmp_path / "nul.txt", tmp_path / "idx2") == 2
    assert "no text found" in capsys.readouterr().err


# ------------------------------------------------------------ 5. every bad input is one clear line
def _without_root_powers(*args, env=None, cwd=None) -> subprocess.CompletedProcess:
    """``aethel`` in a subprocess that keeps uid 0 but loses the capabilities that let root read
    any file (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), so permission bits count as for a user."""
    if os.geteuid() != 0:
        cmd = [sys.executable, "-m", "aethel_lite.cli", *map(str, args)]
    else:
        cmd = [
            "setpriv",
            "--bounding-set=-dac_override,-dac_read_search",
            sys.executable,
            "-m",
            "aethel_lite.cli",
            *map(str, args),
        ]
    return subprocess.run(
        cmd, capture_output=True, text=True, env={**os.environ, **(env or {})}, cwd=cwd, timeout=300
    )


def one_line_error(run: subprocess.CompletedProcess, *needles: str) -> None:
    assert run.returncode != 0 and "Traceback" not in run.stderr, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.startswith("aethel: error:")]
    assert len(lines) == 1 and all(n in lines[0] for n in needles), run.stderr


@pytest.fixture
def shared(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text(TEXT)
    return tmp_path


def test_an_unreadable_subfolder_is_an_error_not_skipped(shared):
    locked = shared / "in" / "locked"
    locked.mkdir()
    (locked / "b.txt").write_text("Gamma Inc sold Delta Ltd.\n")
    locked.chmod(0)
    try:
        run = _without_root_powers(
            "index", shared / "in", "--out", shared / "idx", "--methods", "bm25", "--quiet"
        )
    finally:
        locked.chmod(0o755)
    one_line_error(run, f"{locked}: cannot read this folder (Permission denied)")
    assert run.returncode == 2 and not (shared / "idx").exists()


def test_an_unreadable_file_is_one_line(shared):
    (shared / "in" / "b.txt").write_text("Gamma Inc sold Delta Ltd.\n")
    (shared / "in" / "b.txt").chmod(0)
    run = _without_root_powers(
        "index", shared / "in", "--out", shared / "idx", "--methods", "bm25", "--quiet"
    )
    one_line_error(run, "b.txt: cannot read (Permission denied)")


def test_a_loop_of_file_links_is_one_line(shared, capsys):
    (shared / "in" / "x.txt").symlink_to(shared / "in" / "y.txt")
    (shared / "in" / "y.txt").symlink_to(shared / "in" / "x.txt")
    assert index(shared / "in", shared / "idx") == 2
    assert "a loop of symbolic links" in capsys.readouterr().err


def test_a_path_over_path_max_is_one_line(shared, capsys):
    assert index(shared / ("x" * 5000 + ".txt"), shared / "idx") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "File name too long" in err and "(5" in err


def test_a_cache_path_that_is_a_file_is_one_line(shared):
    (shared / "cachefile").write_text("")
    run = _without_root_powers(
        "index",
        shared / "in",
        "--out",
        shared / "idx",
        "--methods",
        "bm25,aethel-reg",
        "--quiet",
        env={"AETHEL_CACHE": str(shared / "cachefile")},
    )
    one_line_error(run, str(shared / "cachefile"))


def test_a_read_only_cache_is_one_line(shared):
    (shared / "cache").mkdir()
    (shared / "cache").chmod(0o555)
    try:
        run = _without_root_powers(
            "index",
            shared / "in",
            "--out",
            shared / "idx",
            "--methods",
            "bm25,aethel-reg",
            "--quiet",
            env={"AETHEL_CACHE": str(shared / "cache")},
        )
    finally:
        (shared / "cache").chmod(0o755)
    one_line_error(run, str(shared / "cache"))


def test_a_full_disk_while_writing_the_index_is_one_line_and_keeps_the_previous_index(
    idx, tmp_path, capsys, monkeypatch
):
    import errno

    from aethel_lite.search import builder

    before = files(idx)

    def full(self, info):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(builder._Builder, "write_manifest", full)
    capsys.readouterr()
    assert index(tmp_path / "in", idx) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1
        and "No space left on device (writing the index" in err
        and "previous index is kept" in err
    )
    assert files(idx) == before


def test_a_string_page_in_meta_prints(tmp_path, capsys):
    (tmp_path / "p.jsonl").write_text(
        json.dumps({"pid": "a", "text": "Acme Corp bought Beta LLC.", "meta": {"page": "iv"}}) + "\n"
    )
    assert index(tmp_path / "p.jsonl", tmp_path / "idx") == 0
    capsys.readouterr()
    assert main(["search", str(tmp_path / "idx"), "Who bought Beta?", "--method", "bm25"]) == 0
    assert "page iv" in capsys.readouterr().out


def test_a_broken_pipe_exits_quietly(idx, tmp_path):
    (tmp_path / "q.txt").write_text("Who bought Beta?\n" * 3000)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "aethel_lite.cli",
            "search",
            str(idx),
            "--questions",
            str(tmp_path / "q.txt"),
            "--method",
            "bm25",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout.readline().startswith(b'{"line": 1')
    proc.stdout.close()  # as `| head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141 and err == "", err


# -------------------------------------------------------------- 6. a question nothing matches
def test_search_says_when_no_passage_matched(idx, capsys):
    capsys.readouterr()
    assert main(["search", str(idx), "Who bought Beta?", "--method", "bm25", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["question", "method", "hits", "matched"] and out["matched"] is True
    assert main(["search", str(idx), "zyxwvut qqqq", "--method", "bm25", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["matched"] is False and out["hits"] and all(h["score"] == 0 for h in out["hits"])
    assert main(["search", str(idx), "zyxwvut qqqq", "--method", "bm25"]) == 0
    assert capsys.readouterr().out.startswith("No passage matched the question")
    assert main(["search", str(idx), "Who bought Beta?", "--method", "bm25"]) == 0
    assert "No passage matched" not in capsys.readouterr().out


def test_question_files_say_matched_per_line(idx, tmp_path, capsys):
    (tmp_path / "q.txt").write_text("Who bought Beta?\nthe of who\n")
    capsys.readouterr()
    assert main(["search", str(idx), "--questions", str(tmp_path / "q.txt"), "--method", "bm25"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["matched"] for r in rows] == [True, False]  # function words alone match nothing


# ------------------------------------------------------------------------ 7. signals, at any time
def test_a_swallowed_interrupt_still_stops_the_run_before_the_switch(idx, tmp_path, capsys, monkeypatch):
    """A KeyboardInterrupt raised inside the import machinery is swallowed ("Exception ignored in
    ... _get_module_lock"); the signal is noted and the run stops before it replaces the index."""
    import signal

    from aethel_lite.search import atomic, builder

    before = files(idx)
    real = builder._Builder.run

    def run(self):
        atomic._SIGNALLED.append(signal.SIGINT)  # what _on_signal notes when the exception is swallowed
        real(self)

    monkeypatch.setattr(builder._Builder, "run", run)
    (tmp_path / "in" / "b.txt").write_text("Gamma Inc sold Delta Ltd.\n")
    capsys.readouterr()
    assert index(tmp_path / "in", idx) == 130
    assert "interrupted; previous index kept" in capsys.readouterr().err
    assert files(idx) == before


def test_the_handler_only_notes_a_signal_inside_the_import_machinery():
    import signal

    from aethel_lite.search import atomic

    class Frame:
        class f_code:
            co_filename = "<frozen importlib._bootstrap>"

    with atomic.interrupt_handlers():
        atomic._on_signal(signal.SIGINT, Frame)  # no exception: it would be swallowed there
        with pytest.raises(KeyboardInterrupt):
            atomic.raise_if_signalled()
        with pytest.raises(atomic.Terminated):
            atomic._on_signal(signal.SIGTERM, None)
    assert atomic._SIGNALLED == []


def test_a_signal_after_the_switch_says_the_new_index_is_in_place(idx, tmp_path, capsys, monkeypatch):
    import builtins

    import aethel_lite.cli_index as cli_index

    calls = []

    def fake_print(*args, **kw):
        if kw.get("file") is None and not calls:  # the first line on stdout: the summary
            calls.append(1)
            raise KeyboardInterrupt  # Ctrl-C while the summary is printed: the index is already switched
        builtins.print(*args, **kw)

    monkeypatch.setattr(cli_index, "print", fake_print, raising=False)  # aethel index prints its summary
    (tmp_path / "in" / "b.txt").write_text("Gamma Inc sold Delta Ltd.\n")
    capsys.readouterr()
    assert index(tmp_path / "in", idx) == 130
    assert "the new index was already complete and is in place" in capsys.readouterr().err
    assert [s["id"] for s in json.loads((idx / "index.json").read_text())["sources"]] == ["a", "b"]


@pytest.mark.parametrize("delay", [0.2, 0.25, 0.3, 0.45, 0.6, 1.0])
def test_sigint_at_any_moment_of_the_start_is_one_line_and_keeps_the_index(idx, tmp_path, delay):
    """From the moment aethel_lite/cli.py runs, a SIGINT is one line and the index is kept. Before
    it (the interpreter's start, site, the package's __init__: about 0.1 s, longer on a busy
    machine) Python's own traceback remains: such a run is retried a little later, three times at most.
    The line must be true of the folder: either the previous index is kept, byte for byte, or (a
    signal after the switch) the new index is complete."""
    import signal
    import time

    before = files(idx)
    (tmp_path / "in" / "b.txt").write_text("Gamma Inc sold Delta Ltd.\n")
    for attempt in range(4):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "aethel_lite.cli",
                "index",
                str(tmp_path / "in"),
                "--out",
                str(idx),
                "--methods",
                "bm25",
                "--quiet",
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(delay + 0.1 * attempt)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        if not ("Traceback" in err and "aethel_lite/cli.py" not in err and attempt < 3):
            break
    assert "Traceback" not in err and "Exception ignored" not in err, err
    if proc.returncode == 0:  # finished before the signal: a complete new index
        assert json.loads(out)["n_documents"] == 2
        return
    assert proc.returncode == 130 and len(err.splitlines()) == 1 and err.startswith("aethel: interrupted"), (
        err
    )
    # the line says what the folder holds: a signal after the switch (before the summary was
    # printed) finds the new index complete; any earlier one finds the previous index untouched
    if err.strip() == "aethel: interrupted; the new index was already complete and is in place":
        assert json.loads((idx / "index.json").read_text())["n_documents"] == 2
        assert files(idx) != before
    else:
        assert err.strip() in (
            "aethel: interrupted; previous index kept",
            "aethel: interrupted while starting; nothing was done",
        ), err
        assert files(idx) == before


# ------------------------------------------------------------- 9. paths do not depend on the cwd
def test_add_from_another_folder_recognises_the_same_files(tmp_path, monkeypatch, capsys):
    docs = tmp_path / "work" / "my docs"
    docs.mkdir(parents=True)
    (docs / "a.txt").write_text(TEXT)
    monkeypatch.chdir(tmp_path / "work")
    assert index("my docs", "idx") == 0
    (docs / "b.txt").write_text("Gamma Inc sold Delta Ltd.\n")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["index", "work/my docs", "--out", "work/idx", "--add", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["unchanged"] == ["a"] and summary["added"] == ["b"]
    manifest = json.loads((tmp_path / "work" / "idx" / "index.json").read_text())
    assert manifest["inputs"] == [str(docs)]
    assert [s["path"] for s in manifest["sources"]] == [str(docs / "a.txt"), str(docs / "b.txt")]


def test_the_rebuild_command_is_absolute_and_shell_quoted(tmp_path, monkeypatch, capsys):
    import shlex

    docs = tmp_path / "in" / "my docs"
    docs.mkdir(parents=True)
    (docs / "a.txt").write_text(TEXT)
    monkeypatch.chdir(tmp_path)
    assert index("in/my docs", "my idx") == 0
    with open(tmp_path / "my idx" / "passages.jsonl", "a") as fh:
        fh.write("\n")
    capsys.readouterr()
    assert main(["search", "my idx", "Who bought Beta?", "--method", "bm25"]) == 2
    err = capsys.readouterr().err
    command = err.split("rebuild it with `", 1)[1].split("`", 1)[0]
    assert shlex.split(command) == [
        "aethel",
        "index",
        str(docs),
        "--out",
        str(tmp_path / "my idx"),
        "--methods",
        "bm25",
    ]


def test_a_full_cache_is_one_line_naming_it(shared, capsys, monkeypatch):
    import sqlite3

    from aethel_lite.caching.store import PassageStore

    def full(self, items):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(PassageStore, "put_many", full)
    capsys.readouterr()
    assert (
        main(
            [
                "index",
                str(shared / "in"),
                "--out",
                str(shared / "idx"),
                "--methods",
                "bm25,aethel-reg",
                "--quiet",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"the cache ({shared / 'cache'}): database or disk is full" in err
    assert not (shared / "idx").exists()
