"""Honest by construction: sentences that state results are checked, and hand-typed numbers are found.

A chapter states a result either in a sentence generated from the result file, or in a hand-written
Markdown cell followed by a cell that calls a *claim check* here, which raises :class:`ClaimError`
(failing the notebook, and ``make book``) when the result file stops supporting it. A check that
cannot apply to this build (no real data, quick mode) says so in its output.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import AethelError

__all__ = ["ClaimError", "Claim", "check_claim", "graph_loses_on_filings", "ALLOWED", "hand_typed_numbers"]


class ClaimError(AethelError, AssertionError):
    """A sentence of the book is no longer supported by the result file it is about."""


@dataclass(frozen=True)
class Claim:
    """The outcome of a claim check, shown under the sentence it checks: ``holds`` is True (supported) or
    None (not checkable in this build: ``evidence`` says why); :func:`check_claim` raises instead of False."""

    text: str
    holds: bool | None
    evidence: str

    def _repr_markdown_(self) -> str:
        if self.holds:
            return f"*Checked against the result file:* {self.evidence}"
        return f"*Not checked in this build:* {self.evidence}"

    __repr__ = _repr_markdown_


def check_claim(text: str, holds: bool | None, evidence: str) -> Claim:
    """Check one hand-written sentence against numbers from a result file.

    Parameters
    ----------
    text : str
        The sentence, as the chapter states it.
    holds : bool or None
        Whether the numbers support it; None when they cannot be checked in this build.
    evidence : str
        The numbers (or the reason it cannot be checked), shown in the book.

    Raises
    ------
    ClaimError
        ``holds`` is False: the message quotes the sentence and the numbers that contradict it.
    """
    if holds is False:
        raise ClaimError(f"the book says {text!r}, but the results do not support it: {evidence}")
    return Claim(text, holds, evidence)


def graph_loses_on_filings(saved: Mapping[str, Any], dataset: str = "financebench") -> Claim:
    """Claim: on real filings the NER3 entity graph loses to BM25 and to dense retrieval.

    On ``dataset`` of ``results/open_corpus.json``, ``aethel-ner3``'s MRR and HR@5 must both be below
    BM25's and the better dense variant's. Not checked without real data or in quick mode.
    """
    text = "on real filings the entity graph, as the paper builds it, loses to BM25 and to dense retrieval"
    res = saved.get("datasets", {}).get(dataset)
    if saved.get("synthetic_only") or res is None:
        return check_claim(text, None, f"no real {dataset} run in this build (synthetic corpus only)")
    if saved.get("parameters", {}).get("quick"):
        why = "quick mode (a few questions over a small sample); the sentence is about the full run"
        return check_claim(text, None, why)
    m = res["methods"]
    if "aethel-ner3" not in m or "bm25" not in m or not ({"dense", "dense-max"} & set(m)):
        return check_claim(text, None, "aethel-ner3, bm25 or a dense method was not run")
    # the better dense variant on each metric (one may lead on MRR, the other on HR@5)
    dense = {
        metric: max((d for d in ("dense", "dense-max") if d in m), key=lambda d: (m[d][metric], d))
        for metric in ("MRR", "HR@5")
    }
    bad = [
        f"{metric}: graph {m['aethel-ner3'][metric]:.3f} is not below {other} {m[other][metric]:.3f}"
        for metric in ("MRR", "HR@5")
        for other in ("bm25", dense[metric])
        if not m["aethel-ner3"][metric] < m[other][metric]
    ]
    if bad:
        return check_claim(text, False, "; ".join(bad))
    said = [
        f"{metric} graph {m['aethel-ner3'][metric]:.3f} < BM25 {m['bm25'][metric]:.3f}, < {dense[metric]} "
        f"{m[dense[metric]][metric]:.3f}"
        for metric in ("MRR", "HR@5")
    ]
    return check_claim(text, True, f"on `{dataset}`, " + "; ".join(said))


# ------------------------------------------------------------------------------------ typed-in numbers
#: Numbers a Markdown cell may hold because they are not results: (notebook, number as written, why).
#: Years (1900–2099) and digits inside names (``NER3``, ``2Wiki``, ``HR@5``, ``MiniLM-L6-v2``, ``FY2018``)
#: are allowed everywhere and not listed.
ALLOWED: tuple[tuple[str, str, str], ...] = (
    ("10_closed_pool", "0.85", "PageRank's classic damping, named in the exercise"),
    ("20_open_corpus", "256", "MiniLM's input limit in word pieces (a property of the model)"),
    ("20_open_corpus", "200", "the dense-max chunk size in words (a method setting)"),
    ("20_open_corpus", "1,000", "the depth of every run (data.runs.RUN_DEPTH), a method setting"),
    ("25_hybrid", "256", "MiniLM's input limit in word pieces (a property of the model)"),
    ("25_hybrid", "200", "the dense-max chunk size (words) and the heading's length (characters): settings"),
    ("25_hybrid", "10", "the number of hits a latency measurement asks for (a setting)"),
    ("25_hybrid", "2", "HippoRAG 2, a method's name"),
    ("27_multihop", "2", "HippoRAG 2, a method's name"),
    ("25_hybrid", "10", "10-Q, the name of a filing type"),
    ("25_hybrid", "0", "a weight of zero: what the tuning was free to give any term (a grid value)"),
    ("01_graph_construction", "20", "a MuSiQue pool holds 20 paragraphs; the chapter's question count"),
    ("01_graph_construction", "5", "the ner3 stop-entity threshold (share of paragraphs), a method setting"),
    ("01_graph_construction", "1", "a property of the teleport vector: its mass sums to one"),
    ("01_graph_construction", "0.85", "PageRank's classic damping, named in an exercise"),
    (
        "01_graph_construction",
        "3",
        "graph distance: a second-hop paragraph is three edges from a seed entity",
    ),
    ("40_provenance", "20", "data-set format: a MuSiQue pool holds 20 paragraphs"),
    ("40_provenance", "10", "data-set format: a 2Wiki pool holds 10 paragraphs"),
    ("40_provenance", "0", "a property of PageRank: a passage with no path from a seed gets zero"),
    ("50_swarm", "1577.00", "a FinanceBench question's gold answer, quoted as an example of the data"),
    ("50_swarm", "1,577", "the same figure as the filing prints it, quoted"),
)

_FENCE = re.compile(r"^(```+|:::+)([^\n]*)\n(.*?)^\1[ \t]*$", re.S | re.M)
_STRIP = [
    re.compile(r"\$\$.*?\$\$", re.S),  # display math
    re.compile(r"\$(?!\d)[^$\n]+\$"),  # inline math (not "$1,577 ... $1,600": money)
    re.compile(r"\{[\w:-]+\}`[^`]*`"),  # MyST roles: {doc}`...`, {cite}`...`
    re.compile(r"`[^`\n]*`"),  # inline code
    re.compile(r"\]\([^)]*\)"),  # link targets
    re.compile(r"</?[A-Za-z][^>\n]*>"),  # HTML tags (not "MRR < 0.21, HR@5 > ...")
    re.compile(r"95%\s+(?:CI|confidence|percentile|bootstrap)"),  # every interval's confidence level
    re.compile(r"\b(?:Step|Exercise|Part|Section)\s+\d+\b"),  # a chapter's steps and exercises
    re.compile(r"\btop[- ]\d+\b(?![,.]\d)"),  # a metric's cut-off k ("in the top 5"), a setting
]
# a number as prose writes it ("0.41-0.45" is two)
_NUMBER = re.compile(r"(?<![\w@.#])(?<![A-Za-z_][/-])[+\-−]?\.?\d[\d,]*(?:\.\d+)?%?(?![\w@])")
_YEAR = re.compile(r"^(19|20)\d\d$")


def _unfence(match: re.Match) -> str:
    """Code fences vanish; a MyST directive (```{admonition}, :::{note}) keeps its prose, not its options."""
    info, body = match.group(2).strip(), match.group(3)
    if not info.startswith("{") or info.startswith(("{code", "{math")):
        return " "
    body = re.sub(r"\A---\n.*?^---[ \t]*$", " ", body, flags=re.S | re.M)  # a YAML block of options
    kept = "\n".join(line for line in body.splitlines() if not re.match(r"^:[\w-]+:", line))
    return _FENCE.sub(_unfence, kept)  # fences nested in the directive's body


def _numbers(markdown: str) -> list[str]:
    text = _FENCE.sub(_unfence, markdown)
    for pattern in _STRIP:
        text = pattern.sub(" ", text)
    tokens = (m.group(0).lstrip("+-−").rstrip("%").rstrip(",") for m in _NUMBER.finditer(text))
    return [token for token in tokens if token and not _YEAR.match(token)]


def hand_typed_numbers(
    name: str, cells: Iterable[Mapping[str, Any]], allowed: Iterable[tuple[str, str, str]] = ALLOWED
) -> list[tuple[int, str]]:
    """Numbers typed into the Markdown cells of notebook ``name`` that are not on the allowed list.

    Parameters
    ----------
    name : str
        The notebook's stem (``10_closed_pool``), matched against ``allowed``.
    cells : iterable of mapping
        The notebook's cells (``cell_type``, ``source``), as :mod:`nbformat` reads them.
    allowed : iterable of (notebook, number, why)
        :data:`ALLOWED` by default.

    Returns
    -------
    list of (cell index, number)
        Empty when every number in the chapter's prose is generated (in an output) or allowed.
    """
    ok = {num for nb, num, _ in allowed if nb == name}
    return [
        (i, num)
        for i, cell in enumerate(cells)
        if cell.get("cell_type") == "markdown"
        for num in _numbers("".join(cell["source"]))
        if num not in ok
    ]  # a str or a list of lines
