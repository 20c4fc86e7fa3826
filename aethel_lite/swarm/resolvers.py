"""Entity resolvers for the swarm: which entity a name or a passage is about, and entity linking."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from ..core.entities import Mention, extract_entities, normalize_entity
from ..data.cover import trading_symbols
from ..errors import ParameterError

__all__ = [
    "EntityResolver",
    "AliasResolver",
    "DocumentResolver",
    "LinkingExtractor",
    "link_mentions",
    "document_tickers",
]

_MIN_CHARS = 4  # the shortest key that takes part in AliasResolver.scope's containment rule


class EntityResolver(Protocol):
    """Who a passage talks about: entity ids, their names, their mentions in a text.

    ``has_kinds`` says whether mentions carry entity kinds (fund, gp, company ...); if not,
    :meth:`passage_entity` names the entity of a whole passage.
    """

    has_kinds: bool

    def mentions(self, text: str) -> list[tuple[int, int, str]]:
        """``(start, end, entity id)`` of every entity named in ``text``, in text order."""

    def kind(self, entity: str) -> str:
        """The entity's kind (``"fund"``, ``"gp"``, ``"company"``, ...)."""

    def lookup(self, name: str) -> str | None:
        """The entity a name stands for (any of its surface forms), or ``None``."""

    def keys(self, entity: str) -> list[str]:
        """The entity's normalised names (its alias class), as graph keys."""

    def display(self, entity: str) -> str:
        """The name a memo prints for the entity."""

    def scope(self, entity: str) -> list[str]:
        """The entities whose findings belong in the entity's memo (itself first among them)."""

    def passage_entity(self, passage: Any) -> str | None:
        """The entity a whole passage is about, when the resolver knows it (else ``None``)."""


def link_mentions(mentions: Sequence[Mention], text: str, spans: Iterable[tuple[int, int]]) -> list[Mention]:
    """``mentions`` plus an ``"ALIAS"`` mention of each span of ``text`` (keyed by its normalised text)."""
    extra = [Mention(text[a:b], normalize_entity(text[a:b]), "ALIAS", a, b) for a, b in spans]
    return sorted(list(mentions) + [m for m in extra if m.key], key=lambda m: (m.start, m.end, m.label))


def _contains(a: str, b: str) -> bool:
    """Whether key ``b`` occurs in key ``a`` on token boundaries."""
    return f" {b} " in f" {a} "


class AliasResolver:
    """Entities from an alias table: canonical id → surface forms (the synthetic corpus's ``meta["aliases"]``).

    Kinds are the id's prefix (``"fund:northriver-iv"`` → ``"fund"``). Mentions are the surface
    forms found verbatim on word boundaries, longest first.

    Parameters
    ----------
    aliases : mapping of str to sequence of str
    """

    has_kinds = True

    def __init__(self, aliases: Mapping[str, Sequence[str]]):
        if not isinstance(aliases, Mapping) or not aliases:
            raise ParameterError(
                "AliasResolver: aliases must be a non-empty mapping entity id -> surface forms"
            )
        self.aliases = {
            str(e): sorted({str(s) for s in forms if str(s).strip()}) for e, forms in aliases.items()
        }
        self._by_surface: dict[str, str] = {}
        self._by_key: dict[str, str] = {}
        self._keys: dict[str, list[str]] = {}
        for eid in sorted(self.aliases):
            keys = set()
            for s in self.aliases[eid]:
                self._by_surface.setdefault(s, eid)
                k = normalize_entity(s)
                if k:
                    self._by_key.setdefault(k, eid)
                    keys.add(k)
            self._keys[eid] = sorted(keys)
        surfaces = sorted(self._by_surface, key=lambda s: (-len(s), s))
        self._re = (
            re.compile(r"(?<!\w)(?:" + "|".join(re.escape(s) for s in surfaces) + r")(?!\w)")
            if surfaces
            else None
        )

    def mentions(self, text: str) -> list[tuple[int, int, str]]:
        if self._re is None:
            return []
        return [(m.start(), m.end(), self._by_surface[m.group(0)]) for m in self._re.finditer(text)]

    def kind(self, entity: str) -> str:
        return entity.split(":", 1)[0] if ":" in entity else ""

    def lookup(self, name: str) -> str | None:
        if name in self._by_surface:
            return self._by_surface[name]
        return self._by_key.get(normalize_entity(name))

    def keys(self, entity: str) -> list[str]:
        return list(self._keys.get(entity, ()))

    def display(self, entity: str) -> str:
        forms = self.aliases.get(entity) or [entity]
        return min(forms, key=lambda s: (-len(s), s))

    def scope(self, entity: str) -> list[str]:
        """The entity and every entity one of whose keys (four characters or more) contains one of its keys, or is
        contained in one, on token boundaries (a GP and its funds "NorthRiver IV" ⊃ "NorthRiver")."""
        mine = [k for k in self.keys(entity) if len(k) >= _MIN_CHARS]
        out = {entity}
        for other, keys in self._keys.items():
            if other != entity and any(
                _contains(a, b) or _contains(b, a) for a in keys if len(a) >= _MIN_CHARS for b in mine
            ):
                out.add(other)
        return sorted(out)

    def passage_entity(self, passage: Any) -> str | None:
        return None


def first_passages(passages: Sequence[Any], n: int = 3) -> dict[str, list]:
    """Per document, its first ``n`` passages: smallest ``meta["page"]`` first (passages without a page
    number after those with one), ties in corpus order; documents in order of first appearance."""
    by_doc: dict[str, list] = {}
    for i, p in enumerate(passages):
        meta = p.meta if isinstance(p.meta, Mapping) else {}
        page = meta.get("page")
        known = isinstance(page, int) and not isinstance(page, bool)
        by_doc.setdefault(p.doc_id, []).append((0 if known else 1, page if known else 0, i, p))
    return {d: [t[-1] for t in sorted(rows)[:n]] for d, rows in by_doc.items()}


def document_tickers(passages: Sequence[Any], field: str = "company") -> dict[str, str]:
    """Trading symbol → entity: the symbols each document's cover registers
    (:func:`~aethel_lite.data.cover.trading_symbols` of its first three passages), each the entity of the
    document (``meta[field]``); a symbol that two entities' covers give is left out."""
    found: dict[str, set[str]] = {}
    for pages in first_passages(passages, 3).values():
        entity = next((str(p.meta.get(field)) for p in pages if (p.meta or {}).get(field)), None)
        if entity is None:
            continue
        for symbol in trading_symbols([p.text or "" for p in pages]):
            found.setdefault(symbol, set()).add(entity)
    return {s: next(iter(es)) for s, es in sorted(found.items()) if len(es) == 1}


class DocumentResolver:
    """The entity of a passage is a field of its metadata (FinanceBench: the filing's ``company``).

    A name is looked up as a normalised key, then as a trading symbol its filings' covers register
    ("AAPL" → Apple, :func:`document_tickers`; case aside), then as a name that contains, or is
    contained in, exactly one entity's ("3M Company" → 3M).

    Parameters
    ----------
    passages : sequence of Passage
    field : str
        The ``meta`` key naming the entity.
    tickers : mapping of str to str, optional
        Trading symbol → entity (default: read from the passages, :func:`document_tickers`).
    """

    has_kinds = False

    def __init__(
        self, passages: Sequence[Any], field: str = "company", tickers: Mapping[str, str] | None = None
    ):
        self.field = field
        names = sorted({str(p.meta.get(field)) for p in passages if p.meta.get(field)})
        if not names:
            raise ParameterError(f"DocumentResolver: no passage has meta[{field!r}]")
        self._by_key = {normalize_entity(n): n for n in reversed(names)}  # a key's first name wins
        known = set(names)
        given = document_tickers(passages, field) if tickers is None else tickers
        self.tickers = {str(s).upper(): str(e) for s, e in given.items() if str(e) in known}

    def mentions(self, text: str) -> list[tuple[int, int, str]]:
        return []

    def kind(self, entity: str) -> str:
        return "company"

    def lookup(self, name: str) -> str | None:
        key = normalize_entity(name)
        if not key:
            return None
        if key in self._by_key:
            return self._by_key[key]
        symbol = name.strip().upper()
        if symbol in self.tickers:
            return self.tickers[symbol]
        # "3M Company" names 3M: a unique entity whose key contains, or is contained in, the name's
        hits = sorted(
            {n for k, n in self._by_key.items() if len(k) >= 2 and (_contains(key, k) or _contains(k, key))}
        )
        return hits[0] if len(hits) == 1 else None

    def keys(self, entity: str) -> list[str]:
        return [normalize_entity(entity)]

    def display(self, entity: str) -> str:
        return entity

    def scope(self, entity: str) -> list[str]:
        return [entity]

    def passage_entity(self, passage: Any) -> str | None:
        value = passage.meta.get(self.field)
        return str(value) if value else None


class LinkingExtractor:
    """A graph entity extractor plus entity linking against a resolver's names (an entity master).

    Every surface form the resolver knows that occurs verbatim in a passage becomes a mention
    (label ``"ALIAS"``) beside the base extractor's (read from its per-passage store), so a passage
    whose fund the NER model misses is still joined to the fund. The stop-entity and substring-link
    settings are the base extractor's.

    Parameters
    ----------
    base : extractor
        E.g. ``Ner3Extractor(max_df=None)``.
    resolver : AliasResolver
    """

    name = "linked"

    def __init__(self, base: Any, resolver: AliasResolver):
        self.base = base
        self.resolver = resolver
        self.max_df = getattr(base, "max_df", None)
        self.min_count = getattr(base, "min_count", 5)
        self.link_substrings = getattr(base, "link_substrings", False)

    def config(self) -> dict:
        """JSON-able settings: the base extractor's and a digest of the linked names."""
        names = "\n".join(sorted(self.resolver._by_surface))
        return {
            "name": self.name,
            "base": self.base.config(),
            "names": hashlib.sha256(names.encode("utf-8")).hexdigest(),
        }

    def __repr__(self) -> str:
        return f"LinkingExtractor({self.base!r})"

    def extract(self, texts: Sequence[str], *, n_process: int = 1, progress: bool = False) -> list:
        """Mentions of every text: the base extractor's (from its store) plus the linked names."""
        base = extract_entities(list(texts), self.base, n_process=n_process, progress=progress)
        return [
            link_mentions(ms, text, [(a, b) for a, b, _ in self.resolver.mentions(text)])
            for text, ms in zip(texts, base)
        ]
