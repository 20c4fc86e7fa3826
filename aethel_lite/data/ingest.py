"""Turn the user's own documents (.txt, .md, .pdf, or folders of them) into passages.

PDF files give one passage per page (text from :mod:`pypdf`), pid ``"<doc>#p<page>"`` with
0-based pages like FinanceBench; text and Markdown files give one passage per blank-line
separated paragraph, pid ``"<doc>#<i>"``. With ``chunk_words`` every page/file is instead cut into
word windows (:func:`~aethel_lite.data.loaders.chunk_spans`), pid ``"<doc>#p<page>c<i>"`` for PDFs
and ``"<doc>#c<i>"`` for text. ``doc`` is the file name without its suffix (or, when two files
share a stem, their path relative to the common folder). The result has no queries.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from pathlib import Path

from ..errors import DataError, DataNotFoundError, ParameterError
from .loaders import chunk_spans
from .schema import Dataset, Passage

__all__ = ["ingest", "SUPPORTED_SUFFIXES", "pdf_pages"]

logger = logging.getLogger(__name__)

TEXT_SUFFIXES = (".txt", ".md", ".markdown")
SUPPORTED_SUFFIXES = TEXT_SUFFIXES + (".pdf",)
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")


def _collect(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[Path]:
    """Files named directly plus supported files under named folders (recursive, sorted, no hidden)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise DataNotFoundError(f"{path}: file or folder not found")
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*")
                if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            if not found:
                logger.warning("%s: no %s files in this folder", path, "/".join(SUPPORTED_SUFFIXES))
            files.extend(found)
        elif path.suffix.lower() in SUPPORTED_SUFFIXES:
            files.append(path)
        else:
            raise DataError(f"{path}: unsupported file type {path.suffix or '(none)'!r}; supported: {', '.join(SUPPORTED_SUFFIXES)}")
    unique: dict[Path, Path] = {}
    for f in files:
        unique.setdefault(f.resolve(), f)
    return list(unique.values())


def _doc_ids(files: list[Path]) -> list[str]:
    stems = [f.stem for f in files]
    if len(set(stems)) == len(stems):
        return stems
    resolved = [f.resolve() for f in files]
    root = Path(os.path.commonpath([str(r.parent) for r in resolved]))
    return [r.relative_to(root).with_suffix("").as_posix() for r in resolved]


def pdf_pages(path: str | os.PathLike) -> list[str]:
    """Text of every page of a PDF (``pypdf``), in page order.

    Raises
    ------
    DataError
        The file is not a readable PDF, is encrypted with a password, or text extraction fails;
        the message names the file.
    """
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    path = Path(path)
    try:
        reader = PdfReader(path)
        if reader.is_encrypted:
            try:
                ok = reader.decrypt("")
            except (PyPdfError, NotImplementedError) as exc:  # e.g. AES without a crypto library
                raise DataError(f"{path}: PDF is encrypted and cannot be decrypted ({exc})") from exc
            if not ok:
                raise DataError(f"{path}: PDF is encrypted with a password; decrypt it first")
        return [page.extract_text() or "" for page in reader.pages]
    except DataError:
        raise
    except Exception as exc:  # pypdf raises many types (PdfReadError, ValueError, KeyError ...) on corrupt files
        raise DataError(f"{path}: cannot read PDF ({type(exc).__name__}: {exc})") from exc


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (byte {exc.start}); convert it to UTF-8") from exc
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc})") from exc


def _windows(text: str, chunk_words: int, chunk_overlap: int) -> list[tuple[int, int]]:
    return [(a, b) for a, b in chunk_spans(text, chunk_words, chunk_overlap) if text[a:b].strip()]


def ingest(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    chunk_words: int | None = None,
    chunk_overlap: int = 0,
    *,
    name: str = "ingested",
    progress: bool = False,
) -> Dataset:
    """Read documents into a :class:`Dataset` of passages (no queries).

    Parameters
    ----------
    paths : path-like or iterable of path-like
        Files (.txt, .md, .markdown, .pdf) and/or folders searched recursively for them (hidden
        files skipped, sorted order so runs are reproducible).
    chunk_words : int, optional
        ``None``: PDF pages and text paragraphs as they are. Otherwise cut each PDF page / text file
        into windows of this many words overlapping by ``chunk_overlap``.
    chunk_overlap : int
        Overlap of consecutive windows in words, ``0 <= chunk_overlap < chunk_words``.
    name : str
        Name of the returned data set.
    progress : bool
        Show a tqdm bar over files.

    Returns
    -------
    Dataset
        ``passage.meta`` holds ``path`` and ``page`` (PDF) / ``paragraph`` or ``chunk`` (text) and,
        for windows, ``char_start``/``char_end`` within the page or file. ``dataset.meta`` lists the
        files and the number of PDF pages without text (skipped; scanned pages need OCR).

    Raises
    ------
    DataNotFoundError
        A path does not exist.
    DataError
        Unsupported file type named explicitly, unreadable/encrypted/corrupt PDF, non-UTF-8 text
        (each naming the file), or no text at all in the inputs.
    """
    from tqdm.auto import tqdm

    if chunk_words is not None:
        chunk_spans("", chunk_words, chunk_overlap)  # validates sizes (ParameterError)
    elif chunk_overlap:
        raise ParameterError("chunk_overlap needs chunk_words")
    files = _collect(paths)
    if not files:
        raise DataError(f"no {'/'.join(SUPPORTED_SUFFIXES)} files found in {paths!s}")
    passages: list[Passage] = []
    empty_pages = 0
    for file, doc in tqdm(list(zip(files, _doc_ids(files))), desc="ingest", unit=" files", disable=not progress):
        src = str(file)
        if file.suffix.lower() == ".pdf":
            pages = pdf_pages(file)
            blank = 0
            for page, text in enumerate(pages):
                if not text.strip():
                    blank += 1
                    continue
                if chunk_words is None:
                    passages.append(Passage(f"{doc}#p{page}", doc, doc, text, {"path": src, "page": page}))
                    continue
                for i, (a, b) in enumerate(_windows(text, chunk_words, chunk_overlap)):
                    meta = {"path": src, "page": page, "chunk": i, "char_start": a, "char_end": b}
                    passages.append(Passage(f"{doc}#p{page}c{i}", doc, doc, text[a:b], meta))
            if blank:
                empty_pages += blank
                logger.warning("%s: %d of %d pages have no extractable text (scanned? needs OCR)", file, blank, len(pages))
            continue
        text = _read_text(file)
        if chunk_words is None:
            i = 0
            for part in _BLANK_LINE.split(text):
                stripped = part.strip()
                if stripped:
                    passages.append(Passage(f"{doc}#{i}", doc, doc, stripped, {"path": src, "paragraph": i}))
                    i += 1
        else:
            for i, (a, b) in enumerate(_windows(text, chunk_words, chunk_overlap)):
                meta = {"path": src, "chunk": i, "char_start": a, "char_end": b}
                passages.append(Passage(f"{doc}#c{i}", doc, doc, text[a:b], meta))
    if not passages:
        raise DataError(f"no text found in {', '.join(str(f) for f in files)} (empty files or image-only PDFs)")
    meta = {"files": [str(f) for f in files], "empty_pages": empty_pages, "chunk_words": chunk_words, "chunk_overlap": chunk_overlap}
    return Dataset(name, passages, [], meta).validate()
