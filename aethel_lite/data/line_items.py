"""Line items by meaning: the names an analyst gives a financial-statement line and the labels filings print for it.

A question says "capex", "top-line revenue" or "income from operations"; the statement's row reads "Purchases of
property and equipment", "Net sales" or "Operating income". Matching their words alone misses such a pair. Each
entry of :data:`LINE_ITEMS` is one line item (a US-GAAP concept: its standard label first), the statement that
reports it and the phrasings that name it, written from the concepts' standard and common labels, not from any
question. :func:`named_items` finds the items a text names (a phrasing whose words it holds);
:func:`item_words` gives the words of every phrasing of those items, so that a question naming "income from
operations" also matches the row "Operating income".

Words are compared as :func:`~aethel_lite.data.statement_pages.words` gives them (lower case, plurals made
singular, function words removed), passed in as ``words``: this module holds the vocabulary only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

__all__ = ["LINE_ITEMS", "named_items", "item_words", "item_kinds"]

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


def named_items(text_words: frozenset[str], words: Callable[[str], frozenset[str]]) -> list[str]:
    """The line items of :data:`LINE_ITEMS` a text names: those with a phrasing all of whose words it holds.

    Parameters
    ----------
    text_words : frozenset of str
        The text's words (``words(text)``).
    words : callable
        A phrase → its words, as ``text_words`` were made.
    """
    return [
        item
        for item, (_, phrasings) in LINE_ITEMS.items()
        if any((w := words(p)) and w <= text_words for p in phrasings)
    ]


def item_words(items: Iterable[str], words: Callable[[str], frozenset[str]]) -> frozenset[str]:
    """The words of every phrasing of ``items``."""
    return frozenset(w for item in items for p in LINE_ITEMS[item][1] for w in words(p))


def item_kinds(items: Iterable[str]) -> set[str]:
    """The statements that report ``items``."""
    return {LINE_ITEMS[item][0] for item in items}
