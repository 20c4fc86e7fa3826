"""A fitted :class:`~aethel_lite.retrievers.GraphRetriever` on disk: the files an aethel index holds for it.

========================  ==============================================================================
``ids.json``              ``{"pids": [...], "doc_ids": [...]}``, the passages in corpus order
``graph-<extractor>/``    the passage–entity graph (CSR arrays ``graph.npz`` + entity table ``graph.json``,
                          :meth:`~aethel_lite.core.graph.EntityGraph.save`), before document / metadata nodes
``bm25/``                 the BM25 index (:meth:`~aethel_lite.retrievers.BM25Retriever.save`)
``docmeta.json``          ``{"documents": [DocMeta fields, ...]}``, one entry per document in corpus order
                          (only with document or metadata nodes; :func:`write_docmeta`)
``dense-<pooling>.npy``   the hybrid's dense / heading embeddings (:meth:`DenseRetriever.save
                          <aethel_lite.retrievers.DenseRetriever.save>`), when it has them
========================  ==============================================================================

No pickle: JSON, ``.npz`` and ``.npy`` only. :func:`load` extracts and fits nothing: it ranks exactly as the one saved.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..core.graph import EntityGraph
from ..errors import DataError
from .bm25 import BM25Retriever
from .dense import DenseRetriever
from .docmeta import DocMeta
from .hybrid import needs

__all__ = [
    "IDS_FILE",
    "DOCMETA_FILE",
    "PassageIds",
    "graph_folder",
    "write_docmeta",
    "read_docmeta",
    "save",
    "load",
]

IDS_FILE = "ids.json"
DOCMETA_FILE = "docmeta.json"


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
    """Write a fitted graph retriever's files (module table) into ``folder``; returns their relative paths, sorted."""
    r = retriever
    r._check_fitted()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ids = json.dumps({"pids": r.pids_, "doc_ids": r.doc_ids_}, ensure_ascii=False)
    (folder / IDS_FILE).write_text(ids + "\n", encoding="utf-8", newline="\n")
    name = graph_folder(r.extractor)
    r._base_graph.save(folder / name)
    r.bm25_.save(folder / "bm25")
    files = [IDS_FILE, f"{name}/graph.json", f"{name}/graph.npz"]
    files += [p.relative_to(folder).as_posix() for p in (folder / "bm25").rglob("*") if p.is_file()]
    if r.doc_meta_ is not None:
        write_docmeta(folder / DOCMETA_FILE, r.doc_meta_)
        files.append(DOCMETA_FILE)
    for model in (r.dense_, r.heading_):
        if model is not None:
            files += model.save(folder)
    return sorted(files)


def load(cls, folder: str | os.PathLike, **params: Any):
    """The retriever :func:`save` wrote into ``folder``, with settings ``params`` (``cls.get_params`` keys);
    DataError (the file named) if a file is missing or malformed, or the parts' passage ids disagree."""
    folder = Path(folder)
    path = folder / IDS_FILE
    try:
        ids = json.loads(path.read_bytes())
        pids, doc_ids = list(ids["pids"]), list(ids["doc_ids"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{path}: unreadable passage ids ({exc!r})") from None
    probe = cls(**params)
    graph = EntityGraph.load(folder / graph_folder(probe.extractor))
    bm25 = BM25Retriever.load(folder / "bm25")
    if bm25.pids_ != pids:
        raise DataError(f"{folder / 'bm25'}: its passage ids differ from {path}")
    doc_meta = read_docmeta(folder / DOCMETA_FILE) if (folder / DOCMETA_FILE).exists() else None
    dense = heading = None
    if needs(probe, "dense"):
        dense = DenseRetriever.load(folder, pids, pooling=probe.dense_pooling, cache=probe.cache)
    if needs(probe, "heading"):
        heading = DenseRetriever.load(folder, pids, pooling="heading", cache=probe.cache)
    return cls.from_parts(
        params,
        [PassageIds(p, d) for p, d in zip(pids, doc_ids)],
        graph,
        bm25,
        doc_meta=doc_meta,
        dense=dense,
        heading=heading,
    )
