r"""A persistent, self-checking search index of the user's own files: the engine behind ``aethel index``
and ``aethel search``.

An index is a folder that holds everything search needs, so ``aethel search`` only loads and
answers (no model is fitted, no entity is extracted from a passage at search time)::

    index.json              manifest: format, methods, inputs, sources, and the SHA-256, size and
                            line count of every other file
    passages.jsonl          the passages (pid, doc_id, title, text, meta), one per line
    ids.json                their pids and doc_ids (search parses only the passages it returns)
    bm25/                   BM25 matrices and vocabulary (bm25s's own .npy/.json files)
    entities-<ner|regex>.jsonl  each passage's raw entity mentions and the SHA-256 of the text
                            they were extracted from (reused by ``--add``)
    graph-<extractor>/      the passage-entity graph (CSR arrays graph.npz + entity table graph.json)
    dense-<first|max|heading>.npy  passage (window, heading) embeddings, float32; dense-max-offsets.npy
    docmeta.json            each document's company, fiscal periods and filing type
                            (:func:`aethel_lite.core.docmeta.document_metadata`; hybrid methods)

Nothing is pickled. Which parts exist depends on ``--methods``: ``bm25`` needs ``bm25/``; a graph
method (``aethel-*``) needs ``bm25/`` and its ``graph-<extractor>/``; ``dense``/``dense-max``/``dense-heading`` their
embeddings; a fusion its inputs; ``aethel-hybrid`` (and its ablations) ``bm25/``, ``graph-ner3/``,
``dense-first.npy``, ``dense-heading.npy`` and ``docmeta.json``. Every method whose parts exist can be searched (an index
built for ``aethel-bct`` also answers ``aethel-ner3`` and ``aethel-bct-pure``).

Format 3 added the ``docmeta`` part; a format-2 index (no hybrid methods) is still read, and
format 1 is refused with the command that rebuilds it.

Writing is crash-safe. An index is built in a hidden sibling folder ``.<name>.tmp-<pid>-<random>``
and switched into place with one atomic ``renameat2(RENAME_EXCHANGE)`` (two renames where that
is unavailable) only when complete, so an interruption at any point (Ctrl-C, SIGTERM, SIGKILL,
power loss) leaves the previous index as it was; the next run removes what a killed run left
behind. A lock file ``.<name>.lock`` beside the folder (holding the writer's pid, locked with
``flock``) makes a second writer fail at once with a clear message.

Search verifies before it answers: ``index.json`` must be an index manifest of this format, and
every file a method reads must have the recorded size, line count and SHA-256; the error names the
file. Document ids and passage ids are stable (:mod:`aethel_lite.data.ingest`): ``--add`` appends
or replaces documents and never renames another document's passages.

Very long passages: entity extraction and dense encoding read at most :data:`MAX_MODEL_CHARS`
(100,000) characters of a passage (FinanceBench pages have at most ~11,000), with a warning;
BM25 and the stored text keep all of it. A 20 MB file without blank lines is one passage and is
indexed in bounded time and memory (``benchmarks/bench_index.py``).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import secrets
import shutil
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..caching.store import package_versions, text_key
from ..caching.versions import versions
from ..core.docmeta import DocMeta, document_metadata
from ..core.entities import Mention, extract_entities, get_extractor, graph_filters
from ..core.graph import EntityGraph, build_graph
from ..data.ingest import check_chunking, collect_sources, read_source
from ..data.schema import Dataset, Passage, Query
from ..errors import AethelError, DataError, DataNotFoundError, ParameterError
from ..io import read_json, read_jsonl
from ..retrievers import BM25Retriever, rrf
from ..retrievers.base import passage_text
from ..retrievers.dense import model_files_digest, resolve_precision
from ..retrievers.registry import (
    FUSIONS,
    METHODS,
    known_methods,
    make_retriever,
    parse_methods,
)

__all__ = ["INDEX_FORMAT", "MAX_MODEL_CHARS", "IndexBusyError", "Terminated", "check_out", "build_index",
           "SearchIndex", "open_index", "search_questions", "read_manifest", "load_index", "search_index", "method_parts"]

logger = logging.getLogger(__name__)

INDEX_FORMAT = 3
#: formats this version reads (format 2 lacks only the ``docmeta`` part of hybrid methods)
READ_FORMATS = (2, 3)
INDEX_FILE = "index.json"
DOCMETA_FILE = "docmeta.json"
PASSAGES_FILE = "passages.jsonl"
IDS_FILE = "ids.json"
#: characters of a passage that entity extraction and dense encoding read (the rest is BM25 only)
MAX_MODEL_CHARS = 100_000
#: passages per entity-extraction call (progress, and the ``ner`` pause point of the test hook)
_NER_BATCH = 512
#: test hook: ``AETHEL_TEST_PAUSE=<point>`` makes ``aethel index`` stop at that point, write
#: ``$AETHEL_TEST_PAUSE_FILE`` and wait until a signal arrives or that file is deleted
PAUSE_ENV = "AETHEL_TEST_PAUSE"
PAUSE_POINTS = ("ner", "passages", "manifest")
_SHA = "sha256"


class IndexBusyError(AethelError, RuntimeError):
    """Another process is writing the same index folder."""


class Terminated(BaseException):
    """Raised in the main thread by ``aethel index``'s SIGTERM handler (like KeyboardInterrupt)."""


# ----------------------------------------------------------------------------------- small helpers
def _checkpoint(point: str) -> None:
    """Test hook: pause at ``point`` when ``$AETHEL_TEST_PAUSE`` names it (see :data:`PAUSE_ENV`)."""
    if os.environ.get(PAUSE_ENV) != point:
        return
    marker = os.environ.get(PAUSE_ENV + "_FILE")
    if marker:
        Path(marker).write_text(f"{os.getpid()} {point}\n")
    print(f"aethel: test pause at {point!r} (pid {os.getpid()})", file=sys.stderr, flush=True)
    while marker is None or os.path.exists(marker):
        time.sleep(0.02)


def _file_digest(path: Path, *, lines: bool) -> dict:
    """``{"sha256", "bytes"}`` (and ``"lines"``: newline count) of one file."""
    h = hashlib.sha256()
    size = n_lines = 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
            size += len(block)
            if lines:
                n_lines += block.count(b"\n")
    out = {_SHA: h.hexdigest(), "bytes": size}
    if lines:
        out["lines"] = n_lines
    return out


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths with ``renameat2(RENAME_EXCHANGE)``; False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    rc = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(a))


def _remove(path: Path) -> None:
    """Delete a folder tree, or a file or symbolic link, if it exists."""
    if path.is_symlink() or path.is_file():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


def _siblings(out: Path, kind: str) -> list[Path]:
    prefix = f".{out.name}.{kind}-"
    try:
        return sorted(p for p in out.parent.iterdir() if p.name.startswith(prefix))
    except FileNotFoundError:
        return []


# ------------------------------------------------------------------------------------------ lock
class IndexLock:
    """Exclusive writer lock of an index folder: ``.<name>.lock`` beside it, ``flock``-ed, with the pid.

    The kernel releases the lock when its process dies (even by SIGKILL); a lock file left behind
    by a killed writer is reused by the next one and removed when it finishes.

    Raises
    ------
    IndexBusyError
        On entry, when another live process holds the lock (its pid is named).
    """

    def __init__(self, out: Path) -> None:
        self.path = out.parent / f".{out.name}.lock"
        self.out = out
        self._fd: int | None = None

    def __enter__(self) -> "IndexLock":
        import fcntl

        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = os.read(fd, 64).decode("ascii", "replace").strip() or "?"
                os.close(fd)
                raise IndexBusyError(f"{self.out}: another `aethel index` (pid {owner}) is writing this index "
                                     f"(lock file {self.path}); wait for it to finish") from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # the previous owner removed the file between our open and flock: retry
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        self._fd = fd
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._fd is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            os.close(self._fd)
            self._fd = None


# ---------------------------------------------------------------------------------- --out checks
def _is_index_folder(path: Path) -> bool:
    """Whether ``path`` holds an aethel index (of any format) rather than someone's own files."""

    try:
        info = read_json(path / INDEX_FILE)
    except (DataError, OSError):
        return False
    return isinstance(info, dict) and info.get("format") in (1, *READ_FORMATS) and (path / PASSAGES_FILE).is_file()


def check_out(out: Any, *, force: bool = False, add: bool = False, inputs: Sequence[Any] = ()) -> Path:
    """Validate ``--out`` before any work; return it as a :class:`Path`.

    Parameters
    ----------
    out : path-like
        The index folder.
    force : bool
        Accept an existing folder that holds other files (it is replaced, its files deleted).
    add : bool
        ``--add``: the folder must hold an index already.
    inputs : sequence of path-like
        The paths to index; none may lie inside ``out`` unless ``out`` is an index.

    Raises
    ------
    ParameterError
        Empty path; a file (or a path under a file); a folder that is not an index (unless
        ``force``); a place where nothing can be written; ``add`` without an index; an input
        inside the folder to be replaced. The message names the path.
    """
    if out is None or not str(out).strip():
        raise ParameterError("--out: empty path; name the index folder, e.g. --out my-index")
    path = Path(out)
    for anc in reversed((path.absolute(),) + tuple(path.absolute().parents)):
        if anc.exists() and not anc.is_dir():
            what = "is a file" if anc == path.absolute() else f"is under {anc}, which is a file"
            raise ParameterError(f"--out {out}: {what}; the index is a folder, give a new or existing folder")
    exists = path.exists()
    is_index = exists and _is_index_folder(path)
    if add and not is_index:
        raise ParameterError(f"--add: {out} is not an aethel index; build one first with `aethel index FILES --out {out}`")
    if exists and not is_index and any(path.iterdir()) and not force:
        first = sorted(p.name for p in path.iterdir())[0]
        raise ParameterError(f"--out {out}: the folder holds files that are not an aethel index (e.g. {first}); "
                             "choose a new folder, or pass --force to replace it and delete its files")
    if exists and not is_index:
        real = path.resolve()
        for raw in inputs:
            p = Path(raw).resolve()
            if p == real or real in p.parents:
                raise ParameterError(f"--out {out}: the input {raw} lies inside it, and the folder would be replaced")
    anc = path.absolute().parent
    while not anc.exists():
        anc = anc.parent
    if not os.access(anc, os.W_OK | os.X_OK):
        raise ParameterError(f"--out {out}: cannot write in {anc} (permission denied)")
    try:  # a read-only file system or a folder such as /proc passes os.access: try for real
        fd, probe = __import__("tempfile").mkstemp(prefix=".aethel-probe-", dir=anc)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ParameterError(f"--out {out}: cannot write in {anc} ({exc.strerror or exc})") from None
    return path


# -------------------------------------------------------------------------------------- methods
def method_parts(method: str) -> list[str]:
    """The index parts a method reads (see the module docstring), e.g. ``["bm25", "graph-ner3"]``.

    Raises
    ------
    ParameterError
        Unknown method (the valid ones are listed).
    """

    parse_methods([method])
    if method in FUSIONS:
        out: list[str] = []
        for base in FUSIONS[method]:
            out.extend(p for p in method_parts(base) if p not in out)
        return out
    cls, kwargs = METHODS[method]
    if cls == "BM25Retriever":
        return ["bm25"]
    if cls == "GraphRetriever":

        out = ["bm25", f"graph-{kwargs.get('extractor', 'ner3')}"]
        r = make_retriever(method)
        if getattr(r, "is_hybrid", False):
            if r.alias_table is not None:  # pragma: no cover - no such method in METHODS
                raise ParameterError(f"method {method!r}: a graph method with an alias table cannot be stored in an index")
            if r._needs("dense"):
                out.append(f"dense-{r.dense_pooling}")
            if r._needs("heading"):
                out.append("dense-heading")
            if r.document_nodes or r.metadata:
                out.append("docmeta")
        return out
    if cls == "DenseRetriever":
        return [f"dense-{kwargs.get('pooling', 'first')}"]
    raise ParameterError(f"method {method!r}: {cls} cannot be stored in an index")  # pragma: no cover


def _searchable(parts: Iterable[str]) -> list[str]:

    have = set(parts)
    out = []
    for m in known_methods():
        try:
            if set(method_parts(m)) <= have:
                out.append(m)
        except ParameterError:  # a method an index cannot hold
            continue
    return out


def _entity_base(extractor: str) -> str:
    """The extractor whose raw mentions a graph extractor filters (``ner3`` → ``ner``)."""
    return "ner" if extractor in ("ner", "ner3") else extractor


def _model_text(text: str) -> str:
    return text[:MAX_MODEL_CHARS]


# ------------------------------------------------------------------------------------ manifest
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
        raise DataNotFoundError(f"{index_dir}: not an aethel index (no {INDEX_FILE}); build one with "
                                f"`aethel index FILES --out {index_dir}`")
    info = read_json(path)
    if not isinstance(info, dict):
        raise _fail(path, f"not an index manifest (a JSON {type(info).__name__}, expected an object); rebuild the index")
    fmt = info.get("format")
    if fmt == 1:
        raise _fail(path, f"index format 1, written by an older aethel-lite; rebuild it with `aethel index FILES --out {index_dir}`")
    if fmt not in READ_FORMATS or isinstance(fmt, bool):
        raise _fail(path, f"unsupported index format {fmt!r} (this aethel-lite reads formats "
                          f"{', '.join(map(str, READ_FORMATS))}); rebuild the index")
    expect = {"n_passages": int, "n_documents": int, "methods": list, "parts": dict, "files": dict, "sources": list,
              "inputs": list}
    for key, kind in expect.items():
        value = info.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise _fail(path, f"field {key!r} is missing or not a {kind.__name__}; rebuild the index")
    if info["n_passages"] < 1:
        raise _fail(path, "field 'n_passages' must be >= 1")
    if not isinstance(info.get("chunk_words"), (int, type(None))) or isinstance(info.get("chunk_words"), bool):
        raise _fail(path, "field 'chunk_words' must be an integer or null")
    for name, entry in info["files"].items():
        ok = (isinstance(name, str) and name and not name.startswith(("/", ".")) and ".." not in Path(name).parts
              and isinstance(entry, dict) and isinstance(entry.get(_SHA), str) and len(entry[_SHA]) == 64
              and isinstance(entry.get("bytes"), int) and not isinstance(entry.get("bytes"), bool))
        if not ok:
            raise _fail(path, f"field 'files' has a malformed entry {name!r}; rebuild the index")
    for name, part in info["parts"].items():
        if not isinstance(part, dict) or not isinstance(part.get("files"), list) \
                or not all(isinstance(f, str) and f in info["files"] for f in part["files"]):
            raise _fail(path, f"part {name!r} is malformed or names files missing from 'files'; rebuild the index")
    if IDS_FILE not in info["files"]:
        raise _fail(path, f"'files' must record {IDS_FILE}; rebuild the index")
    if PASSAGES_FILE not in info["files"] or info["files"][PASSAGES_FILE].get("lines") != info["n_passages"]:
        raise _fail(path, f"'files' must record {PASSAGES_FILE} with n_passages = {info['n_passages']} lines; rebuild the index")
    for i, src in enumerate(info["sources"]):
        if not isinstance(src, dict) or not all(isinstance(src.get(k), str) for k in ("id", "path", "kind", _SHA)) \
                or not isinstance(src.get("n_passages"), int) or isinstance(src.get("n_passages"), bool) or src["n_passages"] < 0:
            raise _fail(path, f"sources[{i}] is malformed; rebuild the index")
    if sum(src["n_passages"] for src in info["sources"]) != info["n_passages"]:
        raise _fail(path, "the sources' passage counts do not add up to n_passages; rebuild the index")
    return info


def _rebuild_hint(index_dir: Path, info: dict) -> str:
    inputs = " ".join(str(p) for p in info.get("inputs", [])) or "FILES"
    methods = ",".join(info.get("methods", [])) or "bm25,aethel-bct"
    return f"rebuild it with `aethel index {inputs} --out {index_dir} --methods {methods}`"


def _compare(path: Path, index_dir: Path, info: dict, want: dict, got: dict) -> None:
    """DataError naming ``path`` when its digest ``got`` differs from the manifest's ``want``."""
    if "lines" in want and got.get("lines") != want["lines"]:
        raise DataError(f"{path}: {got.get('lines')} lines, but {INDEX_FILE} records {want['lines']}; the file was "
                        f"changed or truncated after indexing; {_rebuild_hint(index_dir, info)}")
    if got["bytes"] != want["bytes"] or got[_SHA] != want[_SHA]:
        raise DataError(f"{path}: content differs from the SHA-256 recorded in {INDEX_FILE} ({got['bytes']} bytes, "
                        f"expected {want['bytes']}); the file was changed after indexing; {_rebuild_hint(index_dir, info)}")


def _read_verified(index_dir: Path, info: dict, name: str) -> bytes:
    """The bytes of one index file, checked against the manifest (read once)."""
    path = index_dir / name
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: missing from the index; {_rebuild_hint(index_dir, info)}") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror or exc}); {_rebuild_hint(index_dir, info)}") from None
    want = info["files"][name]
    got = {_SHA: hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    if "lines" in want:
        got["lines"] = data.count(b"\n")
    _compare(path, index_dir, info, want, got)
    return data


def _verify(index_dir: Path, info: dict, names: Iterable[str]) -> None:
    """Check size, line count and SHA-256 of ``names`` against the manifest (DataError naming the file)."""
    for name in names:
        want = info["files"][name]
        path = index_dir / name
        if not path.is_file():
            raise DataError(f"{path}: missing from the index; {_rebuild_hint(index_dir, info)}")
        _compare(path, index_dir, info, want, _file_digest(path, lines="lines" in want))


# ------------------------------------------------------------------------------------- building
@dataclass
class _Source:
    """One indexed input file: its id, where it was read, its digest and its passages."""

    id: str
    path: str
    kind: str
    sha256: str
    bytes: int
    passages: list = field(default_factory=list)

    def entry(self) -> dict:
        return {"id": self.id, "path": self.path, "kind": self.kind, _SHA: self.sha256, "bytes": self.bytes,
                "n_passages": len(self.passages)}


def _read_sources(paths: Sequence[Any], chunk_words: int | None, follow_symlinks: bool, progress: bool,
                  known: dict[str, str] | None = None) -> list[_Source]:
    """The input files and their passages; a file whose id and SHA-256 are in ``known`` (already
    indexed, unchanged) is not read again (its passages are left empty for :func:`_merge` to fill)."""
    from tqdm.auto import tqdm


    known = known or {}
    out = []
    for src in tqdm(collect_sources(paths, follow_symlinks=follow_symlinks), desc="read", unit=" files", disable=not progress):
        digest = _file_digest(src.path, lines=False)
        passages = [] if known.get(src.doc_id) == digest[_SHA] else read_source(src, chunk_words)[0]
        out.append(_Source(src.doc_id, str(src.path), src.kind, digest[_SHA], digest["bytes"], passages))
    return out


def _old_passages(index_dir: Path, info: dict) -> list:

    return [Passage.from_dict(row) for row in read_jsonl(index_dir / PASSAGES_FILE)]


def _merge(old_info: dict | None, old_passages: list, new: list[_Source]) -> tuple[list[_Source], dict]:
    """Sources of the new index: the old ones in order (a re-added file replaces its entry in place,
    unchanged files keep their passages), then the new ones. Returns them and a change summary."""
    by_id = {s.id: s for s in new}
    sources: list[_Source] = []
    summary = {"added": [], "replaced": [], "unchanged": []}
    if old_info is not None:
        it = iter(old_passages)
        for entry in old_info["sources"]:
            passages = [next(it) for _ in range(entry["n_passages"])]
            src = by_id.pop(entry["id"], None)
            if src is None:
                sources.append(_Source(entry["id"], entry["path"], entry["kind"], entry[_SHA], int(entry.get("bytes", 0)), passages))
                continue
            if Path(src.path).resolve() != Path(entry["path"]).resolve():
                raise DataError(f"document id {src.id!r} ({src.path}) is already in the index, from {entry['path']}; "
                                "ids are paths relative to the folder given: index their common folder to keep both")
            if src.sha256 == entry[_SHA]:
                summary["unchanged"].append(src.id)
                src.passages = passages
            else:
                summary["replaced"].append(src.id)
            sources.append(src)
    for src in new:
        if src.id in by_id:
            summary["added"].append(src.id)
            sources.append(src)
    return sources, summary


def _same_model(r, stored: Any) -> bool:
    """Whether a dense part's stored embedding configuration is the installed model's, checked
    without loading the model: the digest of its files (which fix the width and the sequence
    length), ``normalize``, ``precision`` and the versions of the libraries the configuration lists."""

    if not isinstance(stored, dict) or not isinstance(stored.get("versions"), dict):
        return False
    try:
        digest = model_files_digest(str(Path(r._model_path()).resolve()))
    except (AethelError, OSError, ImportError, AttributeError):
        return False

    return (stored.get("model_files") == digest and stored.get("normalize") == bool(r.normalize)
            and stored.get("precision", "float32") == resolve_precision(r.precision)
            and stored["versions"] == package_versions(stored["versions"]))


class _Builder:
    """Writes one index into a temporary folder (see :func:`build_index`)."""

    def __init__(self, tmp: Path, passages: list, methods: list[str], *, old_dir: Path | None, old_info: dict | None,
                 n_process: int, progress: bool, log: Callable[[str], None], old_passages: list | None = None):
        self.tmp = tmp
        self.old_passages = old_passages or []
        self.passages = passages
        self.methods = methods
        self.old_dir = old_dir
        self.old_info = old_info
        self.n_process = n_process
        self.progress = progress
        self.log = log
        self.parts: dict[str, dict] = {}
        self.pids = [p.pid for p in passages]

    def _old_part(self, name: str) -> dict | None:
        if self.old_info is None or name not in self.old_info["parts"]:
            return None
        return self.old_info["parts"][name]

    # -- passages
    def write_passages(self) -> None:
        path = self.tmp / PASSAGES_FILE
        half = len(self.passages) // 2
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            for i, p in enumerate(self.passages):
                if i == half:
                    fh.flush()
                    _checkpoint("passages")
                fh.write(json.dumps(p.to_dict(), sort_keys=True, ensure_ascii=False) + "\n")
        with open(self.tmp / IDS_FILE, "w", encoding="utf-8", newline="\n") as fh:
            json.dump({"pids": self.pids, "doc_ids": [p.doc_id for p in self.passages]}, fh, ensure_ascii=False)
            fh.write("\n")
        self.parts["passages"] = {"files": [PASSAGES_FILE, IDS_FILE]}

    # -- entities and graphs
    def mentions(self, base: str) -> list[list]:
        """Raw mentions of every passage for extractor ``base`` (stored, reused, or extracted)."""
        from tqdm.auto import tqdm


        texts = [_model_text(passage_text(p)) for p in self.passages]
        keys = [text_key(t) for t in texts]
        known: dict[str, list] = {}
        name = f"entities-{base}.jsonl"
        if self._old_part(f"entities-{base}") is not None:
            for row in read_jsonl(self.old_dir / name):
                known[row[_SHA]] = [Mention(*m) for m in row["mentions"]]
        out: list = [known.get(k) for k in keys]
        todo = [i for i, m in enumerate(out) if m is None]
        reached = False
        bar = tqdm(total=len(todo), desc=f"entities ({base})", unit=" passages", disable=not self.progress or not todo)
        for start in range(0, max(len(todo), 1), _NER_BATCH):
            batch = todo[start:start + _NER_BATCH]
            if batch:
                found = extract_entities([texts[i] for i in batch], base, cache=True, n_process=self.n_process, progress=False)
                for i, ms in zip(batch, found):
                    out[i] = ms
                bar.update(len(batch))
            if not reached:
                reached = True
                _checkpoint("ner")
        bar.close()
        with open(self.tmp / name, "w", encoding="utf-8", newline="\n") as fh:
            for pid, key, ms in zip(self.pids, keys, out):
                rows = [[m.text, m.key, m.label, m.start, m.end] for m in ms]
                fh.write(json.dumps({"pid": pid, _SHA: key, "mentions": rows}, ensure_ascii=False, separators=(",", ":")) + "\n")
        self.parts[f"entities-{base}"] = {"files": [name], "extractor": base, "n_from_index": len(keys) - len(todo)}
        return out

    def graph(self, extractor: str, raw: list[list]) -> None:

        ext = get_extractor(extractor)
        mentions = ext.filter(raw) if hasattr(ext, "filter") else raw
        stop, links = graph_filters(mentions, ext)
        graph = build_graph(self.pids, mentions, stop=stop, alias_pairs=links)
        folder = f"graph-{extractor}"
        graph.save(self.tmp / folder)
        self.parts[folder] = {"files": [f"{folder}/graph.json", f"{folder}/graph.npz"], "extractor": extractor,
                              "extractor_config": ext.config(), "n_entities": graph.n_entities}

    # -- bm25
    def bm25(self) -> None:

        r = BM25Retriever().fit(self.passages)
        r.save(self.tmp / "bm25")
        files = sorted(p.relative_to(self.tmp).as_posix() for p in (self.tmp / "bm25").rglob("*") if p.is_file())
        self.parts["bm25"] = {"files": files, "config": r.config()}

    # -- dense
    def dense(self, method: str) -> None:
        import numpy as np


        r = make_retriever(method)
        r.progress = self.progress
        name = f"dense-{r.pooling}"
        chunks = [[_model_text(c) for c in r.passage_chunks(p)] for p in self.passages]
        flat = [c for cs in chunks for c in cs]
        rows: dict[str, Any] = {}
        old = self._old_part(name)
        store_config = old.get("store_config") if old is not None and _same_model(r, old.get("store_config")) else None
        if store_config is not None:
            emb = np.load(self.old_dir / f"{name}.npy", allow_pickle=False)
            old_chunks = [_model_text(c) for p in self.old_passages for c in r.passage_chunks(p)]
            if emb.shape[0] == len(old_chunks):
                rows = {text_key(c): emb[i] for i, c in enumerate(old_chunks)}
        keys = [text_key(c) for c in flat]
        todo = list(dict.fromkeys(k for k in keys if k not in rows))
        if todo or store_config is None:  # new texts: the model is loaded (and its store searched)
            by_key = dict(zip(keys, flat))
            for k, v in zip(todo, r.embed([by_key[k] for k in todo])):
                rows[k] = v
            store_config = r.embedding_store_config()
        emb = np.ascontiguousarray(np.stack([rows[k] for k in keys]).astype("<f4", copy=False))
        counts = np.fromiter(map(len, chunks), dtype=np.int64, count=len(chunks))
        offsets = np.concatenate(([0], np.cumsum(counts)[:-1])).astype("<i8")
        with open(self.tmp / f"{name}.npy", "wb") as fh:
            np.save(fh, emb, allow_pickle=False)
        files = [f"{name}.npy"]
        if r.pooling == "max":
            with open(self.tmp / f"{name}-offsets.npy", "wb") as fh:
                np.save(fh, offsets, allow_pickle=False)
            files.append(f"{name}-offsets.npy")
        self.parts[name] = {"files": files, "config": r.config(), "store_config": store_config, "shape": list(emb.shape)}

    # -- documents' metadata
    def docmeta(self) -> None:
        """``docmeta.json``: :func:`~aethel_lite.core.docmeta.document_metadata` of the passages, one
        entry per document in corpus order (search builds the document and metadata nodes from it)."""
        from dataclasses import asdict


        metas = document_metadata(self.passages)
        with open(self.tmp / DOCMETA_FILE, "w", encoding="utf-8", newline="\n") as fh:
            json.dump({"documents": [asdict(d) for d in metas.values()]}, fh, ensure_ascii=False, sort_keys=True)
            fh.write("\n")
        self.parts["docmeta"] = {"files": [DOCMETA_FILE], "n_documents": len(metas)}

    # -- everything
    def run(self) -> None:

        long = [p.pid for p in self.passages if len(passage_text(p)) > MAX_MODEL_CHARS]
        if long:
            warnings.warn(f"{len(long)} passages are longer than {MAX_MODEL_CHARS:,} characters (first: {long[0]!r}); "
                          f"entity extraction and dense encoding read their first {MAX_MODEL_CHARS:,} characters only "
                          "(BM25 and the stored text keep all of it)", RuntimeWarning, stacklevel=3)
        self.write_passages()
        base_methods: list[str] = []
        for m in self.methods:
            for b in FUSIONS.get(m, (m,)):
                if b not in base_methods:
                    base_methods.append(b)
        extractors = list(dict.fromkeys(METHODS[m][1].get("extractor", "ner3") for m in base_methods
                                        if METHODS[m][0] == "GraphRetriever"))
        raw: dict[str, list] = {}
        for ext in extractors:
            base = _entity_base(ext)
            if base not in raw:
                raw[base] = self.mentions(base)
            self.graph(ext, raw[base])
        if not extractors:
            _checkpoint("ner")
        if any(METHODS[m][0] in ("BM25Retriever", "GraphRetriever") for m in base_methods):
            self.bm25()
        poolings: dict[str, str] = {}
        needed = {p for m in base_methods for p in method_parts(m)}
        for m in base_methods:
            if METHODS[m][0] == "DenseRetriever":
                poolings.setdefault(METHODS[m][1].get("pooling", "first"), m)
        for pooling, m in (("first", "dense"), ("max", "dense-max"), ("heading", "dense-heading")):  # a hybrid's dense scores
            if f"dense-{pooling}" in needed:
                poolings.setdefault(pooling, m)
        for m in poolings.values():
            self.dense(m)
        if "docmeta" in needed:
            self.docmeta()

    def write_manifest(self, info: dict) -> None:
        files = {}
        for part in self.parts.values():
            for name in part["files"]:
                files[name] = _file_digest(self.tmp / name, lines=name.endswith(".jsonl"))
        info["files"] = dict(sorted(files.items()))
        info["parts"] = {k: v for k, v in sorted(self.parts.items()) if k != "passages"}
        info["searchable"] = _searchable(info["parts"])
        text = json.dumps(info, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        half = len(text) // 2
        with open(self.tmp / INDEX_FILE, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text[:half])
            fh.flush()
            _checkpoint("manifest")
            fh.write(text[half:])


@contextlib.contextmanager
def _signals_held():
    """Hold SIGINT and SIGTERM (main thread, POSIX) so the switch of folders is never cut in half."""
    import signal
    import threading

    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _commit(tmp: Path, out: Path) -> None:
    """Make ``tmp`` the index at ``out`` in one atomic step (durable: files and folders fsync-ed)."""
    for path in sorted(tmp.rglob("*")):
        if path.is_file():
            _fsync(path)
    for path in sorted({p.parent for p in tmp.rglob("*")} | {tmp}):
        _fsync(path)
    if out.exists():
        if not _exchange(tmp, out):  # fallback: two renames; a crash between them is repaired by _clean
            old = out.parent / f".{out.name}.old-{os.getpid()}-{secrets.token_hex(4)}"
            os.replace(out, old)
            os.replace(tmp, out)
            os.replace(old, tmp)
        _fsync(out.parent)
        _remove(tmp)  # now the previous index
    else:
        os.replace(tmp, out)
        _fsync(out.parent)


def _clean(out: Path, log: Callable[[str], None]) -> None:
    """Remove what interrupted writers left beside ``out`` (we hold the lock, so they are dead).

    If ``out`` is missing but a previous index was moved aside (a crash between the two renames
    of the fallback commit), it is moved back first.
    """
    olds = _siblings(out, "old")
    if not out.exists() and olds:
        os.replace(olds[-1], out)
        log(f"restored {out} from {olds[-1].name} (a previous run was interrupted while switching indexes)")
        olds = olds[:-1]
    for path in _siblings(out, "tmp") + olds:
        _remove(path)
        log(f"removed {path.name}, left by an interrupted run")


def build_index(paths: Sequence[str | os.PathLike], out: str | os.PathLike, *,
                methods: Sequence[str] | None = ("bm25", "aethel-bct"), chunk_words: int | None = None,
                progress: bool = True, add: bool = False, force: bool = False, follow_symlinks: bool = False,
                n_process: int = 1, log: Callable[[str], None] | None = None) -> dict:
    """Index files into the folder ``out`` (a new index, a rebuilt one, or ``add`` to an existing one).

    Parameters
    ----------
    paths : sequence of path-like
        Files (.txt, .md, .markdown, .pdf, .jsonl passage files) and folders
        (:func:`aethel_lite.data.ingest.collect_sources`).
    out : path-like
        The index folder; validated by :func:`check_out` before any work.
    methods : sequence of str, optional
        Methods to make searchable (see :func:`method_parts`). With ``add``: ``None`` or the
        index's own methods.
    chunk_words : int, optional
        Cut pages/files into windows of this many words. With ``add``: ``None`` or the index's value.
    progress : bool
        Progress bars on stderr.
    add : bool
        Add the files to the index at ``out``: new documents are appended, a document whose file
        changed is replaced in place, unchanged ones are kept; stored entities and embeddings are
        reused, so only new passages reach NER and the encoder.
    force : bool
        Replace a folder that holds files other than an index.
    follow_symlinks : bool
        Follow links that leave the folders given (default: skipped with a warning).
    n_process : int
        spaCy worker processes for entity extraction.
    log : callable, optional
        Receives one-line notes (removed debris, replaced documents).

    Returns
    -------
    dict
        ``format``, ``n_passages``, ``n_documents``, ``methods``, ``chunk_words``, ``versions``,
        ``index`` (the folder), ``searchable``, ``added``/``replaced``/``unchanged`` (source ids) and
        ``seconds``.

    Raises
    ------
    ParameterError
        Bad ``--out``, methods, chunking or ``n_process`` (before any work).
    IndexBusyError
        Another process is writing ``out``.
    DataError, DataNotFoundError
        Unreadable inputs; a damaged index to add to.
    KeyboardInterrupt, Terminated
        Interrupted: ``out`` is as it was before the call and nothing is left behind. The
        exception's ``index_state`` attribute says ``"kept"`` (a previous index is in place),
        ``"none"`` (there was none), or ``"complete"`` (the interruption came after the new index
        was switched into place).
    """

    t0 = time.perf_counter()
    log = log or (lambda msg: None)
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = list(paths)
    if not paths:
        raise ParameterError("no files or folders to index")
    if isinstance(n_process, bool) or not isinstance(n_process, int) or n_process < 1:
        raise ParameterError(f"--n-process must be a positive integer, got {n_process!r}")
    if methods is not None:
        methods = parse_methods(list(methods))
        for m in methods:
            method_parts(m)  # a method an index cannot hold: a clear error before any work
    check_chunking(chunk_words)
    out = check_out(out, force=force, add=add, inputs=paths)
    state = {"committed": False, "previous": out.exists()}
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with IndexLock(out):
            _clean(out, log)
            old_info = old_passages = None
            if add:
                old_info = read_manifest(out)
                if methods is not None and list(methods) != list(old_info["methods"]):
                    raise ParameterError(f"--methods {','.join(methods)} differs from the index's "
                                         f"({','.join(old_info['methods'])}); --add keeps them: rebuild to change them")
                if chunk_words is not None and chunk_words != old_info.get("chunk_words"):
                    raise ParameterError(f"--chunk-words {chunk_words} differs from the index's ({old_info.get('chunk_words')}); "
                                         "--add keeps it: rebuild to change it")
                _verify(out, old_info, old_info["files"])
                methods, chunk_words = list(old_info["methods"]), old_info.get("chunk_words")
                old_passages = _old_passages(out, old_info)
            methods = list(methods or parse_methods(["bm25", "aethel-bct"]))
            known = {e["id"]: e[_SHA] for e in old_info["sources"]} if old_info else None
            sources, summary = _merge(old_info, old_passages or [],
                                      _read_sources(paths, chunk_words, follow_symlinks, progress, known))
            passages = [p for s in sources for p in s.passages]
            if not passages:
                raise DataError(f"no text found in {', '.join(map(str, paths))} (empty files or image-only PDFs)")
            seen: dict[str, str] = {}
            for s in sources:
                for p in s.passages:
                    if p.pid in seen:
                        raise DataError(f"passage id {p.pid!r} occurs twice ({seen[p.pid]} and {s.path})")
                    seen[p.pid] = s.path
            for name in summary["replaced"]:
                log(f"replaced {name} (its file changed)")
            tmp = out.parent / f".{out.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
            tmp.mkdir()
            try:
                builder = _Builder(tmp, passages, methods, old_dir=out if add else None, old_info=old_info,
                                   n_process=n_process, progress=progress, log=log, old_passages=old_passages)
                builder.run()
                inputs = list(old_info["inputs"]) if old_info else []
                inputs += [str(p) for p in paths if str(p) not in inputs]

                info = {
                    "format": INDEX_FORMAT,
                    "aethel_lite": __version__,
                    "n_passages": len(passages),
                    "n_documents": len({p.doc_id for p in passages}),
                    "methods": methods,
                    "chunk_words": chunk_words,
                    "max_model_chars": MAX_MODEL_CHARS,
                    "inputs": inputs,
                    "sources": [s.entry() for s in sources],
                    "versions": versions(),
                }
                builder.write_manifest(info)
                with _signals_held():  # a Ctrl-C now is delivered after the switch, and reported as such
                    _commit(tmp, out)
                    state["committed"] = True
            finally:
                _remove(tmp)
    except (KeyboardInterrupt, Terminated) as exc:
        exc.index_state = "complete" if state["committed"] else ("kept" if state["previous"] else "none")
        raise
    keys = ("format", "n_passages", "n_documents", "methods", "chunk_words", "versions", "searchable")
    return {**{k: info[k] for k in keys}, "index": str(out), **summary, "seconds": round(time.perf_counter() - t0, 3)}


# -------------------------------------------------------------------------------------- searching
@dataclass(frozen=True)
class _Ids:
    """A passage's ids, all a restored graph retriever needs of it (``add_document_nodes``)."""

    pid: str
    doc_id: str


def _hit(rank: int, p, score: float, provenance: list) -> dict:
    meta = p.meta or {}
    return {
        "rank": rank,
        "pid": p.pid,
        "doc_id": p.doc_id,
        "page": meta.get("page"),
        "source": meta.get("source", meta.get("path")),
        "score": float(score),
        "text": p.text,
        "provenance": [{"seed": e.seed, "entity": e.entity, "via": e.via, "weight": float(e.weight)} for e in provenance],
    }


def _import_spacy_without_torch() -> None:
    """Import spaCy without letting thinc import PyTorch (about 1 s of a search's start-up).

    thinc imports torch only to detect GPU and PyTorch-layer support; the spaCy NER model runs on
    thinc's numpy ops either way, so its entities are identical (tests/test_index.py compares
    them). Nothing happens when spaCy or torch is already imported; torch stays importable later.
    """
    if "spacy" in sys.modules or "torch" in sys.modules:
        return
    sys.modules["torch"] = None  # type: ignore[assignment]  # `import torch` raises ImportError for now
    try:
        import spacy  # noqa: F401
    except ImportError:  # pragma: no cover - spaCy not installed: the extractor says so later
        pass
    finally:
        if sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]


class _LazyPassages(Sequence):
    """The passages of a verified ``passages.jsonl``, each parsed from its line on first access."""

    def __init__(self, lines: list[bytes], path: Path) -> None:
        self._lines = lines
        self._path = path
        self._cache: dict[int, Any] = {}

    def __len__(self) -> int:
        return len(self._lines)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = range(len(self))[i]
        p = self._cache.get(i)
        if p is None:

            try:
                p = self._cache[i] = Passage.from_dict(json.loads(self._lines[i]))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:  # only a file that passed its SHA-256 is here
                raise DataError(f"{self._path}:{i + 1}: malformed passage ({exc})") from exc
        return p


class SearchIndex:
    """An index folder opened for searching: files verified, retrievers restored without refitting.

    Parameters
    ----------
    index_dir : path-like
        A folder written by :func:`build_index`.
    methods : sequence of str, optional
        Methods to prepare now (their files are verified here); others are loaded on first use.

    Raises
    ------
    DataNotFoundError
        No index at ``index_dir``.
    DataError
        Bad ``index.json``, or a file whose size, line count or SHA-256 differs from it.
    ParameterError
        A method the index was not built for (the rebuild command is named).
    """

    def __init__(self, index_dir: str | os.PathLike, methods: Sequence[str] = ()) -> None:
        self.dir = Path(index_dir)
        self.info = read_manifest(self.dir)
        self._passages: list | None = None
        self._parts: dict[str, Any] = {}
        self._verified: set[str] = set()
        for m in methods:
            self._check_method(m)
        for m in methods:
            self._retrievers(m)

    # -- loading
    def _check_method(self, method: str) -> list[str]:
        parts = method_parts(method)
        missing = [p for p in parts if p not in self.info["parts"]]
        if missing:
            searchable = ", ".join(_searchable(self.info["parts"])) or "none"
            methods = list(dict.fromkeys([*self.info["methods"], method]))
            why = (f"was built for it by an older aethel-lite and lacks {', '.join(missing)}"
                   if method in self.info["methods"] else "was built without it")
            raise ParameterError(f"--method {method}: the index {self.dir} {why} (--methods "
                                 f"{','.join(self.info['methods'])}; searchable: {searchable}); rebuild it with "
                                 f"`aethel index {' '.join(self.info['inputs'])} --out {self.dir} --methods "
                                 f"{','.join(methods)}`")
        return parts

    def _verify(self, names: Iterable[str]) -> None:
        todo = [n for n in names if n not in self._verified]
        _verify(self.dir, self.info, todo)
        self._verified.update(todo)

    @property
    def passages(self) -> Sequence:
        """The indexed passages, in corpus order (``passages.jsonl`` verified first; a passage is
        parsed from its line when first used, so a search parses only its hits)."""
        if self._passages is None:
            data = _read_verified(self.dir, self.info, PASSAGES_FILE)
            self._verified.add(PASSAGES_FILE)
            self._passages = _LazyPassages(data.splitlines(), self.dir / PASSAGES_FILE)
        return self._passages

    @property
    def ids(self) -> tuple[list[str], list[str]]:
        """``(pids, doc_ids)`` of the passages in corpus order, from ``ids.json`` (verified)."""
        if "ids" not in self._parts:
            try:
                ids = json.loads(_read_verified(self.dir, self.info, IDS_FILE))
            except (ValueError, RecursionError) as exc:
                raise DataError(f"{self.dir / IDS_FILE}: malformed JSON ({exc})") from exc
            n = self.info["n_passages"]
            if not (isinstance(ids, dict) and isinstance(ids.get("pids"), list) and isinstance(ids.get("doc_ids"), list)
                    and len(ids["pids"]) == n == len(ids["doc_ids"])):
                raise DataError(f"{self.dir / IDS_FILE}: expected {n} pids and doc_ids; {_rebuild_hint(self.dir, self.info)}")
            self._parts["ids"] = (ids["pids"], ids["doc_ids"])
        return self._parts["ids"]

    def _part(self, name: str):
        if name in self._parts:
            return self._parts[name]
        part = self.info["parts"][name]
        self._verify(part["files"])
        pids = self.ids[0]
        if name == "bm25":

            obj = BM25Retriever.load(self.dir / "bm25")
            if obj.pids_ != pids:
                raise DataError(f"{self.dir / 'bm25'}: its passage ids differ from {IDS_FILE}; {_rebuild_hint(self.dir, self.info)}")
        elif name.startswith("graph-"):

            obj = EntityGraph.load(self.dir / name)
            if obj.pids != pids:
                raise DataError(f"{self.dir / name}: its passage ids differ from {IDS_FILE}; {_rebuild_hint(self.dir, self.info)}")
        elif name.startswith("dense-"):
            obj = self._dense_arrays(name, part)
        elif name == "docmeta":
            obj = self._docmeta()
        else:  # pragma: no cover - entities parts are read by --add only
            raise ParameterError(f"part {name!r} is not searchable")
        self._parts[name] = obj
        return obj

    def _docmeta(self) -> dict:
        """``docmeta.json`` as ``doc_id`` → :class:`~aethel_lite.core.docmeta.DocMeta` (checked against ids.json)."""

        path = self.dir / DOCMETA_FILE
        try:
            rows = json.loads((path).read_bytes())["documents"]
            metas = {}
            for row in rows:
                d = DocMeta(row["doc_id"], list(row["companies"]), list(row["periods"]), list(row["types"]),
                            dict(row["source"]))
                if not all(isinstance(x, str) for x in [d.doc_id, *d.companies, *d.periods, *d.types]):
                    raise TypeError("a field is not text")
                metas[d.doc_id] = d
        except (ValueError, RecursionError, KeyError, TypeError) as exc:
            raise DataError(f"{path}: malformed document metadata ({exc!r}); {_rebuild_hint(self.dir, self.info)}") from None
        if set(metas) != set(self.ids[1]):
            raise DataError(f"{path}: its documents differ from {IDS_FILE}; {_rebuild_hint(self.dir, self.info)}")
        return metas

    def _dense_arrays(self, name: str, part: dict):
        import numpy as np

        path = self.dir / f"{name}.npy"
        try:
            emb = np.load(path, allow_pickle=False)
            offsets = (np.load(self.dir / f"{name}-offsets.npy", allow_pickle=False) if f"{name}-offsets.npy" in part["files"]
                       else np.arange(self.info["n_passages"], dtype=np.int64))
        except (OSError, ValueError, EOFError) as exc:
            raise DataError(f"{path}: unreadable embeddings ({exc}); {_rebuild_hint(self.dir, self.info)}") from exc
        dim = part.get("store_config", {}).get("dim")
        if emb.ndim != 2 or emb.dtype != np.float32 or (dim is not None and emb.shape[1] != dim):
            raise DataError(f"{path}: embeddings of shape {emb.shape} and type {emb.dtype}, expected (n, {dim}) float32; "
                            f"{_rebuild_hint(self.dir, self.info)}")
        n = self.info["n_passages"]
        if offsets.shape != (n,) or (offsets.size and (offsets[0] != 0 or (np.diff(offsets) <= 0).any()
                                                                          or offsets[-1] >= emb.shape[0])):
            raise DataError(f"{path}: window offsets do not fit the {n} passages; {_rebuild_hint(self.dir, self.info)}")
        norms = np.linalg.norm(emb, axis=1)
        if not np.isfinite(emb).all() or (part.get("config", {}).get("normalize", True) and (np.abs(norms - 1) > 1e-3).any()):
            raise DataError(f"{path}: embeddings that are not finite unit vectors; {_rebuild_hint(self.dir, self.info)}")
        return emb, offsets.astype(np.int64)

    def _base(self, method: str):
        """A retriever of a base method with its fitted state restored from the index parts."""

        key = ("retriever", method)
        if key in self._parts:
            return self._parts[key]
        parts = self._check_method(method)
        r = make_retriever(method)
        pids, doc_ids = self.ids
        bm25 = self._part("bm25") if "bm25" in parts else None
        if r.name == "bm25":
            r = bm25
        elif r.name == "graph":
            graph = self._part(parts[1])
            # what GraphRetriever._fit leaves behind, with its two slow steps (entity extraction,
            # BM25 fit) replaced by the stored graph and BM25 index; tests/test_index.py checks
            # that the restored retriever answers exactly as a refit one
            r.pids_ = list(graph.pids)
            r.pid_index_ = dict(graph.pid_index)
            r.doc_ids_ = list(doc_ids)
            if r.extractor in ("ner", "ner3"):
                _import_spacy_without_torch()
            r.extractor_ = get_extractor(r.extractor)
            r._base_graph, r.bm25_, r.dense_, r.heading_ = graph, bm25, None, None
            # document nodes need each passage's pid and doc_id only: ids.json, not passages.jsonl
            r._passages = [_Ids(pid, doc) for pid, doc in zip(pids, doc_ids)]
            # graph_ (+ document/metadata nodes from docmeta.json when asked for) and the PPR operator
            r._structure(self._part("docmeta") if "docmeta" in parts else None)
            dense = next((p for p in parts if p in ("dense-first", "dense-max")), None)
            if dense is not None:  # the hybrid's dense scores: the stored embeddings, as `dense` reads them
                r.dense_ = self._base({"dense-first": "dense", "dense-max": "dense-max"}[dense])
            if "dense-heading" in parts:  # and its heading scores
                r.heading_ = self._base("dense-heading")
            stored = self.info["parts"][parts[1]].get("extractor_config")
            if stored is not None and stored != r.extractor_.config():
                warnings.warn(f"{self.dir}: the entity extractor differs from the one that built the index "
                              f"(installed: {r.extractor_.config()}); question entities may not match; "
                              f"{_rebuild_hint(self.dir, self.info)}", RuntimeWarning, stacklevel=3)
        else:  # dense
            part = self.info["parts"][parts[0]]
            if part.get("store_config") != r.embedding_store_config():
                raise DataError(f"{self.dir}: the index was embedded with another model configuration than the installed "
                                f"one; {_rebuild_hint(self.dir, self.info)}")
            emb, offsets = self._part(parts[0])
            r.pids_ = list(pids)
            r.pid_index_ = {pid: i for i, pid in enumerate(r.pids_)}
            r.embeddings_, r.chunk_offsets_ = emb, offsets
        self._parts[key] = r
        return r

    def _retrievers(self, method: str) -> list:

        return [self._base(m) for m in FUSIONS.get(method, (method,))]

    # -- searching
    def iter_search(self, questions: Sequence[str], *, k: int = 5, method: str = "aethel-bct", explain: bool = False):
        """Answer the questions one at a time, yielding each one's hits as soon as it is answered.

        Every question is checked first (an empty one is an error before any answer). One at a
        time, each graph question takes the single-query PageRank path (compiled conjugate
        gradients) rather than the batched one; on a machine whose cores are busy with other work
        that is several times faster than a batch with two solver threads, and the answers are the
        same (``tests/test_index.py``). Memory stays flat however long the list is.
        """
        questions = list(questions)
        self._check_questions(questions, k, method)
        for q in questions:
            yield self.search([q], k=k, method=method, explain=explain)[0]

    def _check_questions(self, questions: list, k: int, method: str) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ParameterError(f"-k must be ≥ 1, got {k}")
        for i, q in enumerate(questions, start=1):
            if not isinstance(q, str) or not q.strip():
                raise ParameterError(f"question {i}: empty question")
        self._check_method(method)

    def search(self, questions: Sequence[str], *, k: int = 5, method: str = "aethel-bct",
               explain: bool = False) -> list[list[dict]]:
        """Ranked hits for each question (one list per question, ``k`` hits at most).

        Each hit: ``rank``, ``pid``, ``doc_id``, ``page`` (0-based, PDFs), ``source`` (the file it came
        from), ``score``, ``text`` and ``provenance`` (graph methods: the question entity, the graph
        entity it reached and how, and the weight). With ``explain=True`` each hit also carries
        ``explain_node`` (``"passage"``, or ``"document"`` for ``aethel-hybrid``, whose graph term
        is its document node's PageRank) and
        ``explain``: ``[{"seed", "entity", "via", "share"}, ...]``, the exact part of the hit's
        PageRank that each seed contributes (:meth:`GraphRetriever.explain`; the shares sum to its
        PageRank, which is the score of a reached hit of a graph method; fusions explain the graph
        part; empty for BM25 and dense hits and for passages PPR does not reach).

        Raises
        ------
        ParameterError
            An empty question (its position is named), ``k < 1``, an unknown method or one the
            index was not built for.
        """

        questions = list(questions)
        self._check_questions(questions, k, method)
        if not questions:
            return []
        retrievers = self._retrievers(method)
        queries = [Query(qid=f"q{i}", text=q, gold=frozenset()) for i, q in enumerate(questions)]
        runs = [r.search(queries, k=max(k, 10)) for r in retrievers]
        run = rrf(runs, k=60, name=method) if method in FUSIONS else runs[0]
        where = {pid: i for i, pid in enumerate(self.ids[0])}
        passages = self.passages
        out = []
        for q in queries:
            provenance: dict = {}
            for r in retrievers:
                provenance.update(getattr(r, "provenance_", {}).get(q.qid, {}))
            hits = [_hit(rank, passages[where[pid]], score, provenance.get(pid, []))
                    for rank, (pid, score) in enumerate(run.get(q.qid, [])[:k], start=1)]
            if explain:
                shares: dict = {}
                for r in retrievers:
                    if hasattr(r, "explain"):
                        for pid, found in r.explain(q.text, [h["pid"] for h in hits]).items():
                            shares.setdefault(pid, []).extend(found)
                node = "document" if any(getattr(r, "explains_documents", False) for r in retrievers) else "passage"
                for h in hits:
                    h["explain"] = [s.to_dict() for s in shares.get(h["pid"], [])]
                    h["explain_node"] = node  # whose PageRank the shares split: the hit's or its document's
            out.append(hits)
        return out


def open_index(index_dir: str | os.PathLike, method: str) -> SearchIndex:
    """Open an index for ``method`` with every file it reads verified; the first step of ``aethel search``.

    Parameters
    ----------
    index_dir : path-like
        A folder written by :func:`build_index`.
    method : str
        A method the index holds (see :func:`method_parts`).

    Returns
    -------
    SearchIndex
        Its retrievers restored and its passages verified, so answering raises no file error.

    Raises
    ------
    DataNotFoundError, DataError, ParameterError
        As :class:`SearchIndex`. When a file differs from the manifest because another process
        rebuilt the index while it was being read (``index.json`` changed meanwhile), the index is
        opened once more before the error is raised.
    """
    manifest = Path(index_dir) / INDEX_FILE

    def digest() -> str | None:
        try:
            return _file_digest(manifest, lines=False)[_SHA]
        except OSError:
            return None

    for attempt in (1, 2):
        before = digest()
        try:
            index = SearchIndex(index_dir, methods=[method])
            index.passages  # noqa: B018 - verified now, not halfway through the answers
            return index
        except DataError:
            if attempt == 2 or digest() == before:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def search_questions(index_dir: str | os.PathLike, questions: Sequence[str], *, k: int = 5,
                     method: str = "aethel-bct") -> list[list[dict]]:
    """Open an index (:func:`open_index`) and answer ``questions`` (:meth:`SearchIndex.search`).

    Returns
    -------
    list of list of dict
        One hit list per question.
    """
    return open_index(index_dir, method).search(questions, k=k, method=method)


def load_index(index_dir: str | os.PathLike):
    """The passages and the manifest of an index folder (``passages.jsonl`` verified first).

    Returns
    -------
    dataset : Dataset
        The passages, in index order, no queries.
    info : dict
        ``index.json`` (checked by :func:`read_manifest`).

    Raises
    ------
    DataNotFoundError, DataError
        As :func:`read_manifest` and :class:`SearchIndex`.
    """

    index = SearchIndex(index_dir)
    return Dataset(Path(index_dir).name, list(index.passages), [], {}), index.info


def search_index(index_dir: str | os.PathLike, question: str, *, k: int = 5, method: str = "aethel-bct") -> list[dict]:
    """Ranked passages for one question, each with document, page, source, score and provenance.

    Parameters
    ----------
    index_dir : path-like
    question : str
    k : int
    method : str

    Returns
    -------
    list of dict
        The hits (:meth:`SearchIndex.search`).

    Raises
    ------
    ParameterError
        Empty question, ``k < 1``, an unknown method or one the index lacks.
    DataNotFoundError, DataError
        No index, or a damaged one (the file is named).
    """
    if not isinstance(question, str) or not question.strip():
        raise ParameterError("question: empty question")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ParameterError(f"-k must be ≥ 1, got {k}")
    method_parts(method)
    return SearchIndex(index_dir).search([question], k=k, method=method)[0]
