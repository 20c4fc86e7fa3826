"""Entity mentions, the normalisation of their keys, and the regex extractor (*Aethel-Reg*).

:mod:`aethel_lite.core.entities` describes the extractors and gathers them with the cache.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..caching.store import config_fingerprint
from ..errors import ParameterError

__all__ = [
    "Mention",
    "LEGAL_SUFFIXES",
    "NORMALIZATION_VERSION",
    "normalize_entity",
    "normalization_fingerprint",
    "REGEX_STOP",
    "RegexExtractor",
]


@dataclass(frozen=True)
class Mention:
    """One entity mention.

    Attributes
    ----------
    text : str
        The surface form, exactly ``source_text[start:end]``.
    key : str
        ``normalize_entity(text)``: the entity's node name in the graph.
    label : str
        ``"REGEX"`` or a spaCy label (``ORG``, ``GPE``, ``PERSON`` ...).
    start, end : int
        Character offsets into the source text.
    """

    text: str
    key: str
    label: str
    start: int
    end: int


LEGAL_SUFFIXES = frozenset(
    "inc incorporated corp corporation co ltd limited llc llp lp plc na sa ag nv bv gmbh".split()
)
_TRAILING_JUNK = frozenset({"&", "and"})
_POSSESSIVE = re.compile(r"['’]s\b")
_NON_WORD = re.compile(r"[^\w&\s]+")
_UNDERSCORE = re.compile(r"_+")
#: Version of :func:`normalize_entity`'s code; bump it when the steps change (the word lists and
#: patterns are fingerprinted directly by :func:`normalization_fingerprint`).
NORMALIZATION_VERSION = 1


def normalize_entity(text: str) -> str:
    """Normalise an entity surface form to its graph key.

    Steps: Unicode NFKC and casefold; drop possessive ``'s``; delete periods and apostrophes
    (``"L.P." -> "lp"``, ``"U.S." -> "us"``); every other punctuation character except ``&``
    becomes a space; drop leading ``"the"`` and trailing legal suffixes (:data:`LEGAL_SUFFIXES`:
    inc, corp, co, ltd, llc, lp, plc, na, sa, ag ...), repeatedly, together with a dangling
    ``&``/``and``, but never the last remaining token; collapse whitespace. A key that is only a
    legal suffix, ``the`` or ``&`` becomes ``""`` (no entity). Idempotent.

    Examples
    --------
    >>> normalize_entity("NorthRiver Capital Partners IV, L.P.")
    'northriver capital partners iv'
    >>> normalize_entity("The Boeing Company's")
    'boeing company'
    >>> normalize_entity("J.P. Morgan & Co.")
    'jp morgan'
    """
    s = unicodedata.normalize("NFKC", text).casefold()
    s = _POSSESSIVE.sub("", s)
    s = s.replace(".", "").replace("'", "").replace("’", "")
    s = _NON_WORD.sub(" ", s)
    s = _UNDERSCORE.sub(" ", s)
    tokens = s.split()
    changed = True
    while changed and len(tokens) > 1:
        changed = False
        if tokens[0] == "the":
            tokens.pop(0)
            changed = True
        if len(tokens) > 1 and (tokens[-1] in LEGAL_SUFFIXES or tokens[-1] in _TRAILING_JUNK):
            tokens.pop()
            changed = True
    if len(tokens) == 1 and (
        tokens[0] in LEGAL_SUFFIXES or tokens[0] in _TRAILING_JUNK or tokens[0] == "the"
    ):
        return ""  # a bare "Inc." or "the" names nothing
    return " ".join(tokens)


def normalization_fingerprint() -> str:
    """Hex SHA-256 of everything :func:`normalize_entity`'s output depends on: the code's
    :data:`NORMALIZATION_VERSION`, the word lists, the regular expressions and the Unicode database
    version, read at call time (so cached keys never go stale)."""
    return config_fingerprint(
        {
            "version": NORMALIZATION_VERSION,
            "legal_suffixes": sorted(LEGAL_SUFFIXES),
            "trailing_junk": sorted(_TRAILING_JUNK),
            "patterns": [[rx.pattern, rx.flags] for rx in (_POSSESSIVE, _NON_WORD, _UNDERSCORE)],
            "unicode": unicodedata.unidata_version,
        }
    )


_TOKEN = re.compile(r"(?:[^\W\d_]\.){2,}|[^\W_](?:[\w'’&.\-]*[^\W_])?|&")
_GAP = re.compile(r"[ \t]*")
_CONNECTORS = frozenset(
    {"of", "the", "and", "&", "for", "de", "du", "del", "la", "le", "von", "van", "der", "y"}
)
_ABBREV = frozenset({"Inc", "Corp", "Co", "Ltd", "Jr", "Sr", "St", "Bros", "Mt", "Ft"})
_ENDERS = frozenset({"Inc", "Corp", "Co", "Ltd", "Jr", "Sr", "Bros", "LLC", "PLC", "L.P", "N.A"})
REGEX_STOP = frozenset(
    """A An The This That These Those It Its We Our Us They Their Them He She His Her I If In On At
    For By With From To Of As And Or But So Not No Nor Yes When While Where Which Who Whom Whose What
    Why How Although Though However Therefore Thus Also After Before During Since Until Under Over
    Into Upon Each All Any Some Such Both Other Another Many Most More Much Few There Here Then Than
    Because Despite Unless Whether Per Among Between Within Without Through About Above Below
    According Following Including Included Additionally Furthermore Moreover Meanwhile Today
    Yesterday Tomorrow Mr Mrs Ms Dr
    January February March April May June July August September October November December
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday""".split()
)


class RegexExtractor:
    """Capitalised-span extractor (*Aethel-Reg*; the rules are in :mod:`aethel_lite.core.entities`).

    Parameters
    ----------
    stop_words : iterable of str, optional
        Leading words cut from spans (case-sensitive); default :data:`REGEX_STOP`.
    """

    name = "regex"
    label = "REGEX"
    #: every label this extractor gives (stored cache entries with another label are rejected)
    labels = frozenset({"REGEX"})
    _rules_version = 1

    def __init__(self, stop_words: Iterable[str] | None = None) -> None:
        self.stop_words = frozenset(REGEX_STOP if stop_words is None else stop_words)
        self.max_df: float | None = None
        self.link_substrings = False

    def config(self) -> dict:
        return {"name": self.name, "rules": self._rules_version, "stop_words": sorted(self.stop_words)}

    def __repr__(self) -> str:
        return "RegexExtractor()"

    def extract(
        self, texts: Sequence[str], *, n_process: int = 1, progress: bool = False
    ) -> list[list[Mention]]:
        """Mentions of every text (``n_process`` is accepted for interface parity and ignored)."""
        texts = _check_texts(texts)
        from tqdm.auto import tqdm

        return [self._one(t) for t in tqdm(texts, desc="regex entities", disable=not progress)]

    def _tokens(self, text: str) -> list[tuple[int, int, str]]:
        out = []
        for m in _TOKEN.finditer(text):
            start, end = m.span()
            tok = m.group()
            if tok[0].isupper():
                # possessive ends the token: "Apple's" -> "Apple"
                if len(tok) > 2 and tok[-2] in "'’" and tok[-1] in "sS":
                    end -= 2
                elif tok in _ABBREV and text[end : end + 1] == ".":
                    end += 1
                kind = "cap"
            elif tok.isdigit():
                kind = "num"
            elif tok in _CONNECTORS:
                kind = "conn"
            else:
                kind = "other"
            out.append((start, end, kind))
        return out

    def _one(self, text: str) -> list[Mention]:
        mentions: list[Mention] = []
        span: list[tuple[int, int, str]] = []
        prev_end = -1
        n_conn = 0

        def close() -> None:
            nonlocal span, n_conn
            toks = span
            span, n_conn = [], 0
            # cut leading stop words / connectors / numbers
            while toks and (
                toks[0][2] != "cap" or text[toks[0][0] : toks[0][1]].rstrip(".") in self.stop_words
            ):
                toks = toks[1:]
            # cut trailing connectors and long numbers
            while toks and (
                toks[-1][2] == "conn" or (toks[-1][2] == "num" and toks[-1][1] - toks[-1][0] > 3)
            ):
                toks = toks[:-1]
            if not toks:
                return
            start, end = toks[0][0], toks[-1][1]
            surface = text[start:end]
            key = normalize_entity(surface)
            if key:
                mentions.append(Mention(surface, key, self.label, start, end))

        for start, end, kind in self._tokens(text):
            if span:
                joined = _GAP.fullmatch(text, prev_end, start) is not None
                if (
                    joined
                    and kind == "cap"
                    and text[prev_end - 1] == "."
                    and text[start:end] in self.stop_words
                ):
                    joined = False  # "... the U.S. The company": a sentence ended
                if not joined:
                    close()
            if kind == "cap":
                if n_conn > 1 and any(text[a:b] in ("and", "&") for a, b, k in span[-n_conn:]):
                    close()  # "and"/"&" joins only on its own: "Gamble and the NRCP" splits
                span.append((start, end, kind))
                n_conn = 0
            elif kind in ("num", "conn") and span:
                n_conn = n_conn + 1 if kind == "conn" else 0
                if n_conn > 2:
                    close()
                else:
                    span.append((start, end, kind))
            elif span:
                close()
            prev_end = end
            if span and kind == "cap" and text[start:end].rstrip(".") in _ENDERS:
                close()  # "Apple Inc." ends a name
        if span:
            close()
        return mentions


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise ParameterError("texts: expected a sequence of strings, got a single str")
    texts = list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise ParameterError(f"texts[{i}]: expected str, got {type(t).__name__}")
    return texts


def _token_runs(tokens: list[str]):
    """Every contiguous run of ``tokens`` but all of them, joined by spaces (by start, then length)."""
    n = len(tokens)
    return (" ".join(tokens[i:j]) for i in range(n) for j in range(i + 1, n + 1) if j - i < n)


def _check_n_process(n_process: int) -> int:
    try:
        n = int(n_process)
    except (TypeError, ValueError):
        raise ParameterError(f"n_process must be a positive int, got {n_process!r}") from None
    if n < 1:
        raise ParameterError(f"n_process must be >= 1, got {n_process}")
    return n
