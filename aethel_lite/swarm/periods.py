"""A fact's period as the memo names, orders and dates it: the filer's fiscal period and the months it covers
("Q3 FY2023, three months ended July 1, 2023"; :func:`~aethel_lite.swarm.values.period_phrase`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from .findings import Finding
from .lexicon import METRICS
from .values import period_phrase, period_sort_key

__all__ = ["fact_when", "when_key", "whens_of", "when_text", "audit_period", "dated_facts"]


def _flow(metric: str) -> bool:
    return METRICS[metric].flow if metric in METRICS else True


def fact_when(f: Finding) -> tuple:
    """A fact's period and length, in the filer's fiscal terms: facts are shown and compared per
    (fiscal period, length); a fiscal year's flow is twelve months long."""
    name = f.fiscal_period or f.period
    months = f.duration
    if months is None and _flow(f.metric) and name and re.fullmatch(r"FY\d{4}", name):
        months = 12
    return (name, months)


_FISCAL_NAME = re.compile(r"(?:(Q[1-4]|H1|6M|9M)\s+)?FY(\d{4})")
_QUARTER_END = {"H1": 2, "6M": 2, "9M": 3}


def when_key(when: tuple) -> tuple:
    """Chronological sort key of a (period, length) pair: by fiscal year, the quarter it ends, then length."""
    name, months = when
    m = _FISCAL_NAME.fullmatch(name or "")
    if m:
        part = m.group(1)
        q = 4 if part is None else _QUARTER_END.get(part) or int(part[1])
        return (int(m.group(2)), q * 3, 40, months or 0, name or "")
    year, month, day, label = period_sort_key(name)
    return (year, month, day, months or 0, label)


def whens_of(facts: Sequence[Finding], *, dated: bool = True) -> list[tuple]:
    """The (period, length) pairs of ``facts`` (only those with a period when ``dated``), chronologically,
    the shorter length first on one day."""
    whens = {fact_when(f) for f in facts if f.period or not dated}
    return sorted(whens, key=when_key)


def when_text(when: tuple, facts: Sequence[Finding] = ()) -> str:
    """How the memo states a (period, length) pair (:func:`~aethel_lite.swarm.values.period_phrase`):
    "Q3 FY2023, three months ended July 1, 2023", with the day one of ``facts`` of that pair states."""
    name, months = when
    mine = [f for f in facts if fact_when(f) == when]
    date = next((f.period_end for f in mine if f.period_end), None)
    flow = _flow(mine[0].metric) if mine else True
    return period_phrase(name, date, months, flow=flow) if name else "no period"


def audit_period(f: Finding) -> str:
    """The audit trail's period cell: a figure's period and its length, stated or not."""
    if not f.period:
        return ""
    if f.kind == "topic":
        return f.fiscal_period or f.period
    return when_text(fact_when(f), [f])


def dated_facts(facts: Sequence[Finding]) -> list[Finding]:
    """``facts``, each without a day given the day another fact of its entity states for the same fiscal
    period and length (a segment note's "2022" column is Apple's FY2022, which ended September 24, 2022)."""
    days: dict[tuple, str] = {}
    for f in facts:
        if f.period_end:
            days.setdefault((f.entity, fact_when(f)), f.period_end)
    return [
        replace(f, period_end=days[f.entity, fact_when(f)])
        if not f.period_end and (f.entity, fact_when(f)) in days
        else f
        for f in facts
    ]
