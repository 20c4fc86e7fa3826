"""Writing an index: the parts of every method (:class:`_Builder`) and :func:`build_index`."""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .. import __version__
from ..caching.store import text_key
from ..caching.versions import versions
from ..core.encoders import index_precision, stored_precision
from ..core.entities import Mention, entity_store, extract_entities, get_extractor, graph_filters
from ..core.graph import build_graph
from ..data.docmeta import document_metadata, write_docmeta
from ..data.ingest import check_chunking
from ..data.schema import Passage, passage_text
from ..data.statement_pages import STATEMENTS_FILE, StatementPages
from ..errors import AethelError, DataError, ParameterError
from ..evaluation.cluster import cluster_options, precompute_methods
from ..io import parse_jsonl_line, read_jsonl, shape_fault
from ..retrievers import BM25Retriever, params_json
from ..retrievers.registry import DEFAULT_METHOD, FUSIONS, make_retriever, parse_methods
from ..retrievers.titles import TITLES_FILE, mention_graph, save_titles
from .atomic import (
    IndexLock,
    Terminated,
    check_out,
    clean_debris,
    forced_deletions,
    index_identity,
    index_state,
    removal_note,
    remove_path,
    switch_into_place,
    temp_sibling,
)
from .format import (
    DOCMETA_FILE,
    IDS_FILE,
    INDEX_FILE,
    INDEX_FORMAT,
    MAX_MODEL_CHARS,
    PASSAGES_FILE,
    SHA,
    file_digest,
    method_parts,
    read_manifest,
    searchable_methods,
    verify_files,
)
from .sources import merge_sources, read_sources

__all__ = ["PAUSE_ENV", "PAUSE_POINTS", "build_index"]

#: what each dense part encodes (the step's label)
_POOLING = {
    "first": "their first 256 word pieces",
    "max": "~200-word windows",
    "heading": "their first 200 characters",
}
#: passages per entity-extraction call (progress, and the ``ner`` pause point of the test hook)
_NER_BATCH = 512
#: test hook: ``AETHEL_TEST_PAUSE=<point>`` makes ``aethel index`` stop at that point, write
#: ``$AETHEL_TEST_PAUSE_FILE`` and wait until a signal arrives or that file is deleted
PAUSE_ENV = "AETHEL_TEST_PAUSE"
PAUSE_POINTS = ("ner", "passages", "manifest")


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


_ENTITY_ROW = {SHA: str, "mentions": [(str, str, str, int, int)]}


def _stored_mentions(path: Path) -> dict[str, list]:
    """text key → the mentions an index stored (``entities-<extractor>.jsonl``); DataError naming the file and line
    when a row is not of :data:`_ENTITY_ROW`'s shape or a mention's offsets are not ``0 <= start <= end``."""
    out = {}
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(f"{path}:{lineno}: not UTF-8 text (byte {exc.start} of the line)") from None
            row = parse_jsonl_line(line, path, lineno)
            if row is None:
                continue
            fault = shape_fault(row, _ENTITY_ROW, f"{path}:{lineno}")
            bad = (
                next((m for m in row.get("mentions", ()) if not 0 <= m[3] <= m[4]), None)
                if not fault
                else None
            )
            if fault or bad is not None:
                raise DataError(
                    fault or f"{path}:{lineno}: a mention's offsets {bad[3]}..{bad[4]} are out of order"
                )
            out[row[SHA]] = [Mention(*m) for m in row["mentions"]]
    return out


def _model_text(text: str) -> str:
    return text[:MAX_MODEL_CHARS]


class _Builder:
    """Writes one index into a temporary folder (see :func:`build_index`)."""

    def __init__(
        self,
        tmp: Path,
        passages: list,
        methods: list[str],
        *,
        old_dir: Path | None,
        old_info: dict | None,
        n_process: int,
        progress: bool,
        log: Callable[[str], None],
        old_passages: list | None = None,
        cluster: dict | None = None,
    ):
        self.tmp = tmp
        self.old_passages = old_passages or []
        self.passages = passages
        self.methods = methods
        self.old_dir = old_dir
        self.old_info = old_info
        self.n_process = n_process
        self.progress = progress
        self.log = log
        self.cluster = (
            cluster  # cluster_options(): the passage work on a Dask cluster first (None: in-process)
        )
        self.parts: dict[str, dict] = {}
        self.pids = [p.pid for p in passages]

    @contextmanager
    def step(self, desc: str) -> Iterator[None]:
        """A labelled one-step progress bar around each step of the build: the graph, BM25's index (about 6 s for
        5,000 filing pages on two cores), the documents' covers, writing the passages and the manifest, which have no
        bar of their own, and each dense part, whose encoder bar appears below it only once MiniLM is loaded (on
        first use it is exported to ONNX first: half a minute). The label is on screen while the step runs, the
        time it took once it is done."""
        from tqdm.auto import tqdm

        bar = tqdm(
            total=1,
            desc=desc,
            bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}",
            disable=not self.progress,
        )
        try:
            yield
            bar.update(1)
        finally:
            bar.close()

    def _old_part(self, name: str) -> dict | None:
        return None if self.old_info is None else self.old_info["parts"].get(name)

    def write_passages(self) -> None:
        with self.step(f"writing {len(self.passages):,} passages"):
            self._write_passages()

    def _write_passages(self) -> None:
        half = len(self.passages) // 2
        with open(self.tmp / PASSAGES_FILE, "w", encoding="utf-8", newline="\n") as fh:
            for i, p in enumerate(self.passages):
                if i == half:
                    fh.flush()
                    _checkpoint("passages")
                fh.write(json.dumps(p.to_dict(), sort_keys=True, ensure_ascii=False) + "\n")
        with open(self.tmp / IDS_FILE, "w", encoding="utf-8", newline="\n") as fh:
            json.dump(
                {"pids": self.pids, "doc_ids": [p.doc_id for p in self.passages]}, fh, ensure_ascii=False
            )
            fh.write("\n")
        self.parts["passages"] = {"files": [PASSAGES_FILE, IDS_FILE]}

    def mentions(self, base: str) -> list[list]:
        """Raw mentions of every passage for extractor ``base`` (stored, reused, or extracted)."""
        from tqdm.auto import tqdm

        texts = [_model_text(passage_text(p)) for p in self.passages]
        keys = [text_key(t) for t in texts]
        name = f"entities-{base}.jsonl"
        known = {} if self._old_part(f"entities-{base}") is None else _stored_mentions(self.old_dir / name)
        out: list = [known.get(k) for k in keys]
        todo = [i for i, m in enumerate(out) if m is None]
        stored = self._in_store(base, [keys[i] for i in todo])
        bar = tqdm(
            total=len(todo),
            desc=f"entities ({base}): {len(keys) - len(todo)} from the index, {stored} found in the store, "
            f"{len(set(keys[i] for i in todo)) - stored} to compute",
            unit=" passages",
            disable=not self.progress or not todo,
        )
        for start in range(0, max(len(todo), 1), _NER_BATCH):
            batch = todo[start : start + _NER_BATCH]
            if batch:
                found = extract_entities(
                    [texts[i] for i in batch], base, cache=True, n_process=self.n_process, progress=False
                )
                for i, ms in zip(batch, found):
                    out[i] = ms
                bar.update(len(batch))
            if start == 0:
                _checkpoint("ner")
        bar.close()
        with open(self.tmp / name, "w", encoding="utf-8", newline="\n") as fh:
            for pid, key, ms in zip(self.pids, keys, out):
                rows = [[m.text, m.key, m.label, m.start, m.end] for m in ms]
                fh.write(
                    json.dumps(
                        {"pid": pid, SHA: key, "mentions": rows}, ensure_ascii=False, separators=(",", ":")
                    )
                    + "\n"
                )
        self.parts[f"entities-{base}"] = {
            "files": [name],
            "extractor": base,
            "n_from_index": len(keys) - len(todo),
        }
        return out

    def _in_store(self, base: str, keys: list[str]) -> int:
        """How many distinct ``keys`` the per-passage store of extractor ``base`` holds (for the bar)."""
        if not self.progress or not keys:
            return 0
        unique = list(dict.fromkeys(keys))
        with entity_store(base) as store:
            return sum(len(store.get_many(unique[i : i + 10_000])) for i in range(0, len(unique), 10_000))

    def graph(self, extractor: str, raw: list[list]) -> None:
        ext = get_extractor(extractor)
        folder = f"graph-{extractor}"
        with self.step(f"{folder}: the entity graph of {len(self.pids):,} passages"):
            mentions = ext.filter(raw) if hasattr(ext, "filter") else raw
            stop, links = graph_filters(mentions, ext)
            graph = build_graph(self.pids, mentions, stop=stop, alias_pairs=links)
            graph.save(self.tmp / folder)
        self.parts[folder] = {
            "files": [f"{folder}/graph.json", f"{folder}/graph.npz"],
            "extractor": extractor,
            "extractor_config": ext.config(),
            "n_entities": graph.n_entities,
        }

    def bm25(self) -> None:
        with self.step(f"bm25: the BM25 index of {len(self.passages):,} passages"):
            r = BM25Retriever().fit(self.passages)
            folder = r.save(self.tmp)
        files = sorted(p.relative_to(self.tmp).as_posix() for p in folder.rglob("*") if p.is_file())
        self.parts["bm25"] = {"files": files, "config": params_json(r)}

    def dense(self, method: str) -> None:
        r = make_retriever(method, progress=self.progress)
        r.set_params(
            precision=index_precision()
        )  # recorded in the part's store_config; search encodes with it
        name = f"dense-{r.pooling}"
        with self.step(f"{name}: MiniLM vectors of {len(self.passages):,} passages ({_POOLING[r.pooling]})"):
            self._dense(r, name)

    def _dense(self, r: Any, name: str) -> None:
        import numpy as np

        chunks = [[_model_text(c) for c in r.passage_chunks(p)] for p in self.passages]
        flat = [c for cs in chunks for c in cs]
        rows: dict[str, Any] = {}
        old = self._old_part(name)
        store_config = (
            old.get("store_config")
            if old is not None and r.store_config_matches(old.get("store_config"))
            else None
        )
        if store_config is not None:  # the old index's embeddings, by text (verified by build_index)
            emb = type(r).load(self.old_dir, **r.get_params()).embeddings_
            old_chunks = [_model_text(c) for p in self.old_passages for c in r.passage_chunks(p)]
            if emb.shape[0] == len(old_chunks):
                rows = {text_key(c): emb[i] for i, c in enumerate(old_chunks)}
        keys = [text_key(c) for c in flat]
        todo = list(dict.fromkeys(k for k in keys if k not in rows))
        if todo or store_config is None:  # new texts: the model is loaded (and its store searched)
            by_key = dict(zip(keys, flat))
            rows.update(zip(todo, r.embed([by_key[k] for k in todo])))
            store_config = r.embedding_store_config()
        counts = np.fromiter(map(len, chunks), dtype=np.int64, count=len(chunks))
        r.use_embeddings(
            self.pids,
            np.stack([rows[k] for k in keys]).astype("<f4", copy=False),
            np.concatenate(([0], np.cumsum(counts)[:-1])),
            [p.doc_id for p in self.passages],
        )
        files = r.save(self.tmp)
        self.parts[name] = {
            "files": files,
            "config": params_json(r),
            "store_config": store_config,
            "shape": list(r.embeddings_.shape),
        }

    def dense_precision(self) -> str | None:
        """MiniLM's precision in this index's dense parts (None without one): what its versions record."""
        found = [stored_precision(p["store_config"]) for p in self.parts.values() if "store_config" in p]
        return found[0] if found else None

    def docmeta(self) -> None:
        """``docmeta.json``: :func:`~aethel_lite.data.docmeta.document_metadata` of the passages."""
        n = len({p.doc_id for p in self.passages})
        with self.step(f"docmeta: company, fiscal period and form of {n:,} documents"):
            metas = document_metadata(self.passages)
            write_docmeta(self.tmp / DOCMETA_FILE, metas)
        self.parts["docmeta"] = {"files": [DOCMETA_FILE], "n_documents": len(metas)}

    def statements(self) -> None:
        """``statements.json``: the statement pages of the passages and their rows' words (:class:`StatementPages`)."""
        with self.step(f"statements: the financial-statement pages among {len(self.passages):,} passages"):
            pages = StatementPages().fit(self.passages)
            pages.save(self.tmp / STATEMENTS_FILE, self.pids)
        self.parts["statements"] = {"files": [STATEMENTS_FILE], "n_pages": len(pages.kind_)}

    def titles(self) -> None:
        """``titles.json``: the passages' titles and their mention graph (``aethel-multihop``,
        :func:`~aethel_lite.retrievers.titles.mention_graph`)."""
        with self.step(f"titles: the titles of {len(self.passages):,} passages and the passages naming them"):
            titles = [p.title for p in self.passages]
            graph = mention_graph(titles, (p.text for p in self.passages))
            save_titles(self.tmp / TITLES_FILE, titles, graph)
        self.parts["titles"] = {"files": [TITLES_FILE], "n_edges": int(graph.nnz // 2)}

    def run(self) -> None:
        long = [p.pid for p in self.passages if len(passage_text(p)) > MAX_MODEL_CHARS]
        if long:
            warnings.warn(
                f"{len(long)} passages are longer than {MAX_MODEL_CHARS:,} characters (first: {long[0]!r}); "
                f"entity extraction and dense encoding read their first {MAX_MODEL_CHARS:,} characters only "
                "(BM25 and the stored text keep all of it)",
                RuntimeWarning,
                stacklevel=3,
            )
        self.write_passages()
        base_methods = list(dict.fromkeys(b for m in self.methods for b in FUSIONS.get(m, (m,))))
        needed = list(dict.fromkeys(p for m in base_methods for p in method_parts(m)))
        extractors = [p.partition("-")[2] for p in needed if p.startswith("graph-")]
        if self.cluster is not None:  # the steps below then find every entity and vector in the stores
            old = {text_key(passage_text(p)) for p in self.old_passages}  # theirs are in the index already
            precompute_methods(
                [p for p in self.passages if text_key(passage_text(p)) not in old],
                base_methods,
                max_chars=MAX_MODEL_CHARS,
                progress=self.progress,
                log=self.log,
                dense={"precision": index_precision()},  # the vectors the index then finds in the store
                **self.cluster,
            )
        raw: dict[str, list] = {}
        for ext in extractors:
            base = (
                "ner" if ext in ("ner", "ner3") else ext
            )  # the extractor whose raw mentions ``ext`` filters
            if base not in raw:
                raw[base] = self.mentions(base)
            self.graph(ext, raw[base])
        if not extractors:
            _checkpoint("ner")
        if "bm25" in needed:
            self.bm25()
        for pooling, m in (("first", "dense"), ("max", "dense-max"), ("heading", "dense-heading")):
            if f"dense-{pooling}" in needed:  # each dense part as its dense method saves it
                self.dense(m)
        if "docmeta" in needed:
            self.docmeta()
        if "statements" in needed:
            self.statements()
        if "titles" in needed:
            self.titles()

    def write_manifest(self, info: dict) -> None:
        n = sum(len(part["files"]) for part in self.parts.values())
        with self.step(f"{INDEX_FILE}: the checksums of {n} files"):
            self._write_manifest(info)

    def _write_manifest(self, info: dict) -> None:
        files = {
            name: file_digest(self.tmp / name, lines=name.endswith(".jsonl"))
            for part in self.parts.values()
            for name in part["files"]
        }
        info["files"] = dict(sorted(files.items()))
        info["parts"] = {k: v for k, v in sorted(self.parts.items()) if k != "passages"}
        info["searchable"] = searchable_methods(info["parts"])
        text = json.dumps(info, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        half = len(text) // 2
        with open(self.tmp / INDEX_FILE, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text[:half])
            fh.flush()
            _checkpoint("manifest")
            fh.write(text[half:])


def build_index(
    paths: Sequence[str | os.PathLike],
    out: str | os.PathLike,
    *,
    methods: Sequence[str] | None = (DEFAULT_METHOD,),
    chunk_words: int | None = None,
    progress: bool = True,
    add: bool = False,
    force: bool = False,
    follow_symlinks: bool = False,
    n_process: int = 1,
    log: Callable[[str], None] | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
) -> dict:
    """Index files into the folder ``out`` (a new index, a rebuilt one, or ``add`` to an existing one).

    Parameters
    ----------
    paths : sequence of path-like
        Files (.txt, .md, .markdown, .pdf, .jsonl passages) and folders (walked recursively).
    out : path-like
        The index folder (:func:`check_out`).
    methods : sequence of str, optional
        Methods to make searchable (:func:`method_parts`); with ``add``: ``None`` or the index's own.
    chunk_words : int, optional
        Words per window cut from pages/files; with ``add``: ``None`` or the index's value.
    progress : bool
    add : bool
        Append new documents, replace changed ones in place, keep the rest; stored entities and
        embeddings are reused, so only new passages reach NER and the encoder.
    force : bool
        Replace a folder that holds files other than an index.
    follow_symlinks : bool
        Follow links that leave the folders given (default: skipped with a warning).
    n_process : int
        spaCy worker processes for entity extraction.
    log : callable, optional
        Receives one-line notes (removed debris, replaced documents).
    scheduler, workers : optional
        Entity extraction and encoding on a Dask cluster first (:mod:`aethel_lite.evaluation.cluster`).

    Returns
    -------
    dict
        ``format``, ``n_passages``, ``n_documents``, ``methods``, ``chunk_words``, ``versions``,
        ``index``, ``searchable``, ``added``/``replaced``/``unchanged`` (source ids) and ``seconds``.

    Raises
    ------
    ParameterError, IndexBusyError, DataError
        Bad arguments (before any work); another writer of ``out``; unreadable inputs or index.
    KeyboardInterrupt, Terminated
        ``out`` is as it was and nothing is left behind; ``index_state`` of the exception is ``"kept"``,
        ``"none"`` (no previous index) or ``"complete"`` (already switched into place).
    """
    t0 = time.perf_counter()
    log = log or (lambda msg: None)
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if not paths:
        raise ParameterError("no files or folders to index")
    if isinstance(n_process, bool) or not isinstance(n_process, int) or n_process < 1:
        raise ParameterError(f"--n-process must be a positive integer, got {n_process!r}")
    if methods is not None:
        methods = parse_methods(list(methods))
        for m in methods:
            method_parts(m)  # a method an index cannot hold: a clear error before any work
    check_chunking(chunk_words)
    cluster = cluster_options(scheduler, workers)
    given = out
    out = check_out(
        out, force=force, add=add, inputs=paths
    )  # the real path: a link's target is locked and written
    before = index_identity(out)  # what an interruption is reported against (index_state)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with IndexLock(out):
            clean_debris(out, log)
            if force:
                forced_deletions(out, log)
            old_info = old_passages = None
            if add:
                old_info = read_manifest(out)
                if methods is not None and list(methods) != list(old_info["methods"]):
                    raise ParameterError(
                        f"--methods {','.join(methods)} differs from the index's "
                        f"({','.join(old_info['methods'])}); --add keeps them: rebuild to change them"
                    )
                if chunk_words is not None and chunk_words != old_info.get("chunk_words"):
                    raise ParameterError(
                        f"--chunk-words {chunk_words} differs from the index's ({old_info.get('chunk_words')}); "
                        "--add keeps it: rebuild to change it"
                    )
                verify_files(out, old_info, old_info["files"])
                methods, chunk_words = list(old_info["methods"]), old_info.get("chunk_words")
                old_passages = [Passage.from_dict(row) for row in read_jsonl(out / PASSAGES_FILE)]
            methods = list(methods or parse_methods([DEFAULT_METHOD]))
            known = {e["id"]: e[SHA] for e in old_info["sources"]} if old_info else None
            sources, summary = merge_sources(
                old_info,
                old_passages or [],
                read_sources(paths, chunk_words, follow_symlinks, progress, known),
            )
            passages = [p for s in sources for p in s.passages]
            if not passages:
                raise DataError(
                    f"no text found in {', '.join(map(str, paths))} (empty files or image-only PDFs)"
                )
            seen: dict[str, str] = {}
            for s in sources:
                for p in s.passages:
                    if p.pid in seen:
                        raise DataError(f"passage id {p.pid!r} occurs twice ({seen[p.pid]} and {s.path})")
                    seen[p.pid] = s.path
            for name in summary["replaced"]:
                log(f"replaced {name} (its file changed)")
            tmp = temp_sibling(out)
            try:
                builder = _Builder(
                    tmp,
                    passages,
                    methods,
                    old_dir=out if add else None,
                    old_info=old_info,
                    n_process=n_process,
                    progress=progress,
                    log=log,
                    old_passages=old_passages,
                    cluster=cluster,
                )
                builder.run()
                inputs = list(old_info["inputs"]) if old_info else []
                inputs += [
                    a for a in (os.path.abspath(p) for p in paths) if a not in inputs
                ]  # pasteable from anywhere

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
                    "versions": versions(builder.dense_precision()),
                }
                builder.write_manifest(info)
                switch_into_place(tmp, out)  # a Ctrl-C now is delivered after the switch
            finally:
                problem = remove_path(tmp)  # the unfinished index, or after the switch the previous one
                if problem is not None:
                    log(removal_note(tmp, problem, "this run's temporary folder"))
    except (KeyboardInterrupt, Terminated) as exc:
        exc.index_state = index_state(out, before)  # read from the folder, not from how far the code got
        raise
    except OSError as exc:  # a full disk, a read-only or vanished folder, the cache: one line naming the file
        if isinstance(exc, AethelError):
            raise
        where = exc.filename if exc.filename is not None else out
        kept = {
            "complete": "the new index is in place",
            "kept": "the previous index is kept",
            "none": "no index was written",
        }[index_state(out, before)]
        raise DataError(f"{where}: {exc.strerror or exc} (writing the index {given}; {kept})") from exc
    keys = ("format", "n_passages", "n_documents", "methods", "chunk_words", "versions", "searchable")
    return {
        **{k: info[k] for k in keys},
        "index": str(given),
        **summary,
        "seconds": round(time.perf_counter() - t0, 3),
    }
