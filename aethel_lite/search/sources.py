"""The input files of an index: reading them, and merging them with an index's own (``--add``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data.ingest import UnreadableFile, collect_sources, read_source
from ..errors import DataError
from .format import SHA, file_digest

__all__ = ["Source", "Sources", "read_sources", "merge_sources"]


@dataclass
class Source:
    """One indexed input file: its id, where it was read, its digest and its passages."""

    id: str
    path: str
    kind: str
    sha256: str
    bytes: int
    passages: list = field(default_factory=list)

    def entry(self) -> dict:
        return {
            "id": self.id,
            "path": self.path,
            "kind": self.kind,
            SHA: self.sha256,
            "bytes": self.bytes,
            "n_passages": len(self.passages),
        }


class Sources(list):
    """The :class:`Source` list :func:`read_sources` returns, with :attr:`skipped`: the input files that give no
    passage, each ``{"id", "path", "reason"}`` (no text, encrypted, unreadable)."""

    skipped: list[dict]


def _no_text(src: Any, blank_pages: int) -> str:
    if src.kind == "pdf":
        return (
            "no text: the PDF has no pages"
            if not blank_pages
            else f"no text: none of its {blank_pages} page{'s' if blank_pages > 1 else ''} has extractable text "
            "(scanned? needs OCR)"
        )
    return "no text: no passage with text" if src.kind == "passages" else "no text: empty or blank"


def read_sources(
    paths: Sequence[Any],
    chunk_words: int | None,
    follow_symlinks: bool,
    progress: bool,
    known: dict[str, str] | None = None,
) -> Sources:
    """The input files and their passages; a file whose id and SHA-256 are in ``known`` (already
    indexed, unchanged) is not read again (its passages are left empty for :func:`merge_sources` to fill).
    A file that gives no passage (no text, encrypted, unreadable PDF) is not among them but in ``skipped``,
    with the reason."""
    from tqdm.auto import tqdm

    known = known or {}
    out = Sources()
    out.skipped = []
    for src in tqdm(
        collect_sources(paths, follow_symlinks=follow_symlinks),
        desc="read",
        unit=" files",
        disable=not progress,
    ):
        try:
            digest = file_digest(src.path, lines=False)
        except OSError as exc:
            raise DataError(f"{src.path}: cannot read ({exc.strerror or exc})") from None
        path = os.path.abspath(src.path)  # absolute: a later --add from another folder recognises the file
        passages: list = []
        if known.get(src.doc_id) != digest[SHA]:
            try:
                passages, blank = read_source(src, chunk_words)
            except UnreadableFile as exc:
                out.skipped.append({"id": src.doc_id, "path": path, "reason": exc.reason})
                continue
            if not passages:
                out.skipped.append({"id": src.doc_id, "path": path, "reason": _no_text(src, blank)})
                continue
        out.append(Source(src.doc_id, path, src.kind, digest[SHA], digest["bytes"], passages))
    return out


def merge_sources(old_info: dict | None, old_passages: list, new: list[Source]) -> tuple[list[Source], dict]:
    """Sources of the new index: the old ones in order (a re-added file replaces its entry in place,
    unchanged files keep their passages), then the new ones. Returns them and a change summary
    (``added``, ``replaced``, ``unchanged``, ``skipped``: the files that give no passage, with the reason; one
    that was indexed before leaves the index, its old text being no longer what the file holds).

    Raises
    ------
    DataError
        Every input was skipped (a new index), or ``--add`` (``old_info``) adds and replaces nothing while
        some of its files were skipped: the files and reasons are named, and nothing is written.
    """
    skipped = list(getattr(new, "skipped", []))
    gone = {entry["id"] for entry in skipped}
    by_id = {s.id: s for s in new}
    sources: list[Source] = []
    summary = {"added": [], "replaced": [], "unchanged": [], "skipped": skipped}
    if old_info is not None:
        it = iter(old_passages)
        for entry in old_info["sources"]:
            passages = [next(it) for _ in range(entry["n_passages"])]
            src = by_id.pop(entry["id"], None)
            if src is None:
                if (
                    entry["id"] in gone
                    and Path(entry["path"]).resolve() == Path(_path_of(skipped, entry["id"])).resolve()
                ):
                    _note(skipped, entry["id"], "; its earlier passages were removed from the index")
                    summary["replaced"].append(entry["id"])
                    continue
                sources.append(
                    Source(
                        entry["id"],
                        entry["path"],
                        entry["kind"],
                        entry[SHA],
                        int(entry.get("bytes", 0)),
                        passages,
                    )
                )
                continue
            if Path(src.path).resolve() != Path(entry["path"]).resolve():
                raise DataError(
                    f"document id {src.id!r} ({src.path}) is already in the index, from {entry['path']}; "
                    "ids are paths relative to the folder given: index their common folder to keep both"
                )
            if src.sha256 == entry[SHA]:
                summary["unchanged"].append(src.id)
                src.passages = passages
            else:
                summary["replaced"].append(src.id)
            sources.append(src)
    for src in new:
        if src.id in by_id:
            summary["added"].append(src.id)
            sources.append(src)
    if skipped and not summary["added"] and not summary["replaced"]:
        named = "; ".join(f"{e['path']}: {e['reason']}" for e in skipped[:5])
        more = f"; and {len(skipped) - 5} more" if len(skipped) > 5 else ""
        if old_info is not None:
            raise DataError(f"--add: nothing was added ({named}{more}); the index is unchanged")
        if not any(s.passages for s in sources):
            raise DataError(f"no text found in the inputs ({named}{more}); no index written")
    return sources, summary


def _path_of(skipped: list[dict], doc_id: str) -> str:
    return next(e["path"] for e in skipped if e["id"] == doc_id)


def _note(skipped: list[dict], doc_id: str, note: str) -> None:
    for e in skipped:
        if e["id"] == doc_id:
            e["reason"] += note
