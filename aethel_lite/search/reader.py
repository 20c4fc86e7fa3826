"""Reading an index for search: :class:`SearchIndex` and :func:`open_index`."""

from __future__ import annotations

import json
import os
import re
import shlex
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..core import ner_process
from ..core.encoders import PRECISIONS, stored_precision
from ..core.entities import get_extractor
from ..data.docmeta import document_metadata, read_docmeta
from ..data.runs import RUN_DEPTH, fuse_runs
from ..data.schema import Passage, Query
from ..errors import DataError, ParameterError, check_k
from ..explain import attribution
from ..explain.attribution import EXPLAIN_DEPTH
from ..io import check_utf8, parse_jsonl_line, read_npy, shape_fault
from ..retrievers import DenseRetriever
from ..retrievers.registry import DEFAULT_METHOD, FUSIONS, graph_path, make_retriever
from .filters import Filters, cover_tickers, select_documents
from .format import (
    DOCMETA_FILE,
    IDS_FILE,
    INDEX_FILE,
    PASSAGES_FILE,
    SHA,
    file_digest,
    method_parts,
    read_manifest,
    read_verified,
    rebuild_hint,
    searchable_methods,
    verify_files,
)
from .snippet import FUNCTION_WORDS, best_snippet

__all__ = ["SearchIndex", "open_index", "matched"]

#: what a line of ``passages.jsonl`` holds at least (:func:`~aethel_lite.io.shape_fault`)
_PASSAGE = {"pid": str, "doc_id": str, "text": str}

_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in FUNCTION_WORDS}


def matched(question: str, hits: Iterable[dict]) -> bool:
    """Whether any hit's text (or title) holds a word of ``question`` other than a function word
    ("the", "who", ...), compared in lower case. False says that nothing in the index matched:
    the hits are ranked by scores that tie (often all 0) and are not answers."""
    words = _words(question)
    return any(words & _words(f"{hit.get('title') or ''} {hit.get('text') or ''}") for hit in hits)


def _page(meta: dict) -> tuple[Any, int | None]:
    """``(page, page_index)``: a PDF page as a viewer numbers it (1-based) and as the pid does (0-based); a page
    a passage file gives that is not an index is shown as given (``page_index`` None)."""
    page = meta.get("page")
    if isinstance(page, int) and not isinstance(page, bool) and page >= 0:
        return page + 1, page
    return page, None


def _link(source: Any, page: Any, index: int | None) -> str | None:
    """``file:///…`` for an absolute source path, with ``#page=N`` (1-based, as PDF viewers read it) for a PDF page."""
    if not isinstance(source, str) or not os.path.isabs(source):
        return None
    return Path(source).as_uri() + (f"#page={page}" if index is not None else "")


def _hit(rank: int, p, score: float, provenance: list, question: str) -> dict:
    meta = p.meta or {}
    page, index = _page(meta)
    source = meta.get("source", meta.get("path"))
    snippet = best_snippet(question, p.text)
    return {
        "rank": rank,
        "pid": p.pid,
        "doc_id": p.doc_id,
        "page": page,
        "page_index": index,
        "source": source,
        "link": _link(source, page, index),
        "score": float(score),
        "text": p.text,
        "snippet": snippet.to_dict(p.text) if snippet is not None else None,
        "provenance": [
            {"seed": e.seed, "entity": e.entity, "via": e.via, "weight": float(e.weight)} for e in provenance
        ],
    }


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
            line = self._lines[i]
            row = parse_jsonl_line(
                line.decode("utf-8") if isinstance(line, bytes) else line, self._path, i + 1
            )
            fault = None if row is None else shape_fault(row, _PASSAGE, f"{self._path}:{i + 1}")
            if row is None or fault is not None:  # only a file that passed its SHA-256 is here
                raise DataError(fault or f"{self._path}:{i + 1}: a blank line where a passage belongs")
            try:
                p = self._cache[i] = Passage.from_dict(row)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise DataError(f"{self._path}:{i + 1}: malformed passage ({exc})") from None
        return p


class SearchIndex:
    """An index folder opened for searching: files verified, retrievers restored without refitting.

    Parameters
    ----------
    index_dir : path-like
        A folder written by :func:`build_index`.
    methods : sequence of str, optional
        Methods to prepare now (their files are verified here); others are loaded on first use.
    questions : sequence of str, optional
        Questions about to be asked: a graph method's spaCy NER tags them in another process
        while the index opens (:mod:`aethel_lite.core.ner_process`; the same entities).

    Raises
    ------
    DataNotFoundError, DataError, ParameterError
        No index at ``index_dir``; bad ``index.json``, or a file whose size, line count or SHA-256
        differs from it; a method the index was not built for (the rebuild command is named).
    """

    def __init__(
        self, index_dir: str | os.PathLike, methods: Sequence[str] = (), questions: Sequence[str] = ()
    ) -> None:
        self.dir = Path(index_dir)
        self.info = read_manifest(self.dir)
        self._passages: list | None = None
        self._parts: dict[str, Any] = {}
        self._verified: set[str] = set()
        for m in methods:
            self._check_method(m)
        if questions:
            self._tag_early(methods, questions)
        for m in methods:
            self._retrievers(m)

    def _tag_early(self, methods: Sequence[str], questions: Sequence[str]) -> None:
        """Hand ``questions`` to another process that tags them with each graph method's extractor (one
        :func:`~aethel_lite.core.ner_process.warm_up` began if it has the settings); end those not needed."""
        for m in methods:
            for r in map(make_retriever, FUSIONS.get(m, (m,))):
                path = graph_path(r)  # the paper retriever it holds, if any
                if path is not None:
                    ner_process.start(get_extractor(r.get_params()[path + "extractor"]), questions)
        ner_process.end_unused()

    def _check_method(self, method: str) -> list[str]:
        parts = method_parts(method)
        missing = [p for p in parts if p not in self.info["parts"]]
        if missing:
            searchable = ", ".join(searchable_methods(self.info["parts"])) or "none"
            methods = list(dict.fromkeys([*self.info["methods"], method]))
            why = (
                f"was built for it by an older aethel-lite and lacks {', '.join(missing)}"
                if method in self.info["methods"]
                else "was built without it"
            )
            default = " (the default)" if method == DEFAULT_METHOD else ""
            raise ParameterError(
                f"--method {method}{default}: the index {self.dir} {why} (--methods "
                f"{','.join(self.info['methods'])}); it answers --method {searchable}; or rebuild it with "
                f"`aethel index {' '.join(map(shlex.quote, self.info['inputs']))} --out {shlex.quote(str(self.dir))} "
                f"--methods {','.join(methods)}`"
            )
        return parts

    def _verify(self, names: Iterable[str]) -> None:
        todo = [n for n in names if n not in self._verified]
        verify_files(self.dir, self.info, todo)
        self._verified.update(todo)

    @property
    def passages(self) -> Sequence:
        """The indexed passages, in corpus order (``passages.jsonl`` verified first; a passage is
        parsed from its line when first used, so a search parses only its hits)."""
        if self._passages is None:
            data = read_verified(self.dir, self.info, PASSAGES_FILE)
            self._verified.add(PASSAGES_FILE)
            self._passages = _LazyPassages(data.splitlines(), self.dir / PASSAGES_FILE)
        return self._passages

    @property
    def ids(self) -> tuple[list[str], list[str]]:
        """``(pids, doc_ids)`` of the passages in corpus order, from ``ids.json`` (verified)."""
        if "ids" not in self._parts:
            try:
                ids = json.loads(read_verified(self.dir, self.info, IDS_FILE))
            except (ValueError, RecursionError) as exc:
                raise DataError(f"{self.dir / IDS_FILE}: malformed JSON ({exc})") from exc
            n = self.info["n_passages"]
            if not (
                isinstance(ids, dict)
                and isinstance(ids.get("pids"), list)
                and isinstance(ids.get("doc_ids"), list)
                and len(ids["pids"]) == n == len(ids["doc_ids"])
            ):
                raise DataError(
                    f"{self.dir / IDS_FILE}: expected {n} pids and doc_ids; {rebuild_hint(self.dir, self.info)}"
                )
            self._parts["ids"] = (ids["pids"], ids["doc_ids"])
        return self._parts["ids"]

    def _check_parts(self, parts: Sequence[str]) -> None:
        """Before a method's retriever loads its files: each dense part was embedded with the installed model
        configuration (its recorded precision), each graph part built by the installed extractor (a warning)."""
        for name in parts:
            part = self.info["parts"][name]
            kind, _, which = name.partition("-")
            if kind == "dense":
                stored = part.get("store_config")
                model = DenseRetriever(pooling=which, precision=stored_precision(stored))
                if model.precision not in PRECISIONS or stored != model.embedding_store_config():
                    raise DataError(
                        f"{self.dir}: the index was embedded with another model configuration than the installed "
                        f"one; {rebuild_hint(self.dir, self.info)}"
                    )
                path = self.dir / f"{name}.npy"  # its width, from the header: the questions' is the model's
                try:
                    shape = read_npy(path, "embeddings", mmap_mode="r").shape
                    if shape[1:] != (stored["dim"],):
                        raise DataError(
                            f"{path}: embeddings of shape {shape}, the model's are {stored['dim']} wide"
                        )
                except DataError as exc:
                    raise DataError(f"{exc}; {rebuild_hint(self.dir, self.info)}") from None
                model.start_encoder()  # ONNX Runtime prepares the weights while the rest opens (spaCy above all)
            elif kind == "graph":
                installed = get_extractor(which).config()
                if part.get("extractor_config") not in (None, installed):
                    warnings.warn(
                        f"{self.dir}: the entity extractor differs from the one that built the index "
                        f"(installed: {installed}); question entities may not match; "
                        f"{rebuild_hint(self.dir, self.info)}",
                        RuntimeWarning,
                        stacklevel=4,
                    )

    def _base(self, method: str):
        """The fitted retriever of a base method, loaded from the index (its own ``load``: nothing is fitted)."""
        key = ("retriever", method)
        if key in self._parts:
            return self._parts[key]
        parts = self._check_method(method)
        self._verify([IDS_FILE, *(f for p in parts for f in self.info["parts"][p]["files"])])
        self._check_parts(parts)
        r = make_retriever(method)
        try:
            fitted = type(r).load(self.dir, **r.get_params(deep=False))
        except DataError as exc:
            raise DataError(f"{exc}; {rebuild_hint(self.dir, self.info)}") from None
        if fitted.pids_ != self.ids[0]:
            raise DataError(
                f"{self.dir}: the passage ids of {method}'s parts differ from {IDS_FILE}; "
                f"{rebuild_hint(self.dir, self.info)}"
            )
        self._parts[key] = fitted
        return fitted

    def _retrievers(self, method: str) -> list:
        return [self._base(m) for m in FUSIONS.get(method, (method,))]

    def iter_search(
        self,
        questions: Sequence[str],
        *,
        k: int = 5,
        method: str = DEFAULT_METHOD,
        explain: bool = False,
        sources: bool = True,
        documents: Sequence[str] | None = None,
    ):
        """:meth:`search`'s answers one question at a time (all checked first), each yielded as soon as
        it is answered (flat memory; a graph question takes the single-query PageRank path)."""
        questions = list(questions)
        self._check_questions(questions, k, method)
        pool = self._pool(documents)
        for q in questions:
            yield self._answer([q], k, method, explain, sources, pool)[0]

    def _check_questions(self, questions: list, k: int, method: str) -> None:
        check_k(k, "-k")
        for i, q in enumerate(questions, start=1):
            if not isinstance(q, str) or not q.strip():
                raise ParameterError(f"question {i}: empty question")
            check_utf8(q, f"question {i}")
        self._check_method(method)

    def search(
        self,
        questions: Sequence[str],
        *,
        k: int = 5,
        method: str = DEFAULT_METHOD,
        explain: bool = False,
        sources: bool = True,
        documents: Sequence[str] | None = None,
    ) -> list[list[dict]]:
        """Ranked hits for each question (one list per question, ``k`` hits at most).

        ``documents`` (doc_ids, e.g. :meth:`select`'s) restricts the search to their passages before ranking: they
        are each retriever's closed pool (``search(..., pool=...)``, as ``aethel eval``'s closed setting; a graph
        method runs PageRank on their subgraph, the others rank their scores among them).

        Each hit: ``rank``, ``pid``, ``doc_id``, ``page`` (a PDF page as a viewer numbers it, 1-based) and
        ``page_index`` (0-based, as in the pid), ``source`` (the file it came from, an absolute path) and ``link``
        (``file:///…#page=N``), ``score``, ``text``, ``snippet`` (the lines of ``text`` that best match the question,
        :func:`~aethel_lite.search.snippet.best_snippet`: ``{"text", "start", "end", "matches", "header"}``, offsets
        into ``text``; None for a blank text) and ``provenance`` (graph methods: the question entity, the graph
        entity it reached and how, and the weight; for a hybrid, with ``sources``, first the seed sources
        that brought the hit, largest share first: one more PageRank solve per source). With ``explain=True``
        also ``explain_node`` (``"passage"``, or ``"document"`` for ``aethel-hybrid``) and ``explain``:
        ``[{"seed", "entity", "via", "share"}, ...]``, the exact part of that node's PageRank each seed
        contributes (:meth:`GraphRetriever.explain`; empty for BM25 and dense hits and passages PPR does not reach).

        Raises
        ------
        ParameterError
            An empty question (its position is named), ``k < 1``, an unknown method or one the
            index was not built for; ``documents`` empty or naming a document the index does not hold.
        """
        questions = list(questions)
        self._check_questions(questions, k, method)
        return self._answer(questions, k, method, explain, sources, self._pool(documents))

    def docmeta(self) -> dict:
        """``doc_id`` → :class:`~aethel_lite.data.docmeta.DocMeta` of the indexed documents: ``docmeta.json``
        (verified) when the index holds it (a hybrid method's part), else read from the passages' first pages now
        (:func:`~aethel_lite.data.docmeta.document_metadata`, as ``aethel index`` would write it; every passage is
        parsed)."""
        if "docmeta" not in self._parts:
            if DOCMETA_FILE in self.info["files"]:
                self._verify([DOCMETA_FILE])
                metas = read_docmeta(self.dir / DOCMETA_FILE)
            else:
                metas = document_metadata(self.passages)
            self._parts["docmeta"] = metas
        return self._parts["docmeta"]

    def select(self, filters: Filters) -> list[str]:
        """The documents that match ``filters``, in corpus order (:func:`~aethel_lite.search.filters.select_documents`;
        ParameterError naming the flag when none does)."""
        return select_documents(filters, self.docmeta(), self.ids[1], self.info["sources"], self.tickers)

    def tickers(self) -> dict[str, list[str]]:
        """Trading symbol → the documents whose cover registers it (:func:`~aethel_lite.search.filters.cover_tickers`:
        no index file records symbols, so they are read from the passages, each parsed, on first call)."""
        if "tickers" not in self._parts:
            self._parts["tickers"] = cover_tickers(self.passages)
        return self._parts["tickers"]

    def _pool(self, documents: Sequence[str] | None) -> list[str] | None:
        """The pids of ``documents`` in corpus order (None: every passage, the open corpus)."""
        if documents is None:
            return None
        wanted = set(documents)
        pids, doc_ids = self.ids
        unknown = sorted(wanted - set(doc_ids))
        if unknown or not wanted:
            raise ParameterError(
                f"documents: {', '.join(map(repr, unknown))} not in the index {self.dir}"
                if unknown
                else "documents: none given (None searches them all)"
            )
        pool = [pid for pid, d in zip(pids, doc_ids) if d in wanted]
        return None if len(pool) == len(pids) else pool

    def _answer(
        self,
        questions: list[str],
        k: int,
        method: str,
        explain: bool,
        sources: bool,
        pool: list[str] | None = None,
    ) -> list[list[dict]]:
        """:meth:`search` of checked questions, among the passages ``pool`` (None: all)."""
        if not questions:
            return []
        retrievers = self._retrievers(method)
        queries = [Query(qid=f"q{i}", text=q, gold=frozenset()) for i, q in enumerate(questions)]
        pools = None if pool is None else {q.qid: pool for q in queries}
        run, explained = _ranking(retrievers, queries, k, method, sources or explain, pools)
        where = self._where()
        passages = self.passages
        out = []
        for q in queries:
            provenance = explained.get(q.qid, {})
            hits = [
                _hit(rank, passages[where[pid]], score, provenance.get(pid, []), q.text)
                for rank, (pid, score) in enumerate(run.get(q.qid, [])[:k], start=1)
            ]
            if explain:
                shares: dict = {}
                for r in retrievers:
                    if hasattr(r, "traced_search"):  # a PageRank retriever
                        found_shares = attribution.explain(r, q.text, [h["pid"] for h in hits], pool=pool)
                        for pid, found in found_shares.items():
                            shares.setdefault(pid, []).extend(found)
                node = "document" if any(map(attribution.explains_documents, retrievers)) else "passage"
                for h in hits:
                    h["explain"] = [s.to_dict() for s in shares.get(h["pid"], [])]
                    h["explain_node"] = node  # whose PageRank the shares split: the hit's or its document's
            out.append(hits)
        return out

    def _where(self) -> dict[str, int]:
        """pid → its line in ``passages.jsonl`` (built once per open index)."""
        if "where" not in self._parts:
            self._parts["where"] = {pid: i for i, pid in enumerate(self.ids[0])}
        return self._parts["where"]


def _ranking(retrievers: list, queries: list, k: int, method: str, sources: bool = True, pool=None):
    """The run of ``method`` (a fusion's :func:`~aethel_lite.data.runs.fuse_runs` as deep as ``aethel
    eval``'s, so the same top 10) and the graph retrievers' provenance of their hits (qid → pid → records; a
    hybrid's seed-source records only with ``sources``); ``pool``: qid → candidate pids (None: the open corpus)."""
    depth = max(k, RUN_DEPTH) if method in FUSIONS else max(k, 10)
    runs, provenance = [], {}
    for r in retrievers:
        if hasattr(r, "traced_search"):  # a PageRank retriever: its traces explain each hit
            run, found = r.traced_search(queries, k=depth, pool=pool)
            result = attribution.attribute(r, run, found, k=depth, depth=EXPLAIN_DEPTH, sources=sources)
            runs.append(run)
            for qid, hits in result.provenance.items():
                provenance.setdefault(qid, {}).update(hits)
        else:
            runs.append(r.search(queries, k=depth, pool=pool))
    return (fuse_runs(runs, name=method, depth=depth) if method in FUSIONS else runs[0]), provenance


def open_index(index_dir: str | os.PathLike, method: str, questions: Sequence[str] = ()) -> SearchIndex:
    """Open an index for ``method`` with every file it reads verified; the first step of ``aethel search``.

    Parameters
    ----------
    index_dir : path-like
        A folder written by :func:`build_index`.
    method : str
        A method the index holds (see :func:`method_parts`).
    questions : sequence of str, optional
        The questions about to be asked (tagged meanwhile; see :class:`SearchIndex`).

    Returns
    -------
    SearchIndex
        Its retrievers restored and its passages verified, so answering raises no file error.

    Raises
    ------
    DataNotFoundError, DataError, ParameterError
        As :class:`SearchIndex`; when another process rebuilt the index while it was read, it is
        opened once more before the error is raised.
    """
    manifest = Path(index_dir) / INDEX_FILE

    def digest() -> str | None:
        try:
            return file_digest(manifest, lines=False)[SHA]
        except OSError:
            return None

    for attempt in (1, 2):
        before = digest()
        try:
            index = SearchIndex(index_dir, methods=[method], questions=questions)
            index.passages  # noqa: B018 - verified now, not halfway through the answers
            return index
        except DataError:
            if attempt == 2 or digest() == before:
                raise
