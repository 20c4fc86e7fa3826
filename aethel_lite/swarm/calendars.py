"""Each document's fiscal calendar: the month its filer's fiscal year ends in, and how it names a fiscal year,
for naming its periods.

A document's fiscal year ends in the month its cover says (:func:`~aethel_lite.data.cover.read_cover`
of its first pages, and for a quarterly report the balance sheet on the pages after them), else in
the month most of the same entity's other documents' covers say (an earnings release or an 8-K
rarely says it), else it is unknown (periods are then named as if the year ended in December). A
fiscal year is named after the calendar year in which it ends unless the document's pages say it is
named after the year it starts in (:func:`~aethel_lite.data.fiscal.year_naming`: Foot Locker's "Fiscal
year 2022 ... represented the 52 weeks ended January 28, 2023"), or, when its pages say neither, most of
its entity's other documents do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..data.cover import STATEMENT_PAGES, read_cover
from ..data.fiscal import year_naming
from .resolvers import first_passages

__all__ = ["YearEnds"]


class YearEnds:
    """The fiscal-year-end month of each document of a corpus, read when first asked for.

    Parameters
    ----------
    passages : sequence of Passage
        The corpus; a document's first pages are its passages with the smallest ``meta["page"]``.
    resolver : EntityResolver, optional
        Names the entity of a passage (:meth:`passage_entity`); without one, or for a passage it
        does not name, a document has only its own cover's month.
    """

    def __init__(self, passages: Sequence[Any], resolver: Any = None):
        self.resolver = resolver
        self._passages = passages
        self._pages = first_passages(passages, 3 + STATEMENT_PAGES)
        self._covers: dict[str, int | None] = {}
        self._texts: dict[str, list[str]] | None = None  # every page of each document, read when first named
        self._said: dict[str, str | None] = {}

    def cover(self, doc_id: str) -> int | None:
        """The month a document's cover says its fiscal year ends in (``None``: not a filing, or not said)."""
        if doc_id not in self._covers:
            texts = [p.text or "" for p in self._pages.get(doc_id, ())]
            cover = read_cover(texts[:3], statements=texts[3:]) if texts else None
            self._covers[doc_id] = cover.fiscal_year_end if cover is not None and cover.form else None
        return self._covers[doc_id]

    def _entity(self, doc_id: str) -> str | None:
        pages = self._pages.get(doc_id, ())
        named = getattr(self.resolver, "passage_entity", None)
        return named(pages[0]) if pages and named is not None else None

    def __call__(self, doc_id: str) -> int | None:
        """The month a document's fiscal year ends in: its cover's, else the one most of its entity's other
        documents' covers give (the earliest month on a tie), else ``None``."""
        own = self.cover(doc_id)
        entity = self._entity(doc_id) if own is None else None
        if entity is None:
            return own
        months = [self.cover(d) for d in self._pages if d != doc_id and self._entity(d) == entity]
        counts = {m: months.count(m) for m in months if m is not None}
        return min(counts, key=lambda m: (-counts[m], m)) if counts else None

    def said(self, doc_id: str) -> str | None:
        """How a document's own pages name a fiscal year (:func:`~aethel_lite.data.fiscal.year_naming` in its
        calendar); ``None``: they do not say, or its calendar is unknown."""
        if doc_id not in self._said:
            if self._texts is None:
                self._texts = {}
                for p in self._passages:
                    self._texts.setdefault(p.doc_id, []).append(p.text or "")
            fy_end = self(doc_id)
            self._said[doc_id] = year_naming(self._texts.get(doc_id, ()), fy_end) if fy_end else None
        return self._said[doc_id]

    def named_by(self, doc_id: str) -> str:
        """How a document's filer names a fiscal year: what its pages say, else what most of its entity's other
        documents say (a tie: ``"end"``), else ``"end"``."""
        own = self.said(doc_id)
        if own is not None:
            return own
        entity = self._entity(doc_id)
        if entity is None:
            return "end"
        votes = [self.said(d) for d in self._pages if d != doc_id and self._entity(d) == entity]
        return "start" if votes.count("start") > votes.count("end") else "end"
