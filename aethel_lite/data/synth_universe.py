"""The synthetic corpus's universe (:mod:`aethel_lite.data.synthetic`): word lists, metrics, periods, entities."""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from dataclasses import dataclass, field

from ..errors import ParameterError

# -- word lists --------------------------------------------------------------------------
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
    ("Capital Partners", "CP"),
    ("Equity Partners", "EP"),
    ("Buyout Fund", "BF"),
    ("Capital Fund", "CF"),
    ("Opportunity Fund", "OF"),
    ("Partners", "P"),
    ("Private Equity Fund", "PEF"),
    ("Growth Equity", "GE"),
    ("Infrastructure Partners", "IP"),
    ("Healthcare Partners", "HP"),
    ("Ventures", "V"),
    ("Credit Opportunities", "CO"),
    ("Special Situations Fund", "SSF"),
    ("Value Partners", "VP"),
    ("Strategic Capital", "SC"),
    ("Industrial Partners", "INP"),
    ("Tech Partners", "TP"),
    ("Mid-Market Fund", "MMF"),
)
_GP_SUFFIXES = (
    "Capital Management LLC",
    "Investment Management LLC",
    "Advisors, LLC",
    "Management Company, L.P.",
)
_STRATEGIES = (
    "lower mid-market buyout",
    "mid-market buyout",
    "growth equity",
    "large-cap buyout",
    "healthcare services buyout",
    "software buyout",
    "industrial carve-out",
    "infrastructure",
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
    ("Teachers'", "T"),
    ("Public Employees'", "PE"),
    ("Municipal Employees'", "ME"),
    ("Firefighters'", "F"),
    ("Police Officers'", "PO"),
    ("State Employees'", "SE"),
    ("County Employees'", "CE"),
    ("School Employees'", "SE"),
)
_SURNAMES = (
    "Whitcombe Ashford Pemberton Hollis Carrington Dunmore Ellsworth Fairbanks Galloway Harcourt "
    "Kingsley Lockhart Montague Northcott Prescott Radcliffe Sinclair Thornbury Waverly Abernathy "
    "Beaumont Calloway Davenport Everett Fitzgerald Grayson Hawthorne Ingram Langley Merriweather "
    "Nash Oakley Pendleton Quincy Rutherford Stanhope Tolliver Vanderholt Whitaker Yardley Aldridge "
    "Blackwood Cromwell Delacroix Eastwood Fenwick Goodwin Hargrove Irving Jarvis"
).split()
_ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")

# -- metrics and periods -----------------------------------------------------------------
#: fund-level metrics: key -> surface synonyms (first is the canonical label)
METRICS: dict[str, tuple[str, ...]] = {
    "nav": ("net asset value", "NAV", "net asset value (NAV)"),
    "dpi": ("DPI", "distributions to paid-in capital multiple", "realized multiple (DPI)"),
    "tvpi": ("TVPI", "total value to paid-in multiple", "net multiple (TVPI)"),
    "net_irr": ("net IRR", "net internal rate of return", "since-inception net IRR"),
    "unfunded_commitment": (
        "unfunded commitment",
        "remaining unfunded commitment",
        "uncalled capital commitment",
    ),
    "credit_facility_balance": (
        "subscription line balance",
        "credit facility balance",
        "balance drawn on the capital call facility",
    ),
}
_QUARTERS = [(y, q) for y in range(2021, 2025) for q in (1, 2, 3, 4)]
_Q_END = {
    1: ("March", 31, "03/31"),
    2: ("June", 30, "06/30"),
    3: ("September", 30, "09/30"),
    4: ("December", 31, "12/31"),
}
_ORD = {1: "first", 2: "second", 3: "third", 4: "fourth"}


def _pkey(y: int, q: int) -> str:
    return f"{y}Q{q}"


def _quarter(pkey: str) -> tuple[int, int]:
    """``(year, quarter)`` of a period key such as ``"2024Q3"`` (the inverse of :func:`_pkey`)."""
    return int(pkey[:4]), int(pkey[-1])


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


# -- entities ----------------------------------------------------------------------------
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
                    f"n_funds={n_funds}: the brand word lists give only {len(self.funds)} funds "
                    "with unique acronyms"
                )
            head, tail = brands[bi]
            bi += 1
            brand = head + tail
            if brand.lower() in names:
                continue
            rng.shuffle(patterns)
            for words, letters in patterns:  # noqa: B007
                stem = head[0] + tail[0] + letters
                if stem not in stems:
                    break
            else:
                continue
            stems.add(stem)
            names.add(brand.lower())
            gp_suffix = rng.choice(_GP_SUFFIXES)
            gp = _Entity(
                f"gp:{_slug(brand)}", "gp", {"full": f"{brand} {gp_suffix}", "short": brand}, {"brand": brand}
            )
            self.gps.append(gp)
            k = max(min(rng.choice((2, 2, 3, 3, 3, 4)), n_funds - len(self.funds)), 1)
            first = rng.randint(1, 4)
            last_vintage = rng.randint(2019, 2023)
            gap = rng.choice((2, 3, 3, 4))
            strategy = rng.choice(_STRATEGIES)
            gp.data["funds"] = []
            for j in range(k):
                num = _ROMAN[first + j]
                vintage = last_vintage - gap * (k - 1 - j)
                size = round(rng.uniform(250, 1200) * (1.35**j) * rng.choice((1, 1, 2, 4)), 1)
                fid = f"fund:{_slug(brand)}-{num.lower()}"
                forms = {
                    "full": f"{brand} {words} {num}, L.P.",
                    "name": f"{brand} {words} {num}",
                    "short": f"{brand} {num}",
                    "acronym": f"{stem} {num}",
                }
                data = {
                    "gp": gp,
                    "vintage": vintage,
                    "size": size,
                    "strategy": strategy,
                    "series": _fund_series(self.seed, fid, vintage, size),
                    "fee": rng.choice(("1.5%", "1.75%", "2.0%")),
                    "carry": rng.choice(("20%", "20%", "25%")),
                    "companies": [],
                    "lps": [],
                }
                fund = _Entity(fid, "fund", forms, data)
                self.funds.append(fund)
                gp.data["funds"].append(fund)

    def _make_companies(self) -> None:
        rng = self.rng
        words = list(_CO_WORDS) + [a + b for a in _CO_SYL1 for b in _CO_SYL2]
        # a smaller pool of first words at small scale makes shared prefixes ("Helios Fleet" /
        # "Helios Grid") common; it grows with the corpus so names stay unique
        pool = words[: max(40, min(len(words), len(self.funds) * 6 // 4))]
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
        first_words = Counter(co.forms["prefix"] for co in self.companies)
        for co in self.companies:
            co.data["prefix_unique"] = first_words[co.forms["prefix"]] == 1

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
                forms = {
                    "full": f"{name} {gname} Retirement System",
                    "short": f"{name} {gname.rstrip(chr(39))}",
                }
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
            self.buyers.append(
                _Entity(f"buyer:{_slug(short)}", "buyer", {"full": f"{w} {sector} {t}", "short": short})
            )

    def _assign(self) -> None:
        rng = self.rng
        for fund in self.funds:
            fund.data["lps"] = rng.sample(self.lps, min(len(self.lps), rng.randint(4, 8)))
            periods = sorted(fund.data["series"])
            # reporting window: the last four to six quarters the fund existed
            fund.data["window"] = periods[-rng.randint(4, 6) :]
            for co in fund.data["companies"]:
                acq_year = min(2024, fund.data["vintage"] + rng.randint(0, 3))
                co.data["acquired"] = (acq_year, rng.randint(1, 4))
                co.data["price"] = _money(rng.uniform(40, 0.25 * fund.data["size"] + 60))
                co.data["stake"] = _pct(rng.uniform(51, 92))
                exit_year = acq_year + rng.randint(3, 6)
                co.data["exit"] = (
                    (exit_year, rng.randint(1, 4)) if exit_year <= 2024 and rng.random() < 0.6 else None
                )
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
