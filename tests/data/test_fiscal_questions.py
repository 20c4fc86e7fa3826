"""The fiscal-date questions (``benchmarks/fiscal_questions.jsonl``, which ``benchmarks/fiscal_dates.py``
measures) are well formed: every phrasing asked at least three times of filers whose fiscal year does not
end in December, at least four such filers, gold pages as 0-based ints in the filing the question names.

With ``AETHEL_DATA`` set (a missing file fails them): every gold filing is in FinanceBench's document
information file, and every gold page's text holds the question's figure as a whole number (the oracle
is the page text of ``pages.jsonl.gz``, read independently of the benchmark).
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from conftest import require

from aethel_lite.io import read_jsonl

QUESTIONS = Path(__file__).resolve().parents[2] / "benchmarks" / "fiscal_questions.jsonl"
PHRASINGS = {
    "quarter_ended",
    "three_months_ended",
    "six_months_ended",
    "nine_months_ended",
    "q_fy",
    "quarter_of_fiscal",
    "fiscal_year",
    "as_of",
    "year_ended",
}
FIELDS = {"id", "company", "question", "phrasing", "fiscal_year_end_month", "gold", "figure", "filing"}


@pytest.fixture(scope="module")
def questions() -> list[dict]:
    return [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]


def _non_calendar(questions):
    return [q for q in questions if q["fiscal_year_end_month"] != 12]


def test_fields_and_ids(questions):
    assert len(questions) >= 30
    for q in questions:
        assert FIELDS <= set(q), q.get("id")
        assert q["phrasing"] in PHRASINGS, q["id"]
        assert isinstance(q["fiscal_year_end_month"], int) and 1 <= q["fiscal_year_end_month"] <= 12, q["id"]
        assert q["company"].split()[0] in q["question"], q["id"]  # the question names its company
        assert "\n" not in q["question"] and "\r" not in q["question"], q["id"]  # one line for --questions
        assert isinstance(q["figure"], str) and re.fullmatch(r"\d[\d,]*(\.\d+)?", q["figure"]), q["id"]
    assert len({q["id"] for q in questions}) == len(questions)
    assert len({q["question"] for q in questions}) == len(questions)


def test_gold_pages_are_ints_in_the_named_filing(questions):
    for q in questions:
        assert q["gold"], q["id"]
        for g in q["gold"]:
            assert set(g) <= {"doc_name", "page", "other_filing"}, q["id"]
            assert type(g["page"]) is int and g["page"] >= 0, q["id"]
            assert (g["doc_name"] == q["filing"]) != bool(g.get("other_filing")), q["id"]
        assert len({(g["doc_name"], g["page"]) for g in q["gold"]}) == len(q["gold"]), q["id"]


def test_every_phrasing_three_times_on_non_calendar_filers(questions):
    counts = Counter(q["phrasing"] for q in _non_calendar(questions))
    assert set(counts) == PHRASINGS
    assert min(counts.values()) >= 3, counts


def test_four_non_calendar_filers_and_a_control(questions):
    companies = {q["company"] for q in _non_calendar(questions)}
    assert len(companies) >= 4, companies
    assert any(q["fiscal_year_end_month"] == 12 for q in questions)
    for company in companies:  # one fiscal year end per company
        assert len({q["fiscal_year_end_month"] for q in questions if q["company"] == company}) == 1, company


def test_gold_filings_exist_in_document_information(real_data, questions):
    info = require(real_data / "financebench" / "financebench_document_information.jsonl")
    rows = {row["doc_name"]: row for row in read_jsonl(info)}
    for q in questions:
        for g in q["gold"]:
            assert g["doc_name"] in rows, (q["id"], g["doc_name"])
            company = rows[g["doc_name"]]["company"].lower()
            assert q["company"].lower() in company or company in q["company"].lower(), (q["id"], company)


def test_gold_pages_hold_the_figure(real_data, questions):
    pages_file = require(real_data / "financebench" / "pages.jsonl.gz")
    wanted = {(g["doc_name"], g["page"]) for q in questions for g in q["gold"]}
    docs = {d for d, _ in wanted}
    text = {}
    prefixes = tuple(f'{{"doc_name": "{d}"'.encode() for d in docs)
    with gzip.open(pages_file, "rb") as fh:
        for line in fh:  # only the lines of the gold filings are parsed (a line starts with its doc_name)
            if line.startswith(prefixes):
                row = json.loads(line)
                if (row["doc_name"], row["page"]) in wanted:
                    text[(row["doc_name"], row["page"])] = row["text"]
    assert set(text) == wanted, sorted(wanted - set(text))[:5]
    for q in questions:
        number = re.compile(r"(?<![\d,.])" + re.escape(q["figure"]) + r"(?![\d]|[.,]\d)")
        for g in q["gold"]:
            assert number.search(text[(g["doc_name"], g["page"])]), (q["id"], g)
