"""A fitted graph or hybrid retriever on disk: the files an aethel index holds for it.

========================  ==============================================================================
``ids.json``              ``{"pids": [...], "doc_ids": [...]}``, the passages in corpus order
``graph-<extractor>/``    the passage–entity graph (CSR arrays ``graph.npz`` + entity table ``graph.json``,
                          :meth:`~aethel_lite.core.graph.EntityGraph.save`), before document / metadata nodes
``bm25/``                 the BM25 index (:meth:`~aethel_lite.retrievers.BM25Retriever.save`)
``docmeta.json``          ``{"documents": [DocMeta fields, ...]}``, one entry per document in corpus order
                          (only with document or metadata nodes; :func:`write_docmeta`)
``statements.json``       the statement pages and their rows' words (with ``anchor_pages="statements"``;
                          :meth:`~aethel_lite.retrievers.statements.StatementPages.save`)
``dense-<pooling>.npy``   the hybrid's dense / heading embeddings (:meth:`DenseRetriever.save
                          <aethel_lite.retrievers.DenseRetriever.save>`), when it has them
========================  ==============================================================================

No pickle: JSON, ``.npz`` and ``.npy`` only. :func:`load_parts` extracts and fits nothing: a retriever fitted from them ranks exactly as the one saved.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..core.graph import EntityGraph
from ..data.docmeta import DocMeta
from ..errors import DataError
from .bm25 import BM25Retriever
from .dense import DenseRetriever
from .statements import StatementPages

__all__ = [
    "IDS_FILE", "DOCMETA_FILE", "PassageIds", "GraphParts", "graph_folder", "write_docmeta", "read_docmeta", "save",
    "load_parts", "load_dense", "load_docmeta", "STATEMENTS_FILE", "load_statements",
]  # fmt: skip

IDS_FILE = "ids.json"
DOCMETA_FILE = "docmeta.json"
STATEMENTS_FILE = "statements.json"


@dataclass(frozen=True)
class GraphParts:
    """What :meth:`GraphRetriever.fit <aethel_lite.retrievers.GraphRetriever.fit>` computes from the passages before
    anything else: the passage–entity graph, the BM25 index and the extractor. Given to ``fit`` (``parts=``), they
    are used as they are: nothing is extracted or indexed again."""

    graph: EntityGraph
    bm25: BM25Retriever
    extractor: Any = None


@dataclass(frozen=True)
class PassageIds:
    """A passage's ids, all a restored graph retriever needs of it (``add_document_nodes``)."""

    pid: str
    doc_id: str


def graph_folder(extractor: Any) -> str:
    """``graph-<name>``: the folder of the graph built with ``extractor`` (a name or an extractor)."""
    return f"graph-{extractor if isinstance(extractor, str) else extractor.name}"


def write_docmeta(path: str | os.PathLike, metas) -> None:
    """Write ``doc_id`` → DocMeta as ``docmeta.json`` (sorted keys, UTF-8, one trailing newline)."""
    text = json.dumps({"documents": [asdict(d) for d in metas.values()]}, ensure_ascii=False, sort_keys=True)
    Path(path).write_text(text + "\n", encoding="utf-8", newline="\n")


def read_docmeta(path: str | os.PathLike) -> dict:
    """``docmeta.json`` as ``doc_id`` → DocMeta; DataError (the file named) if malformed or a field is not text."""
    try:
        rows = json.loads(Path(path).read_bytes())["documents"]
        metas = {}
        for row in rows:
            d = DocMeta(
                row["doc_id"],
                list(row["companies"]),
                list(row["periods"]),
                list(row["types"]),
                dict(row["source"]),
            )
            if not all(isinstance(x, str) for x in [d.doc_id, *d.companies, *d.periods, *d.types]):
                raise TypeError("a field is not text")
            metas[d.doc_id] = d
    except (ValueError, RecursionError, KeyError, TypeError) as exc:
        raise DataError(f"{path}: malformed document metadata ({exc!r})") from None
    return metas


def save(retriever, folder: str | os.PathLike) -> list[str]:
    """Write a fitted graph or hybrid retriever's files (module table) into ``folder``; returns their relative paths,
    sorted."""
    r = retriever
    r._check_fitted()
    paper = getattr(r, "graph_retriever_", r)  # a hybrid holds the paper retriever
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ids = json.dumps({"pids": r.pids_, "doc_ids": r.doc_ids_}, ensure_ascii=False)
    (folder / IDS_FILE).write_text(ids + "\n", encoding="utf-8", newline="\n")
    name = graph_folder(paper.extractor)
    paper.graph_.save(folder / name)
    paper.bm25_.save(folder / "bm25")
    files = [IDS_FILE, f"{name}/graph.json", f"{name}/graph.npz"]
    files += [p.relative_to(folder).as_posix() for p in (folder / "bm25").rglob("*") if p.is_file()]
    if getattr(r, "doc_meta_", None) is not None:
        write_docmeta(folder / DOCMETA_FILE, r.doc_meta_)
        files.append(DOCMETA_FILE)
    if getattr(r, "statements_", None) is not None:
        r.statements_.save(folder / STATEMENTS_FILE, r.pids_)
        files.append(STATEMENTS_FILE)
    for model in (getattr(r, "dense_", None), getattr(r, "heading_", None)):
        if model is not None:
            files += model.save(folder)
    return sorted(files)


def load_parts(folder: str | os.PathLike, extractor: Any) -> tuple[list[PassageIds], GraphParts]:
    """The passages' ids and the graph parts :func:`save` wrote into ``folder`` (the graph built with ``extractor``);
    DataError (the file named) if a file is missing or malformed, or the parts' passage ids disagree."""
    folder = Path(folder)
    path = folder / IDS_FILE
    try:
        ids = json.loads(path.read_bytes())
        pids, doc_ids = list(ids["pids"]), list(ids["doc_ids"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{path}: unreadable passage ids ({exc!r})") from None
    graph = EntityGraph.load(folder / graph_folder(extractor))
    bm25 = BM25Retriever.load(folder / "bm25")
    if bm25.pids_ != pids:
        raise DataError(f"{folder / 'bm25'}: its passage ids differ from {path}")
    return [PassageIds(p, d) for p, d in zip(pids, doc_ids)], GraphParts(graph, bm25)


def load_dense(folder: str | os.PathLike, pids: list[str], pooling: str, cache: bool) -> DenseRetriever:
    """The dense model :func:`save` wrote into ``folder`` (``dense-<pooling>.npy``)."""
    return DenseRetriever.load(folder, pids, pooling=pooling, cache=cache)


def load_docmeta(folder: str | os.PathLike) -> dict | None:
    """``docmeta.json`` of ``folder`` (:func:`read_docmeta`), or None when there is none."""
    path = Path(folder) / DOCMETA_FILE
    return read_docmeta(path) if path.exists() else None


def load_statements(folder: str | os.PathLike, pids: list[str]) -> StatementPages:
    """``statements.json`` of ``folder`` (:meth:`StatementPages.load`)."""
    return StatementPages.load(Path(folder) / STATEMENTS_FILE, pids)
