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

Modules: :mod:`~aethel_lite.search.format` (format version, manifest, file digests and checks,
which parts a method reads), :mod:`~aethel_lite.search.atomic` (lock, temporary sibling folder,
atomic switch, debris), :mod:`~aethel_lite.search.sources` (input files, ``--add`` merging),
:mod:`~aethel_lite.search.builder` (:func:`build_index`), :mod:`~aethel_lite.search.reader`
(:class:`SearchIndex`, :func:`open_index`).
"""

from __future__ import annotations

from .atomic import IndexBusyError, IndexLock, Terminated, check_out
from .builder import PAUSE_ENV, PAUSE_POINTS, build_index
from .format import (DOCMETA_FILE, IDS_FILE, INDEX_FILE, INDEX_FORMAT, MAX_MODEL_CHARS, PASSAGES_FILE, READ_FORMATS,
                     method_parts, read_manifest)
from .reader import SearchIndex, _import_spacy_without_torch, open_index

__all__ = ["INDEX_FORMAT", "MAX_MODEL_CHARS", "IndexBusyError", "Terminated", "check_out", "build_index",
           "SearchIndex", "open_index", "read_manifest", "method_parts", "IndexLock", "READ_FORMATS", "INDEX_FILE",
           "DOCMETA_FILE", "PASSAGES_FILE", "IDS_FILE", "PAUSE_ENV", "PAUSE_POINTS", "_import_spacy_without_torch"]
