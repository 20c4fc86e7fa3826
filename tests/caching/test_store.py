"""Per-passage, content-addressed caches: PassageStore, the entity store and the embedding store."""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import sqlite3
import subprocess
import sys
import warnings

import numpy as np
import pytest

from aethel_lite.caching.memo import shared
from aethel_lite.caching.store import MAX_PARAMS, STORE_FORMAT, PassageStore, config_fingerprint, text_key
from aethel_lite.core import entities as E
from aethel_lite.core import mentions as mentions_module
from aethel_lite.core.entities import RegexExtractor, SpacyNerExtractor, extract_entities
from aethel_lite.data.loaders import chunk_spans
from aethel_lite.data.schema import Passage
from aethel_lite.errors import ParameterError
from aethel_lite.retrievers import DenseRetriever, passage_text

TEXTS = [
    "Tim Cook is the chief executive of Apple Inc. in Cupertino.",
    "Satya Nadella leads Microsoft in Redmond, Washington.",
    "Berkshire Hathaway Holdings is based in Omaha, Nebraska.",
    "Goldman Sachs and Morgan Stanley reported results in New York.",
    "Nothing to see here.",
    "The Bank of England raised rates; Barclays PLC shares fell.",
]


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path))
    return tmp_path


@contextlib.contextmanager
def no_warnings():
    """Any warning is an error (a rebuilt store warns about nothing)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# --------------------------------------------------------------------------- PassageStore


def test_text_key_is_sha256_of_utf8():
    assert text_key("Zürich") == hashlib.sha256("Zürich".encode()).hexdigest()
    with pytest.raises(ParameterError, match="text"):
        text_key(b"bytes")


def test_put_and_get_many_in_batches(cache):
    config = {"model": "x", "n": 1}
    keys = [text_key(f"passage {i}") for i in range(2 * MAX_PARAMS + 7)]
    with PassageStore("entities", "fake ner", config) as store:
        assert store.put_many((k, k.encode()[:5]) for k in keys) == len(keys)
        got = store.get_many(keys + [text_key("never stored")])
        assert got == {k: k.encode()[:5] for k in keys} and len(store) == len(keys)
        assert store.get_many([]) == {} and store.put_many([]) == 0
        path = store.path
    assert path == cache / "store" / f"entities-fake_ner-{config_fingerprint(config)[:16]}.sqlite"
    with sqlite3.connect(path) as conn:
        meta = dict(conn.execute("SELECT name, value FROM meta"))
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert meta == {
        "format": STORE_FORMAT,
        "config": json.dumps(config, sort_keys=True, separators=(",", ":")),
    }


def test_bad_config_and_names_are_parameter_errors(cache):
    with pytest.raises(ParameterError, match="JSON"):
        PassageStore("entities", "x", {"s": {1, 2}})
    with pytest.raises(ParameterError, match="name"):
        PassageStore("entities", "  ", {})


def test_two_instances_write_the_same_key(cache):
    a = PassageStore("embeddings", "m", {"v": 1})
    b = PassageStore("embeddings", "m", {"v": 1})
    a.put_many([("k", b"one"), ("a", b"A")])
    b.put_many([("k", b"two"), ("b", b"B")])
    assert a.get_many(["k", "a", "b"]) == b.get_many(["k", "a", "b"]) == {"k": b"two", "a": b"A", "b": b"B"}
    a.close()
    b.close()


def test_two_processes_write_overlapping_keys(cache):
    script = (
        "import sys\n"
        "from aethel_lite.caching.store import PassageStore\n"
        "me = sys.argv[1]\n"
        "with PassageStore('entities', 'p', {'v': 1}) as s:\n"
        "    for start in range(0, 400, 20):\n"
        "        s.put_many((str(i), str(i).encode()) for i in range(start, start + 40))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(i)]) for i in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    with PassageStore("entities", "p", {"v": 1}) as s:
        assert len(s) == 420 and s.get_many(["0", "419"]) == {"0": b"0", "419": b"419"}


def test_interrupted_write_leaves_no_entry(cache):
    class Interrupting:  # a connection that dies between the INSERTs and the COMMIT
        def __init__(self, conn):
            self.conn = conn

        @property
        def in_transaction(self):
            return self.conn.in_transaction

        def execute(self, *a):
            return self.conn.execute(*a)

        def executemany(self, *a):
            self.conn.executemany(*a)
            raise KeyboardInterrupt

    store = PassageStore("entities", "x", {})
    real = store._conn
    store._conn = Interrupting(real)
    with pytest.raises(KeyboardInterrupt):
        store.put_many([("a", b"1"), ("b", b"2")])
    store._conn = real
    store.close()
    with PassageStore("entities", "x", {}) as again:
        assert len(again) == 0


@pytest.mark.parametrize(
    "damage, reason",
    [
        ("garbage", "not a valid SQLite database"),
        ("foreign", "no store tables \\(found other\\)"),
        ("other_config", "its meta holds another configuration"),
        ("other_format", "format 'aethel-store/0'"),
    ],
)
def test_unusable_store_file_is_warned_about_and_rebuilt(cache, damage, reason):
    with PassageStore("entities", "x", {"v": 1}) as store:
        store.put_many([("k", b"v")])
        path = store.path
    if damage == "garbage":
        path.write_bytes(b"\x00 definitely not SQLite " * 200)
    else:
        with sqlite3.connect(path) as conn:
            if damage == "foreign":
                conn.execute("DROP TABLE meta")
                conn.execute("DROP TABLE entries")
                conn.execute("CREATE TABLE other (x)")
            else:
                name, value = ("config", "{}") if damage == "other_config" else ("format", "aethel-store/0")
                conn.execute("UPDATE meta SET value = ? WHERE name = ?", (value, name))
        conn.close()
    with pytest.warns(RuntimeWarning, match=f"unusable entities store \\({reason}"):
        store = PassageStore("entities", "x", {"v": 1})
    assert len(store) == 0 and store.get_many(["k"]) == {}
    store.put_many([("k", b"new")])
    store.close()
    with no_warnings(), PassageStore("entities", "x", {"v": 1}) as store:
        assert store.get_many(["k"]) == {"k": b"new"}


# --------------------------------------------------------------------------- entity store


class CountingRegex(RegexExtractor):
    """The regex extractor, recording the texts of every ``extract`` call."""

    name = "regex"

    def __init__(self, variant: int = 0):
        super().__init__()
        self.variant = variant
        self.calls: list[list[str]] = []

    def config(self) -> dict:
        return {**super().config(), "variant": self.variant}

    def extract(self, texts, *, n_process=1, progress=False):
        self.calls.append(list(texts))
        return super().extract(texts, n_process=n_process, progress=progress)


def test_sub_corpus_of_processed_passages_calls_no_extractor(cache):
    ext = CountingRegex()
    full = extract_entities(TEXTS + TEXTS[:2], ext, progress=False)
    assert ext.calls == [TEXTS]  # duplicates extracted once
    assert full == RegexExtractor().extract(TEXTS + TEXTS[:2])  # same as uncached
    sub = [TEXTS[4], TEXTS[1], TEXTS[1], TEXTS[3]]
    assert extract_entities(sub, ext, progress=False) == [full[4], full[1], full[1], full[3]]
    assert len(ext.calls) == 1


def test_changed_passage_is_the_only_miss(cache):
    ext = CountingRegex()
    extract_entities(TEXTS, ext, progress=False)
    edited = list(TEXTS)
    edited[2] = TEXTS[2].replace("Omaha", "Lincoln")
    ext.calls.clear()
    got = extract_entities(edited + [edited[2]], ext, progress=False)
    assert ext.calls == [[edited[2]]]
    assert got == RegexExtractor().extract(edited + [edited[2]])


def test_changed_extractor_config_is_a_miss(cache):
    extract_entities(TEXTS, CountingRegex(variant=0), progress=False)
    other = CountingRegex(variant=1)
    extract_entities(TEXTS, other, progress=False)
    assert other.calls == [TEXTS]
    assert len(list((cache / "store").glob("entities-regex-*.sqlite"))) == 2


def test_changed_normalisation_rule_is_a_miss(cache, monkeypatch):
    ext = CountingRegex()
    before = extract_entities(TEXTS, ext, progress=False)
    assert "berkshire hathaway holdings" in {m.key for m in before[2]}
    fingerprint = E.normalization_fingerprint()
    monkeypatch.setattr(mentions_module, "LEGAL_SUFFIXES", mentions_module.LEGAL_SUFFIXES | {"holdings"})
    assert E.normalization_fingerprint() != fingerprint
    ext.calls.clear()
    after = extract_entities(TEXTS, ext, progress=False)
    assert ext.calls == [TEXTS]  # no stale keys served
    assert "berkshire hathaway" in {m.key for m in after[2]}
    assert after == RegexExtractor().extract(TEXTS)


def test_real_spacy_sub_corpus_is_served_from_the_store(cache, monkeypatch):
    uncached = SpacyNerExtractor().extract(TEXTS)
    assert extract_entities(TEXTS, "ner", progress=False) == uncached
    calls = []
    real = SpacyNerExtractor.extract
    monkeypatch.setattr(
        SpacyNerExtractor,
        "extract",
        lambda self, texts, **kw: calls.append(list(texts)) or real(self, texts, **kw),
    )
    assert extract_entities(TEXTS[3:], "ner3", progress=False) == E.Ner3Extractor().filter(uncached[3:])
    assert calls == []
    assert (
        extract_entities([TEXTS[0], "Amazon opened an office in Seattle."], "ner", progress=False)[0]
        == uncached[0]
    )
    assert calls == [["Amazon opened an office in Seattle."]]


# --------------------------------------------------------------------------- embedding store


@pytest.fixture()
def counted_encode(monkeypatch):
    """Record the texts of every call to the MiniLM model's ``encode``."""
    model = DenseRetriever().model
    calls: list[list[str]] = []
    real = model.encode

    def encode(texts, *a, **kw):
        calls.append(list(texts))
        return real(texts, *a, **kw)

    monkeypatch.setattr(model, "encode", encode)
    return calls


PASSAGES = [Passage(f"p{i}", "d", "", t) for i, t in enumerate(TEXTS)]


def test_dense_sub_corpus_calls_no_encoder_and_a_changed_passage_is_the_only_miss(cache, counted_encode):
    full = DenseRetriever().fit(PASSAGES).embeddings_
    assert counted_encode == [TEXTS]
    np.testing.assert_allclose(full, DenseRetriever(cache=False).fit(PASSAGES).embeddings_, atol=1e-6)
    counted_encode.clear()
    sub = DenseRetriever().fit([PASSAGES[5], PASSAGES[0], PASSAGES[2]])
    assert counted_encode == []
    np.testing.assert_array_equal(sub.embeddings_, full[[5, 0, 2]])
    edited = [*PASSAGES[:3], Passage("p3", "d", "", TEXTS[3] + " Citigroup did too."), *PASSAGES[4:]]
    again = DenseRetriever().fit(edited)
    assert counted_encode == [[edited[3].text]]
    np.testing.assert_array_equal(np.delete(again.embeddings_, 3, axis=0), np.delete(full, 3, axis=0))


@pytest.mark.parametrize("damage", ["width", "nan", "zero"])
def test_dense_tampered_vector_is_warned_about_and_recomputed(cache, counted_encode, damage):
    dense = DenseRetriever()
    full = dense.fit(PASSAGES).embeddings_
    bad = {
        "width": full[1, :-1],
        "nan": np.where(np.arange(full.shape[1]) == 7, np.nan, full[1]),
        "zero": np.zeros_like(full[1]),
    }[damage]
    with dense.embedding_store() as store:
        store.put_many([(text_key(TEXTS[1]), bad.astype("<f4").tobytes())])
    counted_encode.clear()
    with pytest.warns(RuntimeWarning, match="1 corrupt embedding cache entries"):
        again = DenseRetriever().fit(PASSAGES).embeddings_
    assert counted_encode == [[TEXTS[1]]]
    np.testing.assert_allclose(again, full, atol=1e-6)
    with no_warnings():
        DenseRetriever().fit(PASSAGES)


def test_max_pooling_shares_entries_with_chunk_passages(cache, counted_encode):
    page = Passage("doc#p1", "doc", "doc", " ".join(TEXTS * 4))
    DenseRetriever(pooling="max", chunk_words=30, chunk_overlap=5).fit([page])
    chunks = [
        Passage(f"doc#p1c{i}", "doc", "doc", page.text[a:b])
        for i, (a, b) in enumerate(chunk_spans(page.text, 30, 5))
    ]
    strings = [passage_text(c) for c in chunks]
    assert len(set(strings)) < len(strings)  # the page repeats itself: each distinct window is encoded once
    assert counted_encode == [list(dict.fromkeys(strings))]
    counted_encode.clear()
    DenseRetriever().fit(chunks)  # chunk-granularity passages: already embedded
    assert counted_encode == []


def test_question_memo_encodes_each_batch_once_and_is_off_by_default(cache, counted_encode, monkeypatch):
    from aethel_lite.data.schema import Query
    from aethel_lite.retrievers import dense as dense_module

    monkeypatch.setattr(dense_module, "_QUESTION_BATCHES", {})
    queries = [
        Query("q1", "Who leads Microsoft?", frozenset()),
        Query("q2", "Where is Berkshire Hathaway based?", frozenset()),
    ]
    plain = DenseRetriever().fit(PASSAGES)
    counted_encode.clear()
    expected = plain.search(queries, k=3)
    plain.search(queries, k=3)
    assert counted_encode == [[q.text for q in queries]] * 2  # without the memo every search encodes
    counted_encode.clear()
    memo = DenseRetriever().fit(PASSAGES)
    with shared():
        first = memo.search(queries, k=3)
        assert memo.search(queries, k=3) == first == expected
        np.testing.assert_array_equal(
            memo.score_texts([queries[1].text]), memo.score_texts([queries[1].text])
        )
    # each batch encoded once (a batch is the memo's key: a vector may differ in its last bits with its batch)
    assert counted_encode == [[q.text for q in queries], [queries[1].text]]
    counted_encode.clear()
    with shared(), shared(False):  # shared(False) inside: a search that pays for its own encoding
        assert memo.search(queries, k=3) == expected
    assert counted_encode == [[q.text for q in queries]]


def test_question_mentions_memo_runs_the_extractor_once_per_question(cache, monkeypatch):
    from aethel_lite.caching.memo import TextMemo
    from aethel_lite.core import linking
    from aethel_lite.data.schema import Query
    from aethel_lite.retrievers import GraphRetriever

    monkeypatch.setattr(linking, "QUESTION_MENTIONS", TextMemo("test"))
    queries = [
        Query("q1", "Who leads Microsoft in Redmond?", frozenset()),
        Query("q2", "Is Barclays PLC in New York?", frozenset()),
    ]
    calls: list[list[str]] = []
    retriever = GraphRetriever(extractor="regex").fit(PASSAGES)
    real = retriever.extractor_.extract

    def extract(texts, **kw):
        calls.append(list(texts))
        return real(texts, **kw)

    monkeypatch.setattr(retriever.extractor_, "extract", extract)
    plain = retriever.search(queries, k=3)
    assert calls == [[q.text for q in queries]]  # without the memo: one spaCy call for the block of questions
    calls.clear()
    with shared():
        assert retriever.search(queries, k=3) == plain and retriever.search(queries, k=3) == plain
    assert calls == [[q.text] for q in queries]  # once per question, then from the memo


# --------------------------------------------------------------------------- incremental writes (a killed run resumes)


def _synthetic_texts(n: int) -> list[str]:
    """``n`` distinct short passages naming companies (so the regex extractor finds mentions)."""
    names = ["Apple Inc.", "Microsoft Corporation", "Goldman Sachs", "Barclays PLC", "Berkshire Hathaway"]
    return [
        f"Passage {i}: {names[i % 5]} reported revenue of {i * 7} million in Omaha, Nebraska."
        for i in range(n)
    ]


def _kill_when_stored(script: str, store_glob: str, cache, min_rows: int) -> int:
    """Run ``script`` in a subprocess, SIGKILL it once the store matching ``store_glob`` holds ``min_rows``; rows kept."""
    import os
    import signal
    import time

    env = {**os.environ, "AETHEL_CACHE": str(cache)}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    rows = 0
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            for path in (cache / "store").glob(store_glob) if (cache / "store").is_dir() else []:
                with (
                    contextlib.suppress(sqlite3.Error),
                    contextlib.closing(sqlite3.connect(path, timeout=1)) as conn,
                ):
                    rows = conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
            if rows >= min_rows:
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.05)
    finally:
        proc.kill()
        _, err = proc.communicate()
    assert proc.returncode == -signal.SIGKILL, err.decode()[-2000:]
    with contextlib.closing(sqlite3.connect(next((cache / "store").glob(store_glob)))) as conn:
        return conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]


def test_killed_entity_run_keeps_its_rows_and_the_rerun_extracts_only_the_rest(cache):
    texts = _synthetic_texts(2000)
    script = (
        "import time\n"
        "from aethel_lite.core.entities import RegexExtractor, extract_entities\n"
        + inspect.getsource(_synthetic_texts)
        + "class Slow(RegexExtractor):  # the configuration of CountingRegex(0): the same store\n"
        "    def config(self):\n"
        "        return {**super().config(), 'variant': 0}\n"
        "    def extract(self, texts, *, n_process=1, progress=False):\n"
        "        time.sleep(0.002 * len(texts))\n"
        "        return super().extract(texts, n_process=n_process, progress=progress)\n"
        "extract_entities(_synthetic_texts(2000), Slow(), progress=False)\n"
        "raise SystemExit('finished before it was killed')\n"
    )
    kept = _kill_when_stored(script, "entities-regex-*.sqlite", cache, 300)
    assert 300 <= kept < 2000
    ext = CountingRegex()
    got = extract_entities(texts, ext, progress=False)
    extracted = [t for call in ext.calls for t in call]
    assert len(extracted) == 2000 - kept and len(set(extracted)) == len(extracted)
    assert all(len(call) <= E.FLUSH_EVERY for call in ext.calls)
    assert got == RegexExtractor().extract(texts)  # oracle: the uncached extractor


def test_entities_are_written_every_flush_and_the_bar_says_what_was_found(cache, capsys):
    ext = CountingRegex()
    texts = _synthetic_texts(600)
    extract_entities(texts[:100], ext, progress=False)
    ext.calls.clear()
    written: list[int] = []
    real = PassageStore.put_many

    def put_many(self, items):
        n = real(self, items)
        written.append(n)
        return n

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(PassageStore, "put_many", put_many)
        extract_entities(texts, ext, progress=True)
    assert [len(c) for c in ext.calls] == [256, 244] and written == [256, 244]
    assert "entities: 100 found in the store, 500 to compute" in capsys.readouterr().err


def test_dense_misses_are_encoded_in_the_batches_of_one_call(cache, counted_encode):
    """Stored batch by batch, the vectors are bit for bit those of one encode call (the oracle)."""
    texts = [t * (1 + i % 3) + f" {i}" for i, t in enumerate(TEXTS * 12)]  # 72 texts, ties in length
    passages = [Passage(f"p{i}", "d", "", t) for i, t in enumerate(texts)]
    once = DenseRetriever(cache=False, batch_size=8).fit(passages).embeddings_
    counted_encode.clear()
    stored = DenseRetriever(batch_size=8).fit(passages).embeddings_
    assert len(counted_encode) == 9 and sorted(t for c in counted_encode for t in c) == sorted(texts)
    np.testing.assert_array_equal(stored, once)


def test_killed_dense_run_keeps_its_rows_and_the_rerun_encodes_only_the_rest(cache, counted_encode):
    texts = _synthetic_texts(600)
    script = (
        "from aethel_lite.retrievers import DenseRetriever\n"
        + inspect.getsource(_synthetic_texts)
        + "DenseRetriever(batch_size=16).embed(_synthetic_texts(600))\n"
        "raise SystemExit('finished before it was killed')\n"
    )
    kept = _kill_when_stored(script, "embeddings-*.sqlite", cache, 256)
    assert 256 <= kept < 600
    got = DenseRetriever(batch_size=16).embed(texts)
    encoded = [t for call in counted_encode for t in call]
    assert len(encoded) == 600 - kept and len(set(encoded)) == len(encoded)
    with DenseRetriever().embedding_store() as store:
        assert len(store) == 600
    np.testing.assert_allclose(
        got[:50], DenseRetriever(cache=False, batch_size=16).encode(texts[:50]), atol=1e-5
    )
