r"""Figures and periods in financial text, normalised so that two documents can be compared.

Every figure keeps its *surface* (the exact characters of the source) beside its normalised
value: the memo prints surfaces only. Units:

==========  ===================================================  ================================
unit        surfaces                                             value
==========  ===================================================  ================================
``USD m``   "$812.4 million", "$1.2bn", "$1.25 billion",         millions of US dollars
            "$300,000", "USD 5m"; a bare table number on a page  ("$1.2bn" → 1,200; "(1,577)" on a
            "in millions" / "in thousands"                       "(Millions)" page → −1,577)
``EUR m``   "€20m", "EUR 3.5 billion" (likewise ``GBP m``)        millions of that currency
``%``       "14.2%", "(1.5)%", "-3 percent"                      percentage points
``x``       "1.62x", "0.40x"                                     a multiple
==========  ===================================================  ================================

Parentheses mean a negative amount, as in financial statements. Values are rounded to 6
decimals so that equal figures compare equal (:func:`same_value`).

Periods are labels: ``"2024Q3"`` for a quarter (a quarter-end date such as "June 30, 2024",
"30 June 2024", "06/30/2024", "Q2 2024" or "the second quarter of 2024"), ``"FY2018"`` for a
fiscal year ("fiscal 2018", "FY2018", a year column of a table), ``"2024-05-17"`` for any other
full date. :func:`period_sort_key` orders them. A full date is also kept as such (``Period.date``).

**In the filer's fiscal terms** (:func:`fiscal_name`, :func:`period_phrase`). A period that ends on
a known day is named after the fiscal year it falls in and the fiscal quarter it closes, given the
month the filer's fiscal year ends in (:func:`aethel_lite.data.cover.fiscal_year_of`; December when
unknown), together with its length: "Q3 FY2023, three months ended July 1, 2023", "9M FY2023, nine
months ended July 1, 2023", "FY2022, twelve months ended September 24, 2022", "Q3 FY2023, as of July
1, 2023" (a balance). A quarter or year the text names without a day ("Q3 2023", "fiscal 2022") is
taken as the filer's own fiscal quarter or year.

**Printed units** (:func:`printed_unit`): the unit a figure's surface is printed in, for the reader
beside a bare table number: "USD millions" on a page "(in millions, except per-share amounts)",
"USD thousands" on a page "(in thousands)", "%" and "x" as printed.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..data.cover import fiscal_year_of
from ..errors import ParameterError

__all__ = [
    "Figure",
    "Period",
    "UNITS",
    "find_figures",
    "parse_figure",
    "parse_number",
    "page_scale",
    "disjoint",
    "find_periods",
    "parse_period",
    "period_sort_key",
    "same_value",
    "fiscal_year",
    "date_label",
    "DURATIONS",
    "find_durations",
    "duration_text",
    "fiscal_of",
    "fiscal_name",
    "period_phrase",
    "long_date",
    "printed_unit",
]

UNITS = ("USD m", "EUR m", "GBP m", "%", "x")

_CURRENCY = {"$": "USD", "us$": "USD", "usd": "USD", "€": "EUR", "eur": "EUR", "£": "GBP", "gbp": "GBP"}
# scale word -> factor to millions
_SCALE = {
    "trillion": 1e6,
    "tn": 1e6,
    "billion": 1e3,
    "bn": 1e3,
    "b": 1e3,
    "million": 1.0,
    "mn": 1.0,
    "mm": 1.0,
    "m": 1.0,
    "thousand": 1e-3,
    "k": 1e-3,
}
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
_MONEY_RE = re.compile(
    r"(?P<open>\()?(?P<neg>[-−–])?\s?(?P<cur>US\$|\$|€|£|(?<![A-Za-z])(?:USD|EUR|GBP)\s?)\s?(?P<neg2>[-−–])?"
    r"(?P<num>"
    + _NUM
    + r")(?:\s?(?P<scale>trillion|billion|million|thousand)\b|(?P<short>bn|tn|mn|mm|m|b|k)\b)?"
    r"(?P<close>\))?",
    re.IGNORECASE,
)
_PERCENT_RE = re.compile(
    r"(?P<open>\()?(?P<neg>[-−–])?(?P<num>" + _NUM + r")(?P<close>\))?\s?(?:%|\s?percent\b)", re.IGNORECASE
)
_MULTIPLE_RE = re.compile(r"(?<![\w.])(?P<num>\d+(?:\.\d+)?)x(?![\w])")
_BARE_RE = re.compile(
    r"(?<![\w.$€£%])(?P<open>\()?(?P<neg>[-−–])?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?P<close>\))?(?![\w%])"
)


@dataclass(frozen=True)
class Figure:
    """One figure found in a text.

    Attributes
    ----------
    value : float
        Normalised value (see the module table), rounded to 6 decimals.
    unit : str
        One of :data:`UNITS`.
    surface : str
        ``text[start:end]``, exactly as printed.
    start, end : int
        Character offsets into the searched text.
    """

    value: float
    unit: str
    surface: str
    start: int
    end: int


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def _round(v: float) -> float:
    r = round(v, 6)
    return 0.0 if r == 0 else r


def _signed(m: re.Match) -> tuple[float, int, bool]:
    """``(value, start, balanced)`` of a number match; parentheses mean negative, an unbalanced one is prose."""
    balanced = bool(m.group("open")) == bool(m.group("close"))
    start = m.start() if balanced else m.start("neg") if m.group("neg") else m.start("num")
    v = _num(m.group("num"))
    neg = bool(m.group("neg")) or (balanced and bool(m.group("open")))
    return _round(-v if neg else v), start, balanced


def parse_number(text: str) -> float | None:
    """A printed table number as a float: ``"1,577"`` → 1577, ``"(1,577)"`` → −1577; ``None`` otherwise."""
    m = re.fullmatch(r"\s*(\()?\s*([-−–])?\s*\$?\s*(" + _NUM + r")\s*(\))?\s*", text)
    if not m or bool(m.group(1)) != bool(m.group(4)):
        return None
    v = _num(m.group(3))
    return -v if (m.group(1) or m.group(2)) else v


def page_scale(text: str) -> float | None:
    """The scale of a page's tables in millions ("in millions" → 1, "(Dollars in thousands)" → 0.001), or
    ``None``; the first statement of a scale wins."""
    m = re.search(
        r"\(\s*(?:[a-z$ ]*?\bin\s+)?(millions|thousands|billions)\b|\bin\s+(millions|thousands|billions)\b",
        text,
        re.IGNORECASE,
    )
    if not m:
        return None
    return {"millions": 1.0, "thousands": 1e-3, "billions": 1e3}[(m.group(1) or m.group(2)).lower()]


def _money(m: re.Match, text: str, scale: float | None) -> Figure:
    start, end = m.start(), m.end()
    opened, closed = bool(m.group("open")), bool(m.group("close"))
    if opened and not closed:  # "(see $5 million" -- the parenthesis belongs to the prose
        start = m.end("open")
    if closed and not opened:
        end = m.start("close")
    neg = (opened and closed) or bool(m.group("neg") or m.group("neg2"))
    cur = _CURRENCY[m.group("cur").strip().lower()]
    v = _num(m.group("num"))
    word = (m.group("scale") or m.group("short") or "").lower()
    if word:
        v *= _SCALE[word]
    elif scale is not None:
        v *= scale
    else:
        v /= 1e6
    while start < end and text[start].isspace():
        start += 1
    return Figure(_round(-v if neg else v), f"{cur} m", text[start:end], start, end)


def find_figures(text: str, *, scale: float | None = None) -> list[Figure]:
    """Money, percentages and multiples in ``text``, in text order, never overlapping.

    Parameters
    ----------
    text : str
    scale : float, optional
        Millions per printed unit for money written without a scale word (``page_scale(page)``).
        Without it such money is read as dollars ("$300,000" → 0.3 USD m).

    Returns
    -------
    list of Figure
        Bare numbers (without a currency, percent sign or "x") are not figures.
    """
    if not isinstance(text, str):
        raise ParameterError(f"text: expected str, got {type(text).__name__}")
    candidates = [_money(m, text, scale) for m in _MONEY_RE.finditer(text)]
    for m in _PERCENT_RE.finditer(text):
        v, start, _ = _signed(m)
        candidates.append(Figure(v, "%", text[start : m.end()], start, m.end()))
    candidates += [
        Figure(_round(_num(m.group("num"))), "x", m.group(0), m.start(), m.end())
        for m in _MULTIPLE_RE.finditer(text)
    ]
    found: list[Figure] = []
    for fig in candidates:  # money first, then percentages, then multiples
        if disjoint([(f.start, f.end) for f in found], fig.start, fig.end):
            found.append(fig)
    found.sort(key=lambda f: f.start)
    return found


def disjoint(spans: Iterable[tuple[int, int]], a: int, b: int) -> bool:
    """Whether ``[a, b)`` overlaps none of ``spans``."""
    return all(b <= s or a >= e for s, e in spans)


def parse_figure(text: str, *, scale: float | None = None) -> tuple[float, str] | None:
    """``(value, unit)`` of a text that is exactly one figure ("$1.2bn" → ``(1200.0, "USD m")``), else ``None``."""
    text = text.strip()
    figs = find_figures(text, scale=scale)
    if len(figs) == 1 and figs[0].start == 0 and figs[0].end == len(text):
        return figs[0].value, figs[0].unit
    return None


def bare_numbers(text: str) -> list[tuple[float, str, int, int]]:
    """Bare numbers of a text: ``(value, surface, start, end)``; parentheses mean negative."""
    out = []
    for m in _BARE_RE.finditer(text):
        v, start, balanced = _signed(m)
        end = m.end() if balanced else m.end("num")
        out.append((v, text[start:end], start, end))
    return out


def same_value(a: float | None, b: float | None, *, rel: float = 1e-9) -> bool:
    """Whether two normalised values are equal (both rounded to 6 decimals, relative tolerance ``rel``)."""
    if a is None or b is None:
        return a is None and b is None
    a, b = _round(float(a)), _round(float(b))
    return a == b or math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


# -------------------------------------------------------------------------------------- periods
_MONTHS = {
    m: i
    for i, m in enumerate(
        "january february march april may june july august september october november december".split(),
        start=1,
    )
}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_QUARTER_END = {(3, 31): 1, (6, 30): 2, (9, 30): 3, (12, 31): 4}
_ORD = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}
_MONTH_RE = r"(?P<month>January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_PERIOD_PATTERNS = [
    ("mdy", re.compile(_MONTH_RE + r"\s+(?P<day>\d{1,2}),?\s+" + _YEAR + r"\b", re.IGNORECASE)),
    ("dmy", re.compile(r"\b(?P<day>\d{1,2})\s+" + _MONTH_RE + r",?\s+" + _YEAR + r"\b", re.IGNORECASE)),
    ("num", re.compile(r"\b(?P<mm>\d{1,2})/(?P<dd>\d{1,2})/" + _YEAR + r"\b")),
    (
        "q",
        re.compile(
            r"\b(?:Q(?P<q>[1-4])\s*(?:FY\s?)?'?"
            + _YEAR
            + r"|"
            + _YEAR.replace("year", "year2")
            + r"\s?Q(?P<q2>[1-4]))\b",
            re.IGNORECASE,
        ),
    ),
    (
        "ordq",
        re.compile(
            r"\b(?P<ord>first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter\s+(?:of\s+)?(?:fiscal\s+)?"
            + _YEAR
            + r"\b",
            re.IGNORECASE,
        ),
    ),
    ("fy", re.compile(r"\b(?:FY\s?'?|fiscal(?:\s+year)?\s+)" + _YEAR + r"\b", re.IGNORECASE)),
    ("fy2", re.compile(r"\bFY\s?'?(?P<yy>\d{2})\b")),
]


@dataclass(frozen=True)
class Period:
    """A period mention: its label (``"2024Q3"``, ``"FY2018"``, ``"2024-05-17"``) and where it is.

    ``kind`` is ``"date"`` for a full date ("June 30, 2024"), ``"quarter"`` for a named quarter
    ("Q2 2024"), ``"year"`` for a fiscal year. ``date`` is the day a full date names
    (``"2024-06-30"``), kept when the label is its quarter or, in an annual report, its fiscal year.
    """

    label: str
    start: int
    end: int
    kind: str = ""
    date: str | None = None


def date_label(year: int, month: int, day: int) -> str | None:
    """The label of a date: its quarter at a calendar quarter's end (``"2022Q4"``), else ``"2022-10-29"``."""
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    q = _QUARTER_END.get((month, day))
    return f"{year}Q{q}" if q else f"{year:04d}-{month:02d}-{day:02d}"


def _label(kind: str, m: re.Match) -> str | None:
    g = m.groupdict()
    if kind in ("mdy", "dmy"):
        return date_label(int(g["year"]), _MONTHS[g["month"].lower().rstrip(".")], int(g["day"]))
    if kind == "num":
        return date_label(int(g["year"]), int(g["mm"]), int(g["dd"]))
    if kind == "q":
        return f"{g['year']}Q{g['q']}" if g.get("q") else f"{g['year2']}Q{g['q2']}"
    if kind == "ordq":
        return f"{g['year']}Q{_ORD[g['ord'].lower()]}"
    if kind == "fy":
        return f"FY{g['year']}"
    return f"FY20{g['yy']}"  # "fy2"


def _iso(kind: str, m: re.Match) -> str | None:
    """The ISO date of a full-date match, else ``None``."""
    g = m.groupdict()
    if kind in ("mdy", "dmy"):
        month, day = _MONTHS[g["month"].lower().rstrip(".")], int(g["day"])
    elif kind == "num":
        month, day = int(g["mm"]), int(g["dd"])
    else:
        return None
    return f"{int(g['year']):04d}-{month:02d}-{day:02d}" if 1 <= month <= 12 and 1 <= day <= 31 else None


def find_periods(text: str) -> list[Period]:
    """Period mentions of ``text`` in text order (the longest match wins where patterns overlap)."""
    return list(_periods_of(text))


@functools.lru_cache(maxsize=8192)
def _periods_of(text: str) -> tuple[Period, ...]:
    """:func:`find_periods`, kept per text: a swarm run builds the view of one page for every question that reads
    it (the periods are frozen, the list each caller gets is its own)."""
    cands: list[Period] = []
    for kind, rx in _PERIOD_PATTERNS:
        for m in rx.finditer(text):
            label = _label(kind, m)
            if label:
                what = (
                    "date"
                    if kind in ("mdy", "dmy", "num")
                    else "quarter"
                    if kind in ("q", "ordq")
                    else "year"
                )
                cands.append(Period(label, m.start(), m.end(), what, _iso(kind, m)))
    cands.sort(key=lambda p: (p.start, -(p.end - p.start)))
    out: list[Period] = []
    for p in cands:
        if not out or p.start >= out[-1].end:
            out.append(p)
    return tuple(out)


def parse_period(text: str) -> str | None:
    """The label of the first period mentioned in ``text`` ("as of June 30, 2024" → ``"2024Q2"``), else ``None``.

    A bare year ("2018") is ``"FY2018"``.
    """
    found = find_periods(text)
    if found:
        return found[0].label
    m = re.search(r"\b((?:19|20)\d{2})\b", text)
    return f"FY{m.group(1)}" if m else None


def period_sort_key(label: str | None) -> tuple:
    """Chronological sort key of a period label (unknown labels last, then by text)."""
    if not label:
        return (9999, 9, 99, "")
    m = re.fullmatch(r"(\d{4})Q([1-4])", label)
    if m:
        return (int(m.group(1)), int(m.group(2)) * 3, 31, label)
    m = re.fullmatch(r"FY(\d{4})", label)
    if m:
        return (int(m.group(1)), 12, 32, label)
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", label)
    if m:
        return (int(m.group(1)), int(m.group(2)), int(m.group(3)), label)
    return (9999, 9, 99, label)


def fiscal_year(period: Period) -> Period:
    """A date mention read as the fiscal year it closes ("December 31, 2018" → ``FY2018``) — in an
    annual report, balance-sheet and column dates are fiscal year ends; other periods unchanged."""
    if period.kind != "date":
        return period
    return Period(f"FY{period.label[:4]}", period.start, period.end, "year", period.date)


# ------------------------------------------------------------------------------------ durations
#: the lengths a figure's period can have, in months, and how the memo names them
DURATIONS = {3: "three months", 6: "six months", 9: "nine months", 12: "twelve months"}
_WORD_MONTHS = {"three": 3, "six": 6, "nine": 9, "twelve": 12, "3": 3, "6": 6, "9": 9, "12": 12}
_WORD_WEEKS = {"thirteen": 3, "twenty-six": 6, "thirty-nine": 9, "fifty-two": 12, "fifty-three": 12}
_WORD_WEEKS.update({"13": 3, "26": 6, "39": 9, "52": 12, "53": 12})
_DURATION = re.compile(
    r"\b(?P<m>three|six|nine|twelve|3|6|9|12)[\s-]+months?\s+(?:period\s+)?end(?:ed|ing)\b"
    r"|\b(?P<w>thirteen|twenty[\s-]six|thirty[\s-]nine|fifty[\s-]two|fifty[\s-]three|13|26|39|52|53)[\s-]+weeks?"
    r"\s+(?:period\s+)?end(?:ed|ing)\b"
    r"|\b(?P<q>quarter)\s+end(?:ed|ing)\b"
    r"|\b(?P<y>(?:fiscal\s+)?years?)\s+end(?:ed|ing)\b",
    re.IGNORECASE,
)


def find_durations(text: str) -> list[tuple[int, int, int]]:
    """``(months, start, end)`` of every period length ``text`` states, in text order.

    "Three Months Ended", "Nine months ended", "13 Weeks Ended", "Twenty-Six Weeks Ended" (weeks of a
    52/53-week year: 13 → 3, 26 → 6, 39 → 9, 52 or 53 → 12), "Quarter Ended" (3), "Year(s) Ended"
    and "Fiscal Year Ended" (12). A length is only read where the text says the period *ended* (or
    is *ending*): "six months" alone is not a period's length.
    """
    out = []
    for m in _DURATION.finditer(text):
        if m.group("m"):
            months = _WORD_MONTHS[m.group("m").lower()]
        elif m.group("w"):
            months = _WORD_WEEKS[re.sub(r"[\s-]+", "-", m.group("w").lower())]
        else:
            months = 3 if m.group("q") else 12
        out.append((months, m.start(), m.end()))
    return out


def duration_text(months: int | None) -> str:
    """How the memo names a figure's length: ``"three months"``, ..., ``"length not stated"``."""
    return DURATIONS.get(months, "length not stated") if months else "length not stated"


# ------------------------------------------------------------------------------- fiscal terms
_MONTH_NAMES = "January February March April May June July August September October November December".split()


def long_date(iso: str) -> str:
    """``"2023-07-01"`` → ``"July 1, 2023"`` (any other text unchanged)."""
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", iso or "")
    if not m or not 1 <= int(m.group(2)) <= 12:
        return iso
    return f"{_MONTH_NAMES[int(m.group(2)) - 1]} {int(m.group(3))}, {m.group(1)}"


def fiscal_of(
    label: str | None, date: str | None, fy_end: int | None, named_by: str = "end"
) -> tuple[int, int | None] | None:
    """``(fiscal year, fiscal quarter)`` of a period: from its day when known (the quarter it closes, for
    a fiscal year ending in month ``fy_end``, December when ``None``; the year named as the filer names it,
    ``named_by``: after the calendar year it ends in or, ``"start"``, starts in), else as the label names it
    (``"2023Q3"`` → ``(2023, 3)``, ``"FY2022"`` → ``(2022, None)``: a filing's own words); ``None`` for no
    period.

    Examples
    --------
    >>> fiscal_of("2023-07-01", "2023-07-01", 9)   # Apple's third fiscal quarter of 2023
    (2023, 3)
    >>> fiscal_of("2022Q4", "2022-12-31", 9)       # its first of 2023
    (2023, 1)
    >>> fiscal_of("FY2022", None, 9)
    (2022, None)
    >>> fiscal_of("2023-01-28", "2023-01-28", 1, "start")   # Foot Locker's fiscal 2022
    (2022, 4)
    """
    shift = 1 if named_by == "start" else 0
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", date or "")
    if m:
        fy, q = fiscal_year_of(int(m.group(2)), int(m.group(3)), int(m.group(1)), fy_end or 12)
        return fy - shift, q
    m = re.fullmatch(r"(\d{4})Q([1-4])", label or "")
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.fullmatch(r"FY(\d{4})", label or "")
    if m:
        return int(m.group(1)), None
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", label or "")
    if m:
        fy, q = fiscal_year_of(int(m.group(2)), int(m.group(3)), int(m.group(1)), fy_end or 12)
        return fy - shift, q
    return None


def fiscal_name(
    label: str | None,
    date: str | None,
    months: int | None,
    fy_end: int | None,
    *,
    flow: bool = True,
    named_by: str = "end",
) -> str | None:
    """A period in the filer's fiscal terms: ``"Q3 FY2023"`` (three months, or a balance at a quarter's
    end), ``"H1 FY2023"`` (six months to the second quarter's end; ``"6M"`` to another), ``"9M FY2023"``,
    ``"FY2023"`` (twelve months to the fiscal year's end, a year the text names, or a balance at the
    year's end); ``None`` without a period. The year is named as the filer names it (``named_by``,
    :func:`fiscal_of`).

    Examples
    --------
    >>> fiscal_name("2023-07-01", "2023-07-01", 9, 9)
    '9M FY2023'
    >>> fiscal_name("FY2022", "2022-09-24", None, 9, flow=False)
    'FY2022'
    """
    found = fiscal_of(label, date, fy_end, named_by)
    if found is None:
        return None
    fy, q = found
    if q is None or (q == 4 and (months == 12 or (months is None and not flow))):
        return f"FY{fy}"
    if months == 9:
        return f"9M FY{fy}"
    if months == 6:
        return f"{'H1' if q == 2 else '6M'} FY{fy}"
    return f"Q{q} FY{fy}"


def period_phrase(name: str | None, date: str | None, months: int | None, *, flow: bool = True) -> str:
    """How the memo states a period: its fiscal name, then its length and the day it ends (a flow: "Q3
    FY2023, three months ended July 1, 2023"; one whose length the text does not state: "..., period
    ended July 1, 2023 (length not stated)") or the day it is at (a balance: "FY2022, as of September
    24, 2022"); the name alone without a day ("FY2022")."""
    name = name or ""
    if date:
        day = long_date(date)
        if months in DURATIONS:
            return f"{name}, {DURATIONS[months]} ended {day}"
        if flow:
            return f"{name}, period ended {day} (length not stated)"
        return f"{name}, as of {day}"
    if months in DURATIONS and months != 12 and not name.startswith(("9M", "H1", "6M")):
        return f"{name}, {DURATIONS[months]}"
    return name


_SCALE_NAMES = {1e6: "trillions", 1e3: "billions", 1.0: "millions", 1e-3: "thousands"}


def printed_unit(unit: str | None, surface: str | None, scale: float | None) -> str | None:
    """The unit a figure's surface is printed in: money as its currency and scale ("USD millions" for
    "169,658" on a page "in millions" or for "$812.4 million", "USD billions" for "$1.2bn", "USD" for
    "$300,000" on a page without a scale), ``"%"`` and ``"x"`` as they are; ``None`` without a unit.

    Examples
    --------
    >>> printed_unit("USD m", "1,577", 1e-3)
    'USD thousands'
    >>> printed_unit("USD m", "$1.2bn", None)
    'USD billions'
    """
    if unit is None or not unit.endswith(" m"):
        return unit
    currency = unit[:-2]
    m = _MONEY_RE.search(surface or "")
    word = ((m.group("scale") or m.group("short") or "") if m else "").lower()
    factor = _SCALE[word] if word else scale
    name = _SCALE_NAMES.get(factor) if factor is not None else None
    return f"{currency} {name}" if name else currency
