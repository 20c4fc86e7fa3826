"""Sphinx directive ``argparse-epilog``: the text ``aethel COMMAND --help`` ends with, from the parser itself.

sphinx-argparse (``sphinxarg.ext``) renders each command's usage and options from
:func:`aethel_lite.cli.build_parser` (``book/cli.md``), but it reads an epilog as running text, so the
aligned list that ends ``aethel search --help`` (one retrieval method and its summary a line) would run
together. This directive renders the same epilog: each indented ``NAME  description`` line becomes a row of
a two-column table, any other line a paragraph (backquoted spans as code). Usage, in MyST::

    ```{argparse-epilog} search
    ```

(use ``:noepilog:`` on that command's ``argparse`` directive). Enabled in ``_config.yml``
(``sphinx: local_extensions``).
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

#: an indented "NAME  description" line of an epilog (two spaces or more between the two)
ROW = re.compile(r"^\s+(\S+)\s{2,}(\S.*)$")


def epilog_of(path: str) -> str:
    """The epilog of ``aethel PATH`` (e.g. ``"search"``) as ``build_parser()`` sets it ('' when none)."""
    import argparse

    from aethel_lite.cli import build_parser

    parser = build_parser()
    for word in path.split():
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return parser.epilog or ""


def _inline(text: str) -> list[nodes.Node]:
    """Text with its backquoted spans as literals."""
    parts = text.split("`")
    return [nodes.literal(text=p) if i % 2 else nodes.Text(p) for i, p in enumerate(parts) if p]


class ArgparseEpilog(SphinxDirective):
    """``argparse-epilog COMMAND``: the epilog of ``aethel COMMAND --help``."""

    required_arguments = 1
    final_argument_whitespace = True

    def run(self) -> list[nodes.Node]:
        out: list[nodes.Node] = []
        rows: list[tuple[str, str]] = []
        for line in epilog_of(self.arguments[0]).splitlines() + [""]:
            match = ROW.match(line)
            if match:
                rows.append(match.groups())
                continue
            if rows:
                out.append(_table(rows))
                rows = []
            if line.strip():
                out.append(nodes.paragraph("", "", *_inline(line.strip())))
        return out


def _table(rows: list[tuple[str, str]]) -> nodes.table:
    group = nodes.tgroup(cols=2)
    group += [nodes.colspec(colwidth=1), nodes.colspec(colwidth=3)]
    body = nodes.tbody()
    for name, text in rows:
        row = nodes.row()
        row += nodes.entry("", nodes.paragraph("", "", nodes.literal(text=name)))
        row += nodes.entry("", nodes.paragraph("", "", *_inline(text)))
        body += row
    group += body
    return nodes.table("", group)


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("argparse-epilog", ArgparseEpilog)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
