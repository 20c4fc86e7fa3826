r"""The investment-committee memo: summary, one section per specialist, conflicts, audit trail.

Every figure is printed in bold, exactly as the source prints it, followed by its audit references
(``**$812.4 million** [A3]``); each audit row quotes the sentence or table row (a substring of the
passage, whitespace collapsed, "|" escaped) that holds its figure. No other number appears except
period labels and entity names, so the memo can be checked mechanically (:func:`check_memo`).

Figures are shown per period *and length*, in the filer's fiscal terms (its fiscal-year end read
from its cover; :func:`~aethel_lite.swarm.values.period_phrase`), one style everywhere: "net income
**19,881** [A1] USD millions (Q3 FY2023, three months ended July 1, 2023)", "total assets **352,755**
[A2] USD millions (FY2022, as of September 24, 2022)". A bare table number is followed by the unit
its statement prints it in ("USD millions", "USD thousands"); a surface that states its own unit
("$1.2 billion", "14.2%") is not. A trend compares the latest figure only with the latest earlier one
of the same length (three months with three months, never with nine), and the audit trail states
every figure's length, or that the text does not state it ("..., period ended July 1, 2023 (length
not stated)").

The summary and the trends report the company's own figures only. A figure of a segment, region or
product line (a row of a segment note, :func:`~aethel_lite.swarm.tables.segment_of`) is listed in
its specialist's table under its own name ("revenue — Americas segment"), never as the company's.
A figure a filing's notes or prose state differently from the same filing's consolidated statement
is left out (:func:`~aethel_lite.swarm.findings.prefer_statements`); where documents state the
company's figure for one period differently, the one printed on a consolidated statement is shown
first.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataError
from .findings import Finding, prefer_statements
from .generate import SYSTEM_PROMPT, GeneratorError
from .lexicon import METRICS, TOPICS
from .periods import audit_period, dated_facts, fact_when, when_text, whens_of
from .values import same_value

__all__ = [
    "Memo",
    "AuditRow",
    "build_memo",
    "check_memo",
    "check_prose",
    "parse_audit_table",
    "MemoCheckError",
    "MEMO_TITLE",
    "passage_location",
    "is_memo_markdown",
]

AUDIT_HEADING = "## Audit trail"
MEMO_TITLE = "# Investment-committee memo: "  # every memo's first line starts so
TOPIC_QUOTES = 5  # quotes cited per risk topic in a section (all are in the findings)
_REF_RE = re.compile(r"\[(A\d+)\]")
_BOLD_FIG_RE = re.compile(r"\*\*([^*\n]+?)\*\*((?:\s?\[A\d+\])+)")
_PERIOD_RE = re.compile(
    r"\b(?:(?:Q[1-4]|H[12]|[69]M)\s+)?(?:FY)?(?:19[89]\d|20[0-3]\d)(?:Q[1-4])?\b|\b(?:19|20)\d{2}-\d{2}-\d{2}\b"
    r"|\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\s+\d{1,2},\s+"
    r"(?:19|20)\d{2}\b"
)
_BARE_SURFACE = re.compile(r"[\s(\-−–]*\d[\d,.]*[\s)]*")


class MemoCheckError(DataError):
    """A memo (or generated prose) states a figure that no audit row supports."""


@dataclass(frozen=True)
class AuditRow:
    """One row of the audit trail."""

    ref: str
    figure: str
    entity: str
    metric: str
    period: str
    doc_id: str
    page: int | None  # 0-based, as the data set numbers pages (the table prints page + 1)
    passage_id: str
    quote: str


@dataclass
class Memo:
    """A rendered memo.

    Attributes
    ----------
    target : str
        The target's display name.
    markdown : str
    audit : list of AuditRow
    found : bool
        False for a "no evidence found" memo.
    prose : {"template", "generated"}
        Who wrote the summary paragraph.
    generator_error : str or None
        Why generated prose was not used.
    """

    target: str
    markdown: str
    audit: list[AuditRow] = field(default_factory=list)
    found: bool = True
    prose: str = "template"
    generator_error: str | None = None

    def to_html(self, *, narrow: bool = False) -> str:
        """The memo as an HTML fragment (markdown-it, CommonMark with tables).

        ``narrow=True`` shows the audit trail in five columns (ref, figure, what, source, quote) to
        fit a text column such as the book's.
        """
        from markdown_it import MarkdownIt

        markdown = self.markdown
        if narrow and AUDIT_HEADING in markdown:  # the same renderer, over a five-column audit table
            rows = [" | ".join(_cell(c) for c in _narrow_row(r)) for r in parse_audit_table(markdown)]
            markdown = "\n".join(
                [
                    markdown.split(AUDIT_HEADING, 1)[0] + AUDIT_HEADING,
                    "",
                    "| Ref | Figure | What | Source | Quote |",
                    "|---|---|---|---|---|",
                    *(f"| {r} |" for r in rows),
                    "",
                ]
            )
        body = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)
        return f'<div class="aethel-memo">{body}</div>'

    def to_dict(self) -> dict:
        """JSON-able record (Markdown, audit rows, who wrote the prose)."""
        return asdict(self)


def _narrow_row(row: Mapping[str, str]) -> tuple[str, ...]:
    """An audit row (:func:`parse_audit_table`) as the five cells of :meth:`Memo.to_html`'s narrow table."""
    what = " · ".join(row[k] for k in ("Entity", "Metric", "Period") if row.get(k, "—") not in ("", "—"))
    where, page = (
        (row.get("File"), row.get("Page")) if "File" in row else (row.get("Document"), row.get("PDF page"))
    )
    source = f"{where}, page {page}" if page not in (None, "", "—") else str(where)
    return row["Ref"], row["Figure"], what, f"{source} ({row['Passage']})", row["Quote"]


def _collapse(text: str) -> str:
    return " ".join(text.split())


def passage_location(passage: Any) -> tuple[str, str]:
    """``(file, page)`` of a passage of an index of the user's files (the audit table's ``File`` and ``Page``).

    ``file`` is the document id with the file's suffix (``q3/memo.txt``), or the file's name when
    the document id is not its path (a passage file). ``page`` is 1-based: the PDF page (``"3"``),
    else ``"paragraph 2"`` or ``"chunk 4"``; ``"—"`` when the passage records none.
    """
    meta = getattr(passage, "meta", None) or {}
    path = meta.get("path")
    doc = str(getattr(passage, "doc_id", "") or "")
    file = doc
    if isinstance(path, str) and path:
        stem = Path(path).with_suffix("").as_posix()
        file = (
            doc + Path(path).suffix if doc and (stem == doc or stem.endswith("/" + doc)) else Path(path).name
        )
    page = "—"
    for key, label in (("page", "{}"), ("paragraph", "paragraph {}"), ("chunk", "chunk {}")):
        value = meta.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            page = label.format(value + 1)
            break
    return file, page


def is_memo_markdown(text: str) -> bool:
    """Whether ``text`` is a memo this module rendered (its title line, and its audit trail or the
    "no evidence found" statement): the test ``aethel memo`` applies before it replaces a file."""
    return text.startswith(MEMO_TITLE) and (AUDIT_HEADING in text or "**No evidence found.**" in text)


def _cell(text: str) -> str:
    return _collapse(text).replace("|", "\\|")


class _Refs:
    """Audit references in order of first use."""

    def __init__(self, names: Mapping[str, str]):
        self.names = names
        self.rows: list[AuditRow] = []
        self.by_key: dict[tuple, str] = {}

    def ref(self, f: Finding) -> str:
        """The reference of a finding (a new audit row the first time)."""
        # a table row's figures share its start: its columns' periods and lengths tell them apart
        key = (f.passage_id, f.start, f.metric, f.surface or "", f.kind, f.period, f.duration, f.segment)
        r = self.by_key.get(key)
        if r is None:
            r = self.by_key[key] = f"A{len(self.rows) + 1}"
            self.rows.append(
                AuditRow(
                    r,
                    f.surface or "",
                    self.names.get(f.entity, f.entity),
                    _metric_text(f)
                    + (f" ({f.printed_unit})" if f.printed_unit and f.kind != "topic" else ""),
                    audit_period(f),
                    f.doc_id,
                    f.page,
                    f.passage_id,
                    f.quote,
                )
            )
        return r

    def figure(self, facts: Sequence[Finding]) -> str:
        """``**surface** [A1] [A2]`` for facts that print the same surface, then its unit when the surface
        is a bare number (``**19,881** [A1] USD millions``)."""
        unit = facts[0].printed_unit
        shown = f" {unit}" if unit and _BARE_SURFACE.fullmatch(facts[0].surface or "") else ""
        return f"**{facts[0].surface}** " + " ".join(f"[{self.ref(f)}]" for f in facts) + shown

    def value(self, facts: Sequence[Finding]) -> str:
        """Every surface of facts with one value, each with its references (a statement's first)."""
        surfaces = sorted({f.surface or "" for f in facts}, key=lambda s: (not _on_statement(facts, s), s))
        return " · ".join(self.figure([f for f in facts if (f.surface or "") == s]) for s in surfaces)


def _label(metric: str) -> str:
    return (
        METRICS[metric].label if metric in METRICS else TOPICS[metric].label if metric in TOPICS else metric
    )


def _metric_text(f: Finding) -> str:
    """A finding's metric as the memo names it: "revenue", or "revenue — Americas segment" for a segment's."""
    return _label(f.metric) + (f" — {f.segment} segment" if f.segment else "")


def _on_statement(facts: Sequence[Finding], surface: str | None = None) -> bool:
    """Whether one of ``facts`` (printing ``surface``, if given) is on a consolidated statement's page."""
    return any(f.statement for f in facts if surface is None or (f.surface or "") == surface)


def _values(facts: Sequence[Finding]) -> list[list[Finding]]:
    """Facts grouped by value (same_value), groups ordered by first appearance, a value a consolidated
    statement prints first."""
    groups: list[list[Finding]] = []
    for f in facts:
        for g in groups:
            if same_value(g[0].value, f.value):
                g.append(f)
                break
        else:
            groups.append([f])
    return sorted(groups, key=lambda g: not _on_statement(g))


#: a net income row of the parent's shareholders ("Net income attributable to Amcor plc"), and the plain row that
#: includes non-controlling interests ("Net income"), each as a fact's quote begins
_TO_PARENT = re.compile(
    r"net (?:income|earnings)(?: \(loss\))? attributable to (?!non-?controlling)", re.IGNORECASE
)
_PLAIN_NET = re.compile(r"net (?:income|earnings)(?: \(loss\))?\W*(?:\$|\(?\d)", re.IGNORECASE)


def _shown(refs: _Refs, groups: Sequence[Sequence[Finding]]) -> str:
    """One period's values of one metric (:func:`_values`' groups) as the memo prints them, joined by "against".
    The net income of the parent's shareholders beside the net income that includes non-controlling interests (a
    statement printing both rows) are each labelled and joined by "and": both are the company's, and neither
    contradicts the other."""
    shown = [refs.value(g) for g in groups]
    if len(groups) > 1 and all(f.metric == "net_income" for g in groups for f in g):
        kinds = [
            "parent"
            if all(_TO_PARENT.match(f.quote.strip()) for f in g)
            else "all"
            if all(_PLAIN_NET.match(f.quote.strip()) for f in g)
            else None
            for g in groups
        ]
        if len(kinds) == 2 and set(kinds) == {
            "all",
            "parent",
        }:  # two figures, each labelled: not one against the other
            notes = {
                "parent": " (attributable to shareholders)",
                "all": " (including non-controlling interests)",
            }
            return " and ".join(v + notes[k] for v, k in zip(shown, kinds))
    return " against ".join(shown)


def _by_metric(
    entities: Sequence[str], facts: Sequence[Finding], metrics: Sequence[str], *, segments: bool = False
) -> Iterator[tuple]:
    """``(entity, metric, facts)`` for each entity, then metric, in the given orders, that has facts: the
    company's own figures (``segment=None``); with ``segments``, then each segment's, as ``(entity,
    (metric, segment), facts)``, segments in alphabetical order."""
    for e in entities:
        for m in metrics:
            fs = [f for f in facts if f.entity == e and f.metric == m]
            own = [f for f in fs if f.segment is None]
            if own:
                yield e, m, own
            if segments:
                for seg in sorted({f.segment for f in fs if f.segment is not None}):
                    yield e, (m, seg), [f for f in fs if f.segment == seg]


def build_memo(
    *,
    target: str,
    found: bool,
    findings: Sequence[Finding],
    conflicts: Sequence[Finding],
    specialists: Sequence[Any],
    names: Mapping[str, str],
    evidence: str,
    target_entity: str | None = None,
    generator: Any = None,
    query: str | None = None,
    locations: Mapping[str, tuple[str, str]] | None = None,
) -> Memo:
    """Render the memo of a swarm run.

    Parameters
    ----------
    target : str
        Display name of the target.
    found : bool
        Whether the target resolved to an entity (if not, or without findings: "no evidence found").
    findings : sequence of Finding
        Facts and topics (about the entities of the target's scope).
    conflicts : sequence of Finding
    specialists : sequence of Specialist
        Sections, in this order.
    names : mapping entity id -> display name
    evidence : str
        One sentence saying where the evidence came from.
    target_entity : str, optional
        The target's entity id (its facts lead; other scope entities, such as a fund's GP, follow).
    generator : TextGenerator, optional
        Rewrites the summary paragraph (kept only if :func:`check_prose` accepts it).
    query : str, optional
        The name as given, printed only in a "no evidence found" memo.
    locations : mapping passage id -> (file, page), optional
        Cite by file and page (:func:`passage_location`) instead of document and PDF page.
    """
    refs = _Refs(names)
    title = f"{MEMO_TITLE}{target}"
    if not found or not findings:
        asked = query if query is not None else target
        md = (
            f"{title}\n\n**No evidence found.** The corpus holds no passage that the specialists could read about "
            f"“{asked}”: the name matches no entity of the corpus, or no retrieved passage states a figure or a "
            "risk topic about it. No figures are reported.\n"
        )
        return Memo(target, md, [], found=False)

    facts = dated_facts(prefer_statements([f for f in findings if f.kind == "fact"]))
    topics = [f for f in findings if f.kind == "topic"]
    entities = sorted({f.entity for f in findings}, key=lambda e: (e != target_entity, names.get(e, e)))
    multi = len(entities) > 1 or target_entity not in entities

    # -- summary (template) ----------------------------------------------------------------------
    sentences = []
    for sp in specialists:
        parts = []
        for e, metric, fs in _by_metric(entities, facts, sp.mandate.metrics):
            whens = whens_of(fs)
            if not whens:
                continue
            shown = _shown(refs, _values([f for f in fs if fact_when(f) == whens[-1]]))
            who = f" of {names.get(e, e)}" if multi and e != target_entity else ""
            parts.append(f"{_label(metric)}{who} {shown} ({when_text(whens[-1], fs)})")
        if parts:
            sentences.append(f"The {sp.name} reports " + "; ".join(parts) + ".")
    raised = [
        TOPICS[t].label for sp in specialists for t in sp.mandate.topics if any(f.metric == t for f in topics)
    ]
    if raised:
        sentences.append("Risk topics raised in the evidence: " + ", ".join(raised) + ".")
    if conflicts:
        sentences.append("Some figures are stated differently in different documents; see Conflicts.")
    template_prose = " ".join(sentences) or "The evidence states no figure in the specialists' mandates."

    # -- recommendation inputs ---------------------------------------------------------------------
    inputs = []
    for sp in specialists:
        trends = []
        for e, metric, fs in _by_metric(entities, facts, sp.mandate.metrics):
            whens = whens_of(fs)
            if len(whens) < 2:
                continue
            latest = whens[-1]  # compared only with the latest earlier figure of the same length
            earlier = [w for w in whens[:-1] if w[1] == latest[1]]
            if not earlier:
                continue
            ga, gb = (_values([f for f in fs if fact_when(f) == w]) for w in (earlier[-1], latest))
            if len(ga) != 1 or len(gb) != 1:
                continue  # a conflicted period: no trend
            va, vb = ga[0][0].value, gb[0][0].value
            word = "up" if vb > va else "down" if vb < va else "unchanged"
            who = f" of {names.get(e, e)}" if multi and e != target_entity else ""
            trends.append(
                f"{_label(metric)}{who} {word} from {refs.value(ga[0])} ({when_text(earlier[-1], fs)}) to "
                f"{refs.value(gb[0])} ({when_text(latest, fs)})"
            )
        if trends:
            inputs.append(f"- **{sp.name}**: " + "; ".join(trends) + ".")
    flagged = [f for f in topics if f.metric in {t for sp in specialists for t in sp.mandate.topics}]
    if flagged:
        first = {
            t: [f for f in flagged if f.metric == t][:3] for t in dict.fromkeys(f.metric for f in flagged)
        }
        cites = "; ".join(
            f"{_label(t)} " + " ".join(f"[{refs.ref(f)}]" for f in fs) for t, fs in first.items()
        )
        inputs.append(f"- **Risk topics** (quoted in the audit trail): {cites}.")
    if conflicts:
        items = ", ".join(f"{_metric_text(c)} ({when_text(fact_when(c), [c])})" for c in conflicts)
        inputs.append(f"- **Disagreeing documents**: {items}; see Conflicts.")
    else:
        inputs.append("- **Disagreeing documents**: none; no figure is stated differently in two documents.")

    # -- specialist sections ------------------------------------------------------------------------
    sections = []
    for sp in specialists:
        lines = [f"## {sp.name}", ""]
        mine = [f for f in facts if f.metric in sp.mandate.metrics]
        if mine:
            mine_entities = {f.entity for f in mine}
            wide = len(mine_entities) > 1 or target_entity not in mine_entities
            head = (
                "| Entity | Metric | Period | Figure |\n|---|---|---|---|"
                if wide
                else "| Metric | Period | Figure |\n|---|---|---|"
            )
            rows = []
            for e, _item, fs in _by_metric(entities, mine, sp.mandate.metrics, segments=True):
                name = _metric_text(fs[0])
                for when in reversed(whens_of(fs, dated=False)):
                    cell = _shown(refs, _values([f for f in fs if fact_when(f) == when]))
                    row = f"| {name} | {when_text(when, fs)} | {cell} |"
                    rows.append(f"| {_cell(names.get(e, e))} " + row if wide else row)
            lines += [head, *rows, ""]
        tops = [f for f in topics if f.metric in sp.mandate.topics]
        if tops:
            lines += ["| Topic | Quoted in |", "|---|---|"]
            for t in sp.mandate.topics:
                fs = [f for f in tops if f.metric == t]
                if fs:
                    more = " and further passages (see the findings)" if len(fs) > TOPIC_QUOTES else ""
                    lines.append(
                        f"| {_label(t)} | "
                        + " ".join(f"[{refs.ref(f)}]" for f in fs[:TOPIC_QUOTES])
                        + more
                        + " |"
                    )
            lines.append("")
        if sp.mandate.conflicts:
            lines += ["Statements that disagree between documents are listed under Conflicts.", ""]
        if not mine and not tops and not sp.mandate.conflicts:
            lines += ["No evidence in this specialist's passages.", ""]
        sections.append("\n".join(lines))

    # -- conflicts ---------------------------------------------------------------------------------------
    clines = ["## Conflicts", ""]
    if conflicts:
        for c in conflicts:
            sources = [Finding(c.entity, c.metric, c.period, **s) for s in c.sources]
            stated = [
                refs.value(g) for g in _values(sources)
            ]  # each value once, with every document's reference
            who = f" — {names.get(c.entity, c.entity)}" if multi else ""
            clines.append(
                f"- **{_metric_text(c)}, {when_text(fact_when(c), [c])}**{who}: "
                + " against ".join(stated)
                + " (different documents)."
            )
    else:
        clines.append("None: no figure is stated differently in two documents.")
    clines.append("")

    prose, prose_kind, error = template_prose, "template", None
    if generator is not None:
        prose, prose_kind, error = _generated(generator, template_prose, refs, names)

    where = "File | Page" if locations is not None else "Document | PDF page"
    audit = [
        f"| Ref | Figure | Entity | Metric | Period | {where} | Passage | Quote |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in refs.rows:
        doc, page = r.doc_id, "—" if r.page is None else str(r.page + 1)
        if locations is not None:
            doc, page = locations.get(r.passage_id, (doc, page))
        audit.append(
            f"| {r.ref} | {_cell(r.figure) or '—'} | {_cell(r.entity)} | {_cell(r.metric)} | {r.period or '—'} | "
            f"{_cell(doc)} | {_cell(page)} | {_cell(r.passage_id)} | {_cell(r.quote)} |"
        )
    source_line = (
        "*Prose written by the text generator from the findings.*"
        if prose_kind == "generated"
        else "*Prose assembled from templates.*"
    )
    md = "\n".join(
        [
            title,
            "",
            f"*Evidence: {evidence} Every figure is printed as its source prints it, in bold, with its audit "
            "reference.*",
            "",
            "## Summary and recommendation inputs",
            "",
            prose,
            "",
            source_line,
            "",
            *inputs,
            "",
            *sections,
            *clines,
            AUDIT_HEADING,
            "",
            *audit,
            "",
        ]
    )
    return Memo(target, md, refs.rows, found=True, prose=prose_kind, generator_error=error)


def _generated(
    generator: Any, template: str, refs: _Refs, names: Mapping[str, str]
) -> tuple[str, str, str | None]:
    lines = [
        f"[{r.ref}] {r.entity}, {r.metric}, {r.period or 'no period'}: {r.figure}"
        for r in refs.rows
        if r.figure
    ]
    prompt = (
        "Findings (reference, entity, metric, period: figure):\n"
        + "\n".join(lines)
        + "\n\nDraft summary to rewrite (keep its figures and references):\n"
        + template
    )
    try:
        text = generator.generate(prompt, system=SYSTEM_PROMPT)
    except GeneratorError as exc:
        return template, "template", str(exc)
    except Exception as exc:  # a user-supplied generator: never lose the memo over it
        return template, "template", f"text generator failed: {type(exc).__name__}: {exc}"
    text = " ".join(str(text).split())
    try:
        check_prose(text, refs.rows, names=list(names.values()))
    except MemoCheckError as exc:
        return template, "template", f"generated prose rejected: {exc}"
    return text, "generated", None


def check_prose(text: str, rows: Sequence[AuditRow], *, names: Sequence[str] = ()) -> None:
    """Raise :class:`MemoCheckError` unless every figure in ``text`` is a bold audit figure with its references.

    A figure is any number: it must be printed ``**figure** [A1]`` where every cited row exists and
    has exactly that figure. After removing those, period labels and the entity ``names``, no
    digit may remain.
    """
    by_ref = {r.ref: r for r in rows}
    for m in _BOLD_FIG_RE.finditer(text):
        fig = m.group(1).strip()
        for ref in _REF_RE.findall(m.group(2)):
            row = by_ref.get(ref)
            if row is None:
                raise MemoCheckError(f"figure {fig!r} cites [{ref}], which is not in the audit trail")
            if row.figure != fig:
                raise MemoCheckError(f"figure {fig!r} cites [{ref}], whose figure is {row.figure!r}")
    rest = _BOLD_FIG_RE.sub(" ", text)
    for ref in _REF_RE.findall(rest):
        if ref not in by_ref:
            raise MemoCheckError(f"[{ref}] is not in the audit trail")
    rest = _REF_RE.sub(" ", rest)
    for name in sorted(filter(None, names), key=len, reverse=True):
        rest = rest.replace(name, " ")
    rest = _PERIOD_RE.sub(" ", rest)
    m = re.search(r"\S*\d\S*", rest)
    if m:
        raise MemoCheckError(f"states {m.group(0)!r}, which is not a figure of the findings")


def parse_audit_table(markdown: str) -> list[dict]:
    """The audit-trail rows of a memo's Markdown as dicts (cells unescaped)."""
    if AUDIT_HEADING not in markdown:
        return []
    table = [
        [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        for line in markdown.split(AUDIT_HEADING, 1)[1].splitlines()
        if line.startswith("|")
    ]
    header, *rows = table or [[]]
    return [dict(zip(header, cells)) for cells in rows if not set("".join(cells)) <= set("-")]


def check_memo(memo: Memo | str, passages: Mapping[str, Any], *, names: Sequence[str] = ()) -> int:
    """Check a memo's audit trail against the corpus; return the number of figures checked.

    Every audit row's quote must occur in its passage's text (whitespace collapsed) and contain
    the row's figure, its document and page (or file and page) must be the passage's; the body
    above the audit trail must pass :func:`check_prose` against those rows.

    Parameters
    ----------
    memo : Memo or str
        A memo or its Markdown.
    passages : mapping pid -> Passage
    names : sequence of str
        Entity names that may contain digits ("3M").

    Raises
    ------
    MemoCheckError
        Naming the first row or figure at fault.
    """
    markdown = memo.markdown if isinstance(memo, Memo) else memo
    rows = []
    for r in parse_audit_table(markdown):
        pid = r["Passage"]
        p = passages.get(pid)
        if p is None:
            raise MemoCheckError(f"[{r['Ref']}] cites passage {pid!r}, which is not in the corpus")
        if r["Quote"] not in _collapse(p.text):
            raise MemoCheckError(f"[{r['Ref']}]: the quote is not in passage {pid}")
        fig = "" if r["Figure"] == "—" else r["Figure"]
        if fig and fig not in r["Quote"]:
            raise MemoCheckError(f"[{r['Ref']}]: figure {fig!r} is not in its quote")
        page = p.meta.get("page") if hasattr(p, "meta") else None
        if "File" in r:  # cited by file and page
            file, at = passage_location(p)
            if (r["File"], r.get("Page")) != (file, at):
                raise MemoCheckError(
                    f"[{r['Ref']}]: {r['File']}, page {r.get('Page')} is not where passage {pid} is "
                    f"({file}, page {at})"
                )
        elif r["Document"] != p.doc_id:
            raise MemoCheckError(
                f"[{r['Ref']}]: document {r['Document']!r} is not passage {pid}'s ({p.doc_id!r})"
            )
        elif isinstance(page, int) and r["PDF page"] != str(page + 1):
            raise MemoCheckError(f"[{r['Ref']}]: page {r['PDF page']} is not passage {pid}'s ({page + 1})")
        rows.append(
            AuditRow(r["Ref"], fig, r["Entity"], r["Metric"], r["Period"], p.doc_id, page, pid, r["Quote"])
        )
    body = markdown.split(AUDIT_HEADING, 1)[0]
    check_prose(body, rows, names=names)
    return sum(1 for _ in _BOLD_FIG_RE.finditer(body))
