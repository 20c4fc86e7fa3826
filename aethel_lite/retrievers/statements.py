r"""Statement pages first: inside the filing an anchor selects, the statement that reports the question's line item.

A comparison question ("Which had more total assets at the end of FY2019, PepsiCo or Costco?") needs one page of
each filing, and the page that holds the figure is a financial statement. Each anchor's PageRank
(:mod:`aethel_lite.retrievers.anchors`) finds the right filing, but its first places go to pages that *mention* the
metric (management's discussion, selected data, notes), because the question says "total assets" and never
"balance sheet". The stage :class:`StatementsRetriever` (``aethel-statements``) holds an
:class:`~aethel_lite.retrievers.anchors.AnchorsRetriever` and gives each anchor's first places to the statement pages
of its filing that report the question's line item.

**Fit** (:class:`~aethel_lite.data.statement_pages.StatementPages`), from the corpus alone (no question takes
part): which passages are statement pages (:func:`~aethel_lite.data.statements.statement_kind`), the words of each
one's row labels (:func:`~aethel_lite.data.statements.row_labels`; :func:`~aethel_lite.data.line_items.words`),
and each word's weight, its inverse document frequency over the statement pages' row labels,

.. math:: w_t = \log \frac{N + 1}{n_t + 1},

:math:`N` statement pages, :math:`n_t` of them with a row label using :math:`t` ("total" weighs nearly nothing,
"assets" much more).

**A page's match** to a question with words :math:`Q`: its best row label :math:`L`,

.. math:: m(d) = \max_{L \in d} \frac{\sum_{t \in L \cap Q} w_t}{\sqrt{\sum_{t \in L} w_t}} ,

the weight the label shares with the question, a long label discounted ("Total assets" matches "total assets"
better than "Total liabilities and shareholders' equity" does).

**The question names a line item** (:meth:`~aethel_lite.data.statement_pages.StatementPages.names_item`) when it
holds every word of a *line item*: a row label found on the statement pages of at least ``min_docs`` documents (a
row of one filing only is not a line item the corpus shares) that has two words or more, or one word weighing at
least ``min_word`` ("Revenues"; not "Total" or "Other"). "Total assets", "revenue", "net income" name one; a question about risks
does not, and it ranks as ``aethel-anchors`` does.

**Line items by meaning** (``meanings``, :mod:`aethel_lite.data.line_items`): a question naming a line item in
an analyst's words ("income from operations", "capex", "top-line revenue") is matched with the words of every
phrasing of that item too ("Operating income", "Purchases of property and equipment", "Net sales"), and only the
statement that reports it is lifted when one of its pages matches (``statement_kind``: a cash-flow item the
cash-flow statement).

**Lift** (:func:`statements_first`): in one anchor's ranking, the statement pages of the document of its first
passage whose match is positive take the first places, best match first (a tie: the anchor's own order); every
other passage follows in the anchor's order. With ``unanchored=True`` a question with fewer than two anchors ("Foot
Locker's sales for the quarter ended October 29, 2022") is lifted the same way in the hybrid's ranking: the
statement pages of its first passage's filing that report the line item come first. When the question names a
quarter ("the quarter ended June 25, 2023", "Q2 FY2023") and that filing's metadata does not carry it, the filing
lifted is that of the first of the ten best passages whose filing carries it and names the same company
(``quarter_filing``, :func:`quarter_filing`): the first place of a quarter's question may go to another quarter's
release of the same company, whose statement pages report the same line item. Likewise each anchor lifts the
filing of the first of its thirty best passages whose metadata carries the anchor's company and year, an annual
report first when the anchor names no quarter (``anchor_filing``, :func:`anchor_filing`), not always its first
passage's: a long 10-K of the same company
(CVS Health's for 2018, the year of its Aetna merger) can take the first places of the anchor "CVS Health, fiscal 2022" on the
words it shares with the question.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ..data.docmeta import ANNUAL_TYPES, PREFIXES, DocMeta
from ..data.line_items import item_kinds, named_items, words
from ..data.statement_pages import STATEMENTS_FILE, StatementPages
from ..errors import ParameterError
from .anchors import AnchorsRetriever
from .base import Retriever, clone, prefitted, topk
from .traces import RankingStage

__all__ = ["StatementsRetriever", "statements_first", "quarter_filing", "anchor_filing"]

#: how far down an unanchored question's ranking the filing of the quarter it names is looked for
QUARTER_DEPTH = 10
#: how far down an anchor's ranking the filing of its company and year is looked for
ANCHOR_DEPTH = 30


def statements_first(
    scores: np.ndarray,
    corpus_idx: np.ndarray | None,
    pages: StatementPages,
    doc_ids: Sequence[str],
    text: str,
    doc: str | None = None,
    meanings: bool = False,
    statement_kind: bool = True,
) -> np.ndarray:
    """One anchor's corpus-length ranking scores with its filing's matching statement pages first (module
    docstring): a copy; unchanged when the question names no line item or the filing has no matching page.
    ``corpus_idx``: the candidates (None: every passage); ``doc``: the filing lifted (default: the first passage's);
    ``meanings``: line items by meaning
    (:meth:`~aethel_lite.data.statement_pages.StatementPages.question_words`) and, with ``statement_kind``, only
    the statement that reports the items named lifted when one of its pages matches."""
    corpus_idx = np.arange(len(scores)) if corpus_idx is None else np.asarray(corpus_idx, dtype=np.int64)
    order, vals = topk(scores, 1, corpus_idx)
    if not order.size or not vals[0] > -np.inf or not pages.names_item(text, meanings):
        return scores
    live = set(corpus_idx.tolist())
    doc = doc_ids[int(order[0])] if doc is None else doc
    found = pages.match(text, [i for i in pages.by_doc_.get(doc, ()) if i in live], meanings)
    if meanings and statement_kind:
        kinds = item_kinds(named_items(words(text)))
        if any(pages.kind_[i] in kinds for i, m in found.items() if m > 0):
            found = {i: m for i, m in found.items() if pages.kind_[i] in kinds}
    if pages.order == "anchor":  # the ablation: every statement page of the filing, in the anchor's order
        lifted = sorted(found, key=lambda i: (-scores[i], i))
    else:
        lifted = sorted((i for i, m in found.items() if m > 0), key=lambda i: (-found[i], -scores[i], i))
    if not lifted:
        return scores
    out = scores.copy()
    top = float(np.max(scores[corpus_idx]))
    for place, i in enumerate(lifted):
        out[i] = top + len(lifted) - place
    return out


def anchor_filing(
    scores: np.ndarray,
    corpus_idx: np.ndarray | None,
    doc_ids: Sequence[str],
    periods: Sequence[str],
    companies: Sequence[str],
    metas: Mapping[str, DocMeta],
    depth: int = ANCHOR_DEPTH,
) -> str | None:
    """The filing of the first of the ``depth`` best passages whose periods hold one of ``periods`` and which names
    one of ``companies`` (company keys), an annual report first (``ANNUAL_TYPES``) when ``periods`` name no quarter
    (a fiscal year's figure is in its annual report, not in its fourth quarter's release); None when either is
    empty or no such filing is among them."""
    if not periods or not companies:
        return None
    wanted, named = set(periods), set(companies)
    none = DocMeta("")
    found = []  # (filing, its metadata), best first
    for i in topk(scores, depth, corpus_idx)[0]:
        doc = doc_ids[int(i)]
        meta = metas.get(doc, none)
        if wanted & set(meta.periods) and named & set(meta.companies):
            found.append((doc, meta))
    if not any("q" in p for p in wanted):
        found = [f for f in found if set(f[1].types) & set(ANNUAL_TYPES)] or found
    return found[0][0] if found else None


def quarter_filing(
    scores: np.ndarray,
    corpus_idx: np.ndarray | None,
    doc_ids: Sequence[str],
    quarters: Sequence[str],
    metas: Mapping[str, DocMeta],
    depth: int = QUARTER_DEPTH,
) -> str | None:
    """The filing of the first of the ``depth`` best passages whose periods hold one of ``quarters`` (period keys,
    ``"2023q2"``) and which names a company the first passage's filing names (:func:`anchor_filing`); None when no
    quarter is named or none of those filings carries one.

    Parameters
    ----------
    scores : ndarray, shape (n_passages,)
        One question's ranking scores.
    corpus_idx : ndarray of int or None
        The candidates (None: every passage).
    doc_ids : sequence of str
        Each passage's filing.
    quarters : sequence of str
        The quarters the question names.
    metas : mapping
        Filing → its :class:`~aethel_lite.data.docmeta.DocMeta` (``periods`` and ``companies`` are read).
    depth : int
        How many of the best passages are looked at.
    """
    best = topk(scores, 1, corpus_idx)[0]
    if not quarters or not best.size:
        return None
    first = metas.get(
        doc_ids[int(best[0])], DocMeta("")
    ).companies  # another company's filing is never lifted
    return anchor_filing(scores, corpus_idx, doc_ids, quarters, first, metas, depth)


class StatementsRetriever(RankingStage, Retriever):
    """``aethel-statements``: ``aethel-anchors`` with each anchor's first places given to the statement pages of its
    filing that report the question's line item (module docstring).

    Parameters
    ----------
    anchors : AnchorsRetriever, optional
        The stage whose ranking this one refines (default ``AnchorsRetriever()``); ``fit`` fits a clone of it.
    min_docs, min_word, order
        The settings of :class:`~aethel_lite.data.statement_pages.StatementPages` (``order="anchor"``: the ablation
        that lifts every statement page of the filing, in the anchor's order).
    unanchored : bool
        Lift a question with fewer than two anchors too (module docstring): its ranking is the hybrid's with the
        first passage's filing's matching statement pages first.
    quarter_filing : bool
        For such a question naming a quarter, lift the filing of the first of the ten best passages whose metadata
        carries that quarter and names the first passage's company (module docstring); ``False``: always the first
        passage's filing.
    anchor_filing : bool
        Lift, for each anchor, the filing of the first of its thirty best passages whose metadata carries the
        anchor's company and year (module docstring); ``False``: always its first passage's filing.
    meanings : bool
        Line items by meaning (:mod:`aethel_lite.data.line_items`): a question naming "income from operations"
        matches the row "Operating income"; ``False``: the question's own words only.
    statement_kind : bool
        With ``meanings``, only the statement that reports the line items named (a cash-flow item the cash-flow
        statement) is lifted when one of its pages matches; ``False``: any matching statement page.
    prefit : bool
        ``anchors`` is already fitted on the same passages: ``fit`` uses it as it is.
    progress : bool
        Show progress bars.

    Attributes
    ----------
    anchors_ : AnchorsRetriever
        The fitted anchors stage.
    pages_ : StatementPages
        The corpus's statement pages and their row labels.
    """

    name = "statements"

    def __init__(
        self,
        anchors: AnchorsRetriever | None = None,
        min_docs: int = 2,
        min_word: float = 1.0,
        order: str = "match",
        unanchored: bool = False,
        quarter_filing: bool = True,
        anchor_filing: bool = True,
        meanings: bool = True,
        statement_kind: bool = True,
        prefit: bool = False,
        progress: bool = False,
    ):
        self.anchors, self.min_docs, self.min_word, self.order = anchors, min_docs, min_word, order
        self.unanchored, self.quarter_filing, self.anchor_filing = unanchored, quarter_filing, anchor_filing
        self.meanings, self.statement_kind = meanings, statement_kind
        self.prefit, self.progress = prefit, progress

    def _anchors(self) -> AnchorsRetriever:
        return AnchorsRetriever() if self.anchors is None else self.anchors

    def _pages(self) -> StatementPages:
        """The statement pages' settings, checked (ParameterError naming a bad one)."""
        if isinstance(self.min_docs, bool) or not isinstance(self.min_docs, int) or self.min_docs < 1:
            raise ParameterError(f"min_docs must be a positive integer; got {self.min_docs!r}")
        if (
            isinstance(self.min_word, bool)
            or not isinstance(self.min_word, (int, float))
            or self.min_word < 0
        ):
            raise ParameterError(f"min_word must be a number >= 0; got {self.min_word!r}")
        for name in ("unanchored", "quarter_filing", "anchor_filing", "meanings", "statement_kind"):
            if not isinstance(getattr(self, name), bool):
                raise ParameterError(f"{name} must be True or False; got {getattr(self, name)!r}")
        return StatementPages(self.min_docs, self.min_word, self.order)

    def parts(self) -> list[str]:
        """The index parts ``save`` writes (file groups an index shares between methods: :mod:`aethel_lite.search.index`)."""
        return [*self._anchors().parts(), "statements"]

    def fit(self, passages: Sequence) -> StatementsRetriever:
        """Fit a clone of the anchors stage and read the corpus's statement pages. Returns ``self``."""
        pages = self._pages()
        self._anchors()._check_settings()
        passages = list(passages)
        if self.prefit:
            return self._learn(prefitted(self.anchors, [p.pid for p in passages]), pages.fit(passages))
        anchors = clone(self._anchors())
        anchors.set_params(progress=anchors.progress or self.progress)
        return self._learn(anchors.fit(passages), pages.fit(passages))

    def _learn(self, anchors: AnchorsRetriever, pages: StatementPages) -> StatementsRetriever:
        self.anchors_, self.pages_ = anchors, pages
        self.pids_, self.pid_index_ = anchors.pids_, anchors.pid_index_
        self.doc_ids_ = anchors.ranker_.doc_ids_
        return self

    @property
    def ranker_(self):
        """The fitted retriever that runs the PageRank search (the hybrid the anchors stage holds)."""
        return self.anchors_.ranker_

    def save(self, folder: str | os.PathLike) -> list[str]:
        """Write the anchors stage's files (:meth:`AnchorsRetriever.save`) and ``statements.json``
        (:meth:`~aethel_lite.data.statement_pages.StatementPages.save`)."""
        self._check_fitted()
        files = self.anchors_.save(folder)
        self.pages_.save(Path(folder) / STATEMENTS_FILE, self.pids_)
        return sorted([*files, STATEMENTS_FILE])

    @classmethod
    def load(cls, folder: str | os.PathLike, **params: Any) -> StatementsRetriever:
        """The stage :meth:`save` wrote into ``folder``, with settings ``params`` (the statement pages' own settings
        are the file's)."""
        r = cls(**params)
        r._pages()
        anchors = AnchorsRetriever.load(folder, **r._anchors().get_params(deep=False))
        return r._learn(anchors, StatementPages.load(Path(folder) / STATEMENTS_FILE, anchors.pids_))

    @property
    def inner_(self) -> AnchorsRetriever:
        """The fitted retriever whose search this stage ranks (:class:`~aethel_lite.retrievers.traces.RankingStage`)."""
        return self.anchors_

    def rank(self, text: str, trace) -> np.ndarray:
        """The anchors stage's ranking (:meth:`AnchorsRetriever.rank`), each anchor's scores passed through
        :func:`statements_first`; with ``unanchored``, an unanchored question's scores too."""
        lift = partial(
            statements_first,
            corpus_idx=trace.corpus_idx,
            pages=self.pages_,
            doc_ids=self.doc_ids_,
            text=text,
            meanings=self.meanings,
            statement_kind=self.statement_kind,
        )

        def refine(scores: np.ndarray, anchor) -> np.ndarray:
            return lift(scores, doc=self._anchor_filing(anchor, scores, trace.corpus_idx))

        scores = self.anchors_.rank(text, trace, refine=refine)
        if not self.unanchored or trace.extra["anchors"]:
            return scores
        return lift(scores, doc=self._quarter_filing(text, scores, trace.corpus_idx))

    def _anchor_filing(self, anchor, scores: np.ndarray, corpus_idx) -> str | None:
        """:func:`anchor_filing` of one anchor (``anchor_filing``): the filing of its company and year."""
        metas = self.ranker_.doc_meta_
        if not self.anchor_filing or not metas:
            return None
        company, period = anchor.fields[0], anchor.fields[1]
        companies = [k[len(PREFIXES["company"]) :].replace("_", " ") for k in company]
        periods = [k[len(PREFIXES["period"]) :] for k in period]
        return anchor_filing(scores, corpus_idx, self.doc_ids_, periods, companies, metas)

    def _quarter_filing(self, text: str, scores: np.ndarray, corpus_idx) -> str | None:
        """:func:`quarter_filing` of an unanchored question (``quarter_filing``): the quarters it names read as the
        hybrid reads its periods, each filing's periods and companies from the hybrid's document metadata."""
        ranker = self.ranker_
        if not self.quarter_filing or not ranker.doc_meta_:
            return None
        fields = ranker.metadata_fields(text)
        prefix = PREFIXES["period"]
        named = [k[len(prefix) :] for k in (fields[1] if len(fields) > 1 else ())]
        quarters = [k for k in named if "q" in k]
        return quarter_filing(scores, corpus_idx, self.doc_ids_, quarters, ranker.doc_meta_)
