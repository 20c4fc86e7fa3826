r"""The statement pages of a corpus and the words of their rows: what ``aethel-statements`` matches a question's line
item against (:mod:`aethel_lite.retrievers.statements` gives the method and its formulas).

:class:`StatementPages` reads, from the corpus alone (no question takes part), which passages are statement pages
(:func:`~aethel_lite.data.statements.statement_kind`), the words of each one's row labels
(:func:`~aethel_lite.data.statements.row_labels`; :func:`~aethel_lite.data.line_items.words`), each word's weight (its inverse document frequency
over the statement pages' row labels) and the line items a question can name; it saves itself as
``statements.json`` (an index part) and loads back.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ..errors import DataError, ParameterError
from ..io import read_json_shaped
from .line_items import item_words, named_items, words
from .statements import row_labels, statement_kind

__all__ = ["STATEMENTS_FILE", "StatementPages"]

#: the index part :meth:`StatementPages.save` writes
STATEMENTS_FILE = "statements.json"

#: what :meth:`StatementPages.load` accepts (:func:`~aethel_lite.io.read_json_shaped`)
_SHAPE = {
    "min_docs": int,
    "min_word": float,
    "order": str,
    "pages": [{"pid": str, "doc_id": str, "kind": str, "rows": [[str]]}],
}


class StatementPages:
    """The statement pages of a corpus and the words of their rows (module docstring).

    Parameters
    ----------
    min_docs : int
        A row label is a line item when the statement pages of this many documents have it.
    min_word : float
        The least weight of a one-word line item.
    order : {"match", "anchor"}
        How :func:`~aethel_lite.retrievers.statements.statements_first` orders the lifted pages: by their match, best first (a tie: the anchor's
        order), or, an ablation, every statement page of the filing in the anchor's own order.

    Attributes
    ----------
    kind_ : dict
        Passage index → statement (``"balance"``, ``"income"``, ``"cashflow"``), statement pages only.
    labels_ : dict
        Passage index → the word sets of its row labels, statement pages only.
    weight_ : dict
        Word → :math:`w_t`.
    items_ : list of frozenset
        The line items a question can name (module docstring), as word sets.
    by_doc_ : dict
        ``doc_id`` → its statement pages' indices, in corpus order.
    doc_of_ : dict
        Passage index → ``doc_id``, statement pages only.
    """

    def __init__(self, min_docs: int = 2, min_word: float = 1.0, order: str = "match"):
        if order not in ("match", "anchor"):
            raise ParameterError(f"order must be 'match' or 'anchor'; got {order!r}")
        self.min_docs, self.min_word, self.order = min_docs, min_word, order

    def fit(self, passages: Sequence) -> StatementPages:
        """Read every passage's statement kind and its statement pages' row labels; weigh the words."""
        pages = []
        for i, p in enumerate(passages):
            kind = statement_kind(p.text)
            if kind is not None:
                rows = tuple(dict.fromkeys(w for w in map(words, row_labels(p.text)) if w))
                pages.append((i, p.doc_id, kind, rows))
        return self._learn(pages)

    def _learn(self, pages: Sequence[tuple[int, str, str, tuple]]) -> StatementPages:
        """The fitted attributes from the statement pages ``(index, doc_id, kind, row word sets)``."""
        labels = {i: rows for i, _, _, rows in pages}
        n_t = Counter(t for rows in labels.values() for t in set().union(*rows))
        n = len(labels)
        weight = {t: math.log((n + 1) / (c + 1)) for t, c in n_t.items()}
        docs: dict[frozenset, set] = {}
        by_doc: dict[str, list[int]] = {}
        for i, doc_id, _, rows in pages:
            by_doc.setdefault(doc_id, []).append(i)
            for L in rows:
                docs.setdefault(L, set()).add(doc_id)
        self.kind_ = {i: kind for i, _, kind, _ in pages}
        self.labels_, self.weight_ = labels, weight
        self.items_ = sorted(
            (
                L
                for L, ds in docs.items()
                if len(ds) >= self.min_docs and (len(L) >= 2 or weight[next(iter(L))] >= self.min_word)
            ),
            key=sorted,
        )
        self.by_doc_ = {d: tuple(ix) for d, ix in by_doc.items()}
        self.doc_of_ = {i: doc_id for i, doc_id, _, _ in pages}
        return self

    def save(self, path: str | os.PathLike, pids: Sequence[str]) -> None:
        """Write the statement pages as JSON (``pids``: the corpus's passage ids, for the pages' own): the settings and,
        per page, its pid, document, statement and row labels' words; what :meth:`load` reads back."""
        rows = [
            {
                "pid": pids[i],
                "doc_id": self.doc_of_[i],
                "kind": self.kind_[i],
                "rows": [sorted(L) for L in labels],
            }
            for i, labels in sorted(self.labels_.items())
        ]
        doc = {
            "format": 1,
            "min_docs": self.min_docs,
            "min_word": self.min_word,
            "order": self.order,
            "pages": rows,
        }
        Path(path).write_text(json.dumps(doc, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike, pids: Sequence[str]) -> StatementPages:
        """The statement pages :meth:`save` wrote, over the corpus with passage ids ``pids``; DataError (the file
        named) when it is malformed or names a passage the corpus does not have."""
        index = {pid: i for i, pid in enumerate(pids)}
        doc = read_json_shaped(path, _SHAPE, "statement pages")
        unknown = next((p["pid"] for p in doc["pages"] if p["pid"] not in index), None)
        if unknown is not None:
            raise DataError(f"{path}: names passage {unknown!r}, which the index does not hold")
        try:
            r = cls(min_docs=doc["min_docs"], min_word=float(doc["min_word"]), order=doc["order"])
        except ParameterError as exc:
            raise DataError(f"{path}: unreadable statement pages ({exc})") from None
        pages = [
            (index[p["pid"]], p["doc_id"], p["kind"], tuple(frozenset(L) for L in p["rows"]))
            for p in doc["pages"]
        ]
        return r._learn(pages)

    @staticmethod
    def question_words(text: str, meanings: bool = False) -> frozenset[str]:
        """The words a question's line items are matched with: its own and, with ``meanings``, every phrasing of the
        line items it names (:func:`~aethel_lite.data.line_items.named_items`: "income from operations" brings
        "operating income")."""
        q = words(text)
        return q | item_words(named_items(q)) if meanings else q

    def names_item(self, text: str, meanings: bool = False) -> bool:
        """Whether the question names a line item (module docstring; ``meanings``: :meth:`question_words`)."""
        q = self.question_words(text, meanings)
        return any(L <= q for L in self.items_)

    def match(self, text: str, indices: Sequence[int], meanings: bool = False) -> dict[int, float]:
        """:math:`m(d)` of each statement page among ``indices`` (other passages are left out; ``meanings``:
        :meth:`question_words`)."""
        q, w = self.question_words(text, meanings), self.weight_
        out = {}
        for i in indices:
            best = 0.0
            for L in self.labels_.get(i, ()):
                total = sum(w[t] for t in L)
                if total > 0:
                    best = max(best, sum(w[t] for t in L & q) / math.sqrt(total))
            if i in self.labels_:
                out[i] = best
        return out
