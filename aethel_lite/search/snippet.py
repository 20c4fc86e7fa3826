r"""The lines of a page that answer a question: :func:`best_snippet` picks them, :func:`render` prints them.

A page is cut into *units*: a statement row (its label, wrapped lines joined, with the figures that follow it,
each figure on its own line as a PDF's text often puts it) or a sentence of prose (lines joined when a line runs
on into the next). A unit :math:`u` scores

.. math::

    s(u) = \frac{\sum_{t \in T_q \cap T_u} v(t) + \frac14 \sum_{(t, t') \in P_q \cap P_u} \bigl(v(t) + v(t')\bigr)}
                {0.75 + 0.25\, |u| / \overline{|u|}}
           \times \begin{cases} 1.5 & \text{the question asks for a figure and } u \text{ holds one} \\
                                1 & \text{otherwise} \end{cases},
    \qquad v(t) = c_t\, w(t),

over the question's words :math:`T_q` (function words and asking words left out, a plural matching its singular)
and its pairs of adjacent words :math:`P_q` ("net income": a row that says it in that order gains). :math:`w(t)` is
a weight the caller gives (e.g. BM25's idf over an index), else the word's rarity within the page,
:math:`w(t) = \ln(1 + U / U_t)` (:math:`U` units, :math:`U_t` of them holding :math:`t`); ``aethel search`` uses the
rarity (on FinanceBench evidence pages BM25's idf over the filings chose no better and weighs company names most).
:math:`c_t = 1/4` for a context word, which tells the document or the column rather than the line: a period word
(a year, "FY2023", "fiscal", "quarter", ...) or a name (a capitalised word other than a sentence's first); else 1.
:math:`|u|` counts the unit's words (not its figures), :math:`\overline{|u|}` their mean over the page. A figure is
a number that is not a bare year. Ties go to the shorter unit, then the earlier. A unit longer than
:data:`MAX_CHARS` is cut to the window of that many characters holding most of its matched weight. Above a
statement row, the nearest short unit whose numbers are all years or days of dates is its column header.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..data.cover import MONTH_RX

__all__ = ["FUNCTION_WORDS", "MAX_CHARS", "Snippet", "best_snippet", "render"]

#: words too common to say that a passage matches a question (nor to choose its snippet)
FUNCTION_WORDS = frozenset(
    "a an and are as at be by did do does for from had has have how in is it its of on or that the their this to "
    "was were what when where which who whom whose why will with".split()
)
#: longest snippet, in characters (a longer unit is cut to its best window)
MAX_CHARS = 300
#: words a question uses to ask, not to name what it asks about
_ASKING = frozenset(
    "answer give response question relying details shown based using use please state explain much many "
    "can could would should about according any there than then into over under between all also".split()
)
#: words naming a period: a statement gives them in its column headers, not in its rows
_PERIOD = frozenset(
    "fiscal fy year years yearly annual annually quarter quarters quarterly ended ending".split()
)
_FIGURE_ASKED = re.compile(
    r"\bhow\s+(?:much|many)\b|[$%]|\b(?:amount|total|ratio|margin|rate|percent(?:age)?|revenues?|sales|income|"
    r"profits?|loss(?:es)?|expenses?|costs?|capex|expenditures?|cash|debt|eps|earnings|dividends?|price|growth|"
    r"value|number|usd|millions?|billions?)\b",
    re.I,
)
_WORD = re.compile(r"\w+")
_YEAR = re.compile(r"(?:19|20)\d\d")
_FY = re.compile(r"fy((?:19|20)?\d\d)")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
#: a sentence's last characters (not a dot leader: "Total liabilities ......")
_ENDS_SENTENCE = re.compile(r"(?<!\.)[.!?][\"”’)\]]*$")
#: the end of a line that ends in figures ("Total net sales 383,285 394,328"): a statement row, read in its last
#: characters only
_ROW_END = re.compile(r"[A-Za-z):][^\n]*?\s\(?\$?\s?\d[\d,.]*\)?\s*%?\s*$")
_ROW_TAIL = 200
_DATE = re.compile(rf"\b{MONTH_RX}\s+\d{{1,2}}\b,?", re.I)
#: a line of figures only: numbers, currency, percent, parentheses, dashes (or nothing)
_VALUES = re.compile(r"[\s$€£¥%()\[\]—–\-−.,*0-9]*")
#: a sentence ends at . ! or ? (and closing quotes or brackets) before a capital, a digit or an opening quote
_SENTENCE_END = re.compile(r"[.!?][\"”’)\]]*\s+(?=[\"“‘(\[]?[A-Z0-9$])")
_ABBREVIATIONS = frozenset(
    "inc corp co ltd llc plc no nos vs mr mrs ms dr st jr sr u.s e.g i.e approx fig".split()
)
_SPACE = re.compile(r"\s+")
_LEADER = re.compile(r"\s*\.{4,}\s*")
_BOLD, _RESET = "\033[1m", "\033[0m"


@dataclass(frozen=True)
class Snippet:
    """The part of a passage's text that best answers a question.

    Attributes
    ----------
    text : str
        ``passage_text[start:end]``, as it stands (line breaks kept).
    start, end : int
        Its character offsets in the passage text.
    matches : list of (int, int)
        Offsets (in the passage text) of the question's words inside it, in order.
    header : (int, int) or None
        Offsets of the column header above a statement row (``None``: none found, or not a row).
    """

    text: str
    start: int
    end: int
    matches: list[tuple[int, int]] = field(default_factory=list)
    header: tuple[int, int] | None = None

    def to_dict(self, passage_text: str) -> dict:
        """``{"text", "start", "end", "matches", "header"}`` (``header``: ``{"text", "start", "end"}`` or None)."""
        header = None
        if self.header is not None:
            a, b = self.header
            header = {"text": passage_text[a:b], "start": a, "end": b}
        return {
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "matches": [[a, b] for a, b in self.matches],
            "header": header,
        }


@dataclass
class _Unit:
    start: int
    end: int
    row: bool = False  # a statement row: its label followed by figures
    figure: bool = False  # holds a number that is not a bare year
    words: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, key)


def _key(word: str) -> str:
    """A word's matching key: lower case, a plural as its singular ("sales" and "sale", "entities" and "entity")."""
    w = word.lower()
    if len(w) > 4 and w.isalpha():
        if w.endswith("ies"):
            return w[:-3] + "y"
        if w.endswith(("sses", "xes", "ches", "shes")):
            return w[:-2]
        if w.endswith("s") and not w.endswith(("ss", "us", "is")):
            return w[:-1]
    return w


def _pairs(keys: list[str | None]) -> set[tuple[str, str]]:
    """The adjacent pairs of a word sequence (``None``, a word left out, breaks a pair)."""
    return {(a, b) for a, b in zip(keys, keys[1:]) if a is not None and b is not None}


def _question_terms(question: str) -> tuple[dict[str, str], set[str], set[tuple[str, str]]]:
    """``(key → the question's word, context keys)`` of the words that can choose a snippet; context: a period
    word, or a name (a capitalised word other than a sentence's first), which tell the document or the column
    rather than the line."""
    terms: dict[str, str] = {}
    context: set[str] = set()
    sequence: list[str | None] = []
    for m in _WORD.finditer(question):
        raw = m.group()
        first = not question[: m.start()].strip() or question[: m.start()].rstrip()[-1] in ".?!:"
        name = not first and (raw[0].isupper() or (raw[0].isdigit() and any(c.isupper() for c in raw)))
        w = raw.lower()
        fy = _FY.fullmatch(w)
        if fy:  # FY2023, FY23: the year
            y = fy.group(1)
            w = y if len(y) == 4 else "20" + y
        if w in FUNCTION_WORDS or w in _ASKING or (len(w) < 2 and not w.isdigit()):
            sequence.append(None)
            continue
        key = _key(w)
        sequence.append(key)
        terms.setdefault(key, w)
        if w in _PERIOD or _YEAR.fullmatch(w) or name:
            context.add(key)
    return terms, context, _pairs(sequence)


def _lines(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each line's content, surrounding white space left out (a blank line: ``start == end``)."""
    out = []
    pos = 0
    for line in text.split("\n"):
        stripped = line.strip()
        a = pos + (line.find(stripped) if stripped else 0)
        out.append((a, a + len(stripped)))
        pos += len(line) + 1
    return out


def _runs_on(prev: str, nxt: str) -> bool:
    """Whether line ``nxt`` continues line ``prev`` (prose wrapped, or a long row label)."""
    if prev[-1] in ".!?:;":
        return False
    return nxt[0].islower() or (len(prev) >= 50 and (prev[-1].islower() or prev[-1] in ",-–—&(/"))


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The sentences of ``text[start:end]`` as offsets (at least one)."""
    out, a = [], start
    for m in _SENTENCE_END.finditer(text, start, end):
        before = _WORD.findall(text[max(a, m.start() - 6) : m.start()])
        if before and (before[-1].lower() in _ABBREVIATIONS or len(before[-1]) == 1 and before[-1].isupper()):
            continue
        out.append((a, m.start() + 1))
        a = m.end()
    out.append((a, end))
    return [(x, y) for x, y in out if y > x]


def _units(text: str) -> list[_Unit]:
    """The page cut into statement rows and sentences (module docstring), in order."""
    blocks: list[list[int]] = []  # [text start, text end, end with figures]
    blank = True
    for a, b in _lines(text):
        if a == b:
            blank = True
            continue
        line = text[a:b]
        if _VALUES.fullmatch(line):
            last = blocks[-1] if blocks else None
            if last is not None and (last[1] < last[2] or not _ENDS_SENTENCE.search(text, last[0], last[1])):
                last[2] = b  # figures of the row above
            else:  # after a sentence (a page number, say): a unit of figures alone
                blocks.append([a, a, b])
            continue
        last = blocks[-1] if blocks else None
        if last is not None and not blank and last[1] == last[2] and _runs_on(text[last[0] : last[1]], line):
            last[1] = last[2] = b
        else:
            blocks.append([a, b, b])
        blank = False
    units = []
    for a, b, c in blocks:
        spans = _sentences(text, a, b) if b > a else [(a, a)]
        spans[-1] = (spans[-1][0], c)  # the figures go with the last sentence (a row's label)
        units += [
            _Unit(x, y, row=c > b or bool(_ROW_END.search(text[max(x, y - _ROW_TAIL) : y]))) for x, y in spans
        ]
    for u in units:
        u.words = [(m.start(), m.end(), _key(m.group())) for m in _WORD.finditer(text, u.start, u.end)]
        u.figure = any(not _YEAR.fullmatch(m.group()) for m in _NUMBER.finditer(text, u.start, u.end))
    return units


def _is_header(text: str, u: _Unit) -> bool:
    """Whether a unit reads as a statement's column header: short, holding a year, every other number a day of a
    date."""
    part = _DATE.sub(" ", text[u.start : u.end])
    numbers = _NUMBER.findall(part)
    return (
        u.end - u.start <= 160
        and len(u.words) - len(numbers) <= 12
        and bool(numbers)
        and all(_YEAR.fullmatch(n) for n in numbers)
    )


def _window(u: _Unit, hits: list[tuple[int, int, float]], text: str, limit: int) -> tuple[int, int]:
    """The ``limit``-character window of a long unit holding most matched weight, cut at white space (each match
    is tried as the window's anchor; the weight inside a window is a difference of prefix sums)."""
    starts = [a for a, _, _ in hits]
    ends = [b for _, b, _ in hits]
    prefix = [0.0, *itertools.accumulate(w for _, _, w in hits)]
    best, best_at = -1.0, u.start
    for a in starts or [u.start]:
        lo = max(u.start, a - limit // 4)
        hi = min(u.end, lo + limit)
        lo = max(u.start, hi - limit)
        got = (
            prefix[max(bisect.bisect_right(ends, hi), bisect.bisect_left(starts, lo))]
            - prefix[bisect.bisect_left(starts, lo)]
        )
        if got > best:
            best, best_at = got, lo
    lo, hi = best_at, min(u.end, best_at + limit)
    if lo > u.start and not text[lo - 1].isspace():  # not in the middle of a word
        cut = _SPACE.search(text, lo, hi)
        lo = cut.end() if cut else lo
    if hi < u.end and not text[hi].isspace():
        cuts = list(_SPACE.finditer(text, lo, hi))
        hi = cuts[-1].start() if cuts else hi
    while lo < hi and text[lo].isspace():
        lo += 1
    while hi > lo and text[hi - 1].isspace():
        hi -= 1
    return lo, hi


def best_snippet(
    question: str, text: str, *, idf: Callable[[str], float | None] | None = None, max_chars: int = MAX_CHARS
) -> Snippet | None:
    """The unit of ``text`` that best matches ``question`` (module docstring).

    Parameters
    ----------
    question : str
    text : str
        A passage's text (offsets refer to it).
    idf : callable, optional
        A question word (lower case) → its weight, e.g. BM25's idf over the index (None: a word the index does not
        weigh, left out); default: the word's rarity within the page.
    max_chars : int
        Longest snippet (:data:`MAX_CHARS`).

    Returns
    -------
    Snippet or None
        None for a blank text. When no word of the question is in the text, its first unit with no matches.
    """
    units = [u for u in _units(text) if u.end > u.start]
    if not units:
        return None
    terms, period, pairs = _question_terms(question)
    df: dict[str, int] = {}
    for u in units:
        for key in {k for _, _, k in u.words if k in terms}:
            df[key] = df.get(key, 0) + 1
    weights = {}
    for key in df:
        w = idf(terms[key]) if idf is not None else math.log1p(len(units) / df[key])
        if w:
            weights[key] = w * (0.25 if key in period else 1.0)
    figure = bool(_FIGURE_ASKED.search(question))
    length = [sum(not text[a:b].isdigit() for a, b, _ in u.words) for u in units]  # words, figures left out
    mean = sum(length) / len(units) or 1.0
    best, best_rank = units[0], (0.0, 0, 0)
    for i, u in enumerate(units):
        keys = [k for _, _, k in u.words]
        score = sum(weights.get(k, 0.0) for k in set(keys))
        score += sum(weights.get(a, 0.0) + weights.get(b, 0.0) for a, b in pairs & _pairs(keys)) / 4
        score /= 0.75 + 0.25 * length[i] / mean
        if figure and u.figure:
            score *= 1.5
        rank = (score, -(u.end - u.start), -i)
        if score > 0 and rank > best_rank:
            best, best_rank = u, rank
    hits = [(a, b, weights[k]) for a, b, k in best.words if k in weights]
    lo, hi = (
        (best.start, best.end) if best.end - best.start <= max_chars else _window(best, hits, text, max_chars)
    )
    header = None
    if best.row and not _is_header(text, best):
        above = [u for u in units if u.end <= best.start]
        header = next(((u.start, u.end) for u in reversed(above) if _is_header(text, u)), None)
    matches = [(a, b) for a, b, _ in hits if a >= lo and b <= hi]
    return Snippet(text[lo:hi], lo, hi, matches, header)


def render(text: str, start: int, end: int, matches=(), *, bold: bool = False) -> str:
    """``text[start:end]`` on one line (white space runs made one space), ``matches`` (offsets into ``text``)
    in ANSI bold when ``bold``."""
    out, pos = [], start
    for a, b in sorted(matches) if bold else ():
        if a < pos or b > end:
            continue
        out += [text[pos:a], _BOLD, text[a:b], _RESET]
        pos = b
    out.append(text[pos:end])
    return _LEADER.sub(" … ", " ".join("".join(out).split()))
