"""Document and metadata nodes: period and filing-type normalisation, company linking, document
metadata from loader meta or the document itself, and the augmented graph (checked edge by edge
against a networkx graph built by hand)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from aethel_lite.core.graph import build_graph
from aethel_lite.data.docmeta import (
    DocMeta,
    add_document_nodes,
    document_metadata,
    is_meta_key,
    match_companies,
    node_kind,
    period_keys,
    type_keys,
)
from aethel_lite.data.schema import Passage
from aethel_lite.errors import DataError


@pytest.mark.parametrize(
    "text, keys",
    [
        ("What is the FY2018 capital expenditure amount for 3M?", ["2018"]),
        ("FY 2023 and fiscal 2022 and fiscal year 2021", ["2023", "2022", "2021"]),
        ("From FY21 to FY22", ["2021", "2022"]),
        ("quick ratio for Q2 of FY2023", ["2023q2", "2023"]),
        ("Q3 2021, 4Q22 and Q1'24", ["2021q3", "2021", "2022q4", "2022", "2024q1", "2024"]),
        ("the third quarter of 2021", ["2021q3", "2021"]),
        ("NAV as of June 30, 2024", ["2024q2", "2024"]),
        ("at the end of September 2024", ["2024q3", "2024"]),
        ("revenue in 2019 versus 2018", ["2019", "2018"]),
        ("costs of $2,019 million, 2018% and 12018", []),
        ("no period here", []),
    ],
)
def test_period_keys(text, keys):
    assert period_keys(text) == keys


def test_type_keys():
    assert type_keys("per the 10-K annual report") == ["10k"]
    assert type_keys("its 10Q, an 8-K and the earnings call") == ["10q", "8k", "earnings"]
    assert type_keys("earnings per share") == []


def test_match_companies_weights_tokens_by_idf_and_needs_capitals():
    names = ["american express", "american water works", "cvs health", "3m", "general mills", "best buy"]
    got = match_companies("What is American Express' and 3M's capex?", names)
    assert got == {"3m": 1.0, "american express": 1.0}
    # one of two equally rare tokens: m = 1/2, kept; "American" alone is shared and too weak
    assert match_companies("Is CVS capital intensive?", names) == {"cvs health": 0.5}
    assert match_companies("Is American capital intensive?", names) == {}
    # lower-case words are not names
    assert match_companies("what does the general manager buy best?", names) == {}


def _sec_cover(name: str, ended: str, form: str = "10-K") -> str:
    return (
        f"UNITED STATES SECURITIES AND EXCHANGE COMMISSION\nFORM {form}\n"
        f"For the {ended}\nCommission File Number 1-1234\n{name}\n"
        "(Exact name of registrant as specified in its charter)\nDelaware"
    )


def test_document_metadata_sources_in_order():
    ps = [
        Passage(
            "a#p1",
            "a",
            "a",
            "notes",
            {"page": 1, "company": "Acme Corp", "doc_period": 2018, "doc_type": "10K"},
        ),
        Passage(
            "a#p0",
            "a",
            "a",
            _sec_cover("ACME CORP", "quarterly period ended June 30, 2018", "10-Q"),
            {"page": 0, "company": "Acme Corp", "doc_period": 2018, "doc_type": "10K"},
        ),
        Passage(
            "b#p0",
            "b",
            "b",
            _sec_cover("GLOBEX INCORPORATED", "fiscal year ended December 1, 2017"),
            {"page": 0},
        ),
        Passage("c#0", "c", "Initech IV — Q3 2024 LP letter", "Dear partners, a fine quarter.", {}),
        Passage("d#0", "d", "", "March 2015 — something happened.", {}),
    ]
    metas = document_metadata(ps)
    assert list(metas) == ["a", "b", "c", "d"]
    a, b, c, d = (metas[k] for k in "abcd")
    assert (a.companies, a.periods, a.types) == (
        ["acme"],
        ["2018", "2018q2"],
        ["10k"],
    )  # meta year + cover quarter
    assert a.source == {"company": "meta", "period": "meta", "type": "meta"}
    assert (b.companies, b.periods, b.types) == (["globex"], ["2017"], ["10k"])
    assert b.source == {"company": "cover", "period": "cover", "type": "cover"}
    assert (c.companies, c.periods, c.types) == (["initech iv"], ["2024q3", "2024"], [])
    assert c.source == {"company": "title", "period": "title"}
    assert (d.companies, d.periods) == ([], ["2015", "2015q1"]) and d.source == {"period": "first page"}
    assert a.keys() == ["company:acme", "period:2018", "period:2018q2", "type:10k"]
    assert (
        all(is_meta_key(k) for k in a.keys())
        and node_kind("period:2018") == "period"
        and node_kind("acme") == "entity"
    )


def test_one_registrant_under_two_names_carries_both():
    """Covers with the same commission file number are one registrant (a rename): each filing carries
    every name read with that number, its own first; another number is another registrant."""

    def cover(name, year, number):
        return _sec_cover(name, f"fiscal year ended December 31, {year}").replace("1-1234", number)

    ps = [
        Passage("s#p0", "s", "", cover("SQUARE, INC.", 2019, "001-37622"), {"page": 0}),
        Passage("b#p0", "b", "", cover("BLOCK, INC.", 2022, "1-37622"), {"page": 0}),
        Passage("o#p0", "o", "", cover("SQUAREONE HOLDINGS INC.", 2022, "001-99999"), {"page": 0}),
        Passage(
            "k#p0",
            "k",
            "",
            _SEC_8K
            + "On January 28, 2022, Block, Inc. (formerly known as Square, Inc.) entered into an amendment.",
            {"page": 0},
        ),
    ]
    metas = document_metadata(ps)
    assert metas["s"].companies == ["square", "block"] and metas["b"].companies == ["block", "square"]
    assert metas["o"].companies == ["squareone holdings"]
    assert metas["k"].companies == ["block", "square"]  # its own words: (formerly known as ...)
    assert "company:block" in metas["s"].keys()


_SEC_8K = (
    "UNITED STATES SECURITIES AND EXCHANGE COMMISSION\nFORM 8-K\nDate of Report: January 28, 2022\n"
    "BLOCK, INC.\n(Exact name of registrant as specified in its charter)\n"
)


def _toy():
    ps = [
        Passage("x#0", "x", "", "Alpha met Beta.", {}),
        Passage("x#1", "x", "", "Beta left.", {}),
        Passage("y#0", "y", "", "Gamma stayed.", {}),
    ]
    g = build_graph(
        [p.pid for p in ps], [["alpha", "beta"], ["beta"], ["gamma"]], alias_pairs=[("alpha", "beta")]
    )
    metas = {"x": DocMeta("x", ["acme"], ["2020"], ["10k"]), "y": DocMeta("y", ["acme"], ["2021"], [])}
    return ps, g, metas


def _edges(graph) -> set:
    G = nx.from_scipy_sparse_array(graph.adjacency())
    names = list(graph.pids) + list(graph.entities)
    return {frozenset((names[u], names[v])) for u, v in G.edges()}


def test_add_document_nodes_with_documents_and_metadata():
    ps, g, metas = _toy()
    out = add_document_nodes(g, ps, metas)
    assert out.entities[: g.n_entities] == g.entities
    expected = _edges(g) | {
        frozenset(e)
        for e in [
            ("x#0", "doc:x"),
            ("x#1", "doc:x"),
            ("y#0", "doc:y"),
            ("doc:x", "company:acme"),
            ("doc:y", "company:acme"),
            ("doc:x", "period:2020"),
            ("doc:y", "period:2021"),
            ("doc:x", "type:10k"),
        ]
    }
    assert _edges(out) == expected
    assert set(np.unique(out.adjacency().data)) == {1.0}
    # a closed pool keeps its document nodes (incidence columns)
    assert "doc:x" in out.subgraph(["x#1"]).entities


def test_add_document_nodes_without_documents_puts_metadata_on_passages():
    ps, g, metas = _toy()
    out = add_document_nodes(g, ps, metas, documents=False)
    extra = _edges(out) - _edges(g)
    assert extra == {
        frozenset(e)
        for e in [
            ("x#0", "company:acme"),
            ("x#1", "company:acme"),
            ("y#0", "company:acme"),
            ("x#0", "period:2020"),
            ("x#1", "period:2020"),
            ("y#0", "period:2021"),
            ("x#0", "type:10k"),
            ("x#1", "type:10k"),
        ]
    }
    only_docs = add_document_nodes(g, ps, metas, metadata=False)
    assert [e for e in only_docs.entities if is_meta_key(e)] == ["doc:x", "doc:y"]
    assert add_document_nodes(g, ps, metas, documents=False, metadata=False) is g


def test_add_document_nodes_needs_the_graphs_passages():
    ps, g, metas = _toy()
    with pytest.raises(DataError):
        add_document_nodes(g, ps[::-1], metas)


def test_how_a_filer_names_its_fiscal_years_is_read_from_its_pages_and_shared_by_its_filings():
    """Foot Locker's 10-K says its "fiscal year 2022" is the year ended January 28, 2023 (a notes page, not the
    cover): its filings name years by their start, its 10-Q too (its company's naming); Walmart's ('("fiscal
    2024")' after the year's last day) by their end; a filer whose pages never say is unknown."""
    notes = (
        "Fiscal year 2022, 2021, and 2020 represented the 52 weeks ended January 28, 2023, January 29, 2022"
    )
    ps = [
        Passage(
            "f#p0",
            "f",
            "",
            _sec_cover("FOOT LOCKER, INC.", "fiscal year ended January 28, 2023"),
            {"page": 0},
        ),
        Passage("f#p1", "f", "", "Item 1. Business", {"page": 1}),
        Passage("f#p39", "f", "", f"Reporting Year\n{notes}, respectively.", {"page": 39}),
        Passage(
            "q#p0",
            "q",
            "",
            _sec_cover("FOOT LOCKER, INC.", "quarterly period ended October 29, 2022", "10-Q"),
            {"page": 0},
        ),
        Passage(
            "w#p0",
            "w",
            "",
            _sec_cover("WALMART INC.", "fiscal year ended January 31, 2023").replace("1-1234", "1-6991"),
            {"page": 0},
        ),
        Passage("w#p5", "w", "", 'the fiscal year ending January 31, 2024 ("fiscal 2024")', {"page": 5}),
        Passage(
            "g#p0",
            "g",
            "",
            _sec_cover("GLOBEX INC.", "fiscal year ended June 30, 2023").replace("1-1234", "1-2"),
            {},
        ),
    ]
    metas = document_metadata(ps)
    assert metas["f"].periods == ["2023"] and metas["f"].fiscal_year_end == 1  # the index counts by the end
    assert [metas[d].fiscal_year_name for d in "fqwg"] == ["start", "start", "end", None]
