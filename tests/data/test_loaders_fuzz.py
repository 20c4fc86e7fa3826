"""Fuzz tests (hypothesis): the data loaders with random bytes, truncations and mutated records.

Whatever a file holds, a loader either returns a valid :class:`Dataset` or raises one of the
project's own errors (:class:`~aethel_lite.errors.AethelError`, whose message names the file):
never a traceback of another kind. ``index.json`` is fuzzed in ``tests/search/test_index.py``.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aethel_lite.errors import AethelError, DataError

# AETHEL_FUZZ_EXAMPLES=2000 for a deeper (slower, not derandomised) search
_DEEP = int(os.environ.get("AETHEL_FUZZ_EXAMPLES", "0") or 0)
SETTINGS = settings(
    max_examples=_DEEP or 120, deadline=None, suppress_health_check=list(HealthCheck), derandomize=not _DEEP
)

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids, max_size=3),
    max_leaves=6,
)

MUSIQUE_ROW = {
    "id": "2hop__1_2",
    "question": "Who founded the company that made X?",
    "answer": "Ann",
    "answer_aliases": ["A."],
    "question_decomposition": [{"question": "a"}, {"question": "b"}],
    "paragraphs": [
        {"idx": 0, "title": "X", "paragraph_text": "X was made by Acme.", "is_supporting": True},
        {"idx": 1, "title": "Acme", "paragraph_text": "Acme was founded by Ann.", "is_supporting": True},
        {"idx": 2, "title": "Other", "paragraph_text": "Unrelated.", "is_supporting": False},
    ],
}
TWOWIKI_ROW = {
    "_id": "q1",
    "question": "Who is older, A or B?",
    "answer": "A",
    "type": "comparison",
    "supporting_facts": [["A", 0], ["B", 0]],
    "evidences": [],
    "context": [["A", ["A was born in 1900."]], ["B", ["B was born in 1910."]], ["C", ["C is a city."]]],
}
FB_QUESTION = {
    "financebench_id": "fb1",
    "question": "What was revenue?",
    "answer": "1",
    "company": "Acme",
    "doc_name": "ACME_2020_10K",
    "evidence": [{"doc_name": "ACME_2020_10K", "evidence_page_num": 1, "evidence_text": "Revenue was 1."}],
}
FB_INFO = {"doc_name": "ACME_2020_10K", "company": "Acme", "doc_type": "10k", "doc_period": 2020}
FB_PAGES = [
    {"doc_name": "ACME_2020_10K", "page": 0, "text": "Cover."},
    {"doc_name": "ACME_2020_10K", "page": 1, "text": "Revenue was 1."},
]


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _mutations(row: dict):
    """Rows with one field (top level or one level down) replaced by a random JSON value, or removed."""
    paths = [(k,) for k in row] + [
        (k, i) for k, v in row.items() if isinstance(v, list) for i in range(len(v))
    ]

    def apply(args):
        path, value, drop = args
        out = json.loads(json.dumps(row))
        target = out
        for key in path[:-1]:
            target = target[key]
        if drop and isinstance(target, dict):
            target.pop(path[-1], None)
        else:
            target[path[-1]] = value
        return out

    return st.tuples(st.sampled_from(paths), JSON_VALUES, st.booleans()).map(apply)


def _file_contents(good: bytes, row: dict | None = None):
    """Random bytes, truncations of a valid file, and valid files with one mutated record."""
    options = [
        st.binary(max_size=300),
        st.integers(0, len(good)).map(lambda n: good[:n]),
        st.binary(min_size=1, max_size=20).flatmap(
            lambda junk: st.integers(0, len(good)).map(lambda n: good[:n] + junk + good[n:])
        ),
    ]
    if row is not None:
        options.append(_mutations(row).map(lambda r: _jsonl([r])))
    return st.one_of(*options)


def _only_aethel_errors(fn) -> None:
    try:
        fn()
    except AethelError:
        pass


def _loads_correctly_or_names_the_file(fn, path) -> None:
    """A loader either returns a data set whose every text is a real, non-blank string (never a
    ``str()`` of null, a number or a list), or raises :class:`DataError` naming ``path``."""
    try:
        ds = fn()
    except DataError as exc:
        assert path.name in str(exc), str(exc)
        return
    for text in [q.text for q in ds.queries] + [p.text for p in ds.passages]:
        assert isinstance(text, str) and text.strip(), repr(text)
    assert all(isinstance(p.title, str) for p in ds.passages)


@pytest.fixture
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def test_good_samples_load(scratch):
    from aethel_lite.data.loaders import load_2wiki, load_financebench, load_musique

    (scratch / "m.jsonl").write_bytes(_jsonl([MUSIQUE_ROW]))
    (scratch / "w.jsonl").write_bytes(_jsonl([TWOWIKI_ROW]))
    _write_fb(scratch, _jsonl([FB_QUESTION]), _jsonl([FB_INFO]), gzip.compress(_jsonl(FB_PAGES), mtime=0))
    assert len(load_musique(scratch / "m.jsonl").queries) == 1
    assert len(load_2wiki(scratch / "w.jsonl").queries) == 1
    assert len(load_financebench(scratch).queries) == 1


def test_musique_loader_fuzz(scratch):
    from aethel_lite.data.loaders import load_musique

    @SETTINGS
    @given(_file_contents(_jsonl([MUSIQUE_ROW]), MUSIQUE_ROW))
    def run(data):
        (scratch / "m.jsonl").write_bytes(data)
        _loads_correctly_or_names_the_file(lambda: load_musique(scratch / "m.jsonl"), scratch / "m.jsonl")

    run()


def test_2wiki_loader_fuzz(scratch):
    from aethel_lite.data.loaders import load_2wiki

    @SETTINGS
    @given(
        _file_contents(_jsonl([TWOWIKI_ROW]), TWOWIKI_ROW),
        st.one_of(st.binary(max_size=100), JSON_VALUES.map(lambda v: json.dumps(v).encode())),
    )
    def run(data, distractors):
        (scratch / "w.jsonl").write_bytes(data)
        (scratch / "d.json").write_bytes(distractors)
        _loads_correctly_or_names_the_file(lambda: load_2wiki(scratch / "w.jsonl"), scratch / "w.jsonl")
        _loads_correctly_or_names_the_file(
            lambda: load_2wiki(_jsonl_file(scratch, TWOWIKI_ROW), distractors=scratch / "d.json"),
            scratch / "d.json",
        )

    run()


def _jsonl_file(folder: Path, row: dict) -> Path:
    path = folder / "good.jsonl"
    path.write_bytes(_jsonl([row]))
    return path


def _write_fb(folder: Path, questions: bytes, info: bytes, pages: bytes) -> None:
    (folder / "financebench_open_source.jsonl").write_bytes(questions)
    (folder / "financebench_document_information.jsonl").write_bytes(info)
    (folder / "pages.jsonl.gz").write_bytes(pages)


def test_financebench_loader_fuzz(scratch):
    from aethel_lite.data.loaders import load_financebench

    good_q, good_i, good_p = _jsonl([FB_QUESTION]), _jsonl([FB_INFO]), _jsonl(FB_PAGES)
    page_rows = st.one_of(
        _file_contents(good_p), _mutations(FB_PAGES[1]).map(lambda r: _jsonl([FB_PAGES[0], r]))
    )

    @SETTINGS
    @given(
        st.sampled_from(["questions", "info", "pages", "pages-gz"]),
        _file_contents(good_q, FB_QUESTION),
        _file_contents(good_i, FB_INFO),
        page_rows,
        st.sampled_from(["page", "chunk"]),
    )
    def run(which, q, i, p, granularity):
        pages = gzip.compress(good_p, mtime=0)
        if which == "pages":
            pages = gzip.compress(p, mtime=0)
        elif which == "pages-gz":  # a damaged gzip stream
            pages = pages[: len(p) % len(pages)] + p[:8]
        _write_fb(scratch, q if which == "questions" else good_q, i if which == "info" else good_i, pages)
        _only_aethel_errors(
            lambda: load_financebench(scratch, granularity=granularity, chunk_words=3, chunk_overlap=1)
        )

    run()


def test_dataset_jsonl_fuzz(scratch):
    from aethel_lite.data.schema import Dataset

    good = _jsonl([{"pid": "a", "doc_id": "d", "title": "t", "text": "x", "meta": {"k": 1}}])
    query = {"qid": "q", "text": "x?", "gold": ["a"], "hops": 1, "pool": None, "meta": {}}

    @SETTINGS
    @given(
        _file_contents(good, {"pid": "a", "doc_id": "d", "title": "t", "text": "x", "meta": {"k": 1}}),
        _file_contents(_jsonl([query]), query),
        st.binary(max_size=60),
    )
    def run(passages, queries, info):
        (scratch / "passages.jsonl").write_bytes(passages)
        (scratch / "queries.jsonl").write_bytes(queries)
        (scratch / "dataset.json").write_bytes(info)
        _only_aethel_errors(lambda: Dataset.from_jsonl(scratch).validate())

    run()


def test_ingest_fuzz(scratch):
    from test_ingest import make_pdf

    from aethel_lite.data.ingest import ingest

    pdf = make_pdf(scratch / "sample.pdf", ["Helios Fleet Solutions", "", "NRCP IV"]).read_bytes()
    passage = {"pid": "p1", "doc_id": "d", "title": "t", "text": "Acme Corp.", "meta": {"page": 1}}

    @SETTINGS
    @given(
        st.sampled_from(["a.txt", "a.md", "a.pdf", "a.jsonl", "a.jsonl.gz"]),
        st.one_of(
            _file_contents(pdf),
            _file_contents(_jsonl([passage]), passage),
            st.text(max_size=200).map(str.encode),
        ),
        st.sampled_from([None, 3]),
    )
    def run(name, data, chunk_words):
        folder = scratch / "in"
        if folder.exists():
            for f in folder.iterdir():
                f.unlink()
        folder.mkdir(exist_ok=True)
        if name.endswith(".gz"):
            data = gzip.compress(data, mtime=0) if len(data) % 2 else data
        (folder / name).write_bytes(data)
        _only_aethel_errors(
            lambda: ingest(
                folder / name, chunk_words=chunk_words if not name.endswith(("jsonl", "gz")) else None
            )
        )

    run()


def test_io_readers_fuzz(scratch):
    from aethel_lite.io import read_json, read_jsonl

    @SETTINGS
    @given(st.binary(max_size=200), st.booleans())
    def run(data, gz):
        path = scratch / ("x.jsonl.gz" if gz else "x.jsonl")
        path.write_bytes(
            gzip.compress(data, mtime=0)[: max(1, len(data))] if gz and data[:1] == b"a" else data
        )
        _only_aethel_errors(lambda: list(read_jsonl(path)))
        (scratch / "x.json").write_bytes(data)
        _only_aethel_errors(lambda: read_json(scratch / "x.json"))

    run()


# ------------------------------------------------------------------ the flag table (aethel_lite/cli_checks.py)
# Written apart from FLAG_RULES, from the words of book/cli.md ("Which flag applies where").
FLAG_ORACLE = {
    ("eval", "--docs"): lambda a: a["--format"] == "financebench",
    ("eval", "--granularity"): lambda a: a["--format"] == "financebench",
    ("eval", "--chunk-words"): lambda a: (
        a["--format"] == "financebench" and a.get("--granularity") == "chunk"
    ),
    ("eval", "--own-files"): lambda a: a["--format"] == "financebench",
    ("eval", "--distractors"): lambda a: a["--format"] == "2wiki" and a.get("--setting") == "open",
    ("eval", "--no-distractors"): lambda a: a["--format"] == "2wiki",
    ("eval", "--size"): lambda a: a["--format"] == "synthetic",
    ("eval", "--corpus-size"): lambda a: a.get("--setting") != "closed",
    ("eval", "--seed"): lambda a: a["--format"] == "synthetic" or "--corpus-size" in a,
    ("memo", "--data"): lambda a: a.get("--format") == "financebench",
    ("memo", "--size"): lambda a: a.get("--format") == "synthetic",
    ("memo", "--seed"): lambda a: a.get("--format") == "synthetic",
    ("memo", "--contradictions"): lambda a: a.get("--format") == "synthetic",
    ("memo", "--generator-model"): lambda a: "--generator-url" in a,
    ("memo", "--generator-timeout"): lambda a: "--generator-url" in a,
    ("search", "--json"): lambda a: "--questions" not in a,
}
FLAG_VALUES = {
    "--docs": "all",
    "--granularity": "chunk",
    "--chunk-words": "50",
    "--own-files": None,
    "--distractors": None,
    "--no-distractors": None,
    "--size": "50",
    "--corpus-size": "40",
    "--seed": "3",
    "--data": "d",
    "--contradictions": "2",
    "--generator-model": "m",
    "--generator-timeout": "5",
    "--generator-url": "http://127.0.0.1:9",
    "--json": None,
    "--questions": "-",
}


def _flag_cases():
    """(command, {flag: value}) with a random context (format, setting, ...) and random table flags."""
    eval_case = st.fixed_dictionaries(
        {"--format": st.sampled_from(["musique", "2wiki", "financebench", "synthetic"])},
        optional={"--setting": st.sampled_from(["closed", "open"])},
    ).flatmap(
        lambda ctx: st.sets(st.sampled_from([f for c, f in FLAG_ORACLE if c == "eval"]), max_size=3).map(
            lambda flags: ("eval", {**ctx, **{f: FLAG_VALUES[f] for f in flags}})
        )
    )
    memo_case = st.sampled_from(
        [{"--format": "synthetic"}, {"--format": "financebench"}, {"--index": "i"}]
    ).flatmap(
        lambda ctx: st.sets(
            st.sampled_from([f for c, f in FLAG_ORACLE if c == "memo"] + ["--generator-url"]), max_size=3
        ).map(lambda flags: ("memo", {**ctx, **{f: FLAG_VALUES[f] for f in flags}}))
    )
    search_case = st.sets(st.sampled_from(["--json", "--questions"]), min_size=1).map(
        lambda flags: ("search", {f: FLAG_VALUES[f] for f in flags})
    )
    return st.one_of(eval_case, memo_case, search_case)


def test_flag_table_fuzz():
    """Whatever table flags are given in whatever context, check_flags refuses exactly the
    combinations where the oracle says a flag does not apply, naming one of those flags."""
    from aethel_lite.cli import build_parser
    from aethel_lite.cli_checks import check_flags
    from aethel_lite.errors import ParameterError

    parser = build_parser()

    @SETTINGS
    @given(_flag_cases())
    def run(case):
        command, flags = case
        if "--distractors" in flags and "--no-distractors" in flags:
            flags.pop("--no-distractors")
        argv = [command] + (["IDX"] if command == "search" else [])
        for flag, value in flags.items():
            argv += [flag] + ([value] if value is not None else [])
        argv += {"eval": ["--out", "x.json"], "memo": ["--target", "x", "--out", "m.md"], "search": []}[
            command
        ]
        args = parser.parse_args(argv)
        wrong = {f for f in flags if (command, f) in FLAG_ORACLE and not FLAG_ORACLE[(command, f)](flags)}
        try:
            check_flags(args)
        except ParameterError as exc:
            named = str(exc).split()[0]
            assert wrong & set(named.split("/")), (argv, str(exc))  # e.g. --granularity/--chunk-words
            return
        assert not wrong, (argv, wrong)

    run()


# ------------------------------------------------------------------ file names
NAME_BYTES = st.lists(
    st.sampled_from(
        [b"a", b"Z", b"0", b" ", b"-", b"\xc3\xa9", b"\xff", b"\xe2\x82", b"\n", b"#", b"\xf0\x9f\x98\x80"]
    ),
    min_size=1,
    max_size=8,
).map(b"".join)


def test_file_names_fuzz(scratch):
    """A folder of files with any names (not UTF-8, newlines, emoji) is read with ids that are valid
    UTF-8 text (they go into the index's JSON files) or refused with one DataError naming the file."""
    from aethel_lite.data.ingest import ingest

    @SETTINGS
    @given(st.lists(NAME_BYTES, min_size=1, max_size=3, unique=True))
    def run(names):
        folder = scratch / "names"
        if folder.exists():
            for f in folder.iterdir():
                f.unlink()
        folder.mkdir(exist_ok=True)
        for i, name in enumerate(names):
            with open(os.fsencode(folder) + b"/" + name + b".txt", "wb") as fh:
                fh.write(f"Acme Corp paragraph {i}.\n".encode())
        bad = [n for n in names if _not_utf8(n)]
        try:
            ds = ingest(folder)
        except DataError as exc:
            assert bad and "not valid UTF-8" in str(exc), str(exc)
            assert any(n.decode("utf-8", "backslashreplace") in str(exc) for n in bad), str(exc)
            return
        assert not bad
        for p in ds.passages:
            json.dumps(p.to_dict(), ensure_ascii=False).encode("utf-8")  # what write_passages writes

    run()


def _not_utf8(name: bytes) -> bool:
    try:
        name.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False
