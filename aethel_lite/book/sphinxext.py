"""Sphinx extension for the book: page-safe numbered references in the API reference, no duplicate scripts.

Docutils footnote labels are unique per *page*, and the API page documents several modules, each
numbering its NumPy-style references from 1, so :func:`plain_references` turns them into plain text
in each docstring as autodoc reads it. :func:`unique_scripts` drops a script that a page would
include twice (sphinx-thebe registers its inline configuration on every ``env-before-read-docs``,
which Jupyter Book emits twice: the second copy is a JavaScript ``SyntaxError``). ``setup`` also
loads ``sphinx-mathjax-offline`` (formulas render with no network) and adds the book's stylesheet (:data:`STATIC`).

Enabled in ``_config.yml`` (``sphinx: extra_extensions: [aethel_lite.book.sphinxext]``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["plain_references", "unique_scripts", "STATIC", "setup"]

#: The book's own static files (``aethel-book.css``: the general index's columns wrap long names).
STATIC = Path(__file__).resolve().parent / "static"

_REF = re.compile(r"\[(\d+)\]_")
# a definition and its more deeply indented continuation lines
_DEF = re.compile(r"^([ \t]*)\.\. \[(\d+)\][ \t]+(.*)((?:\n\1[ \t]+\S.*)*)", re.M)


def plain_references(lines: list[str]) -> list[str]:
    """Docstring lines with numbered footnote references and definitions turned into plain text.

    >>> plain_references(["PageRank [1]_.", "", ".. [1] L. Page et al.,", "   Stanford 1999."])
    ['PageRank [1].', '', '- [1] L. Page et al., Stanford 1999.']
    """

    def define(m: re.Match) -> str:
        return f"{m[1]}- [{m[2]}] " + " ".join(
            [m[3].strip(), *(line.strip() for line in m[4].split("\n")[1:])]
        )

    text = _DEF.sub(define, "\n".join(lines))
    return [_REF.sub(r"[\1]", line) for line in text.split("\n")] if lines else []


def _process_docstring(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    lines[:] = plain_references(lines)


def unique_scripts(scripts: list[Any]) -> list[Any]:
    """``scripts`` (Sphinx's ``script_files`` of a page) without repeats (same file name and attributes),
    first occurrence kept."""
    kept: dict[tuple[str, str], Any] = {}
    for script in scripts:
        attributes = getattr(script, "attributes", {}) or {}
        kept.setdefault(
            (str(getattr(script, "filename", script) or ""), repr(sorted(attributes.items()))), script
        )
    return list(kept.values())


def _dedupe_scripts(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if "script_files" in context:
        context["script_files"] = unique_scripts(context["script_files"])


def _add_static(app: Any, config: Any) -> None:
    config.html_static_path = [*config.html_static_path, str(STATIC)]


def setup(app: Any) -> dict[str, Any]:
    """Register the docstring hook (after napoleon, which runs at the default priority) and the page hook."""
    app.setup_extension("sphinx.ext.autodoc")
    # a dependency of the book: without it MathJax would come from its CDN, and no formula renders offline
    app.setup_extension("sphinx-mathjax-offline")
    app.connect("config-inited", _add_static)
    app.add_css_file("aethel-book.css")
    app.connect("autodoc-process-docstring", _process_docstring, priority=600)
    app.connect("html-page-context", _dedupe_scripts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
