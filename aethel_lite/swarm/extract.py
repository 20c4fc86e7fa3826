r"""The default extractor: deterministic, offline, every figure tied to its sentence or table row.

Reading one passage (:class:`PassageView`):

1. **Figures and periods**: the patterns of :mod:`aethel_lite.swarm.values`, plus the spaCy
   MONEY, PERCENT and DATE entities they missed and that parse; money without a scale word takes
   the page's scale ("in millions").
2. **Segments**: sentences (cut at ``.``/``!``/``?`` before a capital letter, not after "L.P.",
   "Inc." and the like) and lines starting with a capital letter, a digit, "$" or "(" (a table
   cell, a heading); clauses are cut at "|" and ";".
3. **Prose facts.** In each clause, every metric phrase of the lexicon (all of it, so the result
   does not depend on which specialist asks) claims the first unclaimed figure of an allowed unit
   after it and before the next phrase, else the nearest unclaimed figure ending at most 40
   characters before it with no other phrase in between. A figure stating a change ("by $0.5
   billion", "$0.7 billion higher") is nobody's; a phrase preceded by its metric's ``exclude``
   pattern claims its figure and reports nothing. Period: the nearest period mention in the
   segment, else the last one earlier in the passage, else the title's; no period, no fact.
4. **Table facts.** Statement tables as PDF text give one cell per line: a header run of years
   or dates (the columns, all different), then rows of a label line and one number per column
   (or the numbers at the end of the label line). A row whose label matches a metric's ``table``
   pattern gives one fact per column (period: the column's year as ``FY2018``, or its date; value
   × the page's scale). In an annual report (``meta["doc_type"] == "10k"``) a date, in a header or
   in prose, is the fiscal year it closes ("February 2, 2019" → ``FY2019``). Length phrases above
   the header run ("Three Months Ended", "Nine Months Ended", "26 Weeks Ended") each cover an equal
   share of its columns, in order: a column is its period *and* length, so "July 1, 2023" under
   three months and under nine months are two columns; a phrase's own date ("Six Months Ended
   December 31," over "2022") dates the year columns (``2022Q4``) outside annual reports.
   A flow metric's fact (``Metric.flow``: revenue, net income, ...) carries its column's length; in
   prose, the length phrase just before its period mention ("for the three months ended June 30"),
   or 3 for a named quarter. Every fact also carries the day its period ends where the text gives
   it, its period in the filer's fiscal terms (``"Q3 FY2023"``, :func:`~aethel_lite.swarm.values.fiscal_name`,
   with the fiscal-year-end month the view was built with) and the unit its surface is printed in
   ("USD millions", :func:`~aethel_lite.swarm.values.printed_unit`). **Company totals and
   segments** (:mod:`aethel_lite.swarm.tables`): a row a segment note gives a segment, region or
   product line ("Americas: Net sales"; :func:`~aethel_lite.swarm.tables.segment_of`) is that
   segment's figure (``Finding.segment``), never the company's; one that names no segment is
   dropped; a row under a per-share caption ("Earnings per share:") is no amount in millions but may be a
   per-share metric's (``Metric.per_share``: diluted EPS, "USD per share"), which takes no other row. A
   page whose first lines title a consolidated statement
   (:func:`~aethel_lite.swarm.tables.statement_page`) marks its figures (``Finding.statement``),
   which the memo prefers.
5. **Entity.** With an alias resolver: the mention of an allowed kind in the segment nearest to
   the metric phrase (confidence 0.9); else the last one earlier in the passage or in its title
   (0.8); else the first one in the same document's other context passages (0.6). With a
   document-level resolver, the passage's entity (0.85 for table rows, 0.75 for prose).
6. **Topics.** A segment matching a topic pattern is quoted (no figure), about the nearest
   entity mention, else the passage's or document's entity (confidence 0.5).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ParameterError
from .findings import Finding
from .lexicon import METRICS, MONEY, NET_INCOME_ROW, TOPICS, Metric, clean_label
from .resolvers import EntityResolver
from .tables import REGION_RE, TableRow, per_share, segment_of, statement_page, table_rows
from .values import (
    Figure,
    Period,
    disjoint,
    find_durations,
    find_figures,
    find_periods,
    fiscal_name,
    fiscal_year,
    page_scale,
    parse_figure,
    printed_unit,
)

__all__ = [
    "PassageView",
    "build_view",
    "RuleExtractor",
    "segments",
    "table_rows",
    "TableRow",
    "statement_page",
    "segment_of",
    "REGION_RE",
]

_ABBREV = re.compile(
    r"(?:\b(?:L\.P|Inc|Corp|Co|Ltd|No|Nos|vs|etc|U\.S|e\.g|i\.e|Mr|Ms|Dr|St|Jr|Sr|approx)|\b[A-Z])$"
)


# -------------------------------------------------------------------------------------- passages
def segments(text: str) -> list[tuple[int, int]]:
    """Sentence and line segments of ``text`` as ``(start, end)`` spans (surrounding space trimmed)."""
    cuts = [0] + [
        m.end()
        for m in re.finditer(r"[.!?](?=\s+[\"“(\[]?[A-Z0-9$])", text)
        if not _ABBREV.search(text[max(0, m.start() - 6) : m.start()])
    ]
    cuts += [m.start() for m in re.finditer(r"\n(?=[ \t\xa0]*[A-Z0-9$(•\-–—])", text)]
    cuts = sorted(set(cuts)) + [len(text)]
    out = []
    for a, b in zip(cuts, cuts[1:]):
        seg = text[a:b]
        a, b = a + len(seg) - len(seg.lstrip()), b - len(seg) + len(seg.rstrip())  # space trimmed
        if b > a:
            out.append((a, b))
    return out


def _clauses(text: str, start: int, end: int) -> list[tuple[int, int]]:
    cuts = [(start + m.start(), start + m.end()) for m in re.finditer(r"\s\|\s|;\s", text[start:end])]
    spans = zip([start] + [b for _, b in cuts], [a for a, _ in cuts] + [end])
    return [(x, y) for x, y in spans if y > x]


@dataclass
class PassageView:
    """One passage prepared for extraction (figures, periods, segments, mentions, table rows).

    Offsets are into ``body`` (``passage.text``); the title is context only (entity and period),
    so every quote is a substring of ``passage.text``.
    """

    pid: str
    doc_id: str
    page: int | None
    title: str
    body: str
    entity: str | None
    scale: float | None
    figures: list[Figure]
    periods: list[Period]
    title_periods: list[Period]
    mentions: list[tuple[int, int, str]]
    title_mentions: list[tuple[int, int, str]]
    segments: list[tuple[int, int]]
    rows: list[TableRow]
    order: tuple = field(default_factory=tuple)
    cache: dict = field(default_factory=dict, repr=False, compare=False)  # per-extractor results of this view
    fy_end: int | None = None  # the month the filer's fiscal year ends in (None: unknown, read as December)
    named_by: str = "end"  # the filer names a fiscal year after the year it ends in, or ("start") starts in
    statement: bool = False  # the page is a consolidated financial statement (not a note)


#: a consolidated statement's title, as the first lines of its page print it
def build_view(
    passage: Any,
    resolver: EntityResolver,
    ner: Sequence[Any] | None = None,
    *,
    fy_end: int | None = None,
    named_by: str = "end",
) -> PassageView:
    """Prepare ``passage`` for extraction.

    Parameters
    ----------
    passage : Passage
    resolver : EntityResolver
    ner : sequence of Mention, optional
        spaCy mentions of ``title + "\\n" + text``; the MONEY, PERCENT and DATE spans the patterns missed are added.
    fy_end : int, optional
        The month the filer's fiscal year ends in (its periods are named in fiscal terms; December
        when unknown).
    named_by : {"end", "start"}
        How the filer names a fiscal year (:func:`~aethel_lite.data.fiscal.year_naming`): Foot Locker's
        year ended January 28, 2023 is its "2022" (``"start"``).
    """
    title, body = passage.title or "", passage.text
    offset = len(title) + 1 if title else 0
    scale = page_scale(body)
    figures = find_figures(body, scale=scale)
    periods = find_periods(body)
    meta = passage.meta if isinstance(passage.meta, Mapping) else {}
    annual = str(meta.get("doc_type") or "").lower().replace("-", "") == "10k"
    for m in ner or ():
        a, b = m.start - offset, m.end - offset
        if a < 0 or b > len(body):
            continue
        if m.label in ("MONEY", "PERCENT") and disjoint([(f.start, f.end) for f in figures], a, b):
            parsed = parse_figure(body[a:b], scale=scale)
            if parsed is not None:
                figures.append(Figure(parsed[0], parsed[1], body[a:b], a, b))
        elif m.label == "DATE" and disjoint([(p.start, p.end) for p in periods], a, b):
            found = find_periods(body[a:b])
            if len(found) == 1:
                f0 = found[0]
                periods.append(Period(f0.label, a + f0.start, a + f0.end, f0.kind, f0.date))
    figures.sort(key=lambda f: f.start)
    if annual:  # a date in an annual report is the fiscal year it closes
        periods = [fiscal_year(p) for p in periods]
    periods.sort(key=lambda p: p.start)
    page = meta.get("page")
    m = re.search(r"#(?:p)?(\d+)", passage.pid)
    return PassageView(
        pid=passage.pid,
        doc_id=passage.doc_id,
        page=page if isinstance(page, int) else None,
        title=title,
        body=body,
        entity=resolver.passage_entity(passage),
        scale=scale,
        figures=figures,
        periods=periods,
        title_periods=find_periods(title),
        mentions=resolver.mentions(body),
        title_mentions=resolver.mentions(title),
        segments=segments(body),
        rows=table_rows(body, annual=annual),
        order=(passage.doc_id, int(m.group(1)) if m else 0, passage.pid),
        fy_end=fy_end if isinstance(fy_end, int) and 1 <= fy_end <= 12 else None,
        named_by=named_by,
        statement=statement_page(body),
    )


# -------------------------------------------------------------------------------------- extractor
_BEFORE = 40  # a figure before its phrase must end this close to it ("87.3% of reported net asset value")
_CHANGE_BEFORE = re.compile(r"\b(?:by|of up to)\s*$", re.IGNORECASE)
_CHANGE_AFTER = re.compile(
    r"^\s*(?:higher|lower|more|less|above|below|increase|decrease|up|down)\b", re.IGNORECASE
)


def _is_change(body: str, fig: Figure) -> bool:
    """Whether a figure states a change ("higher by $0.7 billion", "$0.7 billion higher"), not a level."""
    return bool(
        _CHANGE_BEFORE.search(body[max(0, fig.start - 12) : fig.start])
        or _CHANGE_AFTER.match(body[fig.end : fig.end + 16])
    )


def row_is(metric: Metric, row: TableRow, label: str) -> bool:
    """Whether a table row (``label``: its :func:`~aethel_lite.swarm.lexicon.clean_label`) is ``metric``'s: its label
    matches the metric's table pattern, or, for a per-share metric, its caption does and the row is the net
    income it is per share of ("Diluted earnings per share:" over "Net income attributable to common
    shareholders")."""
    if metric.table_re is None:
        return False
    if metric.table_re.fullmatch(label):
        return True
    return bool(
        metric.per_share
        and row.group
        and metric.table_re.fullmatch(clean_label(row.group))
        and NET_INCOME_ROW.fullmatch(label)
    )


class RuleExtractor:
    """The deterministic, offline default extractor (see the module docstring).

    Parameters
    ----------
    lexicon : mapping of str to Metric, optional
        Every metric phrase that competes for figures (default :data:`~aethel_lite.swarm.lexicon.METRICS`).
    """

    def __init__(self, lexicon: Mapping[str, Metric] | None = None):
        self.lexicon = dict(METRICS if lexicon is None else lexicon)
        phrases = [m.phrase for m in self.lexicon.values() if m.phrase]
        self._any_phrase = (
            re.compile("|".join(f"(?:{p})" for p in phrases), re.IGNORECASE) if phrases else None
        )

    def _entity(
        self,
        view: PassageView,
        resolver: EntityResolver,
        seg: tuple[int, int],
        pos: int,
        kinds: tuple[str, ...],
        context: Mapping[str, list[PassageView]],
    ) -> tuple[str | None, float]:
        if not resolver.has_kinds:
            return view.entity, 0.75
        ok = (lambda e: resolver.kind(e) in kinds) if kinds else (lambda e: True)
        a, b = seg
        inside = [
            (abs((s + e) // 2 - pos), s, eid) for s, e, eid in view.mentions if a <= s and e <= b and ok(eid)
        ]
        if inside:
            return min(inside)[2], 0.9
        before = [(s, eid) for s, e, eid in view.mentions if e <= a and ok(eid)] or [
            (s, eid) for s, e, eid in view.title_mentions if ok(eid)
        ]
        if before:
            return max(before)[1], 0.8
        for other in context.get(view.doc_id, ()):
            if other.pid == view.pid:
                continue
            hits = [(s, eid) for s, e, eid in other.mentions if ok(eid)] or [
                (s, eid) for s, e, eid in other.title_mentions if ok(eid)
            ]
            if hits:
                return min(hits)[1], 0.6
        return view.entity, 0.5

    @staticmethod
    def _mention(view: PassageView, seg: tuple[int, int], pos: int) -> Period | None:
        """The period mention a figure at ``pos`` belongs to: the nearest in its segment, else the last
        one before the segment, else the title's (``None`` when there is none)."""
        a, b = seg
        inside = [
            (abs(p.start - pos), p.start, i)
            for i, p in enumerate(view.periods)
            if a <= p.start and p.end <= b
        ]
        if inside:
            return view.periods[min(inside)[2]]
        before = [p for p in view.periods if p.end <= a] or view.title_periods
        return before[-1] if before else None

    @classmethod
    def _period(cls, view: PassageView, seg: tuple[int, int], pos: int) -> str | None:
        mention = cls._mention(view, seg, pos)
        return mention.label if mention else None

    @classmethod
    def _duration(cls, view: PassageView, seg: tuple[int, int], pos: int) -> int | None:
        """The length of a prose figure's period: the phrase that ends just before its period mention in
        the segment ("for the three months ended June 30, 2023": 3), a named quarter ("Q2 2023"): 3."""
        mention = cls._mention(view, seg, pos)
        if mention is None or not seg[0] <= mention.start < seg[1]:
            return None
        if mention.kind == "quarter":
            return 3
        before = view.body[max(seg[0], mention.start - 60) : mention.start]
        found = [m for m, _, end in find_durations(before) if not before[end:].strip(" ,")]
        return found[-1] if found else None

    def _prose(self, view: PassageView) -> list[tuple[Metric, Figure, tuple[int, int], int]]:
        """(metric, figure, segment, phrase position) of every claimed figure; cached per view and extractor."""
        key = ("prose", id(self))
        if key in view.cache:
            return view.cache[key]
        out = []
        body = view.body
        starts = [m.start() for m in self._any_phrase.finditer(body)] if self._any_phrase is not None else []
        for seg in view.segments:
            if not any(seg[0] <= x < seg[1] for x in starts):
                continue
            for ca, cb in _clauses(body, *seg):
                phrases = [
                    (ca + m.start(), ca + m.end(), metric)
                    for metric in self.lexicon.values()
                    if metric.phrase_re is not None
                    for m in metric.phrase_re.finditer(body[ca:cb])
                ]
                if not phrases:
                    continue
                phrases.sort(key=lambda t: (t[0], -t[1], t[2].key))
                figs = [f for f in view.figures if ca <= f.start and f.end <= cb]
                # figure index -> phrase index; a change ("higher by $0.7 billion") is nobody's figure
                claimed = {fi: -1 for fi, f in enumerate(figs) if _is_change(body, f)}
                value_of: dict[int, int] = {}
                for pi, (ps, pe, metric) in enumerate(phrases):  # noqa: B007
                    nxt = min((s for s, _, _ in phrases if s >= pe), default=cb)
                    for fi, f in enumerate(figs):
                        if fi not in claimed and f.start >= pe and f.start < nxt and f.unit in metric.units:
                            claimed[fi] = pi
                            value_of[pi] = fi
                            break
                for pi, (ps, pe, metric) in enumerate(phrases):  # noqa: B007
                    if pi in value_of:
                        continue
                    prev_end = max((e for s, e, _ in phrases if e <= ps), default=ca)
                    cands = [
                        fi
                        for fi, f in enumerate(figs)
                        if fi not in claimed
                        and f.end <= ps
                        and f.start >= prev_end
                        and ps - f.end <= _BEFORE
                        and f.unit in metric.units
                    ]
                    if cands:
                        fi = cands[-1]
                        claimed[fi] = pi
                        value_of[pi] = fi
                for pi, fi in sorted(value_of.items()):
                    ps, pe, metric = phrases[pi]
                    if metric.exclude_re is not None and metric.exclude_re.search(body[ca:ps]):
                        continue
                    out.append((metric, figs[fi], seg, ps))
        view.cache[key] = out
        return out

    def extract(
        self,
        view: PassageView,
        metrics: Iterable[str],
        topics: Iterable[str],
        *,
        resolver: EntityResolver,
        specialist: str,
        context: Mapping[str, list[PassageView]] | None = None,
    ) -> list[Finding]:
        """Findings of one passage for the given metric and topic keys.

        Parameters
        ----------
        view : PassageView
        metrics, topics : iterable of str
            Keys of the lexicon and of :data:`~aethel_lite.swarm.lexicon.TOPICS`.
        resolver : EntityResolver
        specialist : str
            Name written into the findings.
        context : mapping doc_id -> list of PassageView, optional
            The other passages in context, for document-level coreference.
        """
        wanted = set(metrics)
        unknown = wanted - set(self.lexicon)
        if unknown:
            raise ParameterError(f"{type(self).__name__}: unknown metric(s) {sorted(unknown)}")
        wanted_topics = [TOPICS[t] for t in topics]
        ctx = {k: sorted(v, key=lambda x: x.order) for k, v in (context or {}).items()}
        out: list[Finding] = []
        seen: set[tuple] = set()
        for metric, fig, seg, ppos in self._prose(view):
            key = (metric.key, fig.start)
            if metric.key not in wanted or key in seen:
                continue
            mention = self._mention(view, seg, fig.start)
            entity, conf = self._entity(view, resolver, seg, ppos, metric.subject, ctx)
            if mention is None or entity is None:
                continue
            seen.add(key)
            a, b = seg
            value = abs(fig.value) if metric.absolute else fig.value
            length = self._duration(view, seg, fig.start) if metric.flow else None
            out.append(
                Finding(
                    entity,
                    metric.key,
                    mention.label,
                    value,
                    fig.unit,
                    view.body[a:b],
                    view.pid,
                    view.doc_id,
                    view.page,
                    specialist,
                    conf,
                    fig.surface,
                    "fact",
                    (),
                    a,
                    length,
                    mention.date,
                    fiscal_name(
                        mention.label,
                        mention.date,
                        length,
                        view.fy_end,
                        flow=metric.flow,
                        named_by=view.named_by,
                    ),
                    None,
                    printed_unit(fig.unit, fig.surface, view.scale),
                    False,
                )
            )
        matched: dict[str, list[TableRow]] = {}  # metric -> its rows, in page order
        for row in view.rows:
            label = clean_label(row.label)
            for metric in self.lexicon.values():
                if metric.key in wanted and row_is(metric, row, label):
                    matched.setdefault(metric.key, []).append(row)
                    break
        for row in view.rows:
            label = clean_label(row.label)
            for metric in self.lexicon.values():
                if metric.key not in wanted or not row_is(metric, row, label):
                    continue
                if metric.not_on_re is not None and metric.not_on_re.search(view.body):
                    break
                money = bool(set(metric.units) & set(MONEY))
                if money and view.scale is None:
                    continue
                if money and per_share(row):  # "Earnings per share: Net income" is USD per share
                    continue
                if metric.per_share and not per_share(row):  # "Diluted" shares outstanding: a count
                    continue
                part, segment = segment_of(
                    row, matched.get(metric.key, [row]), page=view.body, statement=view.statement
                )
                if part and segment is None:  # a part of a total that names no segment: not the company's
                    break
                entity, conf = self._entity(
                    view, resolver, (row.start, row.end), row.start, metric.subject, ctx
                )
                if entity is None:
                    continue
                conf = 0.85 if not resolver.has_kinds else conf
                lengths = row.durations if metric.flow and row.durations else (None,) * len(row.values)
                dates = row.dates or (None,) * len(row.values)
                for (value, surface, s, e), period, length, date in zip(  # noqa: B007
                    row.values, row.periods, lengths, dates
                ):
                    key = (metric.key, s)
                    if value != value or key in seen:  # a dash (NaN): nil, not a figure
                        continue
                    seen.add(key)
                    unit = "USD m" if money else metric.units[0]
                    v = round(value * (view.scale if money else 1.0), 6)
                    v = abs(v) if metric.absolute else v
                    out.append(
                        Finding(
                            entity,
                            metric.key,
                            period,
                            v,
                            unit,
                            view.body[row.start : row.end],
                            view.pid,
                            view.doc_id,
                            view.page,
                            specialist,
                            conf,
                            surface,
                            "fact",
                            (),
                            row.start,
                            length,
                            date,
                            fiscal_name(
                                period, date, length, view.fy_end, flow=metric.flow, named_by=view.named_by
                            ),
                            segment,
                            printed_unit(unit, surface, view.scale if money else None),
                            view.statement,
                        )
                    )
                break
        for topic in wanted_topics:
            if not topic.pattern_re.search(view.body):
                continue
            for a, b in view.segments:
                seg_text = view.body[a:b]
                m = topic.pattern_re.search(seg_text)
                if not m or len(seg_text) > 600:
                    continue
                entity, _ = self._entity(view, resolver, (a, b), a + m.start(), (), ctx)
                if entity is None:
                    continue
                mention = self._mention(view, (a, b), a + m.start())
                out.append(
                    Finding(
                        entity,
                        topic.key,
                        mention.label if mention else None,
                        None,
                        None,
                        seg_text,
                        view.pid,
                        view.doc_id,
                        view.page,
                        specialist,
                        0.5,
                        None,
                        "topic",
                        (),
                        a,
                        None,
                        mention.date if mention else None,
                        fiscal_name(
                            mention.label, mention.date, None, view.fy_end, flow=False, named_by=view.named_by
                        )
                        if mention
                        else None,
                    )
                )
        return out
