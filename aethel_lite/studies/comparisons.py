"""FinanceBench comparison questions: each needs one page from each of two filings.

Nearly every FinanceBench question names one filing. ``aethel_lite/manifests/financebench_comparisons.jsonl``
holds 58 questions (FinanceBench question format, ids ``cmp_001``…) over the 10-Ks among the 74
filings the FinanceBench questions ask about; load them with
``load_financebench(questions="comparisons")`` (same 10,206 pages, gold = the two pages).

* ``comparison-two-companies`` (34): one metric of two companies in one fiscal year (each company's
  own fiscal year, as its 10-K is labelled in the document information file: Walmart's FY2020 ends
  in January 2020, Nike's in May);
* ``comparison-two-years`` (24): one metric of one company in two fiscal years that no filing of the
  corpus holds together (a 10-K's balance sheet holds 2 year-ends, its income and cash-flow
  statements 3 years: 2 or more years apart for a balance-sheet metric, 3 or more otherwise).

Metrics (:data:`METRIC_STATEMENT`): total assets, total liabilities, cash and cash equivalents
(balance sheet), revenue, net income, operating income (income statement), net cash provided by
operating activities (cash-flow statement). The row label is the company's own ("Net sales",
"Total revenues", "Operating profit", "Net loss", ...). Questions are worded in 9 (two companies)
and 8 (two years) phrasings with several names per metric, so no single template fits them.

**Gold rule** (:func:`find_statement_page`). The gold page of (filing, statement, row label) is the
first page of the filing one of whose first :data:`HEAD_LINES` non-blank lines *is* the statement's
heading (:data:`HEADINGS`, spaces and case ignored, "(continued)" allowed: Consolidated Balance
Sheet(s) / Statement(s) of Financial Position; Statement(s) of Operations / Income / Earnings or
Income Statements; Statement(s) of Cash Flows) and which has a row with that label
(:func:`row_figures`). The rule skips tables of contents (no figures), selected-financial-data
pages (their heading ends in a colon or says "Data") and notes. Each evidence item records the
``fiscal_year``, ``row_label``, the ``figure`` as printed and its ``unit``; every one of the 116
pages was checked by hand (the heading, the column order of the years, the figure in the fiscal
year's column: Amazon prints the years ascending) and the figures are restated in ``answer``. No
filing text is copied. A (company, year, metric) was used only if no other filing among the 74 has
a row with that label and figure and no other filing *of the same company* prints the figure at
all (later 10-Ks' selected financial data, cash-flow statements' opening cash, earnings releases
and 10-Qs repeat many figures; 13 first candidates were dropped for this). So among the company's
filings only the gold filing holds each figure, and no single filing holds both figures of a
two-year question. Over all 344 filings (``docs="all"``) this is not checked.

**Split rule** (:func:`assign_splits`, fixed before any method was run): within each question type,
the ids sorted by their ``sha256`` hex digest; the first half (rounded up) is ``dev``, the rest
``test`` (17 + 12 dev, 17 + 12 test).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping

__all__ = ["HEADINGS", "HEAD_LINES", "METRIC_STATEMENT", "find_statement_page", "row_figures", "split_of", "assign_splits"]

HEAD_LINES = 12
_C = r"(?:consolidated)?"
HEADINGS = {  # matched on a line with its spaces removed, lower-cased (PDF text splits words: "Balance Shee t")
    "balance": re.compile(rf"^{_C}(?:balancesheets?|statements?of{_C}financialposition)(?:\(continued\))?$"),
    "income": re.compile(rf"^{_C}(?:statements?of{_C}(?:operations|income|earnings)|incomestatements?)(?:\(continued\))?$"),
    "cashflow": re.compile(rf"^{_C}statements?of{_C}cashflows?(?:\(continued\))?$"),
}
#: the statement that holds each ``metric`` of the set (the row label differs by company: see each evidence item)
METRIC_STATEMENT = {"total_assets": "balance", "total_liabilities": "balance", "cash": "balance", "revenue": "income",
                    "net_income": "income", "operating_income": "income", "cfo": "cashflow"}
_FIGURE = re.compile(r"\(?\d[\d,]*(?:\.\d+)?\)?")
_LETTER = re.compile(r"[^\W\d_]")


def _lines(text: str) -> list[str]:
    """The page's lines with runs of white space collapsed and dot leaders ("Total assets.....") removed."""
    return [" ".join(re.sub(r"\.{3,}", " ", line).split()) for line in text.splitlines()]


def row_figures(text: str, label: str) -> list[str]:
    """The figures of the first row of ``text`` labelled ``label`` (case-insensitive), as printed.

    A row is a line that is the label, optionally followed by figures on the same line, and then
    the figures on the following lines up to the first line with a letter ("$" and blank lines are
    skipped). Rows with no figure are passed over; ``[]`` when there is no such row.
    """
    lines = _lines(text)
    want = label.casefold()
    for i, line in enumerate(lines):
        if not line.casefold().startswith(want) or _LETTER.search(rest := line[len(want) :]):
            continue
        figures = _FIGURE.findall(rest)
        for nxt in lines[i + 1 :]:
            if _LETTER.search(nxt):
                break
            figures.extend(_FIGURE.findall(nxt))
        if figures:
            return figures
    return []


def find_statement_page(pages: Mapping[int, str], kind: str, label: str) -> int | None:
    """The gold page of a filing for one statement row (the module's gold rule), or None.

    Parameters
    ----------
    pages : mapping page number (0-based) → page text, the pages of one filing
    kind : ``"balance"``, ``"income"`` or ``"cashflow"`` (a key of :data:`HEADINGS`)
    label : the row label, e.g. ``"Total assets"``
    """
    heading = HEADINGS[kind]
    for page in sorted(pages):
        text = pages[page]
        head = [re.sub(r"\s+", "", line).lower() for line in text.splitlines() if line.strip()][:HEAD_LINES]
        if any(heading.match(line) for line in head) and row_figures(text, label):
            return page
    return None


def split_of(ids: Iterable[str]) -> dict[str, str]:
    """``id → "dev"/"test"`` for one stratum: sorted by sha256 of the id, first half (rounded up) dev."""
    ranked = sorted(ids, key=lambda i: hashlib.sha256(i.encode("utf-8")).hexdigest())
    half = (len(ranked) + 1) // 2
    return {qid: ("dev" if n < half else "test") for n, qid in enumerate(ranked)}


def assign_splits(rows: Iterable[Mapping]) -> dict[str, str]:
    """The split rule over question rows, stratified by ``question_type``."""
    by_type: dict[str, list[str]] = {}
    for row in rows:
        by_type.setdefault(row["question_type"], []).append(row["financebench_id"])
    return {qid: split for ids in by_type.values() for qid, split in split_of(ids).items()}
