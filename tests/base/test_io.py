"""I/O helpers: atomic writes, line-numbered JSONL errors, byte-identical outputs."""

from __future__ import annotations

import pytest

from aethel_lite.errors import DataError, DataNotFoundError
from aethel_lite.io import atomic_write, read_json, read_jsonl, write_json, write_jsonl


def test_atomic_write_leaves_nothing_on_error(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError):
        with atomic_write(target) as fh:
            fh.write("half")
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_replaces_only_on_success(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as fh:
            fh.write("new")
            raise RuntimeError
    assert target.read_text() == "old"


@pytest.mark.parametrize("name", ["rows.jsonl", "rows.jsonl.gz"])
def test_jsonl_round_trip_and_identical_bytes(tmp_path, name):
    rows = [{"b": 1, "a": "x"}, {"c": [1, 2]}]
    write_jsonl(tmp_path / name, rows)
    first = (tmp_path / name).read_bytes()
    write_jsonl(tmp_path / name, rows)
    assert (tmp_path / name).read_bytes() == first
    assert list(read_jsonl(tmp_path / name)) == rows


def test_malformed_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2\n')
    with pytest.raises(DataError, match=r"bad\.jsonl:3: malformed JSON"):
        list(read_jsonl(path))
    path.write_text("[1, 2]\n")
    with pytest.raises(DataError, match=r"bad\.jsonl:1: expected a JSON object"):
        list(read_jsonl(path))


def test_missing_and_malformed_json(tmp_path):
    with pytest.raises(DataNotFoundError, match="nope.json"):
        read_json(tmp_path / "nope.json")
    (tmp_path / "x.json").write_text('{"a":\n  }')
    with pytest.raises(DataError, match=r"x\.json:2"):
        read_json(tmp_path / "x.json")
    write_json(tmp_path / "y.json", {"b": 1, "a": 2})
    assert (tmp_path / "y.json").read_text() == '{\n  "a": 2,\n  "b": 1\n}\n'


def test_check_output_file_rejects_bad_paths_before_any_work(tmp_path):
    """For result files (`aethel eval --out`): an empty path, a folder, a path under a file, an unwritable place."""
    from aethel_lite.errors import ParameterError
    from aethel_lite.io import check_output_file

    (tmp_path / "f").write_text("x")
    for bad, message in [
        ("", "empty path"),
        (tmp_path, "is a folder"),
        (tmp_path / "f" / "r.json", "is a file"),
        ("/proc/aethel-result.json", "cannot write in /proc"),
    ]:
        with pytest.raises(ParameterError, match=message):
            check_output_file(bad)
    assert check_output_file(tmp_path / "new" / "r.json") == tmp_path / "new" / "r.json"
    assert list(tmp_path.iterdir()) == [tmp_path / "f"]  # the probe leaves nothing behind


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_atomic_write_gives_the_mode_open_would_give(tmp_path, umask):
    import os
    import stat

    old = os.umask(umask)
    try:
        with open(tmp_path / "plain.txt", "w") as fh:  # the oracle: what open() creates
            fh.write("x")
        write_json(tmp_path / "result.json", {"a": 1})
        with atomic_write(tmp_path / "blob.bin", "wb") as fh:
            fh.write(b"x")
    finally:
        os.umask(old)
    expected = stat.S_IMODE((tmp_path / "plain.txt").stat().st_mode)
    assert expected == 0o666 & ~umask
    for name in ("result.json", "blob.bin"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == expected, name


def test_check_writable_tries_for_real_and_names_the_place(tmp_path):
    from aethel_lite.errors import ParameterError
    from aethel_lite.io import check_writable

    check_writable(tmp_path, "--out x")
    assert list(tmp_path.iterdir()) == []  # the probe file is removed
    with pytest.raises(ParameterError, match=r"^--out x: cannot write in /proc \("):
        check_writable(
            __import__("pathlib").Path("/proc"), "--out x"
        )  # os.access says yes, creating a file fails
    with pytest.raises(ParameterError, match="cannot write in"):
        check_writable(tmp_path / "missing", "--out y")


def test_check_k_accepts_integers_from_one_and_names_the_flag():
    import numpy as np

    from aethel_lite.errors import ParameterError, check_k

    assert check_k(1) == 1 and check_k(np.int64(7), "--k") == 7 and type(check_k(np.int64(7))) is int
    for bad in (0, -3, True, 2.0, "5", None):
        with pytest.raises(ParameterError, match=r"^-k must be a positive integer \(≥ 1\), got "):
            check_k(bad, "-k")
