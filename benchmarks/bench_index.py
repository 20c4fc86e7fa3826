"""`aethel index` / `aethel search` on the 10,206 FinanceBench question pages (issue 13).

Measures, each as a whole `aethel` process where the target is about one:

1. ``aethel index`` of the pages (a JSONL passage file; bm25, dense, aethel-bct).
2. ``aethel search`` answering one question with ``--method bm25`` and ``--method aethel-bct``:
   wall time of the whole process (start-up, verification, load, answer); median of 3 runs.
3. ``aethel search --questions FILE`` with 100 FinanceBench questions: the whole process, and
   in-process the load time and the answering time per question after the load.
4. ``aethel index --add`` of one held-out filing (its pages were left out of step 1) with an
   empty cache, so its pages really go through spaCy and MiniLM; the NER and encoding time of
   those pages alone is measured separately and subtracted.
5. Today's refit-per-call search (the code before issue 13, ``--baseline`` commit, extracted with
   ``git archive``) on the same pages with warm caches: one question per process.
6. A 20 MB one-line text file (FinanceBench text joined with spaces) indexed with the default
   methods and an empty cache: wall time and peak memory of the process (``os.wait4``).

Caches: ``--cache DIR`` (default ``$AETHEL_CACHE``) should hold the per-passage stores of the
FinanceBench pages (spaCy NER and MiniLM); otherwise step 1 computes them (~15 min on 2 cores).

Usage::

    AETHEL_DATA=/work/shared/data AETHEL_CACHE=/work/cache13 .venv/bin/python benchmarks/bench_index.py --work /tmp/bench13
    options: --skip-baseline --skip-big --skip-add --baseline e5121a4 --questions 100 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CWD = None  # children run in the scratch folder: `python -m aethel_lite.cli` must not pick up ./aethel_lite
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


LAST_CPU = [0.0]  # CPU seconds (user + system) of the last run() child


def run(cmd, env, *, capture=True, cwd=None):
    """Run a command; (wall seconds, its stdout); its CPU seconds go to ``LAST_CPU[0]``.

    CPU time is reported beside wall time because the machine is shared: with other jobs on
    both cores a process gets only part of a core, and wall time grows while CPU time does not.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.PIPE if capture else None,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd or CWD,
    )
    out, err = proc.communicate()
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    LAST_CPU[0] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(map(str, cmd))}\n{err[-3000:]}")
    return seconds, out


def measure(cmd, env):
    """(seconds, peak RSS MB) of one child process, from os.wait4."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=CWD)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace")
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(map(str, cmd))}\n{err[-3000:]}")
    return seconds, usage.ru_maxrss / 1024


# open an index, answer the questions one at a time (what `aethel search --questions` does), then
# as one batch; times per question after the open (the first pass includes lazy imports)
IN_PROCESS = """
import json, time
from aethel_lite.search.index import open_index
t0 = time.perf_counter()
ix = open_index({index!r}, {method!r})
t1 = time.perf_counter()
qs = open({questions!r}, encoding="utf-8").read().splitlines()
c1 = time.process_time(); a = list(ix.iter_search(qs, k=5, method={method!r})); t2 = time.perf_counter(); c2 = time.process_time()
b = ix.search(qs, k=5, method={method!r}); t3 = time.perf_counter(); c3 = time.process_time()
assert [[h["pid"] for h in x] for x in a] == [[h["pid"] for h in x] for x in b]
n = len(qs)
print(json.dumps({{"open": t1 - t0, "one": 1000 * (t2 - t1) / n, "one_cpu": 1000 * (c2 - c1) / n,
                  "batch": 1000 * (t3 - t2) / n, "batch_cpu": 1000 * (c3 - c2) / n}}))
"""


def aethel(*args):
    return [sys.executable, "-m", "aethel_lite.cli", *map(str, args)]


def copy_stores(src: Path, dst: Path) -> None:
    """Copy every per-passage SQLite store with SQLite's backup API (consistent even while in use)."""
    dst.mkdir(parents=True, exist_ok=True)
    for f in sorted(src.glob("*.sqlite")):
        if (dst / f.name).exists():
            continue
        s, d = sqlite3.connect(f), sqlite3.connect(dst / f.name)
        s.backup(d)
        s.close()
        d.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", required=True, help="scratch folder (indexes, page files)")
    ap.add_argument(
        "--cache", default=os.environ.get("AETHEL_CACHE"), help="warm cache with the FinanceBench stores"
    )
    ap.add_argument("--baseline", default="e5121a4", help="commit of today's refit-per-call code")
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-baseline", action="store_true")
    ap.add_argument("--skip-big", action="store_true")
    ap.add_argument("--skip-add", action="store_true")
    args = ap.parse_args()
    if not args.cache:
        raise SystemExit("--cache or $AETHEL_CACHE: a cache folder is needed")
    global CWD
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    CWD = str(work)
    # as a user runs it: bytecode caching on (a sandbox may set PYTHONDONTWRITEBYTECODE)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"AETHEL_CACHE": str(Path(args.cache).resolve()), "PYTHONHASHSEED": "0"})

    from aethel_lite.data.loaders import load_financebench
    from aethel_lite.data.schema import Dataset

    ds = load_financebench(docs="question")
    by_doc: dict[str, list] = {}
    for p in ds.passages:
        by_doc.setdefault(p.doc_id, []).append(p)
    held = next(d for d in sorted(by_doc) if 100 <= len(by_doc[d]) <= 200)
    kept = [p for p in ds.passages if p.doc_id != held]
    pages = work / "fb"
    if not (pages / "passages.jsonl").exists():
        Dataset("financebench", kept, []).to_jsonl(pages)
        Dataset("held", by_doc[held], []).to_jsonl(work / "fb-held")
        (work / "fb-held" / "passages.jsonl").rename(work / f"{held}.jsonl")
    questions = [q.text for q in ds.queries][: args.questions]
    qfile = work / "questions.txt"
    qfile.write_text("".join(" ".join(q.split()) + "\n" for q in questions), encoding="utf-8")
    print(
        f"# bench_index  python {sys.version.split()[0]}  cpus {os.cpu_count()}  loadavg "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    print(
        f"corpus: {len(ds.passages)} FinanceBench question pages; index built from {len(kept)} "
        f"(held out for --add: {held}, {len(by_doc[held])} pages)"
    )

    idx = work / "idx"
    secs, rss = measure(
        aethel(
            "index",
            pages / "passages.jsonl",
            "--out",
            idx,
            "--methods",
            "bm25,dense,aethel-bct",
            "--quiet",
            "--force",
        ),
        env,
    )
    size = sum(f.stat().st_size for f in idx.rglob("*") if f.is_file()) / 1e6
    print(
        f"index  bm25,dense,aethel-bct (warm cache)          {secs:7.2f} s   peak {rss:6.0f} MB   folder {size:.0f} MB"
    )

    q = questions[0]
    for method in ("bm25", "aethel-bct"):
        run(
            aethel("search", idx, q, "--method", method, "--json"), env
        )  # first run writes the bytecode caches
        times, cpus = [], []
        for _ in range(args.repeats):
            times.append(run(aethel("search", idx, q, "--method", method, "--json"), env)[0])
            cpus.append(LAST_CPU[0])
        print(
            f"search one question  --method {method:<10}  whole process: median {statistics.median(times):5.2f} s wall, "
            f"{statistics.median(cpus):5.2f} s CPU (runs {', '.join(f'{t:.2f}' for t in times)}; "
            f"loadavg {os.getloadavg()[0]:.1f})"
        )

    for method in ("bm25", "aethel-bct"):
        secs, out = run(aethel("search", idx, "--questions", qfile, "--method", method), env)
        cpu = LAST_CPU[0]
        assert len(out.splitlines()) == len(questions)
        code = IN_PROCESS.format(index=str(idx), questions=str(qfile), method=method)
        _, out = run([sys.executable, "-c", code], env)
        r = json.loads(out.strip().splitlines()[-1])
        print(
            f"search --questions ({len(questions)})  --method {method:<10}  whole process {secs:6.2f} s wall, {cpu:5.2f} s CPU; "
            f"in process: open {r['open']:.2f} s; one at a time (as the CLI): {r['one']:.1f} ms wall, {r['one_cpu']:.1f} ms "
            f"CPU per question; one batch: {r['batch']:.1f} ms wall, {r['batch_cpu']:.1f} ms CPU per question "
            f"(loadavg {os.getloadavg()[0]:.1f})"
        )

    if not args.skip_add:
        added = work / "idx-add"

        def add_once(cache: str) -> tuple[float, float]:
            """--add the held-out filing to a fresh copy of the index, with ``cache`` as $AETHEL_CACHE."""
            if added.exists():
                shutil.rmtree(added)
            shutil.copytree(idx, added)
            return measure(
                aethel("index", "--add", work / f"{held}.jsonl", "--out", added, "--quiet"),
                {**env, "AETHEL_CACHE": cache},
            )

        secs, rss = add_once(env["AETHEL_CACHE"])
        print(
            f"index --add {held} ({len(by_doc[held])} pages; warm cache, so the new pages' NER and embeddings are "
            f"lookups): {secs:.2f} s, peak {rss:.0f} MB"
        )
        cold = Path(tempfile.mkdtemp(prefix="cold-cache-", dir=work))
        secs, rss = add_once(str(cold))
        cold2 = Path(tempfile.mkdtemp(prefix="cold-cache-", dir=work))
        code = (
            "import time, json; from aethel_lite.data.schema import Dataset; "
            "from aethel_lite.core.entities import extract_entities; from aethel_lite.retrievers import DenseRetriever; "
            "from aethel_lite.data.schema import passage_text; "
            f"ps = [json.loads(l) for l in open({str(work / f'{held}.jsonl')!r})]; "
            "texts = [f\"{p['title']}\\n{p['text']}\" for p in ps]; t0 = time.perf_counter(); "
            "extract_entities(texts, 'ner', progress=False); t1 = time.perf_counter(); "
            "DenseRetriever().embed(texts); t2 = time.perf_counter(); "
            "print(json.dumps({'ner': t1 - t0, 'dense': t2 - t1}))"
        )
        _, out = run([sys.executable, "-c", code], {**env, "AETHEL_CACHE": str(cold2)})
        r = json.loads(out.strip().splitlines()[-1])
        print(
            f"index --add {held} ({len(by_doc[held])} pages; empty cache): {secs:.2f} s = NER {r['ner']:.2f} s + "
            f"MiniLM {r['dense']:.2f} s of the new pages + {secs - r['ner'] - r['dense']:.2f} s rest; peak {rss:.0f} MB"
        )
        shutil.rmtree(cold, ignore_errors=True)
        shutil.rmtree(cold2, ignore_errors=True)

    if not args.skip_baseline:
        base = work / f"baseline-{args.baseline}"
        if not base.exists():
            base.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", args.baseline, "aethel_lite"],
                capture_output=True,
                check=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        old = work / "idx-today"
        if not (old / "index.json").exists():
            old.mkdir(exist_ok=True)
            Dataset("ingested", ds.passages, []).to_jsonl(old)
            (old / "index.json").write_text(
                json.dumps({"format": 1, "n_passages": len(ds.passages), "methods": []})
            )
            copy_stores(
                Path(env["AETHEL_CACHE"]) / "store", old / "cache" / "store"
            )  # today's code caches inside the index
        benv = {**env, "PYTHONPATH": str(base)}
        run(
            [
                sys.executable,
                "-c",
                "import aethel_lite, sys; assert aethel_lite.__file__.startswith(sys.argv[1]), aethel_lite.__file__",
                str(base),
            ],
            benv,
            cwd=str(base),
        )
        for method in ("bm25", "aethel-reg", "aethel-bct"):
            secs, _ = run(aethel("search", old, q, "--method", method, "--json"), benv, cwd=str(base))
            print(
                f"today (refit per call, warm caches)  --method {method:<10}  one question, whole process {secs:6.2f} s "
                f"wall, {LAST_CPU[0]:5.2f} s CPU"
            )

    if not args.skip_big:
        big = work / "big.txt"
        if not big.exists():
            parts, n = [], 0
            for p in ds.passages:
                t = " ".join(p.text.split())
                parts.append(t)
                n += len(t.encode()) + 1
                if n >= 20_000_000:
                    break
            big.write_text(" ".join(parts), encoding="utf-8")
        cold = Path(tempfile.mkdtemp(prefix="cold-cache-", dir=work))
        secs, rss = measure(
            aethel(
                "index", big, "--out", work / "idx-big", "--methods", "bm25,aethel-bct", "--quiet", "--force"
            ),
            {**env, "AETHEL_CACHE": str(cold)},
        )
        print(
            f"index a {big.stat().st_size / 1e6:.1f} MB one-line file (bm25,aethel-bct; empty cache): {secs:.1f} s, "
            f"peak {rss:.0f} MB"
        )
        shutil.rmtree(cold, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
