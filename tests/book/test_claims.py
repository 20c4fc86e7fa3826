"""Honest by construction: claim checks fail on contradicting numbers; no result is typed into a chapter's prose."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from aethel_lite.book.claims import (
    ALLOWED,
    Claim,
    ClaimError,
    check_claim,
    graph_loses_on_filings,
    hand_typed_numbers,
)

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def _open(graph: tuple[float, float], bm25: tuple[float, float], dense: tuple[float, float], **extra) -> dict:
    def m(mrr, hr5):
        return {"MRR": mrr, "HR@5": hr5}

    return {
        "datasets": {
            "financebench": {"methods": {"aethel-ner3": m(*graph), "bm25": m(*bm25), "dense": m(*dense)}}
        },
        "synthetic_only": False,
        "parameters": {"quick": False},
        **extra,
    }


def test_check_claim_raises_on_false_and_says_why():
    with pytest.raises(ClaimError, match=r"the book says 'x beats y'.*x 0.1 < y 0.2"):
        check_claim("x beats y", False, "x 0.1 < y 0.2")
    ok = check_claim("x beats y", True, "x 0.3 > y 0.2")
    assert isinstance(ok, Claim) and "Checked against the result file" in ok._repr_markdown_()
    assert "Not checked" in check_claim("x beats y", None, "quick mode")._repr_markdown_()


def test_graph_loses_on_filings_holds_when_the_numbers_say_so():
    claim = graph_loses_on_filings(_open(graph=(0.10, 0.15), bm25=(0.40, 0.50), dense=(0.30, 0.45)))
    assert claim.holds is True and "0.100" in claim.evidence and "0.400" in claim.evidence


@pytest.mark.parametrize(
    "graph, bm25, dense, broken",
    [
        (
            (0.35, 0.15),
            (0.40, 0.50),
            (0.30, 0.45),
            "MRR: graph 0.350 is not below dense 0.300",
        ),  # beats dense on MRR
        (
            (0.10, 0.55),
            (0.40, 0.50),
            (0.30, 0.45),
            "HR@5: graph 0.550 is not below bm25 0.500",
        ),  # beats BM25 on HR@5
        (
            (0.40, 0.15),
            (0.40, 0.50),
            (0.30, 0.45),
            "MRR: graph 0.400 is not below bm25 0.400",
        ),  # a tie is not a loss
    ],
)
def test_graph_loses_on_filings_fails_on_contradicting_numbers(graph, bm25, dense, broken):
    with pytest.raises(ClaimError) as info:
        graph_loses_on_filings(_open(graph=graph, bm25=bm25, dense=dense))
    assert broken in str(info.value) and "loses to BM25 and to dense retrieval" in str(info.value)


def test_graph_loses_on_filings_uses_the_better_dense_variant():
    saved = _open(graph=(0.32, 0.15), bm25=(0.40, 0.50), dense=(0.30, 0.45))
    saved["datasets"]["financebench"]["methods"]["dense-max"] = {"MRR": 0.35, "HR@5": 0.46}
    assert (
        graph_loses_on_filings(saved).holds is True
    )  # dense-max (0.35) is the one to beat, not dense (0.30)


def test_graph_loses_on_filings_is_not_checked_without_real_full_data():
    contradicting = dict(graph=(0.9, 0.9), bm25=(0.1, 0.1), dense=(0.1, 0.1))
    assert graph_loses_on_filings(_open(**contradicting, synthetic_only=True)).holds is None
    assert graph_loses_on_filings(_open(**contradicting, parameters={"quick": True})).holds is None
    assert graph_loses_on_filings({"datasets": {}, "synthetic_only": False}).holds is None


def _cells(*markdown: str) -> list[dict]:
    return [{"cell_type": "markdown", "source": text} for text in markdown] + [
        {"cell_type": "code", "source": "x = 0.75"}
    ]


def test_hand_typed_numbers_finds_results_and_ignores_the_rest():
    found = hand_typed_numbers(
        "nb",
        _cells(
            "The graph reaches HR@5 of .905 (88.5%), BM25 0.915 on 200 questions.",
            "## Step 2\nIn 2018 and FY2022, NER3 on 2Wiki with MiniLM-L6-v2: `k = 10`, $\\alpha = 0.5$, {cite}`x2020`, "
            "[a](https://x.org/1/2), every supporting paragraph in the top 5 and the top-10, with a 95% CI.",
            "```python\nx = 0.3  # code\n```\n\n```{admonition} Note\n:class: dropdown\n0.4 in an admonition is prose\n```",
        ),
    )
    assert found == [(0, ".905"), (0, "88.5"), (0, "0.915"), (0, "200"), (2, "0.4")]
    assert hand_typed_numbers("nb", _cells("α = 0.15"), allowed=[("nb", "0.15", "a setting")]) == []
    assert hand_typed_numbers("other", _cells("α = 0.15"), allowed=[("nb", "0.15", "a setting")]) == [
        (0, "0.15")
    ]


def _notebooks_to_scan() -> list[Path]:
    executed = sorted((REPO / "book" / "executed").glob("*.ipynb"))
    return NOTEBOOKS + executed


@pytest.mark.parametrize("path", _notebooks_to_scan(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_result_is_typed_into_a_chapter(path):
    """Markdown cells hold no numbers but the allowed, non-result ones: results come from outputs."""
    nb = nbformat.read(path, as_version=4)
    assert hand_typed_numbers(path.stem, nb.cells) == []


def test_every_allowed_number_is_still_needed():
    """The allow-list stays small: an entry that no chapter uses any more must go."""
    for name, number, why in ALLOWED:
        nb = nbformat.read(REPO / "notebooks" / f"{name}.ipynb", as_version=4)
        assert (name, number) in {(name, n) for _, n in hand_typed_numbers(name, nb.cells, allowed=())}, (
            name,
            number,
            why,
        )
        assert why


#: Chapters that do not yet end with a take-away section (they came from another issue's work, landed
#: while this test was written); strict, so the mark must go when they gain one.
NO_TAKE_AWAY_YET: set[str] = set()


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, marks=pytest.mark.xfail(strict=True, reason="no 'What to take away' yet"))
        if p.stem in NO_TAKE_AWAY_YET
        else p
        for p in NOTEBOOKS
    ],
    ids=lambda p: p.stem,
)
def test_chapter_opens_with_what_it_shows_and_ends_with_take_away(path):
    nb = nbformat.read(path, as_version=4)
    markdown = [c.source for c in nb.cells if c.cell_type == "markdown"]
    assert markdown[0].startswith("# ") and "chapter" in markdown[0].lower(), (
        "the first cell says what the chapter shows"
    )
    headings = [line for text in markdown for line in text.splitlines() if line.startswith("## ")]
    assert headings[-1] == "## What to take away", headings[-1]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_figure_has_a_caption_and_alt_text(path):
    nb = nbformat.read(path, as_version=4)
    figures = [
        c
        for c in nb.cells
        if c.cell_type == "code" and ("_figure(" in c.source or "plt.subplots" in c.source)
    ]
    for cell in figures:
        meta = cell.metadata.get("mystnb", {})
        assert meta.get("figure", {}).get("caption"), f"{path.stem} cell {cell.get('id')}: no caption"
        assert len(meta.get("image", {}).get("alt", "")) > 40, (
            f"{path.stem} cell {cell.get('id')}: no alt text"
        )


def test_graph_loses_on_filings_takes_the_better_dense_variant_per_metric():
    # dense leads on MRR, dense-max on HR@5: the graph (below each leader) loses to dense retrieval on both
    saved = _open(graph=(0.30, 0.50), bm25=(0.40, 0.60), dense=(0.50, 0.40))
    saved["datasets"]["financebench"]["methods"]["dense-max"] = {"MRR": 0.45, "HR@5": 0.70}
    claim = graph_loses_on_filings(saved)
    assert claim.holds is True and "< dense 0.500" in claim.evidence and "< dense-max 0.700" in claim.evidence


@pytest.mark.parametrize(
    "markdown, expected",
    [
        (
            ":::{note}\n```python\nr = GraphRetriever(alpha=0.15, k=20)\n```\n:::",
            [],
        ),  # code fenced inside a directive
        ("```{figure} f.png\n---\nwidth: 80%\n---\nCaption\n```", []),  # a directive's YAML options
        ("MRR < 0.21, HR@5 > BM25's", ["0.21"]),  # comparisons are not HTML tags
        ("$1,577 million against $1,600 million", ["1,577", "1,600"]),  # money is not inline math
        ("0.41-0.45 and 0.45/0.52", ["0.41", "0.45", "0.45", "0.52"]),  # both ends of a range or ratio
        ("see $\\alpha = 0.5$, MiniLM-L6-v2, <b>bold</b>", []),  # math, names, tags still ignored
    ],
)
def test_typed_number_detector_edge_cases(markdown, expected):
    from aethel_lite.book.claims import _numbers

    assert _numbers(markdown) == expected
