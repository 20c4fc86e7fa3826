"""A question's dates read in the filer's fiscal calendar (aethel_lite.data.fiscal), against a table written by
hand from the filers' own reports: Apple (fiscal year ends in late September, 52/53 weeks), Microsoft (June 30),
Nike (May 31), Walmart (January 31), Best Buy (the Saturday nearest January 31) and a calendar-year filer."""

from __future__ import annotations

import pytest

from aethel_lite.data.docmeta import DocMeta, read_docmeta, write_docmeta
from aethel_lite.data.fiscal import (
    calendar_of,
    fiscal_keys,
    fiscal_year_ends,
    period_keys,
    prefers_annual,
    question_periods,
)
from aethel_lite.errors import DataError

APPLE, MICROSOFT, NIKE, WALMART, BEST_BUY, CALENDAR = 9, 6, 5, 1, 1, 12

#: (question, fiscal-year-end month, period keys, asks for the annual report)
TABLE = [
    # "quarter ended <date>" / "three months ended <date>"
    ("Apple's net sales for the quarter ended June 24, 2023?", APPLE, ["2023q3", "2023"], False),
    # a 52/53-week date in a month's first week closes the month before
    ("Apple's net sales for the quarter ended July 1, 2023?", APPLE, ["2023q3", "2023"], False),
    ("net sales in the three months ended December 30, 2023", APPLE, ["2024q1", "2024"], False),
    ("revenue for the three-month period ended December 31, 2023", MICROSOFT, ["2024q2", "2024"], False),
    ("revenues, quarter ended November 30, 2022", NIKE, ["2023q2", "2023"], False),
    ("total revenues for the quarter ended April 30, 2023", WALMART, ["2024q1", "2024"], False),
    ("revenue for the quarter ended March 31, 2024", CALENDAR, ["2024q1", "2024"], False),
    ("revenue for the 13 weeks ended October 28, 2023", BEST_BUY, ["2024q3", "2024"], False),
    # "six / nine / twelve months ended <date>": the quarter the period closes in
    ("net sales for the six months ended March 30, 2024", APPLE, ["2024q2", "2024"], False),
    ("net income for the nine months ended June 29, 2024", APPLE, ["2024q3", "2024"], False),
    ("revenue for the six months ended December 31, 2023", MICROSOFT, ["2024q2", "2024"], False),
    ("revenues for the nine months ended February 28, 2023", NIKE, ["2023q3", "2023"], False),
    ("sales for the 26 weeks ended July 29, 2023", BEST_BUY, ["2024q2", "2024"], False),
    ("net sales for the twelve months ended September 30, 2023", APPLE, ["2023"], True),
    # fiscal quarters and years as named
    ("gross margin in Q3 FY2023", APPLE, ["2023q3", "2023"], False),
    ("gross margin in 3Q FY23", APPLE, ["2023q3", "2023"], False),
    ("operating income in the first quarter of fiscal 2024", NIKE, ["2024q1", "2024"], False),
    ("diluted EPS for fiscal 2024", MICROSOFT, ["2024"], True),
    ("diluted EPS for FY24", WALMART, ["2024"], True),
    ("capital expenditure in fiscal year 2023", CALENDAR, ["2023"], True),
    # "year ended <date>"
    ("diluted EPS for the year ended September 30, 2023", APPLE, ["2023"], True),
    ("net income for the fiscal year ended May 31, 2023", NIKE, ["2023"], True),
    ("revenue for the fiscal year ended January 31, 2024", WALMART, ["2024"], True),
    ("revenue for the fiscal year ended February 3, 2024", BEST_BUY, ["2024"], True),
    ("revenue for the year ended December 31, 2022", CALENDAR, ["2022"], True),
    # "as of <date>": the report whose period ends that day
    ("cash and cash equivalents as of December 30, 2023", APPLE, ["2024q1", "2024"], False),
    ("total assets as of September 30, 2023", APPLE, ["2023"], True),
    ("inventories as of November 30, 2023", NIKE, ["2024q2", "2024"], False),
    ("total assets as of June 30, 2023", MICROSOFT, ["2023"], True),
    ("total assets as at October 31, 2023", WALMART, ["2024q3", "2024"], False),
    ("total assets as of December 31, 2023", CALENDAR, ["2023"], True),
    # a month, a bare year, two periods
    ("inventories in June 2023", APPLE, ["2023q3", "2023"], False),
    ("How did revenue change in 2023?", APPLE, ["2023"], False),
    (
        "revenue in the quarter ended December 30, 2023 against fiscal 2023",
        APPLE,
        ["2024q1", "2024", "2023"],
        False,
    ),
    ("no period here", APPLE, [], False),
]


@pytest.mark.parametrize("question, fy_end, keys, annual", TABLE, ids=[row[0][:48] for row in TABLE])
def test_a_questions_period_in_the_filers_calendar(question, fy_end, keys, annual):
    periods = question_periods(question, fy_end)
    assert fiscal_keys(question, fy_end) == keys
    assert prefers_annual(periods) is annual


def test_every_phrasing_of_the_table_is_covered():
    phrases = [
        "quarter ended",
        "three months ended",
        "six months ended",
        "nine months ended",
        "twelve months ended",
        " Q3 FY",
        "3Q FY",
        "quarter of fiscal",
        "fiscal 20",
        "FY24",
        "year ended",
        "as of",
        "weeks ended",
    ]
    for phrase in phrases:
        assert sum(phrase in q for q, *_ in TABLE) >= 1, phrase
    assert len({fy for _, fy, *_ in TABLE}) >= 5  # five calendars, four of them not the calendar year


def test_the_calendar_year_gives_the_calendar_reading_of_quarter_dates():
    """With December year ends a quarter-end date is its calendar quarter, as period_keys reads it."""
    for q in ("sales for the quarter ended June 30, 2024", "the quarter ended September 30, 2021"):
        assert fiscal_keys(q, 12) == period_keys(q)


def test_a_duration_is_kept_apart_from_the_quarter():
    (six,) = question_periods("net sales for the six months ended March 30, 2024", APPLE)
    assert (six.year, six.quarter, six.months, six.annual) == (2024, 2, 6, False)
    (trailing,) = question_periods("revenue for the twelve months ended December 30, 2023", APPLE)
    assert (trailing.year, trailing.quarter, trailing.months, trailing.annual) == (2024, 1, 12, False)


def test_spans_point_at_the_phrase():
    q = "What was Apple's cash as of December 30, 2023 and in fiscal 2023?"
    spans = [q[p.start : p.end] for p in question_periods(q, APPLE)]
    assert spans == ["December 30, 2023", "fiscal 2023"]


def test_a_quarter_and_a_year_together_do_not_prefer_the_annual_report():
    assert not prefers_annual(question_periods("Q2 FY2024 revenue against fiscal 2023", APPLE))


def test_fiscal_year_ends_by_company_and_the_calendar_a_question_is_read_in():
    metas = {
        "a1": DocMeta("a1", ["apple"], ["2023"], ["10k"], fiscal_year_end=9),
        "a2": DocMeta("a2", ["apple"], ["2024", "2024q1"], ["10q"], fiscal_year_end=9),
        # an 8-K's odd reading is outvoted
        "a3": DocMeta("a3", ["apple"], ["2024"], ["8k"], fiscal_year_end=12),
        "m1": DocMeta("m1", ["microsoft"], ["2024"], ["10k"], fiscal_year_end=6),
        "x1": DocMeta("x1", ["unknown co"], ["2024"], ["10k"]),
    }
    ends = fiscal_year_ends(metas)
    assert ends == {"apple": 9, "microsoft": 6}
    assert calendar_of({"microsoft": 1.0, "apple": 0.6}, ends) == 6
    assert calendar_of({"unknown co": 1.0, "apple": 0.5}, ends) == 9
    assert calendar_of({}, ends) is None  # two calendars in the corpus, none named
    assert calendar_of({}, {"apple": 9}) == 9  # one calendar in the corpus
    assert calendar_of({"apple": 1.0}, {}) is None


def test_docmeta_keeps_the_fiscal_year_end_and_reads_files_without_it(tmp_path):
    metas = {
        "a": DocMeta("a", ["apple"], ["2023"], ["10k"], {"period": "cover"}, 9),
        "b": DocMeta("b", ["beta"], ["2023"], ["10k"]),
    }
    path = tmp_path / "docmeta.json"
    write_docmeta(path, metas)
    assert '"fiscal_year_end": 9' in path.read_text()
    assert path.read_text().count("fiscal_year_end") == 1  # unknown: no key, as files written before it
    assert read_docmeta(path) == metas
    path.write_text(path.read_text().replace('"fiscal_year_end": 9', '"fiscal_year_end": 13'))
    with pytest.raises(DataError, match="fiscal_year_end must be a month"):
        read_docmeta(path)
