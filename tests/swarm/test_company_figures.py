"""The memo's figures are the company's, in the filer's fiscal terms, with their units.

A segment note's rows ("Americas: Net sales") are a segment's figures, never the company's total;
periods are named as the filer names them (Apple's quarter ended December 31, 2022 is its Q1 FY2023);
a bare table number carries the unit its statement prints it in; a trading symbol names its company.
The snippets are cut from real filings (Apple's 10-Q for the quarter ended July 1, 2023, Boeing's
2015 10-K); the periods are checked against the fiscal calendars the filers publish.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from aethel_lite.data.schema import Passage
from aethel_lite.swarm import Finding, RuleExtractor
from aethel_lite.swarm.extract import build_view, statement_page, table_rows
from aethel_lite.swarm.findings import EXTRA_KEYS, FINDING_KEYS, find_conflicts, prefer_statements
from aethel_lite.swarm.memo import AuditRow, MemoCheckError, build_memo, check_prose
from aethel_lite.swarm.resolvers import DocumentResolver
from aethel_lite.swarm.specialists import default_specialists
from aethel_lite.swarm.tables import segment_title
from aethel_lite.swarm.values import fiscal_name, period_phrase, printed_unit

# --- periods in the filer's fiscal terms --------------------------------------------------------


@pytest.mark.parametrize(
    "label, date, months, fy_end, flow, text",
    [
        # Apple: fiscal years end on the last Saturday of September
        ("2023-07-01", "2023-07-01", 3, 9, True, "Q3 FY2023, three months ended July 1, 2023"),
        ("2023-07-01", "2023-07-01", 9, 9, True, "9M FY2023, nine months ended July 1, 2023"),
        ("2022Q4", "2022-12-31", 3, 9, True, "Q1 FY2023, three months ended December 31, 2022"),
        ("FY2023", "2023-09-30", 12, 9, True, "FY2023, twelve months ended September 30, 2023"),
        ("2024-06-29", "2024-06-29", 3, 9, True, "Q3 FY2024, three months ended June 29, 2024"),
        ("2022-09-24", "2022-09-24", None, 9, False, "FY2022, as of September 24, 2022"),
        ("2023-07-01", "2023-07-01", None, 9, False, "Q3 FY2023, as of July 1, 2023"),
        (
            "2023-07-01",
            "2023-07-01",
            None,
            9,
            True,
            "Q3 FY2023, period ended July 1, 2023 (length not stated)",
        ),
        # Amcor: fiscal years end June 30
        ("2022Q4", "2022-12-31", 6, 6, True, "H1 FY2023, six months ended December 31, 2022"),
        ("2022Q4", "2022-12-31", 3, 6, True, "Q2 FY2023, three months ended December 31, 2022"),
        # Walmart: fiscal years end January 31
        ("FY2023", "2023-01-31", 12, 1, True, "FY2023, twelve months ended January 31, 2023"),
        ("2023Q2", "2023-04-30", 3, 1, True, "Q1 FY2024, three months ended April 30, 2023"),
        # a 52/53-week year closing in the first days of January closes the December before
        ("2023-01-01", "2023-01-01", 12, 12, True, "FY2022, twelve months ended January 1, 2023"),
        # an unknown year end is December; a period named without a day is the filer's own
        ("2024Q3", "2024-09-30", None, None, False, "Q3 FY2024, as of September 30, 2024"),
        ("2024Q3", None, None, 9, False, "Q3 FY2024"),
        ("FY2018", None, None, 12, True, "FY2018"),
    ],
)
def test_periods_in_the_filers_fiscal_terms(label, date, months, fy_end, flow, text):
    assert period_phrase(fiscal_name(label, date, months, fy_end, flow=flow), date, months, flow=flow) == text


@pytest.mark.parametrize(
    "unit, surface, scale, shown",
    [
        ("USD m", "169,658", 1.0, "USD millions"),
        ("USD m", "(1,577)", 1e-3, "USD thousands"),
        ("USD m", "$812.4 million", None, "USD millions"),
        ("USD m", "$1.2bn", 1.0, "USD billions"),  # the surface's own scale wins over the page's
        ("USD m", "$300,000", None, "USD"),
        ("EUR m", "€20m", None, "EUR millions"),
        ("%", "14.2%", None, "%"),
        ("x", "1.62x", None, "x"),
        (None, None, None, None),
    ],
)
def test_printed_units(unit, surface, scale, shown):
    assert printed_unit(unit, surface, scale) == shown


# --- statement totals and segment rows ----------------------------------------------------------

APPLE_STATEMENT = """Apple Inc.
CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS (Unaudited)
(In millions, except number of shares which are reflected in thousands and per share amounts)
Three Months Ended
Nine Months Ended
July 1,
2023
June 25,
2022
July 1,
2023
June 25,
2022
Net sales:
   Products
$
60,584\xa0
$
63,355\xa0
$
230,901\xa0
$
245,241\xa0
   Services
21,213\xa0
19,604\xa0
62,886\xa0
58,941\xa0
Total net sales
81,797\xa0
82,959\xa0
293,787\xa0
304,182\xa0
Net income
$
19,881\xa0
$
19,442\xa0
$
74,039\xa0
$
79,082\xa0
See accompanying Notes to Condensed Consolidated Financial Statements.
"""
APPLE_SEGMENTS = """Note 10 – Segment Information and Geographic Data
The following table shows information by reportable segment for the three- and nine-month periods ended July 1, 2023 and June 25, 2022 (in millions):
Three Months Ended
Nine Months Ended
July 1,
2023
June 25,
2022
July 1,
2023
June 25,
2022
Americas:
Net sales
$
35,383\xa0
$
37,472\xa0
$
122,445\xa0
$
129,850\xa0
Operating income
$
13,117\xa0
$
13,914\xa0
$
44,908\xa0
$
48,778\xa0
Europe:
Net sales
$
20,205\xa0
$
19,287\xa0
$
71,831\xa0
$
72,323\xa0
Greater China:
Net sales
$
15,758\xa0
$
14,604\xa0
$
57,475\xa0
$
58,730\xa0
"""
BOEING_SEGMENTS = """Notes to the Consolidated Financial Statements
Summary of Business Segment Data
(Dollars in millions)
Years ended December 31,
2015
2014
Revenues:
Commercial Airplanes
$66,048
$59,990
Defense, Space & Security:
Boeing Military Aircraft
13,482
13,500
Total Defense, Space & Security
30,388
30,881
Total revenues
$96,114
$90,762
Net earnings
$5,176
$5,446
"""
PARTS_AND_TOTAL = """Revenue by product line (in thousands)
2023
2022
Hardware:
Revenue
600
500
Software:
Revenue
400
380
Total revenue
1,000
880
"""


def _facts(text: str, metrics=("revenue", "net_income"), *, fy_end: int | None = 9, doc_type: str = "10q"):
    p = Passage("D#p3", "D", "", text, {"page": 3, "company": "Apple", "doc_type": doc_type})
    resolver = DocumentResolver([p], tickers={})
    view = build_view(p, resolver, fy_end=fy_end)
    return RuleExtractor().extract(view, list(metrics), [], resolver=resolver, specialist="t")


def test_the_statement_total_is_the_companys_figure_in_fiscal_terms_and_units():
    facts = {(f.metric, f.fiscal_period, f.value): f for f in _facts(APPLE_STATEMENT)}
    assert set(facts) == {
        ("revenue", "Q3 FY2023", 81797.0),
        ("revenue", "Q3 FY2022", 82959.0),
        ("revenue", "9M FY2023", 293787.0),
        ("revenue", "9M FY2022", 304182.0),
        ("net_income", "Q3 FY2023", 19881.0),
        ("net_income", "Q3 FY2022", 19442.0),
        ("net_income", "9M FY2023", 74039.0),
        ("net_income", "9M FY2022", 79082.0),
    }
    for f in facts.values():
        assert f.segment is None and f.statement and f.printed_unit == "USD millions"
    total = facts[("revenue", "9M FY2023", 293787.0)]
    assert (total.period_end, total.duration, total.surface) == ("2023-07-01", 9, "293,787")
    assert statement_page(APPLE_STATEMENT) and not statement_page(APPLE_SEGMENTS)


def test_segment_note_rows_are_segments_never_the_company_total():
    facts = _facts(APPLE_SEGMENTS)
    assert {f.metric for f in facts} == {"revenue"}
    assert all(not f.statement for f in facts)
    got = {(f.segment, f.fiscal_period, f.value) for f in facts}
    assert got == {
        ("Americas", "Q3 FY2023", 35383.0),
        ("Americas", "Q3 FY2022", 37472.0),
        ("Americas", "9M FY2023", 122445.0),
        ("Americas", "9M FY2022", 129850.0),
        ("Europe", "Q3 FY2023", 20205.0),
        ("Europe", "Q3 FY2022", 19287.0),
        ("Europe", "9M FY2023", 71831.0),
        ("Europe", "9M FY2022", 72323.0),
        ("Greater China", "Q3 FY2023", 15758.0),
        ("Greater China", "Q3 FY2022", 14604.0),
        ("Greater China", "9M FY2023", 57475.0),
        ("Greater China", "9M FY2022", 58730.0),
    }
    rows = table_rows(APPLE_SEGMENTS)
    assert [r.group for r in rows if r.label == "Net sales"] == ["Americas", "Europe", "Greater China"]


def test_a_total_row_closes_its_caption_and_stays_the_companys():
    """Boeing's segment summary: "Total Defense, Space & Security" closes that caption, so the company's
    net earnings below it are not the segment's; "Total revenues" is the company's."""
    facts = _facts(BOEING_SEGMENTS, fy_end=12, doc_type="10k")
    got = {(f.metric, f.period, f.value, f.segment) for f in facts}
    assert got == {
        ("revenue", "FY2015", 96114.0, None),
        ("revenue", "FY2014", 90762.0, None),
        ("net_income", "FY2015", 5176.0, None),
        ("net_income", "FY2014", 5446.0, None),
    }


def test_rows_that_a_total_row_sums_are_parts():
    facts = _facts(PARTS_AND_TOTAL, fy_end=12, doc_type="10k")
    got = {(f.segment, f.period, f.value, f.printed_unit) for f in facts}
    assert got == {
        ("Hardware", "FY2023", 0.6, "USD thousands"),
        ("Hardware", "FY2022", 0.5, "USD thousands"),
        ("Software", "FY2023", 0.4, "USD thousands"),
        ("Software", "FY2022", 0.38, "USD thousands"),
        (None, "FY2023", 1.0, "USD thousands"),
        (None, "FY2022", 0.88, "USD thousands"),
    }
    # without captions, parts that name no segment are dropped: only the total remains
    bare = PARTS_AND_TOTAL.replace("Hardware:\n", "").replace("Software:\n", "")
    assert {(f.segment, f.value) for f in _facts(bare, fy_end=12)} == {(None, 1.0), (None, 0.88)}


THREE_M_SELECTED = """Item 6. Selected Financial Data.
(Dollars in millions, except per share amounts)
2015
2014
Years ended December 31:
Net sales
 $
30,274 $
31,821
Net income attributable to 3M
4,833
4,956
Per share of 3M common stock:
Net income attributable to 3M — basic
7.72
7.63
Net income attributable to 3M — diluted
7.58
7.49
"""


def test_a_per_share_row_is_not_net_income():
    """3M's selected financial data print net income, then the same label per share under "Per share of
    3M common stock:": only the amount in millions is net income."""
    got = {(f.metric, f.period, f.value) for f in _facts(THREE_M_SELECTED, fy_end=12, doc_type="10k")}
    assert got == {
        ("revenue", "FY2015", 30274.0),
        ("revenue", "FY2014", 31821.0),
        ("net_income", "FY2015", 4833.0),
        ("net_income", "FY2014", 4956.0),
    }


BEST_BUY_STATEMENT = """Condensed Consolidated Statements of Earnings
$ and shares in millions, except per share amounts (unaudited)
Three Months Ended
Six Months Ended
July 29, 2023
July 30, 2022
July 29, 2023
July 30, 2022
Revenue
$
 9,583   $
 10,329   $
 19,050   $
 20,976
Net earnings
$
 274   $
 306   $
 518   $
 647
Basic earnings per share
$
 1.25   $
 1.36   $
 2.37   $
 2.86
Diluted earnings per share
$
 1.25   $
 1.35   $
 2.36   $
 2.85
Weighted-average common shares outstanding:
Basic
 218.6
 225.4
 218.7
 226.1
Diluted
 219.0
 226.1
 219.5
 227.2
"""


def test_diluted_earnings_per_share_are_usd_per_share_and_shares_are_not():
    """Best Buy's Q2 FY2024 statement of earnings (fiscal year ending near January 31): diluted EPS in USD per
    share for each column; the "Diluted" row under the shares outstanding is a share count, not EPS, and basic
    EPS is not diluted. 3M's selected data: the per-share row under "Per share of 3M common stock:"."""
    facts = _facts(BEST_BUY_STATEMENT, ("revenue", "net_income", "diluted_eps"), fy_end=1)
    eps = {(f.fiscal_period, f.value, f.printed_unit, f.duration) for f in facts if f.metric == "diluted_eps"}
    assert eps == {
        ("Q2 FY2024", 1.25, "USD per share", 3),
        ("Q2 FY2023", 1.35, "USD per share", 3),
        ("H1 FY2024", 2.36, "USD per share", 6),
        ("H1 FY2023", 2.85, "USD per share", 6),
    }
    assert {f.value for f in facts if f.metric == "net_income"} == {274.0, 306.0, 518.0, 647.0}
    three_m = _facts(THREE_M_SELECTED, ("net_income", "diluted_eps"), fy_end=12, doc_type="10k")
    assert {(f.metric, f.period, f.value, f.printed_unit) for f in three_m} == {
        ("net_income", "FY2015", 4833.0, "USD millions"),
        ("net_income", "FY2014", 4956.0, "USD millions"),
        ("diluted_eps", "FY2015", 7.58, "USD per share"),
        ("diluted_eps", "FY2014", 7.49, "USD per share"),
    }


AMERICAN_WATER_STATEMENT = """Consolidated Statements of Operations
(In millions, except per share data)
For the Years Ended December 31,
2022
2021
2020
Operating revenues
$
3,792
$
3,930
$
3,777
Net income attributable to common shareholders
$
820
$
1,263
$
709
Basic earnings per share: (a)
Net income attributable to common shareholders
$
4.51
$
6.96
$
3.91
Diluted earnings per share: (a)
Net income attributable to common shareholders
$
4.51
$
6.95
$
3.91
Weighted average common shares outstanding:
Basic
182
182
181
Diluted
182
182
182
"""


@pytest.mark.parametrize(
    "label, eps",
    [
        ("Diluted earnings per share", True),  # Best Buy
        ("Earnings per share attributable to 3M common shareholders — diluted", True),  # 3M's statement
        ("Net income attributable to 3M — diluted", True),  # 3M's selected data, under a per-share caption
        ("Diluted net income per share", True),
        ("Net income per share - diluted", True),
        ("Diluted", True),  # under "Earnings per share:" (a share count under "Shares outstanding:")
        ("Basic earnings per share", False),
        ("Weighted average 3M common shares outstanding — diluted", False),
        ("Net income", False),
    ],
)
def test_the_diluted_eps_labels_of_real_statements(label, eps):
    from aethel_lite.swarm.lexicon import METRICS, clean_label

    assert bool(METRICS["diluted_eps"].table_re.fullmatch(clean_label(label))) is eps


def test_a_per_share_caption_with_a_footnote_mark_still_heads_its_rows():
    """American Water Works' 2022 10-K: "Diluted earnings per share: (a)" heads a row labelled as net income;
    the rows under it are diluted EPS (2021: 6.95, basic 6.96), not net income in millions."""
    facts = _facts(
        AMERICAN_WATER_STATEMENT, ("revenue", "net_income", "diluted_eps"), fy_end=12, doc_type="10k"
    )
    assert {(f.metric, f.period, f.value, f.printed_unit) for f in facts} == {
        ("revenue", "FY2022", 3792.0, "USD millions"),
        ("revenue", "FY2021", 3930.0, "USD millions"),
        ("revenue", "FY2020", 3777.0, "USD millions"),
        ("net_income", "FY2022", 820.0, "USD millions"),
        ("net_income", "FY2021", 1263.0, "USD millions"),
        ("net_income", "FY2020", 709.0, "USD millions"),
        ("diluted_eps", "FY2022", 4.51, "USD per share"),
        ("diluted_eps", "FY2021", 6.95, "USD per share"),
        ("diluted_eps", "FY2020", 3.91, "USD per share"),
    }


AMCOR_MDA = """Results of Operations - Three Months Ended December 31, 2022
Consolidated Results of Operations
Three Months Ended December 31,
($ in\xa0millions, except per share data)
2022
2021
Net sales
$
3,642\xa0
$
3,507\xa0
Net income attributable to Amcor plc
$
459\xa0
$
225\xa0
Net sales increased by 4% for the three months ended December 31, 2022.
Segment Results of Operations
Flexibles Segment
Three Months Ended December 31,
($ in\xa0millions)
2022
2021
Net sales
$
2,812\xa0
$
2,713\xa0
Adjusted EBIT
353\xa0
352\xa0
"""


def test_a_table_titled_by_a_segment_is_that_segments_and_keeps_its_length():
    """Amcor's Q2 FY2023 10-Q (fiscal year ending June 30), management's discussion: the company's net sales,
    then a table titled "Flexibles Segment" whose length phrase stands above its unit line. The segment's
    net sales are the segment's, for the same quarter (not a fiscal year of unknown length)."""
    facts = _facts(AMCOR_MDA, ("revenue", "net_income"), fy_end=6)
    got = {(f.metric, f.fiscal_period, f.duration, f.value, f.segment) for f in facts}
    assert got == {
        ("revenue", "Q2 FY2023", 3, 3642.0, None),
        ("revenue", "Q2 FY2022", 3, 3507.0, None),
        ("net_income", "Q2 FY2023", 3, 459.0, None),
        ("net_income", "Q2 FY2022", 3, 225.0, None),
        ("revenue", "Q2 FY2023", 3, 2812.0, "Flexibles"),
        ("revenue", "Q2 FY2022", 3, 2713.0, "Flexibles"),
    }
    body = _memo(facts, "Amcor").markdown.split("## Audit trail")[0]
    assert "2,812" not in body.split("## Liquidity Specialist")[0]  # not in the summary: a segment's
    assert (
        "| revenue — Flexibles segment | Q2 FY2023, three months ended December 31, 2022 | **2,812** [A"
        in body
    )
    titles = {t: segment_title(t) for t in ("Segment Results of Operations", "North America segment results")}
    assert titles == {
        "Segment Results of Operations": None,
        "North America segment results": "North America",
    }


def test_a_segment_is_compared_with_itself_only():
    """A segment's figure and the company's total for one period are not a conflict; the same segment
    stated differently by two documents is."""
    base = Finding(
        "Apple", "revenue", "2023-07-01", 81797.0, "USD m", "q", "a#p3", "a", 3, "s", 0.9, "81,797"
    )
    seg = Finding("Apple", "revenue", "2023-07-01", 35383.0, "USD m", "q", "b#p15", "b", 15, "s", 0.9, "35,383",
                  segment="Americas")  # fmt: skip
    assert find_conflicts([base, seg]) == []
    other = Finding("Apple", "revenue", "2023-07-01", 35000.0, "USD m", "q", "c#p9", "c", 9, "s", 0.9, "35,000",
                    segment="Americas")  # fmt: skip
    (conflict,) = find_conflicts([base, seg, other])
    assert conflict.segment == "Americas" and {s["value"] for s in conflict.sources} == {35383.0, 35000.0}


def test_a_filings_statement_outranks_its_notes():
    """A note's figure that its own filing's statement contradicts (a segment's row the tables did not
    name) is left out of the memo and of the conflicts; another filing's figure is kept."""

    def fact(doc, value, *, statement=False, duration=3, period="2023-07-01"):
        return Finding("Apple", "revenue", period, value, "USD m", "q", f"{doc}#p1", doc, 1, "s", 0.9,
                       f"{value:,.0f}", duration=duration, statement=statement)  # fmt: skip

    total = fact("a", 81797.0, statement=True)
    note_same = fact("a", 81797.0)
    note_other = fact("a", 35383.0)  # Americas, under a heading the table does not repeat
    note_nine = fact("a", 122445.0, duration=9)  # another length: not the statement's rival
    note_unstated = fact("a", 35383.0, duration=None)
    other_doc = fact("b", 35383.0)
    other_period = fact("a", 35383.0, period="2022-06-25")
    kept = prefer_statements(
        [total, note_same, note_other, note_nine, note_unstated, other_doc, other_period]
    )
    assert kept == [total, note_same, note_nine, other_doc, other_period]
    (conflict,) = find_conflicts([total, note_other, other_doc])  # b's figure against a's statement
    assert [s["doc_id"] for s in conflict.sources] == ["a", "b"]
    assert find_conflicts([total, note_other, fact("b", 81797.0)]) == []


def test_a_fiscal_year_end_day_and_the_year_column_are_one_period():
    """Apple restated its FY2015 total assets: its 2015 10-K's balance sheet (a day, read without the
    annual-report type) gives 290,479, later 10-Ks' year columns 290,345: one conflict, each value once."""

    def fact(doc, value, period, date):
        return Finding("Apple", "total_assets", period, value, "USD m", "q", f"{doc}#p1", doc, 1, "s", 0.9,
                       f"{value:,.0f}", period_end=date, fiscal_period="FY2015", statement=True)  # fmt: skip

    facts = [
        fact("APPLE_2015_10K", 290479.0, "2015-09-26", "2015-09-26"),
        fact("APPLE_2016_10K", 290345.0, "2015-09-26", "2015-09-26"),
        fact("APPLE_2017_10K", 290345.0, "FY2015", None),
    ]
    (conflict,) = find_conflicts(facts)
    assert conflict.period == "FY2015" and len(conflict.sources) == 3
    memo = build_memo(
        target="Apple", found=True, findings=facts, conflicts=[conflict], specialists=default_specialists(),
        names={"Apple": "Apple"}, evidence="test.", target_entity="Apple",
    )  # fmt: skip
    (line,) = [ln for ln in memo.markdown.splitlines() if ln.startswith("- **total assets, FY2015")]
    assert line.startswith("- **total assets, FY2015, as of September 26, 2015**: **290,345** [A")
    assert line.count("against") == 1 and "**290,479** [A" in line


def _memo(facts, target: str = "Apple"):
    """The memo on ``facts`` (all about the entity "Apple", shown as ``target``)."""
    return build_memo(
        target=target,
        found=True,
        findings=facts,
        conflicts=[],
        specialists=default_specialists(),
        names={"Apple": target},
        evidence="test.",
        target_entity="Apple",
    )


def test_memo_reports_the_total_and_lists_segments_apart():
    md = _memo(_facts(APPLE_STATEMENT) + _facts(APPLE_SEGMENTS)).markdown
    body, audit = md.split("## Audit trail")
    summary = body.split("## Liquidity Specialist")[0]
    assert "revenue **293,787** [A" in summary
    assert "] USD millions (9M FY2023, nine months ended July 1, 2023)" in summary
    for segment_value in ("35,383", "122,445", "20,205", "71,831", "15,758", "57,475"):
        assert segment_value not in summary
    assert "| revenue — Americas segment | 9M FY2023, nine months ended July 1, 2023 | **122,445** [A" in body
    assert "| revenue | FY" not in body  # every revenue row here is a quarter's or nine months'
    rows = [line for line in audit.splitlines() if "| 122,445 |" in line]
    assert rows and "revenue — Americas segment (USD millions)" in rows[0]
    assert "9M FY2023, nine months ended July 1, 2023" in rows[0]


def test_memo_prints_diluted_eps_in_usd_per_share():
    memo = _memo(_facts(BEST_BUY_STATEMENT, ("revenue", "net_income", "diluted_eps"), fy_end=1), "Best Buy")
    summary = memo.markdown.split("## Audit trail")[0].split("## Liquidity Specialist")[0]
    assert "diluted earnings per share **2.36** [A" in summary
    assert "] USD per share (H1 FY2024, six months ended July 29, 2023)" in summary
    assert "219.0" not in memo.markdown and "219.5" not in memo.markdown  # diluted shares: no figure


def test_check_prose_takes_fiscal_periods_but_no_other_number():
    rows = [AuditRow("A1", "81,797", "Apple", "revenue", "Q3 FY2023", "d", None, "d#0", "81,797")]
    check_prose("revenue **81,797** [A1] USD millions (Q3 FY2023, three months ended July 1, 2023).", rows)
    check_prose("revenue **81,797** [A1] (9M FY2023, H1 FY2024, FY2022, as of September 24, 2022).", rows)
    with pytest.raises(MemoCheckError, match="35,383"):
        check_prose("revenue **81,797** [A1], Americas 35,383 (Q3 FY2023).", rows)
    with pytest.raises(MemoCheckError, match="Q7"):
        check_prose("revenue **81,797** [A1] (Q7 FY2023).", rows)


def test_finding_records_keep_the_new_keys_and_read_older_records():
    f = _facts(APPLE_SEGMENTS)[0]
    record = f.to_dict()
    assert set(FINDING_KEYS) | set(EXTRA_KEYS) == set(record)
    assert record["segment"] == "Americas" and record["fiscal_period"] == "Q3 FY2023"
    assert record["period_end"] == "2023-07-01" and record["printed_unit"] == "USD millions"
    assert Finding.from_dict(record) == f
    old = {k: record[k] for k in FINDING_KEYS}  # a record written before these keys
    back = Finding.from_dict(old)
    assert back.segment is None and back.fiscal_period is None and back.statement is False


# --- a trading symbol names its company ----------------------------------------------------------

COVER = (
    "UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\nWashington, D.C. 20549\nFORM 10-Q\n"
    "Apple Inc.\n(Exact name of Registrant as specified in its charter)\n"
    "Securities registered pursuant to Section 12(b) of the Act:\nTitle of each class\nTrading symbol(s)\n"
    "Name of each exchange on which registered\nCommon Stock, $0.00001 par value per share\nAAPL\n"
    "The Nasdaq Stock Market LLC\nIndicate by check mark whether the Registrant (1) has filed all reports"
)


def test_a_trading_symbol_resolves_to_its_company():
    passages = [
        Passage("APPLE_Q#p0", "APPLE_Q", "", COVER, {"page": 0, "company": "Apple"}),
        Passage("APPLE_Q#p3", "APPLE_Q", "", APPLE_STATEMENT, {"page": 3, "company": "Apple"}),
        Passage("MSFT#p0", "MSFT", "", COVER.replace("AAPL", "MSFT"), {"page": 0, "company": "Microsoft"}),
        Passage("DUP#p0", "DUP", "", COVER.replace("AAPL", "MSFT"), {"page": 0, "company": "Other Co"}),
    ]
    r = DocumentResolver(passages)
    assert r.lookup("AAPL") == r.lookup("aapl") == r.lookup(" AAPL ") == r.lookup("Apple") == "Apple"
    assert r.lookup("MSFT") is None  # two companies' covers give it: it names neither
    assert r.lookup("ZZZZ") is None
    assert DocumentResolver(passages, tickers={}).lookup("AAPL") is None


AMCOR_INCOME = """Amcor plc and Subsidiaries
Consolidated Statements of Income
($ in millions, except per share data)
For the years ended June 30,
2023
2022
2021
Net sales
$
14,694\xa0
$
14,544\xa0
$
12,861\xa0
Equity in income of affiliated companies, net of tax
—\xa0
—\xa0
19\xa0
Net income
$
1,058\xa0
$
815\xa0
$
951\xa0
Net income attributable to non-controlling interests
(10)
(10)
(12)
Net income attributable to Amcor plc
$
1,048\xa0
$
805\xa0
$
939\xa0
Diluted earnings per share
$
0.705\xa0
$
0.529\xa0
$
0.602\xa0
"""


def test_net_income_with_and_without_non_controlling_interests_are_labelled_not_set_against_each_other():
    """Amcor's FY2023 10-K income statement prints "Net income" (1,058, non-controlling interests included) and
    "Net income attributable to Amcor plc" (1,048): the memo gives both, each labelled, joined by "and"; the
    non-controlling interests' own row (10) is no net income. Another pair of net incomes stays "against"."""
    facts = _facts(AMCOR_INCOME, ("net_income",), fy_end=6, doc_type="10k")
    assert {(f.fiscal_period, f.value) for f in facts} == {
        ("FY2023", 1058.0), ("FY2022", 815.0), ("FY2021", 951.0),
        ("FY2023", 1048.0), ("FY2022", 805.0), ("FY2021", 939.0),
    }  # fmt: skip
    body = _memo(facts, "Amcor").markdown.split("## Audit trail")[0]
    assert (
        "net income **1,058** [A1] USD millions (including non-controlling interests) and **1,048** [A2] USD "
        "millions (attributable to shareholders) (FY2023, twelve months ended June 30, 2023)"
    ) in body
    assert (
        "| FY2021, twelve months ended June 30, 2021 | **951** [A5] USD millions (including non-controlling "
        in body
    )
    assert " against " not in body
    plain = [f for f in facts if not f.quote.startswith("Net income attributable")]
    other = [replace(f, value=f.value + 1, surface=f"{f.value + 1:,.0f}", doc_id="E") for f in plain]
    assert " against " in _memo(plain + other, "Amcor").markdown.split("## Audit trail")[0]


# --- a filer that names its fiscal years by the year they start in --------------------------------


def test_periods_of_a_filer_naming_its_years_by_their_start():
    """Foot Locker's year ended January 28, 2023 is its "2022": a period with a day is named so, as the filer's
    own column headers ("2022") already are."""
    cases = [
        ("2023-01-28", "2023-01-28", 12, True, "FY2022, twelve months ended January 28, 2023"),
        ("2022-10-29", "2022-10-29", 3, True, "Q3 FY2022, three months ended October 29, 2022"),
        ("2022-10-29", "2022-10-29", 9, True, "9M FY2022, nine months ended October 29, 2022"),
        ("2023-01-28", "2023-01-28", None, False, "FY2022, as of January 28, 2023"),
        ("FY2022", None, None, True, "FY2022"),  # the filer's own label stays as it is
    ]
    for label, date, months, flow, text in cases:
        name = fiscal_name(label, date, months, 1, flow=flow, named_by="start")
        assert period_phrase(name, date, months, flow=flow) == text
    assert fiscal_name("2023-01-28", "2023-01-28", 12, 1) == "FY2023"  # named by the year's end


@pytest.mark.realdata
def test_foot_lockers_memo_periods_are_its_own(real_data):
    """Foot Locker's 10-K says "Fiscal year 2022 ... represented the 52 weeks ended January 28, 2023" (a notes
    page): its filings' years are named by their start, its Q3 10-Q too (which does not say it: its company's
    10-K does), so the memo names the 10-Q's quarter ended October 29, 2022 Q3 FY2022, as the 10-Q's running
    header ("Third Quarter 2022") does. Walmart's pages name years by their end."""
    import gzip
    import json

    from conftest import require

    from aethel_lite.swarm.calendars import YearEnds

    docs = {
        "FOOTLOCKER_2023_10K": "Foot Locker",
        "FOOTLOCKER_2023Q3_10Q": "Foot Locker",
        "WALMART_2023_10K": "Walmart",
    }
    passages = []
    with gzip.open(require(real_data / "financebench" / "pages.jsonl.gz"), "rt", encoding="utf-8") as fh:
        for line in fh:
            if '"doc_name"' in line[:80] and not any(d in line[:200] for d in docs):
                continue  # another filing's page, known without parsing the line
            row = json.loads(line)
            if row["doc_name"] in docs:
                meta = {"page": row["page"], "company": docs[row["doc_name"]]}
                passages.append(
                    Passage(f"{row['doc_name']}#p{row['page']}", row["doc_name"], "", row["text"], meta)
                )
    assert {p.doc_id for p in passages} == set(docs)
    ends = YearEnds(passages, DocumentResolver(passages, tickers={}))
    assert [ends(d) for d in docs] == [1, 1, 1]
    assert ends.said("FOOTLOCKER_2023_10K") == "start" and ends.said("FOOTLOCKER_2023Q3_10Q") is None
    assert [ends.named_by(d) for d in docs] == ["start", "start", "end"]


FOOT_LOCKER_BALANCE = """2022 Form 10-K Page 34
CONSOLIDATED BALANCE SHEETS
January 28,
January 29,
($ in millions, except share amounts)
2023

2022
ASSETS
Current assets:
Cash and cash equivalents
$
536
$
804
Merchandise inventories

1,643

1,266
"""
#: a table whose rows are labelled by a day (3M's equity by quarter end): rows, not column days
EQUITY_BY_QUARTER = """(Millions)
2016
2015
2014
March 31
11,495
13,673
17,645
June 30
10,428
13,110
17,462
"""


def test_column_days_printed_apart_from_their_years_date_the_columns():
    """Foot Locker's balance sheet heads its columns "January 28," "January 29," then "2023" "2022": each column
    is dated, so its figures are as of that day, named as the filer names the year (its fiscal 2022 ended January
    28, 2023); a table whose rows are labelled by a day keeps them as rows."""
    from aethel_lite.swarm.tables import table_rows

    (cash, inventories) = table_rows(FOOT_LOCKER_BALANCE, annual=True)
    assert cash.dates == ("2023-01-28", "2022-01-29") and inventories.dates == cash.dates
    p = Passage("F#p36", "F", "", FOOT_LOCKER_BALANCE, {"page": 36, "company": "Apple", "doc_type": "10k"})
    resolver = DocumentResolver([p], tickers={})
    view = build_view(p, resolver, fy_end=1, named_by="start")
    facts = RuleExtractor().extract(view, ["cash"], [], resolver=resolver, specialist="t")
    assert {(f.fiscal_period, f.value, f.period_end) for f in facts} == {
        ("FY2022", 536.0, "2023-01-28"),
        ("FY2021", 804.0, "2022-01-29"),
    }
    body = _memo(facts, "Foot Locker").markdown
    assert "FY2022, as of January 28, 2023" in body
    rows = table_rows(EQUITY_BY_QUARTER, annual=True)
    assert [r.label for r in rows] == ["March 31", "June 30"] and rows[0].dates == (None, None, None)
