"""Specialists: a name, a mandate (metrics, risk topics, the queries it issues) and an extractor.

A specialist reads only the passages retrieved for its own queries (its *context*), never the corpus.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ParameterError
from .extract import PassageView, RuleExtractor
from .findings import Finding, sort_findings
from .lexicon import METRICS, TOPICS, Metric, Topic
from .resolvers import EntityResolver

__all__ = ["Mandate", "Specialist", "default_specialists", "LIQUIDITY", "VALUATION", "DILIGENCE"]


@dataclass(frozen=True)
class Mandate:
    """What a specialist covers: metric keys and topic keys of the lexicon.

    Attributes
    ----------
    metrics : tuple of str
        Keys of :data:`~aethel_lite.swarm.lexicon.METRICS`.
    topics : tuple of str
        Keys of :data:`~aethel_lite.swarm.lexicon.TOPICS`.
    conflicts : bool
        Whether this specialist reports the cross-document conflicts.
    """

    metrics: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    conflicts: bool = False

    def __post_init__(self) -> None:
        bad = [m for m in self.metrics if m not in METRICS] + [t for t in self.topics if t not in TOPICS]
        if bad:
            raise ParameterError(
                f"Mandate: unknown metric or topic {bad}; metrics: {', '.join(METRICS)}; "
                f"topics: {', '.join(TOPICS)}"
            )
        if not self.metrics and not self.topics and not self.conflicts:
            raise ParameterError("Mandate: covers nothing (no metric, no topic, no conflicts)")

    def items(self) -> list[Metric | Topic]:
        """The mandate's metrics then topics, each of which issues one retrieval query."""
        return [METRICS[m] for m in self.metrics] + [TOPICS[t] for t in self.topics]

    def queries(self, target: str) -> list[tuple[str, str]]:
        """``(item key, query text)`` for each metric and topic: the target's name and the item's words."""
        return [(item.key, f"{target} {item.query}".strip()) for item in self.items()]


@dataclass(frozen=True)
class Specialist:
    """A specialist agent.

    Attributes
    ----------
    name : str
    mandate : Mandate
    extractor : object
        Has ``extract(view, metrics, topics, *, resolver, specialist, context)`` returning
        findings (default :class:`~aethel_lite.swarm.extract.RuleExtractor`).
    """

    name: str
    mandate: Mandate
    extractor: Any = field(default_factory=RuleExtractor, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ParameterError("Specialist: name must be a non-empty string")
        if not isinstance(self.mandate, Mandate):
            raise ParameterError(f"Specialist {self.name!r}: mandate must be a Mandate")
        if not callable(getattr(self.extractor, "extract", None)):
            raise ParameterError(f"Specialist {self.name!r}: extractor has no extract() method")

    def run(
        self,
        context: Sequence[PassageView],
        *,
        resolver: EntityResolver,
        scope: Iterable[str],
        documents: Mapping[str, list[PassageView]] | None = None,
    ) -> list[Finding]:
        """Read the context passages and return the findings about the entities in ``scope``.

        Parameters
        ----------
        context : sequence of PassageView
            The passages retrieved for this specialist (its only evidence).
        resolver : EntityResolver
        scope : iterable of str
            Entity ids the memo is about; findings about other entities are dropped.
        documents : mapping doc_id -> list of PassageView, optional
            Passages in context by document, for document-level coreference.

        Returns
        -------
        list of Finding
            Canonically sorted; topic findings deduplicated by (entity, topic, quote).
        """
        seen: set[tuple] = set()
        kept = []
        for f in self._read(context, self.mandate.metrics, self.mandate.topics, resolver, scope, documents):
            if f.kind == "topic":
                key = (f.entity, f.metric, " ".join(f.quote.split()))
                if key in seen:
                    continue
                seen.add(key)
            kept.append(f)
        return kept

    def cross_check(
        self,
        views: Sequence[PassageView],
        metrics: Iterable[str],
        *,
        resolver: EntityResolver,
        scope: Iterable[str],
        documents: Mapping[str, list[PassageView]] | None = None,
    ) -> list[Finding]:
        """Facts of ``metrics`` in every passage any specialist read, which the conflict check compares (only
        for a mandate that covers conflicts: two documents that disagree may have reached different specialists)."""
        if not self.mandate.conflicts:
            return []
        return self._read(views, sorted(set(metrics)), (), resolver, scope, documents)

    def _read(
        self,
        views: Sequence[PassageView],
        metrics: Sequence[str],
        topics: Sequence[str],
        resolver: EntityResolver,
        scope: Iterable[str],
        documents: Mapping[str, list[PassageView]] | None,
    ) -> list[Finding]:
        """The findings of ``views`` (read in passage order) about the entities in ``scope``, canonically sorted."""
        out: list[Finding] = []
        for view in sorted(views, key=lambda v: v.order):
            out.extend(
                self.extractor.extract(
                    view, metrics, topics, resolver=resolver, specialist=self.name, context=documents
                )
            )
        scope = set(scope)
        return [f for f in sort_findings(out) if f.entity in scope]


LIQUIDITY = Mandate(
    metrics=(
        "dpi",
        "capital_calls",
        "unfunded_commitment",
        "credit_facility_balance",
        "cash",
        "capex",
        "dividends",
        "long_term_debt",
        "short_term_debt",
        "total_debt",
        "operating_cash_flow",
    )
)
VALUATION = Mandate(
    metrics=(
        "nav",
        "tvpi",
        "net_irr",
        "price_to_nav",
        "total_assets",
        "revenue",
        "net_income",
        "diluted_eps",
    ),
    topics=("write_downs", "valuation_basis", "multiples"),
)
DILIGENCE = Mandate(
    topics=("key_persons", "gp_changes", "concentration", "litigation", "related_parties"), conflicts=True
)


def default_specialists() -> list[Specialist]:
    """The Liquidity Specialist, the Valuation Auditor and the Diligence Auditor (one shared extractor)."""
    extractor = RuleExtractor()
    return [
        Specialist("Liquidity Specialist", LIQUIDITY, extractor),
        Specialist("Valuation Auditor", VALUATION, extractor),
        Specialist("Diligence Auditor", DILIGENCE, extractor),
    ]
