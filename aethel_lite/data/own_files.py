"""The "your own files" setting: a FinanceBench data set as a user's own PDFs would give it.

:func:`~aethel_lite.data.loaders.load_financebench` names every passage after its filing (pid
``"3M_2018_10K#p59"``, ``doc_id = title = "3M_2018_10K"``, the title indexed with the text) and puts
``company``, ``doc_type`` and ``doc_period`` into ``meta``; a folder of PDFs has none of that.
:func:`own_files` hides it (:func:`load_own_files`; ``aethel eval --format financebench --own-files``;
the open-corpus data set ``"financebench-own"``):

* **document ids** — :func:`opaque_id` (deterministic, and not in the names' order, so neighbouring
  ids say nothing about a shared company);
* **pids** — the document part becomes the opaque id, the page (and chunk) part is kept
  (``"3M_2018_10K#p59"`` → ``"doc-1a2b3c4d5e#p59"``), in the queries' gold too;
* **titles** — empty, so the indexed text is the page text alone;
* **passage meta** — only :data:`KEPT_META`, so :func:`~aethel_lite.data.docmeta.document_metadata`
  must read ``company``, ``doc_type`` and ``doc_period`` from the pages;
* **corpus order** — by opaque id, then page and chunk;
* **query meta** — ``doc_name`` (also each evidence's) becomes an opaque id, ``company`` is dropped;
* **data-set meta** — ``left_out`` reasons no longer name the filing, ``docs_without_info`` lists
  opaque ids; ``own_files`` records what was hidden.

The page text is untouched (a filing names its company on its own pages); no FinanceBench page
spells a filing's ``doc_name`` (checked by ``tests/data/test_own_files.py``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import DataError
from ..io import read_jsonl
from .loaders import FB_DOCINFO, FB_PAGES, FINANCEBENCH_DIR, _page_rows, _resolve, load_financebench
from .schema import Dataset, Passage, Query

__all__ = [
    "OWN_PREFIX",
    "KEPT_META",
    "opaque_id",
    "opaque_ids",
    "own_files",
    "load_own_files",
    "document_information",
    "filing_first_pages",
]

#: prefix of an opaque document id
OWN_PREFIX = "doc-"
#: passage ``meta`` keys the own-files setting keeps (where the passage sits in its document)
KEPT_META = ("page", "chunk", "char_start", "char_end")
_SALT = "aethel-own-files:"


def opaque_id(doc_name: str) -> str:
    """The opaque id of a document name: ``"doc-"`` + 10 hex digits of SHA-256(``"aethel-own-files:" + name``).

    Examples
    --------
    >>> opaque_id("3M_2018_10K") == opaque_id("3M_2018_10K") != opaque_id("3M_2019_10K")
    True
    """
    return OWN_PREFIX + hashlib.sha256((_SALT + str(doc_name)).encode("utf-8")).hexdigest()[:10]


def opaque_ids(doc_names: Iterable[str]) -> dict[str, str]:
    """``doc_name`` → :func:`opaque_id` for distinct names; raises :class:`DataError` on a collision."""
    seen: dict[str, str] = {}  # opaque id -> name
    for name in sorted(set(doc_names)):
        oid = opaque_id(name)
        if oid in seen:  # 40 bits: not seen on FinanceBench's 344 filings, but never silently merged
            raise DataError(f"own files: documents {seen[oid]!r} and {name!r} get the same opaque id {oid}")
        seen[oid] = name
    return {name: oid for oid, name in seen.items()}


def _pid(p: Passage, ids: Mapping[str, str]) -> str:
    doc = p.doc_id
    if not p.pid.startswith(doc + "#"):
        raise DataError(f"own files: pid {p.pid!r} does not start with its document {doc!r} and '#'")
    return ids[doc] + p.pid[len(doc) :]


def _query(q: Query, pid_of: Mapping[str, str], ids: Mapping[str, str]) -> Query:
    meta = {k: v for k, v in q.meta.items() if k != "company"}
    if meta.get("doc_name") is not None:
        meta["doc_name"] = ids.get(str(meta["doc_name"]), opaque_id(str(meta["doc_name"])))
    if isinstance(meta.get("evidence"), list):
        meta["evidence"] = [
            {**ev, "doc_name": ids.get(str(ev.get("doc_name")), opaque_id(str(ev.get("doc_name"))))}
            if isinstance(ev, Mapping)
            else ev
            for ev in meta["evidence"]
        ]
    pool = None if q.pool is None else tuple(pid_of[p] for p in q.pool)
    return Query(q.qid, q.text, frozenset(pid_of[g] for g in q.gold), q.hops, pool, meta)


def own_files(dataset: Dataset, name: str | None = None) -> Dataset:
    """``dataset`` as a user's own PDFs would give it: opaque document ids, no titles, no loader metadata.

    See the module docstring for exactly what is hidden. Passage texts, page numbers, questions,
    question ids and which pages are gold are unchanged.

    Parameters
    ----------
    dataset : Dataset
        A data set whose pids are ``"<doc_id>#..."`` (FinanceBench pages or chunks, the
        synthetic corpus, an ingested folder).
    name : str, optional
        The new data set's name (default: ``"<name>-own"``).

    Returns
    -------
    Dataset
        A validated data set; ``meta["own_files"]`` says what was hidden (never the mapping).

    Raises
    ------
    DataError
        A pid that does not start with its ``doc_id`` and ``"#"``, or two documents with one opaque id.
    """
    ids = opaque_ids(p.doc_id for p in dataset.passages)
    pid_of = {p.pid: _pid(p, ids) for p in dataset.passages}
    passages = [
        Passage(pid_of[p.pid], ids[p.doc_id], "", p.text, {k: p.meta[k] for k in KEPT_META if k in p.meta})
        for p in dataset.passages
    ]
    order = {p.pid: i for i, p in enumerate(passages)}
    passages.sort(key=lambda p: (p.doc_id, p.meta.get("page", -1), p.meta.get("chunk", -1), order[p.pid]))
    queries = [_query(q, pid_of, ids) for q in dataset.queries]
    meta = {k: v for k, v in dataset.meta.items() if k not in ("left_out", "docs_without_info")}
    if "left_out" in dataset.meta:
        meta["left_out"] = {
            qid: "its evidence filing or page is not in the corpus (PDF not available)"
            for qid in dataset.meta["left_out"]
        }
    if "docs_without_info" in dataset.meta:
        meta["docs_without_info"] = sorted(ids[d] for d in dataset.meta["docs_without_info"] if d in ids)
    meta["own_files"] = {
        "from": dataset.name,
        "doc_ids": "opaque (sha256 of the name)",
        "titles": "none",
        "passage_meta_kept": [k for k in KEPT_META if any(k in p.meta for p in passages)],
        "n_documents": len(ids),
    }
    return Dataset(name or f"{dataset.name}-own", passages, queries, meta).validate()


def load_own_files(directory: str | os.PathLike | None = None, **kwargs: Any) -> Dataset:
    """:func:`~aethel_lite.data.loaders.load_financebench` in the own-files setting: :func:`own_files` of it,
    named ``"financebench-own"`` (keyword arguments go to the loader)."""
    return own_files(load_financebench(directory, **kwargs), name="financebench-own")


def document_information(directory: str | os.PathLike | None = None) -> list[dict]:
    """The rows of FinanceBench's ``financebench_document_information.jsonl`` (``doc_name``, ``company``,
    ``doc_type``, ``doc_period``, ...), in file order; ``directory`` as for the loader."""
    root = _resolve(directory, FINANCEBENCH_DIR)
    return list(read_jsonl(_resolve(root / FB_DOCINFO, FINANCEBENCH_DIR)))


def filing_first_pages(directory: str | os.PathLike | None = None, n_pages: int = 3) -> dict[str, list[str]]:
    """Every filing's first ``n_pages`` pages in ``pages.jsonl.gz``: ``doc_name`` → texts in page order
    (names sorted), what :func:`aethel_lite.studies.docmeta_check.docmeta_accuracy` reads."""
    root = _resolve(directory, FINANCEBENCH_DIR)
    pages: dict[str, dict[int, str]] = {}
    for _, doc, page, text in _page_rows(_resolve(root / FB_PAGES, FINANCEBENCH_DIR), None):
        if page < n_pages:
            pages.setdefault(doc, {})[page] = text
    return {d: [p[k] for k in sorted(p)] for d, p in sorted(pages.items())}
