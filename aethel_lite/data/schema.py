"""One schema for every data set: passages, queries with gold passages, and the data set itself."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataError, ParameterError
from ..io import read_json, read_jsonl, write_json, write_jsonl

__all__ = ["Passage", "Query", "Dataset", "passage_text"]


@dataclass(frozen=True)
class Passage:
    """A retrievable unit of text.

    Attributes
    ----------
    pid : str
        Unique id within its data set (e.g. ``"3M_2018_10K:p59"``).
    doc_id : str
        The document it comes from (several passages may share one).
    title : str
        Document or paragraph title ("" when there is none).
    text : str
        The passage text.
    meta : dict
        Anything else (page number, source path, chunk offsets ...). JSON-serialisable.
    """

    pid: str
    doc_id: str
    title: str
    text: str
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "pid": self.pid,
            "doc_id": self.doc_id,
            "title": self.title,
            "text": self.text,
            "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> Passage:
        return cls(
            pid=str(row["pid"]),
            doc_id=str(row.get("doc_id", row["pid"])),
            title=str(row.get("title", "")),
            text=str(row["text"]),
            meta=dict(row.get("meta") or {}),
        )


@dataclass(frozen=True)
class Query:
    """A question with its gold passages.

    Attributes
    ----------
    qid : str
        Unique id within its data set.
    text : str
        The question.
    gold : frozenset[str]
        Pids of the passages that support the answer.
    hops : int
        Number of reasoning hops (MuSiQue/2Wiki) or distinct evidence passages (FinanceBench).
    pool : tuple[str, ...] or None
        Closed-pool candidates (in data-set order), or ``None`` for the open-corpus setting.
    meta : dict
        Answer, question type, company ... JSON-serialisable.
    """

    qid: str
    text: str
    gold: frozenset[str]
    hops: int = 1
    pool: tuple[str, ...] | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "gold", frozenset(self.gold))
        if self.pool is not None:
            object.__setattr__(self, "pool", tuple(self.pool))

    def to_dict(self) -> dict:
        return {
            "qid": self.qid,
            "text": self.text,
            "gold": sorted(self.gold),
            "hops": self.hops,
            "pool": list(self.pool) if self.pool is not None else None,
            "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> Query:
        pool = row.get("pool")
        return cls(
            qid=str(row["qid"]),
            text=str(row["text"]),
            gold=frozenset(str(g) for g in row.get("gold", ())),
            hops=int(row.get("hops", 1)),
            pool=tuple(str(p) for p in pool) if pool is not None else None,
            meta=dict(row.get("meta") or {}),
        )


@dataclass
class Dataset:
    """Passages plus queries. ``passages`` is a list (corpus order is the index order everywhere)."""

    name: str
    passages: list[Passage]
    queries: list[Query]
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.passages = list(self.passages)
        self.queries = list(self.queries)
        self._by_pid: dict[str, Passage] | None = None

    @property
    def by_pid(self) -> dict[str, Passage]:
        """pid → Passage (built once, on first use)."""
        if self._by_pid is None or len(self._by_pid) != len(self.passages):
            self._by_pid = {p.pid: p for p in self.passages}
        return self._by_pid

    def __len__(self) -> int:
        return len(self.passages)

    def __repr__(self) -> str:
        return f"Dataset(name={self.name!r}, passages={len(self.passages)}, queries={len(self.queries)})"

    def validate(self) -> Dataset:
        """Check the invariants; raise :class:`DataError` naming the first offending id.

        Passages non-empty with unique pids; every gold and pool pid is a passage; gold ⊆ pool
        for closed-pool queries.
        """
        if not self.passages:
            raise DataError(f"dataset {self.name!r}: empty corpus (no passages)")
        seen: set[str] = set()
        for p in self.passages:
            if p.pid in seen:
                raise DataError(f"dataset {self.name!r}: duplicate passage pid {p.pid!r}")
            seen.add(p.pid)
        for q in self.queries:
            missing = [g for g in q.gold if g not in seen]
            if missing:
                raise DataError(
                    f"dataset {self.name!r}: query {q.qid!r} has gold pid {missing[0]!r} not in the corpus"
                )
            if q.pool is not None:
                unknown = [p for p in q.pool if p not in seen]
                if unknown:
                    raise DataError(
                        f"dataset {self.name!r}: query {q.qid!r} has pool pid {unknown[0]!r} not in the corpus"
                    )
                outside = q.gold - set(q.pool)
                if outside:
                    raise DataError(
                        f"dataset {self.name!r}: query {q.qid!r} has gold pid {sorted(outside)[0]!r} outside its pool"
                    )
        return self

    def subset(
        self, qids: Iterable[str] | None = None, *, limit: int | None = None, keep_all_passages: bool = True
    ) -> Dataset:
        """A data set with only some queries.

        Parameters
        ----------
        qids : iterable of str, optional
            Queries to keep (in this data set's order). ``None`` keeps all.
        limit : int, optional
            Keep at most the first ``limit`` of them.
        keep_all_passages : bool
            If False, keep only the passages that a kept query names in its gold or pool.
        """
        wanted = None if qids is None else set(qids)
        queries = [q for q in self.queries if wanted is None or q.qid in wanted]
        if limit is not None:
            queries = queries[: max(int(limit), 0)]
        passages = self.passages
        if not keep_all_passages:
            needed = set().union(*(q.gold | set(q.pool or ()) for q in queries))
            passages = [p for p in self.passages if p.pid in needed]
        return Dataset(self.name, passages, queries, dict(self.meta))

    def with_random_pools(self, size: int = 20, seed: int = 0) -> Dataset:
        """A copy whose every query has a closed pool: its gold passages plus random others.

        Each pool has ``max(size, |gold|)`` passages: the gold ones and distractors drawn uniformly
        without replacement from the rest (``numpy`` generator seeded with ``seed``), in a seeded
        random order.
        """
        import numpy as np

        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ParameterError(f"size must be a positive integer, got {size!r}")
        rng = np.random.default_rng(seed)
        pids = [p.pid for p in self.passages]
        queries = []
        for q in self.queries:
            others = [pid for pid in pids if pid not in q.gold]
            n_extra = min(max(size - len(q.gold), 0), len(others))
            extra = (
                [others[i] for i in rng.choice(len(others), size=n_extra, replace=False)] if n_extra else []
            )
            pool = sorted(q.gold) + extra
            pool = [pool[i] for i in rng.permutation(len(pool))]
            queries.append(Query(q.qid, q.text, q.gold, q.hops, tuple(pool), dict(q.meta)))
        return Dataset(
            self.name, self.passages, queries, {**self.meta, "random_pools": {"size": size, "seed": seed}}
        )

    def passage_texts(self) -> list[str]:
        """Texts used for indexing (:func:`passage_text` of each passage)."""
        return [passage_text(p) for p in self.passages]

    def to_jsonl(self, directory: str | os.PathLike) -> Path:
        """Write ``passages.jsonl`` and ``queries.jsonl`` (plus ``dataset.json``) into ``directory``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        write_jsonl(directory / "passages.jsonl", (p.to_dict() for p in self.passages))
        write_jsonl(directory / "queries.jsonl", (q.to_dict() for q in self.queries))
        write_json(directory / "dataset.json", {"name": self.name, "meta": self.meta})
        return directory

    @classmethod
    def from_jsonl(cls, directory: str | os.PathLike, name: str | None = None) -> Dataset:
        """Read a data set written by :meth:`to_jsonl` (``queries.jsonl`` may be absent)."""
        directory = Path(directory)
        info = read_json(directory / "dataset.json") if (directory / "dataset.json").exists() else {}
        if not isinstance(info, dict) or not isinstance(info.get("meta", {}), dict):
            raise DataError(f"{directory / 'dataset.json'}: expected an object with an object 'meta'")
        passages = [
            _row(Passage.from_dict, row, directory / "passages.jsonl", i)
            for i, row in enumerate(read_jsonl(directory / "passages.jsonl"), 1)
        ]
        qpath = directory / "queries.jsonl"
        queries = (
            [_row(Query.from_dict, row, qpath, i) for i, row in enumerate(read_jsonl(qpath), 1)]
            if qpath.exists()
            else []
        )
        return cls(name or info.get("name", directory.name), passages, queries, dict(info.get("meta", {})))


def passage_text(passage: Passage) -> str:
    """The indexed text of a passage: ``title + "\\n" + text`` when it has a title, else its text."""
    return f"{passage.title}\n{passage.text}" if passage.title else passage.text


def _row(make, row: Mapping[str, Any], path: Path, index: int):
    try:
        return make(row)
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{path}: record {index}: missing or bad field {exc}") from exc
