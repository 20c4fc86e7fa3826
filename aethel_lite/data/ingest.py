"""Turn the user's own documents (.txt, .md, .pdf, folders of them, or a JSONL of passages) into passages.

A PDF gives one passage per page (:mod:`pypdf`), pid ``"<doc>#p<page>"`` (0-based pages, like
FinanceBench); a text or Markdown file one per blank-line separated paragraph, pid ``"<doc>#<i>"``.
With ``chunk_words`` every page or file is cut into word windows instead
(:func:`~aethel_lite.data.loaders.chunk_spans`), pid ``"<doc>#p<page>c<i>"`` or ``"<doc>#c<i>"``.

Document ids are stable: ``doc`` is the file's path relative to the folder given, without its suffix
(``notes/q3/memo.txt`` given as ``notes`` → ``q3/memo``), or the stem of a file named directly (the
whole name of a passage file), so adding a file never renames another's passages. Two inputs that
would share an id (``memo.txt`` and ``memo.md``) are an error naming both files.

Folders are walked recursively in sorted order, hidden entries (``.name``) skipped. A symbolic link
leading outside the folder is skipped with a warning unless ``follow_symlinks=True`` (then linked
folders are walked too, each real folder once). A path named directly is always read. A file reached
twice (a link beside the file it leads to) is read once, under the file's own name. A file name that
is not valid UTF-8 is an error naming it (the index's JSON files hold names as text).

A ``.jsonl`` (or ``.jsonl.gz``) file named directly holds ready-made passages with their pids (the
``passages.jsonl`` of :meth:`~aethel_lite.data.schema.Dataset.to_jsonl`); folders are never searched for them.
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DataError, DataNotFoundError, ParameterError
from ..io import read_jsonl
from .loaders import chunk_spans
from .schema import Dataset, Passage

__all__ = [
    "ingest",
    "SUPPORTED_SUFFIXES",
    "PASSAGE_SUFFIXES",
    "SourceFile",
    "collect_sources",
    "read_source",
    "pdf_pages",
    "check_name",
    "UnreadableFile",
]

logger = logging.getLogger(__name__)

TEXT_SUFFIXES = (".txt", ".md", ".markdown")
SUPPORTED_SUFFIXES = TEXT_SUFFIXES + (".pdf",)
#: suffixes of passage files (JSONL), read only when named directly
PASSAGE_SUFFIXES = (".jsonl", ".jsonl.gz")
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")


@dataclass(frozen=True)
class SourceFile:
    """One input file and its document id.

    Attributes
    ----------
    path : Path
        The file as reached from the path given (``root / relative`` for a folder).
    doc_id : str
        See the module docstring.
    kind : {"text", "pdf", "passages"}
    """

    path: Path
    doc_id: str
    kind: str


def _kind(path: Path) -> str | None:
    if any(path.name.lower().endswith(s) for s in PASSAGE_SUFFIXES):
        return "passages"
    suffix = path.suffix.lower()
    return "pdf" if suffix == ".pdf" else "text" if suffix in TEXT_SUFFIXES else None


def _link_target(link: Path) -> Path:
    """Where a symbolic link leads; DataError naming it for a loop of links."""
    try:
        return link.resolve()
    except (RuntimeError, OSError) as exc:  # Python < 3.13 raises RuntimeError("Symlink loop ...")
        raise DataError(
            f"{link}: a loop of symbolic links ({exc}); remove the link or leave it out"
        ) from None


def check_name(path: Path) -> None:
    """DataError naming ``path`` when its name is not valid UTF-8 (the index's JSON files hold the
    names as text): the bytes that are not are shown as ``\\xNN``."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(path).decode("utf-8", "backslashreplace")
        raise DataError(
            f"{shown}: the file name is not valid UTF-8 text; rename it (e.g. with convmv) or leave it out"
        ) from None


def _blank(text: str) -> bool:
    """Whether a text holds nothing but whitespace and NUL characters (nothing to index)."""
    return not text.replace("\x00", "").strip()


def _leaves(link: Path, root: Path, root_real: Path) -> bool:
    """Whether the symbolic link ``link`` leads outside ``root``; if so, a warning says it is skipped."""
    target = _link_target(link)
    if target == root_real or root_real in target.parents:
        return False
    logger.warning(
        "%s: skipped a link to %s, outside %s (use --follow-symlinks to follow it)", link, target, root
    )
    return True


def _walk(root: Path, follow_symlinks: bool) -> list[Path]:
    """Supported files below ``root``, sorted by relative path (hidden entries and links: module docstring)."""
    root_real = root.resolve()
    found: list[Path] = []
    seen_dirs = {root_real}

    def unreadable(exc: OSError) -> None:
        raise DataError(
            f"{exc.filename}: cannot read this folder ({exc.strerror}); make it readable or leave it out"
        )

    for dirpath, dirnames, filenames in os.walk(root, followlinks=follow_symlinks, onerror=unreadable):
        here = Path(dirpath)
        keep = []
        for name in sorted(dirnames):
            if name.startswith("."):
                continue
            sub = here / name
            if sub.is_symlink() and not follow_symlinks:
                _leaves(sub, root, root_real)
                continue  # a link to a folder inside root: its files are reached directly
            if follow_symlinks:
                real = _link_target(sub) if sub.is_symlink() else sub.resolve()
                if real in seen_dirs:
                    continue
                seen_dirs.add(real)
            keep.append(name)
        dirnames[:] = keep
        for name in filenames:
            if name.startswith("."):
                continue
            path = here / name
            if _kind(path) not in ("text", "pdf"):
                continue
            if path.is_symlink() and not follow_symlinks and _leaves(path, root, root_real):
                continue
            if path.is_file():
                found.append(path)
    return sorted(found, key=lambda p: p.relative_to(root).parts)


def collect_sources(
    paths: str | os.PathLike | Iterable[str | os.PathLike], *, follow_symlinks: bool = False
) -> list[SourceFile]:
    """The input files of ``paths`` with their document ids (see the module docstring).

    Parameters
    ----------
    paths : path-like or iterable of path-like
        Files (.txt, .md, .markdown, .pdf, .jsonl, .jsonl.gz) and/or folders.
    follow_symlinks : bool
        Follow links that leave a folder given (default: skip them with a warning).

    Returns
    -------
    list of SourceFile
        In the order given, each folder's files sorted; a file reached twice is listed once.

    Raises
    ------
    DataNotFoundError
        A path does not exist.
    DataError
        A file named directly has an unsupported type, or two different files would get the same
        document id (both are named).
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: list[SourceFile] = []
    for raw in paths:
        if isinstance(raw, str) and not raw.strip():
            raise DataNotFoundError("an input path is empty ('')")
        path = Path(raw)
        try:
            exists = path.exists()
        except OSError as exc:  # e.g. a name longer than the system allows
            name = (
                str(path) if len(str(path)) <= 120 else f"{str(path)[:120]}... ({len(str(path))} characters)"
            )
            raise DataError(f"{name}: {exc.strerror or exc}") from None
        if not exists:
            if path.is_symlink():
                target = _link_target(path)  # a loop of links: named as such
                raise DataNotFoundError(f"{path}: a symbolic link to {target}, which does not exist")
            raise DataNotFoundError(f"{path}: file or folder not found")
        check_name(path)
        if path.is_dir():
            found = _walk(path, follow_symlinks)
            for f in found:
                check_name(f)
            if not found:
                logger.warning("%s: no %s files in this folder", path, "/".join(SUPPORTED_SUFFIXES))
            out.extend(SourceFile(f, f.relative_to(path).with_suffix("").as_posix(), _kind(f)) for f in found)
            continue
        kind = _kind(path)
        if kind is None:
            supported = ", ".join(SUPPORTED_SUFFIXES + PASSAGE_SUFFIXES)
            raise DataError(
                f"{path}: unsupported file type {path.suffix or '(none)'!r}; supported: {supported}"
            )
        out.append(SourceFile(path, path.name if kind == "passages" else path.stem, kind))
    # a file reached twice (a link beside its target, a folder given twice) is read once, under the
    # name of the file itself rather than of a link to it
    chosen: dict[Path, SourceFile] = {}
    for src in out:
        real = src.path.resolve()
        if real not in chosen or (chosen[real].path.is_symlink() and not src.path.is_symlink()):
            chosen[real] = src
    unique: dict[Path, SourceFile] = {}
    by_id: dict[str, SourceFile] = {}
    for src in out:
        real = src.path.resolve()
        if real in unique or chosen[real] is not src:
            continue
        other = by_id.get(src.doc_id)
        if other is not None:
            raise DataError(
                f"document id {src.doc_id!r} would name two files, {other.path} and {src.path} (ids are paths "
                "relative to the folder given, without the suffix); rename one, or give their common folder"
            )
        unique[real] = src
        by_id[src.doc_id] = src
    return list(unique.values())


class UnreadableFile(DataError):
    """An input file that holds no text this program can read (an encrypted or damaged PDF): ``aethel index``
    skips it with a warning giving :attr:`reason`; :func:`ingest` stops on it. The message names the file."""

    def __init__(self, path: Any, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.reason = reason


def pdf_pages(path: str | os.PathLike) -> list[str]:
    """Text of every page of a PDF (``pypdf``), in page order.

    Raises
    ------
    UnreadableFile
        The file is encrypted (with a password, or with AES when the ``cryptography`` package that pypdf
        needs to try the empty password is missing), not a readable PDF, or text extraction fails;
        the message names the file, the :attr:`~UnreadableFile.reason` says which.
    """
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError, PyPdfError

    path = Path(path)
    quiet = logging.getLogger("pypdf")  # its warnings about a damaged file would be lines of their own
    level = quiet.level
    quiet.setLevel(logging.ERROR + 10)
    try:
        reader = PdfReader(path)
        if reader.is_encrypted:
            try:
                ok = reader.decrypt("")
            except (PyPdfError, NotImplementedError) as exc:  # AES without the cryptography package
                need = (
                    "; pypdf needs the cryptography package to open it" if "cryptography" in str(exc) else ""
                )
                raise UnreadableFile(path, f"encrypted{need}") from exc
            if not ok:
                raise UnreadableFile(path, "encrypted with a password; decrypt it first")
        return [page.extract_text() or "" for page in reader.pages]
    except DataError:
        raise
    except DependencyError as exc:  # AES: pypdf tries the empty password already when it opens the file
        raise UnreadableFile(path, "encrypted; pypdf needs the cryptography package to open it") from exc
    except FileNotDecryptedError as exc:
        raise UnreadableFile(path, "encrypted with a password; decrypt it first") from exc
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except (
        Exception
    ) as exc:  # pypdf raises many types (PdfReadError, ValueError, KeyError ...) on damaged files
        raise UnreadableFile(path, f"unreadable PDF ({str(exc).strip() or 'damaged file'})") from exc
    finally:
        quiet.setLevel(level)


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataError(
            f"{path}: not UTF-8 text on line {line} (byte {exc.start}); convert it to UTF-8"
        ) from exc
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror or exc})") from exc


def _windows(
    doc: str, text: str, tag: str, meta: dict, chunk_words: int, chunk_overlap: int
) -> list[Passage]:
    """The non-blank word windows of ``text`` as passages ``"<doc>#<tag>c<i>"`` (``meta`` plus chunk and offsets)."""
    spans = [(a, b) for a, b in chunk_spans(text, chunk_words, chunk_overlap) if not _blank(text[a:b])]
    return [
        Passage(f"{doc}#{tag}c{i}", doc, doc, text[a:b], {**meta, "chunk": i, "char_start": a, "char_end": b})
        for i, (a, b) in enumerate(spans)
    ]


def _non_finite(value: Any, where: str = "meta") -> str | None:
    """Where in ``value`` (a parsed JSON value) an infinite or NaN number is, else None."""
    if isinstance(value, float) and not math.isfinite(value):
        return where
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _non_finite(item, f"{where}[{key!r}]" if isinstance(key, str) else f"{where}[{key}]")
        if found is not None:
            return found
    return None


def _passage_file(src: SourceFile) -> list[Passage]:
    """Passages of a JSONL passage file (blank texts skipped); errors name ``file:line``."""
    passages = []
    first: dict[str, int] = {}
    for lineno, row in read_jsonl(src.path, numbered=True):
        pid, text = row.get("pid"), row.get("text")
        if not isinstance(pid, str) or not pid:
            raise DataError(f"{src.path}:{lineno}: field 'pid' must be a non-empty string")
        if pid in first:
            raise DataError(
                f"{src.path}:{lineno}: duplicate passage pid {pid!r} (first on line {first[pid]})"
            )
        first[pid] = lineno
        if not isinstance(text, str):
            raise DataError(f"{src.path}:{lineno}: field 'text' must be a string")
        doc_id, title, meta = row.get("doc_id", pid), row.get("title", ""), row.get("meta") or {}
        if not isinstance(doc_id, str) or not isinstance(title, str) or not isinstance(meta, dict):
            raise DataError(f"{src.path}:{lineno}: 'doc_id' and 'title' must be strings and 'meta' an object")
        bad = _non_finite(meta)
        if bad is not None:
            raise DataError(
                f"{src.path}:{lineno}: field 'meta' holds a non-finite number at {bad}; "
                "JSON has no Infinity or NaN: write a finite number, a string or null"
            )
        if not _blank(text):
            passages.append(
                Passage(pid, doc_id, title, text, {**meta, "path": str(src.path), "line": lineno})
            )
    return passages


def read_source(
    src: SourceFile, chunk_words: int | None = None, chunk_overlap: int = 0
) -> tuple[list[Passage], int]:
    """The passages of one input file and its number of PDF pages without text.

    Parameters
    ----------
    src : SourceFile
        From :func:`collect_sources`.
    chunk_words, chunk_overlap : int, optional
        As in :func:`ingest` (not applied to passage files).

    Returns
    -------
    passages : list of Passage
    empty_pages : int

    Raises
    ------
    DataError
        As for :func:`ingest` (naming the file, and the line for JSONL).
    """
    if src.kind == "passages":
        return _passage_file(src), 0
    file, doc = src.path, src.doc_id
    source = os.path.abspath(file)  # opens from anywhere: a hit's source and link (aethel search)
    if src.kind == "pdf":
        pages = pdf_pages(file)
        passages: list[Passage] = []
        blank = 0
        for page, text in enumerate(pages):
            if _blank(text):
                blank += 1
            elif chunk_words is None:
                passages.append(Passage(f"{doc}#p{page}", doc, doc, text, {"path": source, "page": page}))
            else:
                passages += _windows(
                    doc, text, f"p{page}", {"path": source, "page": page}, chunk_words, chunk_overlap
                )
        if blank and blank < len(pages):  # a PDF without any text is skipped by the caller, with its reason
            logger.warning(
                "%s: %d of %d pages have no extractable text (scanned? needs OCR)", file, blank, len(pages)
            )
        return passages, blank
    text = _read_text(file)
    if chunk_words is not None:
        return _windows(doc, text, "", {"path": source}, chunk_words, chunk_overlap), 0
    paragraphs = [part.strip() for part in _BLANK_LINE.split(text) if not _blank(part)]
    return [
        Passage(f"{doc}#{i}", doc, doc, para, {"path": source, "paragraph": i})
        for i, para in enumerate(paragraphs)
    ], 0


def check_chunking(chunk_words: int | None, chunk_overlap: int = 0) -> None:
    """:class:`ParameterError` unless ``chunk_words``/``chunk_overlap`` are valid for :func:`ingest`."""
    if chunk_words is not None:
        if isinstance(chunk_words, bool) or not isinstance(chunk_words, int):
            raise ParameterError(f"chunk_words must be an integer, got {chunk_words!r}")
        chunk_spans("", chunk_words, chunk_overlap)  # validates sizes (ParameterError)
    elif chunk_overlap:
        raise ParameterError("chunk_overlap needs chunk_words")


def ingest(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    chunk_words: int | None = None,
    chunk_overlap: int = 0,
    *,
    name: str = "ingested",
    progress: bool = False,
    follow_symlinks: bool = False,
) -> Dataset:
    """Read documents into a :class:`Dataset` of passages (no queries).

    Parameters
    ----------
    paths : path-like or iterable of path-like
        Files and/or folders, as for :func:`collect_sources`.
    chunk_words : int, optional
        ``None``: PDF pages and text paragraphs as they are; else windows of this many words
        overlapping by ``chunk_overlap`` (``0 <= chunk_overlap < chunk_words``) in each page / text file.
    chunk_overlap : int
    name : str
    progress : bool
        A tqdm bar over files.
    follow_symlinks : bool
        As for :func:`collect_sources`.

    Returns
    -------
    Dataset
        ``passage.meta`` holds ``path`` and ``page`` (PDF) / ``paragraph`` or ``chunk`` (text), and
        for windows ``char_start``/``char_end``; passages of a JSONL file keep their ``meta`` plus
        ``path`` and ``line``. ``dataset.meta`` lists the files and the PDF pages without text.

    Raises
    ------
    DataNotFoundError
        A path does not exist.
    DataError
        An unsupported file named, an unreadable PDF or non-UTF-8 text (naming the file), two files
        with one document id, a repeated pid, or no text at all in the inputs.
    """
    from tqdm.auto import tqdm

    check_chunking(chunk_words, chunk_overlap)
    sources = collect_sources(paths, follow_symlinks=follow_symlinks)
    if not sources:
        raise DataError(f"no {'/'.join(SUPPORTED_SUFFIXES)} files found in {paths!s}")
    passages: list[Passage] = []
    empty_pages = 0
    for src in tqdm(sources, desc="ingest", unit=" files", disable=not progress):
        found, blank = read_source(src, chunk_words, chunk_overlap)
        passages.extend(found)
        empty_pages += blank
    if not passages:
        raise DataError(
            f"no text found in {', '.join(str(s.path) for s in sources)} (empty files or image-only PDFs)"
        )
    meta = {
        "files": [str(s.path) for s in sources],
        "empty_pages": empty_pages,
        "chunk_words": chunk_words,
        "chunk_overlap": chunk_overlap,
    }
    return Dataset(name, passages, [], meta).validate()
