"""What ``aethel index`` prints when it is done (without ``--json``): a few lines for a person.

The lines say where the index is, what it holds (documents by filing type and fiscal period, read from its
``docmeta.json`` when it has one: :func:`~aethel_lite.data.docmeta.document_metadata`), the methods it answers,
how long it took and the command to run next. ``aethel index --json`` prints :func:`~aethel_lite.search.builder.build_index`'s
dict instead (a public interface).
"""

from __future__ import annotations

import os
import shlex
import textwrap
from collections.abc import Mapping, Sequence

from ..data.docmeta import DocMeta, read_docmeta
from ..data.fiscal import filer_key
from ..errors import DataError
from ..retrievers.hybrid import ABLATIONS, HISTORICAL
from ..retrievers.registry import DEFAULT_METHOD, METHODS, MULTIHOP_ABLATIONS
from .format import DOCMETA_FILE

__all__ = ["FORM_NAMES", "VARIANTS", "document_kinds", "duration", "index_summary"]

#: filing-type keys of :func:`~aethel_lite.data.docmeta.type_keys` as filings name them, in the order shown
FORM_NAMES = {"10k": "10-K", "10q": "10-Q", "8k": "8-K", "20f": "20-F", "earnings": "earnings"}
#: periods shown per filing type before the list is cut short
SHOWN_PERIODS = 4
#: methods for study rather than use (ablations, the graph without its fallback, the earlier hybrid): counted in the
#: summary, not named (``aethel search --help`` lists them)
VARIANTS = frozenset(
    [*ABLATIONS, *HISTORICAL, *MULTIHOP_ABLATIONS, *(m for m in METHODS if m.endswith("-pure"))]
)
#: width the summary's lines are wrapped to
WIDTH = 100


def _period(meta: DocMeta) -> str | None:
    """A document's most precise period as its filer names it (:func:`~aethel_lite.data.fiscal.filer_key`): its
    quarter (``2023q1``) when it has one, else its year."""
    period = next((p for p in meta.periods if "q" in p), None) or next(iter(meta.periods), None)
    return None if period is None else filer_key(period, meta.fiscal_year_name)


def _periods_text(periods: Sequence[str]) -> str:
    shown = sorted(set(periods))
    if len(shown) > SHOWN_PERIODS:
        shown = [*shown[: SHOWN_PERIODS - 1], "...", shown[-1]]
    return ", ".join(shown)


def document_kinds(metas: Mapping[str, DocMeta]) -> list[tuple[str, int, list[str]]]:
    """The documents by filing type: ``(form, count, periods)``, forms in :data:`FORM_NAMES` order, then
    ``"other"`` (no type read); ``periods`` are the distinct most precise periods, sorted."""
    groups: dict[str, list[DocMeta]] = {}
    for meta in metas.values():
        form = FORM_NAMES.get(meta.types[0], meta.types[0]) if meta.types else "other"
        groups.setdefault(form, []).append(meta)
    order = [*FORM_NAMES.values()]
    keys = sorted(groups, key=lambda f: (f == "other", order.index(f) if f in order else len(order), f))
    return [
        (form, len(groups[form]), sorted({p for m in groups[form] if (p := _period(m)) is not None}))
        for form in keys
    ]


def duration(seconds: float) -> str:
    """``4.2 s``, ``2 min 42 s`` or ``1 h 05 min``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _documents_text(info: Mapping, index_dir: str | os.PathLike) -> str:
    """``3 documents: 2 8-K (2023), 1 earnings (2023q1)`` (the count alone without a ``docmeta.json``)."""
    n = _plural(info["n_documents"], "document")
    try:
        metas = read_docmeta(os.path.join(index_dir, DOCMETA_FILE))
    except (DataError, OSError):  # built without a hybrid method: no docmeta.json
        return n
    kinds = [
        f"{count:,} {form}" + (f" ({_periods_text(periods)})" if periods else "")
        for form, count, periods in document_kinds(metas)
    ]
    return f"{n}: {', '.join(kinds)}"


def _listed(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _passages_text(info: Mapping) -> str:
    words = info.get("chunk_words")
    what = f"windows of up to {words:,} words" if words else "a PDF page or a paragraph of text each"
    return f"{_plural(info['n_passages'], 'passage')} ({what})"


def index_summary(info: Mapping, *, add: bool = False, index_dir: str | os.PathLike | None = None) -> str:
    """The lines ``aethel index`` prints for the dict :func:`~aethel_lite.search.builder.build_index` returned.

    Parameters
    ----------
    info : mapping
        ``build_index``'s result (``index``, ``n_documents``, ``n_passages``, ``chunk_words``, ``methods``,
        ``searchable``, ``seconds``, ``added``/``replaced``/``unchanged``/``skipped``).
    add : bool
        The files were added to an existing index (``--add``).
    index_dir : path-like, optional
        Where to read ``docmeta.json`` (default ``info["index"]``).

    Returns
    -------
    str
        Lines, each ending in a newline: what was done and how long it took, what the index holds, the methods
        it answers and the ``aethel search`` command to run next.
    """
    folder = str(info["index"])
    index_dir = folder if index_dir is None else index_dir
    took = duration(float(info["seconds"]))
    skipped = len(info.get("skipped") or ())
    skipped_text = f"; skipped {_plural(skipped, 'file')} (see the warnings above)" if skipped else ""
    if add:
        counts = [len(info.get(k) or ()) for k in ("added", "replaced", "unchanged")]
        first = (
            f"Updated the index {folder} in {took}: added {_plural(counts[0], 'document')}, replaced "
            f"{counts[1]:,}, kept {counts[2]:,} unchanged{skipped_text}."
        )
    else:
        first = f"Built the index {folder} in {took}{skipped_text}."
    searchable = list(info["searchable"])
    built = [m for m in info["methods"] if m in searchable]
    others = [m for m in searchable if m not in built and m not in VARIANTS]
    variants = sum(m in VARIANTS and m not in built for m in searchable)
    if variants:
        others.append(f"{_plural(variants, 'variant')} for study (`aethel search --help`)")
    methods = ", ".join(f"{m} (the default)" if m == DEFAULT_METHOD else m for m in built)
    command = f'aethel search {shlex.quote(folder)} "your question"'
    if DEFAULT_METHOD not in searchable:
        command += f" --method {(built or searchable)[0]}"
    wrapped = [
        f"It holds {_documents_text(info, index_dir)}; {_passages_text(info)}.",
        f"Methods: built for {methods}" + (f"; it also answers {_listed(others)}" if others else "") + ".",
    ]
    return "".join(
        [
            first + "\n",  # paths are not wrapped: a line break would end a pasted command
            *(
                textwrap.fill(
                    line, WIDTH, subsequent_indent="  ", break_on_hyphens=False, break_long_words=False
                )
                + "\n"
                for line in wrapped
            ),
            f"Next: {command}\n",
        ]
    )
