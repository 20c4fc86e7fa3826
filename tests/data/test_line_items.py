"""Line items by meaning (aethel_lite.data.line_items): the phrasings an analyst uses name the item whose row a
statement prints, checked against the row labels of real filings read by hand for the comparison set's development
half (the test half's labels take no part)."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from aethel_lite.data.line_items import LINE_ITEMS, item_kinds, item_words, named_items, words
from aethel_lite.data.statements import HEADINGS

#: the comparison set's metrics as line items
METRIC_ITEM = {
    "total_assets": "total assets",
    "total_liabilities": "total liabilities",
    "operating_income": "operating income",
    "cash": "cash",
    "cfo": "operating cash flow",
    "net_income": "net income",
    "revenue": "revenue",
    "capex": "capital expenditures",
    "cost_of_revenue": "cost of revenue",
}


def _named(text: str) -> list[str]:
    return named_items(words(text))


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ("During fiscal 2018, did CVS Health or 3M report the higher income (or loss) from operations?", ["operating income"]),
        ("What was Amcor's capex in FY2022?", ["capital expenditures"]),
        ("Which had more top-line revenue in FY2022?", ["revenue"]),
        ("whose net earnings was higher in FY2022?", ["net income"]),
        ("What were Foot Locker's sales for the quarter ended October 29, 2022?", ["revenue"]),
        ("cash from operations in FY2019", ["operating cash flow"]),  # not the balance sheet's cash
        ("cash and equivalents at year-end", ["cash"]),
        ("How many employees did 3M have?", []),
        ("What are the company's main risks?", []),
    ],
)  # fmt: skip
def test_an_analysts_words_name_the_line_item(text, items):
    assert _named(text) == items


def test_every_development_row_label_names_its_metrics_item():
    """The oracle: the row labels printed in real 10-Ks for the comparison set's development questions ("Earnings
    from operations", "Net cash provided by (used in) operating activities", "Total net revenue", ...)."""
    path = files("aethel_lite.manifests") / "financebench_comparisons.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    labels = {
        (r["metric"], e["row_label"])
        for r in rows
        if r["split"] == "dev"
        for e in r["evidence"]
        if e["row_label"]
    }
    assert len({m for m, _ in labels}) == len(METRIC_ITEM) and len(labels) >= 20
    for metric, label in sorted(labels):
        assert METRIC_ITEM[metric] in _named(label), label


def test_items_bring_the_words_of_every_phrasing_and_their_statement():
    assert {"operating", "income", "operation"} <= item_words(["operating income"])
    assert {"purchase", "property", "equipment", "capex"} <= item_words(["capital expenditures"])
    assert item_kinds(["capital expenditures", "revenue"]) == {"cashflow", "income"}
    assert {kind for kind, _ in LINE_ITEMS.values()} <= set(HEADINGS)
    for item, (_, phrasings) in LINE_ITEMS.items():
        assert all(words(p) for p in phrasings), item
        assert item in _named(phrasings[0]), item  # each item is named by its first phrasing
