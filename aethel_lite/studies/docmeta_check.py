"""How well the page reader finds a filing's company, fiscal year and filing type.

:func:`docmeta_accuracy` gives :func:`~aethel_lite.data.docmeta.document_metadata` each filing's first
pages under an opaque id and scores what it reads against a document-information table
(FinanceBench's ``financebench_document_information.jsonl``).

Scoring rules (:func:`company_matches`, :func:`type_of`):

* **company** — the first company key read, ``r``, against the table's company after the same
  normalisation (:func:`~aethel_lite.data.docmeta.company_key`), ``c``: right when the token
  sequence of one contains the other's as a contiguous run (``"jpmorgan chase"`` ⊇
  ``"jpmorgan"``), or when ``c`` is the initials of ``r`` (``"advanced micro devices"`` →
  ``"amd"``); tokens are compared with a final possessive ``s`` dropped on both sides
  (``"mcdonalds"`` = ``"mcdonald"``, which is how the normalisation writes "McDonald's"); and
  two or more consecutive tokens of ``r`` written together may equal ``c`` (``"wal mart stores"``,
  from "Wal-Mart Stores, Inc.", names ``"walmart"``). A registrant's former name is *not* its
  later name: "Square, Inc." is wrong for "Block".
* **fiscal year** — the first year key read (``"2023"`` of ``["2023", "2023q2"]``) equals
  ``doc_period``.
* **filing type** — the first type key read equals the table's ``doc_type`` lower-cased, with
  ``10k_annualreport`` (an annual report that carries the 10-K) counted as ``10k``.

**Calendar and non-calendar filers** are reported apart (``by_year_end``): a company is a
*non-calendar* filer when the cover of one of its annual reports in the table gives a fiscal
year ending in a month other than December ("for the fiscal year ended September 30, 2023"),
*calendar* when they all end in December, *unknown* without an annual report whose cover says.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence

from ..data.cover import STATEMENT_PAGES, read_cover
from ..data.docmeta import company_key, document_metadata
from ..data.schema import Passage

__all__ = ["company_matches", "type_of", "split_half", "docmeta_accuracy"]

FIELDS = ("company", "fiscal_year", "filing_type")


def _tokens(key: str) -> list[str]:
    return [t[:-1] if len(t) > 3 and t.endswith("s") else t for t in key.split()]


def _contains(big: list[str], small: list[str]) -> bool:
    n = len(small)
    return n > 0 and any(big[i : i + n] == small for i in range(len(big) - n + 1))


def company_matches(read: str | None, company: str) -> bool:
    """Whether a company key read from the pages names the table's ``company`` (module docstring).

    Examples
    --------
    >>> company_matches("wal mart stores", "Walmart"), company_matches("square", "Block")
    (True, False)
    """
    if not read:
        return False
    r, c = _tokens(read), _tokens(company_key(company))
    if _contains(r, c) or _contains(c, r):
        return True
    if any("".join(r[i:j]) == "".join(c) for i in range(len(r)) for j in range(i + 2, len(r) + 1)):
        return True
    return len(c) == 1 and len(r) > 1 and "".join(t[0] for t in r) == c[0]


def type_of(doc_type: str) -> str:
    """The table's ``doc_type`` as a filing-type key: ``"10k_annualreport"`` → ``"10k"``, ``"Earnings"`` → ``"earnings"``."""
    key = str(doc_type).lower()
    return "10k" if key.startswith("10k") else key


def split_half(doc_name: str) -> int:
    """0 (development half) or 1 (held-out half): the low bit of the first byte of SHA-256(``doc_name``)."""
    return hashlib.sha256(doc_name.encode("utf-8")).digest()[0] % 2


def docmeta_accuracy(
    pages_by_doc: Mapping[str, Sequence[str]],
    doc_info: Sequence[Mapping],
    *,
    n_pages: int = 3 + STATEMENT_PAGES,
    half: int | None = None,
) -> dict:
    """Accuracy of the page reader per field, overall and per filing type.

    Parameters
    ----------
    pages_by_doc : mapping
        ``doc_name`` → its pages' text in page order (only the first ``n_pages`` are read).
    doc_info : sequence of mapping
        Rows with ``doc_name``, ``company``, ``doc_type``, ``doc_period``; rows without pages are left out.
    n_pages : int
    half : {0, 1}, optional
        Score only the filings of that :func:`split_half`.

    Returns
    -------
    dict
        ``{"n": int, "accuracy": {field: float}, "by_type": {type: {"n": int, field: float}},
        "by_year_end": {"calendar" | "non-calendar" | "unknown": {type: {"n": int, field: float}}},
        "failures": [{"doc_name", field: {"read", "expected"}}, ...]}`` with the fields ``company``,
        ``fiscal_year``, ``filing_type``.
    """
    rows = [
        r
        for r in doc_info
        if r["doc_name"] in pages_by_doc and (half is None or split_half(r["doc_name"]) == half)
    ]
    names = list(dict.fromkeys(r["doc_name"] for r in rows))  # read as "doc<i>": no title, no loader metadata
    pages = [
        Passage(f"doc{i}#p{k}", f"doc{i}", "", text, {"page": k})
        for i, name in enumerate(names)
        for k, text in enumerate(list(pages_by_doc[name])[:n_pages])
    ]
    read_meta = document_metadata(pages)
    metas = {name: read_meta[f"doc{i}"] for i, name in enumerate(names) if f"doc{i}" in read_meta}
    year_end = _year_ends(pages_by_doc, rows, n_pages)
    hits: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    by_end: dict[tuple[str, str], dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    failures = []
    for r in rows:
        m = metas[r["doc_name"]]
        read = {
            "company": m.companies[0] if m.companies else None,
            "fiscal_year": next((p for p in m.periods if "q" not in p), None),
            "filing_type": m.types[0] if m.types else None,
        }
        want = {
            "company": r["company"],
            "fiscal_year": str(r["doc_period"]),
            "filing_type": type_of(r["doc_type"]),
        }
        ok = {
            "company": company_matches(read["company"], want["company"]),
            "fiscal_year": read["fiscal_year"] == want["fiscal_year"],
            "filing_type": read["filing_type"] == want["filing_type"],
        }
        for group in ("all", want["filing_type"]):
            for f in FIELDS:
                hits[group][f].append(ok[f])
                by_end[(year_end.get(r["company"], "unknown"), group)][f].append(ok[f])
        bad = {f: {"read": read[f], "expected": want[f]} for f in FIELDS if not ok[f]}
        if bad:
            failures.append({"doc_name": r["doc_name"], **bad})

    def rate(xs: list[bool]) -> float:
        return sum(xs) / len(xs) if xs else float("nan")

    return {
        "n": len(rows),
        "accuracy": {f: rate(hits["all"][f]) for f in FIELDS},
        "by_type": {
            t: {"n": len(h["company"]), **{f: rate(h[f]) for f in FIELDS}}
            for t, h in sorted(hits.items())
            if t != "all"
        },
        "by_year_end": {
            end: {
                t: {"n": len(h["company"]), **{f: rate(h[f]) for f in FIELDS}}
                for (e, t), h in sorted(by_end.items())
                if e == end
            }
            for end in sorted({e for e, _ in by_end})
        },
        "failures": failures,
    }


def _year_ends(
    pages_by_doc: Mapping[str, Sequence[str]], rows: Sequence[Mapping], n_pages: int
) -> dict[str, str]:
    """Company → ``"calendar"`` or ``"non-calendar"`` from the covers of its annual reports in ``rows`` (module
    docstring); companies none of whose annual-report covers gives the month are left out."""
    months: dict[str, set[int]] = defaultdict(set)
    for r in rows:
        if type_of(r["doc_type"]) != "10k":
            continue
        pages = list(pages_by_doc[r["doc_name"]])[:n_pages]
        month = read_cover(pages[:3], statements=pages[3:]).fiscal_year_end
        if month is not None:
            months[r["company"]].add(month)
    return {c: "calendar" if m == {12} else "non-calendar" for c, m in months.items()}
