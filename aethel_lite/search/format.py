"""The index format: its version, the files and the ``index.json`` manifest (the folder layout is in
:mod:`aethel_lite.search.index`), and the checks that every file search reads is the one recorded."""

from __future__ import annotations

import hashlib
import os
import shlex
from collections.abc import Iterable
from pathlib import Path

from ..errors import DataError, DataNotFoundError, ParameterError
from ..io import read_json
from ..retrievers.registry import DEFAULT_METHOD, FUSIONS, METHODS, known_methods, parse_methods

__all__ = [
    "INDEX_FORMAT",
    "READ_FORMATS",
    "INDEX_FILE",
    "DOCMETA_FILE",
    "PASSAGES_FILE",
    "IDS_FILE",
    "MAX_MODEL_CHARS",
    "SHA",
    "file_digest",
    "method_parts",
    "searchable_methods",
    "is_index_folder",
    "read_manifest",
    "rebuild_hint",
    "read_verified",
    "verify_files",
]

INDEX_FORMAT = 4
#: formats this version reads (each retriever saves itself from format 4 on: a dense part holds its settings)
READ_FORMATS = (4,)
#: formats of earlier versions: recognised as indexes (``--out`` may replace them), searched only after a rebuild
OLD_FORMATS = (1, 2, 3)
INDEX_FILE = "index.json"
DOCMETA_FILE = "docmeta.json"
PASSAGES_FILE = "passages.jsonl"
IDS_FILE = "ids.json"
#: characters of a passage that entity extraction and dense encoding read (the rest is BM25 only)
MAX_MODEL_CHARS = 100_000
SHA = "sha256"


def file_digest(path: Path, *, lines: bool) -> dict:
    """``{"sha256", "bytes"}`` (and ``"lines"``: newline count) of one file."""
    h = hashlib.sha256()
    size = n_lines = 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
            size += len(block)
            n_lines += block.count(b"\n") if lines else 0
    return {SHA: h.hexdigest(), "bytes": size, **({"lines": n_lines} if lines else {})}


def method_parts(method: str) -> list[str]:
    """The index parts a method reads (:mod:`aethel_lite.search.index`), e.g. ``["bm25", "graph-ner3"]``.

    Raises
    ------
    ParameterError
        Unknown method (the valid ones are listed).
    """
    parse_methods([method], flag="--method")
    if method in FUSIONS:
        return list(dict.fromkeys(p for base in FUSIONS[method] for p in method_parts(base)))
    return METHODS[method].parts()  # what the method's retriever saves (its ``parts``)


def searchable_methods(parts: Iterable[str]) -> list[str]:
    """The methods whose parts are all among ``parts``, in :func:`known_methods` order."""
    have = set(parts)
    out = []
    for m in known_methods():
        try:
            if set(method_parts(m)) <= have:
                out.append(m)
        except ParameterError:  # a method an index cannot hold
            continue
    return out


def is_index_folder(path: Path) -> bool:
    """Whether ``path`` holds an aethel index (of any format) rather than someone's own files."""
    try:
        info = read_json(path / INDEX_FILE)
    except (DataError, OSError):
        return False
    return (
        isinstance(info, dict)
        and info.get("format") in (*OLD_FORMATS, *READ_FORMATS)
        and (path / PASSAGES_FILE).is_file()
    )


def _fail(path: Path, what: str) -> DataError:
    return DataError(f"{path}: {what}")


def read_manifest(index_dir: str | os.PathLike) -> dict:
    """Read and check ``index.json`` of an index folder.

    Raises
    ------
    DataNotFoundError
        The folder or its ``index.json`` does not exist.
    DataError
        ``index.json`` is not valid JSON, not a manifest, of another format version, or a field
        is missing or of the wrong type (the field is named).
    """
    index_dir = Path(index_dir)
    path = index_dir / INDEX_FILE
    if not path.is_file():
        raise DataNotFoundError(
            f"{index_dir}: not an aethel index (no {INDEX_FILE}); build one with "
            f"`aethel index FILES --out {index_dir}`"
        )
    info = read_json(path)
    if not isinstance(info, dict):
        raise _fail(
            path,
            f"not an index manifest (a JSON {type(info).__name__}, expected an object); rebuild the index",
        )
    fmt = info.get("format")
    if fmt in OLD_FORMATS and type(fmt) is int:  # not true, which equals 1 in Python
        raise _fail(
            path, f"index format {fmt}, written by an older aethel-lite; {rebuild_hint(index_dir, info)}"
        )
    if fmt not in READ_FORMATS or isinstance(fmt, bool):
        raise _fail(
            path,
            f"unsupported index format {fmt!r} (this aethel-lite reads formats "
            f"{', '.join(map(str, READ_FORMATS))}); rebuild the index",
        )
    expect = {
        "n_passages": int,
        "n_documents": int,
        "methods": list,
        "parts": dict,
        "files": dict,
        "sources": list,
        "inputs": list,
    }
    for key, kind in expect.items():
        value = info.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise _fail(path, f"field {key!r} is missing or not a {kind.__name__}; rebuild the index")
    if info["n_passages"] < 1:
        raise _fail(path, "field 'n_passages' must be >= 1")
    if not isinstance(info.get("chunk_words"), (int, type(None))) or isinstance(
        info.get("chunk_words"), bool
    ):
        raise _fail(path, "field 'chunk_words' must be an integer or null")
    for name, entry in info["files"].items():
        ok = (
            isinstance(name, str)
            and name
            and not name.startswith(("/", "."))
            and ".." not in Path(name).parts
            and isinstance(entry, dict)
            and isinstance(entry.get(SHA), str)
            and len(entry[SHA]) == 64
            and isinstance(entry.get("bytes"), int)
            and not isinstance(entry.get("bytes"), bool)
        )
        if not ok:
            raise _fail(path, f"field 'files' has a malformed entry {name!r}; rebuild the index")
    for name, part in info["parts"].items():
        if (
            not isinstance(part, dict)
            or not isinstance(part.get("files"), list)
            or not all(isinstance(f, str) and f in info["files"] for f in part["files"])
        ):
            raise _fail(
                path, f"part {name!r} is malformed or names files missing from 'files'; rebuild the index"
            )
    if IDS_FILE not in info["files"]:
        raise _fail(path, f"'files' must record {IDS_FILE}; rebuild the index")
    if PASSAGES_FILE not in info["files"] or info["files"][PASSAGES_FILE].get("lines") != info["n_passages"]:
        raise _fail(
            path,
            f"'files' must record {PASSAGES_FILE} with n_passages = {info['n_passages']} lines; rebuild the index",
        )
    for i, src in enumerate(info["sources"]):
        if (
            not isinstance(src, dict)
            or not all(isinstance(src.get(k), str) for k in ("id", "path", "kind", SHA))
            or not isinstance(src.get("n_passages"), int)
            or isinstance(src.get("n_passages"), bool)
            or src["n_passages"] < 0
        ):
            raise _fail(path, f"sources[{i}] is malformed; rebuild the index")
    if sum(src["n_passages"] for src in info["sources"]) != info["n_passages"]:
        raise _fail(path, "the sources' passage counts do not add up to n_passages; rebuild the index")
    return info


def rebuild_hint(index_dir: Path, info: dict) -> str:
    """The command that rebuilds the index: every path absolute and shell-quoted, so it can be
    pasted from any folder (an input recorded relative by an older index is taken from here)."""

    def texts(key: str) -> list[str]:
        value = info.get(key)
        return value if isinstance(value, list) and all(isinstance(x, str) for x in value) else []

    inputs = " ".join(shlex.quote(os.path.abspath(p)) for p in texts("inputs")) or "FILES"
    methods = ",".join(texts("methods")) or DEFAULT_METHOD
    return (
        f"rebuild it with `aethel index {inputs} --out {shlex.quote(os.path.abspath(index_dir))} "
        f"--methods {shlex.quote(methods)}`"
    )


def _compare(path: Path, index_dir: Path, info: dict, want: dict, got: dict) -> None:
    """DataError naming ``path`` when its digest ``got`` differs from the manifest's ``want``."""
    if "lines" in want and got.get("lines") != want["lines"]:
        raise DataError(
            f"{path}: {got.get('lines')} lines, but {INDEX_FILE} records {want['lines']}; the file was "
            f"changed or truncated after indexing; {rebuild_hint(index_dir, info)}"
        )
    if got["bytes"] != want["bytes"] or got[SHA] != want[SHA]:
        raise DataError(
            f"{path}: content differs from the SHA-256 recorded in {INDEX_FILE} ({got['bytes']} bytes, "
            f"expected {want['bytes']}); the file was changed after indexing; {rebuild_hint(index_dir, info)}"
        )


def read_verified(index_dir: Path, info: dict, name: str) -> bytes:
    """The bytes of one index file, checked against the manifest (read once)."""
    path = index_dir / name
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: missing from the index; {rebuild_hint(index_dir, info)}") from None
    except OSError as exc:
        raise DataError(
            f"{path}: cannot read ({exc.strerror or exc}); {rebuild_hint(index_dir, info)}"
        ) from None
    want = info["files"][name]
    got = {SHA: hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    if "lines" in want:
        got["lines"] = data.count(b"\n")
    _compare(path, index_dir, info, want, got)
    return data


def verify_files(index_dir: Path, info: dict, names: Iterable[str]) -> None:
    """Check size, line count and SHA-256 of ``names`` against the manifest (DataError naming the file)."""
    for name in names:
        want = info["files"][name]
        path = index_dir / name
        if not path.is_file():
            raise DataError(f"{path}: missing from the index; {rebuild_hint(index_dir, info)}")
        _compare(path, index_dir, info, want, file_digest(path, lines="lines" in want))
