r"""Periods a text names, read in a filer's fiscal calendar.

A filing's periods are the filer's fiscal ones (:mod:`aethel_lite.data.docmeta` reads them from its
cover): a company whose fiscal year ends in September calls the quarter ended June 24, 2023 its third
quarter of fiscal 2023. A question names a period by

* a fiscal quarter or year: "Q3 FY2023", "3Q23", "first quarter of fiscal 2024", "fiscal 2024", "FY24";
* a period ending on a date: "quarter ended June 24, 2023", "three / six / nine / twelve months ended
  <date>", "26 weeks ended <date>", "year ended <date>", "period ended <date>";
* a day: "as of December 30, 2023", a balance sheet's date;
* a month or a year: "June 2023", "2023".

With the fiscal year ending in month :math:`e`, a period that closes in month :math:`m` of calendar year
:math:`y` (a 52/53-week date in a month's first week closes the month before,
:func:`~aethel_lite.data.cover.closing_month`) lies in

.. math::

    Y = \begin{cases} y & m \le e \\ y + 1 & m > e \end{cases},
    \qquad q = \Big\lfloor \frac{(m - e - 1) \bmod 12}{3} \Big\rfloor + 1,

fiscal year :math:`Y`, fiscal quarter :math:`q` (:func:`~aethel_lite.data.cover.fiscal_year_of`): the
year is named after the calendar year in which it *ends*, as the index names it. Some filers name it after the
year in which it *starts*: Foot Locker's "fiscal 2022" is the year ended January 28, 2023. Their filings say so
in a sentence that names a fiscal year with its last day ("Fiscal year 2022 ... represented the 52 weeks ended
January 28, 2023", :func:`year_naming`), and a question naming such a filer's fiscal year or quarter ("fiscal
2022", "Q3 2022") is read one year later (``named_by="start"``); a date is a date in either naming. A
duration does not move the quarter: six months ended in fiscal Q2 are reported in the Q2 report, which
is why :class:`FiscalPeriod` keeps them apart. A period is *annual* when it is a fiscal year ("fiscal
2024", "year ended" or "twelve months ended" its last day, or a day that is the fiscal year's end): such
a figure is in the annual report (:func:`prefers_annual`).

:func:`period_keys` is the calendar reading (a month's calendar quarter) used where the filer's calendar
is unknown; :func:`fiscal_keys` the reading in a calendar. Both give keys as
:class:`~aethel_lite.data.docmeta.DocMeta` records them: ``"2023"`` for a fiscal year, ``"2023q3"`` for
a fiscal quarter.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .cover import _ORDINAL, MONTH_RX, MONTHS, closing_month, fiscal_year_of

__all__ = [
    "FiscalPeriod",
    "period_keys",
    "calendar_quarter",
    "question_periods",
    "fiscal_keys",
    "prefers_annual",
    "read_periods",
    "fiscal_year_ends",
    "calendar_of",
    "NAMINGS",
    "year_naming",
    "fiscal_year_names",
    "naming_of",
    "filer_key",
    "FiscalCalendars",
]

#: how a filer names a fiscal year: after the calendar year it ends in (most filers) or starts in
NAMINGS = ("end", "start")

_YEAR4 = r"((?:19|20)\d\d)"
_YEAR24 = r"'?((?:19|20)?\d\d)"
_FY = r"(?:fy\s?|fiscal\s+(?:year\s+)?)"

# (quarter, year) patterns, applied in this order
_QUARTER_PATTERNS = [
    re.compile(rf"\bq([1-4])\s*(?:of\s+)?(?:the\s+)?{_FY}?{_YEAR24}\b", re.I),  # Q3 2021, Q2 of FY2023, Q2'23
    re.compile(rf"\b([1-4])q\s*{_FY}?{_YEAR24}\b", re.I),  # 3Q21, 3Q 2021, 3Q FY23
    re.compile(
        rf"\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter\s+(?:of\s+)?(?:the\s+)?{_FY}?{_YEAR4}\b",
        re.I,
    ),
]
_FY_PATTERN = re.compile(rf"(?:\bfy\s?{_YEAR24}\b|\bfiscal\s+(?:year\s+)?{_YEAR4}\b)", re.I)
_MONTH_PATTERN = re.compile(rf"\b{MONTH_RX}\s+(?:\d{{1,2}}(?:st|nd|rd|th)?,?\s+)?{_YEAR4}\b", re.I)
_YEAR_PATTERN = re.compile(r"(?<![\w$.,/-])((?:19|20)\d\d)(?![\w%.,]\d|\w|%)")

_DATE = rf"{MONTH_RX}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR4}\b"
_ENDED = r"(?:ended|ending|end|through)"
#: a duration in months or weeks, then "ended <date>"
_DURATION = re.compile(
    rf"\b(three|six|nine|twelve|3|6|9|12|thirteen|twenty[\s-]six|thirty[\s-]nine|fifty[\s-]two|fifty[\s-]three"
    rf"|13|26|39|52|53)[\s-](months?|weeks?)\s+(?:period\s+)?{_ENDED}:?\s+(?:on\s+)?{_DATE}",
    re.I,
)
#: a named period, then "ended <date>"
_NAMED = re.compile(
    rf"\b((?:fiscal\s+)?year|(?:fiscal\s+)?quarter|quarterly\s+period|(?:fiscal\s+)?period)\s+{_ENDED}:?\s+"
    rf"(?:on\s+)?{_DATE}",
    re.I,
)
_DAY = re.compile(_DATE, re.I)
_WORDS = {
    "three": 3, "six": 6, "nine": 9, "twelve": 12, "thirteen": 13, "twentysix": 26, "thirtynine": 39,
    "fiftytwo": 52, "fiftythree": 53,
}  # fmt: skip


def _year(text: str) -> int:
    y = int(text)
    return y if y >= 100 else 2000 + y


def calendar_quarter(month: int) -> int:
    """The calendar quarter (1-4) of a month (1-12)."""
    return (month - 1) // 3 + 1


def _month(name: str) -> int:
    return MONTHS[name.lower().rstrip(".")]


def _quarter_number(text: str) -> int:
    return int(text) if text.isdigit() else _ORDINAL[text.lower()]


def _claimer():
    taken: list[tuple[int, int]] = []

    def claim(m: re.Match) -> bool:
        a, b = m.span()
        if any(a < y and b > x for x, y in taken):
            return False
        taken.append((a, b))
        return True

    return claim


def period_keys(text: str) -> list[str]:
    """Normalised period keys of a text in the calendar reading, in order of first appearance (no prefix).

    ``"FY2018"``, ``"fiscal year 2018"``, ``"FY18"`` and ``"2018"`` give ``"2018"``; a quarter
    (``"Q3 2021"``, ``"3Q21"``, ``"third quarter of 2021"``) gives ``"2021q3"`` and ``"2021"``; a
    month with a year gives its calendar quarter and year. :func:`fiscal_keys` reads the same text in
    a filer's fiscal calendar.

    Examples
    --------
    >>> period_keys("What is the FY2018 capex of 3M?")
    ['2018']
    >>> period_keys("quick ratio for Q2 of FY2023")
    ['2023q2', '2023']
    >>> period_keys("NAV as of June 30, 2024")
    ['2024q2', '2024']
    """
    found: list[tuple[int, str]] = []
    claim = _claimer()
    for rx in _QUARTER_PATTERNS:
        for m in rx.finditer(text):
            if claim(m):
                y = _year(m.group(2))
                found += [(m.start(), f"{y}q{_quarter_number(m.group(1))}"), (m.start() + 1, str(y))]
    for m in _FY_PATTERN.finditer(text):
        if claim(m):
            found.append((m.start(), str(_year(m.group(1) or m.group(2)))))
    for m in _MONTH_PATTERN.finditer(text):
        if claim(m):
            y = int(m.group(2))
            found += [(m.start(), f"{y}q{calendar_quarter(_month(m.group(1)))}"), (m.start() + 1, str(y))]
    for m in _YEAR_PATTERN.finditer(text):
        if claim(m):
            found.append((m.start(), m.group(1)))
    return list(dict.fromkeys(key for _, key in sorted(found, key=lambda t: t[0])))


@dataclass(frozen=True)
class FiscalPeriod:
    """A period a text names, in one fiscal calendar.

    Attributes
    ----------
    year : int
        Fiscal year.
    quarter : int or None
        Fiscal quarter the period closes in; ``None`` for a fiscal year or a bare year.
    months : int or None
        Its length (3, 6, 9 or 12) when the text says it; ``None`` otherwise.
    annual : bool
        A fiscal year: reported in the annual report.
    start, end : int
        Its characters in the text.
    """

    year: int
    quarter: int | None
    months: int | None
    annual: bool
    start: int
    end: int

    def keys(self) -> list[str]:
        """Period keys as documents record them: ``["2023q3", "2023"]``, or ``["2023"]`` for a year."""
        if self.quarter is None or self.annual:
            return [str(self.year)]
        return [f"{self.year}q{self.quarter}", str(self.year)]


def _on_date(m: re.Match, first: int, fy_end: int, months: int | None, span: re.Match) -> FiscalPeriod:
    """The period closing on the date in groups ``first``..``first + 2`` of ``m``."""
    month, day, year = _month(m.group(first)), int(m.group(first + 1)), int(m.group(first + 2))
    fy, q = fiscal_year_of(month, day, year, fy_end)
    year_end = q == 4 and closing_month(month, day) == fy_end
    annual = year_end and (months is None or months == 12)
    return FiscalPeriod(fy, None if annual else q, months, annual, *span.span())


def _months(number: str, unit: str) -> int | None:
    n = int(number) if number.isdigit() else _WORDS[re.sub(r"[\s-]", "", number.lower())]
    if unit.lower().startswith("week"):
        n = {13: 3, 26: 6, 39: 9, 52: 12, 53: 12}.get(n)
    return n if n in (3, 6, 9, 12) else None


def question_periods(text: str, fy_end: int = 12, *, named_by: str = "end") -> list[FiscalPeriod]:
    """The periods a text names, read in the fiscal calendar whose year ends in month ``fy_end``.

    Parameters
    ----------
    text : str
        A question.
    fy_end : int
        Month (1-12) the fiscal year ends in; 12 is the calendar year.
    named_by : {"end", "start"}
        How the filer names its fiscal years (:data:`NAMINGS`): ``"start"`` reads a fiscal year or quarter the text
        names ("fiscal 2022", "Q3 2022", "2022") as that of the year ending one calendar year later, the year
        :attr:`FiscalPeriod.year` counts in; dates are read as they are.

    Returns
    -------
    list of FiscalPeriod
        In order of appearance; a phrase is read once, by the first rule that takes it (durations, named
        periods, fiscal quarters, fiscal years, days, months, years).

    Examples
    --------
    >>> [p.keys() for p in question_periods("net sales for the quarter ended June 24, 2023", 9)]
    [['2023q3', '2023']]
    >>> [p.keys() for p in question_periods("cash as of December 30, 2023", 9)]
    [['2024q1', '2024']]
    >>> [p.keys() for p in question_periods("diluted EPS for the year ended September 30, 2023", 9)]
    [['2023']]
    >>> [p.keys() for p in question_periods("Foot Locker's sales in fiscal 2022", 1, named_by="start")]
    [['2023']]
    """
    if named_by not in NAMINGS:
        raise ValueError(f"named_by must be one of {NAMINGS}; got {named_by!r}")
    shift = 1 if named_by == "start" else 0
    found: list[FiscalPeriod] = []
    claim = _claimer()
    for m in _DURATION.finditer(text):
        if claim(m):
            found.append(_on_date(m, 3, fy_end, _months(m.group(1), m.group(2)), m))
    for m in _NAMED.finditer(text):
        if claim(m):
            kind = m.group(1).lower()
            months = 12 if "year" in kind else 3 if "quarter" in kind else None
            found.append(_on_date(m, 2, fy_end, months, m))
    for rx in _QUARTER_PATTERNS:
        for m in rx.finditer(text):
            if claim(m):
                found.append(
                    FiscalPeriod(_year(m.group(2)) + shift, _quarter_number(m.group(1)), 3, False, *m.span())
                )
    for m in _FY_PATTERN.finditer(text):
        if claim(m):
            found.append(FiscalPeriod(_year(m.group(1) or m.group(2)) + shift, None, 12, True, *m.span()))
    for m in _DAY.finditer(text):
        if claim(m):
            found.append(_on_date(m, 1, fy_end, None, m))
    for m in _MONTH_PATTERN.finditer(text):
        if claim(m):  # a month: the period closing at its end
            fy, q = fiscal_year_of(_month(m.group(1)), 28, int(m.group(2)), fy_end)
            found.append(FiscalPeriod(fy, q, None, False, *m.span()))
    for m in _YEAR_PATTERN.finditer(text):
        if claim(m):
            found.append(FiscalPeriod(int(m.group(1)) + shift, None, None, False, *m.span()))
    return sorted(found, key=lambda p: p.start)


def fiscal_keys(text: str, fy_end: int = 12) -> list[str]:
    """Period keys of :func:`question_periods`, in order of first appearance.

    Examples
    --------
    >>> fiscal_keys("revenue in the six months ended March 30, 2024 against fiscal 2023", 9)
    ['2024q2', '2024', '2023']
    """
    return list(dict.fromkeys(k for p in question_periods(text, fy_end) for k in p.keys()))


def read_periods(text: str, fy_end: int | None, named_by: str = "end") -> tuple[list[str], bool]:
    """``(period keys, asks for the annual report)`` of a question: :func:`fiscal_keys` and
    :func:`prefers_annual` in the calendar whose year ends in month ``fy_end`` and whose years are named by
    ``named_by`` (:func:`question_periods`); with ``fy_end`` ``None`` (no calendar known), the calendar reading
    :func:`period_keys` and ``False``.

    Examples
    --------
    >>> read_periods("Apple's revenue for the quarter ended June 24, 2023", 9)
    (['2023q3', '2023'], False)
    >>> read_periods("Apple's revenue for the quarter ended June 24, 2023", None)
    (['2023q2', '2023'], False)
    >>> read_periods("Foot Locker's total sales in fiscal 2022", 1, "start")
    (['2023'], True)
    """
    if fy_end is None:
        return period_keys(text), False
    periods = question_periods(text, fy_end, named_by=named_by)
    return list(dict.fromkeys(k for p in periods for k in p.keys())), prefers_annual(periods)


def prefers_annual(periods: Iterable[FiscalPeriod]) -> bool:
    """Whether a question's periods ask for the annual report: one is a fiscal year and none a quarter."""
    periods = list(periods)
    return any(p.annual for p in periods) and not any(p.quarter is not None for p in periods)


def fiscal_year_ends(metas: Mapping) -> dict[str, int]:
    """Company key → the month its fiscal year ends, from documents that state it (``fiscal_year_end``
    of :class:`~aethel_lite.data.docmeta.DocMeta`); a company whose documents disagree takes the month
    most of them give (ties: the earliest month)."""
    votes: dict[str, dict[int, int]] = {}
    for d in metas.values():
        if d.fiscal_year_end:
            for c in d.companies:
                counts = votes.setdefault(c, {})
                counts[d.fiscal_year_end] = counts.get(d.fiscal_year_end, 0) + 1
    return {c: min(counts, key=lambda m: (-counts[m], m)) for c, counts in sorted(votes.items())}


def _best_known(companies: Mapping[str, float], known: Mapping[str, object]):
    """The value ``known`` gives the best-matched company named (by match, then key) it knows; else ``None``."""
    for c in sorted(companies, key=lambda c: (-companies[c], c)):
        if c in known:
            return known[c]
    return None


def calendar_of(companies: Mapping[str, float], year_ends: Mapping[str, int]) -> int | None:
    """The fiscal-year-end month to read a question in: that of the best-matched company named (by
    match, then key) whose calendar is known; with no such company, the corpus's one month if all its
    companies share it; else ``None`` (the calendar reading, :func:`period_keys`)."""
    month = _best_known(companies, year_ends)
    if month is not None:
        return month
    months = set(year_ends.values())
    return months.pop() if len(months) == 1 else None


#: "Fiscal year 2022, 2021, and 2020 represented the 52 weeks ended January 28, 2023", "fiscal year 2017 included 53
#: weeks and ended on September 30, 2017", "Fiscal 2018, 2017 and 2016 ended December 29, 2018", "fiscal year 2023,
#: ending February 3, 2024": a fiscal year named, then (after the years listed with it) the day its period ends
_YEAR_THEN_DAY = re.compile(
    rf"\bfiscal\s+(?:year\s+)?{_YEAR4}(?:(?:,\s*|\s+)(?:and\s+)?(?:fiscal\s+)?(?:year\s+)?(?:19|20)\d\d)*,?\s+"
    r"(?:(?:was|were|represented|included|includes|consisted\s+of|comprised|is)\s+(?:a\s+|the\s+)?"
    r"(?:(?:52|53|fifty[\s-]two|fifty[\s-]three)[\s-]weeks?\s*(?:period|fiscal\s+year|year)?s?\s*(?:and\s+)?)?)?"
    rf"(?:ended|ending|ends)\s+(?:on\s+)?{_DATE}",
    re.I,
)
#: 'the fiscal year ending January 31, 2024 ("fiscal 2024")': a period's last day, then the year's name
_DAY_THEN_YEAR = re.compile(
    rf"\b(?:year|period)\s+(?:ended|ending)\s+(?:on\s+)?{_DATE}\s*\(\s*[\"“]?fiscal\s+(?:year\s+)?{_YEAR4}",
    re.I,
)


def year_naming(texts: Iterable[str], fy_end: int) -> str | None:
    r"""How a filer names its fiscal years, from the sentences of its pages that name one with the day it ends.

    A sentence naming fiscal year :math:`n` whose period ends on a day of fiscal year :math:`Y`
    (:func:`~aethel_lite.data.cover.fiscal_year_of` in the calendar ending in month ``fy_end``: the year it ends
    in) says the filer names its years by their end when :math:`n = Y` and by their start when :math:`n = Y - 1`
    ("Fiscal year 2022 ... represented the 52 weeks ended January 28, 2023"). A quarter's sentence counts too
    ("the first quarter of fiscal 2024 ended April 30, 2023").

    Parameters
    ----------
    texts : iterable of str
        A filing's pages.
    fy_end : int
        Month (1-12) its fiscal year ends in.

    Returns
    -------
    {"end", "start"} or None
        The naming more sentences give (a tie: ``"end"``); ``None`` when no sentence names a year with its day
        (or each names one neither way).

    Examples
    --------
    >>> year_naming(["Fiscal year 2022 represented the 52 weeks ended January 28, 2023."], 1)
    'start'
    >>> year_naming(['the fiscal year ending January 31, 2024 ("fiscal 2024")'], 1)
    'end'
    >>> year_naming(["Fiscal 2018 as compared to fiscal 2017 is in our Form 10-K."], 11) is None
    True
    """
    votes = {"end": 0, "start": 0}
    for text in texts:
        if "iscal" not in text and "ISCAL" not in text:
            continue
        found = [(int(m.group(1)), m.group(2), m.group(3), m.group(4)) for m in _YEAR_THEN_DAY.finditer(text)]
        if re.search(r"\(\s*[\"“]?fiscal", text, re.I):
            found += [(int(m.group(4)), *m.group(1, 2, 3)) for m in _DAY_THEN_YEAR.finditer(text)]
        for name, month, day, year in found:
            shift = fiscal_year_of(_month(month), int(day), int(year), fy_end)[0] - name
            if shift in (0, 1):
                votes[NAMINGS[shift]] += 1
    if not any(votes.values()):
        return None
    return "start" if votes["start"] > votes["end"] else "end"


def fiscal_year_names(metas: Mapping) -> dict[str, str]:
    """Company key → how it names its fiscal years (:data:`NAMINGS`), from documents that say it
    (``fiscal_year_name`` of :class:`~aethel_lite.data.docmeta.DocMeta`); a company whose documents disagree takes
    the naming most give (a tie: ``"end"``)."""
    votes: dict[str, Counter] = {}
    for d in metas.values():
        if getattr(d, "fiscal_year_name", None) in NAMINGS:
            for c in d.companies:
                votes.setdefault(c, Counter())[d.fiscal_year_name] += 1
    return {c: "start" if n["start"] > n["end"] else "end" for c, n in sorted(votes.items())}


def naming_of(companies: Mapping[str, float], year_names: Mapping[str, str]) -> str:
    """How to read the fiscal years a question names: the naming of the best-matched company named whose naming
    is known (:func:`calendar_of`'s order), else ``"end"``."""
    return _best_known(companies, year_names) or "end"


def filer_key(key: str, named_by: str | None) -> str:
    """A period key as the filer names it: ``"2023q3"`` of a filer naming its years by their start is its
    ``"2022q3"``; else the key as it is.

    Examples
    --------
    >>> filer_key("2023q3", "start"), filer_key("2023", "end"), filer_key("2023", None)
    ('2022q3', '2023', '2023')
    """
    if named_by != "start" or not key[:4].isdigit():
        return key
    return f"{int(key[:4]) - 1}{key[4:]}"


@dataclass(frozen=True)
class FiscalCalendars:
    """The fiscal calendars of a corpus's companies, where their documents state them.

    Attributes
    ----------
    ends : mapping
        Company key → the month its fiscal year ends (:func:`fiscal_year_ends`).
    names : mapping
        Company key → how it names its fiscal years, ``"end"`` or ``"start"`` (:func:`fiscal_year_names`).
    """

    ends: Mapping[str, int] = field(default_factory=dict)
    names: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, metas: Mapping) -> FiscalCalendars:
        """The calendars ``doc_id`` → :class:`~aethel_lite.data.docmeta.DocMeta` state."""
        return cls(fiscal_year_ends(metas), fiscal_year_names(metas))

    def read(self, text: str, companies: Mapping[str, float]) -> tuple[list[str], bool]:
        """:func:`read_periods` of a question naming ``companies`` (company key → match), in the calendar
        (:func:`calendar_of`) and the naming (:func:`naming_of`) of the best-matched one."""
        return read_periods(text, calendar_of(companies, self.ends), naming_of(companies, self.names))
