r"""Statement tables in a page's text: rows, their columns' periods, captions, and which rows are segments'.

PDF text gives a statement table one cell per line: a header run of years or dates (the columns, all
different), then rows of a label line and one number per column, or the numbers at the end of the
label line (:func:`table_rows`; the extractor's step 4, :mod:`aethel_lite.swarm.extract`). Length
phrases above the header run ("Three Months Ended", "Nine Months Ended") each cover an equal share of
its columns; a phrase's own date ("Six Months Ended December 31," over "2022") dates the year columns,
and so do days printed apart from their years, one per column ("January 28," "January 29," over "2023"
"2022": Foot Locker's balance sheet), when no figure follows them (a row labelled by a day is a row).

**Captions.** A label-only line ending in ":" ("Americas:", "Net sales:"), or naming a region, is the
caption of the rows below it (:attr:`TableRow.group`), up to the next caption, a "Total ..." row or
the next table. A table whose title (the last label-only line above its header run, length and unit
lines aside) names one segment ("Flexibles Segment", "North America segment results") captions every
row with it. A line of length phrases is never a row: between two tables ("Three Months Ended
December 31," over "($ in millions)") it heads the next table's columns.

**The company's figure or a segment's** (:func:`segment_of`). A segment note prints the metric once
per segment ("Americas: Net sales", "Europe: Net sales"); those rows are the segments' figures, the
company's is the statement's total. **Consolidated statements** (:func:`statement_page`) are told
from notes by their title in the page's first lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..data.cover import MONTHS
from .lexicon import clean_label
from .values import (
    bare_numbers,
    date_label,
    find_durations,
    find_periods,
    fiscal_year,
    page_scale,
    parse_number,
)

__all__ = [
    "TableRow",
    "table_rows",
    "statement_page",
    "segment_of",
    "segment_title",
    "per_share",
    "REGION_RE",
]


@dataclass(frozen=True)
class TableRow:
    """One statement-table row: its label, its numbers and the column periods.

    ``dates`` holds each column's end day where the header states one (``"2023-07-01"``), ``group``
    the caption line the row sits under ("Americas:" → ``"Americas"``), ``table`` the number of
    the table on its page (a header run starts the next one).
    """

    label: str
    start: int  # of the label
    end: int  # of the last number
    values: tuple[tuple[float, str, int, int], ...]  # (value, surface, start, end)
    periods: tuple[str, ...]
    durations: tuple[int | None, ...] = ()  # months per column ("Three Months Ended": 3), None unstated
    dates: tuple[str | None, ...] = ()
    group: str | None = None
    table: int = 0


_DASHES = ("—", "–", "-", "−", "—%", "*")
_YEAR_LINE = re.compile(r"(?:19|20)\d{2}")
_MONTH_DAY = re.compile(
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
    r"\s+\d{1,2},?",
    re.IGNORECASE,
)


def _header_label(line: str, annual: bool = False) -> tuple[str, str | None] | None:
    """The period a header cell names and its day: a year (``("FY2018", None)``) or a full date
    (``("2023Q2", "2023-06-30")``; ``FY`` of its year in an annual report)."""
    s = line.strip()
    if _YEAR_LINE.fullmatch(s):
        return f"FY{s}", None
    found = find_periods(s)
    if len(found) == 1 and found[0].start == 0 and found[0].end >= len(s.rstrip(" ,")) - 1:
        p = fiscal_year(found[0]) if annual else found[0]
        return p.label, p.date
    return None


_DURATION_LINE_REST = re.compile(r"^(?:for\s+the|and|\(unaudited\)|[\s,.:;()])*$", re.IGNORECASE)


def _duration_line(line: str) -> list[tuple[int, tuple[int, int] | None]]:
    """The lengths a column-header line states, each with the month and day it names ("Three Months Ended
    December 31," → ``[(3, (12, 31))]``); ``[]`` unless the line is only such phrases (not prose)."""
    found = find_durations(line)
    if not found or len(line) > 120:
        return []
    out, rest, last = [], [], 0
    for months, a, b in found:
        rest.append(line[last:a])
        tail = _MONTH_DAY.match(line, b + 1 if b < len(line) and line[b] == " " else b)
        day = None
        if tail:
            month, dd = tail.group(0).rstrip(",").split()
            day = (MONTHS[month.lower()], int(dd))
            b = tail.end()
        out.append((months, day))
        last = b
    rest.append(line[last:])
    return out if _DURATION_LINE_REST.match(" ".join(rest)) else []


def _columns(cells: list[tuple[str, str | None]], pending: list, annual: bool) -> tuple[tuple, ...] | None:
    """Column periods, lengths and days of a header run under the length phrases ``pending`` (each
    covering an equal share of the columns, in order); ``None`` when two columns would be the same."""
    labels, dates = [c[0] for c in cells], [c[1] for c in cells]
    n, k = len(labels), len(pending)
    durations: list = [None] * n
    if k and n % k == 0:
        durations = [pending[i // (n // k)][0] for i in range(n)]
        for i, label in enumerate(labels):  # "Three Months Ended December 31," over "2022"
            day = pending[i // (n // k)][1]
            if day and re.fullmatch(r"FY\d{4}", label) and dates[i] is None:
                year = int(label[2:])
                if date_label(year, *day) is None:
                    continue
                dates[i] = f"{year:04d}-{day[0]:02d}-{day[1]:02d}"
                if not annual and durations[i] < 12:  # the quarter ended that day
                    labels[i] = date_label(year, *day)
    pairs = list(zip(labels, durations))
    return (tuple(labels), tuple(durations), tuple(dates)) if len(set(pairs)) == n else None


#: a caption line that rows sit under: "Americas:", "Net sales by reportable segment:", or a region alone
_REGION = (
    r"(?:the\s+)?(?:americas|north\s+america|south\s+america|latin\s+america|europe|emea|"
    r"europe,?\s+(?:the\s+)?middle\s+east\s+(?:and|&)\s+africa|asia[\s-]pacific|apac|greater\s+china|china|"
    r"japan|rest\s+of\s+(?:asia[\s-]pacific|(?:the\s+)?world)|international|united\s+states|u\.\s?s\.|canada|"
    r"mexico|other\s+(?:countries|regions|international)|(?:other\s+)?foreign(?:\s+countries)?|domestic)"
)
REGION_RE = re.compile(_REGION, re.IGNORECASE)
_TOTAL = re.compile(r"^totals?\b", re.IGNORECASE)


#: a footnote mark after a caption: "Basic earnings per share: (a)", "Revenues:(1)", "Americas:*"
_FOOTNOTE_TAIL = re.compile(r"\s*(?:\([a-z0-9]{1,2}\)|\*+)$", re.IGNORECASE)


def _group_caption(line: str) -> str | None:
    """The caption a label-only line gives the rows below it ("Americas:" → "Americas"; a footnote mark after
    the colon allowed), else ``None``."""
    bare = _FOOTNOTE_TAIL.sub("", line.rstrip())
    s = clean_label(bare)
    if bare.endswith(":") and s and len(s) <= 80:
        return s
    return s if REGION_RE.fullmatch(s) else None


#: a table title that names one segment: "Flexibles Segment", "North America segment results" (the name: "Flexibles")
_SEGMENT_TITLE = re.compile(
    r"(?P<name>[A-Za-z][\w&,.'’ -]{0,50}?)\s+(?:reportable\s+)?segment(?:\s+results(?:\s+of\s+operations)?)?",
    re.IGNORECASE,
)


def _may_title(line: str) -> bool:
    """Whether a label-only line may title the table below it: it has letters and is neither a line of length
    phrases ("Three Months Ended December 31,") nor a unit line ("($ in millions)", :func:`page_scale`)."""
    return (
        any(c.isalpha() for c in line)
        and not _duration_line(line)
        and not (len(line) <= 80 and page_scale(line) is not None)
    )


def segment_title(line: str | None) -> str | None:
    """The segment a table's title names ("Flexibles Segment" → "Flexibles"), else ``None``; a title
    about every segment ("Segment Results of Operations", "Reportable segments") names none."""
    if not line:
        return None
    m = _SEGMENT_TITLE.fullmatch(clean_label(line))
    if m is None or re.match(
        r"(?:the\s+)?(?:reportable|operating|business|our|each|all)\b", m.group("name"), re.I
    ):
        return None
    return m.group("name")


def table_rows(text: str, *, annual: bool = False) -> list[TableRow]:
    """Rows of the statement tables in a page's text (see the module docstring, step 4)."""
    lines: list[tuple[int, str]] = []  # (offset, stripped line)
    for m in re.finditer(r"^.*$", text, re.MULTILINE):
        raw = m.group(0)
        s = raw.strip().replace("\xa0", " ")
        if not s or s == "$":
            continue
        if (
            lines and _YEAR_LINE.fullmatch(s) and _MONTH_DAY.fullmatch(lines[-1][1])
        ):  # a date split over two lines
            lines[-1] = (lines[-1][0], f"{lines[-1][1]} {s}")
        else:
            lines.append((m.start() + len(raw) - len(raw.lstrip()), s))
    headers = [_header_label(s, annual) for _, s in lines]
    runs = [0] * (len(lines) + 1)  # header cells in a row from each line on
    for i in reversed(range(len(lines))):
        runs[i] = runs[i + 1] + 1 if headers[i] is not None else 0
    rows: list[TableRow] = []
    columns: tuple[str, ...] | None = None
    lengths: tuple[int | None, ...] = ()
    days: tuple[str | None, ...] = ()
    group: str | None = None
    title: str | None = None  # the last label-only line since the last row (length and unit lines aside)
    table = -1
    pending: list = []  # the length phrases since the last header run
    month_days: list[str] = []  # "January 28," lines since the last header run: its years' days, in order
    i, n = 0, len(lines)
    while i < n:
        a, s = lines[i]
        if runs[i] >= 2:
            cells = list(headers[i : i + runs[i]])
            if len(month_days) == len(cells) and all(c[1] is None and c[0].startswith("FY") for c in cells):
                # "January 28," "January 29," over "2023" "2022": each column's day and its year
                dated = [
                    _header_label(f"{d.rstrip(',')}, {c[0][2:]}", annual) for d, c in zip(month_days, cells)
                ]
                cells = dated if all(dated) else cells
            found = _columns(cells, pending, annual)
            columns, lengths, days = found if found else (None, (), ())
            pending, group, title, month_days = [], segment_title(title), None, []
            table += 1
            i += runs[i]
            continue
        following = lines[i + 1][1].strip(" $") if i + 1 < n else ""
        if _MONTH_DAY.fullmatch(s) and following not in _DASHES and parse_number(following) is None:
            month_days.append(s)  # a column's day, not a row labelled by a day ("March 31" and its figures)
            i += 1
            continue
        durations = _duration_line(s)  # a length phrase is never a row: it heads the next table's columns
        if columns is None or not any(c.isalpha() for c in s) or runs[i + 1] >= 2 or durations:
            pending += durations
            if _may_title(s):
                title = s
            i += 1
            continue
        values: list[tuple[float, str, int, int]] = []
        j = i + 1
        while j < n:
            cell = lines[j][1].strip(" $")
            parsed = float("nan") if cell in _DASHES else parse_number(cell)  # a dash: nil
            if parsed is None:
                break
            cs = lines[j][0] + lines[j][1].find(cell)
            values.append((parsed, cell, cs, cs + len(cell)))
            j += 1
        if not values:  # the numbers may end the label line
            tail = _trailing_numbers(s, a)
            if tail and len(tail) == len(columns):
                label = s[: tail[0][2] - a].strip(" $")
                rows.append(
                    TableRow(label, a, tail[-1][3], tuple(tail), columns, lengths, days, group, table)
                )
            elif not tail:
                group = _group_caption(s) or group
                if _may_title(s):
                    title = s
        elif len(values) == len(columns):
            rows.append(TableRow(s, a, values[-1][3], tuple(values), columns, lengths, days, group, table))
        if rows and rows[-1].start == a:
            title, month_days = (
                None,
                [],
            )  # a title (or a column's day) heads the table after the rows, not these
            if _TOTAL.match(clean_label(rows[-1].label)):
                group = None  # "Total Defense, Space & Security" closes its caption
        i = j
    return rows


def _trailing_numbers(line: str, offset: int) -> list[tuple[float, str, int, int]]:
    """Numbers at the end of a label line ("Total assets $ 36,500 $ 37,987")."""
    m = re.search(r"(?:\s+\$?\s*\(?[-−–]?\d[\d,]*(?:\.\d+)?\)?)+\s*$", line)
    if not m:
        return []
    at = offset + m.start()
    return [(v, surf, at + s, at + e) for v, surf, s, e in bare_numbers(line[m.start() :])]


_STATEMENT_TITLE = re.compile(
    r"\b(?:(?:condensed\s+)?consolidated\s+(?:condensed\s+)?(?:statements?\s+of\s+(?:operations|income|earnings|"
    r"comprehensive\s+(?:income|loss)|cash\s+flows?|financial\s+(?:position|condition))|balance\s+sheets?)"
    r"|statements?\s+of\s+consolidated\s+(?:operations|income|earnings|cash\s+flows?|financial\s+position))\b",
    re.IGNORECASE,
)
_NOT_A_TITLE = re.compile(r"^\s*(?:(?i:notes?|see|the\s+accompanying|index|refer)\b|[a-z])")


def statement_page(text: str) -> bool:
    """Whether a page is a consolidated financial statement: one of its first twelve lines is a
    statement's title ("CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS (Unaudited)", "Consolidated
    Balance Sheets"), at most 100 characters and not a reference to one ("See accompanying Notes to
    Consolidated Financial Statements", "Notes to ...", a sentence)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()][:12]
    return any(len(ln) <= 100 and _STATEMENT_TITLE.search(ln) and not _NOT_A_TITLE.match(ln) for ln in lines)


#: a caption that names a segment, region or product line
_SEGMENT_WORDS = re.compile(
    r"\b(?:segments?|geographic(?:al)?|regions?|regional|by\s+products?|product\s+(?:lines?|categor(?:y|ies))"
    r"|divisions?|business\s+units?)\b",
    re.IGNORECASE,
)
#: a page about segments: its captions name segments unless they name a statement's line items
_SEGMENT_PAGE = re.compile(
    r"\b(?:segment\s+(?:information|data|results|reporting)|reportable\s+segments?|business\s+segments?|"
    r"operating\s+segments?|by\s+segment|geographic\s+(?:data|information|areas?)|by\s+geograph|by\s+region|"
    r"by\s+products?\b)",
    re.IGNORECASE,
)
#: words of a caption that names a statement's line items, a period or a registrant, not a segment
_NOT_SEGMENT_CAPTION = re.compile(
    r"\b(?:revenues?|sales|income|earnings|expenses?|costs?|assets?|liabilit(?:y|ies)|equity|activit(?:y|ies)|"
    r"shares?|numerator|denominator|cash|operations?|operating|results?|financial|data|margins?|profits?|loss(?:es)?|"
    r"(?:stock|share)holders?|amounts?|items?|ended|years?|months?|quarters?|weeks?|per|total|totals|other|net|"
    r"interest|tax(?:es)?|statements?|consolidated|summary|highlights|performance|balances?|investments?|"
    r"hedg\w*|derivatives?|discontinued|continuing|unallocated|corporate|eliminations?|adjustments?|"
    r"reconciliation|inc|corp|corporation|partnership|company|l\.?p|llc)\b",
    re.IGNORECASE,
)


_PER_SHARE = re.compile(
    r"\bper\s+(?:(?:common|ordinary|basic|diluted|class\s+[a-z])\s+)*(?:share|unit)s?\b|\bEPS\b",
    re.IGNORECASE,
)


def per_share(row: TableRow) -> bool:
    """Whether a row is a per-share amount: its label or its caption says so ("Earnings per share:",
    "Per share of 3M common stock:", "Diluted earnings per common share")."""
    return bool(_PER_SHARE.search(row.label) or (row.group and _PER_SHARE.search(row.group)))


def _is_total(row: TableRow) -> bool:
    """A row labelled "Total ..." or under a caption "Totals:"."""
    return bool(_TOTAL.match(clean_label(row.label)) or (row.group and _TOTAL.match(row.group)))


def _sums(total: TableRow, parts: Sequence[TableRow]) -> bool:
    """Whether ``total``'s numbers are the sums of ``parts``' in every column all of them print (within
    half a printed unit per part), in at least one."""
    checked = 0
    for i, (v, *_) in enumerate(total.values):
        column = [p.values[i][0] for p in parts if i < len(p.values)]
        if v != v or len(column) != len(parts) or any(x != x for x in column):
            continue
        if abs(sum(column) - v) > 0.5 * len(parts) + 1e-9:
            return False
        checked += 1
    return checked > 0


def segment_of(
    row: TableRow, rows: Sequence[TableRow], *, page: str = "", statement: bool = False
) -> tuple[bool, str | None]:
    """Whether a statement-table row that matches a metric is a *part* of the company's figure (a segment's,
    a region's, a product line's) and which: ``(False, None)`` for the company's own figure, ``(True, name)``
    for a named part, ``(True, None)`` for a part that names none (dropped).

    ``rows`` are the page's rows that match the same metric; ``page`` is the page's text and
    ``statement`` whether it is a consolidated statement (:func:`statement_page`). A row labelled "Total ..." is the
    company's. Otherwise a row is a part when the caption it sits under (:attr:`TableRow.group`)
    names a region ("Americas", "Greater China", "Rest of Asia Pacific", ...) or a segment ("...
    by reportable segment"); when, with at least one other such row, a "Total ..." row of its table
    sums them; or when its page is about segments ("Segment Information", "by reportable segment",
    "geographic data"), is not a consolidated statement, and its caption names neither a line item,
    a period nor a registrant ("Hardware:" is a segment; "Net sales:", "Operating expenses:", "Years
    ended December 31", "Financial Results:" are not).
    """
    if _is_total(row):
        return False, None
    group = row.group
    if group and (REGION_RE.fullmatch(group) or _SEGMENT_WORDS.search(group)):
        return True, group
    table = [r for r in rows if r.table == row.table]
    parts = [r for r in table if not _is_total(r)]

    if len(parts) >= 2 and any(_sums(t, parts) for t in table if _is_total(t)):
        return True, group
    if group and not statement and not _NOT_SEGMENT_CAPTION.search(group) and _SEGMENT_PAGE.search(page):
        return True, group
    return False, None
