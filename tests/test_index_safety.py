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
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


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
def test_a_users_file_in_an_index_folder_stops_the_rebuild_and_force_says_what_it_deletes(idx, tmp_path, capsys):
    (idx / "my_notes.txt").write_text("notes\n")
    (idx / "bm25" / "extra.bin").write_bytes(b"x")
    before = files(idx)
    capsys.readouterr()
    assert index(tmp_path / "in", idx) == 2
    err = capsys.readouterr().err
    assert "aethel index, with files it did not write" in err and "bm25/extra.bin, my_notes.txt" in err and "--force" in err
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
    assert {p.relative_to(idx).as_posix(): p.stat().st_mode & 0o777 for p in folders} == \
        {p.relative_to(idx).as_posix(): mode for p in folders}
