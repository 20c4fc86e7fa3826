r"""Question-side entity linking: which graph entities a question names.

A question's entity keys are the extractor's mentions in it plus every name of a :class:`NameIndex` (the graph's
entities and, when BCT uses an alias table, the table's names) that occurs in the normalised question as a
whole-token n-gram containing a word written with a capital letter or a digit ("3M", "NRCP IV"; not "capital"),
other than a sentence-initial function word (:func:`named_ngrams`).

The extractor's mentions of a question can be shared by every retriever of a process that uses the same extractor
settings (:data:`QUESTION_MENTIONS`, a :class:`~aethel_lite.caching.memo.TextMemo`); the results are the same either way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from ..caching.memo import TextMemo
from ..core.entities import REGEX_STOP, normalize_entity

__all__ = ["NameIndex", "QUESTION_MENTIONS", "proper_tokens", "named_ngrams", "question_mentions", "link"]

#: process-wide memo of the extractor's mentions of a question, keyed by the extractor's settings
QUESTION_MENTIONS = TextMemo("question mentions", 100_000)


@dataclass(frozen=True)
class NameIndex:
    """Normalised names a question can name verbatim, and the n-gram lengths to look for."""

    names: frozenset
    sizes: tuple[int, ...]

    @classmethod
    def of(cls, names: Iterable[str]) -> NameIndex:
        """The index of ``names`` (empty names dropped)."""
        kept = frozenset(n for n in names if n)
        return cls(kept, tuple(sorted({len(n.split()) for n in kept})))


def proper_tokens(text: str) -> frozenset[str]:
    """Normalised words of ``text`` written with a capital letter or a digit, minus function words (``REGEX_STOP``)."""
    out: set[str] = set()
    for raw in text.split():
        word = raw.strip(".,;:!?()[]{}\"'“”‘’")
        if word and word not in REGEX_STOP and any(c.isupper() or c.isdigit() for c in word):
            out.update(normalize_entity(word).split())
    return frozenset(out)


def named_ngrams(text: str, index: NameIndex) -> list[str]:
    """The names of ``index`` that occur in ``text`` as whole-token n-grams with a capitalised or numeric word."""
    tokens = normalize_entity(text).split()
    proper = proper_tokens(text)
    out = []
    for n in index.sizes:
        for i in range(len(tokens) - n + 1):
            gram = " ".join(tokens[i : i + n])
            if gram in index.names and any(t in proper for t in tokens[i : i + n]):
                out.append(gram)
    return out


def question_mentions(extractor, text: str, *, memo: bool = False) -> list:
    """The extractor's mentions of one question (from :data:`QUESTION_MENTIONS` when ``memo``)."""
    if not memo:
        return extractor.extract([text], progress=False)[0]
    key = json.dumps(extractor.config(), sort_keys=True, default=str)
    found = QUESTION_MENTIONS.map(
        key, [text], lambda todo: [tuple(ms) for ms in extractor.extract(todo, progress=False)]
    )
    return list(found[0])


def link(text: str, mentions: Iterable, index: NameIndex | None) -> dict[str, str]:
    """Each normalised entity key of a question → ``"mention"`` (the extractor found it) or ``"ngram"``
    (:func:`named_ngrams` over ``index`` found it; ``index`` None: mentions only), mentions first."""
    keys = {m.key: "mention" for m in mentions if m.key}
    if index is not None:
        for gram in named_ngrams(text, index):
            keys.setdefault(gram, "ngram")
    return keys
