r"""A persistent, self-checking search index of the user's own files: the engine behind ``aethel index``
and ``aethel search``; this module is the public face of the layer (the names below are re-exported).

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
    dense-<first|max|heading>.npy  passage (window, heading) embeddings, float32; dense-max-offsets.npy;
                            dense-<...>.json: the settings and MiniLM precision they were embedded with
    statements.json, titles.json  statement pages (aethel-statements); titles and mention graph (aethel-multihop)
    docmeta.json            each document's company, fiscal periods and filing type
                            (:func:`aethel_lite.data.docmeta.document_metadata`; hybrid methods)

Nothing is pickled. Which parts exist depends on ``--methods`` (each method's retriever names its own:
``parts()``, :func:`~aethel_lite.search.format.method_parts`); every method whose parts exist can be searched,
its retriever loading them with its own ``load`` (format 4).
Document and passage ids are stable: ``--add`` never renames another document's passages. Writing is
crash-safe (:mod:`~aethel_lite.search.atomic`); search verifies every file it reads (:mod:`~aethel_lite.search.reader`).
"""

from __future__ import annotations

from .atomic import IndexBusyError, IndexLock, Terminated, check_out
from .builder import PAUSE_ENV, PAUSE_POINTS, build_index
from .format import (
    DOCMETA_FILE,
    IDS_FILE,
    INDEX_FILE,
    INDEX_FORMAT,
    MAX_MODEL_CHARS,
    PASSAGES_FILE,
    READ_FORMATS,
    method_parts,
    read_manifest,
)
from .reader import SearchIndex, open_index

__all__ = [
    "INDEX_FORMAT",
    "MAX_MODEL_CHARS",
    "IndexBusyError",
    "Terminated",
    "check_out",
    "build_index",
    "SearchIndex",
    "open_index",
    "read_manifest",
    "method_parts",
    "IndexLock",
    "READ_FORMATS",
    "INDEX_FILE",
    "DOCMETA_FILE",
    "PASSAGES_FILE",
    "IDS_FILE",
    "PAUSE_ENV",
    "PAUSE_POINTS",
]
