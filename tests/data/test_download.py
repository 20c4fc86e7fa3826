"""download_data / verify_data against a local HTTP server (127.0.0.1, random port, in a thread)."""

from __future__ import annotations

import functools
import hashlib
import http.server
import threading
import warnings
from pathlib import Path

import pytest
from conftest import require

from aethel_lite.data.download import MANIFEST_PATH, download_data, load_manifest, verify_data
from aethel_lite.errors import DataError, DataNotFoundError, ParameterError
from aethel_lite.io import read_json


class Handler(http.server.SimpleHTTPRequestHandler):
    """Serves files from a folder; ``/broken/...`` promises 1000 bytes, sends 10 and hangs up."""

    requests: list[str]

    def do_GET(self):  # noqa: N802 (http.server API)
        self.requests.append(self.path)
        if self.path.startswith("/broken/"):
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"0123456789")
            self.wfile.flush()
            self.close_connection = True
            return
        super().do_GET()

    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "srv"
    root.mkdir()
    handler = functools.partial(type("H", (Handler,), {"requests": []}), directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{httpd.server_address[1]}", handler.func.requests
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def _entry(path, data, url=None, **kw):
    return {"path": path, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "url": url, **kw}


def _leftovers(folder: Path):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_good_file_then_present(server, tmp_path):
    root, base, requests = server
    data = b'{"id": 1}\n' * 1000
    (root / "musique").mkdir()
    (root / "musique" / "m.jsonl").write_bytes(data)
    manifest = {"files": [_entry("musique/m.jsonl", data, url=f"{base}/musique/m.jsonl")]}
    dest = tmp_path / "data"
    assert download_data(dest, manifest, progress=False) == {"musique/m.jsonl": "downloaded"}
    assert (dest / "musique" / "m.jsonl").read_bytes() == data
    assert _leftovers(dest) == ["musique/m.jsonl"]
    import os
    import stat

    mask = os.umask(0o022)
    os.umask(mask)  # a downloaded file is as readable as one open() creates (not mkstemp's 0600)
    assert stat.S_IMODE((dest / "musique" / "m.jsonl").stat().st_mode) == 0o666 & ~mask
    assert verify_data(dest, manifest) == {"musique/m.jsonl": "ok"}
    # second run: already present with the right hash -> no request
    n = len(requests)
    assert download_data(dest, manifest, progress=False) == {"musique/m.jsonl": "present"}
    assert len(requests) == n


def test_base_url_mirror_and_file_selection(server, tmp_path):
    root, base, _ = server
    a, b = b"alpha", b"beta"
    (root / "x").mkdir()
    (root / "x" / "a.txt").write_bytes(a)
    (root / "x" / "b c.txt").write_bytes(b)
    manifest = {"files": [_entry("x/a.txt", a, url="http://nowhere.invalid/a"), _entry("x/b c.txt", b)]}
    dest = tmp_path / "d"
    assert download_data(dest, manifest, base_url=base + "/", files=["x/b c.txt"], progress=False) == {
        "x/b c.txt": "downloaded"
    }
    assert _leftovers(dest) == ["x/b c.txt"]
    assert download_data(dest, manifest, base_url=base, progress=False) == {
        "x/a.txt": "downloaded",
        "x/b c.txt": "present",
    }
    with pytest.raises(ParameterError, match=r"'x/zzz' is not in the manifest"):
        download_data(dest, manifest, base_url=base, files=["x/zzz"])


def test_checksum_mismatch_leaves_nothing(server, tmp_path):
    root, base, _ = server
    (root / "f.json").write_bytes(b"tampered")
    expected = hashlib.sha256(b"original").hexdigest()
    actual = hashlib.sha256(b"tampered").hexdigest()
    manifest = {"files": [{"path": "sub/f.json", "sha256": expected, "url": f"{base}/f.json"}]}
    dest = tmp_path / "d"
    with pytest.raises(DataError) as info:
        download_data(dest, manifest, progress=False)
    msg = str(info.value)
    assert "sub/f.json" in msg and expected in msg and actual in msg
    assert _leftovers(dest) == []


def test_mismatch_keeps_the_existing_file_untouched(server, tmp_path):
    root, base, _ = server
    (root / "f.txt").write_bytes(b"wrong")
    dest = tmp_path / "d"
    dest.mkdir()
    (dest / "f.txt").write_bytes(b"old local copy")
    manifest = {"files": [_entry("f.txt", b"right", url=f"{base}/f.txt")]}
    with pytest.raises(DataError, match="SHA-256 mismatch"):
        download_data(dest, manifest, progress=False)
    assert _leftovers(dest) == ["f.txt"] and (dest / "f.txt").read_bytes() == b"old local copy"


def test_interrupted_transfer_leaves_nothing(server, tmp_path):
    _, base, _ = server
    manifest = {"files": [_entry("big/file.bin", b"x" * 1000, url=f"{base}/broken/file.bin")]}
    dest = tmp_path / "d"
    with pytest.raises(
        DataError, match=r"big/file\.bin: download from .* failed|big/file\.bin: interrupted transfer"
    ):
        download_data(dest, manifest, progress=False, timeout=10)
    assert _leftovers(dest) == []  # neither the file nor a .part temp file


def test_http_error_names_the_file(server, tmp_path):
    _, base, _ = server
    manifest = {"files": [_entry("gone.txt", b"x", url=f"{base}/gone.txt")]}
    with pytest.raises(DataError, match=r"gone\.txt: download from .*404"):
        download_data(tmp_path / "d", manifest, progress=False)
    assert _leftovers(tmp_path / "d") == []


def test_file_without_url_says_how_to_get_it(tmp_path):
    manifest = {
        "files": [
            _entry(
                "financebench/pages.jsonl.gz",
                b"p",
                source="Extracted with PyMuPDF from the FinanceBench PDFs.",
            )
        ]
    }
    with pytest.warns(
        UserWarning, match=r"pages\.jsonl\.gz: no public download URL\. Extracted with PyMuPDF"
    ):
        report = download_data(tmp_path / "d", manifest, progress=False)
    assert report == {"financebench/pages.jsonl.gz": "manual"}


def test_verify_data_states(tmp_path):
    manifest = {"files": [_entry("a", b"a"), _entry("b", b"b"), _entry("c", b"c")]}
    (tmp_path / "a").write_bytes(b"a")
    (tmp_path / "b").write_bytes(b"B")
    report = verify_data(tmp_path, manifest)
    assert report["a"] == "ok" and report["c"] == "missing"
    assert report["b"] == f"mismatch (sha256 {hashlib.sha256(b'B').hexdigest()})"
    with pytest.raises(DataNotFoundError):
        verify_data(tmp_path / "nope", manifest)


@pytest.mark.parametrize(
    "manifest, match",
    [
        ({"files": [{"path": "../evil", "sha256": "0" * 64}]}, "must be relative"),
        ({"files": [{"path": "/etc/x", "sha256": "0" * 64}]}, "must be relative"),
        ({"files": [{"path": "a", "sha256": "abc"}]}, "64 hex"),
        ({"files": [{"sha256": "0" * 64}]}, "needs string 'path'"),
        ({"entries": []}, "'files' list"),
    ],
)
def test_bad_manifest(tmp_path, manifest, match):
    with pytest.raises(DataError, match=match):
        download_data(tmp_path, manifest, progress=False)


def test_unsupported_url_scheme(tmp_path):
    with pytest.raises(ParameterError, match="unsupported URL scheme"):
        download_data(tmp_path, {"files": [_entry("a", b"a", url="ftp://example.org/a")]}, progress=False)


# ------------------------------------------------------------------------------ packaged manifest
def test_packaged_manifest_is_well_formed():
    entries = load_manifest()
    raw = read_json(MANIFEST_PATH)["files"]
    assert [e["path"] for e in entries] == sorted(e["path"] for e in entries)
    for entry in raw:
        assert entry["source"] and entry["license"] and entry["size"] > 0
        if entry["path"] == "financebench/pages.jsonl.gz":
            assert entry["url"] is None and "PyMuPDF" in entry["source"]
        else:
            assert entry["url"].startswith("https://raw.githubusercontent.com/")


def test_packaged_manifest_matches_real_data(real_data):
    """The manifest's hashes and sizes are those of SHA256SUMS and of the files in $AETHEL_DATA."""
    sums = {}
    for line in require(real_data / "SHA256SUMS").read_text().splitlines():
        digest, path = line.split(None, 1)
        sums[path.strip()] = digest
    entries = {e["path"]: e for e in load_manifest()}
    assert {p: e["sha256"] for p, e in entries.items()} == sums
    for path, entry in entries.items():
        assert require(real_data / path).stat().st_size == entry["size"]
    assert set(verify_data(real_data).values()) == {"ok"}


def test_download_from_mirror_of_real_data_is_a_no_op(real_data, tmp_path):
    """Every real file is 'present' when dest already holds it (no network touched)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = download_data(real_data, progress=False)
    assert set(report.values()) == {"present"}
