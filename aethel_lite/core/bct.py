r"""Bipartite coreference teleportation (BCT): widen the PPR seeds to aliases of the query entities.

A normalised query key :math:`q` reaches a graph entity :math:`v` by one of four rules, each with a
weight (:class:`BCTWeights`): *exact* (:math:`v = q`), *alias* (:math:`v` in :math:`q`'s class of the
alias table, or an alias-edge neighbour of :math:`q`), *substring* (one occurs in the other on token
boundaries) and *token* (a shared content token of at least 4 characters, not in :data:`TOKEN_STOP`;
the weight times the Jaccard index of the token sets). Each entity keeps its best expansion
:math:`w(v)` (ties: exact > alias > substring > token, then the smaller seed); the entities
:math:`E(q, r)` that key :math:`q` reaches by rule :math:`r` share the rule's weight :math:`w_r` as a
budget, and the seed vector over the nodes (passages first, then entities) is

.. math::

    \tilde w(v) = w(v) \cdot \min\Bigl(1,\ \frac{w_r}{\sum_{u \in E(q, r)} w(u)}\Bigr), \qquad
    s_{n_P + j} = \frac{\tilde w(v_j)}{\sum_{v} \tilde w(v)}, \qquad s_i = 0 \text{ for passages } i < n_P .

The book's method chapter gives the default weights and why they halve from rule to rule.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ParameterError
from .mentions import _token_runs, normalize_entity

if TYPE_CHECKING:  # pragma: no cover
    from .graph import EntityGraph

__all__ = [
    "BCTWeights",
    "Expansion",
    "MODES",
    "TOKEN_STOP",
    "TokenIndex",
    "token_index",
    "expand_seeds",
    "seed_vector",
    "provenance",
]

MODES = ("none", "alias", "substring", "both")
_PRIORITY = {"exact": 3, "alias": 2, "substring": 1, "token": 0}

#: Generic tokens that never make a token-overlap match on their own.
TOKEN_STOP = frozenset(
    """the and for with from company companies corporation incorporated limited group groups holding
    holdings international national global capital partners partner fund funds trust bank banks
    financial services service management investment investments american united states state
    north south east west new city county university department association industries""".split()
)


@dataclass(frozen=True)
class BCTWeights:
    """Teleport weight (and budget) of each expansion rule.

    Attributes
    ----------
    exact, alias, substring, token : float
        Non-negative and finite; ``exact`` must be positive.
    """

    exact: float = 1.0
    alias: float = 0.5
    substring: float = 0.25
    token: float = 0.1

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value < 0
            ):
                raise ParameterError(f"BCTWeights.{f.name} must be a finite number >= 0, got {value!r}")
        if self.exact <= 0:
            raise ParameterError(f"BCTWeights.exact must be > 0, got {self.exact!r}")


@dataclass(frozen=True)
class Expansion:
    """One seed entity of the personalization vector and how a query entity reached it.

    Attributes
    ----------
    seed, entity : str
        The normalised query entity key and the graph entity key it expands to.
    via : str
        ``"exact"``, ``"alias"``, ``"substring"`` or ``"token"``.
    weight : float
        Its teleport weight before normalisation.
    """

    seed: str
    entity: str
    via: str
    weight: float


def _rank(e: Expansion) -> tuple:
    """Sort key: weight, then rule priority, entity, seed."""
    return (-e.weight, -_PRIORITY[e.via], e.entity, e.seed)


class TokenIndex:
    """Token -> entity columns of a graph's entities, and each entity's token set: what BCT's substring and
    token rules look up. Build it once per graph (:func:`token_index`) and pass it to :func:`expand_seeds`."""

    def __init__(self, entities: list[str]) -> None:
        self.entities = entities
        self.n = len(self.entities)
        self.tokens = [frozenset(e.split()) for e in self.entities]
        self.postings: dict[str, list[int]] = {}
        for j, toks in enumerate(self.tokens):
            for t in toks:
                self.postings.setdefault(t, []).append(j)


def token_index(graph: EntityGraph) -> TokenIndex:
    """The :class:`TokenIndex` of ``graph``'s entities."""
    return TokenIndex(graph.entities)


def _alias_groups(alias_table: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """Equivalence classes of the alias table (symmetric, transitive), keys normalised."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    if not isinstance(alias_table, Mapping):
        raise ParameterError(
            f"alias_table: expected a mapping key -> aliases, got {type(alias_table).__name__}"
        )
    for key, aliases in alias_table.items():
        if isinstance(aliases, str):
            aliases = [aliases]
        k = normalize_entity(str(key))
        if not k:
            continue
        find(k)
        for a in aliases:
            a = normalize_entity(str(a))
            if a:
                ra, rk = find(a), find(k)
                if ra != rk:
                    parent[max(ra, rk)] = min(ra, rk)
    groups: dict[str, set[str]] = {}
    for x in parent:
        groups.setdefault(find(x), set()).add(x)
    return {x: groups[find(x)] for x in parent}


def expand_seeds(
    query_keys: Iterable[str],
    graph: EntityGraph,
    *,
    mode: str = "both",
    alias_table: Mapping[str, Iterable[str]] | None = None,
    weights: BCTWeights | None = None,
    min_chars: int = 4,
    tokens: TokenIndex | None = None,
) -> list[Expansion]:
    """Expand query entity keys to weighted graph entities (the BCT seeds).

    Parameters
    ----------
    query_keys : iterable of str
        Query entities; normalised with :func:`aethel_lite.core.entities.normalize_entity`, empty ones
        dropped.
    graph : EntityGraph
    mode : {"none", "alias", "substring", "both"}
        ``"none"``: exact matches only. ``"alias"``: + entities in the query key's alias-table
        class (the table is read as an equivalence relation) and its alias-edge neighbours in
        ``graph.alias``. ``"substring"``: + graph entities containing the query key or contained
        in it on token boundaries, and token-overlap matches. ``"both"``: all.
    alias_table : mapping of str to iterable of str, optional
        Known aliases, used in modes ``"alias"`` and ``"both"``.
    weights : BCTWeights, optional
        Default ``BCTWeights()``.
    min_chars : int
        Shortest key that takes part in a substring match.
    tokens : TokenIndex, optional
        ``graph``'s :func:`token_index` (substring modes), built once by the caller; default: built for this call.

    Returns
    -------
    list of Expansion
        One per reached graph entity (its best expansion), by weight (descending), rule, entity, seed.
    """
    if mode not in MODES:
        raise ParameterError(f"mode: expected one of {', '.join(MODES)}, got {mode!r}")
    weights = BCTWeights() if weights is None else weights
    if not isinstance(weights, BCTWeights):
        raise ParameterError(f"weights: expected BCTWeights, got {type(weights).__name__}")
    if isinstance(query_keys, str):
        raise ParameterError("query_keys: expected an iterable of keys, got a single str")
    if int(min_chars) < 1:
        raise ParameterError(f"min_chars must be >= 1, got {min_chars}")
    seeds = sorted({k for k in (normalize_entity(str(q)) for q in query_keys) if k})
    use_alias = mode in ("alias", "both")
    use_sub = mode in ("substring", "both")
    index = graph.entity_index
    best: dict[str, Expansion] = {}

    def offer(seed: str, entity: str, via: str, weight: float) -> None:
        if weight <= 0:
            return
        cand = Expansion(seed, entity, via, float(weight))
        old = best.get(entity)
        if old is None or _rank(cand) < _rank(old):
            best[entity] = cand

    groups = _alias_groups(alias_table) if (use_alias and alias_table) else {}
    if (
        use_sub
        and tokens is not None
        and tokens.entities is not graph.entities
        and tokens.entities != graph.entities
    ):
        raise ParameterError("tokens: a token index of another graph's entities")
    tindex = (tokens if tokens is not None else TokenIndex(graph.entities)) if use_sub else None
    entities = graph.entities
    for q in seeds:
        if q in index:
            offer(q, q, "exact", weights.exact)
        if use_alias:
            for a in sorted(groups.get(q, ())):
                if a != q and a in index:
                    offer(q, a, "alias", weights.alias)
            if graph.alias is not None and q in index:
                row = graph.alias.getrow(index[q])
                for j, v in zip(row.indices, row.data):
                    if v != 0 and entities[j] != q:
                        offer(q, entities[j], "alias", weights.alias)
        if use_sub:
            qtoks = q.split(" ")
            for sub in _token_runs(qtoks):  # entities contained in q
                if len(sub) >= min_chars and sub in index:
                    offer(q, sub, "substring", weights.substring)
            # entities containing q: scan the postings of q's rarest token
            if len(q) >= min_chars and all(t in tindex.postings for t in qtoks):
                rare = min(qtoks, key=lambda t: (len(tindex.postings[t]), t))
                padded = f" {q} "
                for col in tindex.postings[rare]:
                    e = entities[col]
                    if e != q and padded in f" {e} ":
                        offer(q, e, "substring", weights.substring)
            qset = frozenset(qtoks)  # token overlap on content tokens
            cols = {
                c for t in qset if len(t) >= 4 and t not in TOKEN_STOP for c in tindex.postings.get(t, ())
            }
            for col in sorted(cols):
                if entities[col] != q:
                    etoks = tindex.tokens[col]
                    offer(q, entities[col], "token", weights.token * (len(qset & etoks) / len(qset | etoks)))
    return sorted(best.values(), key=_rank)


def seed_vector(
    expansions: Iterable[Expansion], graph: EntityGraph, weights: BCTWeights | None = None
) -> np.ndarray:
    r"""Personalization vector :math:`s` over the graph's nodes from BCT expansions (module docstring).

    The expansions of one seed through one rule share that rule's weight as a budget; an entity
    expanded more than once keeps its largest budgeted weight.

    Parameters
    ----------
    expansions : iterable of Expansion
    graph : EntityGraph
    weights : BCTWeights, optional
        The rule budgets (pass the ones given to :func:`expand_seeds`).

    Returns
    -------
    numpy.ndarray, shape (graph.n_nodes,), float64
        Sums to 1, or all zeros when there is no expansion.
    """
    weights = BCTWeights() if weights is None else weights
    budget = {
        "exact": weights.exact,
        "alias": weights.alias,
        "substring": weights.substring,
        "token": weights.token,
    }
    expansions = list(expansions)
    spent: dict[tuple[str, str], float] = {}
    for e in expansions:
        if not (isinstance(e.weight, (int, float)) and math.isfinite(e.weight) and e.weight >= 0):
            raise ParameterError(
                f"expansions: weight of {e.entity!r} must be finite and >= 0, got {e.weight!r}"
            )
        if e.via not in budget:
            raise ParameterError(
                f"expansions: unknown rule {e.via!r} for {e.entity!r}; expected one of {', '.join(budget)}"
            )
        spent[(e.seed, e.via)] = spent.get((e.seed, e.via), 0.0) + e.weight
    s = np.zeros(graph.n_nodes, dtype=np.float64)
    n_p = graph.n_passages
    for e in expansions:
        j = graph.entity_index.get(e.entity)
        if j is None:
            raise ParameterError(f"expansions: entity {e.entity!r} is not in the graph")
        total = spent[(e.seed, e.via)]
        scale = min(1.0, budget[e.via] / total) if total > 0 else 0.0
        s[n_p + j] = max(s[n_p + j], e.weight * scale)
    total = s.sum()
    if total > 0:
        s /= total
    return s


def provenance(pid: str, expansions: Iterable[Expansion], graph: EntityGraph) -> list[Expansion]:
    """The expansions whose entity passage ``pid`` mentions, best first: which query entity (``seed``)
    and which match (``entity``, ``via``) brought it in. Empty if it mentions none of them (it was
    reached through longer paths). An unknown ``pid`` raises :class:`~aethel_lite.errors.DataError`.
    """
    i = graph.passage_node(pid)
    expansions = list(expansions)
    if not expansions:
        return []
    inc = graph.incidence  # row i read from the CSR arrays, without slicing
    lo, hi = int(inc.indptr[i]), int(inc.indptr[i + 1])
    mentioned = {
        graph.entities[j] for j, v in zip(inc.indices[lo:hi].tolist(), inc.data[lo:hi].tolist()) if v != 0
    }
    return sorted((e for e in expansions if e.entity in mentioned), key=_rank)
