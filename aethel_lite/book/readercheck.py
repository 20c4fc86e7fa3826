"""The reader's checks of a built chapter: what fits the column, what reads as noise, where the answer is.

:func:`aethel_lite.book.bookcheck.check_site` runs :data:`READER_PROBE` in each page (at the
check's 1280 px window) and hands its result to :func:`reader_problems`, which reports:

``wide``
    a visible code cell or table wider than its box (it scrolls sideways), or a notebook output's
    table that reaches past the right edge of the text column (``article``);
``stderr``
    a notebook output that shows a stderr stream (myst-nb's ``.stderr`` box) or warning text;
``first-result``
    a chapter (a page holding notebook cells) whose first figure or table starts more than
    :data:`FIRST_RESULT_MAX` pixels down the page, or that shows none at all.

Elements hidden from the reader (a folded ``hide-input`` cell, ``display: none``) are not measured.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["READER_PROBE", "FIRST_RESULT_MAX", "WARNING_WORD", "reader_problems"]

#: Pixels from the top of a chapter within which its first figure or table must start.
FIRST_RESULT_MAX = 1500
WARNING_WORD = re.compile(r"\b(?:[A-Z][a-z]+)*Warning\b")

# Runs in the loaded page; returns what reader_problems needs (lists of short descriptions).
READER_PROBE = r"""
(() => {
  // checkVisibility() also says no inside a closed <details> (a folded hide-input cell)
  const visible = el => (el.checkVisibility ? el.checkVisibility() : el.offsetParent !== null)
                        && el.getClientRects().length > 0 && !el.closest("details:not([open])");
  const top = el => Math.round(el.getBoundingClientRect().top + window.scrollY);
  const label = (el, what) => {
    const text = (el.textContent || "").trim().split("\n")[0].slice(0, 60);
    return {what, top: top(el), width: Math.max(el.scrollWidth, el.offsetWidth), text};
  };
  const wide = [];
  for (const pre of document.querySelectorAll(".cell_input pre")) {
    if (visible(pre) && pre.scrollWidth > pre.clientWidth + 1)
      wide.push({...label(pre, "code cell"), column: pre.clientWidth});
  }
  const scope = document.querySelector("article") || document.querySelector("main") || document.body;
  const edge = scope.getBoundingClientRect().right;  // the text column's right edge
  for (const table of document.querySelectorAll("table")) {
    if (!visible(table)) continue;
    const box = table.parentElement;
    const width = Math.max(table.scrollWidth, table.offsetWidth);
    const column = box ? box.clientWidth : width;
    // a notebook output's box that grew with its table (Sphinx's own pages lay out their tables themselves)
    const past = table.closest(".cell_output") ? table.getBoundingClientRect().right - edge : 0;
    if (width > column + 1 || past > 1)
      wide.push({...label(table, "table"), column: width > column + 1 ? column : Math.round(width - past)});
  }
  const stderr = Array.from(document.querySelectorAll(".cell_output .stderr"))
                      .filter(visible).map(el => (el.textContent || "").trim().slice(0, 120));
  const warnings = Array.from(document.querySelectorAll(".cell_output")).filter(visible)
                        .map(el => el.textContent || "");
  const results = Array.from(scope.querySelectorAll("img, table, svg.figure, figure")).filter(visible);
  const first = results.length ? results.reduce((a, b) => (top(a) <= top(b) ? a : b)) : null;
  return {chapter: document.querySelectorAll(".cell").length > 0, wide, stderr, warnings,
          first_result: first ? {tag: first.tagName.toLowerCase(), top: top(first)} : null};
})()
"""


def reader_problems(probe: dict[str, Any], *, first_max: int = FIRST_RESULT_MAX) -> list[tuple[str, str]]:
    """What a reader meets on a page, from :data:`READER_PROBE`'s result: ``(kind, detail)`` pairs,
    kinds ``wide``, ``stderr`` and ``first-result`` (see the module's docstring)."""
    problems = []
    for w in probe.get("wide", []):
        where = f"{w['width']} px wide in a {w['column']} px column at {w['top']} px (scrolls sideways)"
        problems.append(("wide", f"{w['what']} {where}: {w['text']!r}"))
    for text in probe.get("stderr", []):
        problems.append(("stderr", f"an output cell shows stderr: {' '.join(text.split())[:100]!r}"))
    for i, text in enumerate(probe.get("warnings", [])):
        if match := WARNING_WORD.search(text):
            context = " ".join(text[max(0, match.start() - 40) : match.end() + 60].split())
            said = f"output cell {i} shows warning text {match.group(0)!r}"
            problems.append(("stderr", f"{said}: ...{context}..."))
    first = probe.get("first_result")
    if probe.get("chapter") and first is None:
        problems.append(("first-result", "the chapter shows no figure or table"))
    elif probe.get("chapter") and first["top"] > first_max:
        where = f"starts {first['top']} px down the page (at most {first_max})"
        problems.append(("first-result", f"the first figure or table ({first['tag']}) {where}"))
    return problems
