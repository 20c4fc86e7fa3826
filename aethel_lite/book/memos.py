"""A memo as the book shows it: the memo, then (folded) the passages its specialists were given."""

from __future__ import annotations

from typing import Any

from .report import table

__all__ = ["side_by_side"]


def side_by_side(memo_html: str, context: Any):
    """``memo_html`` in a scrolling box, then ``context`` (a DataFrame, one passage a row) folded under
    it: one under the other, both fit the column. ``SwarmStudy.memo_view`` gives the pair."""
    from IPython.display import HTML

    memo = f'<div style="max-height: 640px; overflow: auto; margin-bottom: 1em; font-size: 85%">{memo_html}</div>'
    folded = (
        f"<details><summary>The {len(context)} passages the specialists were given</summary>"
        f'<div style="font-size: 85%">{table(context)._repr_html_()}</div></details>'
    )
    return HTML(memo + folded)
