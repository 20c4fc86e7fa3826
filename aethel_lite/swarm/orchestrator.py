r"""The orchestrator: resolve the target, retrieve each specialist's evidence, run the swarm, merge, write the memo.

A name (any alias) resolves to an entity and its *alias class*: every normalised key of the entity
plus their alias-table aliases, so seeds, evidence and memo do not depend on the alias given. For
each metric and topic of its mandate, a specialist reads the first ``k`` passages of a ranking that
mention the item at all (the *gate*): Personalized PageRank seeded by BCT's expansion of the class
(the *topological filter*), or with ``evidence="bm25"``/``"dense"`` that retriever's ranking for
"<target name> <item words>". The specialists run in a thread pool; their results are collected in
specialist order and sorted, so they do not depend on which finishes first. Cross-document conflicts
are checked over every passage any specialist read.

Periods are named in each filer's fiscal terms: a document's fiscal year ends in the month its cover
says, else in the month most of the same entity's other documents say
(:class:`~aethel_lite.swarm.calendars.YearEnds`), else in December.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from ..core.bct import Expansion, expand_seeds, provenance, seed_vector
from ..core.entities import Ner3Extractor, extract_entities, get_extractor, normalize_entity
from ..data.schema import passage_text
from ..data.synthetic import alias_table
from ..errors import DataError, ParameterError
from ..retrievers import DenseRetriever, GraphRetriever
from ..retrievers.base import topk
from .calendars import YearEnds
from .extract import PassageView, build_view
from .findings import Finding, find_conflicts, sort_findings
from .memo import Memo, build_memo
from .resolvers import AliasResolver, DocumentResolver, EntityResolver, LinkingExtractor
from .specialists import Specialist, default_specialists

__all__ = ["Orchestrator", "Target", "SwarmResult", "EVIDENCE"]

EVIDENCE = ("graph", "bm25", "dense")
_EVIDENCE_TEXT = {
    "graph": "graph-filtered passages (Personalized PageRank with BCT seeded on the target; for each metric and topic "
    "the best-ranked passages that mention it).",
    "bm25": "BM25's best passages for the target's name and each metric or topic (no graph).",
    "dense": "the dense retriever's best passages for the target's name and each metric or topic (no graph).",
}


@dataclass(frozen=True)
class Target:
    """A resolved target.

    Attributes
    ----------
    query : str
        The name as given.
    entity : str or None
        Resolver id (``None``: not an entity of the corpus).
    name : str
        Display name (the query when unresolved).
    keys : tuple of str
        The alias class: normalised keys that seed the graph.
    scope : tuple of str
        Entity ids whose findings belong in the memo (e.g. a GP and its funds).
    seeds : tuple of dict
        BCT expansions ``{seed, entity, via, weight}``.
    """

    query: str
    entity: str | None
    name: str
    keys: tuple[str, ...]
    scope: tuple[str, ...]
    seeds: tuple[dict, ...]

    @property
    def found(self) -> bool:
        """Whether the name is an entity of the corpus that reaches the graph."""
        return self.entity is not None and bool(self.seeds)

    def to_dict(self) -> dict:
        """JSON-able record."""
        return {
            "query": self.query,
            "entity": self.entity,
            "name": self.name,
            "keys": list(self.keys),
            "scope": list(self.scope),
            "seeds": [dict(s) for s in self.seeds],
            "found": self.found,
        }


@dataclass
class SwarmResult:
    """What a swarm run produced.

    Attributes
    ----------
    target : Target
    evidence : str
        ``"graph"``, ``"bm25"`` or ``"dense"``.
    k : int
    findings : list of Finding
        Facts and topics, canonically sorted.
    conflicts : list of Finding
    contexts : dict
        Specialist → its evidence records (:meth:`Orchestrator.gather`).
    memo : Memo or None
    timing : dict
        Seconds per step of :meth:`Orchestrator.run`, and ``total``.
    """

    target: Target
    evidence: str
    k: int
    findings: list[Finding]
    conflicts: list[Finding]
    contexts: dict[str, list[dict]]
    memo: Memo | None = None
    timing: dict = field(default_factory=dict)

    @property
    def facts(self) -> list[Finding]:
        """The findings that are facts (a figure with its period)."""
        return [f for f in self.findings if f.kind == "fact"]

    def to_dict(self) -> dict:
        """JSON-able record of the whole run (``findings``: the findings and the conflicts)."""
        findings = [f.to_dict() for f in self.findings + self.conflicts]
        return {
            "target": self.target.to_dict(),
            "evidence": self.evidence,
            "k": self.k,
            "findings": findings,
            "contexts": self.contexts,
            "memo": None if self.memo is None else self.memo.to_dict(),
            "timing": self.timing,
        }


class Orchestrator:
    """Runs the specialist swarm for a target over a fitted corpus (see the module docstring).

    Parameters
    ----------
    specialists : sequence of Specialist, optional
        Default :func:`~aethel_lite.swarm.specialists.default_specialists`.
    k : int
        Passages per metric or topic query (the specialist's context is the union).
    depth : int
        How far down a ranking the gate looks for ``k`` on-topic passages.
    bct : {"none", "alias", "substring", "both"}
        Seed expansion of the target.
    extractor : str or extractor, optional
        Entity extractor of the graph. Default: ``Ner3Extractor(max_df=None)``, without the
        stop-entity cut, which would remove the target (often its corpus's hub).
    link_names : bool
        With an :class:`AliasResolver`, link its names into the graph (:class:`LinkingExtractor`).
    alias_table : mapping, optional
        Normalised key → aliases (BCT's alias rule and the target's alias class).
    resolver : EntityResolver, optional
        Default: chosen by :meth:`from_dataset`; required by :meth:`fit` otherwise.
    ner : bool
        Add spaCy MONEY/PERCENT/DATE entities to the patterns' figures and periods.
    n_jobs : int, optional
        Threads for the specialists (default: one each).
    n_process : int
        spaCy worker processes when the graph is built.
    generator : TextGenerator, optional
        Rewrites the memo's summary prose.
    progress : bool
    """

    def __init__(
        self,
        specialists: Sequence[Specialist] | None = None,
        *,
        k: int = 10,
        depth: int = 1000,
        bct: str = "both",
        extractor: Any = None,
        alias_table: Mapping[str, Sequence[str]] | None = None,
        resolver: EntityResolver | None = None,
        ner: bool = True,
        n_jobs: int | None = None,
        n_process: int = 1,
        generator: Any = None,
        progress: bool = False,
        alpha: float = 0.5,
        link_names: bool = True,
    ):
        self.specialists = list(default_specialists() if specialists is None else specialists)
        if not self.specialists:
            raise ParameterError("Orchestrator: no specialists")
        names = [s.name for s in self.specialists]
        if len(set(names)) != len(names):
            raise ParameterError(f"Orchestrator: specialist names must be unique, got {names}")
        self.k = _positive("k", k)
        self.depth = _positive("depth", depth)
        self.bct = bct
        self.extractor = extractor
        self.alias_table = alias_table
        self.resolver = resolver
        self.ner = bool(ner)
        self.n_jobs = None if n_jobs is None else _positive("n_jobs", n_jobs)
        self.n_process = n_process
        self.generator = generator
        self.progress = progress
        self.alpha = alpha
        self.link_names = bool(link_names)

    @classmethod
    def from_dataset(cls, dataset: Any, **kwargs: Any) -> Orchestrator:
        """An unfitted orchestrator for a data set: an :class:`AliasResolver` and BCT alias table from its
        ``meta["aliases"]`` (the synthetic corpus), else a :class:`DocumentResolver` on ``meta["company"]``."""
        aliases = dataset.meta.get("aliases") if isinstance(dataset.meta, Mapping) else None
        if isinstance(aliases, Mapping) and aliases:
            kwargs.setdefault("alias_table", alias_table(dataset))
            kwargs.setdefault("resolver", AliasResolver(aliases))
        elif any(p.meta.get("company") for p in dataset.passages):
            kwargs.setdefault("resolver", DocumentResolver(dataset.passages, "company"))
        return cls(**kwargs)

    def fit(self, passages: Sequence[Any]) -> Orchestrator:
        """Build the entity graph (and its BM25 index) over ``passages``; returns ``self``.

        Raises
        ------
        DataError
            The corpus is empty.
        ParameterError
            No resolver was given.
        """
        passages = self._check_input(
            "fit",
            passages,
            "build it with Orchestrator.from_dataset(dataset) "
            "or pass resolver=AliasResolver(...) / DocumentResolver(...)",
        )
        extractor = Ner3Extractor(max_df=None) if self.extractor is None else self.extractor
        linked = self.link_names and isinstance(self.resolver, AliasResolver)
        if linked:
            extractor = LinkingExtractor(get_extractor(extractor), self.resolver)
        # a linking extractor caches its base extractor's mentions itself (per passage, in the store)
        graph_retriever = GraphRetriever(
            extractor=extractor,
            bct=self.bct,
            alias_table=self.alias_table,
            alpha=self.alpha,
            n_process=self.n_process,
            cache=not linked,
            progress=self.progress,
        ).fit(passages)
        return self.fit_parts(passages, graph_retriever)

    def fit_parts(
        self,
        passages: Sequence[Any],
        graph_retriever: Any,
        *,
        ner: Mapping[str, Any] | None = None,
        locations: Mapping[str, tuple[str, str]] | None = None,
    ) -> Orchestrator:
        """Fitted from parts computed elsewhere (:func:`aethel_lite.swarm.indexed.index_orchestrator`,
        :meth:`fit`): nothing is extracted; returns ``self``.

        Parameters
        ----------
        passages : sequence of Passage
        graph_retriever : GraphRetriever
            Fitted on ``passages`` (same order).
        ner : mapping pid -> list of Mention, optional
            Each passage's spaCy ``ner`` mentions (else spaCy reads it when it is first used).
        locations : mapping pid -> (file, page), optional
            Cite every figure by file and page (:func:`~aethel_lite.swarm.memo.passage_location`).
        """
        passages = self._check_input("fit_parts", passages, "pass resolver=DocumentResolver(...)")
        self.passages_ = passages
        self.by_pid_ = {p.pid: p for p in passages}
        self.graph_retriever_ = graph_retriever
        self.ner_ = None if ner is None else dict(ner)
        self.locations_ = None if locations is None else dict(locations)
        self.dense_ = None
        self._gate: dict[tuple[int, str], bool] = {}
        self._year_ends: YearEnds | None = None  # each document's fiscal-year-end month, read when needed
        return self

    def _check_input(self, method: str, passages: Sequence[Any], hint: str) -> list:
        passages = list(passages)
        if not passages:
            raise DataError(
                f"Orchestrator.{method}: empty corpus (no passages): there is nothing to write a memo from"
            )
        if self.resolver is None:
            raise ParameterError(f"Orchestrator.{method}: no entity resolver; {hint}")
        return passages

    def _check_fitted(self) -> None:
        if getattr(self, "graph_retriever_", None) is None:
            raise RuntimeError("Orchestrator is not fitted: call fit(passages) first")

    def resolve(self, name: str) -> Target:
        """The :class:`Target` a name stands for (see the module docstring)."""
        self._check_fitted()
        if not isinstance(name, str) or not normalize_entity(name):
            raise ParameterError(f"target: expected a non-empty entity name, got {name!r}")
        entity = self.resolver.lookup(name.strip())
        keys = set(self.resolver.keys(entity)) if entity is not None else {normalize_entity(name)}
        if self.alias_table:
            table = {normalize_entity(k): v for k, v in self.alias_table.items()}
            for key in list(keys):
                keys.update(normalize_entity(a) for a in table.get(key, ()))
        keys.discard("")
        seeds = (
            expand_seeds(
                sorted(keys), self.graph_retriever_.graph_, mode=self.bct, alias_table=self.alias_table
            )
            if entity is not None
            else []
        )
        scope = tuple(self.resolver.scope(entity)) if entity is not None else ()
        display = self.resolver.display(entity) if entity is not None else name.strip()
        return Target(
            name,
            entity,
            display,
            tuple(sorted(keys)),
            scope,
            tuple({"seed": e.seed, "entity": e.entity, "via": e.via, "weight": e.weight} for e in seeds),
        )

    def _graph_order(self, target: Target) -> tuple[np.ndarray, np.ndarray]:
        gr = self.graph_retriever_
        graph = gr.graph_
        s = seed_vector([Expansion(**e) for e in target.seeds], graph)
        if not s.any():
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        ppr = gr.operator_.run(s, alpha=gr.alpha, tol=gr.tol, max_iter=gr.max_iter).scores[: graph.n_passages]
        ppr = np.round(ppr, 10)
        return _ranked(np.where(ppr > 0, ppr, -np.inf), min(self.depth, graph.n_passages))

    def _text_orders(self, texts: Sequence[str], source: str) -> list[tuple[np.ndarray, np.ndarray]]:
        """BM25's or the dense retriever's ranking (corpus indices, scores) of each query text."""
        depth = min(self.depth, len(self.passages_))
        if source == "bm25":
            rows = [np.where(r > 0, r, -np.inf) for r in map(self.graph_retriever_.bm25_.get_scores, texts)]
        else:
            if self.dense_ is None:
                self.dense_ = DenseRetriever(progress=self.progress).fit(self.passages_)
            rows = list(self.dense_.score_texts(texts))  # one batch
        return [_ranked(r, depth) for r in rows]

    def _on_topic(self, i: int, item: Any) -> bool:
        key = (i, item.key)
        if key not in self._gate:
            self._gate[key] = item.on_topic(self.passages_[i].text)
        return self._gate[key]

    def gather(self, target: Target, evidence: str = "graph", k: int | None = None) -> dict[str, list[dict]]:
        """Each specialist's context: ``{pid, doc_id, page, items, rank, score, provenance}`` records in order."""
        self._check_fitted()
        if evidence not in EVIDENCE:
            raise ParameterError(f"evidence must be one of {', '.join(EVIDENCE)}; got {evidence!r}")
        k = self.k if k is None else _positive("k", k)
        out: dict[str, list[dict]] = {s.name: [] for s in self.specialists}
        if not target.found:
            return out
        if evidence == "graph":
            graph_order = self._graph_order(target)
        else:
            texts = sorted({text for sp in self.specialists for _, text in sp.mandate.queries(target.name)})
            orders = dict(zip(texts, self._text_orders(texts, evidence)))
        exps = [Expansion(**s) for s in target.seeds]
        for sp in self.specialists:
            chosen: dict[int, dict] = {}
            for item, (_, text) in zip(sp.mandate.items(), sp.mandate.queries(target.name)):
                idx, vals = graph_order if evidence == "graph" else orders[text]
                on_topic = (
                    (rank, i, v)
                    for rank, (i, v) in enumerate(zip(idx.tolist(), vals.tolist()), start=1)
                    if self._on_topic(i, item)
                )
                for rank, i, v in islice(on_topic, k):  # the first k on-topic passages of the ranking
                    rec = chosen.get(i)
                    if rec is None:
                        p = self.passages_[i]
                        rec = chosen[i] = {
                            "pid": p.pid,
                            "doc_id": p.doc_id,
                            "page": p.meta.get("page"),
                            "items": [],
                            "rank": rank,
                            "score": round(float(v), 8),
                        }
                        if evidence == "graph":
                            rec["provenance"] = [
                                f"{e.seed} → {e.entity} ({e.via})"
                                for e in provenance(p.pid, exps, self.graph_retriever_.graph_)
                            ][:3]
                    rec["items"].append(item.key)
            out[sp.name] = list(chosen.values())
        return out

    def run(
        self,
        name: str,
        *,
        evidence: str = "graph",
        k: int | None = None,
        memo: bool = True,
        generator: Any = None,
    ) -> SwarmResult:
        """Resolve ``name``, gather each specialist's evidence, run the specialists, merge, write the memo.

        A name that is not an entity of the corpus gives a "no evidence found" memo.

        Parameters
        ----------
        name : str
            The target, by any of its names.
        evidence : {"graph", "bm25", "dense"}
        k : int, optional
            Passages per query (default: the orchestrator's ``k``).
        memo : bool
        generator : TextGenerator, optional
            Overrides the orchestrator's generator for this run.
        """
        t = {"start": time.perf_counter()}
        target = self.resolve(name)
        t["resolve"] = time.perf_counter()
        contexts = self.gather(target, evidence, k)
        t["retrieve"] = time.perf_counter()
        pids = list(dict.fromkeys(r["pid"] for recs in contexts.values() for r in recs))
        views = self._views(pids)
        documents: dict[str, list[PassageView]] = {}
        for v in views.values():
            documents.setdefault(v.doc_id, []).append(v)
        t["prepare"] = time.perf_counter()
        all_metrics = sorted({m for s in self.specialists for m in s.mandate.metrics})
        pool_views = [views[p] for p in pids]

        def work(sp: Specialist) -> tuple[list[Finding], list[Finding]]:
            own = sp.run(
                [views[r["pid"]] for r in contexts[sp.name]],
                resolver=self.resolver,
                scope=target.scope,
                documents=documents,
            )
            return own, sp.cross_check(
                pool_views, all_metrics, resolver=self.resolver, scope=target.scope, documents=documents
            )

        if target.found and pids:
            with ThreadPoolExecutor(max_workers=self.n_jobs or len(self.specialists)) as pool:
                per = list(pool.map(work, self.specialists))  # map keeps the specialists' order
        else:
            per = [([], []) for _ in self.specialists]
        t["specialists"] = time.perf_counter()
        findings = sort_findings(f for own, _ in per for f in own)
        reporter = next((s.name for s in self.specialists if s.mandate.conflicts), "Orchestrator")
        checked = [f for _, chk in per for f in chk]
        conflicts = find_conflicts(findings + checked, specialist=reporter)
        t["merge"] = time.perf_counter()
        result = SwarmResult(target, evidence, self.k if k is None else k, findings, conflicts, contexts)
        if memo:
            names = {e: self.resolver.display(e) for e in target.scope}
            result.memo = build_memo(
                target=target.name,
                found=target.found,
                findings=findings,
                conflicts=conflicts,
                specialists=self.specialists,
                names=names,
                evidence=_EVIDENCE_TEXT[evidence],
                target_entity=target.entity,
                query=target.query,
                generator=generator if generator is not None else self.generator,
                locations=getattr(self, "locations_", None),
            )
        t["memo"] = time.perf_counter()
        steps = list(t)  # start, then each step in order
        result.timing.update({s: round(t[s] - t[prev], 4) for prev, s in zip(steps, steps[1:])})
        result.timing["total"] = round(t["memo"] - t["start"], 4)
        return result

    def fiscal_year_end(self, doc_id: str) -> int | None:
        """The month a document's fiscal year ends in (:class:`~aethel_lite.swarm.calendars.YearEnds`)."""
        if getattr(self, "_year_ends", None) is None:
            self._year_ends = YearEnds(self.passages_, self.resolver)
        return self._year_ends(doc_id)

    def fiscal_year_name(self, doc_id: str) -> str:
        """How a document's filer names a fiscal year, ``"end"`` or ``"start"``
        (:meth:`~aethel_lite.swarm.calendars.YearEnds.named_by`)."""
        self.fiscal_year_end(doc_id)
        return self._year_ends.named_by(doc_id)

    def _views(self, pids: Sequence[str]) -> dict[str, PassageView]:
        passages = [self.by_pid_[p] for p in pids]
        ner = [None] * len(passages)
        if self.ner and passages:
            known = getattr(self, "ner_", None) or {}
            todo = [p for p in passages if p.pid not in known]
            found = (
                dict(
                    zip(
                        [p.pid for p in todo],
                        extract_entities([passage_text(p) for p in todo], "ner", progress=False),
                    )
                )
                if todo
                else {}
            )
            ner = [known[p.pid] if p.pid in known else found[p.pid] for p in passages]
        return {
            p.pid: build_view(
                p,
                self.resolver,
                m,
                fy_end=self.fiscal_year_end(p.doc_id),
                named_by=self.fiscal_year_name(p.doc_id),
            )
            for p, m in zip(passages, ner)
        }


def _ranked(scores: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The top ``depth`` (corpus indices, scores) of a score row, infinite scores dropped."""
    idx, vals = topk(scores, depth)
    keep = np.isfinite(vals)
    return idx[keep], vals[keep]


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ParameterError(f"{name} must be a positive integer, got {value!r}")
    return int(value)
