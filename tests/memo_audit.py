"""An independent auditor of the investment-committee memos (hand-written rules, not the library's checks), shared by
the swarm tests and the book build's test (which audits the memos its swarm chapter wrote without data)."""

from __future__ import annotations

import re
from pathlib import Path

from aethel_lite.data.synthetic import make_synthetic
from aethel_lite.io import read_json
from aethel_lite.swarm import AliasResolver, DocumentResolver


def _collapse(text: str) -> str:
    return " ".join(text.split())


def audit_memo(markdown: str, passages: dict, names: list[str]) -> int:
    """Check a memo by hand-written rules; return how many figures its body prints."""
    body, _, table = markdown.partition("## Audit trail")
    rows = {}
    for line in table.splitlines():
        if not line.startswith("| A"):
            continue
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        ref, figure, _entity, _metric, _period, doc, page, pid, quote = cells
        p = passages[pid]
        assert quote in _collapse(p.text), f"{ref}: quote not in passage {pid}"
        assert doc == p.doc_id, ref
        if isinstance(p.meta.get("page"), int):
            assert page == str(p.meta["page"] + 1), ref
        if figure != "—":
            assert figure in quote, f"{ref}: figure {figure!r} not in its quote"
        rows[ref] = figure
    n = 0
    for m in re.finditer(r"\*\*([^*]+)\*\*((?: \[A\d+\])+)", body):
        refs = re.findall(r"A\d+", m.group(2))
        for ref in refs:
            assert rows.get(ref) == m.group(1), (
                f"{m.group(1)!r} cites {ref}, whose figure is {rows.get(ref)!r}"
            )
        n += 1
    rest = re.sub(r"\*\*([^*]+)\*\*((?: \[A\d+\])+)", " ", body)
    for ref in re.findall(r"\[(A\d+)\]", rest):
        assert ref in rows, ref
    rest = re.sub(r"\[A\d+\]", " ", rest)
    for name in sorted(names, key=len, reverse=True):
        rest = rest.replace(name, " ")
    # periods: "Q3 FY2024", "9M FY2024", "H1 FY2024", "FY2024", "2024Q3", "2024-06-29", "June 29, 2024"
    rest = re.sub(
        r"\b(?:(?:Q[1-4]|H1|6M|9M) )?(?:FY)?20\d\d(?:Q[1-4])?\b|\b20\d\d-\d\d-\d\d\b"
        r"|\b(?:January|February|March|April|May|June|July|August|September|October|November|December) "
        r"\d{1,2}, 20\d\d\b",
        " ",
        rest,
    )
    stray = re.findall(r"\S*\d\S*", rest)
    assert not stray, f"numbers without an audit row: {stray[:5]}"
    return n


def audit_chapter_memos(root: Path, real_data: Path | None = None) -> tuple[dict, list[Path], int]:
    """Audit every memo a swarm chapter run wrote under ``root`` (:func:`audit_memo`, each against the corpus
    it was written from); the chapter's result file, the memo files and the figures the memos print."""
    saved = read_json(root / "results" / "swarm.json")
    p = saved["parameters"]
    corpus = make_synthetic(p["synthetic_size"], seed=0, contradictions=p["contradictions"])
    corpora = {"synthetic": {x.pid: x for x in corpus.passages}}
    resolvers = {"synthetic": AliasResolver(corpus.meta["aliases"])}
    if saved["financebench"] is not None:
        from aethel_lite.data.loaders import load_financebench

        fb = load_financebench(real_data / "financebench")
        corpora["financebench"] = {x.pid: x for x in fb.passages}
        resolvers["financebench"] = DocumentResolver(fb.passages)
    memos = sorted((root / "results" / "swarm_memos").glob("*.md"))
    assert sorted(Path(m).name for m in saved["audit"]["memos"]) == [m.name for m in memos]
    n = 0
    for path in memos:
        kind = "financebench" if path.name.startswith("financebench-") else "synthetic"
        md = path.read_text(encoding="utf-8")
        title = md.splitlines()[0].removeprefix("# Investment-committee memo: ")
        entity = resolvers[kind].lookup(title)
        names = [resolvers[kind].display(e) for e in resolvers[kind].scope(entity)] if entity else []
        n += audit_memo(md, corpora[kind], names)
    return saved, memos, n
