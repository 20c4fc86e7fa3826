"""The input files of an index: reading them, and merging them with an index's own (``--add``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data.ingest import collect_sources, read_source
from ..errors import DataError
from .format import SHA, file_digest

__all__ = ["Source", "read_sources", "merge_sources"]


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


def read_sources(
    paths: Sequence[Any],
    chunk_words: int | None,
    follow_symlinks: bool,
    progress: bool,
    known: dict[str, str] | None = None,
) -> list[Source]:
    """The input files and their passages; a file whose id and SHA-256 are in ``known`` (already
    indexed, unchanged) is not read again (its passages are left empty for :func:`merge_sources` to fill)."""
    from tqdm.auto import tqdm

    known = known or {}
    out = []
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
        passages = [] if known.get(src.doc_id) == digest[SHA] else read_source(src, chunk_words)[0]
        # absolute: a later --add from another folder recognises the file
        out.append(
            Source(src.doc_id, os.path.abspath(src.path), src.kind, digest[SHA], digest["bytes"], passages)
        )
    return out


def merge_sources(old_info: dict | None, old_passages: list, new: list[Source]) -> tuple[list[Source], dict]:
    """Sources of the new index: the old ones in order (a re-added file replaces its entry in place,
    unchanged files keep their passages), then the new ones. Returns them and a change summary."""
    by_id = {s.id: s for s in new}
    sources: list[Source] = []
    summary = {"added": [], "replaced": [], "unchanged": []}
    if old_info is not None:
        it = iter(old_passages)
        for entry in old_info["sources"]:
            passages = [next(it) for _ in range(entry["n_passages"])]
            src = by_id.pop(entry["id"], None)
            if src is None:
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
    return sources, summary
