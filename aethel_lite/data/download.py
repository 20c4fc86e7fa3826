"""Download and verify the data listed in ``aethel_lite/manifests/data.json`` (``path``, ``sha256``, ``url``, ...)."""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import logging
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import DataError, DataNotFoundError, ParameterError
from ..io import give_default_mode, read_json, sha256_file
from .paths import data_root

__all__ = ["download_data", "verify_data", "load_manifest", "MANIFEST_PATH"]

logger = logging.getLogger(__name__)

MANIFEST_PATH = Path(__file__).resolve().parent.parent / "manifests" / "data.json"
_CHUNK = 1 << 16
_TRANSFER_ERRORS = (urllib.error.URLError, http.client.HTTPException, OSError, ValueError)


def load_manifest(manifest: str | os.PathLike | Mapping | None = None) -> list[dict]:
    """The manifest's file entries (default: the packaged ``manifests/data.json``).

    ``manifest`` may be a path, a dict with a ``"files"`` list, or ``None``. Each entry needs
    ``path`` (relative, no ``..``) and a 64-hex ``sha256``.
    """
    source = MANIFEST_PATH if manifest is None else manifest
    data = dict(source) if isinstance(source, Mapping) else read_json(source)
    where = "manifest" if isinstance(source, Mapping) else str(source)
    files = data.get("files") if isinstance(data, Mapping) else None
    if not isinstance(files, list):
        raise DataError(f"{where}: expected an object with a 'files' list")
    out = []
    for i, entry in enumerate(files):
        if (
            not isinstance(entry, Mapping)
            or not isinstance(entry.get("path"), str)
            or not isinstance(entry.get("sha256"), str)
        ):
            raise DataError(f"{where}: files[{i}] needs string 'path' and 'sha256'")
        rel = Path(entry["path"])
        if rel.is_absolute() or ".." in rel.parts:
            raise DataError(f"{where}: files[{i}]: path {entry['path']!r} must be relative, without '..'")
        sha = entry["sha256"].lower()
        if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            raise DataError(f"{where}: files[{i}] ({entry['path']}): 'sha256' is not 64 hex digits")
        out.append({**entry, "sha256": sha})
    return out


def _select(entries: list[dict], files: Iterable[str] | None) -> list[dict]:
    if files is None:
        return entries
    wanted = [str(Path(f).as_posix()) for f in ([files] if isinstance(files, str) else files)]
    known = {e["path"]: e for e in entries}
    unknown = [f for f in wanted if f not in known]
    if unknown:
        raise ParameterError(
            f"files: {unknown[0]!r} is not in the manifest; known: {', '.join(sorted(known))}"
        )
    return [known[f] for f in wanted]


def _fetch(url: str, target: Path, entry: Mapping[str, Any], *, progress: bool, timeout: float) -> None:
    """Stream ``url`` into a temp file beside ``target``, verify size and SHA-256, rename."""
    from tqdm.auto import tqdm

    rel = entry["path"]
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    give_default_mode(fd)
    tmp = Path(tmp_name)
    h = hashlib.sha256()
    received = 0
    try:
        with os.fdopen(fd, "wb") as out:
            request = urllib.request.Request(url, headers={"User-Agent": "aethel-lite"})
            with urllib.request.urlopen(request, timeout=timeout) as response:
                length = response.headers.get("Content-Length")
                expected_len = int(length) if length and length.isdigit() else entry.get("size")
                with tqdm(
                    total=expected_len, unit="B", unit_scale=True, desc=rel, disable=not progress
                ) as bar:
                    for block in iter(lambda: response.read(_CHUNK), b""):
                        out.write(block)
                        h.update(block)
                        received += len(block)
                        bar.update(len(block))
                if length and length.isdigit() and received != int(length):
                    raise DataError(
                        f"{rel}: interrupted transfer from {url}: got {received} of {length} bytes; no partial file was kept"
                    )
        actual = h.hexdigest()
        if actual != entry["sha256"]:
            raise DataError(
                f"{rel}: SHA-256 mismatch for {url}: expected {entry['sha256']}, got {actual} "
                f"({received} bytes); the downloaded file was deleted"
            )
        os.replace(tmp, target)
    except BaseException as exc:  # also KeyboardInterrupt: leave nothing behind
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        if isinstance(exc, DataError) or not isinstance(exc, _TRANSFER_ERRORS):
            raise
        raise DataError(
            f"{rel}: download from {url} failed after {received} bytes ({type(exc).__name__}: {exc}); no partial file was kept"
        ) from exc


def download_data(
    dest: str | os.PathLike,
    manifest: str | os.PathLike | Mapping | None = None,
    base_url: str | None = None,
    files: Iterable[str] | None = None,
    progress: bool = True,
    *,
    timeout: float = 60.0,
) -> dict[str, str]:
    """Download the manifest's files into ``dest`` and verify their SHA-256.

    Parameters
    ----------
    dest : path-like
        Data folder to fill (created if needed); files land at ``dest / entry["path"]``.
    manifest : path-like or dict, optional
        Default: the packaged ``aethel_lite/manifests/data.json``.
    base_url : str, optional
        A mirror laid out like the data folder: every file (also one without a public URL) is fetched
        from ``base_url + "/" + path`` instead of its ``url``.
    files : iterable of str, optional
        Relative paths to fetch (default: all); unknown paths raise :class:`ParameterError`.
    progress : bool
    timeout : float
        Socket timeout in seconds.

    Returns
    -------
    dict
        path → ``"downloaded"``, ``"present"`` (already there with the right hash) or ``"manual"``
        (no public URL and no ``base_url``: a warning says how to obtain the file).

    Raises
    ------
    DataError
        A transfer failed or was cut short, or a checksum did not match (the message names the file
        and hashes). Nothing partial is left behind; files already in place are untouched.
    """
    dest = Path(dest)
    entries = _select(load_manifest(manifest), files)
    report: dict[str, str] = {}
    for entry in entries:
        rel = entry["path"]
        target = dest / rel
        if target.is_file() and sha256_file(target) == entry["sha256"]:
            report[rel] = "present"
            continue
        if base_url:
            url = base_url.rstrip("/") + "/" + urllib.parse.quote(rel)
        elif entry.get("url"):
            url = entry["url"]
        else:
            message = (
                f"{rel}: no public download URL. {entry.get('source', '')} "
                f"Place it at {target} (sha256 {entry['sha256']}) or pass base_url= a mirror."
            )
            warnings.warn(message, stacklevel=2)
            logger.warning(message)
            report[rel] = "manual"
            continue
        if urllib.parse.urlparse(url).scheme not in ("http", "https", "file"):
            raise ParameterError(f"{rel}: unsupported URL scheme in {url!r} (http, https or file)")
        logger.info("downloading %s from %s", rel, url)
        _fetch(url, target, entry, progress=progress, timeout=timeout)
        report[rel] = "downloaded"
    return report


def verify_data(
    root: str | os.PathLike | None = None, manifest: str | os.PathLike | Mapping | None = None
) -> dict[str, str]:
    """Check a data folder against the manifest.

    Returns
    -------
    dict
        path → ``"ok"``, ``"missing"`` or ``"mismatch (sha256 <actual>)"``.
    """
    root = Path(root) if root is not None else data_root()
    if not root.is_dir():
        raise DataNotFoundError(f"{root}: data folder not found")
    report = {}
    for entry in load_manifest(manifest):
        path = root / entry["path"]
        if not path.is_file():
            report[entry["path"]] = "missing"
            continue
        actual = sha256_file(path)
        report[entry["path"]] = "ok" if actual == entry["sha256"] else f"mismatch (sha256 {actual})"
    return report
