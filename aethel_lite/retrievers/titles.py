r"""A paragraph's title as its entity: title keys, title mentions in text, and the mention graph.

In an encyclopaedia corpus (2Wiki, MuSiQue) each paragraph has a title that names what it is about
("Forbidden Ground", "Pál Gábor"), and other paragraphs name it in their text ("a Hungarian film directed
by Pál Gábor"). Two structures follow, both learned from the passages alone:

* **title keys**: a title's lower-cased word sequence :math:`w(t)` (``\w+`` tokens) maps to the passages
  that carry it; a question *names* a passage when a maximal word span of the question is one of its keys
  (a span inside a longer matching span does not count). A trailing disambiguator in parentheses
  ("The Zone (2017 film)") is also a key without it ("The Zone"), for questions only;
* the **mention graph**: an undirected edge joins passages :math:`i` and :math:`j` when the text of one names
  the other's full title (a maximal span, as above) and :math:`i \ne j`; every edge has weight 1.

The mention graph is the bridge of a two-hop question: the first paragraph ("Forbidden Ground") names the
second ("Pál Gábor") in its text, so a random walk from the first reaches the second in one step.

References
----------
Gutiérrez et al., "From RAG to Memory: Non-Parametric Continual Learning for Large Language Models"
(HippoRAG 2), ICML 2025 — passage nodes in the graph beside entity nodes.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import DataError
from ..io import read_json_shaped

__all__ = [
    "MAX_TITLE_WORDS",
    "TITLES_FILE",
    "title_words",
    "title_keys",
    "named_spans",
    "named_passages",
    "mention_graph",
    "save_titles",
    "load_titles",
]

#: The index part of ``aethel-multihop``: the passages' titles and the mention graph's edges.
TITLES_FILE = "titles.json"

#: Longest title, in words, that is looked up (longer titles are never matched).
MAX_TITLE_WORDS = 12

_WORD = re.compile(r"\w+")
_DISAMBIGUATOR = re.compile(r"\s*\([^)]*\)\s*$")


def title_words(text: str) -> tuple[str, ...]:
    """The lower-cased ``\\w+`` words of ``text`` (the form in which titles are matched)."""
    return tuple(_WORD.findall(text.lower()))


def title_keys(titles: Sequence[str], *, disambiguators: bool = False) -> dict[tuple[str, ...], list[int]]:
    """Each title's words → the indices of the passages with that title (in corpus order).

    Parameters
    ----------
    titles : sequence of str
        One title per passage (``""``: none).
    disambiguators : bool
        Also key each title without a trailing ``(...)`` ("The Zone (2017 film)" → "the zone").

    Returns
    -------
    dict
        Word tuple of 1 to :data:`MAX_TITLE_WORDS` words → sorted passage indices.
    """
    keys: dict[tuple[str, ...], list[int]] = {}
    for i, title in enumerate(titles):
        forms = {title_words(title)}
        if disambiguators:
            forms.add(title_words(_DISAMBIGUATOR.sub("", title)))
        for words in forms:
            if 0 < len(words) <= MAX_TITLE_WORDS:
                keys.setdefault(words, []).append(i)
    return keys


def named_spans(words: Sequence[str], keys: Mapping[tuple[str, ...], object]) -> list[tuple[int, int]]:
    """The maximal spans ``(start, end)`` of ``words`` that are keys: every span that is a key and lies inside
    no longer span that is one, in order of ``start``."""
    words = tuple(words)
    found = [
        (a, a + n)
        for a in range(len(words))
        for n in range(1, min(MAX_TITLE_WORDS, len(words) - a) + 1)
        if words[a : a + n] in keys
    ]
    return [(a, b) for a, b in found if not any(c <= a and b <= d and d - c > b - a for c, d in found)]


def named_passages(text: str, keys: Mapping[tuple[str, ...], Sequence[int]]) -> list[int]:
    """The passages whose title ``text`` names (:func:`named_spans`), sorted, each once."""
    words = title_words(text)
    return sorted({i for a, b in named_spans(words, keys) for i in keys[words[a:b]]})


def mention_graph(titles: Sequence[str], texts: Iterable[str]) -> sp.csr_matrix:
    """The undirected mention graph of the passages (module docstring).

    Parameters
    ----------
    titles : sequence of str
        Each passage's title.
    texts : iterable of str
        Each passage's text (without its title), in the same order.

    Returns
    -------
    scipy.sparse.csr_matrix, shape (n, n), float64
        Symmetric 0/1 adjacency, no self loops, sorted indices.
    """
    keys = title_keys(titles)
    rows: list[int] = []
    cols: list[int] = []
    for i, text in enumerate(texts):
        for j in named_passages(text, keys):
            if j != i:
                rows.append(i)
                cols.append(j)
    return _undirected(rows, cols, len(titles))


def _undirected(rows, cols, n: int) -> sp.csr_matrix:
    """The symmetric 0/1 CSR adjacency (sorted indices) with an edge for each ``(rows[e], cols[e])``."""
    a = sp.coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n)).tocsr()
    a = ((a + a.T) > 0).astype(np.float64).tocsr()
    a.sort_indices()
    return a


def save_titles(path: str | os.PathLike, titles: Sequence[str], graph: sp.csr_matrix) -> None:
    """Write the titles (corpus order) and the mention graph's edges ``i < j`` as JSON; :func:`load_titles` reads it."""
    upper = sp.triu(graph, k=1).tocoo()
    order = np.lexsort((upper.col, upper.row))
    doc = {
        "format": 1,
        "titles": list(titles),
        "edges": [[int(upper.row[e]), int(upper.col[e])] for e in order],
    }
    Path(path).write_text(json.dumps(doc, ensure_ascii=False) + "\n", encoding="utf-8")


def load_titles(path: str | os.PathLike, n: int) -> tuple[list[str], sp.csr_matrix]:
    """The titles and mention graph :func:`save_titles` wrote for a corpus of ``n`` passages; DataError (the file
    named) when it is malformed or does not fit ``n`` passages."""
    doc = read_json_shaped(path, {"format": int, "titles": [str], "edges": [(int, int)]}, "titles")
    try:
        titles = doc["titles"]
        edges = np.asarray(doc["edges"], dtype=np.int64).reshape(-1, 2)
        if (
            doc.get("format") != 1
            or len(titles) != n
            or (edges.size and not (0 <= edges.min() and edges.max() < n))
        ):
            raise ValueError(f"expected format 1, {n} titles and edges between them")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{path}: unreadable titles ({exc})") from None
    return titles, _undirected(edges[:, 0], edges[:, 1], n)
