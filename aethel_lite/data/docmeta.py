r"""Documents and their metadata as graph nodes: filings, companies, fiscal periods, filing types.

One node ``doc:<doc_id>`` per source document joins its passages; its company (``company:<key>``),
fiscal periods (``period:<year>``, and ``period:<year>q<n>`` for quarterly documents) and filing type
(``type:10k``, ``10q``, ``8k``, ``20f`` or ``earnings``) are nodes joined to the document node (or,
without document nodes, to each of its passages). A question is linked to company nodes by
:func:`match_companies`, whole-token matches weighted by inverse document frequency over the names,

.. math::

    m(c) = \frac{\sum_{t \in T_c \cap T_q} \mathrm{idf}(t)}{\sum_{t \in T_c} \mathrm{idf}(t)},
    \qquad \mathrm{idf}(t) = \ln\Bigl(1 + \frac{N}{n_t}\Bigr),

with :math:`T_c` the tokens of company name :math:`c`, :math:`T_q` the question's tokens written with
a capital letter or a digit, :math:`N` the number of names and :math:`n_t` how many contain :math:`t`.

Node keys carry a prefix and no spaces (``company:american_express``), so they never collide with
entity keys (which never contain ``:``) and BCT's substring and token rules never reach them.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..caching.memo import TextMemo, is_shared
from ..core.entities import REGEX_STOP, RegexExtractor, normalize_entity
from ..core.graph import EntityGraph
from ..data.cover import MONTH_RX as _MONTH_RX
from ..data.cover import MONTHS as _MONTHS
from ..data.cover import STATEMENT_PAGES, read_cover
from ..errors import DataError
from ..io import read_json_shaped
from .fiscal import (
    NAMINGS,
    FiscalCalendars,
    calendar_quarter,
    fiscal_year_ends,
    fiscal_year_names,
    period_keys,
    read_periods,
    year_naming,
)

__all__ = [
    "DocMeta",
    "PREFIXES",
    "is_meta_key",
    "node_kind",
    "period_keys",
    "type_keys",
    "document_metadata",
    "company_key",
    "CompanyIndex",
    "match_companies",
    "question_fields",
    "ANNUAL_TYPES",
    "add_document_nodes",
    "write_docmeta",
    "read_docmeta",
]

#: Node-key prefixes of the structural nodes this module adds.
PREFIXES = {"doc": "doc:", "company": "company:", "period": "period:", "type": "type:"}
#: filing types of an annual report, seeded for a fiscal-year question (:func:`question_fields`)
ANNUAL_TYPES = ("10k", "20f")

_YEAR4 = r"((?:19|20)\d\d)"
_ENDED = re.compile(
    rf"\b(fiscal\s+year|year|quarterly\s+period|quarter|three\s+months|period)\s+ended:?\s+"
    rf"{_MONTH_RX}\s+\d{{1,2}},?\s+{_YEAR4}",
    re.I,
)
_TYPE_PATTERNS = [
    ("10k", re.compile(r"\b10-?k\b|\bannual\s+report\b", re.I)),
    ("10q", re.compile(r"\b10-?q\b|\bquarterly\s+report\b", re.I)),
    ("8k", re.compile(r"\b8-?k\b", re.I)),
    ("20f", re.compile(r"\b20-?f\b", re.I)),
    ("earnings", re.compile(r"\bearnings\s+(?:call|release|report|transcript|presentation)s?\b", re.I)),
]
_FORM = re.compile(r"\bform\s+(10-?k|10-?q|8-?k|20-?f)\b", re.I)
_REGISTRANT = re.compile(r"\(\s*exact\s+name\s+of\s+(?:the\s+)?registrant", re.I)


def is_meta_key(key: str) -> bool:
    """Whether a graph node key is a document or metadata node of this module."""
    return any(key.startswith(p) for p in PREFIXES.values())


def node_kind(key: str) -> str:
    """``"doc"``, ``"company"``, ``"period"``, ``"type"`` or ``"entity"``."""
    for kind, prefix in PREFIXES.items():
        if key.startswith(prefix):
            return kind
    return "entity"


def _slug(text: str) -> str:
    return "_".join(str(text).split())


def type_keys(text: str) -> list[str]:
    """Filing types a text names: ``"10k"`` ("10-K", "annual report"), ``"10q"`` ("10-Q", "quarterly
    report"), ``"8k"``, ``"20f"``, ``"earnings"`` ("earnings call/release/report/...")."""
    return [key for key, rx in _TYPE_PATTERNS if rx.search(text)]


def company_key(name: str) -> str:
    """Normalised company name: ``"AES Corporation"`` → ``"aes"``."""
    return normalize_entity(str(name))


@dataclass
class DocMeta:
    """What is known about one source document.

    Attributes
    ----------
    doc_id : str
    companies : list of str
        Normalised company keys.
    periods : list of str
        Period keys (:func:`period_keys` format).
    types : list of str
        Filing-type keys.
    source : dict
        Field → where it came from: ``"meta"``, ``"cover"``, ``"title"`` or ``"first page"``.
    fiscal_year_end : int or None
        Month (1-12) the filer's fiscal year ends in, when its cover or balance sheet says it
        (:mod:`aethel_lite.data.fiscal` reads a question's dates in that calendar).
    fiscal_year_name : {"end", "start"} or None
        Whether the filer names a fiscal year after the calendar year it ends in or starts in, when a page of
        one of its filings says it (:func:`~aethel_lite.data.fiscal.year_naming`); ``periods`` always count in
        the first (Foot Locker's "2022", the year ended January 28, 2023, is ``"2023"``).
    """

    doc_id: str
    companies: list[str] = field(default_factory=list)
    periods: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    source: dict = field(default_factory=dict)
    fiscal_year_end: int | None = None
    fiscal_year_name: str | None = None

    def keys(self) -> list[str]:
        """Metadata node keys (prefixed), companies first, then periods, then types."""
        return (
            [PREFIXES["company"] + _slug(c) for c in self.companies]
            + [PREFIXES["period"] + p for p in self.periods]
            + [PREFIXES["type"] + t for t in self.types]
        )


def _title_names(title: str) -> list[str]:
    """Company-like names in a document title: its capitalised spans, minus period words."""
    out = []
    for m in RegexExtractor().extract([title])[0]:
        key = m.key
        if key and not period_keys(m.text) and key not in out and any(c.isalpha() for c in key):
            out.append(key)
    return out


def _registrant(first: str) -> str | None:
    """The registrant name on an SEC cover page: the lines just above "(Exact name of registrant ...)"."""
    m = _REGISTRANT.search(first)
    if not m:
        return None
    lines = [ln.strip() for ln in first[: m.start()].splitlines() if ln.strip()]
    if not lines:
        return None
    name = lines[-1]
    if len(lines) >= 2 and normalize_entity(name) == "":  # "AMCOR\nPLC": the suffix on its own line
        name = f"{lines[-2]} {name}"
    key = company_key(name)
    return key if key and len(key) <= 80 and any(c.isalpha() for c in key) else None


def _first_page_periods(first: str) -> tuple[list[str], str | None]:
    m = _ENDED.search(first)
    if m:
        kind = m.group(1).lower()
        month = _MONTHS[m.group(2).lower().rstrip(".")]
        y = int(m.group(3))
        if "quarter" in kind or "three" in kind:
            return [str(y), f"{y}q{calendar_quarter(month)}"], "cover"
        return [str(y)], "cover"
    keys = period_keys(first[:2000])
    if keys:
        year = next((k for k in keys if "q" not in k), None)
        quarter = next((k for k in keys if "q" in k), None)
        return [
            k for k in (year, quarter) if k and (quarter is None or k == quarter or quarter.startswith(k))
        ], "first page"
    return [], None


def _first_pages(passages: Sequence, n: int = 3) -> dict[str, list]:
    """Per document, its first ``n`` passages: smallest ``meta["page"]`` first (passages without a
    page number after those with one), ties in corpus order."""
    by_doc: dict[str, list] = {}
    for i, p in enumerate(passages):
        page = p.meta.get("page") if isinstance(p.meta, Mapping) else None
        by_doc.setdefault(p.doc_id, []).append(
            (0 if isinstance(page, int) else 1, page if isinstance(page, int) else 0, i, p)
        )
    return {d: [t[-1] for t in sorted(rows)[:n]] for d, rows in by_doc.items()}


#: what each filing's first pages say (:func:`~aethel_lite.data.cover.read_cover`), kept inside
#: :func:`~aethel_lite.caching.memo.shared` for a study that fits a corpus's hybrid variants one after another
_COVERS = TextMemo("covers", 20_000)


def _read_cover(texts: list[str]):
    """``read_cover(texts[:3], statements=texts[3:])``, from :data:`_COVERS` inside ``shared()`` (its readers
    here only read the :class:`~aethel_lite.data.cover.Cover`)."""
    if not is_shared():
        return read_cover(texts[:3], statements=texts[3:])
    key = json.dumps(texts)  # one string for the list, unambiguous
    return _COVERS.map("", [key], lambda todo: [read_cover(texts[:3], statements=texts[3:])])[0]


def document_metadata(passages: Sequence) -> dict[str, DocMeta]:
    """Company, periods and filing type of every document of a corpus.

    Parameters
    ----------
    passages : sequence of Passage
        The corpus; a document's first pages are its passages with the smallest ``meta["page"]``
        (ties in corpus order).

    Returns
    -------
    dict
        ``doc_id`` → :class:`DocMeta`, in order of first appearance.

    Notes
    -----
    Per field, the first source that gives a value wins: the passages' ``meta`` (``company``,
    ``doc_period``, ``doc_type``); for a filing or a release, :func:`aethel_lite.data.cover.read_cover`
    of its first three pages (and, for a quarterly report whose cover does not say when its fiscal
    year ends, its balance sheet on the next ``STATEMENT_PAGES``); for any other document the first page's SEC cover wording; the title;
    the first period expression of the first page. A quarterly cover adds its quarter to a loader's year.
    Companies read from covers that give the same commission file number are one registrant: each of
    its filings carries every name read with that number (its own first), so a question naming
    "Block" links to the filings made as "Square, Inc.", and a name a filing gives as former
    ("(formerly known as ...)") is carried too. How a filer names its fiscal years is read from all pages of
    its filings read from covers (:func:`~aethel_lite.data.fiscal.year_naming`, in the calendar of the filing or
    of its company); a filing that does not say takes what its company's other filings say.
    """
    firsts = _first_pages(passages, 3 + STATEMENT_PAGES)
    out: dict[str, DocMeta] = {}
    registrants: dict[str, list[str]] = {}  # commission file number -> the names read with it
    numbers: dict[str, str] = {}  # doc_id -> its cover's commission file number
    for doc, pages in firsts.items():
        p = pages[0]
        meta = p.meta if isinstance(p.meta, Mapping) else {}
        d = DocMeta(doc)
        text = p.text or ""
        need = not (meta.get("company") and meta.get("doc_period") not in (None, "") and meta.get("doc_type"))
        texts = [q.text or "" for q in pages] if need else []
        cov = _read_cover(texts) if need else None
        if cov is not None and cov.form is None:
            cov = None  # not a filing or a release: the first-page rules below
        if meta.get("company"):
            d.companies, d.source["company"] = [company_key(meta["company"])], "meta"
        elif cov is not None and cov.company:
            d.companies, d.source["company"] = [cov.company, *cov.former], "cover"
            if cov.file_number:
                numbers[doc] = cov.file_number
                names = registrants.setdefault(cov.file_number, [])
                names += [c for c in d.companies if c not in names]
        elif cov is None and (reg := _registrant(text)):
            d.companies, d.source["company"] = [reg], "cover"
        elif p.title and (names := _title_names(p.title)):
            d.companies, d.source["company"] = names, "title"
        cover, how = _first_page_periods(text)
        if meta.get("doc_period") not in (None, ""):
            y = str(meta["doc_period"])
            d.periods, d.source["period"] = [y] + [k for k in cover if "q" in k and k.startswith(y)], "meta"
        elif cov is not None and cov.fiscal_year:
            d.periods = [str(cov.fiscal_year)] + ([f"{cov.fiscal_year}q{cov.quarter}"] if cov.quarter else [])
            d.source["period"] = "cover"
        elif cov is None and how == "cover":
            d.periods, d.source["period"] = cover, "cover"
        elif p.title and (tp := period_keys(p.title)):
            d.periods, d.source["period"] = tp, "title"
        elif cover:
            d.periods, d.source["period"] = cover, how
        if meta.get("doc_type"):
            d.types, d.source["type"] = [re.sub(r"[^0-9a-z]", "", str(meta["doc_type"]).lower())], "meta"
        elif cov is not None:
            d.types, d.source["type"] = [cov.form], "cover"
        elif fm := _FORM.search(text[:3000]):
            d.types, d.source["type"] = [re.sub(r"[^0-9a-z]", "", fm.group(1).lower())], "cover"
        d.companies = [c for c in d.companies if c]
        if cov is not None:
            d.fiscal_year_end = cov.fiscal_year_end
        out[doc] = d
    for doc, d in out.items():  # one registrant, several names (a rename): each filing carries them all
        number = d.source.get("company") == "cover" and numbers.get(doc)
        if number and len(registrants[number]) > 1:
            d.companies += [c for c in registrants[number] if c not in d.companies]
    _name_fiscal_years(passages, out)
    return out


def _name_fiscal_years(passages: Sequence, metas: Mapping[str, DocMeta]) -> None:
    """Set ``fiscal_year_name`` of the filings read from covers: what their pages say, else their company's."""
    read = {doc for doc, d in metas.items() if d.source.get("company") == "cover" or d.fiscal_year_end}
    if not read:
        return
    pages: dict[str, list[str]] = {}
    for p in passages:
        if p.doc_id in read:
            pages.setdefault(p.doc_id, []).append(p.text or "")
    ends = fiscal_year_ends(metas)
    for doc in sorted(read):
        d = metas[doc]
        fy_end = d.fiscal_year_end or next((ends[c] for c in d.companies if c in ends), None)
        if fy_end is not None:
            d.fiscal_year_name = year_naming(pages.get(doc, ()), fy_end)
    names = fiscal_year_names(metas)
    for doc in sorted(read):
        d = metas[doc]
        if d.fiscal_year_name is None:
            d.fiscal_year_name = next((names[c] for c in d.companies if c in names), None)


class CompanyIndex:
    """Company names with their token idf, built once per corpus (:func:`match_companies` uses one)."""

    def __init__(self, companies: Iterable[str]) -> None:
        self.names = sorted(set(c for c in companies if c))
        self.tokens = {c: frozenset(c.split()) for c in self.names}
        df = Counter(t for c in self.names for t in self.tokens[c])
        n = len(self.names)
        self.idf = {t: math.log(1.0 + n / df[t]) for t in df}
        self.total = {c: sum(self.idf[t] for t in self.tokens[c]) for c in self.names}
        self.postings: dict[str, list[str]] = {}
        for c in self.names:
            for t in self.tokens[c]:
                self.postings.setdefault(t, []).append(c)

    def match(self, text: str, *, min_share: float = 0.5) -> dict[str, float]:
        """See :func:`match_companies`."""
        proper: set[str] = set()
        for raw in text.split():
            word = raw.strip(".,;:!?()[]{}\"'“”‘’")
            if word and word not in REGEX_STOP and any(c.isupper() or c.isdigit() for c in word):
                proper.update(normalize_entity(word).split())
        qtoks = set(normalize_entity(text).split()) & proper
        scores = {}
        for c in sorted({c for t in qtoks for c in self.postings.get(t, ())}):
            hit = sum(self.idf[t] for t in self.tokens[c] if t in qtoks)
            if self.total[c] > 0 and hit > 0:
                scores[c] = hit / self.total[c]
        if not scores:
            return {}
        best = max(scores.values())
        keep = {c: v for c, v in scores.items() if v >= min_share and v >= min_share * best}
        return dict(sorted(keep.items(), key=lambda kv: (-kv[1], kv[0])))


def match_companies(
    text: str, companies: Iterable[str] | CompanyIndex, *, min_share: float = 0.5
) -> dict[str, float]:
    r"""Company keys a question names, each with its match :math:`m(c)` (module docstring).

    Parameters
    ----------
    text : str
        The question.
    companies : iterable of str or CompanyIndex
        Normalised company keys of the corpus, or their prebuilt index.
    min_share : float
        Smallest :math:`m(c)` kept; a kept match also has at least ``min_share`` times the best.

    Returns
    -------
    dict
        Company key → :math:`m(c) \in (0, 1]`, best first (ties by key).
    """
    index = companies if isinstance(companies, CompanyIndex) else CompanyIndex(companies)
    return index.match(text, min_share=min_share)


def question_fields(
    text: str, companies: CompanyIndex | None, calendars: FiscalCalendars, *, periods: Mapping | None = None
) -> list[dict[str, float]]:
    """The metadata nodes a question names, one dict (node key → weight) per field.

    Parameters
    ----------
    text : str
        The question.
    companies : CompanyIndex or None
        The corpus's companies (:func:`match_companies`; ``None``: none).
    calendars : FiscalCalendars
        The companies' fiscal calendars (:class:`~aethel_lite.data.fiscal.FiscalCalendars`).
    periods : mapping or None
        ``None``: companies only. Else ``{"decay": d, "fiscal": bool}``: also the periods named (the latest
        year weight 1, each earlier one ``d`` times the next), read in the calendar and naming of the company
        named when ``fiscal`` (:meth:`~aethel_lite.data.fiscal.FiscalCalendars.read`), and the filing types
        named or, for a fiscal-year question read in a calendar, the annual report's (:data:`ANNUAL_TYPES`).

    Returns
    -------
    list of dict
        ``[companies]`` or ``[companies, periods, types]``; company weights are :func:`match_companies`'.
    """
    named = match_companies(text, companies) if companies is not None else {}
    fields = [{PREFIXES["company"] + _slug(c): m for c, m in named.items()}]
    if periods is not None:
        keys, annual = calendars.read(text, named) if periods["fiscal"] else read_periods(text, None)
        years = sorted({int(k[:4]) for k in keys}, reverse=True)  # the latest year named first
        decay = float(periods["decay"])
        fields.append({PREFIXES["period"] + k: decay ** years.index(int(k[:4])) for k in keys})
        types = type_keys(text) or (list(ANNUAL_TYPES) if annual else [])
        fields.append({PREFIXES["type"] + k: 1.0 for k in types})
    return fields


def add_document_nodes(
    graph,
    passages: Sequence,
    metas: Mapping[str, DocMeta] | None = None,
    *,
    documents: bool = True,
    metadata: bool = True,
):
    r"""The graph with document nodes and/or metadata nodes added (module docstring).

    Document nodes are incidence columns (so a closed pool's subgraph keeps them); metadata nodes join document
    nodes by entity–entity edges, or each passage without document nodes. With :math:`L'` the alias matrix padded
    with the document–metadata edges :math:`M` and :math:`B' = [B \mid B_\text{doc} \mid B_\text{meta}]`,

    .. math::

        A' = \begin{pmatrix} 0 & B' \\ B'^{\top} & L' \end{pmatrix}, \qquad
        L' = \begin{pmatrix} L & 0 & 0 \\ 0 & 0 & M \\ 0 & M^{\top} & 0 \end{pmatrix}.

    Parameters
    ----------
    graph : EntityGraph
    passages : sequence of Passage
        The graph's passages, in its order.
    metas : mapping, optional
        :func:`document_metadata` of ``passages`` (computed when omitted).
    documents, metadata : bool

    Returns
    -------
    EntityGraph
        The original entities first (same order), then the new nodes sorted by key.
    """
    if [p.pid for p in passages] != list(graph.pids):
        raise DataError("add_document_nodes: passages must be the graph's passages, in its order")
    if not (documents or metadata):
        return graph
    metas = document_metadata(passages) if metas is None else metas
    n_p, n_e = graph.n_passages, graph.n_entities
    doc_of = [p.doc_id for p in passages]
    docs = sorted(set(doc_of))
    doc_keys = {d: PREFIXES["doc"] + _slug(d) for d in docs}
    meta_keys = sorted({k for d in docs for k in (metas[d].keys() if d in metas and metadata else [])})
    new = (sorted(doc_keys.values()) if documents else []) + meta_keys
    if len(set(new)) != len(new) or any(k in graph.entity_index for k in new):
        raise DataError("add_document_nodes: a document or metadata key collides with another node")
    col = {k: n_e + j for j, k in enumerate(new)}
    pairs = []  # (passage, new column)
    for i, d in enumerate(doc_of):
        if documents:
            pairs.append((i, col[doc_keys[d]]))
        elif metadata and d in metas:
            pairs += [(i, col[k]) for k in metas[d].keys()]
    links = [
        (col[doc_keys[d]], col[k])
        for d in docs
        if documents and metadata and d in metas
        for k in metas[d].keys()
    ]
    rows, cols = np.array(pairs, dtype=np.int64).reshape(-1, 2).T
    m = n_e + len(new)
    extra = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_p, m))
    inc = sp.hstack([graph.incidence, sp.csr_matrix((n_p, len(new)))], format="csr") + extra
    inc.data[:] = 1.0
    alias = sp.csr_matrix((m, m))
    if graph.alias is not None:
        alias = sp.bmat([[graph.alias, None], [None, sp.csr_matrix((len(new), len(new)))]], format="csr")
    if links:
        arows, acols = np.array(links, dtype=np.int64).T
        md = sp.csr_matrix((np.ones(len(links)), (arows, acols)), shape=(m, m))
        alias = alias + md + md.T
        alias.data[:] = 1.0
    surface = {**graph.surface, **{k: k.split(":", 1)[1].replace("_", " ") for k in new}}
    return EntityGraph(
        pids=list(graph.pids),
        entities=list(graph.entities) + new,
        incidence=inc,
        alias=alias,
        surface=surface,
    )


def write_docmeta(path: str | os.PathLike, metas) -> None:
    """Write ``doc_id`` → DocMeta as ``docmeta.json`` (sorted keys, UTF-8, one trailing newline; a document
    whose fiscal year end or naming is unknown has no ``fiscal_year_end`` or ``fiscal_year_name`` key, as files
    written before they existed)."""
    rows = [
        {k: v for k, v in asdict(d).items() if not (k in _OPTIONAL and v is None)} for d in metas.values()
    ]
    text = json.dumps({"documents": rows}, ensure_ascii=False, sort_keys=True)
    Path(path).write_text(text + "\n", encoding="utf-8", newline="\n")


#: DocMeta fields ``docmeta.json`` leaves out when unknown
_OPTIONAL = ("fiscal_year_end", "fiscal_year_name")
#: what ``docmeta.json`` holds (:func:`~aethel_lite.io.read_json_shaped`)
_DOCMETA_SHAPE = {
    "documents": [
        {"doc_id": str, "companies": [str], "periods": [str], "types": [str], "source": {str: object}}
    ]
}


def read_docmeta(path: str | os.PathLike) -> dict:
    """``docmeta.json`` as ``doc_id`` → DocMeta; DataError (the file named) if malformed or a field is not text."""
    rows = read_json_shaped(path, _DOCMETA_SHAPE, "document metadata")["documents"]
    out = {}
    for row in rows:
        end = row.get("fiscal_year_end")
        if end is not None and not (type(end) is int and 1 <= end <= 12):
            raise DataError(
                f"{path}: document {row['doc_id']!r}: fiscal_year_end must be a month 1-12; got {end!r}"
            )
        name = row.get("fiscal_year_name")
        if name is not None and name not in NAMINGS:
            raise DataError(
                f"{path}: document {row['doc_id']!r}: fiscal_year_name must be one of {', '.join(NAMINGS)}; "
                f"got {name!r}"
            )
        out[row["doc_id"]] = DocMeta(
            row["doc_id"], row["companies"], row["periods"], row["types"], row["source"], end, name
        )
    return out
