"""Entity extraction: the entity nodes of the passage–entity graph.

Three extractors share one interface (``name``, ``max_df``, ``link_substrings``, ``config()``,
``extract(texts, n_process=, progress=)``) and return, per text, a list of :class:`Mention` with
``key`` = :func:`normalize_entity` (``text``), the node name (mentions with an empty key are dropped),
and exact character offsets ``start``/``end``.

``"regex"`` (*Aethel-Reg* in the paper; :mod:`aethel_lite.core.mentions`)
    Runs of capitalised words (``"Bank of America"``, acronyms, ``"U.S."``) joined by at most two
    lower-case connectors (``and``/``&`` only alone: ``"Apple and Microsoft"`` is one span,
    ``"Apple and the SEC"`` two) and by numbers (never first; last only with at most 3 digits).
    Spans never cross punctuation or a line break; leading stop words (``The``, months ...) are cut.
``"ner"`` (:mod:`aethel_lite.core.ner`)
    spaCy ``en_core_web_sm`` named entities (only the ``ner`` component). Texts longer than
    ``max_chars`` are split at a line break (else whitespace); an entity crossing a cut is lost.
``"ner3"`` (the paper's filtered NER)
    ``ner`` without numeric and temporal labels and keys of one character or without a letter;
    ``max_df`` marks stop-entities, ``link_substrings`` asks for :func:`substring_links` alias edges.

:func:`extract_entities` caches mentions per passage in a :class:`~aethel_lite.caching.store.PassageStore`
per extractor configuration (:func:`entity_store_config`); ``ner3`` is filtered from the stored ``ner``.
"""

from __future__ import annotations

import json
import math
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ..caching.locations import cache_dir
from ..caching.memo import TextMemo
from ..caching.store import FLUSH_EVERY, PassageStore, compute_missing, config_fingerprint, text_key
from ..errors import ParameterError
from .mentions import (
    LEGAL_SUFFIXES,
    NORMALIZATION_VERSION,
    REGEX_STOP,
    Mention,
    RegexExtractor,
    _check_n_process,
    _check_texts,
    _token_runs,
    normalization_fingerprint,
    normalize_entity,
)
from .ner import Ner3Extractor, SpacyNerExtractor

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
    "LEGAL_SUFFIXES",
    "REGEX_STOP",
]

_STORED_MENTIONS = TextMemo("stored mentions", 200_000)  # see extract_entities(memo=True)
EXTRACTORS = {"regex": RegexExtractor, "ner": SpacyNerExtractor, "ner3": Ner3Extractor}


def get_extractor(name: str, **kwargs: Any):
    """The extractor called ``name`` (``"regex"``, ``"ner"`` or ``"ner3"``), built with ``kwargs``; an
    extractor object (anything with ``extract`` and ``config``) is returned unchanged."""
    if not isinstance(name, str):
        if hasattr(name, "extract") and hasattr(name, "config"):
            return name
        raise ParameterError(f"extractor: expected a name or an extractor, got {type(name).__name__}")
    try:
        cls = EXTRACTORS[name]
    except KeyError:
        raise ParameterError(
            f"extractor: unknown name {name!r}; valid names: {', '.join(EXTRACTORS)}"
        ) from None
    return cls(**kwargs)


_VALUE_FORMAT = 1  # layout of one stored value: JSON [[text, key, label, start, end], ...]


def entity_store_config(extractor: Any) -> dict:
    """Everything that changes an extractor's stored mentions (the :class:`PassageStore` config): its
    ``config()``, the :func:`normalization_fingerprint` and the layout of a stored value."""
    return {
        "value_format": _VALUE_FORMAT,
        "extractor": extractor.config(),
        "normalization": normalization_fingerprint(),
    }


def entity_store(extractor: Any = "ner", *, root: Any = None) -> PassageStore:
    """The per-passage mention store of an extractor (``ner3`` uses its ``ner`` store), configured by
    :func:`entity_store_config`. Close it after use (it is a context manager)."""
    extractor = get_extractor(extractor)
    if isinstance(extractor, Ner3Extractor):
        extractor = extractor.ner
    name = str(getattr(extractor, "name", "") or type(extractor).__name__)
    return PassageStore("entities", name, entity_store_config(extractor), root=root)


def _encode_mentions(mentions: Sequence[Mention]) -> bytes:
    rows = [[m.text, m.key, m.label, m.start, m.end] for m in mentions]
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _decode_mentions(value: bytes, text: str, labels: frozenset | None, memo: dict) -> list[Mention]:
    """Mentions of one stored value; ValueError (with a reason) unless each has ``text[start:end] ==
    surface``, key ``normalize_entity(surface)`` and (if ``labels`` is given) a label in ``labels``.
    ``memo`` caches normalised surfaces across calls."""
    try:
        rows = json.loads(bytes(value).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"unreadable ({type(exc).__name__}: {exc})") from exc
    if not isinstance(rows, list):
        raise ValueError(f"expected a list of mentions, got {type(rows).__name__}")
    out = []
    for row in rows:
        if type(row) is not list or [type(x) for x in row] != [str, str, str, int, int]:
            raise ValueError(f"malformed mention {row!r}")
        surface, key, label, start, end = row
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


def _stored_mentions(
    store: PassageStore, texts: dict[str, str], labels: frozenset | None = None
) -> dict[str, list[Mention]]:
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
        warnings.warn(
            f"{store.path}: {len(bad)} corrupt entity cache entries (first: {bad[0]}); recomputing them",
            RuntimeWarning,
            stacklevel=3,
        )
    return found


def extract_entities(
    texts: Sequence[str],
    extractor: Any = "ner3",
    *,
    cache: bool = True,
    n_process: int = 1,
    progress: bool = True,
    memo: bool = False,
) -> list[list[Mention]]:
    """Entity mentions of every text, cached per passage on disk.

    Parameters
    ----------
    texts : sequence of str
    extractor : str or extractor
        A name for :func:`get_extractor` or an extractor object.
    cache : bool
        Look every text up in the extractor's :func:`entity_store`, run the extractor only on the
        misses (each distinct text once) and store their mentions as they come. A stored entry
        that is unreadable or does not fit its text is reported with a warning and recomputed.
    n_process : int
        spaCy worker processes (identical results to ``n_process=1``).
    progress : bool
        Show a tqdm bar of the distinct texts.
    memo : bool
        With ``cache``, keep the decoded mentions in a process-wide memo
        (:mod:`aethel_lite.caching.memo`, keyed by the store's folder and fingerprint).

    Returns
    -------
    list of list of Mention
        ``result[i]`` are the mentions of ``texts[i]`` in text order.
    """
    extractor = get_extractor(extractor)
    texts = _check_texts(texts)
    n_process = _check_n_process(n_process)
    if not texts:
        return []
    if isinstance(extractor, Ner3Extractor):
        base = extract_entities(
            texts, extractor.ner, cache=cache, n_process=n_process, progress=progress, memo=memo
        )
        return extractor.filter(base)
    if not cache:
        return extractor.extract(texts, n_process=n_process, progress=progress)
    if (
        memo
    ):  # keyed by the store's folder and configuration (what decides a stored entry), without opening it
        settings = f"{cache_dir('store')}\n{config_fingerprint(entity_store_config(extractor))}"
        found = _STORED_MENTIONS.map(
            settings,
            texts,
            lambda todo: [
                tuple(ms)
                for ms in extract_entities(
                    todo, extractor, cache=True, n_process=n_process, progress=progress
                )
            ],
        )
        return [list(ms) for ms in found]
    keys = [text_key(t) for t in texts]
    by_key = dict(zip(keys, texts))
    with entity_store(extractor) as store:
        found = _stored_mentions(store, by_key, getattr(extractor, "labels", None))
        todo = [k for k in by_key if k not in found]
        if todo:

            def compute(group: list[str]) -> list[list[Mention]]:
                new = extractor.extract([by_key[k] for k in group], n_process=n_process, progress=False)
                if len(new) != len(group):
                    raise RuntimeError(
                        f"{extractor!r}.extract returned {len(new)} results for {len(group)} texts"
                    )
                return new

            # spaCy starts its workers anew for every call: with n_process > 1 a call is worth more texts
            flush = FLUSH_EVERY if n_process == 1 else 8 * n_process * FLUSH_EVERY
            found.update(
                compute_missing(
                    store,
                    todo,
                    compute,
                    _encode_mentions,
                    found=len(by_key) - len(todo),
                    flush=flush,
                    progress=progress,
                    what="entities",
                )
            )
    return [list(found[k]) for k in keys]


def query_entities(text: str, extractor: Any = "ner3") -> list[Mention]:
    """Entities of one short text (a question), without caching."""
    if not isinstance(text, str):
        raise ParameterError(f"text: expected str, got {type(text).__name__}")
    return get_extractor(extractor).extract([text])[0]


def stop_entities(
    mentions: Sequence[Sequence[Mention]], max_df: float | None, *, min_count: int = 5
) -> set[str]:
    r"""Keys mentioned in too many passages (stop-entities).

    A key with document frequency :math:`df` (number of passages mentioning it) among
    :math:`N` passages is a stop-entity iff :math:`df > \max(\text{max\_df}\cdot N,\ \text{min\_count})`.

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

    ``shorter`` must be a contiguous run of ``longer``'s whitespace-separated tokens, differ from it,
    and have at least ``min_chars`` characters. Every key's token runs are looked up in a hash set:
    :math:`O(\\sum_k t_k^2)` for keys of :math:`t_k` tokens, never comparing all pairs.

    Returns
    -------
    list of (str, str)
        Sorted, without duplicates.
    """
    if int(min_chars) < 1:
        raise ParameterError(f"min_chars must be >= 1, got {min_chars}")
    norm = {" ".join(str(k).split()) for k in keys}
    norm.discard("")
    pairs = {
        (sub, key)
        for key in norm
        for sub in _token_runs(key.split(" "))
        if len(sub) >= min_chars and sub in norm
    }
    return sorted(pairs)


def graph_filters(
    mentions: Sequence[Sequence[Mention]], extractor: Any
) -> tuple[set[str], list[tuple[str, str]] | None]:
    """``(stop, links)`` for :func:`aethel_lite.core.graph.build_graph`: :func:`stop_entities` with the
    extractor's ``max_df`` and ``min_count``, and :func:`substring_links` of the remaining keys when
    the extractor has ``link_substrings`` (else None)."""
    max_df = getattr(extractor, "max_df", None)
    stop = stop_entities(mentions, max_df, min_count=getattr(extractor, "min_count", 5)) if max_df else set()
    links = None
    if getattr(extractor, "link_substrings", False):
        links = substring_links({m.key for ms in mentions for m in ms} - stop)
    return stop, links
