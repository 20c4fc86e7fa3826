r"""Financial-statement pages of a filing: which statement a page is, and the rows it reports.

Every rule is general SEC layout as PDF text gives it (one cell per line, words sometimes split:
"Balance Shee t"); none names a company or a question.

**Statement** (:func:`statement_kind`): a page is a balance sheet, an income statement or a cash-flow
statement when one of its first :data:`HEAD_LINES` non-blank lines *is* that statement's title
(:data:`HEADINGS`, matched with the line's spaces removed and lower-cased; "Condensed",
"Consolidated", "(Unaudited)" and "(continued)" allowed, as quarterly reports and earnings releases
title theirs), so a note or the selected data that only mention a statement are not one; nor is a
contents page, whose first lines hold the titles of two different statements.

**Rows** (:func:`row_labels`, :func:`row_figures`): a row is a line that starts with its label and
has no letter after it, with its figures on the same line or on the lines that follow up to the
first line with a letter ("$" and blank lines are skipped); a label without any figure is a heading,
not a row, and for :func:`row_labels` a label whose figures are all years ("Fiscal Year 2023 2022")
or a month name before a day and a year ("May 31, 2023") is a column header. Dot leaders ("Total assets ........ 10,500") are removed first.
"""

from __future__ import annotations

import re

from .cover import MONTHS

__all__ = [
    "HEADINGS",
    "HEAD_LINES",
    "STATEMENTS",
    "title_lines",
    "statement_kind",
    "row_labels",
    "row_figures",
]

#: a statement's title is looked for among a page's first this many non-blank lines
HEAD_LINES = 12
_C = r"(?:condensed)?(?:consolidated)?"
_NOTE = r"(?:\((?:continued|unaudited)\))*"
HEADINGS = {  # matched on a line with its spaces removed, lower-cased (PDF text splits words: "Balance Shee t")
    "balance": re.compile(rf"^{_C}(?:balancesheets?|statements?of{_C}financialposition){_NOTE}$"),
    "income": re.compile(
        rf"^{_C}(?:statements?of{_C}(?:operations|income|earnings)|incomestatements?){_NOTE}$"
    ),
    "cashflow": re.compile(rf"^{_C}statements?of{_C}cashflows?{_NOTE}$"),
}
#: the statements :func:`statement_kind` recognises, in the order their titles are tried
STATEMENTS = tuple(HEADINGS)

_FIGURE = re.compile(r"\(?\d[\d,]*(?:\.\d+)?\)?")
_LETTER = re.compile(r"[^\W\d_]")
_YEAR = re.compile(r"(?:19|20)\d\d")
_LEADER = re.compile(r"\.{3,}")
_SPACE = re.compile(r"\s+")


def _lines(text: str) -> list[str]:
    """A page's lines with dot leaders removed and runs of spaces collapsed."""
    return [" ".join(_LEADER.sub(" ", line).split()) for line in text.splitlines()]


def title_lines(text: str) -> list[str]:
    """A page's first :data:`HEAD_LINES` non-blank lines, spaces removed and lower-cased (what :data:`HEADINGS`
    match)."""
    head = []
    for line in text.splitlines():  # only the first lines: a filing's page has dozens
        if line.strip():
            head.append(_SPACE.sub("", line).lower())
            if len(head) == HEAD_LINES:
                break
    return head


def statement_kind(text: str) -> str | None:
    """Which statement a page is (a key of :data:`HEADINGS`), from its title lines; ``None`` when it is none
    or a contents page (the titles of two statements)."""
    head = title_lines(text)
    kinds = [kind for kind, heading in HEADINGS.items() if any(heading.match(line) for line in head)]
    return kinds[0] if len(kinds) == 1 else None


def _figures_after(lines: list[str], i: int, rest: str) -> list[str]:
    """The figures of the row whose label line is ``lines[i]`` (``rest``: what follows the label on it)."""
    figures = _FIGURE.findall(rest)
    for nxt in lines[i + 1 :]:
        if _LETTER.search(nxt):
            break
        figures.extend(_FIGURE.findall(nxt))
    return figures


def row_labels(text: str) -> list[str]:
    """The labels of the rows of a page (module docstring), in page order, as printed: a line that starts
    with a letter, up to its last letter and the brackets that close after it ("Net income (loss)",
    "Commitments (Note 9)")."""
    lines = _lines(text)
    out = []
    for i, line in enumerate(lines):
        letters = list(_LETTER.finditer(line))
        if not letters or letters[0].start() != 0:
            continue
        end = letters[-1].end()
        while end < len(line) and line[end] in ")]":
            end += 1
        while line.count("(", 0, end) > line.count(")", 0, end) and ")" in line[end:]:
            end = line.index(")", end) + 1  # a bracket the label opened holds no figure: "(Note 9)"
        figures = _figures_after(lines, i, line[end:])
        label = line[:end].rstrip(" :.")
        if figures and not all(_YEAR.fullmatch(f) for f in figures) and label.lower() not in MONTHS:
            out.append(label)
    return out


def row_figures(text: str, label: str) -> list[str]:
    """The figures of the first row of ``text`` labelled ``label`` (case-insensitive), as printed; ``[]``
    when there is no such row (rows with no figure are passed over)."""
    want = label.casefold()
    lines = _lines(text)
    for i, line in enumerate(lines):
        if not line.casefold().startswith(want) or _LETTER.search(rest := line[len(want) :]):
            continue
        figures = _figures_after(lines, i, rest)
        if figures:
            return figures
    return []
