"""The synthetic corpus's documents (:mod:`aethel_lite.data.synthetic`): one renderer per document kind."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from .synth_universe import (
    _ORD,
    _Q_END,
    METRICS,
    _cap,
    _Entity,
    _money,
    _pct,
    _period_phrase,
    _pkey,
    _quarter,
    _slug,
    _Universe,
)


# -- passage builder ---------------------------------------------------------------------
class _PB:
    """Accumulates one passage: sentences, mentioned entities, stated facts."""

    __slots__ = ("gen", "parts", "ents", "facts")

    def __init__(self, gen: _Gen):
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
        self.facts.append(
            {
                "entity": ent.id,
                "metric": metric,
                "period": period,
                "value": value,
                "surface": surface,
                **extra,
            }
        )
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
            n = len(s.split())
            if s in self.parts or words + n > hi:
                continue
            self.parts.append(s)
            words += n
        return " ".join(self.parts)


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


# -- documents ---------------------------------------------------------------------------
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

    def metric_sentence(self, pb: _PB, fund: _Entity, metric: str, pkey: str, subj: str) -> str:
        rng = self.rng
        y, q = _quarter(pkey)
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
            plans.append(
                _DocPlan(f"factsheet-{fs}-{window[-1].lower()}", "fact_sheet", 2, (fund, window[-1]), True)
            )
            plans.append(_DocPlan(f"pr-close-{fs}", "press_release", 1, ("close", fund), True))
            for co in fund.data["companies"]:
                cs = _slug(co.id.split(":")[1])
                plans.append(_DocPlan(f"pr-acq-{cs}", "press_release", 2, ("acquisition", fund, co), True))
                plans.append(_DocPlan(f"captable-{cs}", "cap_table", 2, (fund, co), rng.random() < 0.5))
                if co.data["exit"]:
                    plans.append(_DocPlan(f"pr-exit-{cs}", "press_release", 1, ("exit", fund, co), False))
            for lp in fund.data.get("sellers", []):
                plans.append(
                    _DocPlan(
                        f"secondary-{_slug(lp.id.split(':')[1])}-{fs}", "secondary_memo", 3, (fund, lp), True
                    )
                )
            if rng.random() < 0.4:
                plans.append(_DocPlan(f"tender-{fs}", "tender_offer", 2, (fund, window[-2]), False))
            for pk in window:
                plans.append(_DocPlan(f"letter-{fs}-{pk.lower()}", "lp_letter", 4, (fund, pk), False))
                for lp in rng.sample(fund.data["lps"], min(2, len(fund.data["lps"]))):
                    doc_id = f"cas-{fs}-{_slug(lp.id.split(':')[1])}-{pk.lower()}"
                    plans.append(_DocPlan(doc_id, "capital_account_statement", 2, (fund, lp, pk), False))
        return plans

    def render(self, plan: _DocPlan) -> tuple[str, list[_PB]]:
        return getattr(self, "_r_" + plan.kind)(*plan.args)

    def _r_lp_letter(self, fund: _Entity, pk: str):
        rng = self.rng
        y, q = _quarter(pk)
        gp = fund.data["gp"]
        title = f"{fund.forms['short']} — Q{q} {y} LP letter"
        p0 = _PB(self)
        subj = p0.fund_ref(fund, (3, 1, 1, 4, 0))
        p0.add(f"Dear Limited Partners, we are pleased to report on the {_ORD[q]} quarter of {y}.")
        p0.add(self.metric_sentence(p0, fund, "net_irr", pk, subj))
        p0.add(self.metric_sentence(p0, fund, "tvpi", pk, rng.choice(("the Fund", "the Partnership"))))
        if rng.random() < 0.6:
            p0.add(self.metric_sentence(p0, fund, "nav", pk, "the Fund"))
        p0.add(
            f"The portfolio is managed by {p0.name(gp, rng.choice(('full', 'short')))}, whose investment team remains unchanged."
        )
        p1 = _PB(self)
        p1.add(
            f"Portfolio update. {_cap(p1.fund_ref(fund, (0, 0, 2, 2, 4)))} held {len(fund.data['companies'])} companies at quarter end."
        )
        for co in rng.sample(fund.data["companies"], min(3, len(fund.data["companies"]))):
            g = rng.uniform(-4, 22)
            nm = p1.name(co, rng.choice(("full", "short")))
            sector, up = co.data["sector"], g > 5
            p1.add(
                rng.choice(
                    (
                        f"{nm}, a provider of {sector} services, grew revenue {g:.0f}% year over year and completed one "
                        "add-on acquisition.",
                        f"At {nm}, EBITDA margins {'expanded' if up else 'contracted'} as the {sector} market "
                        f"{'recovered' if up else 'softened'}.",
                        f"{nm} appointed a new chief financial officer and refinanced its term loan at a lower spread.",
                    )
                )
            )
        p2 = _PB(self)
        called = rng.uniform(5, 60)
        p2.add(
            f"Capital activity. During the quarter {p2.fund_ref(fund, (0, 0, 1, 1, 6))} called {_money(called)} from limited partners and made distributions from realizations."
        )
        p2.add(self.metric_sentence(p2, fund, "dpi", pk, "the Fund"))
        p2.add(self.metric_sentence(p2, fund, "credit_facility_balance", pk, "the Partnership"))
        if rng.random() < 0.7:
            p2.add(self.metric_sentence(p2, fund, "unfunded_commitment", pk, "the Partnership"))
        p3 = _PB(self)
        p3.add(
            f"Outlook. {p3.name(gp, 'short')} sees a healthy pipeline of {fund.data['strategy']} opportunities, "
            f"and {p3.fund_ref(fund, (0, 0, 1, 1, 4))} expects to complete its investment period on schedule."
        )
        return title, [(p0, _LETTER_FILLER), (p1, _LETTER_FILLER), (p2, _LETTER_FILLER), (p3, _LETTER_FILLER)]

    def _r_capital_account_statement(self, fund: _Entity, lp: _Entity, pk: str):
        rng = self.rng
        y, q = _quarter(pk)
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

    def _r_fact_sheet(self, fund: _Entity, pk: str):
        rng = self.rng
        y, q = _quarter(pk)
        s = fund.data["series"][pk]
        d = fund.data
        title = f"{fund.forms['short']} — fund fact sheet, Q{q} {y}"
        p0 = _PB(self)
        p0.add(
            f"Fund: {p0.name(fund, 'full')} | Manager: {p0.name(d['gp'], 'full')} | Vintage: {d['vintage']} | "
            f"Strategy: {d['strategy']} | "
            f"Fund size: {p0.fact(fund, 'fund_size', str(d['vintage']), _money(d['size']), fund.forms['full'])} | "
            f"Management fee: {d['fee']} | Carried interest: {d['carry']} | Domicile: Delaware."
        )
        p0.add(
            f"{p0.name(fund, 'acronym')} targets control investments in {d['strategy']} companies in North America."
        )
        p1 = _PB(self)
        subj = p1.fund_ref(fund, (0, 0, 2, 3, 1))
        month, day, mmdd = _Q_END[q]
        row = []
        for m, label in (
            ("net_irr", "Net IRR"),
            ("tvpi", "TVPI"),
            ("dpi", "DPI"),
            ("nav", "NAV"),
            ("unfunded_commitment", "Unfunded commitment"),
            ("credit_facility_balance", "Subscription line"),
        ):
            if m in ("credit_facility_balance",) and rng.random() < 0.5:
                continue
            row.append(f"{label} {p1.fact(fund, m, pk, s[m], subj)}")
        p1.add(f"Performance of {subj} as of {mmdd}/{y}: " + " | ".join(row) + ".")
        return title, [(p0, ()), (p1, ())]

    def _r_cap_table(self, fund: _Entity, co: _Entity):
        rng = self.rng
        y, q = co.data["acquired"]
        title = f"{co.forms['short']} — capitalization table"
        p0 = _PB(self)
        nm = p0.name(co, "full")
        holder = p0.name(fund, rng.choice(("acronym", "short", "full")))
        p0.add(f"Pro forma capitalization of {nm} following the {y} recapitalization.")
        p0.add(
            f"Series A preferred and common held by {holder}: "
            f"{p0.fact(co, 'ownership', _pkey(y, q), co.data['stake'], nm, holder=fund.id)} fully diluted. "
            f"Management rollover equity: {rng.uniform(3, 12):.1f}%. "
            f"Option pool reserved: {rng.uniform(5, 10):.1f}%."
        )
        p1 = _PB(self)
        lp = rng.choice(fund.data["lps"])
        p1.add(
            f"Co-investors in {p1.name(co, rng.choice(('short', 'full')))} include {p1.name(lp, 'full')}, "
            f"which acquired {rng.uniform(2, 9):.1f}% alongside the sponsor on a no-fee, no-carry basis."
        )
        p1.add(
            f"Total debt at close: {_money(rng.uniform(30, 400))}; first-lien term loan priced at SOFR plus {rng.choice((425, 475, 500, 550))} basis points."
        )
        return title, [(p0, ()), (p1, ())]

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
            p0.add(
                f"The fund will pursue {fund.data['strategy']} investments and drew support from public pensions, endowments and family offices."
            )
            return title, [(p0, _PR_FILLER)]
        y, q = co.data["acquired"] if what == "acquisition" else co.data["exit"]
        month = _Q_END[q][0]
        title = f"{gp.forms['short']} press release — {month} {y}"
        if what == "exit":
            p0 = _PB(self)
            buyer = co.data["buyer"]
            nm = p0.name(co, rng.choice(("full", "short")))
            p0.add(
                f"{p0.name(gp, 'short')} announced that {p0.name(fund, rng.choice(('acronym', 'short')))} "
                f"has agreed to sell {nm} to {p0.name(buyer, 'full')}, a strategic acquirer."
            )
            p0.fact(co, "exited", _pkey(y, q), nm, nm, seller=fund.id)
            return title, [(p0, _PR_FILLER)]
        p0 = _PB(self)
        gpn = p0.name(gp, "full")
        fn = p0.name(fund, rng.choice(("acronym", "acronym", "short")))
        con = p0.name(co, "full")
        verb = rng.choice(
            (
                "completed its acquisition of",
                "closed its purchase of",
                "completed a majority investment in",
                "finalized the buyout of",
            )
        )
        p0.add(
            f"{month} {y} — {gpn} today announced that {fn} {verb} {con}, a provider of {co.data['sector']} services."
        )
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

    def _r_secondary_memo(self, fund: _Entity, lp: _Entity):
        rng = self.rng
        pk = fund.data["window"][0]
        code = rng.choice(("Falcon", "Heron", "Atlas", "Juniper", "Granite", "Comet", "Lantern", "Mosaic"))
        title = f"Project {code} — secondary sale memo"
        p0 = _PB(self)
        lpn = p0.name(lp, rng.choice(tuple(f for f in lp.forms if f != "short") or ("full",)))
        fn = p0.name(fund, rng.choice(("acronym", "short", "name")))
        price = _pct(rng.uniform(72, 101))
        p0.add(
            f"Project {code}: {lpn} proposes to sell its entire limited partnership interest in {fn} in a secondary transaction."
        )
        p0.fact(lp, "sold_interest", pk, fn, lpn, fund=fund.id)
        p0.add(
            f"The indicative price is {p0.fact(fund, 'secondary_price_to_nav', pk, price, fn, seller=lp.id)} of reported net asset value."
        )
        p1 = _PB(self)
        p1.add(
            "Reference valuation. "
            f"{_cap(self.metric_sentence(p1, fund, 'nav', pk, p1.fund_ref(fund, (0, 1, 1, 2, 2))))}"
        )
        p1.add(
            f"The interest represents a commitment of {_money(rng.choice((10, 20, 25, 50, 75)))} by the seller."
        )
        p2 = _PB(self)
        names = " and ".join(p2.name(c, "short") for c in fund.data["companies"][:2])
        p2.add(
            f"Portfolio. The buyer reviewed {len(fund.data['companies'])} portfolio companies, including {names}."
        )
        p2.add(
            f"The general partner, {p2.name(fund.data['gp'], 'short')}, has indicated it will consent to the transfer."
        )
        return title, [(p0, _MEMO_FILLER), (p1, _MEMO_FILLER), (p2, _MEMO_FILLER)]

    def _r_tender_offer(self, fund: _Entity, pk: str):
        rng = self.rng
        y, q = _quarter(pk)
        gp = fund.data["gp"]
        title = f"{gp.forms['short']} — tender offer memo, Q{q} {y}"
        p0 = _PB(self)
        fn = p0.name(fund, rng.choice(("full", "name")))
        price = _pct(rng.uniform(80, 100))
        p0.add(
            f"{p0.name(gp, 'short')} is launching a GP-led tender offer giving limited partners of {fn} "
            f"the option to sell their interests at {p0.fact(fund, 'tender_price_to_nav', pk, price, fn)} "
            "of net asset value."
        )
        p0.add(self.metric_sentence(p0, fund, "nav", pk, "the Partnership"))
        p1 = _PB(self)
        p1.add(
            "Limited partners who do not tender keep their status quo terms. The offer is backed by a lead "
            f"secondary buyer and remains open for twenty business days; {p1.fund_ref(fund, (0, 0, 1, 1, 3))} "
            "will not bear transaction costs."
        )
        return title, [(p0, _MEMO_FILLER), (p1, _MEMO_FILLER)]
