"""The browser check of the built book (aethel_lite.book.bookcheck), on tiny generated sites.

Pure parts (page discovery, link and text checks) run everywhere. The browser tests open the
pages in real headless Chromium with the network off; they skip when no Chromium is installed,
except in CI (``CI=true``), where a missing browser is a failure (``.ci/run`` installs it).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from aethel_lite.book.bookcheck import (
    RAW_TEX,
    BrowserNotFound,
    Problem,
    alt_problems,
    check_links,
    check_site,
    find_chromium,
    html_pages,
    main,
    text_problems,
)
from aethel_lite.errors import ParameterError


def chromium_or_skip() -> str:
    try:
        return find_chromium()
    except BrowserNotFound as exc:
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"CI must run the browser check: {exc}")
        pytest.skip(str(exc))


def page(title: str, body: str, head: str = "") -> str:
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title>{head}</head><body>{body}</body></html>"


def make_site(root: Path, pages: dict[str, str]) -> Path:
    for rel, text in pages.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def good_site(root: Path) -> Path:
    """A redirecting index (as Jupyter Book writes it), two chapters, an image, anchors, a static folder."""
    site = make_site(
        root,
        {
            "index.html": '<!DOCTYPE html><html><head><meta http-equiv="Refresh" content="0; url=book/intro.html" /></head></html>',
            "book/intro.html": page(
                "Intro",
                "<h1 id='intro'>Intro</h1><p>Costs $5 and $6 million.</p>"
                "<a href='chapter.html#results'>results</a> <a href='https://example.org/'>out</a>"
                "<img src='../_images/dot.png' alt='a dot'>",
            ),
            "book/chapter.html": page(
                "Chapter",
                "<h1>Chapter</h1><section id='results'><p>HR@5 .75</p>"
                "<div class='cell_output'><pre>HR@5 0.75 (standard error 0.01)</pre></div>"
                "<pre>raise ValueError('in a code block is fine') # \\(x\\)</pre></section>",
            ),
            "_static/skipped.html": page("not a page", "<a href='nowhere.html'>x</a>"),
        },
    )
    (site / "_images").mkdir()
    (site / "_images" / "dot.png").write_bytes(TINY_PNG)
    return site


# 1x1 PNG, written by hand so the test needs no image library
TINY_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360f8cfc0f01f0005000201a2dd83e20000000049454e44ae426082"
)


# -- no browser needed ------------------------------------------------------------------------------
def test_html_pages_lists_pages_and_needs_an_index(tmp_path):
    site = good_site(tmp_path / "site")
    assert html_pages(site) == ["index.html", "book/chapter.html", "book/intro.html"]
    with pytest.raises(ParameterError, match="no index.html.*make book"):
        html_pages(tmp_path / "nothing")


def test_check_links_finds_missing_files_and_anchors(tmp_path):
    site = good_site(tmp_path / "site")
    base = "http://127.0.0.1:9/"
    ok = [
        base + "book/chapter.html#results",
        base + "book/intro.html",
        base + "_images/dot.png",
        "https://x.org/a",
    ]
    assert check_links(site, "book/intro.html", ok, base) == []
    bad = [base + "book/nope.html", base + "book/chapter.html#missing"]
    got = check_links(site, "book/intro.html", bad, base)
    assert [p.kind for p in got] == ["link", "link"]
    assert "no such file book/nope.html" in got[0].detail
    assert "has no anchor #missing" in got[1].detail


def test_text_problems_raw_tex_and_errors():
    clean = {
        "untypeset": [],
        "n_math": 2,
        "mathjax": "ready",
        "text": "Costs $5 and $6 million; HR@5 = .75",
        "outputs": ["HR@5 0.75 (standard error 0.01)"],
    }
    assert text_problems("p.html", clean) == []
    for raw in (r"the walk \(p = \alpha s\)", "$$p$$", r"$\alpha$ here", "$x_i$ and", r"\begin{pmatrix}"):
        assert RAW_TEX.search(raw), raw
        got = text_problems("p.html", {**clean, "text": raw})
        assert [p.kind for p in got] == ["math"], raw
    got = text_problems("p.html", {**clean, "untypeset": [r"\(x\)"], "n_math": 3})
    assert got == [Problem("p.html", "math", r"1 of 3 formulas not typeset (MathJax ready), e.g. '\\(x\\)'")]
    assert text_problems("p.html", {**clean, "page_width": 1280, "window_width": 1280}) == []
    got = text_problems("p.html", {**clean, "page_width": 1815, "window_width": 1280})
    assert [p.kind for p in got] == ["layout"] and "1815 px wide" in got[0].detail
    for out in ("Traceback (most recent call last):\n  File", "KeyError: 'musique'", "Error: no data"):
        got = text_problems("p.html", {**clean, "outputs": ["fine", out]})
        assert [p.kind for p in got] == ["output"] and "notebook output 1" in got[0].detail, out


def test_missing_browser_is_a_clear_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("AETHEL_CHROMIUM", "no-such-browser-xyz")
    with pytest.raises(BrowserNotFound, match="no-such-browser-xyz"):
        find_chromium()
    site = good_site(tmp_path / "site")
    assert main([str(site), "--no-progress"]) == 2
    assert "no-such-browser-xyz" in capsys.readouterr().err
    assert main([str(tmp_path / "no-site"), "--no-progress"]) == 2
    assert "no index.html" in capsys.readouterr().err


# -- real headless Chromium -------------------------------------------------------------------------
def test_good_site_passes_and_a_broken_link_fails(tmp_path, capsys):
    chromium_or_skip()
    site = good_site(tmp_path / "site")
    shots = tmp_path / "shots"
    assert main([str(site), "--screenshots", str(shots), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "checked 3 pages" in out and ": 0 problem(s)" in out
    assert sorted(p.name for p in shots.iterdir()) == ["book__chapter.png", "book__intro.png"]
    assert (shots / "book__intro.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    intro = site / "book" / "intro.html"
    intro.write_text(intro.read_text().replace("chapter.html#results", "chapter-typo.html"))
    assert main([str(site), "--no-screenshots", "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert "book/intro.html: link: /book/chapter-typo.html -> no such file book/chapter-typo.html" in out
    assert ": 1 problem(s)" in out


def test_each_kind_of_breakage_is_reported(tmp_path):
    chromium_or_skip()
    site = make_site(
        tmp_path / "site",
        {
            "index.html": page("Index", "<a href='bad.html'>bad</a>"),
            "bad.html": page(
                "Bad",
                "<img src='_images/gone.png' alt='../_images/gone.png'>"
                "<p>the walk \\(p = \\alpha s\\) unrendered</p>"
                "<div class='cell_output'><pre>Traceback (most recent call last):\n"
                "ValueError: boom</pre></div>"
                "<script>console.error('bad thing'); undefinedFunction();</script>",
            ),
            "wide.html": page("Wide", "<div style='width: 3000px'>a line wider than any window</div>"),
            "cdn.html": page(
                "CDN",
                "<span class='math'>\\(x^2\\)</span>",
                head="<script async src='https://cdn.example.org/mathjax/tex-chtml.js'></script>",
            ),
        },
    )
    reports = {r.page: r for r in check_site(site, progress=False)}
    assert reports["index.html"].problems == []
    assert [p.kind for p in reports["wide.html"].problems] == ["layout"]
    kinds = sorted({p.kind for p in reports["bad.html"].problems})
    assert kinds == ["alt", "console", "math", "output", "resource"]
    details = "\n".join(str(p) for p in reports["bad.html"].problems)
    assert "gone.png answered HTTP 404" in details and "broken image" in details
    assert "console.error: bad thing" in details and "ReferenceError: undefinedFunction" in details
    assert "raw TeX in the text" in details and "Traceback" in details
    # math from a CDN does not load with the network off: the request fails and the formula stays TeX
    cdn = "\n".join(str(p) for p in reports["cdn.html"].problems)
    assert "cdn.example.org/mathjax/tex-chtml.js failed: net::ERR_NAME_NOT_RESOLVED" in cdn
    assert "1 of 1 formulas not typeset" in cdn
    assert (reports["cdn.html"].n_math, reports["cdn.html"].n_untypeset) == (1, 1)


def test_alt_problems_name_images_without_alt_text():
    images = [
        {"src": "a.png", "alt": "One panel per corpus; HR@5 on the horizontal axis."},
        {"src": "b.png", "alt": None},
        {"src": "c.png", "alt": "  "},
        {"src": "d.png", "alt": "../../_images/2416bc99.png"},
        {"src": "e.svg", "alt": "chart.SVG"},
    ]
    found = [str(p) for p in alt_problems("ch.html", images)]
    assert found == [
        "ch.html: alt: image b.png has no alt text",
        "ch.html: alt: image c.png has no alt text",
        "ch.html: alt: image d.png has no alt text (it says '../../_images/2416bc99.png')",
        "ch.html: alt: image e.svg has no alt text (it says 'chart.SVG')",
    ]


def test_offline_mathjax_renders_with_the_network_off(tmp_path):
    """The MathJax the book serves (sphinx-mathjax-offline's copy) typesets with no network."""
    chromium_or_skip()
    spec = importlib.util.find_spec("sphinx-mathjax-offline")
    assert spec is not None and spec.origin, "sphinx-mathjax-offline is a dependency of the book"
    mathjax = Path(spec.origin).parent / "static" / "mathjax"
    site = make_site(
        tmp_path / "site",
        {
            "index.html": page(
                "Math",
                "<p>Inline <span class='math notranslate nohighlight'>\\(p = \\alpha s + (1-\\alpha) W p\\)</span>"
                " and display</p><div class='math notranslate nohighlight'>\\[A = \\begin{pmatrix} 0 & B"
                " \\\\ B^{\\top} & C \\end{pmatrix}\\]</div>",
                head="<script async src='_static/mathjax/tex-chtml.js'></script>",
            ),
        },
    )
    shutil.copytree(mathjax, site / "_static" / "mathjax")
    (report,) = check_site(site, screenshots=tmp_path / "shots", progress=False)
    assert report.problems == [] and report.mathjax == "ready" and report.n_math == 2
    assert report.screenshot == tmp_path / "shots" / "index.png" and report.screenshot.stat().st_size > 1000


# -- the book's Sphinx extension ----------------------------------------------------------------------
def test_plain_references_keeps_the_text_and_drops_the_labels():
    from aethel_lite.book.sphinxext import plain_references

    lines = [
        "Power iteration [1]_ [2]_ and refinement [5]_.",
        "",
        ".. rubric:: References",
        "",
        ".. [1] L. Page, S. Brin,",
        '   "The PageRank citation ranking", 1999.',
        ".. [2] T. H. Haveliwala, 2002.",
        "",
        "    .. [5] J. H. Wilkinson,",
        "       1963.",
        "    after",
    ]
    assert plain_references(lines) == [
        "Power iteration [1] [2] and refinement [5].",
        "",
        ".. rubric:: References",
        "",
        '- [1] L. Page, S. Brin, "The PageRank citation ranking", 1999.',
        "- [2] T. H. Haveliwala, 2002.",
        "",
        "    - [5] J. H. Wilkinson, 1963.",
        "    after",
    ]
    assert plain_references(["a [x]_ b", "c[1]_d"]) == ["a [x]_ b", "c[1]d"]


def test_unique_scripts_drops_a_repeated_inline_script():
    from sphinx.builders.html._assets import _JavaScript

    from aethel_lite.book.sphinxext import unique_scripts

    thebe = _JavaScript("", body="const THEBE_JS_URL = 1")
    scripts = [
        _JavaScript("a.js"),
        thebe,
        _JavaScript("b.js", **{"async": "async"}),
        _JavaScript("", body="const THEBE_JS_URL = 1"),
        _JavaScript("b.js"),
        _JavaScript("a.js"),
    ]
    assert unique_scripts(scripts) == scripts[:3] + [scripts[4]]


# -- the reader's checks (aethel_lite.book.readercheck) ------------------------------------------------
def chapter(body: str) -> str:
    """A notebook page as myst-nb lays it out, in an 800 px text column."""
    return page(
        "Chapter", f"<article style='width: 800px; font: 14px monospace'><h1>Chapter</h1>{body}</article>"
    )


def cell(code: str, output: str = "") -> str:
    return (
        f"<div class='cell'><div class='cell_input'><pre style='overflow: auto'>{code}</pre></div>"
        f"<div class='cell_output'>{output}</div></div>"
    )


SMALL_TABLE = (
    "<table><tr><th>method</th><th>HR@5</th></tr><tr><td>bm25</td><td>0.905 [0.86, 0.94]</td></tr></table>"
)


def test_reader_problems_from_a_probe():
    from aethel_lite.book.readercheck import reader_problems

    fine = {
        "chapter": True,
        "wide": [],
        "stderr": [],
        "warnings": ["HR@5 0.75; a warning in words"],
        "first_result": {"tag": "table", "top": 1400},
    }
    assert reader_problems(fine) == []
    assert (
        reader_problems({**fine, "chapter": False, "first_result": None}) == []
    )  # a text page needs no table
    got = reader_problems({**fine, "first_result": {"tag": "img", "top": 2600}})
    assert got == [
        ("first-result", "the first figure or table (img) starts 2600 px down the page (at most 1500)")
    ]
    assert reader_problems({**fine, "first_result": None}) == [
        ("first-result", "the chapter shows no figure or table")
    ]
    got = reader_problems(
        {**fine, "warnings": ["x", "/lib/a.py:3: FutureWarning: old"], "stderr": ["2wiki: skipped 36 rows"]}
    )
    assert [k for k, _ in got] == ["stderr", "stderr"]
    assert (
        "2wiki: skipped 36 rows" in got[0][1]
        and "output cell 1 shows warning text 'FutureWarning'" in got[1][1]
    )
    got = reader_problems(
        {**fine, "wide": [{"what": "table", "width": 1100, "column": 800, "top": 300, "text": "n"}]}
    )
    assert got == [("wide", "table 1100 px wide in a 800 px column at 300 px (scrolls sideways): 'n'")]


def test_reader_checks_in_the_browser(tmp_path):
    chromium_or_skip()
    long_line = "x = " + " + ".join(f"value_{i}" for i in range(40))
    wide_table = (
        "<table><tr>"
        + "".join(f"<td style='white-space: nowrap'>mean_passage_words {i}</td>" for i in range(12))
        + "</tr></table>"
    )
    site = make_site(
        tmp_path / "site",
        {
            "index.html": page("Index", "<p>A text page: no table needed.</p>"),
            # passes: short code, a table that fits, a wide line folded away (hide-input), notices in words
            "good.html": chapter(
                "<p>What this chapter shows.</p>"
                + cell("x = 1", SMALL_TABLE)
                + f"<details><summary>Show code</summary>{cell(long_line)}</details>"
                + cell("y = 2", "<p>2wiki: 36 rows skipped (no supporting paragraph)</p>")
            ),
            "wide_code.html": chapter(cell(long_line, SMALL_TABLE)),
            "wide_table.html": chapter(cell("t", f"<div style='overflow-x: auto'>{wide_table}</div>")),
            # a box that grows with its table (wider than the 800 px column, narrower than the window)
            "grown_box.html": chapter(
                cell(
                    "t",
                    "<div style='width: max-content'><table><tr>"
                    + "".join(
                        f"<td style='white-space: nowrap'>mean_passage_words {i}</td>" for i in range(6)
                    )
                    + "</tr></table></div>",
                )
            ),
            "stderr.html": chapter(
                cell(
                    "load()",
                    SMALL_TABLE + "<div class='output stderr'><pre>2wiki: skipped 36 rows of"
                    " 2wiki/dev.json</pre></div>",
                )
            ),
            "warning.html": chapter(
                cell("fit()", SMALL_TABLE + "<pre>model.py:12: FutureWarning: the default changes</pre>")
            ),
            "late.html": chapter(
                cell("setup()") + "<div style='height: 1600px'>setup</div>" + cell("show()", SMALL_TABLE)
            ),
            "none.html": chapter(cell("x = 1", "<p>1</p>")),
        },
    )
    reports = {r.page: r for r in check_site(site, progress=False)}
    assert reports["index.html"].problems == [] and reports["good.html"].problems == []
    kinds = {name: [p.kind for p in r.problems] for name, r in reports.items()}
    assert kinds["wide_code.html"] == ["wide"] and "code cell" in reports["wide_code.html"].problems[0].detail
    assert kinds["wide_table.html"] == ["wide"] and "table" in reports["wide_table.html"].problems[0].detail
    assert (
        kinds["grown_box.html"] == ["wide"]
        and "800 px column" in reports["grown_box.html"].problems[0].detail
    )
    assert (
        kinds["stderr.html"] == ["stderr"] and "skipped 36 rows" in reports["stderr.html"].problems[0].detail
    )
    assert (
        kinds["warning.html"] == ["stderr"] and "FutureWarning" in reports["warning.html"].problems[0].detail
    )
    assert kinds["late.html"] == ["first-result"]
    top = int(reports["late.html"].problems[0].detail.split(" starts ")[1].split(" px")[0])
    assert 1600 < top < 1800, top  # below the 1600 px of setup, measured in the page
    assert (
        kinds["none.html"] == ["first-result"]
        and "no figure or table" in reports["none.html"].problems[0].detail
    )
