"""The comparison set's extension: questions drawn by rule from the filings' statement pages, none naming a statement.

The first 58 questions of ``aethel_lite/manifests/financebench_comparisons.jsonl`` (``cmp_001``–``cmp_058``) were
written and their pages checked by hand (:mod:`aethel_lite.studies.comparisons`). :func:`extension` draws the
rest from the same 74 filings, by rules fixed before any method was run on them:

1. **Figures.** For each 10-K and metric (:data:`~aethel_lite.studies.comparisons.METRIC_STATEMENT`, in order),
   the first row label of :data:`LABELS` for which the gold rule
   (:func:`~aethel_lite.studies.comparisons.find_statement_page`) finds a page; the figure is that row's first
   (the statement's latest column), as printed ("(18,815)": a loss). Kept only when the page states its unit ("in millions") and the first year
   heading its columns is the filing's fiscal year, when the (filing, metric) is not one of the first 58
   questions', and under the hand-written set's uniqueness rule: no other filing of the company prints the
   figure, and no other company's filing has the row with it.
2. **Two companies**: in each (fiscal year, metric) the kept filings sorted by company, paired in order
   (first with second, third with fourth, ...).
3. **Two years**: for a company and metric with kept figures of two or more fiscal years, the earliest and the
   latest, when they are at least 2 years apart for a balance-sheet metric and 3 otherwise (so no 10-K holds
   both). (None of these companies has a 10-K of a year in between among the 74 filings, so this corpus holds
   no such distractor.)
4. **Wording** (:data:`TWO_COMPANIES`, :data:`TWO_YEARS`, :data:`PHRASES`): a template and a phrase for the
   metric chosen by the question id's SHA-256; no template names a statement.
5. **Split**: :func:`~aethel_lite.studies.comparisons.split_of` over the new ids within each question type (the
   first 58 keep theirs).

:func:`analyst_extension` draws a second group by the same rules after it, for two line items the questions before
never ask, named in an analyst's words rather than the statement's (:data:`ANALYST_LABELS`,
:data:`ANALYST_PHRASES`: "capex" for "Purchases of property and equipment", "COGS" for "Cost of sales"), split
apart from the groups before it. Its phrasings and labels were written from the filings' cash-flow and income
statement rows before any question of it was drawn; the line items' table of the retriever
(:mod:`aethel_lite.data.line_items`) was written before it too.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence

from ..data.statements import row_figures
from .comparisons import METRIC_STATEMENT, find_statement_page, split_of

__all__ = [
    "LABELS",
    "PHRASES",
    "TWO_COMPANIES",
    "TWO_YEARS",
    "FIRST_HAND_WRITTEN",
    "extension",
    "ANALYST_LABELS",
    "ANALYST_PHRASES",
    "FIRST_ANALYST",
    "analyst_extension",
]

#: the questions written by hand; the extension's ids follow
FIRST_HAND_WRITTEN = 58
#: row labels tried for each metric, in order
LABELS = {
    "total_assets": ("Total assets",),
    "total_liabilities": ("Total liabilities",),
    "cash": ("Cash and cash equivalents",),
    "revenue": ("Total revenues", "Total revenue", "Total net revenue", "Total net sales", "Net revenues",
                "Net revenue", "Revenues", "Revenue", "Net sales"),
    "net_income": ("Net income", "Net earnings", "Net income (loss)", "Net loss", "Net earnings (loss)"),
    "operating_income": ("Operating income", "Operating income (loss)", "Income from operations",
                         "Operating profit", "Earnings from operations"),
    "cfo": ("Net cash provided by operating activities", "Net cash provided by (used in) operating activities",
            "Net cash from operating activities"),
}  # fmt: skip
#: how a question names each metric (the hand-written set's wordings)
PHRASES = {
    "total_assets": ("total assets",),
    "total_liabilities": ("total liabilities",),
    "cash": ("cash and cash equivalents", "cash and equivalents"),
    "revenue": ("total revenue", "top-line revenue", "revenue"),
    "net_income": ("net income", "net earnings"),
    "operating_income": ("operating income", "operating profit", "income (or loss) from operations"),
    "cfo": ("cash flow from operating activities", "net cash provided by operating activities"),
}
#: the second group's row labels per line item, in order (those the 74 filings' statements print for it)
ANALYST_LABELS = {
    "capex": ("Capital expenditures", "Purchases of property and equipment", "Purchase of property and equipment",
              "Purchases of property, plant and equipment", "Purchases of property, plant and equipment (PP&E)",
              "Additions to property, plant and equipment", "Additions to property and equipment",
              "Property, plant and equipment additions", "Payments for property and equipment",
              "Payments to acquire property, plant and equipment"),
    "cost_of_revenue": ("Total cost of revenue", "Total cost of sales", "Cost of sales", "Cost of revenues",
                        "Cost of revenue", "Cost of goods sold", "Cost of products sold"),
}  # fmt: skip
#: how the second group's questions name each line item: an analyst's words
ANALYST_PHRASES = {
    "capex": ("capex", "capital expenditures", "capital spending"),
    "cost_of_revenue": ("COGS", "cost of goods sold", "cost of revenue"),
}
#: the first id of the second group (``cmp_082``): the questions before it are the hand-written ones and
#: :func:`extension`'s
FIRST_ANALYST = 82
TWO_COMPANIES = (
    "Which reported the larger {metric} for fiscal {year}, {a} or {b}?",
    "Between {a} and {b}, whose {metric} was higher in FY{year}?",
    "How far apart were {a}'s and {b}'s {metric} in fiscal year {year}?",
    "{a} or {b}: which had more {metric} in FY{year}, and by how much?",
)
TWO_YEARS = (
    "How much did {a}'s {metric} change from FY{first} to FY{last}?",
    "Set {a}'s {metric} for fiscal {first} beside fiscal {last}: which is larger?",
    "By how much did {a}'s {metric} differ between fiscal years {first} and {last}?",
)
_UNIT = re.compile(r"\bin (millions|thousands|billions)\b", re.I)
_YEAR = re.compile(r"\b((?:19|20)\d\d)\b")
_DATE_WORDS = re.compile(
    r"ended|as of|january|february|march|april|may|june|july|august|september|october|november|december", re.I
)


def _pick(options: Sequence[str], qid: str, salt: str) -> str:
    return options[hashlib.sha256(f"{qid}:{salt}".encode()).digest()[0] % len(options)]


def _first_column_year(text: str) -> int | None:
    """The first year heading a statement's columns: a line that is a year, or a year on a dated line."""
    for line in text.splitlines()[:30]:
        found = _YEAR.search(line)
        if found and (line.strip() == found.group(1) or _DATE_WORDS.search(line)):
            return int(found.group(1))
    return None


def _printed(figure: str) -> re.Pattern:
    return re.compile(rf"(?<![\d,.]){re.escape(figure)}(?![\d,]|\.\d)")


def _figures(
    filings: Mapping[str, Mapping[int, str]],
    about: Mapping[str, tuple],
    used: set,
    labels: Mapping[str, tuple],
) -> list[dict]:
    """Rule 1: the kept (filing, metric) figures of the metrics of ``labels`` (metric → row labels tried), as
    evidence items with ``metric`` and ``company``."""
    kept = []
    whole = {doc: "\n".join(pages.values()) for doc, pages in filings.items()}  # for _elsewhere
    for doc in sorted(d for d, (_, kind, _) in about.items() if kind == "10k"):
        company, _, year = about[doc]
        for metric, tried in labels.items():
            kind = METRIC_STATEMENT[metric]
            if (doc, metric) in used:
                continue
            for label in tried:
                page = find_statement_page(filings[doc], kind, label)
                if page is None:
                    continue
                text = filings[doc][page]
                figure = row_figures(text, label)[0]
                unit = _UNIT.search(text)
                if (
                    unit is None
                    or _first_column_year(text) != year
                    or _elsewhere(filings, about, doc, label, figure, whole)
                ):
                    break
                kept.append(
                    {"doc_name": doc, "evidence_page_num": page, "fiscal_year": year, "row_label": label,
                     "figure": figure, "unit": unit.group(1).lower(), "metric": metric, "company": company}
                )  # fmt: skip
                break
    return kept


def _elsewhere(filings, about, doc: str, label: str, figure: str, whole: Mapping[str, str]) -> bool:
    """Whether the uniqueness rule (rule 1) fails for ``figure`` of ``doc``'s row ``label`` (``whole``: each
    filing's pages in one string, to pass over a filing that does not print the figure at all)."""
    printed = _printed(figure)
    for other, pages in filings.items():
        if other == doc or figure not in whole[other]:
            continue
        if about[other][0] == about[doc][0]:
            if any(printed.search(t) for t in pages.values()):
                return True
        elif any(figure in t and figure in row_figures(t, label) for t in pages.values()):
            return True
    return False


def _evidence(items: Sequence[dict]) -> list[dict]:
    return [{k: v for k, v in e.items() if k not in ("metric", "company")} for e in items]


def extension(
    filings: Mapping[str, Mapping[int, str]], about: Mapping[str, tuple], hand: Sequence[Mapping]
) -> list:
    """The extension's rows (module docstring), in the manifest's format, ids after the hand-written ``hand``.

    Parameters
    ----------
    filings : mapping ``doc_name`` → page number → text, the 74 filings
    about : mapping ``doc_name`` → (company, filing type, fiscal year), from the document information
    hand : the hand-written rows (``cmp_001``–``cmp_058``)
    """
    used = {(e["doc_name"], r["metric"]) for r in hand for e in r["evidence"]}
    return _drawn(_figures(filings, about, used, LABELS), PHRASES, len(hand) + 1)


def analyst_extension(
    filings: Mapping[str, Mapping[int, str]], about: Mapping[str, tuple], before: Sequence[Mapping]
) -> list:
    """The second group's rows (module docstring): :data:`ANALYST_LABELS`' line items drawn by rules 1-3, worded
    with :data:`ANALYST_PHRASES`, ids from :data:`FIRST_ANALYST` on (``before``: every row before them)."""
    used = {(e["doc_name"], r["metric"]) for r in before for e in r["evidence"]}
    return _drawn(_figures(filings, about, used, ANALYST_LABELS), ANALYST_PHRASES, FIRST_ANALYST)


def _drawn(kept: Sequence[dict], phrases: Mapping[str, tuple], start: int) -> list:
    """Rules 2-5 over the kept figures: the pairs, worded with ``phrases``, ids from ``cmp_{start}`` on, split."""
    drafts = []
    groups: dict[tuple, list[dict]] = {}
    for e in kept:
        groups.setdefault((e["fiscal_year"], e["metric"]), []).append(e)
    for (_, metric), items in sorted(groups.items()):
        items = sorted(items, key=lambda e: (e["company"], e["doc_name"]))
        for a, b in zip(items[0::2], items[1::2]):
            if a["company"] != b["company"]:
                drafts.append(("comparison-two-companies", metric, [a, b]))
    by_company: dict[tuple, list[dict]] = {}
    for e in kept:
        by_company.setdefault((e["company"], e["metric"]), []).append(e)
    for (_, metric), items in sorted(by_company.items()):
        first, last = min(items, key=lambda e: e["fiscal_year"]), max(items, key=lambda e: e["fiscal_year"])
        gap = 2 if METRIC_STATEMENT[metric] == "balance" else 3
        if last["fiscal_year"] - first["fiscal_year"] >= gap:
            drafts.append(("comparison-two-years", metric, [first, last]))
    rows = []
    for n, (kind, metric, (a, b)) in enumerate(drafts, start=start):
        qid = f"cmp_{n:03d}"
        phrase = _pick(phrases[metric], qid, "phrase")
        if kind == "comparison-two-companies":
            text = _pick(TWO_COMPANIES, qid, "template").format(
                metric=phrase, year=a["fiscal_year"], a=a["company"], b=b["company"]
            )
        else:
            text = _pick(TWO_YEARS, qid, "template").format(
                metric=phrase, first=a["fiscal_year"], last=b["fiscal_year"], a=a["company"]
            )
        answer = "; ".join(
            f"{e['company']} FY{e['fiscal_year']}: ${e['figure']} {e['unit'][:-1]} ({e['row_label']}, "
            f"FY{e['fiscal_year']} 10-K)"
            for e in (a, b)
        )
        rows.append(
            {"financebench_id": qid, "question": text[0].upper() + text[1:], "answer": answer, "question_type": kind,
             "company": f"{a['company']} / {b['company']}", "doc_name": a["doc_name"], "metric": metric,
             "evidence": _evidence([a, b])}
        )  # fmt: skip
    splits = {}
    for kind in ("comparison-two-companies", "comparison-two-years"):
        splits.update(split_of(r["financebench_id"] for r in rows if r["question_type"] == kind))
    return [{**r, "split": splits[r["financebench_id"]]} for r in rows]
