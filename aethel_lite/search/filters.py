"""``aethel search``'s filters: the documents of an index by company, fiscal year, quarter, filing type or id.

What a document is comes from its :class:`~aethel_lite.data.docmeta.DocMeta` (``docmeta.json``: what its cover and
first page say). A company is named as the hybrid links one in a question: its normalised key, else
:func:`~aethel_lite.data.docmeta.match_companies` over the index's names (so "Apple", "Apple Inc." and a name the
filing gives as former all work), else as a trading symbol: the documents whose cover registers it
(:func:`cover_tickers`, read from the first pages when a name matches nothing: the index records no symbol) and
every document of their companies. A fiscal year or quarter is named as the filer names it: a filer naming its
years by the calendar year they start in (Foot Locker's "2022" ends January 28, 2023) is asked ``--year 2022``
for that year, which the index counts as 2023 (:func:`~aethel_lite.data.fiscal.filer_key`). A document whose field
is unknown matches no filter on that field. Several filters select the documents that match them all.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields

from ..data.cover import trading_symbols
from ..data.docmeta import CompanyIndex, DocMeta, company_key
from ..data.fiscal import filer_key
from ..errors import ParameterError

__all__ = ["Filters", "FORMS", "select_documents", "cover_tickers"]

#: filing-type keys (:func:`aethel_lite.data.docmeta.type_keys`) and how ``--form`` and messages write them
FORMS = {"10k": "10-K", "10q": "10-Q", "8k": "8-K", "20f": "20-F", "earnings": "earnings"}
_ANNUAL_FORMS = ("10k", "20f")
_YEAR = re.compile(r"(?:fy|fiscal\s*(?:year)?)?\s*'?((?:19|20)?\d\d)", re.I)
_QUARTER = [  # (pattern, group of the quarter, group of the year or None)
    (re.compile(r"q([1-4])", re.I), 1, None),
    (re.compile(r"((?:19|20)\d\d)\s*[-/ ]?\s*q([1-4])", re.I), 2, 1),  # 2023q3, 2023-Q3
    (re.compile(r"q([1-4])\s*[-/ ]?\s*(?:fy)?\s*'?((?:19|20)?\d\d)", re.I), 1, 2),  # Q3 2023, Q3FY23, Q3'23
    (re.compile(r"([1-4])q\s*(?:fy)?\s*'?((?:19|20)?\d\d)", re.I), 1, 2),  # 3Q23, 3QFY2023
    (re.compile(r"fy\s*'?((?:19|20)?\d\d)\s*[-/ ]?\s*q([1-4])", re.I), 2, 1),  # FY23Q3
]
_ANNUAL = re.compile(r"(?:fy|annual|full[\s-]*year|year)(?:\s*'?((?:19|20)?\d\d))?", re.I)
_SHOWN = 12  # values a message lists before "... and N more"


def _full_year(text: str) -> int:
    y = int(text)
    return y if y >= 100 else 2000 + y


@dataclass(frozen=True)
class Filters:
    """The filters of one search, each as given on the command line (``None``: not given)."""

    company: str | None = None
    year: str | None = None
    period: str | None = None
    form: str | None = None
    doc: str | None = None

    def given(self) -> dict[str, str]:
        """Flag name (without ``--``) → value, of the filters given, in flag order."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    def __bool__(self) -> bool:
        return bool(self.given())

    def check(self) -> Filters:
        """``self``, once each value reads as its flag's (ParameterError naming the flag otherwise)."""
        if self.year is not None:
            _year(self.year)
        if self.period is not None:
            _period(self.period)
        if self.form is not None:
            _form(self.form)
        for name, value in self.given().items():
            if not value.strip():
                raise ParameterError(f"--{name}: empty value")
        return self

    def flags(self) -> str:
        """The filters as typed: ``--company Apple --year 2023``."""
        return " ".join(f"--{k} {v}" for k, v in self.given().items())


def _year(value: str) -> int:
    m = _YEAR.fullmatch(value.strip())
    if not m:
        raise ParameterError(f"--year {value}: not a fiscal year (e.g. 2023, FY2023 or FY23)")
    return _full_year(m.group(1))


def _period(value: str) -> tuple[int | None, int | None]:
    """``(quarter or None for a whole fiscal year, year or None)`` of a ``--period`` value."""
    text = value.strip()
    for rx, q, y in _QUARTER:
        m = rx.fullmatch(text)
        if m:
            return int(m.group(q)), (_full_year(m.group(y)) if y is not None else None)
    m = _ANNUAL.fullmatch(text)
    if m:
        return None, (_full_year(m.group(1)) if m.group(1) else None)
    raise ParameterError(
        f"--period {value}: not a fiscal quarter or year (e.g. Q3, 2023q3, 3Q23, or FY for annual documents)"
    )


def _form(value: str) -> str:
    key = re.sub(r"[\s_-]", "", value.strip().lower())
    key = "earnings" if key in ("earnings", "earningsrelease", "earningscall", "earningsreport") else key
    if key not in FORMS:
        raise ParameterError(f"--form {value}: not a filing type (one of {', '.join(FORMS.values())})")
    return key


def _listed(values) -> str:
    values = list(dict.fromkeys(values))
    if not values:
        return "none known"
    more = len(values) - _SHOWN
    return ", ".join(values[:_SHOWN]) + (f", ... and {more} more" if more > 0 else "")


def _companies(value: str, metas: Mapping[str, DocMeta]) -> set[str]:
    """The company keys ``--company`` names: its key, else the names that link to it as to a question."""
    names = {c for d in metas.values() for c in d.companies}
    key = company_key(value)
    if key in names:
        return {key}
    # capitalised as a question names a company (match_companies reads capitalised words only)
    text = " ".join(w[:1].upper() + w[1:] for w in value.split())
    return set(CompanyIndex(names).match(text))


def cover_tickers(passages: Sequence) -> dict[str, list[str]]:
    """Trading symbol → the documents whose cover registers it (:func:`~aethel_lite.data.cover.trading_symbols` of
    each document's first three passages: smallest ``meta["page"]`` first, then corpus order), documents in order
    of first appearance."""
    firsts: dict[str, list] = {}
    for i, p in enumerate(passages):
        page = p.meta.get("page") if isinstance(p.meta, Mapping) else None
        known = isinstance(page, int) and not isinstance(page, bool)
        firsts.setdefault(p.doc_id, []).append((0 if known else 1, page if known else 0, i, p.text or ""))
    out: dict[str, list[str]] = {}
    for doc, rows in firsts.items():
        for symbol in trading_symbols([t[-1] for t in sorted(rows)[:3]]):
            out.setdefault(symbol, []).append(doc)
    return out


def _by_ticker(value: str, meta: Mapping[str, DocMeta], tickers: Mapping[str, Sequence[str]]) -> set[str]:
    """The documents of the companies whose covers register the symbol ``value`` (case aside), and those covers'."""
    docs = set(tickers.get(value.strip().upper(), ()))
    keys = {c for d in docs for c in meta[d].companies} if docs else set()
    return docs | {d for d, m in meta.items() if keys & set(m.companies)}


def _periods(d: DocMeta) -> list[str]:
    """A document's period keys as its filer names them."""
    return [filer_key(p, d.fiscal_year_name) for p in d.periods]


def _is_annual(d: DocMeta) -> bool:
    if any(t in _ANNUAL_FORMS for t in d.types):
        return True
    return not d.types and any("q" not in p for p in d.periods) and not any("q" in p for p in d.periods)


def _doc_ids(value: str, doc_ids: Sequence[str], sources: Sequence[Mapping]) -> set[str]:
    """The documents ``--doc`` names: a doc_id, else an indexed file (its path, absolute or from the current
    folder, or its name, with or without the suffix) and the documents read from it."""
    if value in set(doc_ids):
        return {value}
    out: set[str] = set()
    start = 0
    for src in sources:  # in corpus order: a file's passages follow the files before it
        n = int(src.get("n_passages", 0))
        path = str(src.get("path", ""))
        name = os.path.basename(path)
        if value in (name, os.path.splitext(name)[0], src.get("id")) or os.path.abspath(value) == path:
            out.update(doc_ids[start : start + n])
        start += n
    return out


def select_documents(
    filters: Filters,
    metas: Mapping[str, DocMeta],
    doc_ids: Sequence[str],
    sources: Sequence[Mapping] = (),
    tickers: Callable[[], Mapping[str, Sequence[str]]] | None = None,
) -> list[str]:
    """The documents of an index that match every filter, in corpus order.

    Parameters
    ----------
    filters : Filters
    metas : mapping
        ``doc_id`` → :class:`~aethel_lite.data.docmeta.DocMeta` of the index's documents.
    doc_ids : sequence of str
        Each passage's document, in corpus order (``ids.json``).
    sources : sequence of dict
        The index's ``sources`` (``path``, ``id``, ``n_passages``, in corpus order), for ``--doc`` by file name.
    tickers : callable, optional
        Returns trading symbol → documents (:func:`cover_tickers`); called when ``--company`` names no company.

    Raises
    ------
    ParameterError
        A value that is not a year, period or form; a filter no document matches (the flag, and what the index
        holds, are named); filters that each match some document but none together.
    """
    order = list(dict.fromkeys(doc_ids))
    meta = {d: metas.get(d, DocMeta(d)) for d in order}
    matched: dict[str, set[str]] = {}  # flag -> the documents it matches alone
    if filters.company is not None:
        keys = _companies(filters.company, meta)
        matched["company"] = {d for d, m in meta.items() if keys & set(m.companies)}
        symbols = tickers() if tickers is not None and not matched["company"] else {}
        if symbols:
            matched["company"] = _by_ticker(filters.company, meta, symbols)
        if not matched["company"]:
            names = sorted({c for m in meta.values() for c in m.companies})
            raise ParameterError(
                f"--company {filters.company}: no document of this index is by {filters.company!r} "
                f"(companies: {_listed(names)}; tickers: {_listed(sorted(symbols))})"
            )
    periods = {d: _periods(m) for d, m in meta.items()}
    years = sorted({p for ps in periods.values() for p in ps if "q" not in p})
    if filters.year is not None:
        year = str(_year(filters.year))
        matched["year"] = {d for d in meta if year in periods[d]}
        if not matched["year"]:
            raise ParameterError(
                f"--year {filters.year}: no document of this index is of fiscal year {year} "
                f"(fiscal years: {_listed(years)})"
            )
    if filters.period is not None:
        quarter, year = _period(filters.period)
        if quarter is None:
            matched["period"] = {d for d, m in meta.items() if _is_annual(m)}
            if year is not None:
                matched["period"] = {d for d in matched["period"] if str(year) in periods[d]}
        else:
            suffix = f"q{quarter}"
            matched["period"] = {
                d
                for d in meta
                if any(p.endswith(suffix) and (year is None or p == f"{year}{suffix}") for p in periods[d])
            }
        if not matched["period"]:
            quarters = sorted({p for ps in periods.values() for p in ps if "q" in p})
            annual = [
                f"FY{y}" for y in sorted({p for d, m in meta.items() if _is_annual(m) for p in periods[d]})
            ]
            what = (
                f"fiscal quarter Q{quarter}" + (f" of {year}" if year else "")
                if quarter
                else "an annual document" + (f" of fiscal year {year}" if year else "")
            )
            raise ParameterError(
                f"--period {filters.period}: no document of this index is {what} "
                f"(periods: {_listed([*annual, *quarters])})"
            )
    if filters.form is not None:
        form = _form(filters.form)
        matched["form"] = {d for d, m in meta.items() if form in m.types}
        if not matched["form"]:
            forms = [FORMS.get(t, t) for t in sorted({t for m in meta.values() for t in m.types})]
            raise ParameterError(
                f"--form {filters.form}: no document of this index is a {FORMS[form]} (forms: {_listed(forms)})"
            )
    if filters.doc is not None:
        matched["doc"] = _doc_ids(filters.doc, doc_ids, sources)
        if not matched["doc"]:
            raise ParameterError(
                f"--doc {filters.doc}: no document or indexed file of this index is {filters.doc!r} "
                f"(documents: {_listed(order)})"
            )
    chosen = set(order)
    for docs in matched.values():
        chosen &= docs
    if not chosen:
        alone = "; ".join(
            f"--{flag} {getattr(filters, flag)}: {_listed(sorted(d))}" for flag, d in matched.items()
        )
        raise ParameterError(
            f"{filters.flags()}: no document of this index matches all these filters (each alone matches {alone})"
        )
    return [d for d in order if d in chosen]
