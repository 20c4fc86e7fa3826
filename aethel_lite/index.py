"""A searchable index of the user's own files: the engine behind ``aethel index`` and ``aethel search``.

An index folder holds the passages (``passages.jsonl``), an ``index.json`` manifest (files, methods,
versions) and the caches (entities, embeddings) that make re-fitting the retrievers fast. Retrievers are
re-fitted from the passages at search time — from cache that takes seconds, and it means the index never
stores a pickled model.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

from .errors import DataNotFoundError, ParameterError
from .io import read_json, write_json

__all__ = ["build_index", "search_index", "load_index"]

INDEX_FORMAT = 1


@contextlib.contextmanager
def _index_cache(index_dir: Path):
    """Point the entity/embedding caches at ``index_dir/cache`` for the duration (then restore)."""
    old = os.environ.get("AETHEL_CACHE")
    os.environ["AETHEL_CACHE"] = str(index_dir / "cache")
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("AETHEL_CACHE", None)
        else:
            os.environ["AETHEL_CACHE"] = old


def _fit(dataset, method: str, index_dir: Path, progress: bool):
    from .experiment import FUSIONS, make_retriever

    if method in FUSIONS:
        return [_fit(dataset, base, index_dir, progress) for base in FUSIONS[method]]
    retriever = make_retriever(method)
    if hasattr(retriever, "progress"):
        retriever.progress = progress
    with _index_cache(index_dir):
        return retriever.fit(dataset.passages)


def build_index(paths: Sequence[str], out: str | os.PathLike, *, methods: Sequence[str] = ("bm25", "aethel-bct"),
                chunk_words: int | None = None, progress: bool = True) -> dict:
    """Ingest files, fit the requested retrievers once (warming the caches) and write the index folder."""
    from .data.ingest import ingest
    from .experiment import parse_methods, versions

    methods = parse_methods(list(methods))
    out = Path(out)
    dataset = ingest(list(paths), chunk_words=chunk_words)
    dataset.validate()
    out.mkdir(parents=True, exist_ok=True)
    dataset.to_jsonl(out)
    for method in methods:
        _fit(dataset, method, out, progress)
    info = {
        "format": INDEX_FORMAT,
        "n_passages": len(dataset.passages),
        "n_documents": len({p.doc_id for p in dataset.passages}),
        "methods": methods,
        "chunk_words": chunk_words,
        "versions": versions(),
    }
    write_json(out / "index.json", info)
    return {**info, "index": str(out)}


def load_index(index_dir: str | os.PathLike):
    """The passages and manifest of an index folder."""
    from .data.schema import Dataset

    index_dir = Path(index_dir)
    if not (index_dir / "index.json").exists():
        raise DataNotFoundError(f"{index_dir}: not an aethel index (no index.json); build one with `aethel index FILES --out {index_dir}`")
    info = read_json(index_dir / "index.json")
    return Dataset.from_jsonl(index_dir), info


def search_index(index_dir: str | os.PathLike, question: str, *, k: int = 5, method: str = "aethel-bct") -> list[dict]:
    """Ranked passages for one question, each with document, page, score and provenance."""
    from .data.schema import Query
    from .experiment import FUSIONS, parse_methods
    from .retrievers import rrf

    if not question or not question.strip():
        raise ParameterError("question: empty question")
    if k < 1:
        raise ParameterError(f"-k must be ≥ 1, got {k}")
    parse_methods([method])
    index_dir = Path(index_dir)
    dataset, _info = load_index(index_dir)
    query = Query(qid="q", text=question, gold=frozenset())
    fitted = _fit(dataset, method, index_dir, progress=False)
    retrievers = fitted if isinstance(fitted, list) else [fitted]
    runs = [r.search([query], k=max(k, 10)) for r in retrievers]
    run = rrf(runs, k=60, name=method) if method in FUSIONS else runs[0]
    provenance: dict = {}
    for r in retrievers:
        provenance.update(getattr(r, "provenance_", {}).get("q", {}))
    hits = []
    for rank, (pid, score) in enumerate(run.get("q", [])[:k], start=1):
        p = dataset.by_pid[pid]
        hits.append({
            "rank": rank,
            "pid": pid,
            "doc_id": p.doc_id,
            "page": p.meta.get("page"),
            "source": p.meta.get("source"),
            "score": float(score),
            "text": p.text,
            "provenance": [{"seed": e.seed, "entity": e.entity, "via": e.via, "weight": float(e.weight)} for e in provenance.get(pid, [])],
        })
    return hits
