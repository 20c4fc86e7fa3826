"""Tables as the book shows them: a DataFrame that fits the column (:func:`table`) and a corpus summary."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "Table",
    "table",
    "summary_table",
]


# ------------------------------------------------------------------------------- tables that fit
def _cell(value: Any) -> Any:
    """A dict or list cell in words ("2: 145 · 3: 32"), so no column holds a raw Python object."""
    if isinstance(value, Mapping):
        return " · ".join(f"{k}: {v}" for k, v in value.items())
    if isinstance(value, (list, tuple, set)):
        return ", ".join(str(v) for v in value)
    return "" if value is None else value


_CI_HTML = re.compile(r"(\d) \[([-+]?\d[\d.]*), ([-+]?\d[\d.]*)\]")


class Table:
    """A table as the book shows it (made by :func:`table`): HTML in a notebook, aligned text elsewhere;
    ``frame`` is the DataFrame shown."""

    def __init__(self, frame, decimals: int = 3):
        self.frame, self.decimals = frame, decimals

    def _format(self) -> dict:
        return {"index": False, "na_rep": "", "float_format": f"{{:.{self.decimals}f}}".format}

    def _repr_html_(self) -> str:
        html = self.frame.to_html(border=0, classes="dataframe aethel-table", escape=True, **self._format())
        html = _CI_HTML.sub(r"\1 [\2,&nbsp;\3]", html)  # "0.905 [0.86, 0.94]" breaks before the interval only
        # a long word (a path, an id) may break rather than push the table past the column
        return html.replace("<table ", '<table style="overflow-wrap: break-word" ', 1)

    def __repr__(self) -> str:
        return self.frame.to_string(**self._format())


def table(df, *, decimals: int = 3, transpose: bool = False) -> Table:
    """``df`` ready to read: a named or non-default index becomes an ordinary first column (pandas'
    0, 1, 2 ... is dropped), dict and list cells are flattened to words, floats get ``decimals``
    places; ``transpose`` turns a wide one-row-per-thing table into one row per field (the first
    column's values become the headers)."""
    import pandas as pd

    if transpose:
        first = df.index if df.index.name else df.iloc[:, 0]
        body = df if df.index.name else df.iloc[:, 1:]
        df = pd.DataFrame(body.to_numpy().T, index=body.columns, columns=list(first))
        df.index.name = ""
    if isinstance(df.columns, pd.MultiIndex):  # ("MRR", "dev") -> "MRR: dev": one header row
        df = df.set_axis([": ".join(str(part) for part in col if part != "") for col in df.columns], axis=1)
    named = [n for n in df.index.names if n]
    if named:  # a named index level (method, data set, ...) is a column like the others
        df = df.reset_index(level=named)
    if not isinstance(df.index, pd.RangeIndex):  # what is left: pandas' counters (dropped) or unnamed labels
        integral = pd.api.types.is_integer_dtype(df.index.dtype)
        df = df.reset_index(drop=integral) if integral else df.rename_axis("").reset_index()
    df = df.apply(lambda col: col.map(_cell)) if len(df) else df
    df.columns.name = None  # the name of a transposed frame's columns would print as an empty column
    return Table(df, decimals)


def dataframe(rows, index: str | None = None):
    """``rows`` (dicts) as a pandas DataFrame, indexed by its column ``index`` when given."""
    import pandas as pd

    df = pd.DataFrame(rows)
    return df if index is None else df.set_index(index)


SUMMARY_LABELS = {
    "n_passages": "passages",
    "n_documents": "documents",
    "n_queries": "questions",
    "hops": "questions by hop count",
    "mean_gold": "gold passages per question",
    "mean_passage_chars": "mean passage length (characters)",
    "mean_passage_words": "mean passage length (words)",
    "closed_pool": "questions with a closed pool",
}


def summary_table(summaries: Sequence[Mapping[str, Any]]) -> Table:
    """Data-set summaries (:func:`aethel_lite.data.summary.dataset_summary`), one column per data set and
    one row per field in words, so that a long list of fields never runs past the column."""
    fields = [k for k in summaries[0] if k != "name"] if summaries else []
    rows = [
        {
            "": SUMMARY_LABELS.get(k, k.replace("_", " ")),
            **{s.get("name", str(i)): _cell(s.get(k)) for i, s in enumerate(summaries)},
        }
        for k in fields
    ]
    return Table(dataframe(rows), decimals=2)
