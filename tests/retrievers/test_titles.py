"""Title keys, title mentions and the mention graph (``aethel_lite.retrievers.titles``): which passages a
text names against a regex reference written out here, disambiguated keys, and the mention graph against
networkx built from the reference's edges."""

from __future__ import annotations

import re

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from aethel_lite.retrievers import titles as T


def oracle_named(text: str, titles: list[str], drop_nested: bool = True) -> list[int]:
    """Reference: passages whose title occurs in ``text`` as whole words in a span inside no longer match."""
    low = text.lower()
    word_at = {m.start(): k for k, m in enumerate(re.finditer(r"\w+", low))}  # char offset → word index
    owners: dict[tuple[int, int], set[int]] = {}  # matched word span → passages whose title matched there
    for i, title in enumerate(titles):
        words = re.findall(r"\w+", title.lower())
        if not 0 < len(words) <= T.MAX_TITLE_WORDS:
            continue
        body = r"\W+".join(map(re.escape, words))
        for m in re.finditer(rf"(?=((?<!\w){body}(?!\w)))", low):  # lookahead: overlapping matches
            a = word_at[m.start(1)]
            owners.setdefault((a, a + len(words)), set()).add(i)
    kept = [
        (a, b)
        for a, b in owners
        if not (drop_nested and any(c <= a and b <= d and d - c > b - a for c, d in owners))
    ]
    return sorted({i for span in kept for i in owners[span]})


def named(text: str, titles: list[str]) -> list[int]:
    """The module's answer: ``named_passages`` with the titles' keys."""
    return T.named_passages(text, T.title_keys(titles))


LONG = " ".join(f"w{k}" for k in range(T.MAX_TITLE_WORDS + 1))  # one word too many
FULL = " ".join(f"w{k}" for k in range(T.MAX_TITLE_WORDS))  # exactly the limit

HAND_CASES = [
    # case-insensitive, whole words only ("parisian" is not "paris")
    ("I flew to PARIS.", ["paris"], [0]),
    ("A Parisian cafe.", ["Paris"], []),
    # \w+ tokens: hyphens and commas are separators, an underscore is part of a word
    ("Sold as Payment-on-Demand.", ["Payment on Demand"], [0]),
    ("Payment_on_Demand", ["Payment on Demand"], []),
    ("O'Brien spoke.", ["O Brien"], [0]),
    # a title inside a longer matched title does not count ... unless it also occurs alone
    ("Paris, Texas is a film.", ["Paris", "Paris, Texas", "Texas"], [1]),
    ("Paris, Texas was not shot in Paris.", ["Paris", "Paris, Texas", "Texas"], [0, 1]),
    # partially overlapping matches both count
    ("new york city hall", ["New York City", "City Hall"], [0, 1]),
    # titles longer than the limit are never matched, and so hide nothing inside them; the limit itself is
    (f"it says {LONG}.", [LONG, "w1 w2"], [1]),
    (f"it says {LONG}.", [FULL, "w1 w2"], [0]),
    # repeated titles: every passage carrying the title is named; the empty title never is
    ("about Mercury", ["Mercury", "Venus", "Mercury", ""], [0, 2]),
    ("", ["", "x"], []),
    ("!!! ...", ["", "..."], []),
]


@pytest.mark.parametrize(("text", "titles", "expected"), HAND_CASES)
def test_named_passages_hand_cases(text, titles, expected):
    """Hand-written cases: the reference gives the stated answer and ``named_passages`` agrees with it."""
    assert oracle_named(text, titles) == expected
    assert named(text, titles) == expected


def test_named_passages_random_against_oracle():
    """200 seeded random texts over a tiny vocabulary, half the titles cut from the text (so they nest)."""
    rng = np.random.default_rng(0)
    vocab = ["a", "B", "ab", "é", "Ça"]
    seps = [" ", " ", ", ", "-", ". ", " (", ") "]

    def render(words) -> str:
        return "".join(f"{w}{rng.choice(seps)}" for w in words).strip()

    nested = 0  # cases where dropping nested spans changes the answer (the test must exercise it)
    for _ in range(200):
        words = list(rng.choice(vocab, size=int(rng.integers(0, 16))))
        titles = []
        for _ in range(6):
            n = int(rng.integers(0, 4))
            a = int(rng.integers(0, max(len(words) - n, 0) + 1))
            titles.append(render(words[a : a + n] if rng.random() < 0.5 else rng.choice(vocab, size=n)))
        titles.append(titles[int(rng.integers(0, 6))].upper())  # a repeated title
        text = render(words)
        expected = oracle_named(text, titles)
        assert named(text, titles) == expected, (text, titles)
        nested += oracle_named(text, titles, drop_nested=False) != expected
    assert nested >= 50


def test_title_keys_disambiguators():
    """A trailing ``(...)`` is also keyed without it only when asked; indices sorted; empty keys absent."""
    titles = ["The Zone (2017 film)", "X", "the zone", "The Zone (2017 film)", "(2017 film)", "", LONG]
    full = ("the", "zone", "2017", "film")
    assert T.title_keys(titles) == {full: [0, 3], ("x",): [1], ("the", "zone"): [2], ("2017", "film"): [4]}
    assert T.title_keys(titles, disambiguators=True) == {
        full: [0, 3],
        ("x",): [1],
        ("the", "zone"): [0, 2, 3],
        ("2017", "film"): [4],
    }
    assert T.title_keys(["The Zone (2017 film)"], disambiguators=True) == {full: [0], ("the", "zone"): [0]}
    assert T.named_passages("Who made the zone?", T.title_keys(titles[:1], disambiguators=True)) == [0]


def assert_mention_graph(titles: list[str], texts: list[str]) -> sp.csr_matrix:
    """Check ``mention_graph`` is a 0/1 float64 symmetric CSR equal to networkx over the reference's edges."""
    n = len(titles)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from((i, j) for i, text in enumerate(texts) for j in oracle_named(text, titles) if j != i)
    a = T.mention_graph(titles, texts)
    assert sp.issparse(a) and a.format == "csr" and a.dtype == np.float64 and a.has_sorted_indices
    assert a.shape == (n, n)
    assert np.all(a.data == 1.0)
    assert a.diagonal().sum() == 0
    assert (a != a.T).nnz == 0
    expected = nx.to_scipy_sparse_array(g, nodelist=range(n), dtype=np.float64)
    np.testing.assert_array_equal(a.toarray(), expected.toarray())
    return a


def test_mention_graph_random_against_networkx():
    """Random corpora: an edge exactly when one text names the other's full title (reference), no self loops."""
    rng = np.random.default_rng(0)
    vocab = ["a", "b", "c", "ab"]
    edges = 0
    for _ in range(50):
        n = int(rng.integers(1, 9))
        titles = [" ".join(rng.choice(vocab, size=int(rng.integers(0, 3)))) for _ in range(n)]
        texts = [" ".join(rng.choice(vocab, size=int(rng.integers(0, 8)))) for _ in range(n)]
        edges += assert_mention_graph(titles, texts).nnz
    assert edges >= 500


def test_mention_graph_self_and_disambiguated():
    """A text naming its own title gets no self edge; "the zone" does not link to "The Zone (2017 film)"."""
    titles = ["The Zone (2017 film)", "Critic", "Critic"]
    texts = ["The Zone (2017 film) is a film.", "I loved the zone.", "The Critic wrote."]
    a = assert_mention_graph(titles, texts)
    assert a.toarray().tolist() == [[0, 0, 0], [0, 0, 1], [0, 1, 0]]
    texts[1] = "I loved The Zone (2017 film)."
    assert assert_mention_graph(titles, texts).toarray().tolist() == [[0, 1, 0], [1, 0, 1], [0, 1, 0]]


def test_mention_graph_two_wiki_example():
    """2Wiki bridge: the film's text names its director, joining the two passages (unicode titles)."""
    titles = ["Forbidden Ground", "Pál Gábor", "Budapest", "Gábor"]
    texts = [
        "Forbidden Ground is a Hungarian film directed by Pál Gábor.",
        "PÁL GÁBOR was a Hungarian film director born in Budapest.",
        "Budapest is the capital of Hungary.",
        "Gabor is a given name.",
    ]
    a = assert_mention_graph(titles, texts)
    assert sorted(zip(*a.nonzero())) == [(0, 1), (1, 0), (1, 2), (2, 1)]
    assert named("Who directed Forbidden Ground?", titles) == [0]
    assert named("Where was Gábor born?", titles) == [3]
