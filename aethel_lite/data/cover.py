r"""A filing's company, fiscal year and filing type read from its first pages (:func:`read_cover`).

Every rule is general SEC or press-release layout; none names a company.

**Filing type** (:func:`filing_type`). The cover's first ``FORM 10-K`` / ``10-Q`` / ``8-K`` /
``20-F`` heading (else "ANNUAL REPORT PURSUANT TO SECTION 13" and the like); else press-release
wording ("Exhibit 99.1", "<name> Reports ... Results", "today reported") gives ``"earnings"``, and
an annual report's letter ``"10k"``.

**Registrant** (:func:`registrant`), on the first page that names the Commission or carries "(Exact
name of registrant ...)" (:func:`cover_page`), in order: (1) the line(s) just above "(Exact name of
registrant ...)" ("AMCOR" / "PLC" joined); (2) the first name-like line after "Commission file
number ...", but nothing when "(Exact name ...)" follows at once (a logo); (3) for a release, the
name before "(NYSE: ...)" or "today reported"; (4) a headline "<name> Reports|Announces|Posts|Delivers";
(5) a first line ending in a legal suffix; (6) on any page, "<name> and subsidiaries", a running head
over "Form 10-K", the defined term 'the terms "<name>," "Company,"' or "To our <name> stockholders".
A ticker is never a name. Names are repaired first (:func:`name_key`).

**Former names and the registrant's number** (:func:`former_names`, :func:`file_number`). A name
the filing gives its registrant before "(formerly known as <name>)" or "(formerly <name>)" adds
that name; the cover's "Commission file number" (the first ``ddd-ddddd`` after it, leading zeros
dropped) identifies the registrant across its filings, so that
:func:`aethel_lite.data.docmeta.document_metadata` can join the names one registrant used.

**Trading symbols** (:func:`trading_symbols`). The cells of the cover's "Trading Symbol(s)" table
(section 12(b) registrations: "AAPL", "MMM", "MMM26", "PCG-PA"), in order; for a release without
that table, the "(NYSE: MMM)" of its first lines.

**Fiscal year** (:func:`fiscal_period`). The period end ``D`` comes from "for the (fiscal) year
ended <date>", "for the quarterly period ended <date>" or an 8-K's "Date of Report"; the fiscal-year
end month ``E`` from the annual "year ended <date>", a balance sheet "as of <D> and <E>", "fiscal
year ends <date>", for a quarterly report the columns of its balance sheet (on the first
``3 + STATEMENT_PAGES`` pages: the column whose month is not the quarter's is the last fiscal
year-end, :func:`statement_year_end`), else December. A fiscal year is named after the calendar year in which it *ends*:

.. math::

    \mathrm{FY}(D) = \begin{cases} y(D) & m(D) \le m(E) \\ y(D) + 1 & m(D) > m(E) \end{cases}

after a 52/53-week date in the first seven days of a month is moved back to the month before. The
fiscal quarter counts three-month steps from the fiscal year's start. A release's period comes
from its headline: "fiscal (year) YYYY", then "quarter ... YYYY" / "full-year YYYY", then "quarter
ended <date>", then the dateline's year. A company that names a year ending in late January by the
year it began is read one year later.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..core.entities import LEGAL_SUFFIXES, normalize_entity

__all__ = [
    "MONTHS",
    "MONTH_RX",
    "Cover",
    "read_cover",
    "filing_type",
    "registrant",
    "cover_page",
    "fiscal_period",
    "fiscal_year_of",
    "closing_month",
    "statement_year_end",
    "file_number",
    "former_names",
    "STATEMENT_PAGES",
    "repair_spacing",
    "name_key",
    "trading_symbols",
]

#: Month names and their three-letter (and "sept") abbreviations → month number.
MONTHS = {
    m: i
    for i, m in enumerate(
        "january february march april may june july august september october november december".split(),
        start=1,
    )
}
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
MONTHS["sept"] = 9
#: A month name or abbreviation (one group), case-insensitive use.
MONTH_RX = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DATE = rf"{MONTH_RX}\s+(\d{{1,2}})\s*,?\s*((?:19|20)\d\d)"
_WS = re.compile(r"[ \t\u00a0\u2002-\u200b]+")

_FORM = re.compile(r"^form\s+(10-?k|10-?q|8-?k|20-?f)\b(?!\s*/)[^\n]{0,30}$", re.I | re.M)
_FORM_WORDS = [
    ("10k", re.compile(r"annual\s+report\s+pursuant\s+to\s+section", re.I)),
    ("10q", re.compile(r"quarterly\s+report\s+pursuant\s+to\s+section", re.I)),
    ("8k", re.compile(r"\bcurrent\s+report\b", re.I)),
]
_RELEASE = re.compile(
    r"exhibit\s+99|^(?:news|press)\s+release\b|\btoday\s+(?:reported|announced)\b|"
    r"\b(?:reports|announces|posts|delivers)\b[^\n]{0,80}\bresults\b|\((?:nyse|nasdaq)[^)]*:",
    re.I | re.M,
)
_ANNUAL = re.compile(r"\bannual\s+report\b|\bto\s+our\s+(?:share|stock)holders\b", re.I)

_EXACT = re.compile(r"\(\s*exact\s+name\s+of\s+(?:the\s+)?registrants?\b", re.I)
_FILE_NO = re.compile(r"commission\s+file\s+(?:number|no\.?)[^\n]*", re.I)
_SEC = re.compile(r"securities\s+and\s+exchange\s+commission", re.I)
_DEFINED = re.compile(
    r"\bthe\s+terms?\s+[\"“]([^\"”\n]{2,60}?),?[\"”]\s*,?\s*(?:and\s+)?[\"“](?:the\s+)?company\b", re.I
)
_LABEL = re.compile(
    r"commission\s+file|file\s+number|^\(|\bact\s+of\s+19|\bpursuant\b|^or$|^\(?mark\s+one|"
    r"\bperiod\s+ended\b|\byear\s+ended\b|^form\s|state\s+of\s+incorporation|\bidentification\b|"
    r"^[\d\s().,/:#-]*$|\btransition\b|\bsecurities\b|\bwashington\b|\bregistrants?\b|\bcharter\b|"
    r"\bjurisdiction\b|\bincorporation\b|\borganization\b|\bemployer\b|^(?:item|part|table|page|index)\b|"
    r"\bexact\s+name\b|\bspecified\b|^(?:commission|file|number)$|\bstate\s+or\b",
    re.I,
)
_TICKER = re.compile(
    r"([A-Z][\w&.,'’\- ]{1,70}?)\s*\(\s*(?:nyse|nasdaq|nyse\s+american)(?:\s*[a-z]*)*\s*:\s*\"?[A-Z.]{1,6}\"?\s*\)",
    re.I,
)
_TODAY = re.compile(
    r"(?:--|—|–|\s-\s)\s*([A-Z][\w&.,'’ ]{1,60}?)\s*(?:\([^)]*\)\s*)?,?\s+today\s+(?:reported|announced)"
)
_HEADLINE = re.compile(
    r"^([A-Z][\w&.,'’\- ]{1,50}?)\s+(?:[Rr]eports|[Aa]nnounces|[Pp]osts|[Dd]elivers)\b", re.M
)
_SUBSIDIARIES = re.compile(
    r"^([A-Z][\w&.,'’\- ]{1,60}?)\s+(?:and|&)\s+(?:consolidated\s+)?subsidiaries\b", re.I | re.M
)
_ENTITY = r"([A-Z][\w&.'’\- ]{1,50}?,?\s+(?:Inc|Corp|Corporation|Company|Co|Ltd|Limited|plc|PLC|N\.V|S\.A|AG|SE|LLC|L\.P)\.?)"
_ATTRIBUTABLE = re.compile(
    rf"(?i:\bnet\s+(?:income|earnings|loss|\(loss\)\s+income|income\s+\(loss\))\s+attributable\s+to)\s+{_ENTITY}"
)
_INCORPORATED = re.compile(rf"^{_ENTITY},?\s+(?:was\s+)?(?:incorporated|organized)\s+(?:under|in)\b", re.M)
_LETTER = re.compile(r"\b[Tt]o\s+our\s+([A-Z][\w&.'’\- ]{1,40}?)\s+(?:stock|share)(?:holders|owners)\b")
_RUNNING_HEAD = re.compile(
    r"^([^\n]{2,60})\n(?:quarterly|annual)\s+report\s+on\s+form|"
    r"^([^\n]{2,60})\nform\s+10-?[kq]\b",
    re.I | re.M,
)

_ANNUAL_END = re.compile(rf"\b(?:fiscal\s+)?year\s+ended:?\s+{_DATE}", re.I)
_QUARTER_END = re.compile(
    rf"\b(?:quarterly\s+period|(?:fiscal\s+)?quarter|three\s+months|thirteen[\s-]weeks?|"
    rf"(?:12|13|16|17)\s+weeks)\s+ended:?\s+{_DATE}",
    re.I,
)
_REPORT_DATE = re.compile(rf"date\s+of\s+report[^\n:]*?(?:reported\s*\)?)?\s*:?\s*\)?\s*{_DATE}", re.I)
_FY_ENDS = re.compile(
    rf"\bfiscal\s+year\s+(?:ends|ending|end)\b[^\n.]{{0,30}}?{MONTH_RX}\s+(\d{{1,2}})", re.I
)
_BALANCE = re.compile(
    rf"balance\s+sheets?[^\n]{{0,40}}?(?:as\s+of\s+)?{_DATE}\s*(?:,|and)?\s*(?:\n\s*)?{_DATE}", re.I
)
_QUARTER_FY = re.compile(
    r"\b(?:q[1-4]|(?:first|second|third|fourth)[\s-]quarter(?:\s+of)?)\s+(?:the\s+)?"
    r"(?:fiscal\s+(?:year\s+)?|FY\s?'?)((?:19|20)?\d\d)\b",
    re.I,
)
_EXPLICIT_FY = re.compile(r"\bfiscal\s+(?:year\s+)?((?:19|20)\d\d)\b|\bFY\s?'?((?:19|20)?\d\d)\b", re.I)
_RELEASE_YEAR = re.compile(
    r"\b(?:quarter|full[\s-]year|year[\s-]end|annual)\b[^\n.]{0,30}?\b((?:19|20)\d\d)\b|"
    r"\b((?:19|20)\d\d)\s+(?:first|second|third|fourth)[\s-]quarter\b|\bq[1-4]\s*((?:19|20)\d\d)\b",
    re.I,
)
_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}
_RELEASE_Q = re.compile(r"\b(first|second|third|fourth)[\s-](?:fiscal\s+)?quarter\b|\bq([1-4])\b", re.I)
_DATELINE = re.compile(_DATE, re.I)
_FILE_NUMBER = re.compile(r"\b(\d{1,3})-(\d{4,6})\b")
_FORMERLY = re.compile(r"([^\n()]{2,80}?)\s*\(\s*formerly(?:\s+known\s+as)?\s+([^()\n]{2,60})\)", re.I)
# its literal: a page without it cannot match, and _FORMERLY tries 80 lengths at every character of one
_FORMERLY_WORD = re.compile(r"formerly", re.I)
# a balance sheet's title line, then its column headers (dates, years) before its first assets line
_BS_TITLE = re.compile(r"^[^\n]{0,60}\bbalance\s+sheets?\b[^\n]{0,40}$", re.I | re.M)
_BS_ASSETS = re.compile(r"^(?:current\s+)?assets\b", re.I | re.M)
_MONTH_DAY = re.compile(rf"\b{MONTH_RX}\s+(\d{{1,2}})\b", re.I)

#: a quarterly report's balance sheet is looked for on this many pages after its first three
STATEMENT_PAGES = 12


@dataclass
class Cover:
    """What the first pages of one filing say about it (each field ``None`` when nothing was read).

    Attributes
    ----------
    company : str or None
        The registrant's normalised name (:func:`name_key`).
    fiscal_year : int or None
    quarter : int or None
        Fiscal quarter (1-4) of a quarterly filing or release.
    form : str or None
        ``"10k"``, ``"10q"``, ``"8k"``, ``"20f"`` or ``"earnings"``.
    fiscal_year_end : int or None
        Month the fiscal year ends in, when a page says so.
    file_number : str or None
        The cover's commission file number, leading zeros dropped ("001-06991" → "1-6991").
    former : list of str
        Other names the filing gives its registrant ("Block, Inc. (formerly known as Square, Inc.)"),
        normalised.
    source : dict
        Field → the rule that gave it (``"exact name"``, ``"file number"``, ``"ticker"``, ...).
    """

    company: str | None = None
    fiscal_year: int | None = None
    quarter: int | None = None
    form: str | None = None
    fiscal_year_end: int | None = None
    file_number: str | None = None
    former: list = field(default_factory=list)
    source: dict = field(default_factory=dict)


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text or "")
    return "\n".join(_WS.sub(" ", ln).strip() for ln in text.splitlines())


def _cleaned(pages: Sequence[str]) -> tuple[list[str], str]:
    """The cleaned pages and the cover among them ("" without pages)."""
    texts = [_clean(p) for p in pages]
    return texts, texts[cover_page(texts)] if texts else ""


def repair_spacing(line: str) -> str:
    """Join a capital letter split off an all-capital word by text extraction.

    A single capital other than ``A``, not preceded by a single letter or an apostrophe, and
    followed by a space and two or more capitals is joined to them. Runs of initials ("J P MORGAN")
    and mixed-case text are left alone.

    Examples
    --------
    >>> repair_spacing("MGM R ESORTS I NTERNATIONAL")
    'MGM RESORTS INTERNATIONAL'
    """
    return re.sub(r"(?<![\w&'’])(?<!\b\w )([B-Z]) (?=[A-Z]{2,}\b)", r"\1", line)


def name_key(name: str) -> str:
    """Normalised company key of a name read from a page (:func:`~aethel_lite.core.entities.normalize_entity`),
    after :func:`repair_spacing` and with a web-domain suffix kept as a word ("Amazon.com" → "amazon com")."""
    name = repair_spacing(name.strip(" ,;:-–—"))
    name = re.sub(r"\.(com|net|org)\b", r" \1", name, flags=re.I)
    return normalize_entity(name)


def _name_like(line: str) -> bool:
    if not line or len(line) > 80 or _LABEL.search(line):
        return False
    key = name_key(line)
    return bool(key) and any(c.isalpha() for c in key) and len(key.split()) <= 8


def _suffix_only(line: str) -> bool:
    toks = re.sub(r"[^\w&\s]", " ", line.casefold()).split()
    return bool(toks) and all(t in LEGAL_SUFFIXES or t in ("&", "and") for t in toks)


def _above_exact(text: str) -> str | None:
    for m in _EXACT.finditer(text):
        lines = [ln for ln in text[: m.start()].splitlines() if ln.strip()]
        if not lines:
            continue
        name = lines[-1]
        if (_suffix_only(name) or name[:1] in "&,") and len(
            lines
        ) >= 2:  # "AMCOR" / "PLC", "JPMORGAN CHASE" / "& CO."
            name = f"{lines[-2]} {name}"
        if _name_like(name):
            return name
    return None


def _after_file_number(text: str) -> str | None:
    m = _FILE_NO.search(text)
    if not m:
        return None
    lines = [ln for ln in text[m.end() :].splitlines() if ln.strip()][:16]
    for ln in lines:
        if ln.startswith("(") and _EXACT.match(ln):
            return None  # the name slot above the label is empty (a logo)
        if _name_like(ln):
            return ln
    return None


def _release_name(text: str) -> tuple[str | None, str | None]:
    head = text[:4000]
    for rx, how in ((_TICKER, "ticker"), (_TODAY, "dateline")):
        m = rx.search(head)
        if m:
            name = re.split(r"\s(?:-|--|—|–)\s|--|—|\)\s*-+\s*", m.group(1))[
                -1
            ]  # "CITY, N.Y. - February 9, 2023 - Name"
            name = re.sub(rf"^.*?\b{_DATE}\s*", "", name, flags=re.I).strip(" ,-")
            if _name_like(name):
                return name, how
    m = _HEADLINE.search(head[:600])
    if m and _name_like(m.group(1)):
        return m.group(1), "headline"
    first = next((ln for ln in head.splitlines() if ln.strip()), "")
    if (
        first
        and _name_like(first)
        and normalize_entity(first) != first.casefold().strip()
        and first.split()[-1].strip(".,").casefold() in LEGAL_SUFFIXES
    ):
        return first, "letterhead"
    return None, None


def cover_page(pages: Sequence[str]) -> int:
    """Index of the SEC cover among the first pages (module docstring); 0 without one."""
    for i, page in enumerate(pages):
        if _EXACT.search(page) or _SEC.search(page[:1500]):
            return i
    return 0


def registrant(pages: Sequence[str], statements: Sequence[str] = ()) -> tuple[str | None, str | None]:
    """The registrant's normalised name and the rule that found it (module docstring), or ``(None, None)``;
    ``statements``, the pages after the first ones, are read last, for a filing whose cover prints its name as
    an image: its notes' defined term ("the terms 'Foot Locker,' 'Company' ..."), the income statement's "net
    income attributable to <Name, Inc.>" or the business section's "<Name, Inc.>, incorporated under ..."."""
    name, how = _registrant_of(pages)
    rules = (("defined term", _DEFINED), ("attributable", _ATTRIBUTABLE), ("incorporated", _INCORPORATED))
    for page in _cleaned(statements)[0] if name is None and statements else ():
        for rule, rx in rules:
            m = rx.search(page)
            if m and _name_like(m.group(1)):
                return name_key(m.group(1)), rule
    return name, how


def _registrant_of(pages: Sequence[str]) -> tuple[str | None, str | None]:
    pages, first = _cleaned(pages)
    for how, fn in (("exact name", _above_exact), ("file number", _after_file_number)):
        name = fn(first)
        if name:
            return name_key(name), how
    name, how = _release_name(first)
    if name:
        return name_key(name), how
    for rx, how in (
        (_SUBSIDIARIES, "subsidiaries"),
        (_RUNNING_HEAD, "running head"),
        (_DEFINED, "defined term"),
        (_LETTER, "letter"),
    ):
        for page in pages:
            for m in rx.finditer(page):
                name = next(g for g in m.groups() if g)
                if _name_like(name):
                    return name_key(name), how
    return None, None


def file_number(pages: Sequence[str]) -> str | None:
    """The cover's commission file number (the first ``d-dddd`` within 400 characters after "Commission
    file number"), each part without leading zeros; ``None`` without one."""
    _, first = _cleaned(pages)
    label = _FILE_NO.search(first)
    m = _FILE_NUMBER.search(first[label.start() : label.start() + 400]) if label else None
    return f"{int(m.group(1))}-{int(m.group(2))}" if m else None


def former_names(pages: Sequence[str], company: str | None) -> list[str]:
    """Names a filing gives its registrant ``company`` (normalised) in "<name> (formerly known as
    <other>)": the ``<other>`` names whose ``<name>`` ends with the registrant's, in order."""
    if not company:
        return []
    out: list[str] = []
    for page in _cleaned(pages)[0]:
        if not _FORMERLY_WORD.search(page):
            continue
        for m in _FORMERLY.finditer(page):
            before, other = name_key(m.group(1)), name_key(m.group(2))
            named = before == company or before.endswith(" " + company)
            if named and other and other != company and other not in out:
                out.append(other)
    return out


def filing_type(pages: Sequence[str]) -> tuple[str | None, str | None]:
    """``("10k" | "10q" | "8k" | "20f" | "earnings", rule)`` of a filing, or ``(None, None)`` (module docstring)."""
    texts, first = _cleaned(pages)
    m = _FORM.search(first[:2500])
    if m:
        return re.sub(r"[^0-9a-z]", "", m.group(1).lower()), "form"
    for key, rx in _FORM_WORDS:
        if rx.search(first[:2500]):
            return key, "cover wording"
    if _RELEASE.search(first[:3000]):
        return "earnings", "release wording"
    if any(_ANNUAL.search(t[:3000]) for t in texts):
        return "10k", "annual report"
    return None, None


def closing_month(month: int, day: int) -> int:
    """The month a period ending on ``month/day`` closes: a 52/53-week date in a month's first week closes the month before."""
    return (month - 2) % 12 + 1 if day <= 7 else month


def fiscal_year_of(month: int, day: int, year: int, fy_end_month: int = 12) -> tuple[int, int]:
    """``(fiscal year, fiscal quarter)`` of a period ending on a date, for a fiscal year ending in ``fy_end_month``.

    Examples
    --------
    >>> fiscal_year_of(12, 31, 2022, 6)   # a June-year-end company's quarter ended December 31, 2022
    (2023, 2)
    >>> fiscal_year_of(1, 1, 2023)        # a 52/53-week year ended January 1, 2023
    (2022, 4)
    >>> fiscal_year_of(4, 30, 2023, 1)    # a January-year-end company's first quarter
    (2024, 1)
    """
    m = closing_month(month, day)
    if m == 12 and month == 1:
        year -= 1
    fy = year if m <= fy_end_month else year + 1
    steps = (m - fy_end_month - 1) % 12  # months after the fiscal year's first month
    return fy, steps // 3 + 1


def _date(groups: Sequence[str]) -> tuple[int, int, int]:
    return MONTHS[groups[0].lower().rstrip(".")], int(groups[1]), int(groups[2])


def statement_year_end(pages: Sequence[str], period_end: tuple[int, int, int]) -> int | None:
    """The fiscal-year-end month of a quarterly report, from the columns of its balance sheet.

    A quarterly balance sheet shows the quarter's end beside the last fiscal year-end (and sometimes
    the same quarter a year before): "July 1, 2023 | September 24, 2022", "April 30, 2023 |
    January 31, 2023 | April 30, 2022". On the first page with a line titled "... balance sheet(s)
    ..." followed within 400 characters by an "Assets" / "Current assets" line, the first column date
    before that line whose month (after the 52/53-week rule) is not the quarter's gives the month.

    Parameters
    ----------
    pages : sequence of str
        Pages of the filing, in order.
    period_end : (month, day, year)
        The quarter's end, from the cover.

    Returns
    -------
    int or None
        Month 1-12; ``None`` when no such balance sheet is found.
    """
    quarter = closing_month(period_end[0], period_end[1])
    for page in pages:
        text = _clean(page)
        for title in _BS_TITLE.finditer(text):
            head = text[title.end() : title.end() + 400]
            assets = _BS_ASSETS.search(head)
            if assets is None:
                continue
            for d in _MONTH_DAY.finditer(head[: assets.start()]):
                month = closing_month(MONTHS[d.group(1).lower().rstrip(".")], int(d.group(2)))
                if month != quarter:
                    return month
    return None


def _fy_end(text: str, annual: tuple | None) -> int | None:
    if annual:
        return closing_month(annual[0], annual[1])
    m = _BALANCE.search(text)
    if m:
        d1, d2 = _date(m.groups()[:3]), _date(m.groups()[3:])
        if (d2[2], d2[0]) < (d1[2], d1[0]):
            return closing_month(d2[0], d2[1])
    m = _FY_ENDS.search(text)
    if m:
        return closing_month(MONTHS[m.group(1).lower().rstrip(".")], int(m.group(2)))
    return None


def fiscal_period(
    pages: Sequence[str], form: str | None = None, statements: Sequence[str] = ()
) -> tuple[int | None, int | None, int | None, str | None]:
    """``(fiscal year, fiscal quarter, fiscal-year-end month, rule)`` of a filing (module docstring);
    ``statements``, the pages after the first ones, are read only for a quarterly report's balance sheet."""
    texts, first = _cleaned(pages)
    text = "\n".join(texts)
    am = _ANNUAL_END.search(first)
    qm = _QUARTER_END.search(first)
    annual = _date(am.groups()) if am else None
    fy_end = _fy_end(text, annual)
    if fy_end is None and form == "10q" and qm:
        fy_end = statement_year_end([*pages, *statements], _date(qm.groups()))
    end = fy_end or 12
    if form in ("10k", "20f") and annual:
        return fiscal_year_of(*annual, end)[0], None, fy_end, "year ended"
    if form == "10q" and qm:
        return (*fiscal_year_of(*_date(qm.groups()), end), fy_end, "quarter ended")
    if form == "8k":
        m = _REPORT_DATE.search(first)
        if m:
            return _date(m.groups())[2], None, fy_end, "date of report"
    if form not in ("10k", "10q", "8k", "20f"):
        head = first[:1500]
        m = _QUARTER_FY.search(head) or _EXPLICIT_FY.search(head)
        q = _RELEASE_Q.search(head)
        quarter = (_ORDINAL.get((q.group(1) or "").lower()) or int(q.group(2) or 0) or None) if q else None
        if m:
            y = int(next(g for g in m.groups() if g))
            return (y if y >= 100 else 2000 + y), quarter, fy_end, "fiscal year"
        m = _RELEASE_YEAR.search(head)
        if m:
            return int(next(g for g in m.groups() if g)), quarter, fy_end, "release period"
        if qm:
            return (*fiscal_year_of(*_date(qm.groups()), end), fy_end, "quarter ended")
    for m in (am, qm):
        if m:
            fy, q = fiscal_year_of(*_date(m.groups()), end)
            return fy, (q if m is qm else None), fy_end, "period ended"
    m = _DATELINE.search(first[:3000])
    if m:
        return _date(m.groups())[2], None, fy_end, "dateline"
    return None, None, fy_end, None


def read_cover(pages: Sequence[str], statements: Sequence[str] = ()) -> Cover:
    """Company, fiscal year and quarter, and filing type of a filing (module docstring).

    Parameters
    ----------
    pages : sequence of str
        The filing's first pages in order (three are enough).
    statements : sequence of str
        The pages that follow (up to ``STATEMENT_PAGES``), read only for a quarterly report whose
        first pages do not say when its fiscal year ends (:func:`statement_year_end`).

    Returns
    -------
    Cover
    """
    pages = list(pages)
    out = Cover()
    out.company, company = registrant(pages, statements)
    out.form, form = filing_type(pages)
    out.fiscal_year, out.quarter, out.fiscal_year_end, period = fiscal_period(pages, out.form, statements)
    out.file_number = file_number(pages)
    out.former = former_names(pages, out.company)
    out.source = {k: how for k, how in (("company", company), ("type", form), ("period", period)) if how}
    return out


# -------------------------------------------------------------------------------- trading symbols
_SYMBOL_HEAD = re.compile(r"\btrading\s+symbols?\b", re.I)
_SECTION_12B = re.compile(r"securities\s+registered\s+pursuant\s+to\s+section\s+12\s*\(\s*b\s*\)", re.I)
_SYMBOL_END = re.compile(r"section\s+12\s*\(\s*g\s*\)|indicate\s+by\s+check\s+mark", re.I)
# a symbol cell: "AAPL", "BRK.B", "PCG-PA", a note's "MMM26" or "JNJ24C"
_SYMBOL = re.compile(r"[A-Z]{1,5}(?:[.-][A-Z]{1,2}|\d{2}[A-Z]?)?")
_NOT_SYMBOL = {"NYSE", "NONE", "LLC", "INC", "NA", "AND", "THE", "OF"}
_RELEASE_SYMBOL = re.compile(r"\(\s*(?:nyse|nasdaq)[a-z ]*:\s*([A-Z]{1,5}(?:\.[A-Z])?)\s*\)", re.I)


def trading_symbols(pages: Sequence[str]) -> list[str]:
    """The trading symbols a filing's cover registers, in order and each once (module docstring).

    The cells read are the table's between "Securities registered pursuant to Section 12(b)" (or
    the "Trading Symbol(s)" header, whichever comes first) and "Section 12(g)" or the first
    "Indicate by check mark" (at most 2,000 characters): cells of a line (split at runs of two
    spaces or more) that are one to five capitals, optionally a class ("BRK.B", "PCG-PA") or a
    note's maturity ("MMM26"), and not an exchange or a word ("NYSE", "None"). A release without
    that table gives the symbol of its "(NYSE: MMM)" / "(Nasdaq: AAPL)" in its first 4,000 characters.

    Examples
    --------
    >>> trading_symbols(["Title of each class\\nTrading symbol(s)\\nName of each exchange on which registered\\n"
    ...                  "Common Stock, $0.00001 par value per share\\nAAPL\\nThe Nasdaq Stock Market LLC\\n"
    ...                  "Indicate by check mark whether the Registrant ..."])
    ['AAPL']
    """
    texts = [unicodedata.normalize("NFKC", p or "") for p in pages]
    out: list[str] = []
    for text in texts:
        head = _SYMBOL_HEAD.search(text)
        if head is None:
            continue
        sec = _SECTION_12B.search(text, max(0, head.start() - 1000), head.start())
        start = sec.end() if sec else head.end()
        end = _SYMBOL_END.search(text, head.end())
        region = text[start : min(end.start() if end else len(text), start + 2000)]
        for line in region.splitlines():
            for cell in re.split(r"[ \t\u00a0\u2002-\u200b]{2,}", line.strip()):
                cell = cell.strip()
                if _SYMBOL.fullmatch(cell) and cell not in _NOT_SYMBOL and cell not in out:
                    out.append(cell)
        if out:
            return out
    first = _clean(texts[cover_page(texts)]) if texts else ""
    m = _RELEASE_SYMBOL.search(first[:4000])
    return [m.group(1).upper()] if m else []
