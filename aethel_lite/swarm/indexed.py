r"""The memo from an index of the user's own files: what ``aethel memo --index FOLDER`` runs.

Nothing is extracted again: the index holds the passages with their file and page, the spaCy NER
mentions of every passage (``entities-ner.jsonl``, :func:`memo_methods`), from which the graph is
built as :meth:`Orchestrator.fit <aethel_lite.swarm.Orchestrator.fit>` builds it plus the index's
company names (:func:`link_companies`), the BM25 index, and each document's company. A passage's
entity is its document's first company (:func:`index_companies`).
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.entities import Mention, Ner3Extractor, graph_filters, normalize_entity
from ..core.graph import build_graph
from ..data.docmeta import document_metadata, read_docmeta
from ..data.schema import Passage, passage_text
from ..errors import DataError, ParameterError
from ..io import read_jsonl
from ..retrievers import BM25Retriever, GraphRetriever
from ..retrievers.registry import FUSIONS, METHODS, known_methods
from ..search.format import DOCMETA_FILE, read_manifest, rebuild_hint, verify_files
from ..search.reader import SearchIndex
from .memo import passage_location
from .orchestrator import Orchestrator
from .resolvers import DocumentResolver, link_mentions

__all__ = [
    "MEMO_PARTS",
    "memo_methods",
    "check_memo_parts",
    "index_companies",
    "link_companies",
    "index_orchestrator",
    "closest_companies",
    "check_target",
]

#: the index parts the memo reads (besides the passages): spaCy's mentions and BM25
MEMO_PARTS = ("entities-ner", "bm25")
#: the method added to an index's own when the memo asks for a rebuild (the cheapest whose index holds :data:`MEMO_PARTS`)
MEMO_METHOD = "aethel-bct"
#: companies named in the "unknown target" message (closest first)
SHOWN_COMPANIES = 12


def memo_methods() -> list[str]:
    """The methods whose index holds what the memo needs (a graph on spaCy NER: ``ner`` or ``ner3``)."""
    return [
        m
        for m in known_methods()
        if any(
            part in ("graph-ner", "graph-ner3") for b in FUSIONS.get(m, (m,)) for part in METHODS[b].parts()
        )
    ]


def check_memo_parts(index_dir: str | os.PathLike, info: Mapping[str, Any]) -> None:
    """:class:`ParameterError` (one line, with the rebuild command) unless the index holds :data:`MEMO_PARTS`."""
    missing = [p for p in MEMO_PARTS if p not in info["parts"]]
    if not missing:
        return
    methods = list(dict.fromkeys([*info["methods"], MEMO_METHOD]))
    inputs = " ".join(shlex.quote(os.path.abspath(p)) for p in info.get("inputs", [])) or "FILES"
    some = ", ".join(
        m for m in memo_methods() if m in ("aethel-bct", "aethel-ner3", "aethel-ner", "rrf", "aethel-hybrid")
    )
    raise ParameterError(
        f"--index {index_dir}: the memo needs the spaCy entities of every passage ({', '.join(missing)}), which an index "
        f"built with a graph method on spaCy NER holds ({some}, ...); this one was built with --methods "
        f"{','.join(info['methods'])}; rebuild it with `aethel index {inputs} --out "
        f"{shlex.quote(os.path.abspath(index_dir))} --methods {shlex.quote(','.join(methods))}`"
    )


def _name_pattern(key: str, *, possessive: bool = False) -> re.Pattern | None:
    """A company key's words, whole, case aside, up to three non-word characters apart (``johnson &
    johnson`` finds "Johnson & Johnson"); ``possessive``: with a trailing "'s" when there is one."""
    tokens = key.split()
    if not tokens:
        return None
    tail = r"(?:['’]s)?(?!\w)" if possessive else r"(?!\w)"
    return re.compile(r"(?<!\w)" + r"\W{0,3}".join(re.escape(t) for t in tokens) + tail, re.IGNORECASE)


def _surface(key: str, texts: Sequence[str]) -> str:
    """How the documents print a company key: its most frequent spelling, mixed case before capitals
    (a possessive kept: the key ``mcdonald`` is printed "McDonald’s")."""
    rx = _name_pattern(key, possessive=True)
    counts = (
        Counter()
        if rx is None
        else Counter(" ".join(m.group(0).split()) for t in texts for m in rx.finditer(t))
    )
    return min(counts, key=lambda s: (s.isupper() or s.islower(), -counts[s], s)) if counts else key


def index_companies(passages: Sequence[Any], metas: Mapping[str, Any] | None = None) -> dict[str, str]:
    """``doc_id`` → the display name of the document's company (documents without one are left out).

    ``metas`` (``doc_id`` → :class:`~aethel_lite.data.docmeta.DocMeta`) default to
    :func:`~aethel_lite.data.docmeta.document_metadata` of the passages. A company key is printed
    as its documents print it (:func:`_surface`), unless a passage gives ``meta["company"]``.
    """
    metas = document_metadata(passages) if metas is None else metas
    texts: dict[str, list[str]] = {}
    given: dict[str, str] = {}
    for p in passages:
        texts.setdefault(p.doc_id, []).append(passage_text(p))
        name = (p.meta or {}).get("company")
        if name and p.doc_id not in given:
            given[p.doc_id] = str(name)
    keys = {doc: m.companies[0] for doc, m in metas.items() if m.companies}
    by_key: dict[str, list[str]] = {}
    for doc, key in keys.items():
        by_key.setdefault(key, []).extend(texts.get(doc, ()))
    shown = {key: _surface(key, t) for key, t in by_key.items()}
    out = {doc: given.get(doc) or shown[key] for doc, key in keys.items()}
    out.update({doc: name for doc, name in given.items() if doc not in out})
    return out


def _mentions(index: SearchIndex, pids: Sequence[str]) -> list[list[Mention]]:
    """The stored spaCy mentions of every passage (``entities-ner.jsonl``, verified), in corpus order."""
    part = index.info["parts"]["entities-ner"]
    verify_files(index.dir, index.info, part["files"])
    path = index.dir / part["files"][0]
    rows = list(read_jsonl(path))
    if [r.get("pid") for r in rows] != list(pids):
        raise DataError(
            f"{path}: its passages differ from the index's; {rebuild_hint(index.dir, index.info)}"
        )
    try:
        return [[Mention(*m) for m in r["mentions"]] for r in rows]
    except (KeyError, TypeError) as exc:
        raise DataError(
            f"{path}: malformed mentions ({exc!r}); {rebuild_hint(index.dir, index.info)}"
        ) from None


def link_companies(
    passages: Sequence[Any], mentions: Sequence[Sequence[Mention]], companies: Mapping[str, str]
) -> list[list[Mention]]:
    """``mentions`` (one list per passage, over its ``passage_text``) plus an ``"ALIAS"`` mention of every
    company name of ``companies`` found in the passage (:func:`_name_pattern`)."""
    keys = sorted({normalize_entity(n) for n in companies.values()} - {""}, key=lambda k: (-len(k), k))
    patterns = [rx.pattern for rx in map(_name_pattern, keys) if rx is not None]
    names = (
        re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE) if patterns else None
    )  # longest first
    texts = [passage_text(p) for p in passages]
    return [
        link_mentions(ms, text, [] if names is None else [m.span() for m in names.finditer(text)])
        for text, ms in zip(texts, mentions)
    ]


def index_orchestrator(index_dir: str | os.PathLike, **kwargs: Any) -> Orchestrator:
    """An :class:`~aethel_lite.swarm.Orchestrator` fitted from an index folder (see the module docstring).

    ``kwargs`` go to the orchestrator. The result's ``companies_`` maps each document to its
    company's display name; ``index_dir_`` is the folder.

    Raises
    ------
    DataNotFoundError, DataError
        No index at ``index_dir``, or a file that differs from its manifest (named, with the rebuild command).
    ParameterError
        The index lacks :data:`MEMO_PARTS` (the rebuild command is named), or no document names a company.
    """
    info = read_manifest(index_dir)
    check_memo_parts(index_dir, info)
    index = SearchIndex(index_dir)
    stored = list(index.passages)
    pids = [p.pid for p in stored]
    metas = None
    if "docmeta" in info["parts"]:
        verify_files(index.dir, info, info["parts"]["docmeta"]["files"])
        metas = read_docmeta(index.dir / DOCMETA_FILE)
    companies = index_companies(stored, metas)
    if not companies:
        raise ParameterError(
            f"--index {index_dir}: none of its {info['n_documents']} documents names a company that "
            "could be read (an SEC cover page's registrant, or a company name in the file's title); "
            "a memo is about a company"
        )
    passages = [
        p
        if (p.meta or {}).get("company") or p.doc_id not in companies
        else Passage(p.pid, p.doc_id, p.title, p.text, {**(p.meta or {}), "company": companies[p.doc_id]})
        for p in stored
    ]
    raw = _mentions(index, pids)
    if kwargs.get("extractor") is not None:
        raise ParameterError(
            "index_orchestrator: the graph is built from the index's spaCy mentions (filtered NER); "
            "no other extractor can be given"
        )
    orch = Orchestrator(resolver=DocumentResolver(passages, "company"), **kwargs)
    extractor = Ner3Extractor(max_df=None)  # as Orchestrator.fit: no stop-entity cut
    mentions = link_companies(passages, extractor.filter(raw), companies)
    stop, links = graph_filters(mentions, extractor)
    graph = build_graph(pids, mentions, stop=stop, alias_pairs=links)
    verify_files(index.dir, index.info, index.info["parts"]["bm25"]["files"])
    bm25 = BM25Retriever.load(index.dir)
    if bm25.pids_ != pids:
        raise DataError(
            f"{index.dir / 'bm25'}: its passage ids differ from the index's; "
            f"{rebuild_hint(index.dir, index.info)}"
        )
    retriever = GraphRetriever.from_graph(
        passages, graph, bm25, extractor=extractor, bct=orch.bct, alpha=orch.alpha, cache=False
    )
    orch.fit_parts(
        passages,
        retriever,
        ner=dict(zip(pids, raw)),
        locations={p.pid: passage_location(p) for p in passages},
    )
    orch.companies_ = companies
    orch.index_dir_ = Path(index_dir)
    return orch


def closest_companies(name: str, companies: Sequence[str]) -> list[str]:
    """``companies`` (display names, each once) ordered by closeness to ``name``: the best
    :class:`difflib.SequenceMatcher` ratio between the normalised name and the company's
    normalised name or one of its words; ties alphabetical."""
    key = normalize_entity(name) or name.lower()

    def score(company: str) -> float:
        other = normalize_entity(company) or company.lower()
        return max(difflib.SequenceMatcher(None, key, p).ratio() for p in [other, *other.split()])

    return sorted(set(companies), key=lambda c: (-score(c), c))


def check_target(orchestrator: Orchestrator, target: str) -> str:
    """The entity ``target`` names among an index's companies (by a name, or by a trading symbol a filing's
    cover registers: "AAPL"), or :class:`ParameterError` (one line) listing the companies the index knows,
    closest first (:func:`closest_companies`)."""
    if not isinstance(target, str) or not normalize_entity(target):
        raise ParameterError(f"--target: expected a company name, got {target!r}")
    entity = orchestrator.resolver.lookup(target.strip())
    if entity is not None:
        return entity
    known = closest_companies(target, list(orchestrator.companies_.values()))
    shown = ", ".join(known[:SHOWN_COMPANIES]) + (
        f" and {len(known) - SHOWN_COMPANIES} more" if len(known) > SHOWN_COMPANIES else ""
    )
    raise ParameterError(
        f"--target {target!r}: not a company of the index {orchestrator.index_dir_} (or it names several); "
        f"it knows {len(known)} compan{'y' if len(known) == 1 else 'ies'}, closest first: {shown}"
    )
