"""Metadata read from a filing's own pages (:mod:`aethel_lite.data.cover`).

Unit tests use short snippets copied from real FinanceBench cover pages (a few lines each). The
real-data test reads the first three pages of every FinanceBench filing under an opaque id with no
title and scores the reading against FinanceBench's own document-information file, the oracle.

Scoring (:mod:`aethel_lite.studies.docmeta_check`): **company** is right when, after the project's
normalisation (``company_key``) and with a final ``s`` dropped from tokens of four or more letters
on both sides, the token sequence of the name read contains the oracle's company as a contiguous run
or vice versa, or two or more consecutive tokens read, written together, equal the oracle ("Wal-Mart
Stores" = "Walmart"), or the oracle is the initials of the name read ("Advanced Micro Devices" = "AMD");
a former name is wrong ("Square" is not "Block"). **Fiscal year**: the first year key read equals
``doc_period``. **Filing type**: the first type key read equals ``doc_type`` lower-cased, with
``10k_annualreport`` counted as ``10k``.
"""

from __future__ import annotations

import gzip
import json
import re

import pytest
from conftest import require

from aethel_lite.data.cover import (
    STATEMENT_PAGES,
    file_number,
    filing_type,
    fiscal_period,
    fiscal_year_of,
    read_cover,
    registrant,
    repair_spacing,
    statement_year_end,
    trading_symbols,
)
from aethel_lite.data.docmeta import document_metadata
from aethel_lite.data.schema import Passage
from aethel_lite.studies.docmeta_check import (
    company_matches,
    docmeta_accuracy,
    split_half,
    type_of,
)

_SEC = "UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\nWashington, D.C. 20549\n"

# --- registrant -------------------------------------------------------------------------------

MGM = (
    "Commission File No. 001-10362\n \n \nMGM R ESORTS I NTERNATIONAL\n"
    "(Exact name of Registrant as specified in its charter)\n \nDELAWARE\n"
)
AMAZON = (
    "Commission File No. 000-22513\n____________________________________\nAMAZON.COM, INC.\n"
    "(Exact name of registrant as specified in its charter)\nDelaware"
)
AMCOR_8K = (
    "Date of Report (Date of earliest event\nreported): April 26, 2022\n \nAMCOR\nPLC\n(Exact\n"
    "name of registrant as specified in its charter)\n \nJersey\n001-38932"
)
THREE_M = (
    "For the fiscal year ended December 31, 2018\n \nCommission file number 1-3285\n \n3M COMPANY\n"
    "State of Incorporation: Delaware\n"
)
PGE = (
    "Commission\nFile Number\n \nExact Name of Registrant\nas S pecified I n I ts C harter\n \n"
    "State or Other Jurisdiction of\nIncorporation or Organization\n \nIRS Employer\nIdentification Number\n"
    "1-12609\n \nPG&E CORPORATION\n \nCalifornia\n"
)
COCA_COLA = (
    "For the fiscal year ended December 31, 2018\nOR\nCommission File Number 001-02217\n"
    "(Exact name of Registrant as specified in its charter)\nDelaware\n"
)
COCA_COLA_TOC = "are incorporated by reference in Part III.\n\n \nTHE COCA-COLA COMPANY AND SUBSIDIARIES\nTable of Contents\n"
PEPSICO_Q2 = (
    "PepsiCo Reports Second-Quarter 2023 Results; Raises Full-Year \nGuidance\n"
    "PURCHASE, N.Y. - July 13, 2023 - PepsiCo, Inc. (NASDAQ: PEP) today reported results for \n"
    "the second quarter 2023. \nPlease refer to PepsiCo’s Quarterly Report on Form 10-Q for the 12 and 24 "
    "weeks ended June 17, 2023 (Q2 \n2023 Form 10-Q) filed with the Securities and Exchange Commission"
)
INTEL = (
    "Intel Corporation\n2200 Mission College Blvd.\nSanta Clara, CA 95054-1549\n  \nNews Release\n"
    "  Intel Reports Fourth-Quarter and Full-Year 2022 Financial Results\n"
    "SANTA CLARA, Calif., Jan. 26, 2023 -- Intel Corporation today reported fourth-quarter and full-year 2022"
)
MCDONALDS = (
    "Commission File Number 1-5231\nMcDONALD’S\xa0CORPORATION\n"
    "(Exact name of registrant as specified in its charter)\n"
)
AMCOR_RELEASE = (
    "Amcor reports fiscal 2023 results and provides outlook for fiscal 2024\nJune 2023 quarter:\n"
    "GAAP diluted EPS of 12.3 cps; Adjusted EPS of 19.3 cps\n"
)
FEDEX_LETTER = (
    "1\n2023 Annual Report\nCELEBRATING 50 YEARS.  \nDRIVING WHAT’S NEXT.\nTo our FedEx stockholders,\n"
)


def test_repair_spacing_joins_split_capitals_only():
    assert repair_spacing("MGM R ESORTS I NTERNATIONAL") == "MGM RESORTS INTERNATIONAL"
    assert repair_spacing("J P MORGAN") == "J P MORGAN"  # two single letters: ambiguous, kept
    assert repair_spacing("as S pecified I n") == "as S pecified I n"  # mixed case: left alone


@pytest.mark.parametrize(
    "pages, key, how",
    [
        ([_SEC + "FORM 10-K\n" + MGM], "mgm resorts international", "exact name"),
        ([_SEC + "FORM 10-K\n" + AMAZON], "amazon com", "exact name"),  # ".com" kept as a word
        ([_SEC + "FORM 8-K\n" + AMCOR_8K], "amcor", "exact name"),  # "AMCOR" / "PLC" joined
        ([_SEC + "FORM 10-K\n" + THREE_M], "3m company", "file number"),  # no "(Exact name ...)" label
        ([_SEC + "FORM 10-K\n" + PGE], "pg&e", "file number"),  # the label as a table header
        (
            [_SEC + "FORM 10-K\n" + COCA_COLA, "", COCA_COLA_TOC],
            "coca cola company",
            "subsidiaries",
        ),  # logo, no name
        ([_SEC + "FORM 10-K\n" + MCDONALDS], "mcdonald", "exact name"),  # the "’S" is not a split letter
        ([PEPSICO_Q2], "pepsico", "ticker"),
        ([AMCOR_RELEASE], "amcor", "headline"),
        ([INTEL], "intel", "dateline"),
        (["\n2023 Annual Report\n", FEDEX_LETTER], "fedex", "letter"),
    ],
)
def test_registrant_rules(pages, key, how):
    assert registrant(pages) == (key, how)


LOGO_COVER = (  # a cover whose registrant name is an image: nothing above the label
    "FORM 10-Q\nCommission File Number: 1-10299\n(Exact name of registrant as specified in its charter)\n"
    "New York\n13-3513936\n(State or other jurisdiction of incorporation or organization)\n"
)


@pytest.mark.parametrize(
    "statements, key, how",
    [
        (["CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS\nNet income attributable to Foot Locker, Inc.\n$\n96"],
         "foot locker", "attributable"),
        (["Item 1. Business\nGeneral\nFoot Locker, Inc., incorporated under the laws of the State of New York"],
         "foot locker", "incorporated"),
        (["in these Notes, the terms “Foot Locker,” “Company,” “we,” and “us” refer to Foot Locker, Inc."],
         "foot locker", "defined term"),
        (["Net income attributable to noncontrolling interests\n1\nNet income attributable to the Company"],
         None, None),  # no name: nothing
        ([], None, None),
    ],
)  # fmt: skip
def test_registrant_from_the_pages_after_a_cover_without_a_name(statements, key, how):
    assert registrant([_SEC + LOGO_COVER], statements) == (key, how)
    assert (
        registrant([_SEC + "FORM 10-K\n" + MGM], statements)[0] == "mgm resorts international"
    )  # the cover first


def test_empty_name_slot_is_not_the_file_number_or_the_state():
    assert registrant([_SEC + "FORM 10-K\n" + COCA_COLA]) == (None, None)


# --- filing type ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pages, form",
    [
        ([_SEC + "FORM 10-K\n" + MGM], "10k"),
        ([_SEC + "FORM 8-K\n" + AMCOR_8K], "8k"),
        ([_SEC + "FORM   10-Q\n(Mark One)\n"], "10q"),
        ([PEPSICO_Q2], "earnings"),  # "Form 10-Q" in the body is a reference, not the heading
        ([INTEL], "earnings"),
        (["\n2023 Annual Report\n", FEDEX_LETTER], "10k"),
        (["Dear partners, a fine quarter."], None),
    ],
)
def test_filing_type(pages, form):
    assert filing_type(pages)[0] == form


# --- fiscal year ------------------------------------------------------------------------------


def test_fiscal_year_is_named_by_the_calendar_year_it_ends_in():
    assert fiscal_year_of(12, 31, 2022, 6) == (
        2023,
        2,
    )  # June year end: quarter ended Dec 31, 2022 = FY2023 Q2
    assert fiscal_year_of(1, 1, 2023) == (2022, 4)  # 52/53-week year ended January 1, 2023 = FY2022
    assert fiscal_year_of(7, 1, 2023, 9) == (2023, 3)  # July 1 closes June: Q3 of a September year
    assert fiscal_year_of(4, 30, 2023, 1) == (2024, 1)  # January year end: first quarter of FY2024
    assert fiscal_year_of(9, 30, 2022) == (2022, 3)  # December year end (the default)


def test_fiscal_year_end_from_the_balance_sheet_of_a_10q():
    salesforce = [
        _SEC + "FORM 10-Q\n(Mark One)\nQuarterly report pursuant to Section 13 or 15(d) of the Securities "
        "Exchange Act of 1934\nFor the quarterly period ended October 31, 2022\nOR\n",
        (
            "Table of Contents\nINDEX\nItem 1.\nFinancial Statements:\nCondensed Consolidated Balance Sheets as of "
            "October 31, 2022 and January 31, 2022\n3\n"
        ),
    ]
    assert fiscal_period(salesforce, "10q")[:3] == (2023, 3, 1)
    assert fiscal_period(salesforce[:1], "10q")[:3] == (2022, 4, None)  # without the balance sheet: December


# the layouts of real quarterly balance sheets (Apple, Walmart, Amcor), their cover's quarter first
_QUARTERLY = [
    (
        "For the quarterly period ended July 1, 2023",
        "Apple Inc.\nCONDENSED CONSOLIDATED BALANCE SHEETS (Unaudited)\n(In millions, except number of "
        "shares)\nJuly 1,\n2023\nSeptember 24,\n2022\nASSETS:\nCurrent assets:\nCash\n$\n28,408\n",
        (2023, 3, 9),
    ),
    (
        "For the quarterly period ended April 30, 2023.",
        "Walmart Inc.\nCondensed Consolidated Balance Sheets\n(Unaudited)\nApril 30,\nJanuary 31,\nApril 30,\n"
        "(Amounts in millions)\n2023\n2023\n2022\nASSETS\nCurrent assets:\n",
        (2024, 1, 1),
    ),
    (
        "For the Quarterly Period Ended December 31, 2022",
        "Amcor plc and Subsidiaries\nCondensed Consolidated Balance Sheets\n(Unaudited)\n($ in millions)\n"
        "December 31, 2022\nJune 30, 2022\nAssets\nCurrent assets:\n",
        (2023, 2, 6),
    ),
]


@pytest.mark.parametrize("cover, sheet, expected", _QUARTERLY)
def test_fiscal_year_end_from_the_balance_sheet_columns_of_a_10q(cover, sheet, expected):
    pages = [_SEC + "FORM 10-Q\n" + cover + "\nOR\n", "Table of Contents\nBalance Sheets\n5\n", "Item 1.\n"]
    assert fiscal_period(pages, "10q", [sheet])[:3] == expected
    assert read_cover(pages, statements=["Notes\n", sheet]).fiscal_year_end == expected[2]
    assert fiscal_period(pages, "10q")[2] is None  # the first pages alone do not say: December
    assert fiscal_period(pages, "10k", [sheet])[2] is None  # read for a quarterly report only


def test_file_number_of_a_cover():
    assert file_number([_SEC + "FORM 10-K\nCommission File Number 001-06991\nWALMART INC.\n"]) == "1-6991"
    pge = _SEC + "FORM 10-Q\nCommission\nFile\nNumber\nExact Name of\nRegistrant\n1-12609\nPG&E Corporation\n"
    assert file_number([pge]) == "1-12609"
    assert file_number([_SEC + "FORM 10-K\nWALMART INC.\n(Exact name of registrant)\n"]) is None


def test_a_contents_line_is_not_a_balance_sheet():
    contents = "Condensed Consolidated Balance Sheets\n5\nCondensed Statements of Cash Flows\nJune 30, 2022\n"
    assert statement_year_end([contents], (12, 31, 2022)) is None


def test_fiscal_year_of_annual_and_8k_covers():
    jnj = _SEC + "FORM 10-K\nFor the fiscal year ended January 1, 2023\nor\n"
    nike = _SEC + "FORM 10-K \n(Mark One)\nFOR THE FISCAL YEAR ENDED MAY 31, 2023 \nOR\n"
    assert fiscal_period([jnj], "10k")[:3] == (2022, None, 12)
    assert fiscal_period([nike], "10k")[:3] == (2023, None, 5)
    assert fiscal_period([_SEC + "FORM 8-K\n" + AMCOR_8K], "8k")[0] == 2022


def test_fiscal_year_of_a_release():
    bestbuy = (
        "Best Buy Reports Fourth Quarter Results \nExpects FY24 Non-GAAP Diluted EPS of $5.70 to $6.50 \n"
        "MINNEAPOLIS, March 2, 2023 -- Best Buy Co., Inc. (NYSE: BBY) today announced results for the 13-week fourth \n"
        "quarter ended January 28, 2023 (“Q4 FY23”), as compared to the 13-week fourth quarter ended January 29, 2022"
    )
    assert fiscal_period([bestbuy], "earnings")[:2] == (2023, 4)  # the quarter's FY23, not the outlook's FY24
    assert fiscal_period([PEPSICO_Q2], "earnings")[:2] == (2023, 2)
    assert fiscal_period([INTEL], "earnings")[:2] == (2022, 4)
    assert fiscal_period([AMCOR_RELEASE], "earnings")[0] == 2023  # the results' year, not the outlook's


def test_document_metadata_reads_the_first_three_pages_without_loader_metadata():
    nike = [
        "FORM 10-K\nFORM 10-K\n",
        _SEC + "FORM 10-K \nFOR THE FISCAL YEAR ENDED MAY 31, 2023 \nOR\n"
        "Commission File No. 1-10635 \nNIKE, Inc. \n(Exact name of Registrant as specified in its charter)\n",
    ]
    ps = [Passage(f"x#p{k}", "x", "", text, {"page": k}) for k, text in enumerate(nike)]
    ps.append(Passage("x#p3", "x", "", "FORM 8-K\n", {"page": 3}))  # a fourth page is never read
    d = document_metadata(ps)["x"]
    assert (d.companies, d.periods, d.types) == (["nike"], ["2023"], ["10k"])
    assert d.source == {"company": "cover", "period": "cover", "type": "cover"}


def test_scoring_rules():
    assert company_matches("jpmorgan chase", "JPMorgan") and company_matches("mcdonald", "McDonalds")
    assert company_matches("advanced micro devices", "AMD") and company_matches("pg&e", "PG&E Corporation")
    assert company_matches("wal mart stores", "Walmart") and not company_matches("wal", "Walmart")
    assert not company_matches("square", "Block") and not company_matches(None, "3M")
    assert not company_matches("american water works", "American Express")
    assert type_of("10k_annualreport") == "10k" and type_of("Earnings") == "earnings"
    assert {split_half(n) for n in ("3M_2018_10K", "AMCOR_2023Q2_10Q", "PEPSICO_2022Q4_EARNINGS")} <= {0, 1}


def test_cover_reading_of_a_whole_release():
    c = read_cover([PEPSICO_Q2])
    assert (c.company, c.fiscal_year, c.quarter, c.form) == ("pepsico", 2023, 2, "earnings")


# --- real data --------------------------------------------------------------------------------


@pytest.mark.realdata
def test_a_renamed_registrants_filings_carry_both_names(real_data):
    """Square, Inc.'s 10-Ks (2015-2020) and Block, Inc.'s (2021) give one commission file number: all
    carry both names, so a question naming Block links to the filings made as Square (no loader
    metadata: the covers alone)."""
    wanted = {f"BLOCK_{y}_10K" for y in range(2015, 2022)} | {"WALMART_2016_10K", "WALMART_2020_10K"}
    ps = []
    with gzip.open(require(real_data / "financebench" / "pages.jsonl.gz"), "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row["doc_name"] in wanted and row["page"] < 3 + STATEMENT_PAGES:
                ps.append(
                    Passage(
                        f"{row['doc_name']}#{row['page']}",
                        row["doc_name"],
                        "",
                        row["text"],
                        {"page": row["page"]},
                    )
                )
    metas = document_metadata(ps)
    assert set(metas) == wanted
    assert {d: m.companies for d, m in metas.items() if d.startswith("BLOCK")} == {
        d: (["block", "square"] if d == "BLOCK_2021_10K" else ["square", "block"])
        for d in wanted
        if d.startswith("BLOCK")
    }
    assert metas["WALMART_2016_10K"].companies == ["wal mart stores", "walmart"]
    assert metas["WALMART_2020_10K"].companies == ["walmart", "wal mart stores"]


@pytest.mark.realdata
def test_page_reader_against_financebench_document_information(real_data):
    fb = real_data / "financebench"
    info = [json.loads(line) for line in require(fb / "financebench_document_information.jsonl").open()]
    pages: dict[str, dict[int, str]] = {}
    with gzip.open(require(fb / "pages.jsonl.gz"), "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row["page"] < 3 + STATEMENT_PAGES:
                pages.setdefault(row["doc_name"], {})[row["page"]] = row["text"]
    pages_by_doc = {d: [p[k] for k in sorted(p)] for d, p in pages.items()}
    report = docmeta_accuracy(pages_by_doc, info)
    assert report["n"] == sum(r["doc_name"] in pages_by_doc for r in info) > 300
    halves = {h: docmeta_accuracy(pages_by_doc, info, half=h)["accuracy"] for h in (0, 1)}
    print("\npage reader vs FinanceBench document information:", report["n"], "filings")
    print("  all      ", {k: round(v, 3) for k, v in report["accuracy"].items()})
    for h, acc in halves.items():
        print(f"  half {h}   ", {k: round(v, 3) for k, v in acc.items()})
    for t, row in report["by_type"].items():
        print(f"  {t:9s}", row["n"], {k: round(v, 3) for k, v in row.items() if k != "n"})
    for end, types in report["by_year_end"].items():  # non-calendar filers reported apart
        for t, row in types.items():
            print(f"  {end:12s} {t:9s}", row["n"], {k: round(v, 3) for k, v in row.items() if k != "n"})
    ends = report["by_year_end"]
    assert sum(ends[e]["all"]["n"] for e in ends) == report["n"] and ends["non-calendar"]["all"]["n"] > 0
    for f in report["failures"]:
        print("  miss", f)
    for field, acc in report["accuracy"].items():
        assert acc >= 0.95, (field, acc)
    assert report["by_type"]["10q"]["fiscal_year"] >= 0.95  # the fiscal year of quarterly reports too
    # a 10-Q's fiscal quarter never contradicts its name (APPLE_2023Q3_10Q: the quarter ended July 1, 2023)
    quarters = {}
    for r in info:
        name, m = r["doc_name"], re.search(r"_\d{4}Q([1-4])_10Q$", r["doc_name"])
        if m and name in pages_by_doc:
            ps = pages_by_doc[name]
            quarters[name] = (read_cover(ps[:3], statements=ps[3:]).quarter, int(m.group(1)))
    print("  10-Q quarters read", {n: q[0] for n, q in quarters.items()})
    assert {n: q for n, q in quarters.items() if q[0] is not None and q[0] != q[1]} == {}
    assert sum(q[0] == q[1] for q in quarters.values()) >= 17 and len(quarters) == 26
    # Foot Locker's covers print its name as an image: its income statement or business section names it
    for name in ("FOOTLOCKER_2022_10K", "FOOTLOCKER_2023_10K", "FOOTLOCKER_2023Q3_10Q"):
        ps = pages_by_doc[name]
        assert read_cover(ps[:3], statements=ps[3:]).company == "foot locker", name


# --- trading symbols --------------------------------------------------------------------------

APPLE_SYMBOLS = (
    "Securities registered pursuant to Section 12(b) of the Act:\nTitle of each class\nTrading symbol(s)\n"
    "Name of each exchange on which registered\nCommon Stock, $0.00001 par value per share\nAAPL\n"
    "The Nasdaq Stock Market LLC\n1.375% Notes due 2024\n—\nThe Nasdaq Stock Market LLC\n"
    "Indicate by check mark whether the Registrant (1) has filed all reports"
)
THREE_M_SYMBOLS = (
    "Securities registered pursuant to Section 12(b) of the Act:\nTitle of each class\n    \n"
    "Trading Symbol(s)\n    \nName of each exchange on which registered\n"
    "Common Stock, Par Value $.01 Per Share\nMMM\nNew York Stock Exchange, Inc.\nMMM\n"
    "Chicago Stock Exchange, Inc.\n1.500% Notes due 2026\nMMM26\nNew York Stock Exchange, Inc.\n"
    "0.375% Notes due 2022\nMMM22A\nNew York Stock Exchange, Inc.\n"
    "Securities registered pursuant to section 12(g) of the Act: None"
)
BOEING_SYMBOLS = (  # the cells above their column labels
    "Securities registered pursuant to Section 12(b) of the Act:\nCommon Stock, $5.00 Par Value\nBA\n"
    "New York Stock Exchange\n(Title of each class)\n(Trading Symbol)\n(Name of each exchange on which registered)\n"
    "Securities registered pursuant to Section 12(g) of the Act: None\n"
)
ADOBE_SYMBOLS = (
    "Title of Each Class\nTrading Symbol\nName of Each Exchange on Which Registered\n"
    "Common Stock, $0.0001 par value per share\nADBE\nNASDAQ\nSecurities registered pursuant to Section 12(g) "
    "of the Act: None"
)
ONE_LINE_SYMBOLS = (  # a table whose cells share a line, two spaces or more apart
    "Title of each class    Trading Symbol(s)    Name of each exchange on which registered\n"
    "Common Stock, par value $0.01    XYZ    New York Stock Exchange\nIndicate by check mark"
)


@pytest.mark.parametrize(
    "pages, symbols",
    [
        ([_SEC + APPLE_SYMBOLS], ["AAPL"]),
        ([_SEC + THREE_M_SYMBOLS], ["MMM", "MMM26", "MMM22A"]),
        ([_SEC + BOEING_SYMBOLS], ["BA"]),
        ([_SEC + ADOBE_SYMBOLS], ["ADBE"]),
        ([_SEC + ONE_LINE_SYMBOLS], ["XYZ"]),
        (["cover without a table", _SEC + APPLE_SYMBOLS], ["AAPL"]),  # on the second page
        ([PEPSICO_Q2], ["PEP"]),  # a release: "(NASDAQ: PEP)"
        ([_SEC + COCA_COLA], []),  # a cover from before the symbols column (2019)
        ([INTEL], []),
        ([], []),
    ],
)
def test_trading_symbols(pages, symbols):
    assert trading_symbols(pages) == symbols


#: the common stock's symbol of every FinanceBench company whose covers print a symbols table (public record)
TICKERS = {
    "3M": "MMM", "Activision Blizzard": "ATVI", "Adobe": "ADBE", "AES Corporation": "AES", "Amazon": "AMZN",
    "Amcor": "AMCR", "AMD": "AMD", "American Express": "AXP", "American Water Works": "AWK", "Apple": "AAPL",
    "Best Buy": "BBY", "Block": "SQ", "Boeing": "BA", "Coca-Cola": "KO", "Corning": "GLW", "Costco": "COST",
    "CVS Health": "CVS", "eBay": "EBAY", "FedEx": "FDX", "Foot Locker": "FL", "General Mills": "GIS",
    "Intel": "INTC", "Johnson & Johnson": "JNJ", "JPMorgan": "JPM", "Kraft Heinz": "KHC",
    "Lockheed Martin": "LMT", "McDonalds": "MCD", "MGM Resorts": "MGM", "Microsoft": "MSFT", "Netflix": "NFLX",
    "Nike": "NKE", "Oracle": "ORCL", "Paypal": "PYPL", "PepsiCo": "PEP", "Pfizer": "PFE", "PG&E Corporation": "PCG",
    "Salesforce": "CRM", "Ulta Beauty": "ULTA", "Verizon": "VZ", "Walmart": "WMT",
}  # fmt: skip


@pytest.mark.realdata
def test_trading_symbols_of_every_financebench_cover(real_data):
    """Every FinanceBench filing whose first three pages print a "Trading Symbol(s)" table gives its
    company's common-stock symbol first (the company from FinanceBench's document information, the
    symbol from the public record); no filing gives another company's symbol."""
    fb = real_data / "financebench"
    company = {
        r["doc_name"]: r["company"]
        for r in map(json.loads, require(fb / "financebench_document_information.jsonl").open())
    }
    pages: dict[str, dict[int, str]] = {}
    with gzip.open(require(fb / "pages.jsonl.gz"), "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row["page"] < 3:
                pages.setdefault(row["doc_name"], {})[row["page"]] = row["text"]
    read, tables = {}, 0
    for doc, by_page in pages.items():
        texts = [by_page[k] for k in sorted(by_page)]
        tables += any(re.search(r"trading\s+symbol", t, re.I) for t in texts)
        symbols = trading_symbols(texts)
        if symbols and doc in company:
            read[doc] = symbols
    assert tables > 150 and len(read) >= tables
    wrong = {d: s[0] for d, s in read.items() if s[0] != TICKERS[company[d]]}
    assert wrong == {}
    others = {t for c, t in TICKERS.items()}
    assert {d: s for d, s in read.items() if set(s) & (others - {TICKERS[company[d]]})} == {}
