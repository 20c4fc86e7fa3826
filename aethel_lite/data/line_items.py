"""Line items by meaning: the names an analyst gives a financial-statement line and the labels filings print for it.

A question says "capex", "top-line revenue" or "income from operations"; the statement's row reads "Purchases of
property and equipment", "Net sales" or "Operating income". Matching their words alone misses such a pair. Each
entry of :data:`LINE_ITEMS` is one line item (a US-GAAP concept: its standard label first), the statement that
reports it and the phrasings that name it, written from the concepts' standard and common labels, not from any
question. :func:`named_items` finds the items a text names (a phrasing whose words it holds);
:func:`item_words` gives the words of every phrasing of those items, so that a question naming "income from
operations" also matches the row "Operating income".

Words are compared as :func:`words` gives them: lower case, plurals made singular, function words removed (the
statement pages' row labels are read the same way, :mod:`aethel_lite.data.statement_pages`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["LINE_ITEMS", "FUNCTION_WORDS", "words", "named_items", "item_words", "item_kinds"]

_WORD = re.compile(r"[a-z]+")
#: function words: they say nothing about a line item
FUNCTION_WORDS = frozenset(
    "a an and are as at be by for from in into is its of on or our the their to was were which with".split()
)


def _singular(w: str) -> str:
    """A plural's singular by its ending: "liabilities" → "liability", "losses" → "loss", "assets" → "asset";
    "loss", "gross", "status" and "basis" stay."""
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith("sses"):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def words(text: str) -> frozenset[str]:
    """The words of a label or question: lower-cased letters, plurals made singular, function words removed."""
    return frozenset(_singular(w) for w in _WORD.findall(text.lower()) if w not in FUNCTION_WORDS)


#: line item → (the statement that reports it, phrasings that name it: analysts' and the labels filings print)
LINE_ITEMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "revenue": (
        "income",
        ("revenues", "revenue", "net revenues", "total revenues", "net sales", "total net sales", "sales",
         "top-line", "turnover"),
    ),
    "cost of revenue": (
        "income",
        ("cost of revenue", "cost of revenues", "cost of sales", "cost of goods sold", "cost of products sold",
         "COGS"),
    ),
    "operating income": (
        "income",
        ("operating income", "operating income (loss)", "income from operations", "income (loss) from operations",
         "loss from operations", "operating loss", "operating profit", "earnings from operations",
         "operating earnings"),
    ),
    "net income": (
        "income",
        ("net income", "net income (loss)", "net earnings", "net profit", "profit attributable",
         "net income attributable", "net earnings attributable", "bottom line"),
    ),
    "total assets": ("balance", ("total assets",)),
    "total liabilities": ("balance", ("total liabilities",)),
    "cash": (
        "balance",
        ("cash and cash equivalents", "cash and equivalents", "cash, cash equivalents", "cash balance"),
    ),
    "inventory": ("balance", ("inventories", "inventory", "merchandise inventories")),
    "operating cash flow": (
        "cashflow",
        ("net cash provided by operating activities", "net cash from operating activities",
         "cash provided by operations", "cash flow from operations", "cash flows from operations",
         "cash from operations", "operating cash flow", "cash generated from operations"),
    ),
    "capital expenditures": (
        "cashflow",
        ("capital expenditures", "capital expenditure", "capex", "capital spending",
         "purchases of property and equipment", "purchases of property, plant and equipment",
         "payments for property, plant and equipment", "payments for property and equipment",
         "payments to acquire property, plant and equipment",
         "payments for acquisition of property, plant and equipment",
         "additions to property, plant and equipment", "additions to property and equipment"),
    ),
    "dividends paid": ("cashflow", ("dividends paid", "cash dividends paid", "payments of dividends")),
}  # fmt: skip


#: each line item's phrasings as word sets (:func:`words`), read once
_PHRASE_WORDS = {item: [w for w in map(words, phrasings) if w] for item, (_, phrasings) in LINE_ITEMS.items()}


def named_items(text_words: frozenset[str]) -> list[str]:
    """The line items of :data:`LINE_ITEMS` a text with words ``text_words`` (:func:`words`) names: those with a
    phrasing all of whose words it holds."""
    return [item for item, phrases in _PHRASE_WORDS.items() if any(w <= text_words for w in phrases)]


def item_words(items: Iterable[str]) -> frozenset[str]:
    """The words of every phrasing of ``items``."""
    return frozenset().union(*(w for item in items for w in _PHRASE_WORDS[item]))


def item_kinds(items: Iterable[str]) -> set[str]:
    """The statements that report ``items``."""
    return {LINE_ITEMS[item][0] for item in items}
