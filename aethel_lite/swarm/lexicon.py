r"""What the specialists look for: metrics (figures with a unit and a period) and risk topics (sentences).

The fund metrics cover the synthetic corpus's six quarterly series (:data:`FUND_METRICS`); the
statement metrics the line items FinanceBench asks about most.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import ParameterError

__all__ = ["Metric", "Topic", "METRICS", "TOPICS", "FUND_METRICS", "MONEY", "NET_INCOME_ROW", "clean_label"]

MONEY = ("USD m", "EUR m", "GBP m")


@dataclass(frozen=True)
class Metric:
    """A measurable item of a mandate.

    Attributes
    ----------
    key : str
        Identifier used in findings (``"net_irr"``).
    label : str
        Display name ("net IRR").
    units : tuple of str
        Units a figure must have to count (see :mod:`aethel_lite.swarm.values`).
    phrase : str or None
        Case-insensitive pattern of the metric in prose; ``None``: tables only.
    table : str or None
        Case-insensitive pattern a whole table-row label must match (:func:`clean_label`).
    query : str
        Words added to the target's name in this metric's retrieval query.
    subject : tuple of str
        Entity kinds a figure may be about (``("fund",)``); empty: any.
    exclude : str or None
        Pattern just before the phrase marking its figure as not the subject's ("Limited partner unfunded commitment").
    not_on : str or None
        Pattern of pages whose table rows are not this metric (a cash-flow statement's changes).
    absolute : bool
        Report the amount unsigned (an outflow prints "(1,577)" in a cash-flow statement, "$1.6 billion" in prose).
    flow : bool
        An amount over a period (revenue, net income, capital expenditure): its findings carry the
        period's length where the text states it ("Three Months Ended"). A balance or a ratio at a
        date (``False``) has no length.
    per_share : bool
        An amount per share ("USD per share"): only a row whose label or caption says "per share" is
        this metric (a "Diluted" row under "Weighted-average shares outstanding:" is a share count).
    """

    key: str
    label: str
    units: tuple[str, ...]
    phrase: str | None
    table: str | None = None
    query: str = ""
    subject: tuple[str, ...] = ()
    exclude: str | None = None
    not_on: str | None = None
    absolute: bool = False
    flow: bool = False
    per_share: bool = False
    phrase_re: re.Pattern | None = field(init=False, repr=False, compare=False)
    table_re: re.Pattern | None = field(init=False, repr=False, compare=False)
    exclude_re: re.Pattern | None = field(init=False, repr=False, compare=False)
    not_on_re: re.Pattern | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.units:
            raise ParameterError(f"metric {self.key!r}: needs at least one unit")
        if self.phrase is None and self.table is None:
            raise ParameterError(f"metric {self.key!r}: needs a phrase or a table pattern")
        patterns = {
            "phrase_re": self.phrase,
            "table_re": self.table,
            "exclude_re": self.exclude and r"(?:" + self.exclude + r")\W*$",
            "not_on_re": self.not_on,
        }
        try:
            for name, pattern in patterns.items():
                object.__setattr__(self, name, re.compile(pattern, re.IGNORECASE) if pattern else None)
        except re.error as exc:
            raise ParameterError(f"metric {self.key!r}: bad pattern ({exc})") from None

    def on_topic(self, text: str) -> bool:
        """Whether a passage mentions the metric at all (phrase or table pattern anywhere): the evidence gate."""
        return any(rx is not None and rx.search(text) is not None for rx in (self.phrase_re, self.table_re))


@dataclass(frozen=True)
class Topic:
    """A risk topic: sentences matching ``pattern`` are quoted as findings (no figure)."""

    key: str
    label: str
    pattern: str
    query: str = ""
    pattern_re: re.Pattern | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "pattern_re", re.compile(self.pattern, re.IGNORECASE))
        except re.error as exc:
            raise ParameterError(f"topic {self.key!r}: bad pattern ({exc})") from None

    def on_topic(self, text: str) -> bool:
        """Whether a passage mentions the topic at all (the evidence gate)."""
        return bool(self.pattern_re.search(text))


def clean_label(line: str) -> str:
    """A table-row label as the ``table`` patterns see it: footnote marks, dashes, colons and extra space removed."""
    s = line.replace("\u2014", "-").replace("\u2013", "-").replace("\xa0", " ")
    return re.sub(r"\s+", " ", re.sub(r"\(\d\)|\[\d\]|\*+", " ", s)).strip(" :.$")


_PPE = r"property,? plant,? (?:and|&) equipment(?: \(pp&e\))?"
_CASH_FLOW_PAGE = r"cash flows? (?:from|provided by|used in) operating activities|changes in (?:operating )?assets and liabilities"
#: a net income row's label: "Net income", "Net earnings (loss)", "Net income attributable to Apple Inc." (not
#: to non-controlling interests)
_NET_INCOME = (
    r"net (?:income|earnings)(?: \(loss\))?(?: attributable to (?!non-?controlling)[a-z0-9 .,&'’-]+)?"
)
NET_INCOME_ROW = re.compile(_NET_INCOME, re.IGNORECASE)
#: what a per-share row is of: "net income", "earnings (loss)", "income from continuing operations attributable to X"
_EPS_OF = (
    r"(?:net )?(?:income|earnings|loss|\(loss\) (?:income|earnings)|(?:income|earnings) \(loss\))"
    r"(?: from continuing operations)?(?: attributable to [a-z0-9 .,&'’-]+?)?"
)
_PER = r"per (?:common |ordinary )?share"
_FUND = ("fund",)
_M = Metric
METRICS: dict[str, Metric] = {
    m.key: m
    for m in (
        # -- fund metrics (the synthetic corpus's quarterly series) --------------------------------
        _M(
            "nav",
            "net asset value",
            MONEY,
            r"net asset value(?: \(NAV\))?|\bNAV\b",
            None,
            "net asset value NAV",
            _FUND,
        ),
        _M(
            "tvpi",
            "TVPI",
            ("x",),
            r"\bTVPI\b|total value to paid-in(?: capital)?(?: multiple)?",
            None,
            "TVPI total value to paid-in multiple",
            _FUND,
        ),
        _M(
            "dpi",
            "DPI",
            ("x",),
            r"\bDPI\b|distributions? to paid-in(?: capital)?(?: multiple)?|distributed-to-paid-in",
            None,
            "DPI distributions to paid-in capital multiple",
            _FUND,
        ),
        _M(
            "net_irr",
            "net IRR",
            ("%",),
            r"net IRR|net internal rate of return|IRR net of fees",
            None,
            "net IRR internal rate of return",
            _FUND,
        ),
        _M(
            "unfunded_commitment",
            "unfunded commitment",
            MONEY,
            r"unfunded (?:capital )?commitments?|uncalled capital(?: commitments?)?|dry powder",
            None,
            "unfunded commitment uncalled capital",
            _FUND,
            exclude=r"limited partner|\bLP|investor",
        ),
        _M(
            "credit_facility_balance",
            "credit-facility balance",
            MONEY,
            r"subscription (?:line|facility)(?: balance)?|credit facility balance|balance drawn on the capital call facility"
            r"|capital call (?:line|facility)(?: borrowings)?",
            None,
            "subscription line credit facility balance",
            _FUND,
        ),
        _M(
            "capital_calls",
            "capital called",
            MONEY,
            r"\bcalled\b|capital calls? (?:of|totall?ing)",
            None,
            "capital called from limited partners",
            _FUND,
            flow=True,
        ),
        _M(
            "price_to_nav",
            "price (share of NAV)",
            ("%",),
            r"of (?:reported |the )?(?:net asset value|NAV)\b",
            None,
            "secondary tender price of net asset value",
            _FUND,
        ),
        # -- statement line items (FinanceBench filings) --------------------------------------------
        _M(
            "capex",
            "capital expenditure",
            MONEY,
            r"capital expenditures?|capital spending|purchases? of "
            + _PPE
            + r"|additions to "
            + _PPE
            + r"|\bcapex\b",
            r"(?:purchases? of|additions to|payments? for(?: acquisitions? of)?|capital expenditures?(?: for)?|acquisitions? of) "
            + _PPE
            + r"(?: and (?:other|intangible) assets)?|capital expenditures?|capital spending",
            "capital expenditure purchases of property plant and equipment",
            absolute=True,
            flow=True,
        ),
        _M(
            "cash",
            "cash and cash equivalents",
            MONEY,
            r"cash and cash equivalents (?:of|were|was|totall?ed)\b",
            r"(?:total )?cash and (?:cash )?equivalents(?:,? (?:at )?end of (?:the )?(?:period|year))?",
            "cash and cash equivalents",
        ),
        _M(
            "long_term_debt",
            "long-term debt",
            MONEY,
            r"long-term debt (?:of|was|were|totall?ed)\b",
            r"long-term debt(?:,? (?:net|excluding current (?:portion|maturities)|less current (?:portion|maturities)"
            r"|due after one year|noncurrent))?(?: of current portion)?",
            "long-term debt borrowings",
        ),
        _M(
            "short_term_debt",
            "short-term debt",
            MONEY,
            None,
            r"short-term (?:debt|borrowings)(?: and current (?:portion|maturities) of long-term debt)?"
            r"|current (?:portion|maturities) of long-term debt",
            "short-term borrowings current portion of long-term debt",
        ),
        _M(
            "total_debt",
            "total debt",
            MONEY,
            r"total debt (?:of|was|were|totall?ed)\b",
            r"total (?:debt|borrowings)",
            "total debt",
        ),
        _M(
            "dividends",
            "dividends paid",
            MONEY,
            r"(?:cash )?dividends (?:paid|declared)(?: to (?:share|stock)holders)?(?= (?:of|totall?ing|were|was)\b)",
            r"(?:cash )?dividends paid(?: to (?:share|stock)holders| on common stock)?|dividends to (?:share|stock)holders"
            r"|(?:common stock )?cash dividends(?: paid)?|payments? of (?:cash )?dividends",
            "dividends paid to shareholders",
            absolute=True,
            flow=True,
        ),
        _M(
            "operating_cash_flow",
            "operating cash flow",
            MONEY,
            None,
            r"net cash (?:provided by|from|(?:provided by )?\(used (?:in|for)\)|provided by \(used in\)) operating activities"
            r"(?: of continuing operations)?",
            "net cash provided by operating activities",
            flow=True,
        ),
        _M(
            "revenue",
            "revenue",
            MONEY,
            None,
            r"(?:total )?(?:net )?(?:revenues?|sales|net sales|operating revenues?)",
            "total revenue net sales",
            flow=True,
        ),
        _M(
            "cogs",
            "cost of goods sold",
            MONEY,
            None,
            r"(?:total )?cost of (?:goods sold|sales|products sold|revenues?)(?: \(exclusive of [a-z ,]+\))?",
            "cost of sales",
            flow=True,
        ),
        _M(
            "net_income",
            "net income",
            MONEY,
            None,
            _NET_INCOME,
            "net income",
            flow=True,
        ),
        _M(
            "diluted_eps",
            "diluted earnings per share",
            ("USD per share",),
            None,
            rf"diluted(?: {_EPS_OF})?(?: {_PER})?(?: attributable to [a-z0-9 .,&'’-]+)?"
            rf"|{_EPS_OF}(?: {_PER})?(?: attributable to [a-z0-9 .,&'’-]+?)?,?\W*(?:- )?diluted",
            "diluted earnings per share",
            flow=True,
            per_share=True,
        ),
        _M(
            "ppe_net",
            "net property, plant and equipment",
            MONEY,
            None,
            r"(?:total )?net property,? plant,? (?:and|&) equipment"
            r"|property,? plant,? (?:and|&) equipment(?:,? net| - net|,? less accumulated depreciation)"
            r"|net property and equipment|property and equipment,? net",
            "net property plant and equipment",
            not_on=_CASH_FLOW_PAGE,
        ),
        _M(
            "total_assets",
            "total assets",
            MONEY,
            None,
            r"total assets",
            "total assets",
            not_on=_CASH_FLOW_PAGE,
        ),
        _M(
            "current_assets",
            "total current assets",
            MONEY,
            None,
            r"total current assets",
            "total current assets",
            not_on=_CASH_FLOW_PAGE,
        ),
        _M(
            "current_liabilities",
            "total current liabilities",
            MONEY,
            None,
            r"total current liabilities",
            "total current liabilities",
            not_on=_CASH_FLOW_PAGE,
        ),
        _M(
            "accounts_receivable",
            "accounts receivable",
            MONEY,
            None,
            r"(?:trade )?(?:accounts|trade) receivables?(?:,? net| - net)?(?: of allowances?.*)?",
            "accounts receivable",
            not_on=_CASH_FLOW_PAGE,
        ),
        _M(
            "accounts_payable",
            "accounts payable",
            MONEY,
            None,
            r"(?:trade )?accounts payable(?: and accrued [a-z ]+)?",
            "accounts payable",
            not_on=_CASH_FLOW_PAGE,
        ),
        _M(
            "inventories",
            "inventories",
            MONEY,
            None,
            r"(?:total )?(?:merchandise )?inventor(?:y|ies)(?:,? net)?",
            "inventories",
            not_on=_CASH_FLOW_PAGE,
        ),
    )
}

#: the synthetic generator's six quarterly fund series (what the chapter scores)
FUND_METRICS = ("nav", "tvpi", "dpi", "net_irr", "unfunded_commitment", "credit_facility_balance")

_T = Topic
TOPICS: dict[str, Topic] = {
    t.key: t
    for t in (
        _T(
            "write_downs",
            "write-downs and impairments",
            r"write-?downs?|written down|impairments?\b|mark(?:ed)?[- ]?downs?",
            "write-down impairment markdown",
        ),
        _T(
            "valuation_basis",
            "valuation basis and dates",
            r"valuation (?:policy|methodology|firm|date)|independent (?:third-party )?valuation|fair value hierarchy|level 3",
            "valuation policy methodology independent valuation",
        ),
        _T(
            "multiples",
            "multiples",
            r"entry multiples?|valuation multiples?|EBITDA multiples?|multiple of EBITDA",
            "entry valuation multiples EBITDA",
        ),
        _T(
            "key_persons",
            "key persons",
            r"key[- ]person|chief (?:executive|financial|operating|investment) officer|\bCEO\b|\bCFO\b"
            r"|managing partner|investment team|stepped down|resign(?:ed|ation)|departure",
            "key person chief executive officer investment team departure",
        ),
        _T(
            "gp_changes",
            "GP changes and GP-led transactions",
            r"general partner (?:change|removal|replacement)|change of control|GP-led"
            r"|consent to the transfer|removal of the general partner",
            "general partner change GP-led continuation vehicle",
        ),
        _T(
            "concentration",
            "concentration",
            r"concentrat(?:ion|ed)|largest (?:holding|investment|position|customer)"
            r"|single (?:asset|investment|customer)",
            "concentration largest holding single asset",
        ),
        _T(
            "litigation",
            "litigation",
            r"litigation|lawsuits?|legal proceedings|subpoena|class action|\bsued\b",
            "litigation lawsuit legal proceedings",
        ),
        _T(
            "related_parties",
            "related parties and conflicts",
            r"related[- ]part(?:y|ies)|affiliated? transactions?"
            r"|conflicts? of interest|conflict waiver|co-investment",
            "related party conflict of interest co-investment",
        ),
    )
}
