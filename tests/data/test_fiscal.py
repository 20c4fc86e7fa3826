"""A question's dates read in the filer's fiscal calendar (aethel_lite.data.fiscal), against a table written by
hand from the filers' own reports: Apple (fiscal year ends in late September, 52/53 weeks), Microsoft (June 30),
Nike (May 31), Walmart (January 31), Best Buy (the Saturday nearest January 31) and a calendar-year filer."""

from __future__ import annotations

import pytest

from aethel_lite.data.docmeta import CompanyIndex, DocMeta, question_fields, read_docmeta, write_docmeta
from aethel_lite.data.fiscal import (
    FiscalCalendars,
    calendar_of,
    filer_key,
    fiscal_keys,
    fiscal_year_ends,
    fiscal_year_names,
    naming_of,
    period_keys,
    prefers_annual,
    question_periods,
    read_periods,
    year_naming,
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


#: sentences of real filings that name a fiscal year with the day it ends (the filer's fiscal-year-end month), and
#: how each names its years
NAMING = [
    ("Fiscal year 2022, 2021, and 2020 represented the 52 weeks ended January 28, 2023, January 29, 2022", 1, "start"),
    ("Our fiscal year 2023, ending February 3, 2024, will include 53 weeks", 1, "start"),
    ("Fiscal year 2017 was a 53-week fiscal year ending on September 3, 2017", 8, "end"),
    ("The Company's fiscal year 2017 included 53 weeks and ended on September 30, 2017", 9, "end"),
    ("Fiscal 2018, 2017 and 2016 ended December 29, 2018, December 30, 2017", 12, "end"),
    ('the fiscal year ending January 31, 2024 ("fiscal 2024")', 1, "end"),
    ("Our first quarter of fiscal 2024 ended April 30, 2023", 1, "end"),  # a quarter's day counts too
    # no year named with its day: a comparison pointing at another report, a bare date
    ("fiscal 2018 as compared to fiscal 2017 is included in Item 7 of our Form 10-K for the fiscal year ended "
     "November 30, 2018", 11, None),
    ("The quarter ended October 29, 2022 was a 13-week period.", 1, None),
]  # fmt: skip


@pytest.mark.parametrize(("sentence", "fy_end", "naming"), NAMING)
def test_how_a_filer_names_its_fiscal_years(sentence, fy_end, naming):
    assert year_naming(["Item 7", sentence], fy_end) == naming


def test_a_filer_naming_years_by_their_start_is_read_a_year_later_except_its_dates():
    """Foot Locker (fiscal year ends the Saturday nearest January 31, named by the year it starts in): its "fiscal
    2022" is the year ended January 28, 2023, which the index counts as 2023; a date is read as it is."""
    read = {
        "Foot Locker's total sales in fiscal 2022": (["2023"], True),
        "Foot Locker's sales in FY22": (["2023"], True),
        "sales in Q3 2022": (["2023q3", "2023"], False),
        "sales in the third quarter of 2022": (["2023q3", "2023"], False),
        "sales in 2022": (["2023"], False),
        "sales for the quarter ended October 29, 2022": (["2023q3", "2023"], False),
        "diluted EPS for the year ended January 28, 2023": (["2023"], True),
    }
    for question, (keys, annual) in read.items():
        assert read_periods(question, 1, "start") == (keys, annual), question
    # the default, and a filer naming its years by their end, is unchanged
    assert read_periods("Walmart's revenue in fiscal 2023", 1) == read_periods(
        "Walmart's revenue in fiscal 2023", 1, "end"
    )
    assert read_periods("Walmart's revenue in fiscal 2023", 1) == (["2023"], True)
    with pytest.raises(ValueError, match="named_by"):
        question_periods("fiscal 2022", 1, named_by="begin")


def test_a_companys_naming_is_what_most_of_its_filings_say_and_keys_show_in_its_terms():
    metas = {
        "f1": DocMeta("f1", ["foot locker"], ["2023"], ["10k"], fiscal_year_end=1, fiscal_year_name="start"),
        "f2": DocMeta("f2", ["foot locker"], ["2022"], ["10k"], fiscal_year_end=1, fiscal_year_name="start"),
        "f3": DocMeta(
            "f3", ["foot locker"], ["2023", "2023q3"], ["8k"], fiscal_year_end=1, fiscal_year_name="end"
        ),
        "w1": DocMeta("w1", ["walmart"], ["2023"], ["10k"], fiscal_year_end=1, fiscal_year_name="end"),
        "t1": DocMeta("t1", ["tie co"], ["2023"], ["10k"], fiscal_year_end=1, fiscal_year_name="start"),
        "t2": DocMeta("t2", ["tie co"], ["2023"], ["10k"], fiscal_year_end=1, fiscal_year_name="end"),
        "x1": DocMeta("x1", ["unknown co"], ["2023"], ["10k"]),
    }
    names = fiscal_year_names(metas)
    assert names == {"foot locker": "start", "tie co": "end", "walmart": "end"}
    assert naming_of({"walmart": 1.0, "foot locker": 0.6}, names) == "end"
    assert naming_of({"unknown co": 1.0, "foot locker": 0.5}, names) == "start"
    assert naming_of({}, names) == "end"
    assert [filer_key(k, "start") for k in ("2023", "2023q3", "2023q4")] == ["2022", "2022q3", "2022q4"]
    assert [filer_key("2023q3", n) for n in ("end", None)] == ["2023q3", "2023q3"]


def test_docmeta_keeps_how_years_are_named_and_reads_files_without_it(tmp_path):
    metas = {
        "f": DocMeta("f", ["foot locker"], ["2023"], ["10k"], {"period": "cover"}, 1, "start"),
        "b": DocMeta("b", ["beta"], ["2023"], ["10k"], {}, 12),
    }
    path = tmp_path / "docmeta.json"
    write_docmeta(path, metas)
    assert path.read_text().count('"fiscal_year_name": "start"') == 1
    assert path.read_text().count("fiscal_year_name") == 1  # unknown: no key, as files written before it
    assert read_docmeta(path) == metas
    path.write_text(path.read_text().replace('"fiscal_year_name": "start"', '"fiscal_year_name": "first"'))
    with pytest.raises(DataError, match="fiscal_year_name must be one of end, start"):
        read_docmeta(path)


def test_a_question_naming_a_start_named_filer_links_to_the_year_its_index_counts():
    companies = CompanyIndex(["foot locker", "walmart"])
    ends = {"foot locker": 1, "walmart": 1}
    calendars = FiscalCalendars(ends, {"foot locker": "start", "walmart": "end"})
    periods = {"decay": 0.5, "fiscal": True}
    fields = question_fields(
        "Foot Locker's total sales in fiscal 2022", companies, calendars, periods=periods
    )
    assert fields[1] == {"period:2023": 1.0} and fields[2] == {"type:10k": 1.0, "type:20f": 1.0}
    fields = question_fields("Walmart's total revenues in fiscal 2022", companies, calendars, periods=periods)
    assert fields[1] == {"period:2022": 1.0}
    # without the namings (an index written before them) every filer is read by the year its fiscal year ends in
    old = FiscalCalendars(ends)
    assert question_fields("Foot Locker's total sales in fiscal 2022", companies, old, periods=periods)[
        1
    ] == {"period:2022": 1.0}
    # metadata read from the documents: the calendars they state
    metas = {
        "f": DocMeta("f", ["foot locker"], ["2023"], ["10k"], fiscal_year_end=1, fiscal_year_name="start"),
        "w": DocMeta("w", ["walmart"], ["2023"], ["10k"], fiscal_year_end=1),
    }
    assert FiscalCalendars.of(metas) == FiscalCalendars(ends, {"foot locker": "start"})
