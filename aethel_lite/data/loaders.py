"""Loaders for the evaluation data: MuSiQue, 2WikiMultiHopQA and FinanceBench.

Every loader returns a validated :class:`~aethel_lite.data.schema.Dataset`, reads ``$AETHEL_DATA`` by
default and reports what it leaves out in ``dataset.meta["skipped"]`` (reason → count) and in a
logged warning, never silently.

==========================  ==================================  ========================  ===========
data set                    passages                            pid                       pool
==========================  ==================================  ========================  ===========
MuSiQue (Trivedi 2022)      20 paragraphs per question          ``<qid>#<idx>``           20 per query
2Wiki (Ho et al. 2020)      10 paragraphs per question          ``<qid>#<k>``             10 per query
2Wiki distractor corpus     6,119 Wikipedia paragraphs          ``wiki#<i>``              (open)
FinanceBench (Islam 2023)   one page (or chunk) of a filing     ``<doc>#p<page>[c<i>]``   None (open)
==========================  ==================================  ========================  ===========

References: Trivedi et al., TACL 2022 (MuSiQue); Ho et al., COLING 2020 (2WikiMultiHopQA); Islam et
al., arXiv:2311.11944, 2023 (FinanceBench).
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import DataError, ParameterError
from ..io import parse_jsonl_line, read_json, read_jsonl
from .paths import HOW_TO_GET_DATA, data_file
from .records import empty_error, field_of, guard, ident_of, json_type, literal_of, new_qid, text_of
from .schema import Dataset, Passage, Query
from .synthetic import make_synthetic

__all__ = [
    "load_musique",
    "load_2wiki",
    "load_financebench",
    "load_dataset",
    "available_datasets",
    "chunk_spans",
    "chunk_gold",
    "MUSIQUE_FILE",
    "TWOWIKI_FILE",
    "TWOWIKI_DISTRACTORS",
    "FINANCEBENCH_DIR",
]

logger = logging.getLogger(__name__)

MUSIQUE_FILE = ("musique", "musique_ans_dev_sample200.jsonl")
TWOWIKI_FILE = ("2wikimultihopqa", "2wiki_dev_sample200.jsonl")
TWOWIKI_DISTRACTORS = ("2wikimultihopqa", "distractor_corpus_6119.json")
FINANCEBENCH_DIR = ("financebench",)
FB_QUESTIONS = "financebench_open_source.jsonl"
FB_DOCINFO = "financebench_document_information.jsonl"
FB_PAGES = "pages.jsonl.gz"
FB_COMPARISONS = Path(__file__).resolve().parent.parent / "manifests" / "financebench_comparisons.jsonl"


def _resolve(path: str | os.PathLike | None, default: tuple[str, ...]) -> Path:
    """``path`` if given (must exist), else the default file under the data root."""
    return data_file(*default) if path is None else data_file(path, root=".")


def _report_skipped(name: str, path: Path, skipped: Counter) -> None:
    """Log what a loader left out. The file is named by its folder and name only: the warning is printed into
    the book's pages, which must hold no local path (errors, which stop a build, name the full path)."""
    if skipped:
        detail = "; ".join(f"{n} {reason}" for reason, n in sorted(skipped.items()))
        shown = f"{path.parent.name}/{path.name}" if path.parent.name else path.name
        logger.warning("%s: skipped %d rows of %s (%s)", name, sum(skipped.values()), shown, detail)


# ------------------------------------------------------------------------------------ MuSiQue
_HOPS = re.compile(r"^(\d+)hop")


def load_musique(path: str | os.PathLike | None = None) -> Dataset:
    """Load MuSiQue-Ans questions with their 20-paragraph closed pools.

    Each question's paragraphs become passages ``"<qid>#<idx>"`` (``doc_id`` and ``title`` are the
    paragraph title); ``Query.pool`` is the question's own paragraphs and ``Query.gold`` those with
    ``is_supporting``. ``hops`` comes from the id prefix (``"2hop__…"``, ``"3hop1__…"``), else the
    length of ``question_decomposition``, else the number of gold paragraphs. Questions with no
    supporting paragraph (MuSiQue-Full unanswerables) are skipped and counted in ``meta["skipped"]``.

    Parameters
    ----------
    path : path-like, optional
        JSONL in the MuSiQue layout; default ``$AETHEL_DATA/musique/musique_ans_dev_sample200.jsonl``.

    Returns
    -------
    Dataset
        ``name="musique"``; ``query.meta`` holds ``answer``, ``answer_aliases``, ``decomposition``.

    Raises
    ------
    DataNotFoundError
        The file is missing (the message says how to get the data).
    DataError
        Malformed JSON line (``file:line``), missing field, duplicate id, or no questions at all.
    """
    path = _resolve(path, MUSIQUE_FILE)
    passages: list[Passage] = []
    queries: list[Query] = []
    skipped: Counter = Counter()
    seen: set[str] = set()
    for index, row in read_jsonl(path, numbered=True):
        with guard(path, index):
            qid = new_qid(row, "id", path, index, seen)
            question = text_of(field_of(row, "question", path, index), "field 'question'", path, index)
            paragraphs = field_of(row, "paragraphs", path, index, list)
            gold: set[str] = set()
            mine: list[Passage] = []
            for pos, para in enumerate(paragraphs):
                if not isinstance(para, Mapping) or "paragraph_text" not in para:
                    raise DataError(f"{path}:{index} ({qid}): paragraph {pos} has no 'paragraph_text'")
                where = f"({qid}) paragraph {pos}"
                idx = para.get("idx", pos)
                if not isinstance(idx, int) or isinstance(idx, bool):
                    raise DataError(
                        f"{path}:{index}: {where}: 'idx' must be an integer, got {json_type(idx)}"
                    )
                title = (
                    ""
                    if para.get("title") is None
                    else text_of(para["title"], f"{where}: 'title'", path, index, empty=True)
                )
                text = text_of(para["paragraph_text"], f"{where}: 'paragraph_text'", path, index)
                pid = f"{qid}#{idx}"
                mine.append(Passage(pid, title, title, text, {"qid": qid, "idx": idx}))
                supporting = para.get("is_supporting", False)
                if not isinstance(supporting, bool):
                    raise DataError(
                        f"{path}:{index}: {where}: 'is_supporting' must be true or false, got "
                        f"{json_type(supporting)} ({json.dumps(supporting)[:40]})"
                    )
                if supporting:
                    gold.add(pid)
            if not gold:
                skipped["without a supporting paragraph"] += 1
                continue
            decomposition = row.get("question_decomposition") or []
            match = _HOPS.match(qid)
            hops = int(match.group(1)) if match else (len(decomposition) or len(gold))
            passages.extend(mine)
            qmeta = {
                "answer": row.get("answer"),
                "answer_aliases": list(row.get("answer_aliases") or []),
                "decomposition": decomposition,
            }
            queries.append(
                Query(qid, question, frozenset(gold), hops=hops, pool=tuple(p.pid for p in mine), meta=qmeta)
            )
    if not queries:
        raise empty_error(path, "usable questions")
    _report_skipped("musique", path, skipped)
    meta = {"source": str(path), "setting": "closed-pool", "n_rows": len(seen), "skipped": dict(skipped)}
    return Dataset("musique", passages, queries, meta).validate()


# ------------------------------------------------------------------------------------ 2Wiki
def load_2wiki(
    path: str | os.PathLike | None = None, distractors: str | os.PathLike | bool | None = None
) -> Dataset:
    """Load 2WikiMultiHopQA questions with their 10-paragraph closed pools.

    Rows with a ``context`` become queries: context paragraph ``k`` is passage ``"<qid>#<k>"``
    (text = its sentences joined by single spaces, ``doc_id``/``title`` = its title) and
    ``Query.pool`` lists the ten. ``Query.gold`` = the pool paragraphs whose title is named in
    ``supporting_facts``; ``hops`` = the number of distinct supporting titles (2 for
    comparison/compositional/inference, 4 for bridge-comparison). Rows without a ``context`` (no
    closed pool; 36 of the 200-row sample) or whose supporting titles are not all in it are skipped.

    Parameters
    ----------
    path : path-like, optional
        JSONL in the 2Wiki layout; default ``$AETHEL_DATA/2wikimultihopqa/2wiki_dev_sample200.jsonl``.
    distractors : path-like or bool, optional
        A JSON list of ``{"title", "text"}`` paragraphs (``True`` = the default
        ``distractor_corpus_6119.json``) appended as passages ``"wiki#<i>"`` for open-corpus runs.
        A distractor whose (title, text) equals a pool paragraph is not added twice (counted in
        ``meta["distractors_duplicate"]``), so gold stays unique.

    Returns
    -------
    Dataset
        ``name="2wiki"``; ``query.meta`` holds ``answer``, ``type``, ``supporting_facts``, ``evidences``.
    """
    path = _resolve(path, TWOWIKI_FILE)
    passages: list[Passage] = []
    queries: list[Query] = []
    skipped_ids: dict[str, str] = {}
    seen: set[str] = set()
    for index, row in read_jsonl(path, numbered=True):
        with guard(path, index):
            qid = new_qid(row, "_id", path, index, seen)
            question = text_of(field_of(row, "question", path, index), "field 'question'", path, index)
            context = literal_of(row.get("context"), path, index, "context")
            if not context:
                skipped_ids[qid] = "without a context (no closed pool)"
                continue
            facts = literal_of(
                field_of(row, "supporting_facts", path, index), path, index, "supporting_facts"
            )
            try:
                sup_titles = {fact[0] for fact in facts}
            except (TypeError, IndexError, KeyError) as exc:
                raise DataError(f"{path}:{index} ({qid}): malformed 'supporting_facts'") from exc
            if not all(isinstance(t, str) for t in sup_titles):
                raise DataError(f"{path}:{index} ({qid}): 'supporting_facts' titles must be strings")
            mine: list[Passage] = []
            gold: set[str] = set()
            for k, item in enumerate(context):
                try:
                    title, sentences = item
                except (TypeError, ValueError) as exc:
                    raise DataError(
                        f"{path}:{index} ({qid}): context item {k} is not [title, sentences]"
                    ) from exc
                where = f"({qid}) context item {k}"
                title = text_of(title, f"{where}: the title", path, index, empty=True)
                if isinstance(sentences, str):
                    text = sentences
                elif isinstance(sentences, list) and all(isinstance(x, str) for x in sentences):
                    text = " ".join(sentences)
                else:
                    raise DataError(f"{path}:{index}: {where}: the sentences must be a list of strings")
                text = text_of(text, f"{where}: the text", path, index)
                pid = f"{qid}#{k}"
                mine.append(Passage(pid, title, title, text, {"qid": qid, "k": k}))
                if title in sup_titles:
                    gold.add(pid)
            if not sup_titles or not sup_titles <= {p.title for p in mine}:
                skipped_ids[qid] = "with a supporting title missing from the context"
                continue
            passages.extend(mine)
            qmeta = {
                "answer": row.get("answer"),
                "type": row.get("type"),
                "supporting_facts": [list(f) for f in facts],
                "evidences": literal_of(row.get("evidences") or [], path, index, "evidences"),
            }
            queries.append(
                Query(
                    qid,
                    question,
                    frozenset(gold),
                    hops=len(sup_titles),
                    pool=tuple(p.pid for p in mine),
                    meta=qmeta,
                )
            )
    if not queries:
        raise empty_error(path, "usable questions")
    skipped = Counter(skipped_ids.values())
    _report_skipped("2wiki", path, skipped)
    meta: dict[str, Any] = {
        "source": str(path),
        "setting": "closed-pool",
        "n_rows": len(seen),
        "skipped": dict(skipped),
        "skipped_ids": skipped_ids,
    }
    if distractors is not None and distractors is not False:
        dpath = (
            data_file(*TWOWIKI_DISTRACTORS)
            if distractors is True
            else _resolve(distractors, TWOWIKI_DISTRACTORS)
        )
        extra, duplicates = _distractors(dpath, {(p.title, p.text) for p in passages})
        passages.extend(extra)
        meta.update(
            setting="closed-pool + open corpus",
            distractors=str(dpath),
            n_distractors=len(extra),
            distractors_duplicate=duplicates,
        )
    return Dataset("2wiki", passages, queries, meta).validate()


def _distractors(path: Path, known: set[tuple[str, str]]) -> tuple[list[Passage], int]:
    rows = read_json(path)
    if not isinstance(rows, list):
        raise DataError(
            f"{path}: expected a JSON list of {{'title', 'text'}} objects, got {type(rows).__name__}"
        )
    if not rows:
        raise empty_error(path, "distractor paragraphs")
    out: list[Passage] = []
    duplicates = 0
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping) or not isinstance(row.get("text"), str) or not row["text"].strip():
            raise DataError(f"{path}: item {i}: expected an object with a non-empty string 'text'")
        if row.get("title") is not None and not isinstance(row["title"], str):
            raise DataError(f"{path}: item {i}: 'title' must be a string, got {json_type(row['title'])}")
        title = row.get("title") or ""
        if (title, row["text"]) in known:
            duplicates += 1
            continue
        out.append(Passage(f"wiki#{i}", title, title, row["text"], {"source": "distractor"}))
    return out, duplicates


# ------------------------------------------------------------------------------- FinanceBench
_WORD = re.compile(r"\S+")
_TOKEN = re.compile(r"\w+")


def chunk_spans(text: str, chunk_words: int, chunk_overlap: int = 0) -> list[tuple[int, int]]:
    """Character spans of ~``chunk_words``-word windows over ``text``.

    Windows start every ``chunk_words - chunk_overlap`` words; the last window ends at the last
    word (no window is a pure subset of the previous one). A text without words gives one empty
    span ``(0, len(text))`` so every page keeps at least one chunk.
    """
    if chunk_words < 1:
        raise ParameterError(f"chunk_words must be ≥ 1, got {chunk_words}")
    if not 0 <= chunk_overlap < chunk_words:
        raise ParameterError(f"chunk_overlap must be in [0, chunk_words={chunk_words}), got {chunk_overlap}")
    words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    if not words:
        return [(0, len(text))]
    starts = range(0, max(len(words) - chunk_overlap, 1), chunk_words - chunk_overlap)
    return [(words[a][0], words[min(a + chunk_words, len(words)) - 1][1]) for a in starts]


def _ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    tokens = _TOKEN.findall(text.casefold())
    n = max(1, min(n, len(tokens)))
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def chunk_gold(chunks: list[str], evidence: str, *, n: int = 5, min_overlap: float = 0.5) -> list[int]:
    """Indices of the chunks of one evidence page that hold the evidence text.

    With :math:`C` a chunk's set of word :math:`n`-grams and :math:`E` the evidence text's
    (lower-cased ``\\w+`` tokens; :math:`n` shrinks to the evidence length if it is shorter),
    a chunk is gold when the overlap coefficient

    .. math:: \\mathrm{ov}(C, E) = \\frac{|C \\cap E|}{\\min(|C|, |E|)} \\ge \\text{min\\_overlap},

    i.e. most of the evidence lies in the chunk (short evidence) or most of the chunk is evidence
    (evidence spanning several chunks, e.g. a whole-page table). If no chunk passes, the chunk
    with the largest :math:`|C \\cap E|` (first on ties) is gold, so every evidence page keeps at
    least one gold chunk.
    """
    ev = _ngrams(evidence, n)
    if not chunks:
        return []
    if not ev:
        return [0]
    n_eff = len(next(iter(ev)))
    shared, gold = [], []
    for i, chunk in enumerate(chunks):
        grams = _ngrams(chunk, n_eff) if chunk.strip() else set()
        common = len(grams & ev)
        shared.append(common)
        if grams and common / min(len(grams), len(ev)) >= min_overlap:
            gold.append(i)
    return gold or [max(range(len(chunks)), key=lambda i: (shared[i], -i))]


_DOC_TYPES = {"10K": "10k", "10Q": "10q", "8K": "8k", "EARNINGS": "earnings"}


def _page_rows(path: Path, wanted: set[str] | None) -> Iterator[tuple[int, str, int, str]]:
    """Stream ``pages.jsonl.gz`` once: (line, doc_name, page, text); with ``wanted``, other filings' lines
    are skipped unparsed (the name is read from their ``{"doc_name": "<name>"`` prefix)."""
    prefix = '{"doc_name": "'
    lineno = 0
    try:
        with gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                line = raw.decode("utf-8")  # line by line: a bad byte is reported on its own line
                if wanted is not None and line.startswith(prefix):
                    end = line.find('"', len(prefix))
                    name = line[len(prefix) : end]
                    if end > 0 and "\\" not in name and name not in wanted:
                        continue
                row = parse_jsonl_line(line, path, lineno)
                if row is None:
                    continue
                if not (
                    isinstance(row.get("doc_name"), str)
                    and isinstance(row.get("page"), int)
                    and isinstance(row.get("text"), str)
                ):
                    raise DataError(
                        f"{path}:{lineno}: expected {{'doc_name': str, 'page': int, 'text': str}}"
                    )
                if wanted is None or row["doc_name"] in wanted:
                    yield lineno, row["doc_name"], row["page"], row["text"]
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}:{lineno}: not UTF-8 text (byte {exc.start} of the line)") from exc
    except (OSError, EOFError, zlib.error) as exc:  # truncated/corrupt gzip
        raise DataError(f"{path}: cannot read ({exc}). {HOW_TO_GET_DATA}") from exc


def _fb_questions(qpath: Path) -> list[dict]:
    """The question rows of a FinanceBench-format JSONL, each checked (id, question, evidence pages)."""
    questions = []
    for index, row in read_jsonl(qpath, numbered=True):
        with guard(qpath, index):
            fid = ident_of(
                field_of(row, "financebench_id", qpath, index), "field 'financebench_id'", qpath, index
            )
            row = {**row, "financebench_id": fid}
            text_of(field_of(row, "question", qpath, index), "field 'question'", qpath, index)
            evidence = field_of(row, "evidence", qpath, index, list)
            for j, ev in enumerate(evidence):
                if (
                    not isinstance(ev, Mapping)
                    or not isinstance(ev.get("doc_name"), str)
                    or not isinstance(ev.get("evidence_page_num"), int)
                    or isinstance(ev.get("evidence_page_num"), bool)
                ):
                    raise DataError(
                        f"{qpath}:{index} ({fid}): evidence {j} needs 'doc_name' and an integer 'evidence_page_num'"
                    )
            if not evidence:
                raise DataError(f"{qpath}:{index} ({fid}): empty 'evidence'")
            questions.append(row)
    if not questions:
        raise empty_error(qpath, "questions")
    return questions


def load_financebench(
    directory: str | os.PathLike | None = None,
    docs: str = "question",
    granularity: str = "page",
    chunk_words: int = 200,
    chunk_overlap: int = 40,
    *,
    gold_overlap: float = 0.5,
    questions: str = "open_source",
) -> Dataset:
    """Load FinanceBench's open-source questions over the pages of the filings (open corpus).

    Passages are filing pages from ``pages.jsonl.gz``: pid ``"<doc_name>#p<page>"`` (0-based page, as
    ``evidence_page_num``), ``doc_id = title = doc_name``, ``meta`` = ``page``, ``company``, ``doc_type``,
    ``doc_period`` (from ``financebench_document_information.jsonl``, else parsed from the name). A
    question is kept when every evidence page exists (129 of 150; ``meta["left_out"]`` maps the others'
    ids to the reason, ``meta["skipped"]`` counts reasons); ``gold`` = the evidence pages, ``hops`` =
    their number, ``pool`` = None.

    Parameters
    ----------
    directory : path-like, optional
        Folder with the three FinanceBench files; default ``$AETHEL_DATA/financebench``.
    docs : {"question", "all"}
        The filings the kept questions ask about (74 filings, 10,206 pages), or every filing in
        ``pages.jsonl.gz`` (344 filings, 49,942 pages).
    granularity : {"page", "chunk"}
        ``"chunk"`` cuts each page into word windows (:func:`chunk_spans`; pid ``"<doc>#p<page>c<i>"``,
        ``meta`` adds ``chunk``, ``char_start``, ``char_end``); an evidence page's gold chunks are
        :func:`chunk_gold` of its ``evidence_text`` with ``gold_overlap``.
    chunk_words, chunk_overlap : int
        Window size and overlap in words (chunk granularity only).
    gold_overlap : float
        Threshold of the chunk-gold rule, in (0, 1].
    questions : {"open_source", "comparisons"}
        ``"comparisons"``: the two-filing questions of :mod:`aethel_lite.studies.comparisons` (gold = their
        two pages, ``query.meta["split"]``) over the same pages (the filings are still chosen by the
        open-source questions); page granularity only.

    Raises
    ------
    DataNotFoundError
        A file is missing (the message says how to get the data).
    DataError
        A malformed line (``file:line``), duplicate page, or no usable question.
    ParameterError
        Unknown ``docs``/``granularity`` or bad chunk sizes.
    """
    if docs not in ("question", "all"):
        raise ParameterError(f"docs must be 'question' or 'all', got {docs!r}")
    if granularity not in ("page", "chunk"):
        raise ParameterError(f"granularity must be 'page' or 'chunk', got {granularity!r}")
    if questions not in ("open_source", "comparisons") or (
        questions == "comparisons" and granularity != "page"
    ):
        raise ParameterError(
            f"questions must be 'open_source' or 'comparisons' (page granularity), got {questions!r}"
        )
    if granularity == "chunk":
        chunk_spans("", chunk_words, chunk_overlap)  # validates the sizes
        if not 0 < gold_overlap <= 1:
            raise ParameterError(f"gold_overlap must be in (0, 1], got {gold_overlap}")
    root = _resolve(directory, FINANCEBENCH_DIR)
    qpath, ipath, ppath = (_resolve(root / f, FINANCEBENCH_DIR) for f in (FB_QUESTIONS, FB_DOCINFO, FB_PAGES))

    question_set, questions = questions, _fb_questions(qpath)
    info = {
        text_of(field_of(row, "doc_name", ipath, index), "field 'doc_name'", ipath, index): row
        for index, row in read_jsonl(ipath, numbered=True)
    }
    asked = {ev["doc_name"] for row in questions for ev in row["evidence"]} | {
        str(row.get("doc_name")) for row in questions
    }
    open_rows = questions
    if question_set == "comparisons":
        questions = _fb_questions(FB_COMPARISONS)
        asked |= {ev["doc_name"] for row in questions for ev in row["evidence"]}

    pages: dict[tuple[str, int], str] = {}  # in file order
    for lineno, doc, page, text in _page_rows(ppath, asked if docs == "question" else None):
        if (doc, page) in pages:
            raise DataError(f"{ppath}:{lineno}: duplicate page {page} of {doc!r}")
        pages[(doc, page)] = text
    have_docs = {doc for doc, _ in pages}

    kept, left_out, skipped = [], {}, Counter()
    for row in questions:
        fid = str(row["financebench_id"])
        for ev in row["evidence"]:
            if ev["doc_name"] not in have_docs:
                left_out[fid] = f"evidence filing {ev['doc_name']} not in {FB_PAGES} (PDF not available)"
                skipped["evidence filing not in pages.jsonl.gz (PDF not available)"] += 1
                break
            if (ev["doc_name"], ev["evidence_page_num"]) not in pages:
                left_out[fid] = (
                    f"evidence page {ev['evidence_page_num']} of {ev['doc_name']} not in {FB_PAGES}"
                )
                skipped["evidence page not in pages.jsonl.gz"] += 1
                break
        else:
            kept.append(row)
    if not kept:
        raise DataError(f"{qpath}: no question has all its evidence pages in {ppath}")
    _report_skipped("financebench", qpath, skipped)
    companies = {str(r.get("doc_name")): r.get("company") for r in open_rows}

    def doc_meta(doc: str) -> dict:
        if doc in info:
            return {key: info[doc].get(key) for key in ("company", "doc_type", "doc_period")}
        parts = doc.split("_")  # a filing missing from the document information: parse COMPANY_PERIOD_TYPE
        doc_type = next((_DOC_TYPES[p.upper()] for p in parts if p.upper() in _DOC_TYPES), None)
        period = next((int(m.group(0)) for p in parts[1:] if (m := re.match(r"(19|20)\d\d", p))), None)
        return {"company": companies.get(doc), "doc_type": doc_type, "doc_period": period}

    metas = {doc: doc_meta(doc) for doc in sorted(have_docs)}
    evidence_by_page: dict[tuple[str, int], list[str]] = {}
    for row in kept:
        for ev in row["evidence"]:
            evidence_by_page.setdefault((ev["doc_name"], ev["evidence_page_num"]), []).append(
                str(ev.get("evidence_text") or "")
            )

    passages: list[Passage] = []
    page_gold: dict[tuple[str, int, str], list[str]] = {}  # (doc, page, evidence text) -> gold pids
    for (doc, page), text in pages.items():
        base = {"page": page, **metas[doc]}
        if granularity == "page":
            passages.append(Passage(f"{doc}#p{page}", doc, doc, text, base))
            continue
        spans = chunk_spans(text, chunk_words, chunk_overlap)
        chunks = [text[a:b] for a, b in spans]
        pids = [f"{doc}#p{page}c{i}" for i in range(len(spans))]
        for i, ((a, b), chunk) in enumerate(zip(spans, chunks)):
            passages.append(
                Passage(pids[i], doc, doc, chunk, {**base, "chunk": i, "char_start": a, "char_end": b})
            )
        for ev_text in evidence_by_page.get((doc, page), ()):
            page_gold[(doc, page, ev_text)] = [
                pids[i] for i in chunk_gold(chunks, ev_text, min_overlap=gold_overlap)
            ]

    queries = []
    for row in kept:
        ev_pages = sorted({(ev["doc_name"], ev["evidence_page_num"]) for ev in row["evidence"]})
        if granularity == "page":
            gold = {f"{doc}#p{page}" for doc, page in ev_pages}
        else:
            gold = set()
            for ev in row["evidence"]:
                gold.update(
                    page_gold[(ev["doc_name"], ev["evidence_page_num"], str(ev.get("evidence_text") or ""))]
                )
        qmeta = {
            key: row.get(key)
            for key in (
                "answer",
                "company",
                "doc_name",
                "question_type",
                "question_reasoning",
                "justification",
            )
        }
        qmeta["evidence"] = [
            {
                "doc_name": ev["doc_name"],
                "page": ev["evidence_page_num"],
                "evidence_text": ev.get("evidence_text"),
            }
            for ev in row["evidence"]
        ]
        if "split" in row:
            qmeta["split"] = row["split"]
        queries.append(
            Query(
                str(row["financebench_id"]),
                str(row["question"]),
                frozenset(gold),
                hops=len(ev_pages),
                pool=None,
                meta=qmeta,
            )
        )
    meta = {
        "source": str(root),
        "setting": "open-corpus",
        "docs": docs,
        "granularity": granularity,
        "n_filings": len(have_docs),
        "n_pages": len(pages),
        "n_rows": len(questions),
        "skipped": dict(skipped),
        "left_out": left_out,
        "docs_without_info": sorted(d for d in have_docs if d not in info),
    }
    if granularity == "chunk":
        meta.update(chunk_words=chunk_words, chunk_overlap=chunk_overlap, gold_overlap=gold_overlap)
    if question_set == "comparisons":
        meta.update(questions="comparisons", question_source=f"manifests/{FB_COMPARISONS.name}")
    return Dataset("financebench", passages, queries, meta).validate()


def _synthetic(**kw: Any) -> Dataset:
    return make_synthetic(**kw)


_LOADERS: dict[str, Callable[..., Dataset]] = {
    "musique": load_musique,
    "2wiki": load_2wiki,
    "financebench": load_financebench,
    "synthetic": _synthetic,
}
_ALIASES = {"2wikimultihopqa": "2wiki"}


def available_datasets() -> tuple[str, ...]:
    """Names accepted by :func:`load_dataset`."""
    return tuple(_LOADERS)


def load_dataset(name: str, **kw: Any) -> Dataset:
    """Load a data set by name (``"musique"``, ``"2wiki"``, ``"financebench"``, ``"synthetic"``).

    Keyword arguments go to the loader (e.g. ``load_dataset("financebench", docs="all")``).
    Unknown names raise :class:`DataError` listing the valid ones.
    """
    key = _ALIASES.get(str(name).lower(), str(name).lower())
    if key not in _LOADERS:
        raise DataError(f"unknown dataset {name!r}; valid names: {', '.join(available_datasets())}")
    return _LOADERS[key](**kw)
