"""The specialist swarm and the investment-committee memo (aethel_lite.swarm).

Independent checks: findings are scored against the synthetic generator's gold facts and planted
contradictions (the generator knows the truth, the swarm does not); every memo is audited by a
checker written here (not the library's): each audit row's quote is in its passage and contains
its figure, and no number is left in the memo body that is not a bold figure followed by
references to rows printing exactly that figure. The text generator is tested against a fake
OpenAI-compatible server on 127.0.0.1 only.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from contextlib import contextmanager
from dataclasses import replace

import pytest
from memo_audit import audit_chapter_memos, audit_memo

from aethel_lite.cli import main as cli_main
from aethel_lite.data.schema import Passage
from aethel_lite.data.synthetic import make_synthetic
from aethel_lite.errors import DataError, ParameterError
from aethel_lite.swarm import (
    FINDING_KEYS,
    AliasResolver,
    DocumentResolver,
    GeneratorError,
    Mandate,
    OpenAICompatibleGenerator,
    Orchestrator,
    RuleExtractor,
    Specialist,
    check_memo,
    default_specialists,
    find_conflicts,
    read_findings,
    score_conflicts,
    score_facts,
)
from aethel_lite.swarm.extract import build_view, segments, table_rows
from aethel_lite.swarm.findings import Finding
from aethel_lite.swarm.lexicon import FUND_METRICS, METRICS
from aethel_lite.swarm.memo import MemoCheckError, check_prose
from aethel_lite.swarm.study import alias_invariance, fund_targets, question_metric, synthetic_scores
from aethel_lite.swarm.values import find_figures, find_periods, parse_figure, period_sort_key

N_PASSAGES, N_PLANTED = 300, 10


# -- fixtures -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module", autouse=True)
def _run_cache(run_cache):
    """This module's fits use the run's shared cache (the quick book's swarm chapter tags the same
    corpus); the setting ends with the module."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AETHEL_CACHE", str(run_cache))
        yield


@pytest.fixture(scope="module")
def corpus():
    return make_synthetic(N_PASSAGES, seed=0, contradictions=N_PLANTED)


@pytest.fixture(scope="module")
def orch(corpus):
    return Orchestrator.from_dataset(corpus).fit(corpus.passages)


@pytest.fixture(scope="module")
def scores(orch, corpus):
    return synthetic_scores(orch, corpus, evidence=("graph", "bm25"))


# -- values ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, value, unit",
    [
        ("$1.2bn", 1200.0, "USD m"),
        ("$812.4 million", 812.4, "USD m"),
        ("$1.25 billion", 1250.0, "USD m"),
        ("$300,000", 0.3, "USD m"),
        ("USD 5m", 5.0, "USD m"),
        ("($1.5 million)", -1.5, "USD m"),
        ("14.2%", 14.2, "%"),
        ("(1.5)%", -1.5, "%"),
        ("1.62x", 1.62, "x"),
        ("€20m", 20.0, "EUR m"),
    ],
)
def test_figures_normalise_units(text, value, unit):
    assert parse_figure(text) == (value, unit)


def test_money_without_scale_takes_the_page_scale():
    figs = find_figures("allowances of $95 and $103", scale=1.0)
    assert [(f.value, f.surface) for f in figs] == [(95.0, "$95"), (103.0, "$103")]


@pytest.mark.parametrize(
    "text, label",
    [
        ("as of June 30, 2024", "2024Q2"),
        ("for the quarter ended June 30, 2024", "2024Q2"),
        ("at the end of the second quarter of 2024", "2024Q2"),
        ("as at 30 June 2024", "2024Q2"),
        ("as of Q2 2024", "2024Q2"),
        ("at 06/30/2024", "2024Q2"),
        ("FY2018", "FY2018"),
        ("fiscal 2019", "FY2019"),
        ("May 17, 2024", "2024-05-17"),
    ],
)
def test_periods(text, label):
    assert [p.label for p in find_periods(text)] == [label]


def test_period_order():
    labels = ["FY2018", "2018Q3", "2018-05-17", "2017Q4", None]
    assert sorted(labels, key=period_sort_key) == ["2017Q4", "2018-05-17", "2018Q3", "FY2018", None]


# -- the extractor on hand-written passages ----------------------------------------------------------------
ALIASES = {
    "fund:acme-iv": ["Acme Capital Partners IV, L.P.", "Acme IV", "ACP IV"],
    "gp:acme": ["Acme"],
    "fund:acme-iii": ["Acme III"],
    "lp:ohio": ["Ohio Teachers"],
}


def _extract(text, title="", metrics=METRICS, topics=(), resolver=None, pid="d#0", meta=None):
    resolver = resolver or AliasResolver(ALIASES)
    p = Passage(pid, pid.split("#")[0], title, text, meta or {})
    return RuleExtractor().extract(
        build_view(p, resolver), metrics, topics, resolver=resolver, specialist="S"
    )


def test_prose_facts_entity_period_and_lp_lines():
    text = (
        "The realized multiple (DPI) of the Fund stood at 0.45x for the quarter ended June 30, 2024. "
        "Acme III recorded a net IRR of 9.1% as of Q2 2024. "
        "Limited partner unfunded commitment: $12.0 million. "
        "Performance of ACP IV as of 06/30/2024: Net IRR 14.2% | TVPI 1.62x | NAV $1.2bn."
    )
    got = {
        (f.entity, f.metric, f.period, f.value, f.surface)
        for f in _extract(text, title="Acme IV — Q2 2024 LP letter")
    }
    assert got == {
        ("fund:acme-iv", "dpi", "2024Q2", 0.45, "0.45x"),
        ("fund:acme-iii", "net_irr", "2024Q2", 9.1, "9.1%"),
        ("fund:acme-iv", "net_irr", "2024Q2", 14.2, "14.2%"),
        ("fund:acme-iv", "tvpi", "2024Q2", 1.62, "1.62x"),
        ("fund:acme-iv", "nav", "2024Q2", 1200.0, "$1.2bn"),
    }


def test_quote_is_in_the_passage_and_contains_the_figure():
    text = "Capital activity. During the quarter the Partnership called $30.1 million from limited partners."
    (f,) = _extract(text, title="Acme IV — Q3 2023 LP letter")
    assert (f.metric, f.entity, f.period, f.value) == ("capital_calls", "fund:acme-iv", "2023Q3", 30.1)
    assert f.quote in text and f.surface in f.quote and f.confidence == 0.8


STATEMENT = (
    "Consolidated Statement of Cash Flows\nYears ended December 31\n \n(Millions)\n    \n2018\n    \n2017\n"
    "Cash Flows from Operating Activities\nAccounts receivable\n \n(305) \n \n(245)\n"
    "Purchases of property, plant and equipment (PP&E)\n \n \n(1,577) \n \n(1,373)\n"
    "Dividends paid to shareholders\n \n(3,193) \n \n(2,803)\n"
    "Cash and cash equivalents at end of period\n \n$\n2,853 \n$\n3,053 \n"
)


def test_statement_table_rows():
    (header_years,) = {r.periods for r in table_rows(STATEMENT)}
    assert header_years == ("FY2018", "FY2017")
    passages = [
        Passage("3M_2018_10K#p59", "3M_2018_10K", "3M_2018_10K", STATEMENT, {"page": 59, "company": "3M"})
    ]
    resolver = DocumentResolver(passages)
    got = {
        (f.metric, f.period, f.value, f.surface)
        for f in _extract(
            STATEMENT, resolver=resolver, pid="3M_2018_10K#p59", meta={"page": 59, "company": "3M"}
        )
    }
    # capex and dividends are outflows reported as amounts; accounts receivable on a cash-flow
    # statement is the year's change, not the balance, and is not read
    assert got == {
        ("capex", "FY2018", 1577.0, "(1,577)"),
        ("capex", "FY2017", 1373.0, "(1,373)"),
        ("dividends", "FY2018", 3193.0, "(3,193)"),
        ("dividends", "FY2017", 2803.0, "(2,803)"),
        ("cash", "FY2018", 2853.0, "2,853"),
        ("cash", "FY2017", 3053.0, "3,053"),
    }


def test_annual_report_dates_are_fiscal_years():
    page = (
        "CONSOLIDATED BALANCE SHEETS\n(amounts in millions)\nAugust 29,\n2021\nAugust 30,\n2020\n"
        "Property, plant and equipment\n24,873\n24,914\nProperty, plant and equipment — net\n8,738\n8,866\n"
        "TOTAL ASSETS\n$\n59,268\xa0\n$\n55,556\xa0\n"
    )
    assert {r.periods for r in table_rows(page)} == {("2021-08-29", "2020-08-30")}
    assert {r.periods for r in table_rows(page, annual=True)} == {("FY2021", "FY2020")}
    meta = {"page": 37, "company": "Costco", "doc_type": "10k"}
    resolver = DocumentResolver([Passage("C#p37", "C", "C", page, meta)])
    got = {(f.metric, f.period, f.value) for f in _extract(page, resolver=resolver, pid="C#p37", meta=meta)}
    # gross PP&E is not net PP&E
    assert got == {
        ("ppe_net", "FY2021", 8738.0),
        ("ppe_net", "FY2020", 8866.0),
        ("total_assets", "FY2021", 59268.0),
        ("total_assets", "FY2020", 55556.0),
    }


def test_changes_are_not_levels():
    meta = {"page": 39, "company": "3M", "doc_type": "10k"}
    text = (
        "Total debt was approximately $15.9 billion at December 31, 2022 and $17.4 billion at December 31, 2021. "
        "The Company’s total debt was $0.7 billion higher at December 31, 2018 when compared to December 31, 2017. "
        "Balance changes decreased working capital by $0.5 billion, primarily due to increases in the current "
        "portion of long-term debt offset by decreases in accrued payroll."
    )
    resolver = DocumentResolver([Passage("3M#p39", "3M", "3M", text, meta)])
    got = {(f.metric, f.period, f.value) for f in _extract(text, resolver=resolver, pid="3M#p39", meta=meta)}
    assert got == {("total_debt", "FY2022", 15900.0)}


def test_segments_do_not_cut_after_legal_suffixes():
    text = "Acme Capital Partners IV, L.P. Recorded nothing. The Fund grew. Next line\nTotal assets"
    spans = [text[a:b] for a, b in segments(text)]
    assert spans[0] == "Acme Capital Partners IV, L.P. Recorded nothing." and spans[-1] == "Total assets"


def test_document_resolver_names():
    ps = [
        Passage("a#p0", "a", "a", "x", {"company": "3M"}),
        Passage("b#p0", "b", "b", "x", {"company": "Best Buy"}),
    ]
    r = DocumentResolver(ps)
    assert r.lookup("3M") == "3M" and r.lookup("3M Company") == "3M" and r.lookup("Nobody") is None


def test_question_metric():
    assert (
        question_metric("What is the FY2018 capital expenditure amount (in USD millions) for 3M?") == "capex"
    )
    assert question_metric("What is the FY2019 fixed asset turnover ratio for Activision Blizzard?") is None


# -- conflicts and scoring ---------------------------------------------------------------------------
def _fact(value, doc, surface, pid=None):
    return Finding(
        "e",
        "nav",
        "2024Q2",
        value,
        "USD m",
        f"NAV {surface}.",
        pid or f"{doc}#0",
        doc,
        None,
        "S",
        0.9,
        surface,
        "fact",
        (),
        0,
    )


def test_conflicts_need_two_documents():
    same_doc = [_fact(1.0, "a", "$1.0 million", "a#0"), _fact(2.0, "a", "$2.0 million", "a#1")]
    assert find_conflicts(same_doc) == []
    agree = [_fact(1.0, "a", "$1.0 million"), _fact(1.0, "b", "$1.0 million")]
    assert find_conflicts(agree) == []
    (c,) = find_conflicts(agree + [_fact(3.0, "c", "$3.0 million")])
    assert c.kind == "conflict" and c.value is None and c.specialist == "Diligence Auditor"
    assert [s["doc_id"] for s in c.sources] == ["a", "b", "c"]  # the majority value first
    assert (
        score_conflicts([c], [{"entity": "e", "metric": "nav", "period": "2024Q2", "pid": "c#0"}])["recall"]
        == 1.0
    )


def test_finding_records_round_trip(tmp_path):
    from aethel_lite.swarm import write_findings

    f = _fact(1.0, "a", "$1.0 million")
    write_findings(tmp_path / "f.json", [f])
    rows = json.loads((tmp_path / "f.json").read_text())
    assert set(FINDING_KEYS) <= set(rows[0])
    assert read_findings(tmp_path / "f.json") == [f]


# -- the synthetic generator's contradictions ----------------------------------------------------------
def test_contradictions_off_by_default_and_recorded(corpus):
    base = make_synthetic(N_PASSAGES, seed=0)
    assert "contradictions" not in base.meta
    planted = corpus.meta["contradictions"]
    assert len(planted) == N_PLANTED
    texts = {p.pid: p.text for p in corpus.passages}
    before = {p.pid: p.text for p in base.passages}
    changed = {pid for pid in texts if texts[pid] != before[pid]}
    assert changed == {c["pid"] for c in planted}
    for c in planted:
        assert c["value"] != c["true_value"] and c["value"] in texts[c["pid"]]
        assert c["true_value"] not in texts[c["pid"]]
        assert c["other_pids"] and all(c["true_value"] in texts[o] for o in c["other_pids"])
        assert c["kind"] in ("stale", "misprint")
        gold = [f for f in corpus.meta["facts"] if f["pid"] == c["pid"] and f["metric"] == c["metric"]]
        assert gold and gold[0]["value"] == c["value"] and gold[0]["true_value"] == c["true_value"]
    again = make_synthetic(N_PASSAGES, seed=0, contradictions=N_PLANTED)
    assert again.meta["contradictions"] == planted
    with pytest.raises(ParameterError, match="contradictions"):
        make_synthetic(100, seed=0, contradictions=-1)


# -- acceptance on the synthetic corpus ----------------------------------------------------------------
def test_findings_precision_and_recall_over_every_fund(scores):
    facts = scores["graph"]["facts"]
    assert scores["n_funds"] >= 5 and facts["n_gold"] > 100
    assert facts["precision"] >= 0.9 and facts["recall"] >= 0.9, facts


def test_planted_contradictions_are_found_as_conflicts(scores):
    c = scores["graph"]["conflicts"]
    assert c["n_planted"] == N_PLANTED
    assert c["recall"] >= 0.9, c


def test_topological_filter_beats_bm25_context(scores):
    """The paper's claim: the same specialists read more of the truth from the graph's top-k than from BM25's."""
    assert scores["graph"]["facts"]["recall"] > scores["bm25"]["facts"]["recall"]
    assert scores["graph"]["conflicts"]["recall"] >= scores["bm25"]["conflicts"]["recall"]


def test_every_memo_passes_the_audit(scores, corpus, orch):
    passages = {p.pid: p for p in corpus.passages}
    assert len(scores["memos"]) == scores["n_funds"]
    n = 0
    for entity, md in scores["memos"].items():
        names = [orch.resolver.display(e) for e in orch.resolver.scope(entity)]
        n += audit_memo(md, passages, names)
        assert check_memo(md, passages, names=names) > 0  # and the library's own check agrees
    assert n > 100


def test_narrow_memo_html_keeps_every_audit_row(scores):
    """The book's five-column audit trail holds each Markdown row's reference, figure, entity,
    metric, period, document, page, passage and quote (read back with the standard HTML parser)."""
    from html.parser import HTMLParser

    from aethel_lite.swarm import Memo

    class Cells(HTMLParser):
        def __init__(self):
            super().__init__()
            self.rows, self.cell = [], None

        def handle_starttag(self, tag, attrs):
            if tag == "tr":
                self.rows.append([])
            elif tag in ("td", "th"):
                self.cell = ""

        def handle_endtag(self, tag):
            if tag in ("td", "th"):
                self.rows[-1].append(self.cell)
                self.cell = None

        def handle_data(self, data):
            if self.cell is not None:
                self.cell += data

    md = next(iter(scores["memos"].values()))
    memo = Memo("fund", md)
    wide, narrow = Cells(), Cells()
    wide.feed(memo.to_html())
    narrow.feed(memo.to_html(narrow=True))
    audit_wide = [r for r in wide.rows if r and r[0].startswith(("Ref", "A"))]
    audit_narrow = [r for r in narrow.rows if r and r[0].startswith(("Ref", "A"))]
    assert audit_wide[0] == [
        "Ref",
        "Figure",
        "Entity",
        "Metric",
        "Period",
        "Document",
        "PDF page",
        "Passage",
        "Quote",
    ]
    assert audit_narrow[0] == ["Ref", "Figure", "What", "Source", "Quote"]
    assert len(audit_narrow) == len(audit_wide) > 10
    for (ref, fig, entity, metric, period, doc, page, pid, quote), got in zip(
        audit_wide[1:], audit_narrow[1:]
    ):
        assert got[:2] == [ref, fig] and got[4] == quote
        assert got[2] == " · ".join(x for x in (entity, metric, period) if x != "—")
        assert got[3] == (f"{doc}, page {page} ({pid})" if page != "—" else f"{doc} ({pid})")
    # everything above the audit trail is the same
    assert (
        memo.to_html().split("<h2>Audit trail</h2>")[0]
        == memo.to_html(narrow=True).split("<h2>Audit trail</h2>")[0]
    )


def test_end_to_end_rows_in_eight_columns():
    from aethel_lite.swarm.study import end_to_end_rows

    fb = {
        "end_to_end": {
            "k": 5,
            "rows": [
                {
                    "qid": "financebench_id_01234",
                    "company": "3M",
                    "metric": "ppe_net",
                    "period": "FY2018",
                    "gold": 1577.0,
                    "predicted": 1577.0,
                    "correct": True,
                    "gold_read": False,
                    "half": "test",
                }
            ],
        },
        "accuracy": {"rows": [{"qid": "financebench_id_01234", "predicted": None, "correct": False}]},
    }
    assert end_to_end_rows(fb) == [
        {
            "question": "01234 (test)",
            "company": "3M",
            "asked": "ppe net, FY2018",
            "gold (USD m)": 1577.0,
            "from evidence pages": None,
            "from top 5": 1577.0,
            "right": "no / yes",
            "evidence page in top 5": "no",
        }
    ]


def test_same_memo_under_every_alias(orch, corpus):
    for entity in fund_targets(corpus)[:3]:
        got = alias_invariance(orch, corpus, entity)
        assert got["identical"] and len(got["aliases"]) >= 3, got


def test_target_not_in_corpus_gives_a_no_evidence_memo(orch):
    result = orch.run("Nonexistent Harbor Partners XIV")
    assert not result.target.found and result.findings == [] and not result.memo.found
    assert "No evidence found" in result.memo.markdown and result.memo.audit == []


def test_empty_corpus_is_a_clear_error(corpus):
    with pytest.raises(DataError, match="empty corpus"):
        Orchestrator.from_dataset(corpus).fit([])
    with pytest.raises(ParameterError, match="target"):
        Orchestrator.from_dataset(corpus).fit(corpus.passages[:30]).run("   ")


def test_results_do_not_depend_on_specialist_order_or_timing(orch, corpus):
    target = fund_targets(corpus)[1]
    name = corpus.meta["aliases"][target][0]
    first = orch.run(name)

    class Slow:
        """Delays the first specialists most, so they finish last."""

        def __init__(self, inner, delay):
            self.inner, self.delay = inner, delay

        def extract(self, *args, **kw):
            time.sleep(self.delay)
            return self.inner.extract(*args, **kw)

    slowed = [
        replace(s, extractor=Slow(s.extractor, 0.02 * (3 - i))) for i, s in enumerate(default_specialists())
    ]
    other = Orchestrator.from_dataset(corpus, specialists=slowed)
    other.graph_retriever_, other.passages_, other.by_pid_ = (
        orch.graph_retriever_,
        orch.passages_,
        orch.by_pid_,
    )
    other.dense_, other._gate = None, {}
    assert other.run(name).memo.markdown == first.memo.markdown
    reordered = Orchestrator.from_dataset(corpus, specialists=default_specialists()[::-1])
    reordered.graph_retriever_, reordered.passages_, reordered.by_pid_ = (
        orch.graph_retriever_,
        orch.passages_,
        orch.by_pid_,
    )
    reordered.dense_, reordered._gate = None, {}
    again = reordered.run(name)
    assert sorted(f.to_dict().items().__repr__() for f in again.findings) == sorted(
        f.to_dict().items().__repr__() for f in first.findings
    )
    assert again.conflicts == first.conflicts


def test_specialist_and_mandate_validation():
    with pytest.raises(ParameterError, match="unknown metric"):
        Mandate(metrics=("nope",))
    with pytest.raises(ParameterError, match="covers nothing"):
        Mandate()
    with pytest.raises(ParameterError, match="unique"):
        Orchestrator([Specialist("A", Mandate(metrics=("nav",)))] * 2)


# -- the text generator, against a fake server on 127.0.0.1 --------------------------------------------
class _Handler(http.server.BaseHTTPRequestHandler):
    mode = "ok"
    reply = ""
    requests: list = []

    def do_POST(self):  # noqa: N802 - http.server API
        length = int(self.headers.get("Content-Length", 0))
        type(self).requests.append(json.loads(self.rfile.read(length)))
        if self.mode == "slow":
            time.sleep(1.5)
        if self.mode == "status":
            self.send_response(500)
            self.end_headers()
            return
        body = {
            "ok": json.dumps({"choices": [{"message": {"content": self.reply}}]}),
            "slow": json.dumps({"choices": [{"message": {"content": self.reply}}]}),
            "not-json": "<html>oops</html>",
            "no-choices": json.dumps({"error": "model overloaded"}),
        }[self.mode]
        data = body.encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


@contextmanager
def fake_server(mode, reply=""):
    _Handler.mode, _Handler.reply, _Handler.requests = mode, reply, []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_generator_success_rewrites_only_the_prose(orch, corpus):
    name = corpus.meta["aliases"][fund_targets(corpus)[0]][0]
    plain = orch.run(name).memo
    row = next(r for r in plain.audit if r.figure)
    reply = f"In short, the fund reports **{row.figure}** [{row.ref}] as its latest {row.metric}."
    with fake_server("ok", reply) as url:
        memo = orch.run(name, generator=OpenAICompatibleGenerator(url, timeout=5)).memo
        sent = _Handler.requests[0]
    assert memo.prose == "generated" and memo.generator_error is None
    assert reply in memo.markdown and memo.audit == plain.audit
    assert sent["messages"][0]["role"] == "system" and row.figure in sent["messages"][1]["content"]
    assert (
        audit_memo(
            memo.markdown,
            {p.pid: p for p in corpus.passages},
            [orch.resolver.display(e) for e in orch.resolver.scope(fund_targets(corpus)[0])],
        )
        > 0
    )


@pytest.mark.parametrize(
    "mode, reply, message",
    [
        ("slow", "whatever", "no reply within"),
        ("not-json", "", "not JSON"),
        ("no-choices", "", "malformed reply"),
        ("status", "", "HTTP 500"),
        ("ok", "The fund is worth **$999.9 million** [A1], a figure nobody stated.", "rejected"),
        ("ok", "The fund doubled its NAV to 4.2 billion dollars.", "rejected"),
    ],
)
def test_generator_failures_leave_the_extractive_memo(orch, corpus, mode, reply, message):
    name = corpus.meta["aliases"][fund_targets(corpus)[0]][0]
    plain = orch.run(name).memo
    with fake_server(mode, reply) as url:
        memo = orch.run(name, generator=OpenAICompatibleGenerator(url, timeout=0.4)).memo
    assert memo.prose == "template" and message in memo.generator_error
    assert memo.markdown == plain.markdown


def test_generator_errors_are_clear():
    with fake_server("not-json") as url:
        with pytest.raises(GeneratorError, match=r"127\.0\.0\.1.*not JSON"):
            OpenAICompatibleGenerator(url, timeout=2).generate("hi")
    with pytest.raises(ParameterError, match="http"):
        OpenAICompatibleGenerator("ftp://127.0.0.1/")


def test_check_prose_rules():
    from aethel_lite.swarm.memo import AuditRow

    rows = [AuditRow("A1", "1.62x", "F", "TVPI", "2024Q2", "d", None, "d#0", "TVPI 1.62x")]
    check_prose("TVPI was **1.62x** [A1] in 2024Q2 at 3M.", rows, names=["3M"])
    for bad in ("TVPI was **1.26x** [A1].", "TVPI was 1.62x.", "TVPI was **1.62x** [A2].", "up 5 points"):
        with pytest.raises(MemoCheckError):
            check_prose(bad, rows)


# -- the command line ------------------------------------------------------------------------------------------
def test_cli_memo_writes_memo_and_findings(tmp_path, corpus, capsys):
    out, findings = tmp_path / "memo.md", tmp_path / "findings.json"
    name = corpus.meta["aliases"][fund_targets(corpus)[0]][0]
    rc = cli_main(
        [
            "memo",
            "--format",
            "synthetic",
            "--size",
            str(N_PASSAGES),
            "--contradictions",
            str(N_PLANTED),
            "--target",
            name,
            "--out",
            str(out),
            "--findings",
            str(findings),
            "--quiet",
        ]
    )
    assert rc == 0
    records = json.loads(findings.read_text())
    assert records and all(set(FINDING_KEYS) <= set(r) for r in records)
    md = out.read_text()
    resolver = AliasResolver(corpus.meta["aliases"])
    names = [resolver.display(e) for e in resolver.scope(fund_targets(corpus)[0])]
    assert audit_memo(md, {p.pid: p for p in corpus.passages}, names) > 0


def test_cli_memo_unknown_target_and_bad_flags_exit_two(tmp_path, capsys):
    """An unknown target is an error naming the closest names (not an empty memo), like a bad flag."""
    out = tmp_path / "memo.md"
    argv = ["memo", "--format", "synthetic", "--size", "120", "--target", "Nobody Partners XIV"]
    assert cli_main(argv + ["--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("aethel: error: --target 'Nobody Partners XIV'") and "closest: ArchLane" in err
    assert not out.exists()
    assert (
        cli_main(
            ["memo", "--format", "synthetic", "--size", "120", "--target", "x", "--out", str(out), "--k", "0"]
        )
        == 2
    )
    assert (
        cli_main(
            ["memo", "--format", "financebench", "--contradictions", "3", "--target", "3M", "--out", str(out)]
        )
        == 2
    )


def test_scores_recorded_for_unknown_facts_are_false_positives():
    f = _fact(5.0, "a", "$5.0 million")
    gold = [{"entity": "e", "metric": "nav", "period": "2024Q2", "value": "$4.0 million"}]
    s = score_facts([f], gold, metrics=FUND_METRICS)
    assert (s["precision"], s["recall"]) == (0.0, 0.0) and s["false_positives"] == [
        ["e", "nav", "2024Q2", 5.0]
    ]


# -- the chapter's notebook: every memo it writes passes the audit ---------------------------------------
def _run_chapter(root, env, *params):
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    (root / "notebooks").mkdir(parents=True, exist_ok=True)
    shutil.copy(repo / "notebooks" / "50_swarm.ipynb", root / "notebooks" / "50_swarm.ipynb")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "aethel_lite.book.notebooks",
            "--root",
            str(root),
            "--no-progress",
            "--only",
            "50_swarm",
            "-p",
            "quick",
            "true",
            *params,
        ],
        env=env,
        capture_output=True,
        text=True,
        cwd=root,
    )


@pytest.mark.slow
@pytest.mark.realdata
def test_chapter_on_real_data_in_quick_mode(tmp_path, real_data, run_cache):
    import os

    env = {**os.environ, "AETHEL_DATA": str(real_data), "AETHEL_CACHE": str(run_cache)}
    # the synthetic part at 120 passages: the quick book audits it at 300 (tests/book/test_notebooks.py)
    run = _run_chapter(tmp_path, env, "-p", "evidence", '["graph", "bm25"]', "-p", "synthetic_size", "120")
    assert run.returncode == 0, run.stderr[-3000:]
    saved, memos, n = audit_chapter_memos(tmp_path, real_data)
    fb = saved["financebench"]
    assert fb is not None and fb["target"] == "3M" and fb["n_facts"] > 0
    assert any(m.name == "financebench-3m.md" for m in memos) and n == saved["audit"]["n_figures"]
    assert fb["accuracy"]["n"] > 0
