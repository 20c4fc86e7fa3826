"""Findings (facts, topics, conflicts): the records the specialists produce and the memo is built from."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import DataError
from ..io import read_json, write_json
from .values import parse_figure, period_sort_key, same_value

__all__ = [
    "Finding",
    "FINDING_KEYS",
    "find_conflicts",
    "fact_key",
    "score_facts",
    "score_conflicts",
    "write_findings",
    "read_findings",
    "sort_findings",
    "EXTRA_KEYS",
    "prefer_statements",
]

#: the keys every finding record has (the ``--findings`` JSON of ``aethel memo``)
FINDING_KEYS = (
    "entity",
    "metric",
    "period",
    "value",
    "unit",
    "quote",
    "passage_id",
    "doc_id",
    "page",
    "specialist",
    "confidence",
)
_SOURCE_KEYS = (
    "value",
    "unit",
    "surface",
    "quote",
    "passage_id",
    "doc_id",
    "page",
    "confidence",
    "specialist",
    "start",
    "duration",
    "period_end",
    "fiscal_period",
    "segment",
    "printed_unit",
    "statement",
)
#: keys a record has beside :data:`FINDING_KEYS` (:meth:`Finding.to_dict`); older records may lack the later ones
EXTRA_KEYS = (
    "surface",
    "kind",
    "sources",
    "start",
    "duration",
    "period_end",
    "fiscal_period",
    "segment",
    "printed_unit",
    "statement",
)


@dataclass(frozen=True)
class Finding:
    """One finding of a specialist.

    Attributes
    ----------
    entity : str
        Resolver id (``"fund:northriver-iv"``, ``"3M"``).
    metric : str
        Metric key, or topic key (``kind="topic"``).
    period : str or None
        Period label (``"2024Q3"``, ``"FY2018"``).
    value : float or None
        Normalised value (``None`` for topics and conflicts).
    unit : str or None
    quote : str
        The sentence or table row, exactly as in ``passage.text`` (at offset ``start``).
    passage_id, doc_id, specialist : str
    page : int or None
        Page of the filing (0-based), when known.
    confidence : float
        In [0, 1]: how directly the text ties the figure to the entity (see the extractor).
    surface : str or None
        The figure exactly as printed; a substring of ``quote``.
    kind : {"fact", "topic", "conflict"}
    sources : tuple of dict
        Conflicts only: the disagreeing facts.
    start : int or None
    duration : int or None
        The length of the figure's period in months (3, 6, 9, 12) where the text states it ("Three
        Months Ended", "Nine Months Ended" over the column); ``None`` when it does not (a balance-sheet
        date, an unstated length).
    period_end : str or None
        The day the period ends (or a balance is at), ISO (``"2023-07-01"``), where the text states it.
    fiscal_period : str or None
        The period in the filer's fiscal terms (``"Q3 FY2023"``, ``"9M FY2023"``, ``"FY2022"``;
        :func:`~aethel_lite.swarm.values.fiscal_name`).
    segment : str or None
        The segment, region or product line a table row is about ("Americas") when it is not the
        company's total; ``None`` for the company's own figure.
    printed_unit : str or None
        The unit the surface is printed in ("USD millions", "USD thousands", "%";
        :func:`~aethel_lite.swarm.values.printed_unit`); ``unit`` is the value's.
    statement : bool
        The figure is on a consolidated financial statement's page (not a note or prose elsewhere).
    """

    entity: str
    metric: str
    period: str | None
    value: float | None
    unit: str | None
    quote: str
    passage_id: str
    doc_id: str
    page: int | None
    specialist: str
    confidence: float
    surface: str | None = None
    kind: str = "fact"
    sources: tuple = field(default_factory=tuple)
    start: int | None = None
    duration: int | None = None
    period_end: str | None = None
    fiscal_period: str | None = None
    segment: str | None = None
    printed_unit: str | None = None
    statement: bool = False

    def to_dict(self) -> dict:
        """JSON-able record: :data:`FINDING_KEYS` plus :data:`EXTRA_KEYS`; a PDF ``page`` as a viewer numbers
        it (1-based, as the memo and ``aethel search`` print it; the finding itself keeps the 0-based index of
        its passage's pid)."""
        return {
            **{k: getattr(self, k) for k in FINDING_KEYS},
            "page": _shown(self.page, 1),
            "surface": self.surface,
            "kind": self.kind,
            "sources": [
                {**s, "page": _shown(s.get("page"), 1)} if "page" in s else dict(s) for s in self.sources
            ],
            "start": self.start,
            "duration": self.duration,
            "period_end": self.period_end,
            "fiscal_period": self.fiscal_period,
            "segment": self.segment,
            "printed_unit": self.printed_unit,
            "statement": self.statement,
        }

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> Finding:
        """Inverse of :meth:`to_dict`; a missing key is a :class:`DataError` naming it."""
        missing = [k for k in FINDING_KEYS if k not in row]
        if missing:
            raise DataError(f"finding record lacks {', '.join(missing)}")
        return cls(
            **{k: row[k] for k in FINDING_KEYS if k != "page"},
            page=_shown(row["page"], -1),
            surface=row.get("surface"),
            kind=row.get("kind", "fact"),
            sources=tuple(
                {**s, "page": _shown(s.get("page"), -1)} if "page" in s else dict(s)
                for s in row.get("sources", ())
            ),
            start=row.get("start"),
            duration=row.get("duration"),
            period_end=row.get("period_end"),
            fiscal_period=row.get("fiscal_period"),
            segment=row.get("segment"),
            printed_unit=row.get("printed_unit"),
            statement=bool(row.get("statement", False)),
        )

    def sort_key(self) -> tuple:
        """The canonical order of findings (see :func:`sort_findings`)."""
        return (
            self.entity,
            self.kind,
            self.metric,
            self.segment or "",
            period_sort_key(self.period),
            self.duration or 0,
            self.doc_id,
            -1 if self.page is None else self.page,
            self.passage_id,
            -1 if self.start is None else self.start,
            self.surface or "",
            self.specialist,
        )


def _shown(page: Any, shift: int) -> Any:
    """A page index moved by ``shift`` (to and from the 1-based page a record shows); anything else as it is."""
    return page + shift if isinstance(page, int) and not isinstance(page, bool) else page


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in a canonical order (entity, kind, metric, period, document, page, passage, position)."""
    return sorted(findings, key=Finding.sort_key)


def fact_key(entity: str, metric: str, period: str | None, value: float | None) -> tuple:
    """The (entity, metric, period, value) tuple that facts are scored on (value rounded to 6 decimals)."""
    return (entity, metric, period, None if value is None else round(float(value), 6))


def _period_key(f: Finding) -> str | None:
    """The period a conflict is checked over: the label, except that a day that closes the filer's fiscal
    year ("2015-09-26", read from a filing with no annual-report type) is that fiscal year ("FY2015"), as
    the year columns of other filings label it."""
    if (
        f.period
        and re.fullmatch(r"\d{4}-\d{2}-\d{2}", f.period)
        and f.fiscal_period
        and re.fullmatch(r"FY\d{4}", f.fiscal_period)
    ):
        return f.fiscal_period
    return f.period


def prefer_statements(findings: Iterable[Finding]) -> list[Finding]:
    """``findings`` without the company figures a document's notes or prose state differently from its
    own consolidated statements.

    A fact not on a statement page (``statement=False``) is left out when its document states the
    same entity's metric, period, unit and segment on a statement page with a compatible length
    (equal, or either unstated) and none of those statement values is its value: in one filing,
    the statement's figure is the company's, a note's other figure for it is a segment's, a
    discontinued operation's or a hedge's that the tables did not name. Other findings, and figures
    of documents without a statement for that period, are kept, in order.
    """
    findings = list(findings)
    stated: dict[tuple, list[Finding]] = {}
    for f in findings:
        if f.kind == "fact" and f.statement and f.value is not None:
            stated.setdefault((f.doc_id, f.entity, f.metric, f.period, f.unit, f.segment), []).append(f)

    def kept(f: Finding) -> bool:
        if f.kind != "fact" or f.statement or f.value is None:
            return True
        rivals = [
            s
            for s in stated.get((f.doc_id, f.entity, f.metric, f.period, f.unit, f.segment), ())
            if s.duration is None or f.duration is None or s.duration == f.duration
        ]
        return not rivals or any(same_value(s.value, f.value) for s in rivals)

    return [f for f in findings if kept(f)]


def find_conflicts(findings: Iterable[Finding], *, specialist: str = "Diligence Auditor") -> list[Finding]:
    """Conflict findings: one (entity, metric, period) stated with different values in different documents.

    Figures a document's notes state differently from its own statements are left out first
    (:func:`prefer_statements`). Facts are grouped by (entity, metric, period, unit, segment), a
    day that closes the filer's fiscal year being that fiscal year ("2015-09-26" is Apple's
    "FY2015"); a segment's figure is compared with the same segment's only, never with the
    company's total. A group whose facts state two different lengths (three and nine months ended
    the same day) is split by length, the facts of unstated length left out, as they could be
    either: different lengths are different figures, not a conflict. A group with two different values
    (:func:`~aethel_lite.swarm.values.same_value`) stated by two different documents becomes one
    conflict whose ``sources`` are one fact per (document, value) -- the first by page and passage
    -- ordered by value (the value stated by most documents first) and document. Its passage,
    document, page and quote are its first source's; its confidence the smallest of theirs.

    Parameters
    ----------
    findings : iterable of Finding
        Only ``kind="fact"`` findings with a value are considered.
    specialist : str
        Who reports conflicts.

    Returns
    -------
    list of Finding
        ``kind="conflict"``, ``value=None``, sorted canonically.
    """
    by_key: dict[tuple, list[Finding]] = {}
    for f in prefer_statements(findings):
        if f.kind == "fact" and f.value is not None and f.period is not None:
            by_key.setdefault((f.entity, f.metric, _period_key(f), f.unit, f.segment), []).append(f)
    groups: dict[tuple, list[Finding]] = {}
    for key, facts in by_key.items():
        lengths = {f.duration for f in facts if f.duration is not None}
        if len(lengths) < 2:
            groups[(*key, next(iter(lengths), None))] = facts
        for length in sorted(lengths) if len(lengths) > 1 else ():
            groups[(*key, length)] = [f for f in facts if f.duration == length]
    out = []
    for entity, metric, period, unit, segment, duration in sorted(
        groups, key=lambda g: (g[0], g[1], g[4] or "", period_sort_key(g[2]), g[3] or "", g[5] or 0)
    ):
        facts = sort_findings(groups[entity, metric, period, unit, segment, duration])
        values: list[float] = []
        for f in facts:
            if not any(same_value(f.value, v) for v in values):
                values.append(f.value)
        if len(values) < 2:
            continue
        per_value_docs = {v: sorted({f.doc_id for f in facts if same_value(f.value, v)}) for v in values}
        # two different values stated by two different documents (a disagreement inside one
        # document is not a cross-document conflict)
        if not any(
            d1 != d2
            for i, v1 in enumerate(values)
            for v2 in values[i + 1 :]
            for d1 in per_value_docs[v1]
            for d2 in per_value_docs[v2]
        ):
            continue
        order = sorted(values, key=lambda v: (-len(per_value_docs[v]), per_value_docs[v][0], v))
        firsts = [
            next(f for f in facts if f.doc_id == doc and same_value(f.value, v))
            for v in order
            for doc in per_value_docs[v]
        ]
        sources = [{k: getattr(f, k) for k in _SOURCE_KEYS} for f in firsts]
        first = sources[0]
        out.append(
            Finding(
                entity,
                metric,
                period,
                None,
                unit,
                first["quote"],
                first["passage_id"],
                first["doc_id"],
                first["page"],
                specialist,
                min(s["confidence"] for s in sources),
                None,
                "conflict",
                tuple(sources),
                first["start"],
                duration,
                first["period_end"],
                first["fiscal_period"],
                segment,
                first["printed_unit"],
                first["statement"],
            )
        )
    return sort_findings(out)


def score_facts(
    findings: Iterable[Finding],
    gold: Iterable[Mapping[str, Any]],
    *,
    metrics: Sequence[str],
    entities: Iterable[str] | None = None,
) -> dict:
    """Precision and recall of (entity, metric, period, value) against gold facts.

    Parameters
    ----------
    findings : iterable of Finding
        ``kind="fact"`` findings about the entity itself (not a segment's, ``segment=None``) count;
        distinct (entity, metric, period, value) tuples are scored.
    gold : iterable of mapping
        Records with ``entity``, ``metric``, ``period`` and ``value`` (a printed figure such as
        ``"$812.4 million"``, normalised with :func:`~aethel_lite.swarm.values.parse_figure`).
    metrics : sequence of str
        The metrics scored (others are ignored on both sides).
    entities : iterable of str, optional
        Restrict both sides to these entities.

    Returns
    -------
    dict
        ``precision``, ``recall`` (``None`` when undefined), ``tp``, ``n_found``, ``n_gold``,
        ``false_positives`` and ``missed`` (sorted lists of tuples as lists).
    """
    metrics = set(metrics)
    keep = None if entities is None else set(entities)
    found = {
        fact_key(f.entity, f.metric, f.period, f.value)
        for f in findings
        if f.kind == "fact"
        and f.segment is None
        and f.metric in metrics
        and (keep is None or f.entity in keep)
    }
    parsed = [
        (g, parse_figure(str(g["value"])))
        for g in gold
        if g["metric"] in metrics and (keep is None or g["entity"] in keep)
    ]
    truth = {fact_key(g["entity"], g["metric"], g["period"], p[0]) for g, p in parsed if p is not None}
    tp = found & truth
    return {
        "precision": len(tp) / len(found) if found else None,
        "recall": len(tp) / len(truth) if truth else None,
        "tp": len(tp),
        "n_found": len(found),
        "n_gold": len(truth),
        "false_positives": [list(k) for k in sorted(found - truth, key=repr)],
        "missed": [list(k) for k in sorted(truth - found, key=repr)],
    }


def score_conflicts(
    conflicts: Iterable[Finding],
    planted: Iterable[Mapping[str, Any]],
    *,
    entities: Iterable[str] | None = None,
) -> dict:
    """How many planted contradictions were reported as conflicts, and how many conflicts were planted.

    A planted contradiction (``entity``, ``metric``, ``period``, ``pid``) matches a conflict with its
    (entity, metric, period) that cites its passage among the sources.

    Returns
    -------
    dict
        ``recall``, ``precision`` (``None`` when undefined), ``n_planted``, ``n_conflicts``,
        ``found``, ``missed`` (planted records not found), ``unplanted`` (conflict keys).
    """
    keep = None if entities is None else set(entities)
    conflicts = [c for c in conflicts if c.kind == "conflict" and (keep is None or c.entity in keep)]
    planted = [p for p in planted if keep is None or p["entity"] in keep]

    def match(c: Finding, p: Mapping[str, Any]) -> bool:
        return (c.entity, c.metric, c.period) == (p["entity"], p["metric"], p["period"]) and any(
            s["passage_id"] == p["pid"] for s in c.sources
        )

    found = [p for p in planted if any(match(c, p) for c in conflicts)]
    correct = [c for c in conflicts if any(match(c, p) for p in planted)]
    return {
        "recall": len(found) / len(planted) if planted else None,
        "precision": len(correct) / len(conflicts) if conflicts else None,
        "n_planted": len(planted),
        "n_conflicts": len(conflicts),
        "found": len(found),
        "missed": [dict(p) for p in planted if p not in found],
        "unplanted": [[c.entity, c.metric, c.period] for c in conflicts if c not in correct],
    }


def write_findings(path: str | os.PathLike, findings: Iterable[Finding]) -> None:
    """Write findings as a JSON list of records (:meth:`Finding.to_dict`), atomically."""
    write_json(path, [f.to_dict() for f in findings])


def read_findings(path: str | os.PathLike) -> list[Finding]:
    """Read a file written by :func:`write_findings`."""
    rows = read_json(path)
    if not isinstance(rows, list):
        raise DataError(f"{path}: expected a JSON list of findings")
    out = []
    for i, row in enumerate(rows):
        try:
            out.append(Finding.from_dict(row))
        except (DataError, TypeError) as exc:
            raise DataError(f"{path}: record {i}: {exc}") from None
    return out
